"""``kdump index check``: are a partition's companion files sound, and do they agree with its log?

One :class:`~kdump.report.findings.FileReport` per ``.index``, ``.timeindex``, ``.txnindex``, producer ``.snapshot``
and ``leader-epoch-checkpoint`` (plus one for an expected file that is missing, when that matters). Finding
codes are stable (docs/index.md lists them with their severities).

Shallow checks (``deep=False``) read the companion files whole and the log only where they point:

* layout and Kafka's own sanity checks (``OffsetIndex``/``TimeIndex``/``TransactionIndex.sanityCheck``,
  snapshot version and CRC, checkpoint syntax), with Kafka's messages;
* a preallocated zero tail (a segment that was not closed cleanly; normal for the active segment);
* offsets and positions increasing, timestamps increasing, offsets not below the base offset;
* each offset-index entry points at a batch (one 61-byte read) that starts at or before its offset; each
  time-index entry's offset is found where the offset index says (a header walk of at most one index
  interval); each aborted transaction's ABORT marker is in the log.

Deep checks (``deep=True``) also walk every segment, as Kafka's recovery would: entries must lie on the
chain of batches, each time entry must be the maximum timestamp so far at its offset (with the record
timestamps decoded, as DumpLogSegments compares them), the ``.txnindex`` must equal the aborted
transactions recomputed from the log (producer state carried across segments), the leader epoch checkpoint
must agree with the epochs in the batches, and indexes are compared with what recovery would write (an
``info`` finding: append-time and recovery-time indexing legitimately differ, see docs/index.md).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kdump.errors import FormatError
from kdump.format.index_layout import OFFSET_INDEX_ENTRY_SIZE as OFFSET_ENTRY
from kdump.format.index_layout import TIME_INDEX_ENTRY_SIZE as TIME_ENTRY
from kdump.jobs import Work, WorkUnit, bytes_of, unit_work, work_units
from kdump.read import checkpoints as cps
from kdump.read.damage import LogDamage, foreign_start
from kdump.read.locate import SegmentLocator, segment_end_offset
from kdump.read.logdir import (
    SEGMENT_COMPANIONS,
    SUFFIXES,
    FileKind,
    Partition,
    classify,
    named_base_offset,
    segment_base_offset,
    set_aside_name,
    sibling,
)
from kdump.read.scan import scan
from kdump.read.segment import (
    BatchHeader,
    SegmentReader,
    Stop,
    first_offset,
    header_at,
    read_batch_at,
    walk_headers,
)
from kdump.read.time_index import max_record_timestamp
from kdump.report.codes import CODES
from kdump.report.findings import FileReport, Findings
from kdump.report.outcome import REFUSAL_ERRNOS
from kdump.text.times import time_formatter

if TYPE_CHECKING:
    from kdump.index.rebuild import Recovery

# Entries checked against the log per index file: 4x what Kafka's default segment.index.bytes (10 MiB) holds.
# Bounds memory (the deep checks keep entries in a list); larger files are checked up to here, and said so.
MAX_CHECK_ENTRIES = 4 * 1310720
_KAFKA_VERSIONS_RECORD_OFFSET = ("written by a broker that stored the offset of the record with the max timestamp "
                                 "instead of its batch's last offset (Kafka 3.6.2-3.7.0, KAFKA-16342, undone by "
                                 "KAFKA-16310); time lookups still find the right batch")


# Findings about a companion file's entry that damage in the log explains (the entry names a lost offset or a
# position in damaged bytes): reported as ``entry-in-damaged-log`` (info) when the log's damage covers it.
_KNOCK_ON = frozenset((
    "index-position-not-batch", "index-entry-skips-offsets", "index-offset-past-end", "index-offset-mismatch",
    "index-position-beyond-valid", "timeindex-offset-past-end", "timeindex-offset-not-found",
    "timeindex-batch-unreadable", "timeindex-timestamp-mismatch", "timeindex-not-max-so-far",
    "timeindex-not-first-offset", "timeindex-record-offset", "leader-epoch-differs", "leader-epoch-missing",
    "leader-epoch-beyond-log-end"))


class _AnyDamage:
    """Several logs' :class:`~kdump.read.damage.LogDamage` asked as one (offsets only: positions are per file)."""

    foreign = False

    def __init__(self, logs: list):
        self.logs = logs

    def covers(self, offset=None, position=None):
        return next((d for d in (log.covers(offset) for log in self.logs) if d is not None), None)


class _Report:
    """The shared collector (:class:`Findings`), which takes each finding's severity from the registry
    (:data:`kdump.report.codes.CODES`); a wrapper that says what index check adds: a finding that follows from
    damage in the log beside it is said as that."""

    def __init__(self, path: str, kind: str, size: int = 0, log_damage=None):
        self._findings = Findings(FileReport(path, kind, bytes=size))
        self.report = self._findings.report
        # () -> LogDamage of the segment beside this file (read when first needed), or None
        self.log_damage = log_damage

    def add(self, code: str, message: str, **where) -> None:
        """``where``: the finding's position and offsets, and the facts its severity and wording follow from:
        ``also`` makes a code of two severities take its second (``Code.also``: a zero tail or an incomplete
        time index of a rolled segment, not of the active one); ``damage_offset`` and ``log_position`` place it
        in the log beside this file, to tell a consequence of the log's damage."""
        severity = CODES[code].also if where.pop("also", False) else None
        if code in _KNOCK_ON and self.log_damage is not None:
            damage = self.log_damage()
            area = None
            if damage is not None and damage.foreign:
                area = "the whole log, which is no Kafka log"
            elif damage is not None:
                d = damage.covers(where.pop("damage_offset", where.get("first_offset")),
                                  where.pop("log_position", None))
                area = None if d is None else f"the damaged area of the log at byte {d.start} ({d.code})"
            if area is not None:  # reported once, for the log: this file is not at fault
                code, severity = "entry-in-damaged-log", None
                message = f"{message}: a consequence of {area}, reported there"
        where.pop("log_position", None)
        where.pop("damage_offset", None)
        self._findings.add(code, message, severity=severity, **where)

    def finish(self) -> FileReport:
        return self._findings.finish()


@dataclass
class _Segment:
    base: int
    log_path: str
    next_base: int | None
    is_last: bool
    log_size: int | None = None
    recovery: Recovery | None = None  # deep mode
    recovery_error: str | None = None


@dataclass
class _PartitionFacts:
    """What the deep walk learned about the whole partition."""

    leader_epochs: list = field(default_factory=list)  # (epoch, start offset) as recovery assigns them
    producer_batches: dict = field(default_factory=dict)  # producer id -> set of batch last offsets
    log_start: int | None = None
    log_end: int | None = None


