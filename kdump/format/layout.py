"""Byte layouts of Kafka's log entries, declared once field by field (``kdump/format/declare.py``), and the offsets,
sizes and precompiled structs the readers take from those declarations, kept apart from the logic.

Every entry of a ``.log`` file starts with the same framing (spec §3.1)::

    offset/baseOffset int64 | size/length int32 | (crc | partitionLeaderEpoch) int32 | magic int8

``size`` counts the bytes after the size field, so an entry takes ``LOG_OVERHEAD + size`` bytes.
kdump reads the 12-byte prefix and then the ``size`` bytes that follow it (the *body*). Offsets named
``..._AT`` / ``..._FROM`` are relative to the start of the entry (its offset field); those named ``BODY_``
are relative to the start of the body. Every other module takes its offsets and structs from here; tests, docs and
``kdump explain`` walk the declarations themselves (``fields(V2_BATCH, buf, pos)``).
"""
from kdump.format.declare import (
    Array,
    Bytes,
    Chars,
    Int,
    Layout,
    Rest,
    UInt,
    Varint,
    Varlong,
    fields,  # noqa: F401  (the walker, read from here with the declarations)
    scalar,
)

# --- the framing every entry starts with (LogFileRecords / Records.java) ------------------------------------
LOG_ENTRY = Layout(
    "log entry",
    Int("offset", 8, doc="baseOffset of a v2 batch, offset of a legacy message"),
    Int("size", 4, doc="batchLength / messageSize: the bytes after this field"),
    Int("crcOrPartitionLeaderEpoch", 4, doc="a legacy message's crc, a v2 batch's partitionLeaderEpoch"),
    UInt("magic", 1, doc="read unsigned, as Kafka's framing compares it"),
)
PREFIX = LOG_ENTRY.struct("offset", "size")
OFFSET_AT = LOG_ENTRY.offset("offset")  # 0
SIZE_AT = LOG_ENTRY.offset("size")  # 8
LOG_OVERHEAD = PREFIX.size  # 12: offset + size
MAGIC_AT = LOG_ENTRY.offset("magic")  # 16: after the legacy crc / the v2 partition leader epoch
HEADER_SIZE_UP_TO_MAGIC = LOG_ENTRY.end("magic")  # 17: Kafka needs this many bytes to decide what an entry is
BODY_MAGIC = MAGIC_AT - LOG_OVERHEAD  # 4: magic byte, for every format
MAGIC = LOG_ENTRY.struct("magic")
INT16 = scalar(2)  # e.g. the version / record type leading an internal-topic key or value
INT32 = scalar(4)
INT64 = scalar(8)
UINT32 = scalar(4, signed=False)  # a stored CRC

# --- legacy messages, magic 0 and 1 (LegacyRecord.java) ----------------------------------------
LEGACY_ATTRIBUTE_FLAGS = {"compression": 0x07, "timestampType": 0x08}


def _legacy_message(magic: int) -> Layout:
    return Layout(
        f"v{magic} message",
        Int("offset", 8),
        Int("messageSize", 4, doc="the bytes after this field"),
        UInt("crc", 4, doc="CRC-32 of magic .. end of message"),
        UInt("magic", 1),
        Int("attributes", 1, flags=LEGACY_ATTRIBUTE_FLAGS),
        *([Int("timestamp", 8)] if magic else []),
        Int("keyLength", 4),
        Bytes("key", "keyLength"),
        Int("valueLength", 4),
        Bytes("value", "valueLength", doc="a compressed wrapper's inner messages"),
    )


