"""Magic 0/1 encoding: legacy messages and compressed wrappers as Kafka's ``MemoryRecordsBuilder`` writes them.

The writing twin of :mod:`kdump.format.legacy` (spec §3.2-3.3, §6.3), used by :mod:`kdump.write.segment`,
:mod:`kdump.convert` and the test fixtures:

* :func:`encode_message` -- one entry (``LegacyRecord.write`` behind the offset/size prefix), unchecked;
* :func:`legacy_message` -- the same with every argument checked;
* :func:`convert_message` -- an uncompressed message rewritten 0 <-> 1 with its key and value copied;
* :class:`LegacyMessageBuilder` / :func:`legacy_wrapper` -- messages one per entry, or a compressed wrapper
  (magic 1 inner offsets relative, magic 0 absolute; magic-0 lz4's broken header checksum is the codec's).
"""
from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence

from kdump import codec as _codec
from kdump.format import layout as L
from kdump.format.builder_args import (
    INT32_MAX,
    INT64_MAX,
    INT64_MIN,
    check_bytes,
    check_codec,
    check_int,
    check_timestamp,
    check_timestamp_type,
    refuse_record,
)
from kdump.format.pieces import Pieces, append, is_large
from kdump.format.types import TimestampType

__all__ = ["LegacyMessageBuilder", "encode_message", "encode_messages", "legacy_message", "legacy_wrapper",
           "convert_message"]

_NULL_LENGTH = b"\xff\xff\xff\xff"  # int32 -1
_LAT = TimestampType.LOG_APPEND_TIME
# Converting millions of small messages spends most of its time here: the packers are bound once, and
# the magic + attributes bytes of every (magic, attributes) pair are made once.
_CRC_SIZE = L.LEGACY_CRC_START  # the size field counts the CRC and the message after it
_pack_entry_head = L.LEGACY_PREFIX_CRC.pack
_pack_length = L.INT32.pack
_pack_timestamp = L.LEGACY_TIMESTAMP.pack
_MAGIC_ATTRIBUTES = [[bytes((magic, attributes)) for attributes in range(256)] for magic in (0, 1)]
_TIMESTAMP_FIELD_AT = L.LEGACY_V0_KEY_SIZE_AT  # a magic 1 timestamp sits where magic 0's key length starts


def encode_message(offset: int, magic: int, timestamp_type, timestamp: int, key, value,
                   codec: int = _codec.NONE) -> bytes:
    """One magic 0/1 log entry: offset int64, size int32, CRC-32 over magic..end, magic, attributes (codec in
    bits 0-2; for magic 1 the LogAppendTime bit 3), [timestamp int64, magic 1 only], key and value with int32
    lengths (-1 = null). No checks; ``key``/``value`` are bytes-like (slices are not copied) or None.
    Magic 0 stores no timestamp, so ``timestamp_type`` and ``timestamp`` are ignored for it."""
    message = b"".join(_message_parts(magic, timestamp_type, timestamp, key, value, codec))
    return _pack_entry_head(offset, _message_size(len(message)), zlib.crc32(message)) + message


def message_pieces(offset: int, magic: int, timestamp_type, timestamp: int, key, value) -> Pieces:
    """:func:`encode_message` (uncompressed) as its :class:`~kdump.format.pieces.Pieces`, the key and value not
    copied: the CRC-32 runs over the pieces one after the other."""
    parts = _message_parts(magic, timestamp_type, timestamp, key, value, _codec.NONE)
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    size = _message_size(sum(memoryview(p).nbytes for p in parts))
    return Pieces([_pack_entry_head(offset, size, crc), *parts])


def _message_size(after_crc: int) -> int:
    """The size field of a message of ``after_crc`` bytes after its CRC; ValueError past Kafka's int32."""
    size = after_crc + _CRC_SIZE
    if size > INT32_MAX:
        raise ValueError(f"legacy message of {size} bytes does not fit Kafka's int32 size field")
    return size


def _message_parts(magic: int, timestamp_type, timestamp: int, key, value, codec: int) -> list:
    """The pieces of a message after its CRC: magic, attributes, [timestamp], key and value with lengths."""
    if magic == 0:
        parts = [_MAGIC_ATTRIBUTES[0][codec]]
    else:
        parts = [_MAGIC_ATTRIBUTES[1][codec | L.LEGACY_TIMESTAMP_TYPE_MASK if timestamp_type == _LAT else codec],
                 _pack_timestamp(timestamp)]
    if key is None:
        parts.append(_NULL_LENGTH)
    else:
        parts.append(_pack_length(len(key)))
        parts.append(key)
    if value is None:
        parts.append(_NULL_LENGTH)
    else:
        parts.append(_pack_length(len(value)))
        parts.append(value)
    return parts


