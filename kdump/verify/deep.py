"""``--deep`` checks: decompress every batch and check every record against its batch header.

Magic 2 checks run on :class:`~kdump.format.columns.RecordSummary` (a chunk of records walked and checked
by the compiled record decoder, which keeps the offsets' order, the first gap, the timestamps' range and
the first record with attributes, without a Python object per record): no per-record Python work at all.
Control batches, which hold one or a handful of records, have their keys and values decoded.

The rules, with where they come from:

* record count = the header's count, records end exactly at the end of the batch
  (``DefaultRecordBatch.RecordIterator``; the decoder checks it);
* offset deltas strictly increasing, the first >= 0, the last = ``lastOffsetDelta``; compaction
  (``MemoryRecords.filterTo``) keeps the base offset and ``lastOffsetDelta`` of a batch whose records it
  thins out, so gaps and a last record below ``lastOffsetDelta`` are allowed, never the other way;
* CreateTime: max timestamp = the largest record timestamp (``MemoryRecordsBuilder`` and the broker's
  ``LogValidator`` both set it so; compaction rebuilds it from the kept records); no timestamp below -1;
* control batches (spec §3.6): every key a valid control key; COMMIT/ABORT markers alone in their batch,
  which is transactional with a producer id, with a valid EndTxnMarker value; KRaft control records
  (a snapshot's first batch holds several) parse with their schema; unknown types are reported as info;
* magic 0/1 wrappers (spec §3.3, ``LogValidator``): inner messages uncompressed, of the wrapper's magic,
  with valid CRCs and strictly increasing offsets; the wrapper offset is the last inner offset (magic 1
  wrapper offset 0 is librdkafka's, accepted by Kafka: info); CreateTime wrapper timestamp = the largest
  inner timestamp.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from kdump import codec as _codec
from kdump.decode.control import InvalidControl, TxnMarker, UnknownControl, decode_control
from kdump.errors import FormatError
from kdump.format import columns as _columns
from kdump.format import layout as L
from kdump.format import legacy as _legacy
from kdump.report.findings import ERROR, finding_code


class BatchLimit(Protocol):
    @property
    def max_batch_bytes(self) -> int:
        """The most bytes a batch's records may decompress to (--max-batch-bytes)."""


class RecordChecks(Protocol):
    """What the record checks use of the verifier walking the segment (:class:`kdump.verify.walk.SegmentVerifier`
    is one): these four members, nothing private of it."""

    @property
    def options(self) -> BatchLimit:
        """The verify options (:class:`kdump.verify.walk.VerifyOptions`): the decompression limit."""

    @property
    def when(self) -> Callable[[int], str]:
        """How a finding quotes a time (:mod:`kdump.text.times`)."""

    def add(self, code: str, message: str, **where) -> None:
        """A finding about the batch (``where``: its position, offsets, and ``severity`` where the situation decides
        it)."""

    def gap(self, pos: int, after: int, missing: int) -> None:
        """``missing`` offsets absent after offset ``after`` in the batch at byte ``pos`` (compaction)."""


