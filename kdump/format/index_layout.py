"""Byte layouts of a segment's companion files (spec §5), declared once field by field like ``layout.py``:
``kdump/index/`` and ``kdump/read/`` read and write them with the structs and offsets derived here only."""
from kdump.format.declare import Array, Int, Layout, UInt, scalar

# --- .index (OffsetIndex.java) -----------------------------------------------------------------------------
OFFSET_INDEX = Layout(".index entry", Int("relativeOffset", 4), Int("position", 4))
OFFSET_INDEX_ENTRY = OFFSET_INDEX.struct()
OFFSET_INDEX_ENTRY_SIZE = OFFSET_INDEX_ENTRY.size  # 8: entry i is at byte i * 8

# --- .timeindex (TimeIndex.java) ---------------------------------------------------------------------------
TIME_INDEX = Layout(".timeindex entry", Int("timestamp", 8), Int("relativeOffset", 4))
TIME_INDEX_ENTRY = TIME_INDEX.struct()
TIME_INDEX_ENTRY_SIZE = TIME_INDEX_ENTRY.size  # 12: entry i is at byte i * 12

# --- .txnindex (AbortedTxn.java) ---------------------------------------------------------------------------
TXN_INDEX = Layout(".txnindex entry", Int("version", 2), Int("producerId", 8), Int("firstOffset", 8),
                   Int("lastOffset", 8), Int("lastStableOffset", 8))
TXN_INDEX_ENTRY = TXN_INDEX.struct()
TXN_INDEX_VERSION_BYTE = scalar(1)  # AbortedTxn.version() reads the signed first byte of the int16 field only

# --- .snapshot (ProducerStateManager.writeSnapshot) --------------------------------------------------------
SNAPSHOT_ENTRY_LAYOUT = Layout(
    "producer snapshot entry",
    Int("producerId", 8), Int("epoch", 2), Int("lastSequence", 4), Int("lastOffset", 8), Int("offsetDelta", 4),
    Int("timestamp", 8), Int("coordinatorEpoch", 4), Int("currentTxnFirstOffset", 8),
)
SNAPSHOT = Layout(
    "producer snapshot",
    Int("version", 2),
    UInt("crc", 4, doc="CRC-32C of producerEntriesCount and every entry"),
    Int("producerEntriesCount", 4),
    Array("producerEntries", "producerEntriesCount", SNAPSHOT_ENTRY_LAYOUT),
)
SNAPSHOT_HEADER = SNAPSHOT.struct("version", "producerEntriesCount")
SNAPSHOT_VERSION_FIELD = SNAPSHOT.struct("version")
SNAPSHOT_CRC_FIELD = SNAPSHOT.struct("crc")
SNAPSHOT_COUNT_FIELD = SNAPSHOT.struct("producerEntriesCount")
SNAPSHOT_VERSION_CRC = SNAPSHOT.struct("version", "crc")  # what precedes the bytes the CRC covers
SNAPSHOT_VERSION_AT = SNAPSHOT.offset("version")  # 0
SNAPSHOT_CRC_AT = SNAPSHOT.offset("crc")  # 2
SNAPSHOT_COUNT_AT = SNAPSHOT.offset("producerEntriesCount")  # 6
SNAPSHOT_CRC_START = SNAPSHOT_COUNT_AT  # 6: the CRC-32C covers the count and every entry
SNAPSHOT_ENTRIES_AT = SNAPSHOT.offset("producerEntries")  # 10
SNAPSHOT_ENTRY_FIELDS = tuple(">" + f.code for f in SNAPSHOT_ENTRY_LAYOUT.fields)
SNAPSHOT_ENTRY = SNAPSHOT_ENTRY_LAYOUT.struct()  # 46 bytes
SNAPSHOT_ENTRY_FIELD_SIZES = tuple(SNAPSHOT_ENTRY_LAYOUT.struct(f.name).size for f in SNAPSHOT_ENTRY_LAYOUT.fields)