def _foreign_log(path: str) -> FormatError | None:
    """Why the segment file ``path`` is no Kafka log at all (text renamed ``.log``...: the read layer's
    :func:`~kdump.read.damage.foreign_start`), or None (also when it cannot be read: its checks say so)."""
    try:
        with SegmentReader(path) as reader:
            return foreign_start(reader)
    except OSError:
        return None


class PartitionChecker:
    def __init__(self, directory: str, *, deep: bool, index_interval_bytes: int = 4096, progress=None,
                 time_format: str = "epoch", report_logs: bool = True):
        self.directory = os.fspath(directory)
        # a log that is no Kafka log gets a report of its own (``verify``, which reports its logs, says no)
        self.report_logs = report_logs
        self.when = time_formatter(time_format)  # how findings quote a time (epoch ms by default)
        self.progress = progress  # progress(n): n more bytes of log walked (deep checks), or None
        self.deep = deep
        self.index_interval_bytes = index_interval_bytes
        self.partition = Partition(self.directory)
        logs = self.partition.segments
        self.segments = {}
        for i, seg in enumerate(logs):
            self.segments[seg.base_offset] = _Segment(seg.base_offset, seg.log,
                                                      logs[i + 1].base_offset if i + 1 < len(logs) else None,
                                                      i == len(logs) - 1)
        self._facts: _PartitionFacts | None = None
        self._log_end: int | bool | None = False
        self._damage: dict[str, LogDamage | None] = {}  # log path -> its damage, read when a finding needs it

    def _partition_damage(self) -> _AnyDamage:
        """The failing damage of every log of the partition (a leader epoch's first offset may be in any)."""
        return _AnyDamage([d for d in (self._log_damage(s) for s in self.segments.values()) if d is not None])

    def _log_damage(self, seg: _Segment) -> LogDamage | None:
        """The failing damage of ``seg``'s log (the read layer's one judgement), read once, when a finding about a
        companion file's entry may be its consequence; None when the log cannot be read."""
        path = seg.log_path
        if path not in self._damage:
            try:
                self._damage[path] = LogDamage(path)
            except OSError:
                self._damage[path] = None
        return self._damage[path]

    # --- whole directory ------------------------------------------------------------------------------
    def check_all(self) -> list[FileReport]:
        reports = []
        part = self.partition
        for seg in sorted(part.segments + part.orphans, key=lambda s: s.base_offset):
            reports.extend(self._check_segment(seg.base_offset, _present(seg)))
        for offset, path in part.snapshots:
            reports.append(self._guard("snapshot", path, self.check_snapshot, offset))
        lec = part.checkpoints.get(FileKind.LEADER_EPOCH_CHECKPOINT)
        if lec is not None:
            reports.append(self._guard("leader-epoch-checkpoint", lec, self.check_leader_epoch_checkpoint))
        return reports

    @staticmethod
    def _guard(kind: str, path: str, check, *args) -> FileReport:
        """A check that cannot crash the run: an I/O error makes the file unreadable in its report."""
        try:
            return check(path, *args)
        except OSError as e:
            r = FileReport(path, kind)
            r.io_error = f"cannot read: {e.strerror or e}"
            return r
        except FormatError as e:
            found = _Report(path, kind)
            found.add(e.code, e.message, position=e.position)
            return found.finish()

    def check_segment_files(self, base: int) -> list[FileReport]:
        seg = self.partition.segment_at(base)
        if seg is None:
            return []
        reports = self._check_segment(base, _present(seg))
        snap = next((path for offset, path in self.partition.snapshots if offset == base), None)
        if snap is not None:
            reports.append(self._guard("snapshot", snap, self.check_snapshot, base))
        return reports

    def check_snapshot_file(self, path: str, offset: int) -> FileReport:
        """The producer snapshot ``path`` (of ``offset``), named on its own."""
        return self._guard("snapshot", path, self.check_snapshot, offset)

    def _check_segment(self, base: int, present: dict) -> list[FileReport]:
        seg = self.segments.get(base)
        reports = []
        foreign = None if seg is None else _foreign_log(seg.log_path)
        if seg is not None and foreign is not None:  # the read layer's judgement: no companion is at fault
            if self.report_logs:
                r = _Report(seg.log_path, "log", size=bytes_of([seg.log_path]))
                r.add(foreign.code, foreign.message, position=0, length=r.report.bytes)
                reports.append(r.finish())
            return reports
        if seg is not None and self.deep:
            self._recover(seg)
        if "index" in present:
            reports.append(self._guard("index", present["index"], self.check_offset_index, base, seg))
        elif seg is not None:
            r = _Report(sibling(seg.log_path, FileKind.INDEX), "index")
            r.add("index-missing", "the segment has no offset index: Kafka rebuilds it at startup "
                  "(recovery of this segment); `kdump index rebuild` writes the same file")
            reports.append(r.finish())
        if "timeindex" in present:
            reports.append(self._guard("timeindex", present["timeindex"], self.check_time_index, base, seg))
        if "txnindex" in present:
            reports.append(self._guard("txnindex", present["txnindex"], self.check_txn_index, base, seg))
        elif seg is not None and self.deep and seg.recovery is not None and seg.recovery.aborted:
            r = _Report(sibling(seg.log_path, FileKind.TXNINDEX), "txnindex")
            first = seg.recovery.aborted[0]
            # Kafka's LogLoader recovers a segment whose offset index is missing (sanityCheck's
            # NoSuchFileException), and recovery writes the transaction index: only beside an offset index does a
            # missing one stay missing, and consumers reading committed data see the aborted records
            recovered = "index" not in present
            r.add("txnindex-missing",
                  f"the log has {len(seg.recovery.aborted)} aborted transaction(s) "
                  f"(first: producer {first.producer_id}, "
                  f"offsets {first.first_offset}-{first.last_offset}) but there is no transaction index: "
                  + ("Kafka writes it when it recovers the segment at startup (its offset index is missing too)"
                     if recovered else "consumers reading committed data would see the aborted records"),
                  first_offset=first.first_offset, last_offset=first.last_offset, also=recovered)
            reports.append(r.finish())
        return reports

    # --- deep context ---------------------------------------------------------------------------------
    def _recover(self, seg: _Segment) -> _PartitionFacts:
        """Recovery of every segment up to ``seg``, in order, carrying producer state (once per checker)."""
        if self._facts is not None:
            return self._facts
        from kdump.index.rebuild import RebuildError, recover_segment, state_before
        facts = _PartitionFacts()
        bases = sorted(self.segments)
        state = state_before(self.directory, bases[0]) if bases else None
        epoch = None
        for b in bases:
            s = self.segments[b]
            try:
                rec = recover_segment(s.log_path, producer_state=state, leader_epoch=epoch,
                                      index_interval_bytes=self.index_interval_bytes)
            except RebuildError as e:
                s.recovery_error = e.message
                continue
            except OSError as e:
                s.recovery_error = f"cannot read the log: {e.strerror or e}"
                continue
            finally:
                if self.progress is not None:
                    self.progress(bytes_of([s.log_path]))
            s.recovery = rec
            s.log_size = rec.log_size
            facts.leader_epochs.extend(rec.leader_epochs)
            if rec.leader_epochs:
                epoch = rec.leader_epochs[-1][0]
        self._facts = facts
        return facts

    def _segment_log_size(self, seg: _Segment | None) -> int | None:
        if seg is None:
            return None
        if seg.log_size is None:
            try:
                seg.log_size = os.path.getsize(seg.log_path)
            except OSError:
                return None
        return seg.log_size

    def log_end_offset(self) -> int | None:
        """Last offset + 1 of the last segment (a header walk from its last offset-index entry)."""
        if self._log_end is not False:
            return self._log_end
        self._log_end = None
        if not self.segments:
            return None
        seg = self.segments[max(self.segments)]
        self._log_end = segment_end_offset(seg.log_path, seg.base)
        return self._log_end

    def _offset_bound(self, seg: _Segment | None) -> float:
        """The first offset past ``seg``: the next segment's base offset, or the log end offset of the last segment
        (infinite when unknown): an index entry at or above it cannot name a batch of this segment."""
        if seg is None:
            return float("inf")
        if seg.next_base is not None:
            return seg.next_base
        end = self.log_end_offset() if seg.is_last else None
        return float("inf") if end is None else end

    # --- .index -----------------------------------------------------------------------------------------
    def check_offset_index(self, path: str, base: int, seg: _Segment | None) -> FileReport:
        from kdump.read.offset_index import OffsetIndex
        return self._check_index_file(path, "index", OffsetIndex, self._offset_index, base, seg)

    def _check_index_file(self, path: str, kind: str, index_class, check, base: int,
                          seg: _Segment | None) -> FileReport:
        """Open an offset or time index, run ``check`` on it; damage becomes a finding, not an exception."""
        r = _Report(path, kind, log_damage=None if seg is None else lambda: self._log_damage(seg))
        try:
            idx = index_class(path, base_offset=base)
        except OSError as e:
            r.report.io_error = f"cannot read: {e.strerror or e}"
            return r.report
        with idx:
            r.report.bytes = idx.length
            try:
                check(idx, r, base, seg)
            except FormatError as e:
                r.add(e.code, e.message, position=e.position)
        return r.finish()

    def _zero_tail(self, idx, r: _Report, seg: _Segment | None, kind: str) -> int:
        """Number of entries to check; reports a preallocated zero tail (and a file too large to check whole)."""
        n = self._zero_tail_count(idx, r, seg, kind)
        if n > MAX_CHECK_ENTRIES:
            r.add(f"{kind}-too-large",
                  f"{n} entries, more than kdump checks against the log ({MAX_CHECK_ENTRIES}, four times what Kafka's "
                  "default segment.index.bytes holds); the first ones were checked", position=MAX_CHECK_ENTRIES
                  * idx.entry_size)
            return MAX_CHECK_ENTRIES
        return n

    def _zero_tail_count(self, idx, r: _Report, seg: _Segment | None, kind: str) -> int:
        valid = idx.zero_tail_start()
        if valid < idx.entries:
            active = seg is not None and seg.is_last
            extra = ""
            if kind == "timeindex":
                extra = (" Kafka's index sanity check (DumpLogSegments) fails on it (the zero timestamp of the last "
                         "slot).")
            r.add(f"{kind}-zero-tail",
                  f"{idx.entries - valid} preallocated zero entries "
                  + (f"after the {valid} real ones " if valid else "and no real one yet ")
                  + f"({(idx.entries - valid) * idx.entry_size} bytes): the segment was "
                  + ("active, or the broker did not shut down cleanly" if active else
                     "not closed cleanly (a rolled segment's index is trimmed); Kafka's recovery trims it") + "."
                  + extra, position=valid * idx.entry_size, length=(idx.entries - valid) * idx.entry_size,
                  also=not active)
            return valid
        return idx.entries

    def _offset_index(self, idx, r: _Report, base: int, seg: _Segment | None) -> None:
        if idx.partial_bytes:
            r.add("index-length-invalid",
                  f"{idx.partial_bytes} bytes at the end are not a whole {OFFSET_ENTRY}-byte entry (a torn write); "
                  f"Kafka's sanity check: Index file {os.path.abspath(idx.path)} is corrupt, found {idx.length} "
                  f"bytes which is neither positive nor a multiple of {OFFSET_ENTRY}",
                  position=idx.entries * OFFSET_ENTRY, length=idx.partial_bytes)
        n = self._zero_tail(idx, r, seg, "index")
        last = idx.entry(n - 1).offset if n else base
        if n and last < base:
            r.add("index-last-offset-below-base",
                  f"Kafka's sanity check: Corrupt index found, index file {os.path.abspath(idx.path)} "
                  f"has non-zero size but the last offset is {last} which is less than the base offset {base}",
                  position=(n - 1) * OFFSET_ENTRY)
        if seg is None:
            r.add("index-log-missing", f"no segment {_log_name(idx.path)} beside this index (an orphan: Kafka "
                  "deletes it at startup)")
        log_size = self._segment_log_size(seg)
        fd = None
        if seg is not None:
            try:
                fd = os.open(seg.log_path, os.O_RDONLY)
            except OSError as err:
                r.add("index-log-unreadable", f"cannot read {seg.log_path}: {err.strerror or err}")
            else:
                if log_size is None:  # the size could not be read before the open
                    log_size = os.fstat(fd).st_size
        entries = []  # (slot, offset, position) of plausible entries, for the deep chain check
        try:
            prev = None
            for i, e in idx.iter_entries(0, n):
                where = dict(position=i * OFFSET_ENTRY, first_offset=e.offset)
                if e.offset < base:
                    r.add("index-offset-below-base",
                          f"entry {i}: offset {e.offset} is below the base offset {base} (relative offset "
                          f"{e.offset - base})", **where)
                if prev is not None:
                    if e.offset <= prev.offset:
                        r.add("index-offset-not-increasing",
                              f"entry {i}: offset {e.offset} is not above the previous entry's {prev.offset} "
                              "(binary search over the index gives wrong answers)", **where)
                    if e.position <= prev.position:
                        r.add("index-position-not-increasing",
                              f"entry {i}: position {e.position} is not above the previous entry's {prev.position}",
                              **where)
                prev = e
                if fd is None or log_size is None:
                    continue
                if e.position >= log_size:
                    r.add("index-position-past-end",
                          f"entry {i}: offset {e.offset} points at position {e.position}, at or past the end of the "
                          f"log ({log_size} bytes)", **where)
                    continue
                h = header_at(fd, e.position, log_size)
                if isinstance(h, Stop):
                    r.add("index-position-not-batch",
                          f"entry {i}: offset {e.offset} points at position {e.position}, where no batch starts: "
                          f"{h.message}", log_position=e.position, **where)
                    continue
                first = h.base_offset
                if first is None and h.last_offset > e.offset:
                    first = first_offset(fd, h)
                if first is not None and first > e.offset:
                    r.add("index-entry-skips-offsets",
                          f"entry {i}: offset {e.offset} points at a batch starting at offset {first}: a lookup of "
                          f"offsets {e.offset}-{first - 1} would start after them", **where)
                elif h.last_offset < e.offset and e.offset >= self._offset_bound(seg):
                    r.add("index-offset-past-end",
                          f"entry {i}: offset {e.offset} lies past the segment's last offset (below "
                          f"{self._offset_bound(seg)}): no batch of this segment holds it, so a lookup of the offsets "
                          f"after {h.last_offset} starts at the wrong place", **where)
                elif h.last_offset != e.offset:
                    why = (" (the entry names the last offset of a later batch: one entry for an append of several "
                           "batches, as followers before Kafka 4.0 wrote them)" if h.last_offset < e.offset else
                           " (the offset lies inside the batch)")
                    r.add("index-offset-mismatch",
                          f"entry {i}: offset {e.offset}, but the batch at position {e.position} ends at offset "
                          f"{h.last_offset}{why}; DumpLogSegments reports this as a mismatch", **where)
                entries.append((i, e.offset, e.position))
            if fd is not None and log_size is not None and self.deep and entries:
                self._offset_chain(fd, log_size, entries, r)
        finally:
            if fd is not None:
                os.close(fd)
        if self.deep and seg is not None:
            self._compare_recovery(idx, n, r, seg, "index")

    def _offset_chain(self, fd: int, log_size: int, entries: list, r: _Report) -> None:
        """Deep: every entry's position must be a batch boundary of the walk from the start of the log."""
        wanted = sorted(entries, key=lambda t: t[2])
        k = 0
        for h in walk_headers(fd, 0, log_size):
            pos = h.position
            while k < len(wanted) and wanted[k][2] < pos:
                i, off, p = wanted[k]
                r.add("index-position-not-batch",
                      f"entry {i}: position {p} is inside a batch of the log (not a batch boundary)",
                      position=i * OFFSET_ENTRY, first_offset=off)
                k += 1
            if isinstance(h, Stop):
                break
            while k < len(wanted) and wanted[k][2] == pos:
                k += 1
        for i, off, p in wanted[k:]:
            r.add("index-position-beyond-valid",
                  f"entry {i}: position {p} lies after where the log stops being readable (Kafka's recovery would "
                  "drop it)", position=i * OFFSET_ENTRY, first_offset=off)

    def _compare_recovery(self, idx, n: int, r: _Report, seg: _Segment, kind: str) -> None:
        if seg.recovery is None:
            if seg.recovery_error:
                r.add(f"{kind}-recovery-fails", f"Kafka's recovery of this segment would fail: "
                      f"{seg.recovery_error}")
            return
        rec = seg.recovery
        ours = [e for _, e in idx.iter_entries(0, n)]
        theirs = rec.offset_entries() if kind == "index" else rec.time_entries()
        if ours == theirs:
            return
        k = next((j for j, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs)))
        def shown(entries) -> str:
            if k >= len(entries):
                return "nothing"
            if kind == "index":
                return str(tuple(entries[k]))
            return f"(timestamp {self.when(entries[k].timestamp)}, offset {entries[k].offset})"
        at = f"first difference at entry {k}: here {shown(ours)}, recovery {shown(theirs)}"
        r.add(f"{kind}-differs-from-recovery",
              f"{len(ours)} entries, Kafka's recovery (index.interval.bytes={rec.index_interval_bytes}) would write "
              f"{len(theirs)}; {at}. Normal for indexes written at append time by brokers before Kafka 4.0, by "
              "followers, or across broker restarts (docs/index.md)", position=k * idx.entry_size)

    # --- .timeindex ---------------------------------------------------------------------------------
    def check_time_index(self, path: str, base: int, seg: _Segment | None) -> FileReport:
        from kdump.read.time_index import TimeIndex
        return self._check_index_file(path, "timeindex", TimeIndex, self._time_index, base, seg)

    def _time_index(self, tidx, r: _Report, base: int, seg: _Segment | None) -> None:
        abs_path = os.path.abspath(tidx.path)
        if tidx.partial_bytes:
            r.add("timeindex-length-invalid",
                  f"{tidx.partial_bytes} bytes at the end are not a whole {TIME_ENTRY}-byte entry; Kafka's sanity "
                  f"check: Time index file {abs_path} is corrupt, found {tidx.length} bytes which is neither "
                  f"positive nor a multiple of {TIME_ENTRY}", position=tidx.entries * TIME_ENTRY,
                  length=tidx.partial_bytes)
        n = self._zero_tail(tidx, r, seg, "timeindex")
        entries = [e for _, e in tidx.iter_entries(0, n)]
        if entries:
            first, last = entries[0], entries[-1]
            if last.timestamp < first.timestamp:
                r.add("timeindex-sanity-timestamp",
                      f"Kafka's sanity check: Corrupt time index found, time index file ({abs_path}) has non-zero size "
                      f"but the last timestamp is {last.timestamp} which is less than the first timestamp "
                      f"{first.timestamp}", position=(n - 1) * TIME_ENTRY)
            if last.offset < base:
                r.add("timeindex-last-offset-below-base",
                      f"Kafka's sanity check: Corrupt time index found, time index file ({abs_path}) has non-zero size "
                      f"but the last offset is {last.offset} which is less than the first offset {base}",
                      position=(n - 1) * TIME_ENTRY)
        prev = None
        for i, e in enumerate(entries):
            where = dict(position=i * TIME_ENTRY, first_offset=e.offset)
            if e.offset < base:
                r.add("timeindex-offset-below-base", f"entry {i}: offset {e.offset} is below the base offset "
                      f"{base}", **where)
            if prev is not None:
                if e.timestamp < prev.timestamp:
                    r.add("timeindex-timestamp-decreasing",
                          f"entry {i}: timestamp {self.when(e.timestamp)} is below the previous entry's "
                          f"{self.when(prev.timestamp)} (time lookups give wrong answers)", **where)
                elif e.timestamp == prev.timestamp:
                    r.add("timeindex-timestamp-repeated",
                          f"entry {i}: timestamp {self.when(e.timestamp)} repeats the previous entry's (Kafka only "
                          "appends a larger one)", **where)
                if e.offset < prev.offset:
                    r.add("timeindex-offset-decreasing",
                          f"entry {i}: offset {e.offset} is below the previous entry's {prev.offset}", **where)
                elif e.offset == prev.offset:
                    r.add("timeindex-offset-repeated",
                          f"entry {i}: offset {e.offset} repeats the previous entry's", **where)
            prev = e
        if seg is None:
            r.add("timeindex-log-missing",
                  f"no segment {_log_name(tidx.path)} beside this time index (an orphan)")
            return
        if not entries:
            if self.deep and seg.recovery is not None and seg.recovery.time_index:
                r.add("timeindex-empty",
                      "the time index is empty but the log has timestamps: time lookups fall back to the segment "
                      "start (Kafka recreates an empty one when it is missing)", also=not seg.is_last)
            return
        self._time_against_log(tidx, entries, r, base, seg)
        if self.deep:
            self._compare_recovery(tidx, n, r, seg, "timeindex")

    def _time_against_log(self, tidx, entries, r: _Report, base: int, seg: _Segment) -> None:
        log_size = self._segment_log_size(seg)
        try:
            # Each offset-index entry is judged once, against its own offset; CRCs are the log checks' business.
            loc = SegmentLocator(seg.log_path, base_offset=base, verify_crc=False, strict_entries=True)
        except OSError as err:
            r.add("timeindex-log-unreadable", f"cannot read {seg.log_path}: {err.strerror or err}")
            return
        with loc:
            if log_size is None:  # the size could not be read before the open
                log_size = loc.size
            if self.deep:
                self._time_deep(loc.fd, log_size, entries, r, seg)
                return
            for i, e in enumerate(entries):
                where = dict(position=i * TIME_ENTRY, first_offset=e.offset)
                start = loc.index_start(e.offset)
                if start is None:
                    # After one misleading entry the index is not used again for this file (its own report says
                    # what is wrong with it): findings about the time index must come from the log.
                    loc.distrust_index()
                    start = 0
                found = loc.walk.reaching(e.offset, start)
                if not isinstance(found, BatchHeader) and start:  # the index led past the batches: ask the log
                    loc.distrust_index()
                    found = loc.walk.reaching(e.offset, 0)
                self._time_entry_vs_batch(loc.fd, i, e, found if isinstance(found, BatchHeader) else None, r, where,
                                          decode=False)

    def _time_entry_vs_batch(self, fd, i, e, found: BatchHeader | None, r: _Report, where: dict, *,
                             decode: bool) -> None:
        if found is None:
            r.add("timeindex-offset-past-end",
                  f"entry {i}: offset {e.offset} is beyond the last batch of the log", **where)
            return
        first = found.base_offset if found.base_offset is not None else first_offset(fd, found)
        if found.last_offset != e.offset:
            if first is not None and first <= e.offset and found.max_timestamp == e.timestamp:
                r.add("timeindex-record-offset",
                      f"entry {i}: offset {e.offset} lies inside the batch {first}-{found.last_offset} (at byte "
                      f"{found.position}) whose max timestamp it names: {_KAFKA_VERSIONS_RECORD_OFFSET}; "
                      "DumpLogSegments reports it as not found", **where)
            else:
                r.add("timeindex-offset-not-found",
                      f"entry {i}: no batch ends at offset {e.offset} (the next batch ends at {found.last_offset}, "
                      f"at byte {found.position})", **where)
            return
        ts = found.max_timestamp
        what = "max timestamp"
        if decode:
            try:
                ts = max_record_timestamp(read_batch_at(fd, found), 256 * 1024 * 1024)
                what = "largest record timestamp"
            except FormatError as err:
                r.add("timeindex-batch-unreadable",
                      f"entry {i}: the batch at byte {found.position} cannot be decoded: {err.message}", **where)
                return
        if ts != e.timestamp:
            r.add("timeindex-timestamp-mismatch",
                  f"entry {i}: timestamp {self.when(e.timestamp)}, but the {what} of the batch ending at offset "
                  f"{e.offset} (at byte {found.position}) is {self.when(ts)}", **where)

    def _time_deep(self, fd: int, log_size: int, entries, r: _Report, seg: _Segment) -> None:
        """One header walk: each entry against the running max timestamp, as recovery builds it."""
        k = 0
        running = -1
        for h in walk_headers(fd, 0, log_size):
            if isinstance(h, Stop):
                break
            before = running
            if h.max_timestamp > running:
                running = h.max_timestamp
            first = h.base_offset
            while k < len(entries) and entries[k].offset <= h.last_offset:
                e = entries[k]
                where = dict(position=k * TIME_ENTRY, first_offset=e.offset)
                if first is None:
                    first = first_offset(fd, h)
                if first is not None and e.offset < first:
                    r.add("timeindex-offset-not-found",
                          f"entry {k}: offset {e.offset} is not in the log (the next batch starts at {first})", **where)
                else:
                    self._time_entry_vs_batch(fd, k, e, h, r, where, decode=True)
                    if running != e.timestamp:
                        r.add("timeindex-not-max-so-far",
                              f"entry {k}: timestamp {self.when(e.timestamp)}, but the largest batch timestamp up to "
                              f"offset {e.offset} is {self.when(running)}: a time lookup could skip records", **where)
                    elif before >= e.timestamp:
                        r.add("timeindex-not-first-offset",
                              f"entry {k}: timestamp {self.when(e.timestamp)} was already reached before offset "
                              f"{e.offset}", **where)
                k += 1
        for j in range(k, len(entries)):
            r.add("timeindex-offset-past-end",
                  f"entry {j}: offset {entries[j].offset} is beyond the last readable batch of the log",
                  position=j * TIME_ENTRY, first_offset=entries[j].offset)
        if entries and running > entries[-1].timestamp:
            r.add("timeindex-incomplete",
                  f"the last entry's timestamp {self.when(entries[-1].timestamp)} is below the segment's largest "
                  f"batch timestamp {self.when(running)}: the segment was not closed cleanly (a clean close or "
                  "recovery appends it)"
                  + ("" if seg.is_last else "; a time lookup between the two skips this segment"), also=not seg.is_last)

    # --- .txnindex --------------------------------------------------------------------------------------
    def check_txn_index(self, path: str, base: int, seg: _Segment | None) -> FileReport:
        from kdump.read.txn_index import CURRENT_VERSION, TxnIndexFile

        r = _Report(path, "txnindex")
        try:
            f = TxnIndexFile(path)
        except OSError as e:
            r.report.io_error = f"cannot read: {e.strerror or e}"
            return r.report
        abs_path = os.path.abspath(path)
        txns = []
        with f:
            r.report.bytes = f.length
            if f.partial_bytes:
                r.add("txnindex-partial-entry",
                      f"{f.partial_bytes} bytes at the end are not a whole 34-byte entry (Kafka ignores them)",
                      position=f.count * 34, length=f.partial_bytes)
            prev = None
            for pos, t in f.entries():
                where = dict(position=pos, first_offset=t.first_offset, last_offset=t.last_offset)
                if t.version > CURRENT_VERSION:
                    r.add("txnindex-version",
                          f"Unexpected aborted transaction version {t.version} in transaction index {abs_path}, "
                          f"current version is {CURRENT_VERSION} (Kafka cannot read this file past here)", **where)
                    break
                txns.append((pos, t))
                if t.last_offset < base:
                    r.add("txnindex-sanity",
                          f"Kafka's sanity check: Last offset of aborted transaction {t.kafka_repr()} in index "
                          f"{abs_path} is less than start offset {base}", **where)
                if seg is not None and seg.next_base is not None and t.last_offset >= seg.next_base:
                    r.add("txnindex-outside-segment",
                          f"the ABORT marker offset {t.last_offset} belongs to a later segment (from "
                          f"{seg.next_base})", **where)
                if t.first_offset > t.last_offset:
                    r.add("txnindex-first-after-last",
                          f"first offset {t.first_offset} is after the marker offset {t.last_offset}", **where)
                if t.last_stable_offset > t.last_offset + 1:
                    r.add("txnindex-lso-invalid",
                          f"last stable offset {t.last_stable_offset} is above the marker offset + 1 "
                          f"({t.last_offset + 1})", **where)
                if prev is not None and t.last_offset <= prev.last_offset:
                    r.add("txnindex-not-increasing",
                          f"marker offset {t.last_offset} is not above the previous entry's {prev.last_offset} (Kafka "
                          "appends them in increasing order)", **where)
                prev = t
        if seg is None:
            r.add("txnindex-log-missing", f"no segment {_log_name(path)} beside this transaction index")
            return r.finish()
        if self.deep:
            self._txn_deep(txns, r, seg)
        else:
            self._txn_markers(txns, r, seg)
        return r.finish()

    def _txn_markers(self, txns, r: _Report, seg: _Segment) -> None:
        try:
            loc = SegmentLocator(seg.log_path)
        except OSError as e:
            r.add("txnindex-log-unreadable", f"cannot read {seg.log_path}: {e.strerror or e}")
            return
        with loc:
            for pos, t in txns:
                where = dict(position=pos, first_offset=t.first_offset, last_offset=t.last_offset)
                h = loc.locate_offset(t.last_offset).batch
                if h is None or h.base_offset != t.last_offset or not h.is_control:
                    r.add("txnindex-marker-missing",
                          f"no control batch at offset {t.last_offset} in the log, where this entry puts the ABORT "
                          "marker", **where)
                elif h.producer_id != t.producer_id:
                    r.add("txnindex-marker-missing",
                          f"the control batch at offset {t.last_offset} belongs to producer {h.producer_id}, not "
                          f"{t.producer_id}", **where)

    def _txn_deep(self, txns, r: _Report, seg: _Segment) -> None:
        if seg.recovery is None:
            if seg.recovery_error:
                r.add("txnindex-recovery-fails", f"Kafka's recovery of this segment would fail: "
                      f"{seg.recovery_error}")
            return
        expected = seg.recovery.aborted
        ours = [t for _, t in txns]
        exp_by_last = {t.last_offset: t for t in expected}
        ours_by_last = {t.last_offset: (pos, t) for pos, t in txns}
        for pos, t in txns:
            e = exp_by_last.get(t.last_offset)
            where = dict(position=pos, first_offset=t.first_offset, last_offset=t.last_offset)
            if e is None:
                r.add("txnindex-extra-entry",
                      f"the log has no aborted transaction ending at offset {t.last_offset} (producer "
                      f"{t.producer_id}): consumers reading committed data would skip committed records", **where)
            elif (e.producer_id, e.first_offset, e.last_stable_offset) != (t.producer_id, t.first_offset,
                                                                          t.last_stable_offset):
                r.add("txnindex-entry-differs",
                      f"entry {t.kafka_repr()}; recomputed from the log: {e.kafka_repr()}", **where)
        for e in expected:
            if e.last_offset not in ours_by_last:
                r.add("txnindex-missing-entry",
                      f"aborted transaction of producer {e.producer_id} (offsets {e.first_offset}-{e.last_offset}) is "
                      "not in the index: consumers reading committed data would see its records",
                      first_offset=e.first_offset, last_offset=e.last_offset)
        del ours

    # --- .snapshot ----------------------------------------------------------------------------------------
    def check_snapshot(self, path: str, offset: int) -> FileReport:
        from kdump.read.snapshot import read_snapshot

        r = _Report(path, "snapshot")
        try:
            snap = read_snapshot(path)
        except OSError as err:
            r.report.io_error = f"cannot read: {err.strerror or err}"
            return r.report
        r.report.bytes = snap.size
        if snap.error is not None:
            assert snap.error_code is not None  # read_snapshot sets both
            r.add(snap.error_code, snap.error + " (Kafka deletes the snapshot and rebuilds producer state "
                  "from the log)", position=snap.error_position)
            return r.finish()
        if snap.trailing_bytes:
            r.add("snapshot-trailing-bytes",
                  f"{snap.trailing_bytes} bytes after the {len(snap.entries)} entries (Kafka ignores them; the CRC "
                  "covers them)", position=snap.size - snap.trailing_bytes, length=snap.trailing_bytes)
        seen: dict[int, int] = {}  # producer id -> position of its entry
        for e in snap.entries:
            where = dict(position=e.position)
            if e.producer_id in seen:
                r.add("snapshot-duplicate-producer",
                      f"producer {e.producer_id} appears twice (entries at bytes {seen[e.producer_id]} and "
                      f"{e.position}); Kafka keeps the last", **where)
            seen[e.producer_id] = e.position
            if e.last_offset >= offset:
                r.add("snapshot-entry-after-offset",
                      f"producer {e.producer_id}: last offset {e.last_offset} is not below the snapshot's offset "
                      f"{offset} (a snapshot covers the offsets before its name)", first_offset=e.last_offset, **where)
            if e.current_txn_first_offset >= offset:
                r.add("snapshot-entry-after-offset",
                      f"producer {e.producer_id}: open transaction from offset {e.current_txn_first_offset}, not "
                      f"below the snapshot's offset {offset}", first_offset=e.current_txn_first_offset, **where)
        if self.segments:
            end = self.log_end_offset()
            if end is not None and offset > end:
                r.add("snapshot-beyond-log-end",
                      f"the snapshot's offset {offset} is above the log end offset {end}: Kafka deletes it when "
                      "loading the log")
        return r.finish()

    # --- leader-epoch-checkpoint ----------------------------------------------------------------------------
    def check_leader_epoch_checkpoint(self, path: str) -> FileReport:
        r = _Report(path, "leader-epoch-checkpoint", log_damage=self._partition_damage)
        try:
            r.report.bytes = os.path.getsize(path)
            cp = cps.parse_any(path, kind="leader-epoch-checkpoint")
        except (OSError, ValueError) as e:
            r.report.io_error = f"cannot read: {getattr(e, 'strerror', None) or e}"
            return r.report
        for p in cp.problems:
            r.add(p.code, (f"line {p.line}: " if p.line else "") + p.message, position=p.position)
        prev = None
        for (epoch, start), (line, pos) in zip(cp.entries, cp.entry_lines, strict=True):
            if epoch < 0 or start < 0:
                r.add("leader-epoch-negative", f"line {line}: epoch {epoch} start offset {start}: negative",
                      position=pos)
            if prev is not None and (epoch <= prev[0] or start < prev[1]):
                r.add("leader-epoch-not-increasing",
                      f"line {line}: epoch {epoch} from offset {start} does not follow epoch {prev[0]} from offset "
                      f"{prev[1]} (epochs must increase, start offsets must not decrease)", position=pos)
            prev = (epoch, start)
        if not self.segments:
            return r.finish()
        end = self.log_end_offset()
        for (epoch, start), (line, pos) in zip(cp.entries, cp.entry_lines, strict=True):
            if end is not None and start > end:
                r.add("leader-epoch-beyond-log-end",
                      f"line {line}: epoch {epoch} starts at offset {start}, above the log end offset {end}",
                      position=pos)
        if self.deep and not cp.problems:
            bases = sorted(self.segments)
            facts = self._recover(self.segments[bases[0]])
            in_file = dict(cp.entries)
            for epoch, start in facts.leader_epochs:
                if start < bases[0]:
                    continue
                if epoch not in in_file:
                    r.add("leader-epoch-missing",
                          f"the log has batches of leader epoch {epoch} from offset {start}, which the checkpoint does "
                          "not list", first_offset=start)
                elif in_file[epoch] != start and in_file[epoch] >= bases[0]:
                    r.add("leader-epoch-differs",
                          f"epoch {epoch}: the checkpoint says it starts at offset {in_file[epoch]}, "
                          f"its first batch in the log is at offset {start}", first_offset=start,
                          damage_offset=in_file[epoch])
        return r.finish()


