"""Magic 2: record batches (``DefaultRecordBatch``) and their records (``DefaultRecord``), spec §3.4-3.5.

A batch is read as its 12-byte prefix plus the ``length`` bytes that follow (the *body*). Header fields
are decoded eagerly (one ``struct`` call); the CRC and the records only when asked for, so a shallow
walk does no per-record work.

Records are decoded into :class:`~kdump.format.columns.RecordColumns` (the one record shape of every
magic): one list per field, positions into the payload instead of copied keys and values. That is what
an Arrow/Spark consumer wants, and it lets the text renderer skip objects altogether.
:meth:`RecordBatch.records` builds :class:`~kdump.format.columns.Record` objects from the columns.
"""
from __future__ import annotations

from collections.abc import Iterator

from kdump import codec as _codec
from kdump.errors import FormatError
from kdump.format import layout as L
from kdump.format.columns import RECORDS_PER_CHUNK, Record, RecordColumns, RecordKeys, RecordSummary, iter_chunk_records
from kdump.format.crc import crc32c as _crc
from kdump.format.limits import BYTES_PER_CHUNK, HEADERS_PER_CHUNK, MAX_RECORD_HEADERS, too_many_headers
from kdump.format.types import TimestampType
from kdump.format.varint import zigzag_decode

INT64_MIN, INT64_MAX = L.INT64_MIN, L.INT64_MAX


def _uvarint(buf, pos, end, what, index, max_bytes):
    """Slow path of the inlined varint reads below: multi-byte values and every error."""
    value = 0
    shift = 0
    for _ in range(max_bytes):
        if pos >= end:
            raise FormatError("record-truncated", f"record {index}: {what} runs past the end of the batch")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            if max_bytes == 10:
                # Java's readVarlong: bits past the 64th (of a 10th byte above 1) fall off the long
                value &= 0xFFFFFFFFFFFFFFFF
            return zigzag_decode(value), pos
        shift += 7
    raise FormatError("varint-too-long", f"record {index}: {what} is a varint longer than {max_bytes} bytes")


