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
from collections.abc import Iterator

from kdump import codec as _codec
from kdump.errors import FormatError
from kdump.format import layout as L
from kdump.format.columns import (
    RECORDS_PER_CHUNK,
    InnerSummary,
    Record,
    RecordColumns,
    RecordKeys,
    RunKeys,
    iter_chunk_records,
)
from kdump.format.limits import DEFAULT_MAX_DECOMPRESSED_BYTES
from kdump.format.types import TimestampType

_INT32 = L.LEGACY_V0_MESSAGE.struct("keyLength")  # key and value lengths (valueLength: the same int32)


def message_too_small(where: str, size: int, need: int) -> str:
    """A legacy message of ``size`` bytes (after its size field) below the ``need`` bytes of its format's header
    (14 for magic 0, 22 for magic 1): the one spelling of this entry-size rule (the framing walk says it too)."""
    return f"{where} is {size} bytes; it needs at least {need}"


def parse_message(buf, start: int, end: int, where: str = "message"):
    """The fields of the legacy message in ``buf[start:end]`` (the bytes after its size field):
    ``(crc, magic, attributes, timestamp, key_pos, key_len, value_pos, value_len)``, positions into ``buf``
    and -1 lengths for null. Raises FormatError for a message Kafka's reader cannot parse."""
    n = end - start
    if n < L.LEGACY_RECORD_OVERHEAD_V0:
        raise FormatError("message-too-small", message_too_small(where, n, L.LEGACY_RECORD_OVERHEAD_V0))
    crc, magic, attributes = L.LEGACY_HEAD.unpack_from(buf, start)
    if magic == 0:
        timestamp = L.NO_TIMESTAMP
        pos = start + L.LEGACY_V0_KEY_SIZE_AT
    elif magic == 1:
        if n < L.LEGACY_RECORD_OVERHEAD_V1:
            raise FormatError("message-too-small", message_too_small(
                where if where.startswith("magic") else f"magic 1 {where}", n, L.LEGACY_RECORD_OVERHEAD_V1))
        (timestamp,) = L.LEGACY_TIMESTAMP.unpack_from(buf, start + 6)
        pos = start + L.LEGACY_V1_KEY_SIZE_AT
    else:
        raise FormatError("magic-invalid", f"invalid magic {magic} in a legacy {where} (expected 0 or 1)")
    key_pos, key_len, pos = _sized(buf, pos, end, "key", where)
    value_pos, value_len, pos = _sized(buf, pos, end, "value", where)
    # Bytes after the value are tolerated by Kafka's reader (the CRC covers them); kdump too.
    return crc, magic, attributes, timestamp, key_pos, key_len, value_pos, value_len


def _sized(buf, pos: int, end: int, what: str, where: str):
    """An int32-length-prefixed byte string (-1 = null), checked against the message bounds:
    (position, length, position after it)."""
    if pos + 4 > end:
        raise FormatError("message-truncated", f"{where}: the {what} length field runs past the end of the message")
    (n,) = _INT32.unpack_from(buf, pos)
    pos += 4
    if n < 0:
        return pos, -1, pos
    if pos + n > end:
        raise FormatError("message-truncated",
                          f"{where}: the {what} of {n} bytes runs past the end of the message ({end - pos} bytes left)")
    return pos, n, pos + n


def _crc_ok(buf, start: int, end: int, crc: int) -> bool:
    """Kafka's ``LegacyRecord.isValid`` for a message of at least the minimum size: the stored CRC-32
    matches the bytes from the magic to the end."""
    return crc32(memoryview(buf)[start + L.LEGACY_CRC_START:end]) == crc