# --- entry points -------------------------------------------------------------------------------------------
def check_partition_companions(directory: str, *, deep: bool, index_interval_bytes: int = 4096,
                               progress=None, time_format: str = "epoch", report_logs: bool = True
                               ) -> list[FileReport]:
    """One FileReport per .index/.timeindex/.txnindex/.snapshot/leader-epoch-checkpoint file of a partition
    directory (and one for a missing .index, or a missing .txnindex that deep checks find needed): Kafka's
    sanity checks, layout, and consistency with the logs (see the module docstring for shallow vs deep).
    A segment whose log is no Kafka log at all has no companion checks: with ``report_logs``, a report of the
    log says so (``not-a-kafka-log``, as every command says it).
    ``index_interval_bytes`` (the topic's index.interval.bytes) only affects the deep comparison with what
    recovery would write, an info finding. ``progress(n)``: n more bytes of log walked (deep)."""
    return PartitionChecker(directory, deep=deep, index_interval_bytes=index_interval_bytes,
                            progress=progress, time_format=time_format, report_logs=report_logs).check_all()


def check_segment_companions(path: str, *, deep: bool, index_interval_bytes: int = 4096,
                             progress=None, time_format: str = "epoch") -> list[FileReport]:
    """The companion files of one segment, named by its .log or any of its companions; a producer snapshot named
    on its own is checked itself (a snapshot's offset is rarely a segment's base offset)."""
    from kdump.read.logdir import snapshot_offset
    base = segment_base_offset(path)
    snapshot = None if base is not None else snapshot_offset(path)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    checker = PartitionChecker(directory, deep=deep, index_interval_bytes=index_interval_bytes, progress=progress,
                               time_format=time_format)
    if base is not None:
        return checker.check_segment_files(base)
    if snapshot is not None:
        return [checker.check_snapshot_file(path, snapshot)]
    return _check_named_segment(checker, path)


