"""Magic-2 encoding: records and record batches byte for byte as Kafka's ``MemoryRecordsBuilder`` lays them out.

The writing twin of :mod:`kdump.format.v2` (spec §3.4-3.6), used by :mod:`kdump.write.segment`, :mod:`kdump.convert`
and the test fixtures:

* :func:`encode_record` -- one record (``DefaultRecord.writeTo``), bytes-like keys/values taken as they are;
* :func:`encode_batch` -- the 61-byte header with Length and CRC-32C filled in, then the payload;
* :class:`RecordBatchBuilder` -- one batch with Kafka's refusals; :meth:`~RecordBatchBuilder.append` checks its
  arguments, :meth:`~RecordBatchBuilder.encode` + :meth:`~RecordBatchBuilder.take` are the unchecked fast path
  for callers whose records come from a reader (convert), and let them know a record's size before taking it;
* :func:`empty_batch` -- the count-0 batch the log cleaner leaves behind.

Every function returns whole entries (the 12-byte offset/size prefix included).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from kdump import codec as _codec
from kdump.format import layout as L
from kdump.format.builder_args import (
    INT16_MAX,
    INT16_MIN,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    check_bytes,
    check_codec,
    check_int,
    check_timestamp,
    check_timestamp_type,
    refuse_record,
)
from kdump.format.crc import crc32c as _crc32c
from kdump.format.pieces import Pieces, append, is_large
from kdump.format.types import TimestampType
from kdump.format.varint import encode_varint

__all__ = ["RecordBatchBuilder", "encode_record", "encode_batch", "batch_attributes", "empty_batch",
           "encode_headers", "encode_run_records"]

MAGIC = 2
# 1- and 2-byte varints precomputed: converting millions of small records spends most of its time here.
_SMALL = 1 << 13
_SMALL_VARINTS = [encode_varint(n) for n in range(-_SMALL, _SMALL)]
_NULL = b"\x01"  # varint -1: a null key, value or header value
_NO_HEADERS = b"\x00"
_RECORD_ATTRIBUTES = b"\x00"  # unused by Kafka, always 0


def _varint(n: int) -> bytes:
    if -_SMALL <= n < _SMALL:
        return _SMALL_VARINTS[n + _SMALL]
    return encode_varint(n)


def encode_record(offset_delta: int, timestamp_delta: int, key, value,
                  headers: Sequence[tuple[bytes, bytes | None]] = ()) -> bytes:
    """One record as ``DefaultRecord.writeTo`` writes it: varint body length, then attributes 0, the deltas
    (zig-zag makes the varint and varlong encodings identical), key, value and headers with varint lengths
    (-1 = null). ``key``/``value``/header values: bytes-like or None; header keys: bytes (never null)."""
    body = b"".join(_record_parts(offset_delta, timestamp_delta, key, value, headers))
    return _varint(len(body)) + body


def record_pieces(offset_delta: int, timestamp_delta: int, key, value,
                  headers: Sequence[tuple[bytes, bytes | None]] = ()) -> Pieces:
    """:func:`encode_record` as its :class:`~kdump.format.pieces.Pieces`: the key and value not copied."""
    parts = _record_parts(offset_delta, timestamp_delta, key, value, headers)
    return Pieces([_varint(sum(memoryview(p).nbytes for p in parts)), *parts])


def _record_parts(offset_delta: int, timestamp_delta: int, key, value, headers) -> list:
    """The pieces of a record after its length: attributes, deltas, key, value and headers."""
    parts = [_RECORD_ATTRIBUTES, _varint(timestamp_delta), _varint(offset_delta)]
    if key is None:
        parts.append(_NULL)
    else:
        parts.append(_varint(len(key)))
        parts.append(key)
    if value is None:
        parts.append(_NULL)
    else:
        parts.append(_varint(len(value)))
        parts.append(value)
    if headers:
        parts.append(_varint(len(headers)))
        for hkey, hvalue in headers:
            parts.append(_varint(len(hkey)))
            parts.append(hkey)
            if hvalue is None:
                parts.append(_NULL)
            else:
                parts.append(_varint(len(hvalue)))
                parts.append(hvalue)
    else:
        parts.append(_NO_HEADERS)
    return parts


def batch_attributes(codec: int, timestamp_type: TimestampType, is_transactional: bool = False,
                     is_control: bool = False, has_delete_horizon: bool = False) -> int:
    """``DefaultRecordBatch.computeAttributes``."""
    attributes = codec & L.V2_CODEC_MASK
    if timestamp_type == TimestampType.LOG_APPEND_TIME:
        attributes |= L.V2_TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= L.V2_TRANSACTIONAL_MASK
    if is_control:
        attributes |= L.V2_CONTROL_MASK
    if has_delete_horizon:
        attributes |= L.V2_DELETE_HORIZON_MASK
    return attributes


def encode_batch(*, base_offset: int, partition_leader_epoch: int, attributes: int, last_offset_delta: int,
                 base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int,
                 base_sequence: int, records_count: int, payload) -> bytes:
    """Header + payload, with Length and the CRC-32C filled in (``DefaultRecordBatch.writeHeader``)."""
    return b"".join((batch_head(
        base_offset=base_offset, partition_leader_epoch=partition_leader_epoch, attributes=attributes,
        last_offset_delta=last_offset_delta, base_timestamp=base_timestamp, max_timestamp=max_timestamp,
        producer_id=producer_id, producer_epoch=producer_epoch, base_sequence=base_sequence,
        records_count=records_count, payload=payload), payload))


def batch_head(*, base_offset: int, partition_leader_epoch: int, attributes: int, last_offset_delta: int,
               base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int,
               base_sequence: int, records_count: int, payload) -> bytes:
    """The 61 bytes of :func:`encode_batch` before ``payload``."""
    after_crc = L.V2_AFTER_CRC.pack(attributes, last_offset_delta, base_timestamp, max_timestamp,
                                         producer_id, producer_epoch, base_sequence, records_count)
    length = L.V2_BODY_HEAD_SIZE + len(payload)
    if length > INT32_MAX:
        raise ValueError(f"record batch of {length + L.LOG_OVERHEAD} bytes does not fit Kafka's int32 size field")
    crc = _crc32c(payload, _crc32c(after_crc))  # over attributes .. last record
    return b"".join((L.V2_BEFORE_CRC.pack(base_offset, length, partition_leader_epoch, MAGIC), L.UINT32.pack(crc),
                     after_crc))


def _encode_header_key(key) -> bytes:
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        # Header keys are Java Strings in Kafka; raw bytes are accepted so a converter can copy them unchanged.
        return bytes(key)
    if key is None:
        # DefaultRecord.writeTo: "Invalid null header key found in headers"
        raise ValueError("Invalid null header key found in headers")
    raise TypeError(f"header key must be str or bytes, not {type(key).__name__}")


def encode_headers(headers) -> list[tuple[bytes, bytes | None]]:
    """``(key, value)`` pairs (key str or bytes, value bytes or None) checked and as :func:`encode_record` takes
    them."""
    if headers is None:
        raise TypeError("headers must be a sequence of (key, value) pairs (use () for none), not None")
    out = []
    for item in headers:
        try:
            key, value = item
        except (TypeError, ValueError):
            raise TypeError(f"each header must be a (key, value) pair, not {item!r}") from None
        out.append((_encode_header_key(key), check_bytes("header value", value)))
    return out


class RecordBatchBuilder:
    """Builds one magic-2 record batch exactly as Kafka's ``MemoryRecordsBuilder`` does.

    >>> b = RecordBatchBuilder(base_offset=0)
    >>> b.append(0, 1700000000000, None, b"a")
    >>> len(b.build())
    69

    Offsets given to :meth:`append` are absolute and must increase; they need not be consecutive, and
    the first one may be above ``base_offset`` (both happen in compacted batches, whose base offset Kafka
    keeps). ``build()`` may be called more than once; it does not change the builder.

    Kafka's own refusals are kept: a transactional batch needs a producer id; a producer id needs an
    epoch and (outside control batches) a base sequence; LOG_APPEND_TIME needs ``log_append_time``.
    """

    def __init__(self, base_offset: int, codec: int = _codec.NONE,
                 timestamp_type: TimestampType = TimestampType.CREATE_TIME, log_append_time: int | None = None,
                 producer_id: int = L.NO_PRODUCER_ID, producer_epoch: int = L.NO_PRODUCER_EPOCH,
                 base_sequence: int = L.NO_SEQUENCE, is_transactional: bool = False, is_control: bool = False,
                 partition_leader_epoch: int = 0, delete_horizon_ms: int | None = None,
                 compression_level: int | None = None):
        self.base_offset = check_int("base_offset", base_offset, 0, INT64_MAX)
        self.codec = check_codec(codec, MAGIC)
        self.timestamp_type = check_timestamp_type(timestamp_type, magic=MAGIC)
        if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            if log_append_time is None:
                raise ValueError("a LOG_APPEND_TIME batch needs log_append_time (it becomes the max timestamp)")
            check_timestamp(log_append_time)
        self.log_append_time = log_append_time
        self.producer_id = check_int("producer_id", producer_id, INT64_MIN, INT64_MAX)
        self.producer_epoch = check_int("producer_epoch", producer_epoch, INT16_MIN, INT16_MAX)
        self.base_sequence = check_int("base_sequence", base_sequence, INT32_MIN, INT32_MAX)
        self.is_transactional = bool(is_transactional)
        self.is_control = bool(is_control)
        self.partition_leader_epoch = check_int("partition_leader_epoch", partition_leader_epoch,
                                                INT32_MIN, INT32_MAX)
        if delete_horizon_ms is not None:
            check_int("delete_horizon_ms", delete_horizon_ms, INT64_MIN, INT64_MAX)
        self.delete_horizon_ms = delete_horizon_ms
        self.compression_level = compression_level
        # The producer-state rules of MemoryRecordsBuilder's constructor.
        if self.is_transactional and self.producer_id == L.NO_PRODUCER_ID:
            raise ValueError("Cannot write transactional messages without a valid producer ID")
        if self.producer_id != L.NO_PRODUCER_ID:
            if self.producer_epoch == L.NO_PRODUCER_EPOCH:
                raise ValueError("Invalid negative producer epoch")
            if self.base_sequence < 0 and not self.is_control:
                raise ValueError("Invalid negative sequence number used")
        # The log cleaner stores the delete horizon in the base timestamp field, and record timestamp
        # deltas are then relative to it (they may be negative); otherwise the first record sets it.
        self._base_timestamp: int | None = delete_horizon_ms
        self._max_timestamp = L.NO_TIMESTAMP
        self._last_offset_override: int | None = None
        self._records = bytearray()  # the records taken, one after the other (not an object each: 10 M records
        # of a few bytes would take 500 MB as bytes objects, issue 22 item 2)
        # read freely, written only by take(): what a caller cutting batches by size and offsets needs
        self.last_record_offset: int | None = None
        self.record_count = 0
        self.size = L.V2_RECORD_BATCH_OVERHEAD  # bytes before compression, header included

    @property
    def last_offset(self) -> int | None:
        """The batch's last offset as it will be written (None before the first append)."""
        if self._last_offset_override is not None:
            return self._last_offset_override
        return self.last_record_offset

    def append(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
               headers: Iterable[tuple[str | bytes, bytes | None]] = ()) -> None:
        """Append one record with absolute ``offset`` and ``timestamp`` (ms, or -1 for none).

        ``headers`` is a sequence of ``(key, value)`` pairs: key a str (written as UTF-8), value bytes
        or None. On a control batch ``key`` must be a control record key (see
        :func:`kdump.write.segment.control_record_key`, or use :meth:`append_control_record`).
        """
        check_int("offset", offset, 0, INT64_MAX)
        check_timestamp(timestamp)
        key = check_bytes("key", key)
        value = check_bytes("value", value)
        self.take(offset, timestamp, self.encode(offset, timestamp, key, value, encode_headers(headers)))

    def encode(self, offset: int, timestamp: int, key, value, headers: Sequence[tuple[bytes, bytes | None]] = ()
               ) -> bytes | Pieces:
        """The record's bytes in this batch (its :class:`~kdump.format.pieces.Pieces` when large), not yet taken
        (:meth:`take`); ValueError where Kafka refuses it.

        No type checks: ``key``/``value`` are bytes-like or None (slices are not copied), ``headers``
        already encoded pairs (:func:`encode_headers`)."""
        base = self.base_offset
        last = self.last_record_offset
        if (last is not None and offset <= last) or not 0 <= offset - base <= INT32_MAX or timestamp < L.NO_TIMESTAMP:
            refuse_record(offset, timestamp, last, base, INT32_MAX)
        base_timestamp = self._base_timestamp
        encode = record_pieces if is_large(key, value, headers) else encode_record  # pieces: the value not copied twice
        return encode(offset - base, timestamp - (timestamp if base_timestamp is None else base_timestamp),
                      key, value, headers)

    def take(self, offset: int, timestamp: int, record: bytes | Pieces) -> None:
        """Take a record :meth:`encode` gave for these ``offset`` and ``timestamp``."""
        if self._base_timestamp is None:
            self._base_timestamp = timestamp
        append(self._records, record)
        self.record_count += 1
        self.size += len(record)
        self.last_record_offset = offset
        if timestamp > self._max_timestamp:
            self._max_timestamp = timestamp

    def take_records(self, records: bytes, count: int, last_offset: int, max_timestamp: int) -> None:
        """Take ``count`` records at once, as :func:`encode_run_records` encoded them for this batch (after its
        first record: the base timestamp is set): what :meth:`take` of each would do."""
        self._records += records
        self.record_count += count
        self.size += len(records)
        self.last_record_offset = last_offset
        if max_timestamp > self._max_timestamp:
            self._max_timestamp = max_timestamp

    @property
    def base_timestamp(self) -> int | None:
        """The timestamp record deltas are relative to (None before the first record, unless a delete horizon)."""
        return self._base_timestamp

    def append_control_record(self, offset: int, timestamp: int, control_type_id: int, value: bytes | None,
                              *, key_version: int = 0) -> None:
        """Append a control record (key = int16 version + int16 type id) to a control batch."""
        if not self.is_control:
            # MemoryRecordsBuilder: "Control records can only be appended to control batches"
            raise ValueError("Control records can only be appended to control batches")
        check_int("key version", key_version, INT16_MIN, INT16_MAX)
        check_int("control_type_id", control_type_id, INT16_MIN, INT16_MAX)
        self.append(offset, timestamp, L.CONTROL_RECORD_KEY.pack(key_version, control_type_id), value)

    def override_last_offset(self, last_offset: int) -> None:
        """Keep a larger last offset than the last record's (``MemoryRecordsBuilder.overrideLastOffset``).

        The log cleaner does this for v2 batches whose trailing records it removed: the batch keeps its
        original lastOffset so that producer sequence numbers stay consistent.
        """
        check_int("last_offset", last_offset, self.base_offset, self.base_offset + INT32_MAX)
        if self.last_record_offset is not None and last_offset < self.last_record_offset:
            raise ValueError(f"last offset {last_offset} is below the last record's offset {self.last_record_offset}")
        self._last_offset_override = last_offset

    def build(self) -> bytes:
        """The whole batch: 12-byte prefix, 49 more header bytes, then the (compressed) records."""
        return bytes(self.build_pieces())

    def build_pieces(self) -> Pieces:
        """:meth:`build` as its :class:`~kdump.format.pieces.Pieces`, the header and the records: uncompressed,
        the records taken, not a copy of them (written one after the other, a batch near the limit is held once),
        valid until the next record is taken."""
        if not self._records:
            # Kafka's builder writes nothing for zero records; a count-0 batch only comes from the cleaner.
            raise ValueError("a record batch needs at least one record (use empty_batch() for a count-0 batch)")
        assert self._base_timestamp is not None and self.last_offset is not None  # the first take() set them
        payload: bytes | bytearray
        if self.codec == _codec.NONE:
            payload = self._records
        else:
            payload = _codec.compress(self.codec, self._records, magic=MAGIC, level=self.compression_level)
        if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            assert self.log_append_time is not None  # __init__ refuses a LOG_APPEND_TIME batch without it
            max_timestamp = self.log_append_time  # the broker's append time replaces every record's timestamp
        else:
            max_timestamp = self._max_timestamp
        attributes = batch_attributes(self.codec, self.timestamp_type, self.is_transactional, self.is_control,
                                      self.delete_horizon_ms is not None)
        return Pieces([batch_head(
            base_offset=self.base_offset, partition_leader_epoch=self.partition_leader_epoch,
            attributes=attributes, last_offset_delta=self.last_offset - self.base_offset,
            base_timestamp=self._base_timestamp, max_timestamp=max_timestamp, producer_id=self.producer_id,
            producer_epoch=self.producer_epoch, base_sequence=self.base_sequence,
            records_count=self.record_count, payload=payload,
        ), payload])