class LegacyMessage:
    """A magic 0 or 1 message as stored: fields straight from its bytes (``body`` = after the size field)."""

    __slots__ = ("offset", "body", "crc", "magic", "attributes", "timestamp", "key", "value", "spans", "_valid")

    def __init__(self, offset: int, body, *, where: str = "message"):
        self.offset = offset
        self.body = body
        self._valid: bool | None = None  # is_valid(), once computed (a reader and a renderer both ask)
        (self.crc, self.magic, self.attributes, self.timestamp, kpos, klen, vpos, vlen) = \
            parse_message(body, 0, len(body), where)
        self.spans = (kpos, klen, vpos, vlen)  # key and value positions in ``body`` (-1 length: null)
        self.key = None if klen < 0 else bytes(body[kpos:kpos + klen])
        self.value = None if vlen < 0 else bytes(body[vpos:vpos + vlen])

    @property
    def size(self) -> int:
        return len(self.body)

    @property
    def codec_id(self) -> int:
        return self.attributes & L.LEGACY_CODEC_MASK

    @property
    def timestamp_type(self) -> TimestampType:
        return _timestamp_type(self.magic, self.attributes)

    def compute_crc(self) -> int:
        return crc32(memoryview(self.body)[L.LEGACY_CRC_START:])

    def is_valid(self) -> bool:
        """Kafka's ``LegacyRecord.isValid``: size ≥ 14 and the stored CRC-32 matches magic..end."""
        if self._valid is None:
            self._valid = len(self.body) >= L.LEGACY_RECORD_OVERHEAD_V0 and self.crc == self.compute_crc()
        return self._valid