def check_v2(v: RecordChecks, batch) -> int:
    """Deep checks of one CRC-valid magic 2 batch; ``v`` is the SegmentVerifier (findings, gap counts).
    Returns the number of records decoded."""
    count = batch.records_count
    pos = batch.position
    base = batch.base_offset
    lod = batch.last_offset_delta
    where = {"position": pos, "first_offset": base, "last_offset": batch.last_offset}
    if count <= 0:
        # An empty batch (compaction keeps its header) is the header alone: Kafka does not decompress it,
        # so bytes after it would go unread, whatever they hold.
        extra = len(batch.body) - L.V2_BODY_HEAD_SIZE
        if count == 0 and extra > 0:
            v.add("records-remaining", f"the batch declares 0 records, yet {extra} bytes follow its header",
                  **where)
        return 0
    limit = v.options.max_batch_bytes
    # summaries of bounded chunks: memory bounded whatever the count declared, no object per record
    chunks = batch.summary_chunks(limit, _columns.RECORDS_PER_CHUNK)
    try:
        part = next(chunks)
    except FormatError as e:
        code = finding_code(e.code)
        v.add(code, e.message, severity=_decoded_severity(code), **where)
        return 0
    offsets = _OffsetCheck(base)
    if base + lod > L.INT64_MAX:
        # Kafka's reader wraps the last offset (and the records past 2^63-1) to negative offsets, as kdump shows them
        v.add("record-offset-invalid", f"baseOffset {base} + lastOffsetDelta {lod} is past 2^63-1: in Kafka's "
              f"long arithmetic the last offset wraps to {batch.last_offset}", **where)
        offsets.bad = True  # the record offsets wrap with it: one finding says why
    append_time = bool(batch.attributes & L.V2_TIMESTAMP_TYPE_MASK)
    top = low = low_at = None
    nonzero_attributes = None  # (record index, attributes) of the first record with attributes set
    n = 0
    error = None
    while part is not None:
        k = part.count
        if part.error is not None:
            error = part.error
            code = finding_code(error.code)
            v.add(code, f"record {n + k} of {count}: {error.message}", severity=_decoded_severity(code), **where)
        if k:
            offsets.feed(v, part, n, where)
            if not append_time:
                top = part.max_timestamp if top is None else max(top, part.max_timestamp)
                if low is None or part.min_timestamp < low:
                    low, low_at = part.min_timestamp, n + part.min_timestamp_at
            if nonzero_attributes is None and part.attributes_at >= 0:
                nonzero_attributes = (n + part.attributes_at, part.attributes)
        n += k
        part = next(chunks, None)
    if n == 0:
        return 0
    offsets.finish(v, base + lod, where)
    if error is None and top is not None:
        if top != batch.max_timestamp:
            v.add("max-timestamp-mismatch", f"max timestamp {v.when(batch.max_timestamp)} but the largest record "
                  f"timestamp is {v.when(top)}", **where)
        if low is not None and low < -1:  # (set with top)
            v.add("timestamp-invalid", f"record timestamp {low} is below -1 (record {low_at})", **where)
    if nonzero_attributes is not None:
        i, a = nonzero_attributes
        v.add("record-attributes-nonzero", f"record {i} has attributes {a} (Kafka writes 0)", **where)
    if batch.is_control:  # a handful of records: their keys and values are read
        _check_control(v, batch, next(batch.column_chunks(limit, _columns.RECORDS_PER_CHUNK)), where, n)
    return n


class _OffsetCheck:
    """The offset deltas of a batch's records, chunk by chunk (a :class:`RecordSummary` each): strictly
    increasing from the base, the last at most ``lastOffsetDelta``; gaps (left by compaction: allowed) are
    counted and located at the first."""

    def __init__(self, base: int):
        self.base = base
        self.prev = base - 1
        self.n = 0
        self.bad = False
        self.gap_after: int | None = None  # the offset before the first gap

    def feed(self, v: RecordChecks, part, first_index: int, where: dict) -> None:
        if self.bad:
            return
        p = self.prev
        if part.first_offset <= p:
            self._not_increasing(v, first_index, part.first_offset, p, where)
            return
        if part.decreasing_at >= 0:
            off, before = part.decreasing_offsets
            self._not_increasing(v, first_index + part.decreasing_at, off, before, where)
            return
        if self.gap_after is None:
            self.gap_after = p if part.first_offset != p + 1 else part.gap_after
        self.prev, self.n = part.last_offset, self.n + part.count

    def _not_increasing(self, v: RecordChecks, j: int, off: int, prev: int, where: dict) -> None:
        base = self.base
        what = "is negative" if j == 0 else f"does not follow record {j - 1}'s delta {prev - base}"
        v.add("record-offset-invalid", f"record {j}: offset delta {off - base} {what}", **where)
        self.bad = True

    def finish(self, v: RecordChecks, last: int, where: dict) -> None:
        if self.bad:
            return
        if self.prev > last:
            v.add("record-offset-invalid", f"the last record's offset delta {self.prev - self.base} is above the "
                  f"batch's lastOffsetDelta {last - self.base}", **where)
            return
        missing = (last - self.base + 1) - self.n
        if missing:
            v.gap(where["position"], self.prev if self.gap_after is None else self.gap_after, missing)