LEGACY_V0_MESSAGE = _legacy_message(0)
LEGACY_V1_MESSAGE = _legacy_message(1)
LEGACY_MESSAGES = (LEGACY_V0_MESSAGE, LEGACY_V1_MESSAGE)
LEGACY_HEAD = LEGACY_V0_MESSAGE.struct("crc", "attributes")
LEGACY_CRC_START = LEGACY_V0_MESSAGE.offset("magic") - LOG_OVERHEAD  # 4: CRC-32 covers magic .. end of message
LEGACY_TIMESTAMP = LEGACY_V1_MESSAGE.struct("timestamp")
LEGACY_V0_KEY_SIZE_AT = LEGACY_V0_MESSAGE.offset("keyLength") - LOG_OVERHEAD  # 6
LEGACY_V1_KEY_SIZE_AT = LEGACY_V1_MESSAGE.offset("keyLength") - LOG_OVERHEAD  # 14
LEGACY_ENTRY_HEAD = LEGACY_V0_MESSAGE.struct("offset", "attributes")  # the prefix and LEGACY_HEAD
LEGACY_PREFIX_CRC = LEGACY_V0_MESSAGE.struct("offset", "crc")  # what precedes the bytes the CRC covers
LEGACY_CRC_AT = LEGACY_V0_MESSAGE.offset("crc")  # 12
LEGACY_CRC_FROM = LEGACY_V0_MESSAGE.offset("magic")  # 16: the magic byte
LEGACY_ATTRIBUTES_AT = LEGACY_V0_MESSAGE.offset("attributes")  # 17
LEGACY_TIMESTAMP_AT = LEGACY_V1_MESSAGE.offset("timestamp")  # 18 (magic 1 only)
LEGACY_BODY_ATTRIBUTES_AT = LEGACY_ATTRIBUTES_AT - LOG_OVERHEAD  # 5
LEGACY_BODY_TIMESTAMP_AT = LEGACY_TIMESTAMP_AT - LOG_OVERHEAD  # 6
# smallest v0 message (null key and value); also the smallest size Kafka accepts in framing
LEGACY_RECORD_OVERHEAD_V0 = LEGACY_V0_MESSAGE.min_size - LOG_OVERHEAD  # 14
LEGACY_RECORD_OVERHEAD_V1 = LEGACY_V1_MESSAGE.min_size - LOG_OVERHEAD  # 22
LEGACY_CODEC_MASK = LEGACY_ATTRIBUTE_FLAGS["compression"]
LEGACY_TIMESTAMP_TYPE_MASK = LEGACY_ATTRIBUTE_FLAGS["timestampType"]

# --- record batch, magic 2 (DefaultRecordBatch.java) and its records (DefaultRecord.java) ------------------
V2_ATTRIBUTE_FLAGS = {"compression": 0x07, "timestampType": 0x08, "isTransactional": 0x10, "isControl": 0x20,
                      "hasDeleteHorizonMs": 0x40}
V2_BATCH = Layout(
    "v2 batch",
    Int("baseOffset", 8),
    Int("batchLength", 4, doc="the bytes after this field"),
    Int("partitionLeaderEpoch", 4),
    Int("magic", 1),
    UInt("crc", 4, doc="CRC-32C of attributes .. end of batch"),
    Int("attributes", 2, flags=V2_ATTRIBUTE_FLAGS),
    Int("lastOffsetDelta", 4),
    Int("baseTimestamp", 8),
    Int("maxTimestamp", 8),
    Int("producerId", 8),
    Int("producerEpoch", 2),
    Int("baseSequence", 4),
    Int("recordsCount", 4),
    Rest("records", "batchLength", doc="recordsCount records (V2_RECORD), compressed as attributes say"),
)
RECORD_HEADER = Layout(
    "record header",
    Varint("headerKeyLength"),
    Bytes("headerKey", "headerKeyLength"),
    Varint("headerValueLength"),
    Bytes("headerValue", "headerValueLength"),
)
V2_RECORD = Layout(
    "v2 record",
    Varint("length", doc="the bytes after this field"),
    Int("attributes", 1, doc="unused"),
    Varlong("timestampDelta"),
    Varint("offsetDelta"),
    Varint("keyLength"),
    Bytes("key", "keyLength"),
    Varint("valueLength"),
    Bytes("value", "valueLength"),
    Varint("headersCount"),
    Array("headers", "headersCount", RECORD_HEADER),
)
V2_BODY_HEAD = V2_BATCH.struct("partitionLeaderEpoch", "recordsCount")
V2_HEAD = V2_BATCH.struct("baseOffset", "recordsCount")  # the prefix and V2_BODY_HEAD: the whole 61-byte header
V2_BEFORE_CRC = V2_BATCH.struct("baseOffset", "magic")
V2_AFTER_CRC = V2_BATCH.struct("attributes", "recordsCount")
V2_RECORD_BATCH_OVERHEAD = V2_HEAD.size  # 61: whole header including the 12-byte prefix
V2_BODY_HEAD_SIZE = V2_BODY_HEAD.size  # 49
V2_LEADER_EPOCH_AT = V2_BATCH.offset("partitionLeaderEpoch")  # 12: outside the CRC, like offset and size
V2_CRC_AT = V2_BATCH.offset("crc")  # 17: the stored CRC-32C
V2_CRC_FROM = V2_BATCH.end("crc")  # 21: CRC-32C covers attributes .. end of batch
V2_ATTRIBUTES_AT = V2_BATCH.offset("attributes")  # 21
V2_BODY_CRC_AT = V2_CRC_AT - LOG_OVERHEAD  # 5
V2_BODY_CRC_START = V2_CRC_FROM - LOG_OVERHEAD  # 9
V2_BODY_ATTRIBUTES_AT = V2_ATTRIBUTES_AT - LOG_OVERHEAD  # 9
V2_BODY_MAX_TIMESTAMP_AT = V2_BATCH.offset("maxTimestamp") - LOG_OVERHEAD  # 23
V2_MIN_RECORD_SIZE = V2_RECORD.min_size  # 7: every varint of one byte, no key, value or header

