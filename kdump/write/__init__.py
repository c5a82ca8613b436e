"""Everything kdump writes goes through here: :mod:`.atomic` (a file or a group of files, temp + rename,
verified), :mod:`.leftovers` (findings for the temporaries and journals a crash left), :mod:`.segment` (Kafka
log entries and ``.log`` files), :mod:`.digests` (the SHA-256s the writes are checked with)."""