def parse_records_py(buf, start: int, end: int, count: int, base_offset: int, base_timestamp: int,
                     append_time: int | None, first: int = 0, stop: int | None = None,
                     at: int | None = None) -> RecordColumns:
    """Decode ``count`` records from ``buf[start:end]`` (pure Python; the compiled twin has the same contract).

    In chunks: ``at`` is where the chunk starts (None: ``start``), ``first`` the index of the record there
    (earlier chunks decoded the ones before), ``stop`` the index to stop before (None: ``count``);
    ``resume_at`` of the result is where the next chunk starts. The records-remaining check is made by the
    chunk that reaches ``count``.

    Follows ``DefaultRecord.readFrom``: each record's declared length must match what its fields take,
    counts of headers must be non-negative, keys and values must lie inside the record. For
    LogAppendTime batches every record's timestamp is the batch's max timestamp (``append_time``).
    Positions in error messages are byte offsets into the records payload.
    """
    # The single-byte varint case is written out inline for every field below (instead of a helper call)
    # because this loop is the pure path's hot spot; _uvarint handles the rest. Its compiled twin lives in
    # kdump/format/_records.pyx and must stay statement-for-statement in step.
    cols = RecordColumns(buf)
    offsets = cols.offsets
    timestamps = cols.timestamps
    attributes = cols.attributes
    key_pos = cols.key_pos
    key_len = cols.key_len
    value_pos = cols.value_pos
    value_len = cols.value_len
    headers = cols.headers
    sizes = cols.sizes
    no_headers: tuple[tuple[bytes, bytes | None], ...] = ()
    pos = start if at is None else at
    i = first
    last = count if stop is None or stop > count else stop
    chunked = stop is not None  # a whole-batch read (columns()) is not cut
    chunk_headers = chunk_bytes = 0
    try:
        if count < 0:
            raise FormatError("record-count-invalid", f"invalid record count {count}")
        while i < last:
            rec_start = pos
            # length (varint), inlined single-byte fast path
            if pos >= end:
                raise FormatError("record-truncated",
                                  f"record {i}: the batch ends before its record count ({count}) is reached")
            b = buf[pos]
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                length, pos = _uvarint(buf, pos, end, "length", i, 5)
            body_start = pos
            body_end = pos + length
            if length < 0 or body_end > end:
                raise FormatError(
                    "record-size-invalid",
                    f"record {i} at payload byte {rec_start - start}: expected {length} bytes in record payload, "
                    f"but only {end - pos} remain",
                )
            attr = buf[pos]
            pos += 1
            b = buf[pos] if pos < body_end else 0x80
            if b < 0x80:
                ts_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                ts_delta, pos = _uvarint(buf, pos, body_end, "timestamp delta", i, 10)
            b = buf[pos] if pos < body_end else 0x80
            if b < 0x80:
                off_delta = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                off_delta, pos = _uvarint(buf, pos, body_end, "offset delta", i, 5)
            b = buf[pos] if pos < body_end else 0x80
            if b < 0x80:
                klen = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                klen, pos = _uvarint(buf, pos, body_end, "key length", i, 5)
            kpos = pos
            if klen >= 0:
                pos += klen
                if pos > body_end:
                    raise FormatError("record-size-invalid",
                                      f"record {i}: key of {klen} bytes runs past the end of the record")
            else:
                klen = -1
            b = buf[pos] if pos < body_end else 0x80
            if b < 0x80:
                vlen = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                vlen, pos = _uvarint(buf, pos, body_end, "value length", i, 5)
            vpos = pos
            if vlen >= 0:
                pos += vlen
                if pos > body_end:
                    raise FormatError("record-size-invalid",
                                      f"record {i}: value of {vlen} bytes runs past the end of the record")
            else:
                vlen = -1
            b = buf[pos] if pos < body_end else 0x80
            if b < 0x80:
                nheaders = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                nheaders, pos = _uvarint(buf, pos, body_end, "header count", i, 5)
            if nheaders == 0:
                hdrs = no_headers
            else:
                if nheaders < 0:
                    raise FormatError("record-headers-invalid",
                                      f"record {i}: invalid number of record headers {nheaders}")
                if nheaders > body_end - pos:
                    raise FormatError("record-headers-invalid",
                                      f"record {i}: {nheaders} headers declared, "
                                      f"more than the {body_end - pos} bytes left")
                if nheaders > MAX_RECORD_HEADERS:
                    raise FormatError("record-headers-invalid", too_many_headers(i, nheaders))
                hl = []
                for _ in range(nheaders):
                    hk, pos = _uvarint(buf, pos, body_end, "header key length", i, 5)
                    if hk < 0:
                        raise FormatError("record-headers-invalid",
                                          f"record {i}: invalid negative header key size {hk}")
                    if pos + hk > body_end:
                        raise FormatError("record-size-invalid",
                                          f"record {i}: header key runs past the end of the record")
                    hkey = bytes(buf[pos:pos + hk])
                    pos += hk
                    hv, pos = _uvarint(buf, pos, body_end, "header value length", i, 5)
                    if hv >= 0:
                        if pos + hv > body_end:
                            raise FormatError("record-size-invalid",
                                              f"record {i}: header value runs past the end of the record")
                        hval = bytes(buf[pos:pos + hv])
                        pos += hv
                    else:
                        hval = None
                    hl.append((hkey, hval))
                hdrs = tuple(hl)
            if pos != body_end:
                raise FormatError(
                    "record-size-invalid",
                    f"record {i}: expected to read {length} bytes in record payload, "
                    f"but instead read {pos - body_start}",
                )
            offset = base_offset + off_delta
            offsets.append(offset if INT64_MIN <= offset <= INT64_MAX else L.java_long(offset))
            if append_time is None:
                ts = base_timestamp + ts_delta
                timestamps.append(ts if INT64_MIN <= ts <= INT64_MAX else L.java_long(ts))
            else:
                timestamps.append(append_time)
            attributes.append(attr)
            key_pos.append(kpos)
            key_len.append(klen)
            value_pos.append(vpos)
            value_len.append(vlen)
            headers.append(hdrs)
            sizes.append(pos - rec_start)
            i += 1
            if chunked:
                chunk_headers += nheaders
                chunk_bytes += pos - rec_start
                if (chunk_headers >= HEADERS_PER_CHUNK or chunk_bytes >= BYTES_PER_CHUNK) and i < last:
                    last = i  # memory bounded by headers and bytes too: the next chunk goes on from here
                    break
        if last < count:
            cols.resume_at = pos
        elif pos != end:
            raise FormatError(
                "records-remaining",
                f"incorrect declared batch size: {end - pos} bytes remain "
                f"after the {count} records the header declares",
            )
    except FormatError as e:
        cols.error = e.detached()  # the columns keep it: not the frames that hold them (a cycle) and the payload
    except IndexError:
        # A field ran past the end of the buffer in a way the explicit checks above did not foresee.
        cols.error = FormatError("record-truncated", f"record {i}: invalid record structure (ran out of bytes)")
    cols.count = i - first
    return cols


