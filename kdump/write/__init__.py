"""Everything kdump writes goes through here, one idea per module: :mod:`.guards` (what may be written at all),
:mod:`.atomic` (one file: temp + rename, verified), :mod:`.killed` (the temporaries and journals a killed run left),
:mod:`.group` (files that appear together, with their journal), :mod:`.tempdir` (a directory that appears whole),
:mod:`.lock` (one writer per directory), :mod:`.leftovers` (findings for what a crash left), :mod:`.segment` (Kafka
log entries and ``.log`` files), :mod:`.digests` (the SHA-256s the writes are checked with)."""