V2_CODEC_MASK = V2_ATTRIBUTE_FLAGS["compression"]
V2_TIMESTAMP_TYPE_MASK = V2_ATTRIBUTE_FLAGS["timestampType"]
V2_TRANSACTIONAL_MASK = V2_ATTRIBUTE_FLAGS["isTransactional"]
V2_CONTROL_MASK = V2_ATTRIBUTE_FLAGS["isControl"]
V2_DELETE_HORIZON_MASK = V2_ATTRIBUTE_FLAGS["hasDeleteHorizonMs"]

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_TIMESTAMP = -1
INT32_MAX = 2**31 - 1


def _java_int(v: int) -> int:
    """``v`` as a Java ``int`` holds it: two's complement, wrapped to 32 bits."""
    return ((v + 2**31) & 0xFFFFFFFF) - 2**31


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def java_long(v: int) -> int:
    """``v`` as a Java ``long`` holds it: two's complement, wrapped to 64 bits. Kafka's readers compute
    ``baseOffset + offsetDelta``, ``baseTimestamp + timestampDelta`` and ``baseOffset + lastOffsetDelta`` in long
    arithmetic, so a batch with base offset 2^63-1 and a delta of 1 has the offset -2^63 in Kafka, and in kdump
    (never a number no Java long holds, which no Kafka tool prints and no encoder can write back)."""
    return ((v - INT64_MIN) & 0xFFFFFFFFFFFFFFFF) + INT64_MIN


def increment_sequence(sequence: int, increment: int) -> int:
    """``DefaultRecordBatch.incrementSequence``: producer sequences run 0 .. INT32_MAX and wrap to 0, each step in
    Java int arithmetic (so arguments outside that range give what Kafka computes, not a Python big integer)."""
    total = sequence + increment
    if total <= 2147483647 and increment >= 0 and sequence >= 0:  # every batch that does not wrap (INT32_MAX)
        return total
    if sequence > _java_int(INT32_MAX - increment):
        return _java_int(increment - _java_int(INT32_MAX - sequence) - 1)
    return _java_int(total)


def decrement_sequence(sequence: int, decrement: int) -> int:
    """``DefaultRecordBatch.decrementSequence`` (a batch's first sequence from its last one and its offset delta, as
    a producer ``.snapshot`` stores them), each step in Java int arithmetic."""
    if sequence < decrement:
        return _java_int(INT32_MAX - _java_int(decrement - sequence) + 1)
    return _java_int(sequence - decrement)


# --- control records (kdump/format/control.py reads them, the encoders write them) ----------------------
CONTROL_RECORD_KEY_LAYOUT = Layout("control record key", Int("version", 2), Int("type", 2))  # ControlRecordType
END_TXN_MARKER_LAYOUT = Layout("end transaction marker", Int("version", 2), Int("coordinatorEpoch", 4))
CONTROL_RECORD_KEY = CONTROL_RECORD_KEY_LAYOUT.struct()
END_TXN_MARKER = END_TXN_MARKER_LAYOUT.struct()  # a COMMIT/ABORT marker's value

# --- kdump's canonical record form (not Kafka's: what convert's verification digests compare) -------------
CANONICAL_RECORD = Layout(
    "canonical record", Int("offset", 8), Int("timestamp", 8), Int("timestampType", 1), Int("keyLength", 4),
    Int("valueLength", 4), Int("headersCount", 4))
CANONICAL_RECORD_HEAD = CANONICAL_RECORD.struct()


# --- kdump's own scratch files --------------------------------------------------------------------------
# kdump stats' key entries (its key table, and its spilled keys): key digest, record size << 1 | tombstone,
# little-endian; KEY_ENTRY reads the same 24 bytes with the digest as its two halves (Python's
# hash of the key, and of the key followed by a zero byte: see kdump.format.columns.RecordKeys)
KEY_SPILL = Layout("key spill entry", Chars("digest", 16), UInt("sizeTombstone", 8), byteorder="<")
KEY_TABLE = Layout("key entry", Int("digestLow", 8), Int("digestHigh", 8), UInt("sizeTombstone", 8), byteorder="<")
KEY_SPILL_ENTRY = KEY_SPILL.struct()
KEY_ENTRY = KEY_TABLE.struct()