def _check_named_segment(checker: PartitionChecker, path: str) -> list[FileReport]:
    """A segment named under a name Kafka's listing leaves out -- set aside (``X.log.deleted``, ``.cleaned``,
    ``.swap``, kdump's ``.bak``) or no segment name at all (``segment.bin``) -- read by its bytes, as ``dump`` and
    ``verify`` read it (:func:`kdump.read.logdir.read_kind`), on its own (no next segment), with the indexes Kafka
    keeps beside it under the same name (``X.index.deleted``: a segment is set aside with every file of it). Named by
    a set-aside index, its segment is checked. Base offset: the name's, else the first batch's."""
    inner = set_aside_name(path)
    name = os.path.basename(path)
    suffix = name[len(inner):] if inner is not None else ""
    stem = (inner if inner is not None else name).split(".", 1)[0]
    directory = os.path.dirname(os.path.abspath(path))
    log = path
    if inner is not None and classify(inner) in SEGMENT_COMPANIONS:  # X.index.deleted: its X.log.deleted
        log = os.path.join(directory, stem + SUFFIXES[FileKind.LOG] + suffix)
    base = named_base_offset(path)
    if base is None:
        with SegmentLocator(log, use_index=False) as loc:  # (an OSError: cannot be read, said in its report)
            first = next(iter(walk_headers(loc.fd, 0, loc.size)))
            base = (first_offset(loc.fd, first) if not isinstance(first, Stop) else None) or 0
    checker.segments = {base: _Segment(base, log, None, True)}
    checker._log_end = False
    present = {kind.value: p for kind in (FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX)
               if os.path.isfile(p := os.path.join(directory, stem + SUFFIXES[kind] + suffix))}
    return checker._check_segment(base, present)