def _timestamp_type(magic: int, attributes: int) -> TimestampType:
    if magic == 0:
        return TimestampType.NO_TIMESTAMP_TYPE
    if attributes & L.LEGACY_TIMESTAMP_TYPE_MASK:
        return TimestampType.LOG_APPEND_TIME
    return TimestampType.CREATE_TIME


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

    __slots__ = ("position", "message", "limit", "_columns", "_base_offset", "_records_error")

    def __init__(self, position: int, offset: int, body, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES):
        self.position = position
        self.limit = limit  # the bound of the decompression its first offset needs: its reader's (--max-batch-bytes)
        try:
            self.message = LegacyMessage(offset, body, where=f"magic {body[L.BODY_MAGIC]} message")
        except FormatError as e:
            raise e.at(position) from None
        self._columns: RecordColumns | None = None
        self._base_offset: int | None = None  # computed once, by base_offset
        self._records_error: FormatError | None = None

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
        return b"".join(self.entry_parts())

    def entry_parts(self) -> tuple:
        """:meth:`entry_bytes` as its prefix and its body (a view of the data read), to be written one after the
        other: a message near the limit is not copied to be written."""
        return L.PREFIX.pack(self.message.offset, self.message.size), self.message.body

    @property
    def base_offset(self) -> int:
        """Offset of the first record. As in Kafka this decompresses a wrapper (bounded by :attr:`limit`), once.
        It never raises: a wrapper whose inner messages cannot be read states no first offset, so its own
        offset (the last one, the only one it states) stands for it and :attr:`records_error` holds why. Reading
        the records (:meth:`columns`, :meth:`column_chunks`) raises that error where damage is reported; the
        many places that only *name* a batch by its offsets (messages, JSON heads, drop reports) cannot fail."""
        if self._base_offset is None:
            self._base_offset = self._first_offset()
        return self._base_offset

    @property
    def records_error(self) -> FormatError | None:
        """Why no record of this wrapper can be read (None: they can, or it is not a wrapper); known once
        :attr:`base_offset` was asked."""
        _ = self.base_offset
        return self._records_error

    def _first_offset(self) -> int:
        if self.message.codec_id == _codec.NONE:
            return self.message.offset
        if self._columns is not None:
            return self._columns.offsets[0]
        # the first chunk only (a wrapper of millions of inner messages is not decoded whole for its first
        # offset). A wrapper of one chunk is kept, as columns() keeps it.
        try:
            first = next(self.column_chunks(self.limit))
        except FormatError as e:
            self._records_error = e.detached()  # kept by the batch: not the frames that hold the batch
            return self.message.offset
        if first.resume_at is None:
            self._columns = first
        return first.offsets[0]

    def records(self, limit: int) -> Iterator[Record]:
        """One :class:`~kdump.format.columns.Record` per record, decoded a chunk at a time; raises the decoding
        error after yielding the good ones."""
        return iter_chunk_records(self.column_chunks(limit), self.timestamp_type, _no_sequence)

    def columns(self, limit: int) -> RecordColumns:
        """The records of this entry column-wise, following ``AbstractLegacyRecordBatch``'s deep iterator:
        an uncompressed message is its own record (``buf`` = its body); a wrapper gives its inner messages
        (``buf`` = the decompressed inner set) with Kafka's offset and timestamp rules applied.

        Raises FormatError when no record can be read (the wrapper cannot be decompressed, holds nothing,
        or its offset contradicts its inner offsets); a problem after some records is in ``error``.
        ``limit`` bounds the decompressed size. The result is kept: a second call returns it again."""
        if self._columns is None:
            if self.message.codec_id == _codec.NONE:
                self._columns = _single(self.message)
            else:
                self._columns = self._wrapper_columns(limit)
        return self._columns

    def column_chunks(self, limit: int, chunk: int = RECORDS_PER_CHUNK) -> Iterator[RecordColumns]:
        """The records in chunks of at most ``chunk`` (memory bounded by the decompressed size and the chunk,
        however many inner messages a wrapper holds). Magic 1 offsets depend on the last inner offset, so a
        wrapper of more than one chunk is walked twice: once for that offset, once for the chunks."""
        if self._columns is not None or self.message.codec_id == _codec.NONE:
            yield self.columns(limit)
            return
        data = self.inner_set(limit)
        cols, inner_offsets, resume = inner_columns(data, self.position, 0, chunk)
        if resume is None:
            yield self.columns_from(cols, inner_offsets, inner_offsets[-1])
            return
        last_inner, pos = inner_offsets[-1], resume
        while pos is not None:
            _, offsets, pos = inner_columns(data, self.position, pos, chunk)
            if offsets:
                last_inner = offsets[-1]
        base = self._base(last_inner)  # raises before any record is shown, as a whole-wrapper read does
        pos, n = 0, 0
        while pos is not None:
            cols, inner_offsets, pos = inner_columns(data, self.position, pos, chunk, n)
            cols.resume_at = pos
            n += cols.count
            yield self._absolute(cols, inner_offsets, base)

    def key_chunks(self, limit: int, chunk: int = RECORDS_PER_CHUNK) -> Iterator[RecordKeys]:
        """:meth:`column_chunks` as :class:`RecordKeys` (what ``kdump stats`` needs)."""
        for cols in self.column_chunks(limit, chunk):
            yield RecordKeys.of(cols)

    def _wrapper_columns(self, limit: int) -> RecordColumns:
        cols, inner_offsets, _ = inner_columns(self.inner_set(limit), self.position)
        return self.columns_from(cols, inner_offsets, inner_offsets[-1])

    def columns_from(self, cols: RecordColumns, inner_offsets: list[int], last_inner: int) -> RecordColumns:
        """Kafka's offsets and timestamps for inner messages read with their stored ones."""
        return self._absolute(cols, inner_offsets, self._base(last_inner))

    def _base(self, last_inner: int) -> int | None:
        """What magic 1 inner offsets are relative to (None: magic 0, whose inner offsets are absolute)."""
        msg = self.message
        if msg.magic == 0:
            return None
        if msg.offset == 0:
            return 0  # librdkafka wrote wrapper offset 0: Kafka then takes inner offsets as they are
        if msg.offset < last_inner:
            raise FormatError(
                "wrapper-offset-invalid",
                f"wrapper offset {msg.offset} is less than the last inner message offset {last_inner} "
                "and it is not zero",
                position=self.position,
            )
        return L.java_long(msg.offset - last_inner)  # Kafka's absoluteBaseOffset, in Java long arithmetic

    def _absolute(self, cols: RecordColumns, inner_offsets: list[int], base: int | None) -> RecordColumns:
        msg = self.message
        if base is None:
            cols.offsets = inner_offsets
            cols.timestamps = [L.NO_TIMESTAMP] * cols.count
            return cols
        if not base:
            cols.offsets = inner_offsets
        elif inner_offsets and base + min(inner_offsets) >= L.INT64_MIN and base + max(inner_offsets) <= L.INT64_MAX:
            cols.offsets = [base + o for o in inner_offsets]  # the common case: no sum wraps (no call per message)
        else:
            cols.offsets = [_java_sum(base, o) for o in inner_offsets]
        if msg.attributes & L.LEGACY_TIMESTAMP_TYPE_MASK:
            cols.timestamps = [msg.timestamp] * cols.count  # LogAppendTime: the wrapper's time for every record
        return cols

    def inner_set(self, limit: int) -> bytes:
        """The wrapper's inner message set, decompressed (at most ``limit`` bytes)."""
        msg = self.message
        pos0 = self.position
        if not _codec.known(msg.codec_id):
            raise FormatError("codec-invalid", f"unknown compression type id {msg.codec_id}", position=pos0)
        if not _codec.allowed_in(msg.codec_id, msg.magic):
            codec = _codec.CODECS[msg.codec_id]
            raise FormatError("codec-invalid", f"{codec.name} is not allowed in a magic {msg.magic} wrapper "
                                               f"(only in magic {codec.min_magic} batches)",
                              position=pos0)
        if msg.value is None:
            raise FormatError("wrapper-invalid",
                              f"compressed magic {msg.magic} wrapper has a null value "
                              "(no inner messages)", position=pos0)
        try:
            return _codec.decompress(msg.codec_id, msg.value, magic=msg.magic, limit=limit)
        except _codec.DecompressedTooLarge as e:
            raise FormatError("decompressed-too-large", str(e), position=pos0) from None
        except _codec.CodecError as e:
            raise FormatError("decompress-failed", f"failed to decompress the wrapper's inner messages: {e}",
                              position=pos0) from None

    def inner_messages(self, limit: int):
        """The wrapper's inner messages as stored (stored offsets and timestamps), and the error that ended
        them (or None)."""
        data = self.inner_set(limit)
        cols, inner_offsets, _ = inner_columns(data, self.position)
        messages = []
        stop = 0
        for offset, size in zip(inner_offsets, cols.sizes, strict=True):  # the inner messages follow each other
            start, stop = stop + L.LOG_OVERHEAD, stop + size
            messages.append(LegacyMessage(offset, data[start:stop]))
        return messages, cols.error

    def __repr__(self) -> str:
        return (f"LegacyBatch(position={self.position}, offset={self.last_offset}, magic={self.magic}, "
                f"codec={self.codec_id})")