def legacy_message(offset: int, magic: int, key: bytes | None, value: bytes | None, timestamp: int = L.NO_TIMESTAMP,
                   timestamp_type: TimestampType = TimestampType.CREATE_TIME, codec: int = _codec.NONE) -> bytes:
    """One magic 0/1 log entry (``LegacyRecord.write`` behind an offset/size prefix), arguments checked.

    ``codec`` only sets the attribute bits: ``value`` must then already be the compressed inner message set
    (:func:`legacy_wrapper` does that). Magic 0 has no timestamp, so ``timestamp`` and ``timestamp_type``
    are ignored for it, as Kafka's ``LegacyRecord`` does.
    """
    check_int("offset", offset, INT64_MIN, INT64_MAX)
    if magic not in (0, 1):
        raise ValueError(f"legacy messages have magic 0 or 1, not {magic!r}")
    codec = check_codec(codec, magic)
    key = check_bytes("key", key)
    value = check_bytes("value", value)
    if magic == 1:
        timestamp_type = check_timestamp_type(timestamp_type, magic=1)
        check_timestamp(timestamp)
    return encode_message(offset, magic, timestamp_type, timestamp, key, value, codec)


def convert_message(offset: int, body, to_magic: int) -> bytes:
    """Rewrite one uncompressed magic 0/1 message (``body`` = the bytes after the size field) as ``to_magic``.

    The steps of Kafka's builder: a new magic byte; attributes with codec none and the timestamp type
    (CreateTime: 0 -> 1 has no time to call LogAppendTime; 1 -> 0 has no type); for 0 -> 1 the timestamp -1
    (NO_TIMESTAMP) inserted after the attributes, for 1 -> 0 the timestamp removed; the key and value section
    copied byte for byte; the CRC-32 recomputed over magic..end; the size field set to the new length. Bytes
    after the value (tolerated by readers) are not copied.
    """
    body = memoryview(body)
    magic = body[L.BODY_MAGIC]
    attributes = body[L.BODY_MAGIC + 1]
    if magic not in (0, 1) or to_magic not in (0, 1):
        raise ValueError(f"converts between magic 0 and 1, not {magic} -> {to_magic}")
    if attributes & L.LEGACY_CODEC_MASK:
        raise ValueError("a compressed wrapper is re-encoded as a whole, not converted message by message")
    start = L.LEGACY_V0_KEY_SIZE_AT if magic == 0 else L.LEGACY_V1_KEY_SIZE_AT
    end = _key_value_end(body, start)
    if to_magic == 0:
        head = b"\x00\x00"
    elif magic == 0:
        head = b"\x01\x00" + L.LEGACY_TIMESTAMP.pack(L.NO_TIMESTAMP)
    else:
        # 1 -> 1: keep the stored timestamp and its type bit
        head = bytes((1, attributes & L.LEGACY_TIMESTAMP_TYPE_MASK)) + bytes(body[_TIMESTAMP_FIELD_AT:start])
    message = head + bytes(body[start:end])
    return _pack_entry_head(offset, len(message) + _CRC_SIZE, zlib.crc32(message)) + message


def _key_value_end(body, start: int) -> int:
    """End of the value of a legacy message whose key length field is at ``start`` (already validated)."""
    pos = start
    for _ in range(2):
        n = L.INT32.unpack_from(body, pos)[0]
        pos += L.INT32.size + max(n, 0)
    return pos


