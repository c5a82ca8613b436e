"""Byte layouts of a segment's companion files (spec §5), kept apart from the logic like ``layout.py``:
``kdump/index/`` reads and writes them with these structs and offsets only."""
import struct

# --- .index (OffsetIndex.java): int32 relativeOffset, int32 position -------------------------------
OFFSET_INDEX_ENTRY = struct.Struct(">ii")

# --- .timeindex (TimeIndex.java): int64 timestamp, int32 relativeOffset ----------------------------
TIME_INDEX_ENTRY = struct.Struct(">qi")

# --- .txnindex (AbortedTxn.java): int16 version, int64 producerId, firstOffset, lastOffset, lastStableOffset
TXN_INDEX_ENTRY = struct.Struct(">hqqqq")
TXN_INDEX_VERSION_BYTE = struct.Struct(">b")  # AbortedTxn.version(): the signed first byte of the entry

# --- .snapshot (ProducerStateManager.writeSnapshot): int16 version, uint32 crc, int32 count, entries ------
SNAPSHOT_HEADER = struct.Struct(">hIi")  # version, crc, entry count
SNAPSHOT_VERSION_FIELD = struct.Struct(">h")
SNAPSHOT_CRC_FIELD = struct.Struct(">I")
SNAPSHOT_COUNT_FIELD = struct.Struct(">i")
SNAPSHOT_VERSION_CRC = struct.Struct(">hI")  # what precedes the bytes the CRC covers
SNAPSHOT_VERSION_AT = 0
SNAPSHOT_CRC_AT = SNAPSHOT_VERSION_AT + SNAPSHOT_VERSION_FIELD.size  # 2
SNAPSHOT_COUNT_AT = SNAPSHOT_CRC_AT + SNAPSHOT_CRC_FIELD.size  # 6
SNAPSHOT_CRC_START = SNAPSHOT_COUNT_AT  # 6: the CRC-32C covers the count and every entry
SNAPSHOT_ENTRIES_AT = SNAPSHOT_HEADER.size  # 10
# producerId, epoch, lastSequence, lastOffset, offsetDelta, timestamp, coordinatorEpoch, currentTxnFirstOffset
SNAPSHOT_ENTRY_FIELDS = ">q", ">h", ">i", ">q", ">i", ">q", ">i", ">q"
SNAPSHOT_ENTRY = struct.Struct(">" + "".join(f[1:] for f in SNAPSHOT_ENTRY_FIELDS))  # 46 bytes
SNAPSHOT_ENTRY_FIELD_SIZES = tuple(struct.calcsize(f) for f in SNAPSHOT_ENTRY_FIELDS)
