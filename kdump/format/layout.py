"""Byte layouts of Kafka's log entries: offsets, sizes and struct formats, kept apart from the logic.

Every entry of a ``.log`` file starts with the same framing (spec §3.1)::

    offset/baseOffset int64 | size/length int32 | (crc | partitionLeaderEpoch) int32 | magic int8

``size`` counts the bytes after the size field, so an entry takes ``LOG_OVERHEAD + size`` bytes.
kdump reads the 12-byte prefix and then the ``size`` bytes that follow it (the *body*); offsets below
marked ``BODY_`` are relative to the start of that body.
"""
import struct

LOG_OVERHEAD = 12  # offset + size
HEADER_SIZE_UP_TO_MAGIC = 17  # Kafka needs this many bytes to decide what an entry is
PREFIX = struct.Struct(">qi")  # offset / baseOffset, size / length
BODY_MAGIC = 4  # magic byte, for every format

# --- legacy messages, magic 0 and 1 (LegacyRecord.java) ----------------------------------------
# body: crc uint32 | magic int8 | attributes int8 | [timestamp int64, v1] | keyLength int32 | key | valueLength int32 | value
LEGACY_HEAD = struct.Struct(">IBb")  # crc, magic, attributes
LEGACY_CRC_START = 4  # CRC-32 covers magic .. end of message
LEGACY_TIMESTAMP = struct.Struct(">q")
LEGACY_V0_KEY_SIZE_AT = 6
LEGACY_V1_KEY_SIZE_AT = 14
LEGACY_RECORD_OVERHEAD_V0 = 14  # smallest v0 message; also the smallest size Kafka accepts in framing
LEGACY_RECORD_OVERHEAD_V1 = 22
LEGACY_CODEC_MASK = 0x07
LEGACY_TIMESTAMP_TYPE_MASK = 0x08

# --- record batch, magic 2 (DefaultRecordBatch.java) --------------------------------------------
# body: partitionLeaderEpoch int32 | magic int8 | crc uint32 | attributes int16 | lastOffsetDelta int32 |
#       baseTimestamp int64 | maxTimestamp int64 | producerId int64 | producerEpoch int16 |
#       baseSequence int32 | recordsCount int32 | records...
V2_BODY_HEAD = struct.Struct(">ibIhiqqqhii")
V2_RECORD_BATCH_OVERHEAD = 61  # whole header including the 12-byte prefix
V2_BODY_HEAD_SIZE = V2_RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49
V2_BODY_CRC_AT = 5  # the stored CRC-32C
V2_BODY_CRC_START = 9  # CRC-32C covers attributes .. end of batch (file offset 21)
V2_BODY_ATTRIBUTES_AT = 9
V2_BODY_MAX_TIMESTAMP_AT = 23

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


def increment_sequence(sequence: int, increment: int) -> int:
    """Producer sequences wrap from INT32_MAX to 0 (DefaultRecordBatch.incrementSequence)."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


# --- what the encoders pack (kdump/format/v2_builder.py, legacy_builder.py) ------------------------------
V2_HEAD_BEFORE_CRC = struct.Struct(">qiib")  # baseOffset, length, partitionLeaderEpoch, magic (file bytes 0..17)
V2_HEAD_AFTER_CRC = struct.Struct(">hiqqqhii")  # attributes .. recordsCount: the CRC-32C starts here (file byte 21)
CRC = struct.Struct(">I")  # a stored CRC-32 / CRC-32C
LEGACY_ENTRY_HEAD = struct.Struct(">qiI")  # offset, size, crc: what precedes a legacy message's magic byte
LEGACY_LENGTH = struct.Struct(">i")  # a key or value length; -1 for null
CONTROL_RECORD_KEY = struct.Struct(">hh")  # a control record's key: version, type id (ControlRecordType.recordKey)