class CompanionChecks:
    """Shallow checks of a segment's existing index files against the segment, for ``kdump index rebuild``, which
    keeps a file that checks clean instead of refusing it (a rerun after a kill, or indexes Kafka wrote):
    :class:`kdump.index.rebuild.ExistingCheck`. One checker (one listing) per partition directory, however many
    segments are asked about."""

    def __init__(self) -> None:
        self._checkers: dict[str, PartitionChecker] = {}

    def report(self, path: str, kind: str, log_path: str) -> FileReport:
        """``path`` (an ``index``, ``timeindex`` or ``txnindex`` file, beside ``log_path`` or elsewhere) checked
        against the segment ``log_path``."""
        directory = os.path.dirname(os.path.abspath(log_path))
        checker = self._checkers.get(directory)
        if checker is None:
            checker = self._checkers[directory] = PartitionChecker(directory, deep=False)
        base = segment_base_offset(log_path)
        seg = checker.segments.get(base) if base is not None else None
        if seg is None:  # not a segment of its directory: nothing to check it against
            r = FileReport(path, kind)
            r.io_error = f"{log_path} is not a segment of its directory"
            return r
        check = {"index": checker.check_offset_index, "timeindex": checker.check_time_index,
                 "txnindex": checker.check_txn_index}[kind]
        return checker._guard(kind, path, check, base, seg)


