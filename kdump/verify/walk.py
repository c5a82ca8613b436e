"""Verify one segment file: walk its entries like Kafka, check each, resynchronise after damage.

The walk is :meth:`kdump.read.segment.SegmentReader.events` (Kafka's framing, ``FileLogInputStream.nextBatch``,
spec §3.9, going on after damage), seen through :func:`kdump.read.damage.readable` (batches, and one
:class:`~kdump.read.damage.Damage` per damaged area, described as every command describes it); this module turns
them into findings:

* **good batch**: its header is checked (and with ``deep`` its records, see :mod:`kdump.verify.deep`), its
  offsets against the previous batch and the file name, its producer and leader epoch against the
  partition so far. An entry above ``--max-batch-bytes`` has its CRC and header checked, not its records.
* **bad entry**: framed (its size fits in the file) but unusable: CRC mismatch, unknown magic, smaller
  than its header. One finding.
* **damaged range**: bytes that are no entry (a size field below 14 or past the end, or a bad entry whose
  size field points where no entry begins): the cause, the byte range and the offsets lost between the
  last good batch and the next good one.
* **the stop**: zero padding, or a truncated tail (what a crash leaves), with where Kafka's recovery would
  cut the file.

Memory: one entry at a time (at most ``max_batch_bytes``; a larger one has its CRC computed in 1 MiB
chunks instead of being read whole), findings capped per code, producer table capped
(:mod:`kdump.read.producer_state`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kdump import codec as _codec
from kdump.format import framing as F
from kdump.format import layout as L
from kdump.format.legacy import LegacyBatch, LegacyRun
from kdump.format.v2 import RecordBatch
from kdump.read.damage import BATCH, ENTRY, LARGE, RANGE, TAIL, Damage, foreign_start, readable
from kdump.read.producer_state import ProducerStates
from kdump.read.segment import (
    DEFAULT_MAX_BATCH_BYTES,
    LargeEntry,
    SegmentReader,
    Stop,
    base_offset_from_name,
)
from kdump.report.findings import ERROR, MAX_PER_CODE, FileReport, Findings
from kdump.text.times import time_formatter
from kdump.verify.codes import CODES

if TYPE_CHECKING:
    from kdump.decode.filters import RecordFilter
    from kdump.verify.deep import RecordChecks

INT32_MAX = L.INT32_MAX
MAX_SEGMENT_BYTES = INT32_MAX  # Kafka refuses to load a larger segment (spec §3.9)
_PRODUCER_FINDINGS = frozenset(("producer-epoch-decreasing", "sequence-duplicate"))
PROGRESS_STEP = 16 << 20


@dataclass
class VerifyOptions:
    deep: bool = False
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES  # also bounds a decompressed payload
    max_findings_per_code: int = MAX_PER_CODE  # per file; the rest are counted in one findings-capped finding
    # with deep: only batches this filter may match by their header (RecordFilter.batch_may_match) have their
    # records checked; the structural checks (framing, CRC, header, offsets, producers, leader epochs) still run
    # on every batch, so a filter hides no finding of those
    deep_filter: RecordFilter | None = None
    time_format: str = "epoch"  # how findings quote a record or batch time (kdump.text.times)


@dataclass
class PartitionState:
    """What one segment leaves for the next of the same partition: producers seen, highest leader epoch."""

    producers: ProducerStates = field(default_factory=lambda: ProducerStates(track_sequences=True))
    leader_epoch: int = -1


@dataclass
class SegmentSummary:
    """What partition-level checks need to know about a verified segment."""

    path: str
    base_offset: int | None  # from the file name
    first_offset: int | None = None  # of the good batches
    last_offset: int | None = None


class SegmentVerifier:
    """Verifies one ``.log`` segment (or KRaft ``.checkpoint`` snapshot) and fills a :class:`FileReport`."""

    def __init__(self, path: str, options: VerifyOptions, *, kind: str = "log",
                 state: PartitionState | None = None, progress=None):
        self.path = path
        self.options = options
        self.kind = kind
        self.state = state if state is not None else PartitionState()
        self.progress = progress  # callable(bytes advanced) or None
        self.report = FileReport(path, kind)
        self.findings = Findings(self.report, options.max_findings_per_code)
        self.when = time_formatter(options.time_format)
        self.base_offset = base_offset_from_name(path) if kind == "log" else None
        self.summary = SegmentSummary(path, self.base_offset)
        self.prev_last: int | None = None  # last offset of the previous good batch
        self.prev_position: int | None = None
        self.gap_offsets = 0  # offsets missing between and inside batches (compaction)
        self.gap_places = 0
        self.first_gap: tuple[int, int] | None = None  # (byte position, offset after which it starts)
        self._reported = 0
        if options.deep:
            # imported here: the record checks pull in the control-record schemas, which a shallow run
            # (and its start-up time) does without
            from kdump.verify import deep
            self._deep = deep
        self.after_damage = False  # a bad entry or damaged range came after the last good batch
        self.first_invalid: int | None = None  # where Kafka's recovery would truncate the file

    # --- entry point ---------------------------------------------------------------------------------
    def run(self) -> FileReport:
        try:
            with SegmentReader(self.path, max_batch_bytes=self.options.max_batch_bytes) as reader:
                self._walk(reader)
        except OSError as e:
            self.report.io_error = f"cannot read: {e.strerror or e}"
        self._finish()
        return self.report

    # --- what the record checks of kdump.verify.deep use (its RecordChecks): options, when, add, gap ---------------
    def add(self, code: str, message: str, **where) -> None:
        """A finding; ``where`` may hold ``severity`` for the codes whose severity the situation decides."""
        self.findings.add(code, message, **where)

    # --- the walk: the reader's events turned into findings -----------------------------------------------
    def _walk(self, reader: SegmentReader) -> None:
        end = reader.file_size
        self.report.bytes = end
        self.end = end
        foreign = foreign_start(reader)
        if foreign is not None:  # e.g. text renamed .log: said as such, not as a truncated tail
            self.add(foreign.code, foreign.message, position=0, length=end)
            return
        if self.kind == "log" and self.base_offset is None:
            self.add("base-offset-unknown", "the file name is not <base offset>.log (20 digits), so offsets "
                     "were not checked against the segment's base offset")
        if end > MAX_SEGMENT_BYTES:
            self.add("segment-too-large", f"the file has {end} bytes; Kafka refuses segments above "
                     f"{MAX_SEGMENT_BYTES} bytes", length=end)
        good = self._good
        for item in readable(reader, show_invalid=False):
            if isinstance(item, Damage):
                self._tick(item.start)
                self._damage(item)
            elif not isinstance(item, Stop):  # a good batch: the common case
                if self.progress is not None:
                    self._tick(item.position)
                if type(item) is LegacyRun:
                    self._run(item)
                else:
                    good(item)
            # (the Stop: what it says of the file was said by its tail damage, if anything)

    def _damage(self, d: Damage) -> None:
        """One damaged area (:class:`kdump.read.damage.Damage`) as findings."""
        kind = d.kind
        if kind == LARGE:
            assert d.large is not None
            self._large_entry(d.large)  # not damage to verify: its CRC and header are checked, its records not read
        elif kind in (BATCH, ENTRY):
            self._bad_entry(d)
        elif kind == RANGE:
            if d.entry is not None:  # the range starts at an entry that is no batch: that entry is a finding too
                self._bad_entry(d)
            self._damaged(d)
        elif kind == TAIL:
            self._tail(d)

    def _large_entry(self, e: LargeEntry) -> None:
        """An entry above --max-batch-bytes: CRC streamed in chunks, header checked, records not read."""
        self.report.batches += 1
        batch = e.header
        wanted = self._deep_checks(batch) if batch is not None else self._deep_checks_magic(e.magic)
        if wanted:
            self.add("batch-too-large", f"the entry has {e.size} bytes, above the limit of "
                     f"{self.options.max_batch_bytes} bytes per batch: its CRC is valid but its records were not "
                     "decoded",
                     position=e.position, length=e.size)
        if batch is not None:
            self._header_v2(batch)
            self._offsets(batch, batch.base_offset, batch.last_offset)
            self._producer(batch)
            self.report.records += max(batch.records_count, 0)
        else:
            self._offsets(None, None, e.offset, position=e.position)

    # --- bad entries, damage and the end --------------------------------------------------------------------
    def _bad_entry(self, d: Damage) -> None:
        """A framed entry that is unusable (a CRC mismatch, an unknown magic byte, too small for its format)."""
        e = d.entry
        assert e is not None  # batch, entry and range damages keep the entry they start at
        code = e.error.code if e.error.code in CODES else "message-too-small"
        if code == "crc-mismatch":
            self.report.batches += 1  # a batch, if not a sound one
        where: dict = {"position": e.position, "length": e.size}
        if d.kind == RANGE:  # the damaged range says the rest, and holds the bytes: this finding names no range
            message = f"{e.error.message}; see damaged-range"
            where["length"] = None
        else:
            message = d.describe()
        batch = e.batch
        if batch is not None and batch.magic == 2:
            where.update(first_offset=batch.base_offset, last_offset=batch.last_offset)
        self.add(code, message, **where)
        self._damage_at(e.position)

    def _damage_at(self, pos: int) -> None:
        self.after_damage = True
        if self.first_invalid is None:
            self.first_invalid = pos

    def _damaged(self, d: Damage) -> None:
        """Bytes that are no entry: the cause, the damaged range and the offsets lost in it."""
        start = d.start
        self._damage_at(start)
        # what broke the framing there, its own finding (None: the entry it starts at, or a later part of the area)
        damaged = d.damaged if d.area_start is None else None
        code = damaged.code if damaged is not None else None
        if damaged is not None and code is not None:
            self.add(code, damaged.cause, position=start)
        self.add("damaged-range", d.describe(None if code is None else f"see {code}"), position=start,
                 **d.covered())

    def _recovery_cut(self, pos: int) -> str:
        """Kafka's recovery keeps a log up to its first invalid entry (spec §5.6)."""
        cut = pos if self.first_invalid is None else self.first_invalid
        return f"Kafka's recovery would truncate the file to {cut} bytes"

    def _tail(self, d: Damage) -> None:
        """What the walk stopped at before the end of the file: zero padding, or a truncated tail (what a crash
        leaves), with where Kafka's recovery would cut the file."""
        stop = d.stop
        assert stop is not None  # a tail damage keeps its Stop
        pos, remaining = stop.position, stop.length
        # the read layer's one policy (Damage.fails), as every command: only Kafka's crash-cut tail ("Found N
        # invalid bytes at the end", exit 0) is a warning; a run of 18 or more zeros fails (zero-padding's severity)
        if stop.kind == F.ZEROS:  # 18 or more: fewer are Kafka's trailing bytes (SHORT)
            self.add("zero-padding", f"{remaining} zero bytes from byte {pos} to the end of the file "
                     "(a preallocated or zero-filled tail; Kafka's recovery truncates it)",
                     position=pos, length=remaining)
        elif stop.kind in (F.SHORT, F.TRUNCATED) and not d.fails:  # Kafka's crash-cut tail (Damage.kafka_tail)
            self.add("truncated-tail", f"{d.describe()}; {self._recovery_cut(pos)}", position=pos,
                     length=remaining, first_offset=d.lost_offsets().first)
        elif stop.kind == F.TRUNCATED:  # the file shrank while being read: what was read is not the file
            self.add("truncated-tail", stop.message, severity=ERROR, position=pos)

    # --- good batches -----------------------------------------------------------------------------------
    def judge(self, batch) -> list:
        """The error findings (and a batch-too-large warning) of one readable ``batch`` in the context of the
        batches judged before it (what ``salvage`` keeps or drops). A batch with errors is taken back out of that
        context (the batches after it are judged against the ones kept, and the offsets it would have covered are
        not a compaction gap); one without joins it. The report keeps only this batch's findings: memory stays flat."""
        findings = self.report.findings
        findings.clear()
        saved = (self.prev_last, self.prev_position, self.report.records)
        self._good(batch)
        # a batch whose records cannot be checked (past the decompression limit) does not verify either: salvage
        # drops it as it drops an entry above --max-batch-bytes, rather than write what its own check refuses
        errors = [f for f in findings if f.severity == ERROR or f.code == "batch-too-large"]
        if errors:
            self.prev_last, self.prev_position, self.report.records = saved
            self.after_damage = True
        return errors

    def _good(self, batch) -> None:
        self.report.batches += 1
        if batch.magic == 2:
            if not F.v2_header_fast_ok(batch):
                self._header_v2(batch)
            first = batch.base_offset
            if self._deep_checks(batch):
                n = self._deep.check_v2(self, batch)
            else:
                n = batch.records_count if batch.records_count > 0 else 0
            self.report.records += n
            self._offsets(batch, first, batch.last_offset)
            if batch.records_count == 0 and batch.last_offset_delta >= 0:
                # an empty batch (compaction keeps its header for the producer state): its range is a gap
                self.gap(batch.position, batch.base_offset - 1, batch.last_offset_delta + 1)
            if batch.producer_id >= 0:
                self._producer(batch)
            ple = batch.partition_leader_epoch
            if ple >= 0:
                state = self.state
                if ple < state.leader_epoch:
                    self.add("leader-epoch-decreasing", f"partition leader epoch {ple} is below {state.leader_epoch} "
                             "of an earlier batch", position=batch.position, first_offset=batch.base_offset,
                             last_offset=batch.last_offset)
                else:
                    state.leader_epoch = ple
        else:
            self._header_legacy(batch)
            msg = batch.message
            if msg.codec_id == _codec.NONE:
                first = msg.offset
                n = 1
            elif self._deep_checks(batch):
                n, first = self._deep.check_legacy_wrapper(self, batch)
            else:
                n, first = 0, None  # a wrapper is only opened with --deep
            self.report.records += n
            self._offsets(batch, first, msg.offset, anchor=msg.offset)

    def _run(self, run: LegacyRun) -> None:
        """Intact plain magic 0/1 messages (a :class:`LegacyRun`), checked from the summary of their walk: when no
        header has anything to say (attributes 0, no timestamp below -1) and the offsets follow each other, fit
        the segment's base offset and come after the previous batch's, the run is what :meth:`_good` would make
        of its messages one by one, with the first message's offsets checked as any batch's; otherwise each
        message is checked as its own batch (the same findings, at their own byte positions)."""
        if not self._clean_run(run):
            for message in run.messages():
                self._good(message)
            return
        self._whole_run(run)

    def judge_run(self, run: LegacyRun) -> bool:
        """:meth:`judge` of a run of intact plain magic 0/1 messages whole: True when the run is clean (what
        :meth:`_run` checks whole, where no message has an error) and is now part of the context (the report keeps
        none of its findings); False, with nothing changed, when its messages are to be judged one by one."""
        if not self._clean_run(run):
            return False
        self.report.findings.clear()
        self._whole_run(run)
        return True

    def _clean_run(self, run: LegacyRun) -> bool:
        """Has no header of ``run`` anything to say (attributes 0, no timestamp below -1), and do its offsets follow
        each other, fit the segment's base offset and come after the previous batch's? Then its messages have no
        finding but a gap before the first."""
        s = run.summary
        first, last = run.base_offset, run.last_offset
        prev, base = self.prev_last, self.base_offset
        return not (s is None or s.attributes_at >= 0
                    or (s.min_timestamp is not None and s.min_timestamp < L.NO_TIMESTAMP)
                    or last - first != run.count - 1 or s.decreasing_at >= 0 or (prev is not None and first <= prev)
                    or (base is not None and (first < base or last - base > INT32_MAX)))

    def _whole_run(self, run: LegacyRun) -> None:
        """A clean run (:meth:`_clean_run`) counted and its offsets taken whole."""
        s = run.summary
        assert s is not None  # (a clean run has its summary)
        n = run.count
        first, last = run.base_offset, run.last_offset
        self.report.batches += n
        self.report.records += n
        self._offsets(None, first, first, anchor=first, position=run.position)  # a gap before it, a first offset
        self.prev_last = self.summary.last_offset = last
        self.prev_position = run.position + s.last_start

    def _deep_checks(self, batch) -> bool:
        """Are ``batch``'s records checked (--deep, and the batch not excluded by ``deep_filter``)?"""
        flt = self.options.deep_filter
        return self.options.deep and (flt is None or flt.batch_may_match(batch))

    def _deep_checks_magic(self, magic: int) -> bool:
        """The same for a magic 0/1 entry too large to parse: only its magic is known (so only --magic excludes it)."""
        flt = self.options.deep_filter
        return self.options.deep and (flt is None or flt.magic is None or flt.magic == magic)

    def _header_v2(self, b: RecordBatch) -> None:
        """One finding per rule of the header table (:data:`kdump.format.framing.V2_HEADER_RULES`) it breaks."""
        where = {"position": b.position, "first_offset": b.base_offset, "last_offset": b.last_offset}
        for code, message in F.v2_header_problems(b):
            self.add(code, message, **where)

    def _header_legacy(self, b: LegacyBatch) -> None:
        msg = b.message
        attrs = msg.attributes & 0xFF
        if attrs == 0 and msg.timestamp >= -1:
            return  # the common case: plain message, nothing to say
        where = {"position": b.position, "first_offset": msg.offset}
        if not _codec.allowed_in(msg.codec_id, msg.magic):
            codec = _codec.CODECS[msg.codec_id] if _codec.known(msg.codec_id) else None
            what = "unknown codec" if codec is None else \
                f"{codec.name} is only allowed in magic {codec.min_magic} batches"
            self.add("codec-invalid", f"compression codec id {msg.codec_id} in a magic {msg.magic} message: {what}",
                     **where)
        if attrs & 0xF0:
            self.add("attributes-invalid", f"attributes {attrs:#04x} set bits 4-7, which Kafka never uses", **where)
        if msg.magic == 0 and attrs & L.LEGACY_TIMESTAMP_TYPE_MASK:
            self.add("timestamp-type-invalid", "magic 0 message with the timestamp type bit set (magic 0 has no "
                     "timestamps)", **where)
        if msg.magic == 1:
            if msg.timestamp < -1:
                self.add("timestamp-invalid", f"timestamp {msg.timestamp} is below -1", **where)
            elif msg.timestamp < 0 and attrs & L.LEGACY_TIMESTAMP_TYPE_MASK:
                self.add("timestamp-invalid", "LogAppendTime message without an append time (timestamp -1)",
                         **where)

    def _offsets(self, batch, first: int | None, last: int, *, anchor: int | None = None,
                 position: int | None = None) -> None:
        """Offsets of a good batch against the previous one and the segment's base offset. ``first`` is
        None when unknown (a legacy wrapper not opened); ``anchor`` is the offset compared with the base
        offset from the file name: the first offset, except for a compressed legacy wrapper, where it is
        the wrapper's own (last) offset, as Kafka compares it (``LogAppendInfo.firstOrLastOffsetOfFirstBatch``,
        which avoids decompressing): a segment may be named after a wrapper whose inner offsets start
        below that name."""
        pos = batch.position if batch is not None else position
        assert pos is not None  # callers give a batch or a position
        lo = first if first is not None else last
        prev = self.prev_last
        if prev is not None:
            if lo <= prev:
                self.add("offset-not-increasing", f"offsets {lo}-{last} do not follow the previous batch's last "
                         f"offset {prev} (batch at byte {self.prev_position})", position=pos,
                         first_offset=lo, last_offset=last)
            elif first is not None and first > prev + 1 and not self.after_damage:
                # (offsets lost in a damaged range or a bad batch are reported there, not as a gap)
                self.gap(pos, prev, first - prev - 1)
        self.after_damage = False
        base = self.base_offset
        if base is not None:
            low = lo if anchor is None else anchor
            if low < base:
                self.add("offset-below-segment-base", f"first offset {low} is below the segment's base offset "
                         f"{base} (from its file name)", position=pos, first_offset=lo, last_offset=last)
            if last - base > INT32_MAX:
                self.add("offset-overflow", f"last offset {last} is {last - base} above the segment's base offset "
                         f"{base}; at most {INT32_MAX} fits in Kafka's relative offsets", position=pos,
                         first_offset=lo, last_offset=last)
        summary = self.summary
        if summary.first_offset is None:
            summary.first_offset = lo
        if prev is None or last > prev:
            self.prev_last = last
            summary.last_offset = last
        self.prev_position = pos

    def gap(self, pos: int, after: int, missing: int) -> None:
        self.gap_offsets += missing
        self.gap_places += 1
        if self.first_gap is None:
            self.first_gap = (pos, after)

    def _producer(self, b: RecordBatch) -> None:
        """Producer epochs never go back, and a batch is not written twice (the partition's producer state,
        :class:`kdump.read.producer_state.ProducerStates`, compares a batch with its producer's last 5 batches of its
        epoch, as Kafka's ``ProducerStateEntry.findDuplicateBatch`` does).

        Other sequence irregularities are not reported: compaction removes whole batches (gaps), and
        because sequences wrap at 2^31 a jump back cannot be told from a long gap."""
        for event in self.state.producers.apply(b, self.options.max_batch_bytes):
            if getattr(event, "code", None) in _PRODUCER_FINDINGS:
                self.add(event.code, event.message, position=event.position, first_offset=event.first_offset,
                         last_offset=event.last_offset)

    # --- the end -------------------------------------------------------------------------------------------
    def _tick(self, pos: int) -> None:
        if self.progress is not None and pos - self._reported >= PROGRESS_STEP:
            self.progress(pos - self._reported)
            self._reported = pos

    def _finish(self) -> None:
        if self.progress is not None and self.report.bytes > self._reported:
            self.progress(self.report.bytes - self._reported)
            self._reported = self.report.bytes
        if self.first_gap is not None:  # set by the first gap
            pos, after = self.first_gap
            self.add("offset-gap", f"{self.gap_offsets} offsets missing in {self.gap_places} places, the first "
                     f"missing one is {after + 1} (batch at byte {pos}); normal in a compacted partition",
                     position=pos, first_offset=after + 1)
        self.findings.finish()


if TYPE_CHECKING:
    def _record_checks(v: SegmentVerifier) -> RecordChecks:
        """Never called: mypy checks that the verifier is what kdump.verify.deep's record checks take."""
        return v
