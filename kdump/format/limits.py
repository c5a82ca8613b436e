"""Default bounds on what one entry may cost before memory is taken (byte-level, so readers in
``kdump/format/`` and the walker in ``kdump/read/segment.py`` share them without importing each other)."""

DEFAULT_MAX_BATCH_BYTES = 256 * 1024 * 1024
# Bounds the decompressed size of one batch's records; Kafka's own limits are far below this.
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024

# Record headers become one Python object each (a (key, value) tuple: about 100 bytes for as little as 2 bytes
# stored), so a small compressed batch of millions of empty headers would cost gigabytes. Two bounds keep a
# decoded chunk of records within about 128 MB however the headers are spread (issue 22, item 2):
MAX_RECORD_HEADERS = 1 << 18  # a record declaring more headers is refused (record-headers-invalid)
HEADERS_PER_CHUNK = 1 << 18  # a chunk of records ends after the record whose headers reach this many
# ... or whose bytes reach this many: a chunk is rendered whole, and a value that is not text takes up to 3 (as
# JSON, 6) times its size in text, so 16,384 values of 16 KiB took 480 MB in a text dump.
BYTES_PER_CHUNK = 8 << 20


def too_many_headers(i: int, n: int) -> str:
    """Why record ``i``, declaring ``n`` headers (more than MAX_RECORD_HEADERS), is refused (both decoders)."""
    return (f"record {i}: {n} headers declared, above kdump's limit of {MAX_RECORD_HEADERS} headers a record "
            "(each becomes an object: memory is bounded by design)")