def empty_batch(base_offset: int, last_offset: int, *, max_timestamp: int = L.NO_TIMESTAMP,
                timestamp_type: TimestampType = TimestampType.CREATE_TIME, producer_id: int = L.NO_PRODUCER_ID,
                producer_epoch: int = L.NO_PRODUCER_EPOCH, base_sequence: int = L.NO_SEQUENCE,
                is_transactional: bool = False, is_control: bool = False, partition_leader_epoch: int = 0) -> bytes:
    """A count-0 batch as the log cleaner leaves it (``DefaultRecordBatch.writeEmptyHeader``).

    When compaction removes every record of a batch whose producer state must be kept, the header
    survives: offsets, producer fields and max timestamp kept, base timestamp -1, no compression.
    """
    check_int("base_offset", base_offset, 0, INT64_MAX)
    check_int("last_offset", last_offset, base_offset, base_offset + INT32_MAX)
    check_int("max_timestamp", max_timestamp, INT64_MIN, INT64_MAX)
    ts_type = check_timestamp_type(timestamp_type, magic=MAGIC)
    return encode_batch(
        base_offset=base_offset,
        partition_leader_epoch=check_int("partition_leader_epoch", partition_leader_epoch, INT32_MIN, INT32_MAX),
        attributes=batch_attributes(_codec.NONE, ts_type, is_transactional, is_control),
        last_offset_delta=last_offset - base_offset, base_timestamp=L.NO_TIMESTAMP,
        max_timestamp=max_timestamp, producer_id=check_int("producer_id", producer_id, INT64_MIN, INT64_MAX),
        producer_epoch=check_int("producer_epoch", producer_epoch, INT16_MIN, INT16_MAX),
        base_sequence=check_int("base_sequence", base_sequence, INT32_MIN, INT32_MAX),
        records_count=0, payload=b"",
    )


