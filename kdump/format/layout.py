"""Byte layouts of Kafka's log entries: offsets, sizes and struct formats, kept apart from the logic.

Every entry of a ``.log`` file starts with the same framing (spec §3.1)::

    offset/baseOffset int64 | size/length int32 | (crc | partitionLeaderEpoch) int32 | magic int8

``size`` counts the bytes after the size field, so an entry takes ``LOG_OVERHEAD + size`` bytes.
kdump reads the 12-byte prefix and then the ``size`` bytes that follow it (the *body*). Offsets named
``..._AT`` / ``..._FROM`` are relative to the start of the entry (its offset field); those named ``BODY_``
are relative to the start of the body. Every other module takes its offsets and structs from here.
"""
import struct

PREFIX = struct.Struct(">qi")  # offset / baseOffset, size / length
OFFSET_AT = 0
SIZE_AT = struct.calcsize(">q")  # 8
LOG_OVERHEAD = PREFIX.size  # 12: offset + size
MAGIC_AT = LOG_OVERHEAD + struct.calcsize(">i")  # 16: after the legacy crc / the v2 partition leader epoch
HEADER_SIZE_UP_TO_MAGIC = MAGIC_AT + 1  # 17: Kafka needs this many bytes to decide what an entry is
BODY_MAGIC = MAGIC_AT - LOG_OVERHEAD  # 4: magic byte, for every format
MAGIC = struct.Struct(">B")  # read unsigned, as Kafka's framing compares it
INT16 = struct.Struct(">h")  # e.g. the version / record type leading an internal-topic key or value
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
UINT32 = struct.Struct(">I")  # a stored CRC

# --- legacy messages, magic 0 and 1 (LegacyRecord.java) ----------------------------------------
# body: crc uint32 | magic int8 | attributes int8 | [timestamp int64, v1] | keyLength int32 | key |
#       valueLength int32 | value
LEGACY_HEAD = struct.Struct(">IBb")  # crc, magic, attributes
LEGACY_CRC_START = 4  # CRC-32 covers magic .. end of message
LEGACY_TIMESTAMP = struct.Struct(">q")
LEGACY_V0_KEY_SIZE_AT = 6
LEGACY_V1_KEY_SIZE_AT = 14
LEGACY_ENTRY_HEAD = struct.Struct(">qiIBb")  # the prefix and LEGACY_HEAD: offset, size, crc, magic, attributes
LEGACY_PREFIX_CRC = struct.Struct(">qiI")  # offset, size, crc: what precedes the bytes the CRC covers
LEGACY_CRC_AT = LOG_OVERHEAD  # 12
LEGACY_CRC_FROM = LOG_OVERHEAD + LEGACY_CRC_START  # 16: the magic byte
LEGACY_ATTRIBUTES_AT = MAGIC_AT + 1  # 17
LEGACY_TIMESTAMP_AT = LEGACY_ATTRIBUTES_AT + 1  # 18 (magic 1 only)
LEGACY_BODY_ATTRIBUTES_AT = LEGACY_ATTRIBUTES_AT - LOG_OVERHEAD  # 5
LEGACY_BODY_TIMESTAMP_AT = LEGACY_TIMESTAMP_AT - LOG_OVERHEAD  # 6
LEGACY_RECORD_OVERHEAD_V0 = 14  # smallest v0 message; also the smallest size Kafka accepts in framing
LEGACY_RECORD_OVERHEAD_V1 = 22
LEGACY_CODEC_MASK = 0x07
LEGACY_TIMESTAMP_TYPE_MASK = 0x08

# --- record batch, magic 2 (DefaultRecordBatch.java) --------------------------------------------
# body: partitionLeaderEpoch int32 | magic int8 | crc uint32 | attributes int16 | lastOffsetDelta int32 |
#       baseTimestamp int64 | maxTimestamp int64 | producerId int64 | producerEpoch int16 |
#       baseSequence int32 | recordsCount int32 | records...
V2_BODY_HEAD = struct.Struct(">ibIhiqqqhii")
V2_HEAD = struct.Struct(">qiibIhiqqqhii")  # the prefix and V2_BODY_HEAD: the whole 61-byte header
V2_BEFORE_CRC = struct.Struct(">qiib")  # baseOffset, length, partitionLeaderEpoch, magic
V2_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordsCount
V2_RECORD_BATCH_OVERHEAD = V2_HEAD.size  # 61: whole header including the 12-byte prefix
V2_BODY_HEAD_SIZE = V2_BODY_HEAD.size  # 49
V2_LEADER_EPOCH_AT = LOG_OVERHEAD  # 12: the one header field outside the CRC besides offset and size
V2_CRC_AT = V2_BEFORE_CRC.size  # 17: the stored CRC-32C
V2_CRC_FROM = V2_CRC_AT + UINT32.size  # 21: CRC-32C covers attributes .. end of batch
V2_ATTRIBUTES_AT = V2_CRC_FROM  # 21
V2_BODY_CRC_AT = V2_CRC_AT - LOG_OVERHEAD  # 5
V2_BODY_CRC_START = V2_CRC_FROM - LOG_OVERHEAD  # 9
V2_BODY_ATTRIBUTES_AT = V2_ATTRIBUTES_AT - LOG_OVERHEAD  # 9
V2_BODY_MAX_TIMESTAMP_AT = V2_BODY_ATTRIBUTES_AT + struct.calcsize(">hiq")  # 23
V2_MIN_RECORD_SIZE = 7  # length, attributes, timestamp delta, offset delta, key length, value length, header count

V2_CODEC_MASK = 0x07
V2_TIMESTAMP_TYPE_MASK = 0x08
V2_TRANSACTIONAL_MASK = 0x10
V2_CONTROL_MASK = 0x20
V2_DELETE_HORIZON_MASK = 0x40

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
CONTROL_RECORD_KEY = struct.Struct(">hh")  # a control record's key: version, type id (ControlRecordType.recordKey)
# a COMMIT/ABORT marker's value: version, coordinator epoch (EndTransactionMarker)
END_TXN_MARKER = struct.Struct(">hi")

# --- kdump's canonical record form (not Kafka's: what convert's verification digests compare) -------------
CANONICAL_RECORD_HEAD = struct.Struct(">qqbiii")  # offset, timestamp, timestamp type, key/value length, headers


# --- kdump's own scratch files --------------------------------------------------------------------------
# kdump stats' key entries (its key table, and its spilled keys): key digest, record size << 1 | tombstone,
# little-endian; KEY_ENTRY reads the same 24 bytes with the digest as its two halves (Python's
# hash of the key, and of the key followed by a zero byte: see kdump.format.columns.RecordKeys)
KEY_SPILL_ENTRY = struct.Struct("<16sQ")
KEY_ENTRY = struct.Struct("<qqQ")