def batch_too_small(total: int) -> str:
    """A magic 2 entry of ``total`` bytes (its prefix included), smaller than a record batch's header: the one
    spelling of this entry-size rule (the framing walk says it too)."""
    return (f"magic 2 batch declares {total} bytes; a record batch needs at least {L.V2_RECORD_BATCH_OVERHEAD} "
            "(its header alone)")


class RecordBatch:
    """A magic-2 record batch: the 61-byte header fields, plus lazily its CRC check and records."""

    magic = 2
    __slots__ = (
        "position", "base_offset", "length", "body", "partition_leader_epoch", "crc", "attributes",
        "last_offset_delta", "base_timestamp", "max_timestamp", "producer_id", "producer_epoch",
        "base_sequence", "records_count", "_valid",
    )

    def __init__(self, position: int, base_offset: int, length: int, body: bytes):
        if length < L.V2_BODY_HEAD_SIZE or len(body) < L.V2_BODY_HEAD_SIZE:
            raise FormatError("batch-too-small", batch_too_small(L.LOG_OVERHEAD + length), position=position)
        self.position = position
        self.base_offset = base_offset
        self.length = length
        self.body = body
        (self.partition_leader_epoch, _magic, self.crc, self.attributes, self.last_offset_delta,
         self.base_timestamp, self.max_timestamp, self.producer_id, self.producer_epoch,
         self.base_sequence, self.records_count) = L.V2_BODY_HEAD.unpack_from(body, 0)
        self._valid: bool | None = None

    # --- header-derived properties -------------------------------------------------------------
    @property
    def size(self) -> int:
        return L.LOG_OVERHEAD + self.length

    @property
    def last_offset(self) -> int:
        last = self.base_offset + self.last_offset_delta
        return last if last <= INT64_MAX else L.java_long(last)  # Java long arithmetic, as Kafka's

    @property
    def codec_id(self) -> int:
        return self.attributes & L.V2_CODEC_MASK

    @property
    def timestamp_type(self) -> TimestampType:
        if self.attributes & L.V2_TIMESTAMP_TYPE_MASK:
            return TimestampType.LOG_APPEND_TIME
        return TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & L.V2_TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & L.V2_CONTROL_MASK)

    @property
    def has_delete_horizon(self) -> bool:
        return bool(self.attributes & L.V2_DELETE_HORIZON_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """Set by the log cleaner (attribute bit 6); it is then stored in the base timestamp field."""
        return self.base_timestamp if self.has_delete_horizon else None

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == L.NO_SEQUENCE:
            return L.NO_SEQUENCE
        return L.increment_sequence(self.base_sequence, self.last_offset_delta)

    def record_sequence(self, offset: int) -> int:
        if self.base_sequence < 0:
            return L.NO_SEQUENCE
        return L.increment_sequence(self.base_sequence, offset - self.base_offset)

    @property
    def append_time(self) -> int | None:
        """For LogAppendTime batches every record's timestamp is the batch max timestamp."""
        return self.max_timestamp if self.attributes & L.V2_TIMESTAMP_TYPE_MASK else None

    # --- integrity -----------------------------------------------------------------------------
    def compute_crc(self) -> int:
        return _crc(memoryview(self.body)[L.V2_BODY_CRC_START:])

    def is_valid(self) -> bool:
        """Kafka's ``isValid``: the stored CRC-32C matches the bytes from the attributes to the end."""
        if self._valid is None:
            self._valid = self.compute_crc() == self.crc
        return self._valid

    def entry_bytes(self) -> bytes:
        """The batch exactly as it is in the file (prefix included)."""
        return b"".join(self.entry_parts())

    def entry_parts(self) -> tuple[bytes, bytes]:
        """:meth:`entry_bytes` as its prefix and its body, to be written one after the other: a batch near the
        limit is not copied to be written."""
        return L.PREFIX.pack(self.base_offset, self.length), self.body

    # --- records -------------------------------------------------------------------------------
    def records_payload(self, limit: int):
        """(buffer, start, end) of the serialized records, decompressed if the batch is compressed.

        ``limit`` bounds the decompressed size (checked before memory is taken).
        """
        start = L.V2_BODY_HEAD_SIZE
        codec_id = self.codec_id
        if codec_id == _codec.NONE:
            return self.body, start, len(self.body)
        try:
            data = _codec.decompress(codec_id, memoryview(self.body)[start:], magic=2, limit=limit)
        except _codec.DecompressedTooLarge as e:
            raise FormatError("decompressed-too-large", f"{e}", position=self.position) from None
        except _codec.CodecError as e:
            raise FormatError("decompress-failed", f"failed to decompress record stream: {e}",
                              position=self.position) from None
        return data, 0, len(data)

    def columns(self, limit: int) -> RecordColumns:
        """Decode all records column-wise. Raises FormatError only if the payload cannot be decompressed;
        record-level problems are in ``columns.error`` after the records that did decode."""
        if self.records_count == 0:
            # Kafka does not even decompress an empty batch (left by compaction to keep producer state).
            return RecordColumns(b"")
        buf, start, end = self.records_payload(limit)
        cols = parse_records(buf, start, end, self.records_count, self.base_offset, self.base_timestamp,
                             self.append_time)
        if cols.error is not None:
            cols.error.at(self.position)
        return cols

    def column_chunks(self, limit: int, chunk: int = RECORDS_PER_CHUNK) -> Iterator[RecordColumns]:
        """The records in chunks of at most ``chunk`` (what a batch of millions of tiny records needs: memory
        bounded by the decompressed size and the chunk, not by the count it declares). Raises FormatError
        as :meth:`columns` does, at the first chunk; a record-level problem ends the chunks (``error``)."""
        if self.records_count == 0:
            yield RecordColumns(b"")
            return
        yield from self._chunks(parse_records, limit, chunk)

    def summary_chunks(self, limit: int, chunk: int = RECORDS_PER_CHUNK) -> Iterator[RecordSummary]:
        """What :meth:`column_chunks` gives, as a :class:`RecordSummary` a chunk: the same walk and checks,
        without the records (what ``verify --deep`` needs)."""
        if self.records_count == 0:
            yield RecordSummary()
            return
        yield from self._chunks(summarize_records, limit, chunk)

    def key_chunks(self, limit: int, chunk: int = RECORDS_PER_CHUNK) -> Iterator[RecordKeys]:
        """What :meth:`column_chunks` gives, as :class:`RecordKeys` a chunk: the same walk and checks, the
        records' keys as digests (what ``kdump stats`` needs)."""
        if self.records_count == 0:
            yield RecordKeys()
            return
        yield from self._chunks(record_keys, limit, chunk)

    def _chunks(self, parse, limit: int, chunk: int):
        buf, start, end = self.records_payload(limit)
        count, first, at = self.records_count, 0, start
        while True:
            part = parse(buf, start, end, count, self.base_offset, self.base_timestamp, self.append_time,
                         first, first + chunk, at)
            if part.error is not None:
                part.error.at(self.position)
            yield part
            if part.resume_at is None:
                return
            first += part.count
            at = part.resume_at

    def records(self, limit: int) -> Iterator[Record]:
        """One :class:`Record` per record, decoded a chunk at a time; raises the decoding error after yielding the
        good ones."""
        return iter_chunk_records(self.column_chunks(limit), self.timestamp_type, self.record_sequence)

    def __repr__(self) -> str:
        return (f"RecordBatch(position={self.position}, base_offset={self.base_offset}, "
                f"last_offset={self.last_offset}, count={self.records_count}, codec={self.codec_id})")


def summarize_records_py(buf, start: int, end: int, count: int, base_offset: int, base_timestamp: int,
                         append_time: int | None, first: int = 0, stop: int | None = None,
                         at: int | None = None) -> RecordSummary:
    """:func:`parse_records_py`'s records, summarized (:meth:`RecordSummary.of`). The compiled twin gives the
    same summary without decoding the records into columns."""
    return RecordSummary.of(parse_records_py(buf, start, end, count, base_offset, base_timestamp, append_time,
                                             first, stop, at))


def record_keys_py(buf, start: int, end: int, count: int, base_offset: int, base_timestamp: int,
                   append_time: int | None, first: int = 0, stop: int | None = None,
                   at: int | None = None) -> RecordKeys:
    """:func:`parse_records_py`'s records as :class:`RecordKeys` (:meth:`RecordKeys.of`). The compiled twin
    gives the same without decoding the records into columns."""
    return RecordKeys.of(parse_records_py(buf, start, end, count, base_offset, base_timestamp, append_time,
                                          first, stop, at))


def _select(name, pure):
    # Chosen at import (the compiled twin when built, see kdump/_backend.py).
    from kdump import _backend
    return _backend.pick(name, pure)


parse_records = _select("parse_records", parse_records_py)
summarize_records = _select("summarize_records", summarize_records_py)
record_keys = _select("record_keys", record_keys_py)
