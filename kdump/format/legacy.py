"""Magic 0 and 1: legacy messages (``LegacyRecord``) and their compressed wrappers, spec §3.2-3.3.

At the top level of a log every legacy entry is one message. An uncompressed message is its own single
record. A compressed one is a *wrapper*: null key, attributes carrying the codec, and a value that
decompresses to an inner message set (``offset size message`` entries of uncompressed messages).
Kafka treats a top-level entry as a "batch" (``AbstractLegacyRecordBatch``); so does
:class:`LegacyBatch`.

Offsets of inner messages: magic 0 stores absolute offsets; magic 1 stores offsets relative to the
first inner message, and the wrapper carries the absolute offset of the last one (librdkafka wrote
wrapper offset 0, which Kafka accepts as "inner offsets are absolute").
"""
from __future__ import annotations

import zlib
from typing import Iterator

from kdump import codec as _codec
from kdump.errors import FormatError
from kdump.format import layout as L
from kdump.format.types import TimestampType


class LegacyMessage:
    """A magic 0 or 1 message as stored: fields straight from its bytes (``body`` = after the size field)."""

    __slots__ = ("offset", "body", "crc", "magic", "attributes", "timestamp", "key", "value")

    def __init__(self, offset: int, body, *, where: str = "message"):
        n = len(body)
        if n < L.LEGACY_RECORD_OVERHEAD_V0:
            raise FormatError("message-too-small",
                              f"{where} is {n} bytes; a legacy message needs at least {L.LEGACY_RECORD_OVERHEAD_V0}")
        self.offset = offset
        self.body = body
        self.crc, self.magic, self.attributes = L.LEGACY_HEAD.unpack_from(body, 0)
        if self.magic == 0:
            self.timestamp = L.NO_TIMESTAMP
            pos = L.LEGACY_V0_KEY_SIZE_AT
        elif self.magic == 1:
            if n < L.LEGACY_RECORD_OVERHEAD_V1:
                raise FormatError("message-too-small",
                                  f"magic 1 {where} is {n} bytes; it needs at least {L.LEGACY_RECORD_OVERHEAD_V1}")
            (self.timestamp,) = L.LEGACY_TIMESTAMP.unpack_from(body, 6)
            pos = L.LEGACY_V1_KEY_SIZE_AT
        else:
            raise FormatError("magic-invalid", f"invalid magic {self.magic} in a legacy {where} (expected 0 or 1)")
        self.key, pos = _sized(body, pos, "key", where)
        self.value, pos = _sized(body, pos, "value", where)
        # Bytes after the value are tolerated by Kafka's reader (the CRC covers them); kdump too.

    @property
    def size(self) -> int:
        return len(self.body)

    @property
    def codec_id(self) -> int:
        return self.attributes & L.LEGACY_CODEC_MASK

    @property
    def timestamp_type(self) -> TimestampType:
        if self.magic == 0:
            return TimestampType.NO_TIMESTAMP_TYPE
        if self.attributes & L.LEGACY_TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)

    def compute_crc(self) -> int:
        return zlib.crc32(memoryview(self.body)[L.LEGACY_CRC_START:])

    def is_valid(self) -> bool:
        """Kafka's ``LegacyRecord.isValid``: size ≥ 14 and the stored CRC-32 matches magic..end."""
        return len(self.body) >= L.LEGACY_RECORD_OVERHEAD_V0 and self.crc == self.compute_crc()


def _sized(body, pos: int, what: str, where: str):
    """An int32-length-prefixed byte string (-1 = null), checked against the message bounds."""
    end = len(body)
    if pos + 4 > end:
        raise FormatError("message-truncated", f"{where}: the {what} length field runs past the end of the message")
    n = int.from_bytes(body[pos:pos + 4], "big", signed=True)
    pos += 4
    if n < 0:
        return None, pos
    if pos + n > end:
        raise FormatError("message-truncated",
                          f"{where}: the {what} of {n} bytes runs past the end of the message ({end - pos} bytes left)")
    return bytes(body[pos:pos + n]), pos + n


class LegacyRecord:
    """A record yielded by a legacy batch: a message with its absolute offset and effective timestamp."""

    __slots__ = ("offset", "timestamp", "timestamp_type", "message")

    def __init__(self, offset: int, timestamp: int, timestamp_type: TimestampType, message: LegacyMessage):
        self.offset = offset
        self.timestamp = timestamp
        self.timestamp_type = timestamp_type
        self.message = message

    key = property(lambda self: self.message.key)
    value = property(lambda self: self.message.value)
    key_size = property(lambda self: self.message.key_size)
    value_size = property(lambda self: self.message.value_size)
    magic = property(lambda self: self.message.magic)
    crc = property(lambda self: self.message.crc)
    headers = ()
    sequence = L.NO_SEQUENCE

    @property
    def size_in_bytes(self) -> int:
        return L.LOG_OVERHEAD + self.message.size

    def is_valid(self) -> bool:
        return self.message.is_valid()

    def __repr__(self) -> str:
        return f"LegacyRecord(offset={self.offset}, magic={self.magic}, key={self.key!r}, value={self.value!r})"