def _java_sum(a: int, b: int) -> int:
    """``a + b`` in Java long arithmetic (both are longs: it wraps only past 2^63-1 or below -2^63)."""
    total = a + b
    return total if L.INT64_MIN <= total <= L.INT64_MAX else L.java_long(total)


def _no_sequence(offset: int) -> int:
    return L.NO_SEQUENCE


def _single(msg: LegacyMessage) -> RecordColumns:
    """An uncompressed top-level message: its own single record, positions into its body."""
    body = msg.body
    cols = RecordColumns(body)
    kpos, klen, vpos, vlen = msg.spans
    cols.count = 1
    cols.offsets = [msg.offset]
    cols.timestamps = [msg.timestamp]
    cols.attributes = [msg.attributes]
    cols.key_pos = [kpos]
    cols.key_len = [klen]
    cols.value_pos = [vpos]
    cols.value_len = [vlen]
    cols.headers = [()]
    cols.sizes = [L.LOG_OVERHEAD + len(body)]
    cols.crcs = [msg.crc]
    cols.magics = [msg.magic]
    cols.valid = [msg.is_valid()]
    return cols


def inner_columns_py(data, pos0: int, start_at: int = 0, max_count: int | None = None, first_index: int = 0):
    """Split a decompressed inner message set: columns with the stored timestamps (offsets not set), the
    stored inner offsets, and where to resume (None: the set ended). The messages follow each other, so
    message ``i`` ends ``sum(cols.sizes[:i + 1])`` bytes after ``start_at``. Raises FormatError when not
    even one message can be read; ``error`` holds what ended the set after some were (``error`` is None
    and the messages end before ``len(data)``: the bytes after them are not a whole entry, where Kafka
    ends the set silently). In chunks: from byte ``start_at``, at most ``max_count`` messages, numbered
    from ``first_index`` in messages. ``pos0`` (the wrapper's position) is the errors' position.

    Compiled twin: ``kdump.format._legacy.inner_columns`` (chosen by :mod:`kdump._backend`)."""
    cols = RecordColumns(data)
    cols.crcs, cols.magics, cols.valid = crcs, magics, valid = [], [], []
    timestamps, attributes, sizes, headers = cols.timestamps, cols.attributes, cols.sizes, cols.headers
    key_pos, key_len, value_pos, value_len = cols.key_pos, cols.key_len, cols.value_pos, cols.value_len
    inner_offsets: list[int] = []
    no_headers = ()
    error = None
    pos = start_at
    end = len(data)
    resume = None
    while end - pos >= L.LOG_OVERHEAD:
        if len(inner_offsets) == max_count:
            resume = pos
            break
        k = first_index + len(inner_offsets)
        offset, size = L.PREFIX.unpack_from(data, pos)
        if size < L.LEGACY_RECORD_OVERHEAD_V0:
            error = FormatError(
                "inner-message-too-small",
                f"inner message {k} (decompressed byte {pos}) declares size {size}; "
                f"the minimum is {L.LEGACY_RECORD_OVERHEAD_V0}",
                position=pos0,
            )
            break
        start = pos + L.LOG_OVERHEAD
        stop = start + size
        if stop > end:
            break  # Kafka ends the inner set silently at a truncated last entry
        try:
            crc, magic, attrs, ts, kpos, klen, vpos, vlen = parse_message(data, start, stop, f"inner message {k}")
        except FormatError as e:
            error = e.at(pos0).detached()  # the columns keep it: not the frames that hold the data
            break
        if attrs & L.LEGACY_CODEC_MASK:
            error = FormatError("inner-compressed", f"inner message {k} is itself compressed "
                                "(inner messages must not be compressed)", position=pos0)
            break
        inner_offsets.append(offset)
        timestamps.append(ts)
        attributes.append(attrs)
        key_pos.append(kpos)
        key_len.append(klen)
        value_pos.append(vpos)
        value_len.append(vlen)
        headers.append(no_headers)
        sizes.append(L.LOG_OVERHEAD + size)
        crcs.append(crc)
        magics.append(magic)
        valid.append(_crc_ok(data, start, stop, crc))
        pos = stop
    if not inner_offsets and start_at == 0:
        # a copy of the error: raising the local one would make a cycle (its traceback holds this frame) that
        # keeps the decompressed inner set alive until the garbage collector runs
        raise error.fresh() if error is not None else FormatError("wrapper-empty", "compressed wrapper holds no "
                                                                  "inner messages", position=pos0)
    cols.count = len(inner_offsets)
    cols.error = error
    return cols, inner_offsets, resume