def _check_control(v: RecordChecks, batch, cols, where: dict, n: int) -> None:
    """``cols``: the first chunk of the batch's records (a control batch holds a handful); ``n``: all of them."""
    markers = 0
    for i in range(cols.count):
        record = decode_control(cols.key(i), cols.value(i))
        if isinstance(record, InvalidControl):
            e = record.error
            if record.type is None:
                v.add("control-key-invalid", f"control record {i}: {e.message}", **where)
            else:
                code = e.code if e.code == "end-txn-marker-invalid" else "control-value-invalid"
                v.add(code, f"control record {i} ({record.type.name}): {e.message}", **where)
            return
        if isinstance(record, TxnMarker):
            markers += 1
        elif isinstance(record, UnknownControl):
            v.add("control-type-unknown", f"control record {i} has type id {record.type_id}, unknown to this kdump",
                  **where)
    if markers and n != 1:
        v.add("control-batch-invalid", f"a transaction marker batch holds exactly one record; this one holds {n}",
              **where)
    elif markers and (not batch.is_transactional or batch.producer_id < 0):
        v.add("control-batch-invalid", f"transaction marker batch is {'' if batch.is_transactional else 'not '}"
              f"transactional with producer id {batch.producer_id} (markers belong to a producer's transaction)",
              **where)


def check_legacy_wrapper(v: RecordChecks, batch) -> tuple[int, int | None]:
    """Deep checks of one CRC-valid compressed magic 0/1 wrapper. Returns (records, first offset or None).

    The inner message set is walked by the reader's own walk (``legacy.inner_columns``, compiled when
    built), in chunks, and checked here for what Kafka's reader forgives: bytes after the last whole inner
    message, inner CRCs, inner magics, offsets that do not increase.
    """
    msg = batch.message
    pos = batch.position
    where = {"position": pos, "first_offset": msg.offset}
    if not _codec.allowed_in(msg.codec_id, msg.magic):
        return 0, None  # codec-invalid, reported with the header
    if msg.value is None:
        v.add("wrapper-invalid", f"compressed magic {msg.magic} wrapper has a null value (no inner messages)",
              **where)
        return 0, None
    limit = v.options.max_batch_bytes
    try:
        data = _codec.decompress(msg.codec_id, msg.value, magic=msg.magic, limit=limit)
    except _codec.DecompressedTooLarge as e:
        v.add("batch-too-large", str(e), severity=ERROR, **where)
        return 0, None
    except _codec.CodecError as e:
        v.add("decompress-failed", f"failed to decompress the wrapper's inner messages: {e}", **where)
        return 0, None
    # Chunk by chunk, keeping counts and the first of each problem (a wrapper may hold millions of
    # messages); the problems are reported in the order magic, CRC, offsets.
    inner = _InnerChecks(msg.magic)
    p = 0  # where the next chunk starts in ``data``
    broken = False
    while True:
        try:
            part = _legacy.inner_summary(data, pos, msg.magic, p, _columns.RECORDS_PER_CHUNK, inner.n)
        except FormatError as e:  # nothing at all could be read
            part, error = None, e
        else:
            error = part.error
            inner.feed(part)
            p = part.end
        if error is not None and error.code != "wrapper-empty":
            v.add(*_inner_error(error, inner.n, data, p), **where)
            broken = True
            break
        if part is None or part.resume is None:
            break
    n = inner.n
    if not broken and p < len(data):
        v.add("inner-trailing-bytes", f"{len(data) - p} bytes after the last whole inner message (decompressed "
              f"byte {p}) are ignored by Kafka's reader", **where)
    if not n:
        if not broken:
            v.add("wrapper-empty", "compressed wrapper holds no inner messages", **where)
        return 0, None
    for code, message in inner.first_problem.items():
        v.add(code, message, **where)
    first_inner, last_inner = inner.first, inner.prev
    low, high = inner.low, inner.high
    # After a broken inner message the rest of the set is unknown: its last offset and largest timestamp
    # cannot be compared with the wrapper's.
    if msg.magic == 0:
        first = first_inner
        if msg.offset != last_inner and not broken:
            v.add("wrapper-offset-invalid", f"wrapper offset {msg.offset} is not its last inner message's offset "
                  f"{last_inner}", **where)
    else:
        if msg.offset == 0 and last_inner != 0:
            v.add("wrapper-offset-zero", f"wrapper offset 0 with inner relative offsets up to {last_inner}; Kafka "
                  "reads them as absolute", **where)
            first = first_inner
        elif msg.offset < last_inner:  # (the inner offsets that were read already say so)
            v.add("wrapper-offset-invalid", f"wrapper offset {msg.offset} is less than the last inner message offset "
                  f"{last_inner} and it is not zero", **where)
            first = None
        else:
            first = msg.offset - last_inner + first_inner
        if low is not None and not broken:
            if low < -1:
                v.add("timestamp-invalid", f"inner message timestamp {low} is below -1", **where)
            if not msg.attributes & L.LEGACY_TIMESTAMP_TYPE_MASK and high != msg.timestamp:
                v.add("max-timestamp-mismatch", f"CreateTime wrapper timestamp {v.when(msg.timestamp)} but the "
                      f"largest inner timestamp is {v.when(high)}", **where)
    return n, first