class LegacyBatch:
    """A top-level magic 0/1 entry of a log: one message, compressed (a wrapper) or not."""

    producer_id = L.NO_PRODUCER_ID
    producer_epoch = L.NO_PRODUCER_EPOCH
    base_sequence = L.NO_SEQUENCE
    last_sequence = L.NO_SEQUENCE
    partition_leader_epoch = -1
    is_transactional = False
    is_control = False
    delete_horizon_ms = None
    records_count = None  # legacy entries do not declare a count

    __slots__ = ("position", "message", "_inner")

    def __init__(self, position: int, offset: int, body):
        self.position = position
        try:
            self.message = LegacyMessage(offset, body, where=f"magic {body[L.BODY_MAGIC]} message")
        except FormatError as e:
            raise e.at(position)
        self._inner = None

    # Kafka reports the wrapper's own fields at batch level.
    magic = property(lambda self: self.message.magic)
    crc = property(lambda self: self.message.crc)
    codec_id = property(lambda self: self.message.codec_id)
    timestamp_type = property(lambda self: self.message.timestamp_type)
    max_timestamp = property(lambda self: self.message.timestamp)
    last_offset = property(lambda self: self.message.offset)
    size = property(lambda self: L.LOG_OVERHEAD + self.message.size)
    length = property(lambda self: self.message.size)

    def is_valid(self) -> bool:
        return self.message.is_valid()

    def compute_crc(self) -> int:
        return self.message.compute_crc()

    @property
    def is_compressed(self) -> bool:
        return self.message.codec_id != _codec.NONE

    def entry_bytes(self) -> bytes:
        return L.PREFIX.pack(self.message.offset, self.message.size) + bytes(self.message.body)

    @property
    def base_offset(self) -> int:
        """Offset of the first record. As in Kafka this decompresses a wrapper (bounded by the default
        limit); may raise FormatError for a wrapper that cannot be read."""
        if self.message.codec_id == _codec.NONE:
            return self.message.offset
        from kdump.segment import DEFAULT_MAX_DECOMPRESSED_BYTES
        for record in self.records(DEFAULT_MAX_DECOMPRESSED_BYTES):
            return record.offset
        return self.last_offset  # pragma: no cover - records() raises for an empty wrapper

    def records(self, limit: int) -> Iterator[LegacyRecord]:
        """The records of this entry, following ``AbstractLegacyRecordBatch``'s deep iterator."""
        msg = self.message
        if msg.codec_id == _codec.NONE:
            yield LegacyRecord(msg.offset, msg.timestamp, msg.timestamp_type, msg)
            return
        inner, error = self._inner_messages(limit)
        wrapper_ts_type = msg.timestamp_type
        if msg.magic == 1:
            if msg.offset == 0 and inner:
                base = 0  # librdkafka wrote wrapper offset 0: Kafka then takes inner offsets as they are
            elif inner:
                last_inner = inner[-1].offset
                if msg.offset < last_inner:
                    raise FormatError(
                        "wrapper-offset-invalid",
                        f"wrapper offset {msg.offset} is less than the last inner message offset {last_inner} "
                        "and it is not zero",
                        position=self.position,
                    )
                base = msg.offset - last_inner
        for m in inner:
            if msg.magic == 0:
                offset = m.offset
                ts = L.NO_TIMESTAMP
            else:
                offset = base + m.offset
                ts = msg.timestamp if wrapper_ts_type is TimestampType.LOG_APPEND_TIME else m.timestamp
            yield LegacyRecord(offset, ts, wrapper_ts_type, m)
        if error is not None:
            raise error

    def _inner_messages(self, limit: int):
        """Decompress and split the wrapper's inner message set; returns (messages, error or None)."""
        if self._inner is not None:
            return self._inner
        msg = self.message
        pos0 = self.position
        if msg.codec_id == _codec.ZSTD:
            raise FormatError("codec-invalid", f"zstd is not allowed in a magic {msg.magic} wrapper (only in magic 2 batches)",
                              position=pos0)
        if msg.codec_id > _codec.ZSTD:
            raise FormatError("codec-invalid", f"unknown compression type id {msg.codec_id}", position=pos0)
        if msg.value is None:
            raise FormatError("wrapper-invalid",
                              f"compressed magic {msg.magic} wrapper has a null value (no inner messages)", position=pos0)
        try:
            data = _codec.decompress(msg.codec_id, msg.value, magic=msg.magic, limit=limit)
        except _codec.DecompressedTooLarge as e:
            raise FormatError("decompressed-too-large", str(e), position=pos0) from None
        except _codec.CodecError as e:
            raise FormatError("decompress-failed", f"failed to decompress the wrapper's inner messages: {e}",
                              position=pos0) from None
        messages = []
        error = None
        pos = 0
        end = len(data)
        while end - pos >= L.LOG_OVERHEAD:
            offset, size = L.PREFIX.unpack_from(data, pos)
            if size < L.LEGACY_RECORD_OVERHEAD_V0:
                error = FormatError(
                    "inner-message-too-small",
                    f"inner message {len(messages)} (decompressed byte {pos}) declares size {size}; "
                    f"the minimum is {L.LEGACY_RECORD_OVERHEAD_V0}",
                    position=pos0,
                )
                break
            if pos + L.LOG_OVERHEAD + size > end:
                break  # Kafka ends the inner set silently at a truncated last entry
            body = data[pos + L.LOG_OVERHEAD:pos + L.LOG_OVERHEAD + size]
            try:
                inner = LegacyMessage(offset, body, where=f"inner message {len(messages)}")
            except FormatError as e:
                error = e.at(pos0)
                break
            if inner.codec_id != _codec.NONE:
                error = FormatError("inner-compressed", f"inner message {len(messages)} is itself compressed "
                                    "(inner messages must not be compressed)", position=pos0)
                break
            messages.append(inner)
            pos += L.LOG_OVERHEAD + size
        if not messages and error is None:
            error = FormatError("wrapper-empty", "compressed wrapper holds no inner messages", position=pos0)
        if not messages:
            raise error
        self._inner = (messages, error)
        return self._inner

    def __repr__(self) -> str:
        return f"LegacyBatch(position={self.position}, offset={self.last_offset}, magic={self.magic}, codec={self.codec_id})"