def check_text_checkpoint(path: str) -> FileReport:
    """Syntax of a log-directory checkpoint (replication/recovery-point/log-start/cleaner offsets) or a
    partition.metadata file."""
    kind = cps.kind_of(path) or "offset-checkpoint"
    r = _Report(path, kind)
    try:
        r.report.bytes = os.path.getsize(path)
        cp = cps.parse_any(path)
    except (OSError, ValueError) as e:
        r.report.io_error = f"cannot read: {getattr(e, 'strerror', None) or e}"
        return r.report
    for p in cp.problems:
        r.add(p.code, (f"line {p.line}: " if p.line else "") + p.message, position=p.position)
    if cp.kind == "offset-checkpoint":
        seen = set()
        for (topic, part, off), (line, pos) in zip(cp.entries, cp.entry_lines, strict=True):
            if (topic, part) in seen:
                r.add("checkpoint-duplicate", f"line {line}: {topic}-{part} is listed twice", position=pos)
            seen.add((topic, part))
            if part < 0 or off < 0:
                r.add("checkpoint-negative", f"line {line}: {topic} {part} {off}: negative partition or offset",
                      position=pos)
    return r.finish()


def _present(seg) -> dict:
    """kind name -> path of the indexes of a :class:`kdump.read.logdir.Segment` that exist."""
    return {k.value: seg.path(k) for k in (FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX) if seg.path(k)}


