"""Default bounds on what one entry may cost before memory is taken (byte-level, so readers in
``kdump/format/`` and the walker in ``kdump/read/segment.py`` share them without importing each other)."""

DEFAULT_MAX_BATCH_BYTES = 256 * 1024 * 1024
# Bounds the decompressed size of one batch's records; Kafka's own limits are far below this.
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024