class LegacyRun:
    """Consecutive uncompressed top-level magic 0/1 messages of a log, read as one :class:`RecordColumns`
    (what a reader that does not need one object per message walks: :meth:`kdump.read.segment.SegmentReader.runs`,
    and the resynchronising walk :meth:`~kdump.read.segment.SegmentReader.events` that every command reads through).

    Each message is its own record, as :class:`LegacyBatch` gives it: ``columns.offsets`` the stored (absolute)
    offsets, ``columns.timestamps`` the stored timestamps, ``crcs``/``magics``/``valid`` per message,
    ``sizes`` the whole entries (prefix included), key and value positions into ``columns.buf``.
    ``position`` is the file position of the first message; message ``i`` starts ``sum(sizes[:i])`` after it.

    ``data``: the bytes read from ``position`` (the run's ``size`` bytes first); ``summary``: the
    :class:`~kdump.format.columns.InnerSummary` of the walk that found the run (:func:`checked_run`: every CRC
    valid), which is all a reader that checks headers and offsets needs. The columns are then only read when
    asked for (:attr:`columns`), so that ``verify`` builds no Python object per message."""

    __slots__ = ("position", "size", "count", "data", "summary", "_columns", "_keys")
    is_compressed = False

    def __init__(self, position: int, size: int, count: int, data, *, columns: RecordColumns | None = None,
                 summary: InnerSummary | None = None):
        self.position = position
        self.size = size  # bytes of the messages, prefixes included
        self.count = count
        self.data = data
        self.summary = summary
        self._columns = columns
        self._keys: RunKeys | None = None

    @property
    def columns(self) -> RecordColumns:
        """The messages' columns (read from :attr:`data` on first use, then kept)."""
        if self._columns is None:
            cols, offsets, _ = inner_columns(self.data, self.position, 0, self.count)
            cols.offsets = offsets
            cols.error = None  # (the walk that found the run ended it before anything it could not read)
            self._columns = cols
        return self._columns

    def keys(self) -> RunKeys:
        """What ``kdump stats`` counts of the messages (:func:`run_keys`: in compiled code when built, no Python
        object per message; kept, as the header numbers and the key counts both read it)."""
        if self._keys is None:
            self._keys = run_keys(self.data, self.position, self.count)
        return self._keys

    def entry_bytes(self) -> bytes:
        """The messages as stored (their entries, one after the other): what a copy of the run writes."""
        return bytes(memoryview(self.data)[:self.size])

    def positions(self) -> list[int]:
        """The file position of every message."""
        at, out = self.position, []
        for size in self.columns.sizes:
            out.append(at)
            at += size
        return out

    @property
    def end(self) -> int:
        return self.position + self.size

    @property
    def base_offset(self) -> int:
        """The first message's offset."""
        first = self.summary.first_offset if self.summary is not None else None  # (a summary of messages has it)
        return self.columns.offsets[0] if first is None else first

    @property
    def last_offset(self) -> int:
        """The last message's offset."""
        last = self.summary.last_offset if self.summary is not None else None
        return self.columns.offsets[-1] if last is None else last

    @property
    def valid(self) -> list[bool]:
        """Each message's CRC check."""
        assert self.columns.valid is not None  # set by the walk that made the run
        return self.columns.valid

    @property
    def magics(self) -> list[int]:
        assert self.columns.magics is not None  # set by the walk that made the run
        return self.columns.magics

    def message_at(self, i: int) -> LegacyBatch:
        """Message ``i`` as the :class:`LegacyBatch` an entry-by-entry walk gives."""
        return self.message_from(sum(self.columns.sizes[:i]))

    def messages(self) -> Iterator[LegacyBatch]:
        """Every message as the :class:`LegacyBatch` an entry-by-entry walk gives."""
        at = 0
        for size in self.columns.sizes:
            yield self.message_from(at)
            at += size

    def message_from(self, at: int) -> LegacyBatch:
        """The message whose entry starts ``at`` bytes into the run, as the :class:`LegacyBatch` an entry-by-entry
        walk gives (its columns not read)."""
        offset, size = L.PREFIX.unpack_from(self.data, at)
        start = at + L.LOG_OVERHEAD
        return LegacyBatch(self.position + at, offset, bytes(memoryview(self.data)[start:start + size]))

    def __repr__(self) -> str:
        return f"LegacyRun(position={self.position}, count={self.count}, size={self.size})"