def _log_name(companion_path: str) -> str:
    return os.path.basename(sibling(companion_path, FileKind.LOG))


def check_paths(paths, *, deep: bool, index_interval_bytes: int = 4096, jobs: int = 1,
                done=None, progress=None, time_format: str = "epoch") -> list[FileReport]:
    """What ``kdump index check`` checks for each argument: a segment (or companion file), a partition
    directory (its companions and partition.metadata), or a log directory (every partition, and the
    log directory's checkpoints). A path that cannot be read gives a report with ``io_error``.
    ``jobs`` > 1 checks a log directory's partitions in that many worker processes (same reports, same
    order); ``done(partition_directory)`` is then called as each one's reports arrive. ``progress(n)``: n more
    bytes of log walked by a deep check (in the workers too: they report as they go). ``time_format``: how
    findings quote a time (:mod:`kdump.text.times`)."""
    reports: list = []
    for p in paths:
        p = os.fspath(p)
        try:
            reports.extend(_check_path(p, deep, index_interval_bytes, later=jobs > 1, progress=progress,
                                       time_format=time_format))
        except OSError as e:  # refused (missing, a loop, not a regular file), or could not be read
            reports.append(FileReport(p, "unknown", io_error=f"cannot read: {e.strerror or e}",
                                      refused=e.errno in REFUSAL_ERRNOS))
    later = [r for r in reports if isinstance(r, _Later)]
    if not later:
        return reports
    from kdump.jobs import ordered_map
    checked = iter(ordered_map(_check_partition_path, [(r.directory, deep, index_interval_bytes, time_format)
                                                       for r in later],
                               jobs, done=None if done is None else (lambda i: done(later[i].directory)),
                               sizes=[r.size for r in later], progress=progress))
    return [x for r in reports for x in (next(checked) if isinstance(r, _Later) else [r])]