def encode_run_records_py(cols, start: int, base_offset: int, base_timestamp: int, last_offset: int, room: int,
                          most: int, magic: int, append_time: int | None):
    """Plain magic 0/1 messages ``start``.. of ``cols`` (a :class:`~kdump.format.legacy.LegacyRun`'s columns) as
    the magic-2 records of an open batch (base offset and timestamp; its last record's offset ``last_offset``), as
    many as keep the batch one unit of a conversion: ``(records, count, last offset, max timestamp)``.

    Stops before a message of another ``magic``; without the LogAppendTime bit when ``append_time`` is given, or
    with another time; with it when ``append_time`` is None; with bytes after its value; whose offset is not above
    the previous one or more than INT32_MAX above ``base_offset``; whose timestamp is below -1; that does not fit
    in ``room`` bytes; and after ``most`` records (-1: no limit on bytes or records). Whoever called decides what
    happens to that message (a new batch, a refusal). ``magic`` None: records of any kind (a wrapper's inner
    messages, whose wrapper is the unit): only the offsets, timestamps and limits end the stretch.

    Compiled twin: ``kdump.format._encode.encode_run_records`` (chosen by :mod:`kdump._backend`)."""
    parts: list[bytes] = []
    offsets, timestamps, attributes, magics = cols.offsets, cols.timestamps, cols.attributes, cols.magics
    key_len, value_len, sizes = cols.key_len, cols.value_len, cols.sizes
    unit = magic is not None
    overhead = L.LOG_OVERHEAD + (L.LEGACY_RECORD_OVERHEAD_V0 if magic == 0 else L.LEGACY_RECORD_OVERHEAD_V1)
    used = 0
    max_ts = L.NO_TIMESTAMP
    last = last_offset
    for i in range(start, cols.count):
        offset, ts = offsets[i], timestamps[i]
        log_append_time = magic == 1 and attributes[i] & L.LEGACY_TIMESTAMP_TYPE_MASK
        if (unit and (magics[i] != magic or (append_time is None) == bool(log_append_time)
                     or (append_time is not None and ts != append_time)
                     or sizes[i] != overhead + max(key_len[i], 0) + max(value_len[i], 0))) \
                or offset <= last or offset - base_offset > INT32_MAX or ts < L.NO_TIMESTAMP or len(parts) == most:
            break
        record = encode_record(offset - base_offset, ts - base_timestamp, cols.key(i), cols.value(i))
        if room >= 0 and used + len(record) > room:
            break
        parts.append(record)
        used += len(record)
        last = offset
        if ts > max_ts:
            max_ts = ts
    return b"".join(parts), len(parts), last, max_ts


def _select():
    # Chosen at import (the compiled twin when built, see kdump/_backend.py).
    from kdump import _backend
    return _backend.pick("encode_run_records", encode_run_records_py)


encode_run_records = _select()