def legacy_wrapper(magic: int, codec: int, messages: Sequence[tuple],
                   timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                   log_append_time: int | None = None, *, base_offset: int | None = None,
                   wrapper_offset: int | None = None, compression_level: int | None = None) -> bytes:
    """A compressed magic 0/1 wrapper holding ``messages`` = ``[(offset, timestamp, key, value), ...]``.

    As ``MemoryRecordsBuilder`` writes it (spec §3.3, §6.3):

    * inner messages are uncompressed, with the wrapper's magic;
    * magic 0 inner offsets are absolute; magic 1 inner offsets are relative to ``base_offset``
      (default: the first message's offset, so 0..n-1 for consecutive offsets) and the inner attribute
      bit 3 carries the wrapper's timestamp type;
    * with LOG_APPEND_TIME every inner timestamp is ``log_append_time``;
    * the wrapper: offset = last absolute offset (override with ``wrapper_offset``, e.g. 0 as librdkafka
      wrote), timestamp = ``log_append_time`` or the max inner timestamp, key null, value = the inner
      set compressed for this magic (magic-0 lz4 gets Kafka's broken frame header checksum).

    A 5th tuple element (headers) is accepted only if empty: magic 0/1 have no headers. zstd is refused.
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy wrappers have magic 0 or 1, not {magic!r}")
    codec = check_codec(codec, magic)
    if codec == _codec.NONE:
        raise ValueError("a wrapper needs a codec; uncompressed legacy messages are written one per entry "
                         "(legacy_message or LegacyMessageBuilder)")
    builder = LegacyMessageBuilder(magic, codec, timestamp_type, log_append_time, base_offset=base_offset,
                                   compression_level=compression_level)
    for item in messages:
        if len(item) == 5:
            offset, timestamp, key, value, headers = item
        elif len(item) == 4:
            offset, timestamp, key, value = item
            headers = ()
        else:
            raise TypeError(f"a message is (offset, timestamp, key, value[, headers]), not {item!r}")
        builder.append(offset, timestamp, key, value, headers)
    return builder.build(wrapper_offset=wrapper_offset)


class LegacyMessageBuilder:
    """Builds magic 0/1 entries the way ``MemoryRecordsBuilder`` does for legacy formats.

    Same ``append`` (and ``encode`` + ``take`` fast path) as :class:`kdump.format.v2_builder.RecordBatchBuilder`.
    ``build()`` returns one entry per record when ``codec`` is none (legacy formats have no uncompressed
    batches), else one compressed wrapper entry.
    """

    def __init__(self, magic: int, codec: int = _codec.NONE, timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                 log_append_time: int | None = None, *, base_offset: int | None = None,
                 compression_level: int | None = None):
        if magic not in (0, 1):
            raise ValueError(f"legacy messages have magic 0 or 1, not {magic!r}")
        self.magic = magic
        self.codec = check_codec(codec, magic)
        if magic == 0:
            # No timestamps in magic 0: Kafka ignores the timestamp type, and so does kdump.
            self.timestamp_type = TimestampType.NO_TIMESTAMP_TYPE
            self.log_append_time = None
        else:
            self.timestamp_type = check_timestamp_type(timestamp_type, magic=1)
            if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
                if log_append_time is None:
                    raise ValueError("a LOG_APPEND_TIME message set needs log_append_time")
                check_timestamp(log_append_time)
            else:
                log_append_time = None
            self.log_append_time = log_append_time
        self.base_offset = None if base_offset is None else check_int("base_offset", base_offset, 0, INT64_MAX)
        self.compression_level = compression_level
        # magic 1 inner offsets are relative to the base offset (MemoryRecordsBuilder.toInnerOffset)
        self._relative = magic == 1 and self.codec != _codec.NONE
        self._entries = bytearray()  # the entries taken, one after the other (not an object each)
        self._max_timestamp = L.NO_TIMESTAMP
        # read freely, written only by take(): what a caller cutting wrappers by size and offsets needs
        self.last_record_offset: int | None = None
        self.record_count = 0
        # bytes of the entries; for a wrapper, of the wrapper before compression
        if self.codec == _codec.NONE:
            self.size = 0
        else:  # the wrapper message around the inner set: null key, value length
            self.size = L.LOG_OVERHEAD + (L.LEGACY_RECORD_OVERHEAD_V0 if magic == 0 else L.LEGACY_RECORD_OVERHEAD_V1)

    @property
    def last_offset(self) -> int | None:
        return self.last_record_offset

    def append(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
               headers: Iterable = ()) -> None:
        check_int("offset", offset, 0, INT64_MAX)
        if list(headers or ()):
            raise ValueError(f"Magic v{self.magic} does not support record headers")
        check_timestamp(timestamp)
        key = check_bytes("key", key)
        value = check_bytes("value", value)
        self.take(offset, timestamp, self.encode(offset, timestamp, key, value))

    def encode(self, offset: int, timestamp: int, key, value) -> bytes | Pieces:
        """The record's entry (its :class:`~kdump.format.pieces.Pieces` when large), not yet taken
        (:meth:`take`); ValueError where Kafka refuses it. No type
        checks: ``key``/``value`` are bytes-like or None. Under LogAppendTime the record carries the append
        time (``appendLegacyRecord`` overwrites it, compressed or not); magic 0 stores none."""
        last = self.last_record_offset
        base = offset if self.base_offset is None else self.base_offset
        relative = self._relative
        if (last is not None and offset <= last) or offset < base or timestamp < L.NO_TIMESTAMP \
                or (relative and offset - base > INT32_MAX):
            refuse_record(offset, timestamp, last, base, INT32_MAX if relative else None)
        if self.log_append_time is not None:
            timestamp = self.log_append_time
        if is_large(key, value):  # taken a piece at a time: the value is not copied twice (format/pieces.py)
            return message_pieces(offset - base if relative else offset, self.magic, self.timestamp_type,
                                  timestamp, key, value)
        return encode_message(offset - base if relative else offset, self.magic, self.timestamp_type, timestamp,
                              key, value)

    def take(self, offset: int, timestamp: int, entry: bytes | Pieces) -> None:
        """Take an entry :meth:`encode` gave for these ``offset`` and ``timestamp``."""
        if self.base_offset is None:
            self.base_offset = offset
        append(self._entries, entry)
        self.record_count += 1
        self.size += len(entry)
        self.last_record_offset = offset
        if timestamp > self._max_timestamp:
            self._max_timestamp = timestamp

    def build(self, *, wrapper_offset: int | None = None) -> bytes:
        if not self._entries:
            raise ValueError("nothing appended")
        if self.codec == _codec.NONE:
            if wrapper_offset is not None:
                raise ValueError("wrapper_offset only applies to compressed wrappers")
            return bytes(self._entries)
        inner = self._entries
        compressed = _codec.compress(self.codec, inner, magic=self.magic, level=self.compression_level)
        if self.log_append_time is not None:
            wrapper_timestamp = self.log_append_time
        elif self.magic == 0:
            wrapper_timestamp = L.NO_TIMESTAMP  # not written anyway
        else:
            wrapper_timestamp = self._max_timestamp
        assert self.last_record_offset is not None  # set by every append, and _entries is not empty
        offset = self.last_record_offset if wrapper_offset is None else wrapper_offset
        return encode_message(offset, self.magic, self.timestamp_type, wrapper_timestamp, None, compressed, self.codec)


def encode_messages_py(cols, magic: int, timestamp_type, timestamp: int | None = None) -> bytes:
    """The records of ``cols`` (a :class:`~kdump.format.columns.RecordColumns`) as uncompressed magic 0/1 entries,
    one per record, joined: :func:`encode_message` with each record's offset, key and value and ``timestamp``
    (None: each record's own; LogAppendTime puts the append time on every message). ValueError for a timestamp
    below -1 (Kafka's builder refuses it) or a message too large for its size field. ``cols.headers`` are not
    written (magic 0/1 have none; the caller counts them as lost).

    Compiled twin: ``kdump.format._encode.encode_messages`` (chosen by :mod:`kdump._backend`)."""
    parts: list = []
    offsets, timestamps = cols.offsets, cols.timestamps
    buf = memoryview(cols.buf)
    key_pos, key_len, value_pos, value_len = cols.key_pos, cols.key_len, cols.value_pos, cols.value_len
    for i in range(cols.count):
        ts = timestamps[i] if timestamp is None else timestamp
        if ts < L.NO_TIMESTAMP:
            raise ValueError(f"Invalid negative timestamp {ts} (offset {offsets[i]})")
        key = None if key_len[i] < 0 else buf[key_pos[i]:key_pos[i] + key_len[i]]
        value = None if value_len[i] < 0 else buf[value_pos[i]:value_pos[i] + value_len[i]]
        if is_large(key, value):  # joined once, below, with the others: not copied on its own first
            parts.extend(message_pieces(offsets[i], magic, timestamp_type, ts, key, value).parts)
        else:
            parts.append(encode_message(offsets[i], magic, timestamp_type, ts, key, value))
    return b"".join(parts)


def _select():
    # Chosen at import (the compiled twin when built, see kdump/_backend.py).
    from kdump import _backend
    return _backend.pick("encode_messages", encode_messages_py)


encode_messages = _select()