def check_work(paths) -> Work[WorkUnit]:
    """The partitions whose logs a deep :func:`check_paths` of ``paths`` walks (a segment named: every segment
    of its directory, as the check walks them all; a log directory: its partitions, the units its workers
    take), each once, with their bytes: a progress bar's total."""
    from kdump.write.leftovers import is_leftover_directory
    places = list(dict.fromkeys(p if os.path.isdir(p) else (os.path.dirname(os.path.abspath(p)) or ".")
                                for p in map(os.fspath, paths)))
    found = scan(places, depth=1)  # (a log directory's partitions are its subdirectories, as the check reads it)
    return unit_work(work_units([part for part in found.partitions if not is_leftover_directory(part.directory)]))


class _Later:
    """A partition of a log directory whose reports a worker process gives (their place in the list); ``size``:
    its segments' bytes (the largest start first)."""

    def __init__(self, directory: str, size: int):
        self.directory = directory
        self.size = size


def _check_partition_path(directory: str, deep: bool, index_interval_bytes: int,
                          time_format: str, *, progress=None) -> list[FileReport]:
    return check_paths([directory], deep=deep, index_interval_bytes=index_interval_bytes, time_format=time_format,
                       progress=progress)


def _check_path(p: str, deep: bool, index_interval_bytes: int, later: bool = False, progress=None,
                time_format: str = "epoch") -> list:
    reports: list[FileReport | _Later] = []
    if os.path.isdir(p):
        from kdump.write.leftovers import is_leftover_directory, leftover_reports
        reports.extend(leftover_reports(p))  # kdump's own crash leftovers (temporaries, interrupted group writes)
        found = scan([p], depth=1)  # a log directory's partitions are its subdirectories
        if not found.directories:
            raise found.refused[0].as_oserror()
        here = found.directories[0]
        if here.is_partition:
            reports.extend(check_partition_companions(p, deep=deep, index_interval_bytes=index_interval_bytes,
                                                      progress=progress, time_format=time_format))
            pm = here.checkpoints.get(FileKind.PARTITION_METADATA)
            if pm is not None:
                reports.append(check_text_checkpoint(pm))
        else:
            reports.extend(check_text_checkpoint(q) for q in here.files_of(FileKind.OFFSET_CHECKPOINT))
            for unit in work_units([part for part in found.partitions if not is_leftover_directory(part.directory)]):
                if later:
                    reports.append(_Later(unit.directory, unit.size))
                else:
                    reports.extend(check_paths([unit.directory], deep=deep, index_interval_bytes=index_interval_bytes,
                                               progress=progress, time_format=time_format))
            for refused in found.unlistable:  # a subdirectory that cannot be listed: said, the others checked
                r = FileReport(refused.path, "unknown")
                r.io_error = f"cannot read: {refused.reason}"
                reports.append(r)
    elif not os.path.exists(p):
        reports.append(FileReport(p, "unknown", io_error="no such file or directory", refused=True))
    elif cps.kind_of(p) is not None and cps.kind_of(p) != "leader-epoch-checkpoint":
        reports.append(check_text_checkpoint(p))
    elif os.path.basename(p) == cps.LEADER_EPOCH_CHECKPOINT:
        d = os.path.dirname(os.path.abspath(p))
        reports.append(PartitionChecker(d, deep=deep).check_leader_epoch_checkpoint(p))
    else:
        reports.extend(check_segment_companions(p, deep=deep, index_interval_bytes=index_interval_bytes,
                                                progress=progress, time_format=time_format))
    return reports