def legacy_run(data, position: int, max_count: int) -> LegacyRun | None:
    """The uncompressed magic 0/1 messages at the start of ``data`` (bytes of a log from file position
    ``position``) up to the first entry that is not one (a batch, a wrapper, an entry that does not parse or
    does not end inside ``data``), at most ``max_count``; None when the first entry is not one. The messages are
    parsed as :class:`LegacyBatch` parses them (the inner-set walk, :func:`inner_columns`, compiled when built);
    where the run ends, a reader goes on entry by entry. A message whose CRC fails is in the run
    (``valid``): see :func:`checked_run` for runs of intact messages only."""
    try:
        cols, offsets, _ = inner_columns(data, position, 0, max_count)
    except FormatError:
        return None  # the first entry is none: the caller reads it as an entry (and says why it stops)
    if not cols.count:
        return None
    cols.offsets = offsets
    cols.error = None  # what ended the run is for the entry-by-entry walk to report, at its own position
    return LegacyRun(position, sum(cols.sizes), cols.count, data, columns=cols)


def checked_run(data, position: int, max_count: int) -> LegacyRun | None:
    """:func:`legacy_run`'s messages up to the first whose CRC fails (a damaged message is an entry of its own,
    reported where it is), summarized (:func:`inner_summary`, compiled when built: no Python object per
    message); None when the first entry is no intact plain message. What the resynchronising walk reads
    plain messages as."""
    at = L.LEGACY_ATTRIBUTES_AT
    if len(data) > at and (data[L.MAGIC_AT] > 1 or data[at] & L.LEGACY_CODEC_MASK):
        return None  # a batch or a wrapper (the common way a run ends), told without a walk
    try:
        # (what ends the run is for the entry-by-entry walk to report, at its own position: why=False)
        summary = inner_summary(data, position, 1, 0, max_count, 0, False)
    except FormatError:
        return None
    count = summary.count if summary.bad_crc_at < 0 else summary.bad_crc_at
    if not count:
        return None
    if count < summary.count:
        summary = inner_summary(data, position, 1, 0, count, 0, False)
    return LegacyRun(position, summary.end, count, data, summary=summary)