def _inner_error(error: FormatError, n: int, data, p: int) -> tuple[str, str]:
    """The finding for the walk's error at inner message ``n`` (at byte ``p`` of ``data``)."""
    if error.code == "inner-compressed":
        attributes = data[p + L.LOG_OVERHEAD + L.LEGACY_BODY_ATTRIBUTES_AT]
        return error.code, f"inner message {n} is itself compressed (codec {attributes & L.LEGACY_CODEC_MASK})"
    if error.code == "inner-message-too-small":
        return error.code, error.message
    return "inner-message-invalid", error.message


class _InnerChecks:
    """What verify checks over a wrapper's inner messages, fed chunk by chunk of summaries
    (:class:`~kdump.format.columns.InnerSummary`): the first magic unlike the wrapper's, the first bad CRC,
    the first offset that does not increase; the first and last offsets, the range of magic-1 timestamps."""

    def __init__(self, magic: int):
        self.magic = magic
        self.n = 0
        self.first = self.prev = None
        self.low = self.high = None
        self.first_problem: dict[str, str] = {}

    def feed(self, part) -> None:
        k = part.count
        if not k:
            return
        n, problems = self.n, self.first_problem
        if "inner-magic-mismatch" not in problems and part.magic_mismatch_at >= 0:
            problems["inner-magic-mismatch"] = (f"inner message {n + part.magic_mismatch_at} has magic "
                                                f"{part.mismatched_magic}, its wrapper magic {self.magic}")
        if "inner-crc-mismatch" not in problems and part.bad_crc_at >= 0:
            stored, computed = part.bad_crc
            problems["inner-crc-mismatch"] = (f"inner message {n + part.bad_crc_at}: stored CRC-32 {stored}, "
                                              f"computed {computed}")
        if "inner-offset-invalid" not in problems:
            at = None
            if self.prev is not None and part.first_offset <= self.prev:
                at, off, before = n, part.first_offset, self.prev
            elif part.decreasing_at >= 0:
                at, (off, before) = n + part.decreasing_at, part.decreasing_offsets
            if at is not None:
                problems["inner-offset-invalid"] = f"inner message {at} has offset {off} after {before}"
        if self.first is None:
            self.first = part.first_offset
        self.prev = part.last_offset
        if part.min_timestamp is not None:
            self.low = part.min_timestamp if self.low is None else min(self.low, part.min_timestamp)
            self.high = part.max_timestamp if self.high is None else max(self.high, part.max_timestamp)
        self.n = n + k


def _decoded_severity(code: str) -> str | None:
    """Records that decompress beyond --max-batch-bytes (a decompression bomb) are an error, as ``dump`` fails
    them; every other code keeps its registered severity."""
    return ERROR if code == "batch-too-large" else None