def inner_summary_py(data, pos0: int, magic: int, start_at: int = 0, max_count: int | None = None,
                     first_index: int = 0, why: bool = True) -> InnerSummary:
    """:func:`inner_columns_py`'s walk, summarized for ``verify --deep`` (:class:`InnerSummary`; ``magic``:
    the wrapper's). Raises as it does. Not ``why``: ``error`` is None after some messages were read (the
    caller reads what ended them by itself; the compiled walk then does not spell it). Compiled twin:
    ``kdump.format._legacy.inner_summary``, which builds no Python object per message."""
    cols, inner_offsets, resume = inner_columns_py(data, pos0, start_at, max_count, first_index)
    summary = InnerSummary.of(data, start_at, cols, inner_offsets, resume, magic)
    if not why:
        summary.error = None
    return summary


def run_keys_py(data, pos0: int, count: int) -> RunKeys:
    """The :class:`RunKeys` of the ``count`` plain messages at the start of ``data`` (a :class:`LegacyRun`'s: the
    walk of :func:`inner_columns_py`, which stops after them). Compiled twin: ``kdump.format._legacy.run_keys``
    (the same walk, the digests from the bytes in place)."""
    cols, _, resume = inner_columns_py(data, pos0, 0, count)
    cols.error, cols.resume_at = None, resume  # (the walk that found the run ended it before anything it cannot read)
    keys = RunKeys.of(cols)
    assert isinstance(keys, RunKeys)
    return keys


def _select(name, pure):
    # Chosen at import (the compiled twin when built, see kdump/_backend.py).
    from kdump import _backend
    return _backend.pick(name, pure)


def crc32_py(data) -> int:
    """zlib's CRC-32 (Kafka's legacy message checksum); compiled twin: ``kdump.format._legacy.crc32``."""
    return zlib.crc32(data)


crc32 = _select("crc32", crc32_py)
inner_columns = _select("inner_columns", inner_columns_py)
inner_summary = _select("inner_summary", inner_summary_py)
run_keys = _select("run_keys", run_keys_py)
