"""The companion files of one partition, checked against its logs: :class:`PartitionChecker` finds each segment's
files and hands each to its kind's check (offset_index, time_index, txn_index, snapshot, checkpoints), as the
:class:`~kdump.index.check.context.Context` they are checked in (the partition's segments, its log end offset, the
damage of its logs, recovery of its segments in deep mode)."""
from __future__ import annotations

import os

from kdump.errors import FormatError
from kdump.index.check import checkpoints, offset_index, snapshot, time_index, txn_index
from kdump.index.check.context import PartitionFacts, Segment
from kdump.index.check.report import Report
from kdump.jobs import bytes_of
from kdump.read.damage import LogDamage, foreign_start
from kdump.read.locate import segment_end_offset
from kdump.read.logdir import FileKind, Partition, segment_base_offset, sibling
from kdump.read.segment import SegmentReader
from kdump.report.findings import FileReport
from kdump.text.times import time_formatter


class _AnyDamage:
    """Several logs' :class:`~kdump.read.damage.LogDamage` asked as one (offsets only: positions are per file)."""

    foreign = False

    def __init__(self, logs: list):
        self.logs = logs

    def covers(self, offset=None, position=None):
        return next((d for d in (log.covers(offset) for log in self.logs) if d is not None), None)



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
        self.segments: dict[int, Segment] = {}
        for i, seg in enumerate(logs):
            self.segments[seg.base_offset] = Segment(seg.base_offset, seg.log,
                                                     logs[i + 1].base_offset if i + 1 < len(logs) else None,
                                                     i == len(logs) - 1)
        self._facts: PartitionFacts | None = None
        self._log_end: int | bool | None = False
        self._damage: dict[str, LogDamage | None] = {}  # log path -> its damage, read when a finding needs it

    def partition_damage(self) -> _AnyDamage:
        """The failing damage of every log of the partition (a leader epoch's first offset may be in any)."""
        return _AnyDamage([d for d in (self.log_damage(s) for s in self.segments.values()) if d is not None])

    def log_damage(self, seg: Segment) -> LogDamage | None:
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
            found = Report(path, kind)
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
                r = Report(seg.log_path, "log", size=bytes_of([seg.log_path]))
                r.add(foreign.code, foreign.message, position=0, length=r.report.bytes)
                reports.append(r.finish())
            return reports
        if seg is not None and self.deep:
            self.recover(seg)
        if "index" in present:
            reports.append(self._guard("index", present["index"], self.check_offset_index, base, seg))
        elif seg is not None:
            r = Report(sibling(seg.log_path, FileKind.INDEX), "index")
            r.add("index-missing", "the segment has no offset index: Kafka rebuilds it at startup "
                  "(recovery of this segment); `kdump index rebuild` writes the same file")
            reports.append(r.finish())
        if "timeindex" in present:
            reports.append(self._guard("timeindex", present["timeindex"], self.check_time_index, base, seg))
        if "txnindex" in present:
            reports.append(self._guard("txnindex", present["txnindex"], self.check_txn_index, base, seg))
        elif seg is not None and self.deep and seg.recovery is not None and seg.recovery.aborted:
            r = Report(sibling(seg.log_path, FileKind.TXNINDEX), "txnindex")
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
    def recover(self, seg: Segment) -> PartitionFacts:
        """Recovery of every segment up to ``seg``, in order, carrying producer state (once per checker)."""
        if self._facts is not None:
            return self._facts
        from kdump.index.rebuild import RebuildError, recover_segment, state_before
        facts = PartitionFacts()
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

    def log_size(self, seg: Segment | None) -> int | None:
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

    def offset_bound(self, seg: Segment | None) -> float:
        """The first offset past ``seg``: the next segment's base offset, or the log end offset of the last segment
        (infinite when unknown): an index entry at or above it cannot name a batch of this segment."""
        if seg is None:
            return float("inf")
        if seg.next_base is not None:
            return seg.next_base
        end = self.log_end_offset() if seg.is_last else None
        return float("inf") if end is None else end

    # --- one file, by its kind (each kind's checks are its module's) -----------------------------------------
    def check_offset_index(self, path: str, base: int, seg: Segment | None) -> FileReport:
        return offset_index.check_offset_index(self, path, base, seg)

    def check_time_index(self, path: str, base: int, seg: Segment | None) -> FileReport:
        return time_index.check_time_index(self, path, base, seg)

    def check_txn_index(self, path: str, base: int, seg: Segment | None) -> FileReport:
        return txn_index.check_txn_index(self, path, base, seg)

    def check_snapshot(self, path: str, offset: int) -> FileReport:
        return snapshot.check_snapshot(self, path, offset)

    def check_leader_epoch_checkpoint(self, path: str) -> FileReport:
        return checkpoints.check_leader_epoch_checkpoint(self, path)

    def check_lone_segment(self, base: int, log_path: str, present: dict) -> list[FileReport]:
        """The companion files ``present`` (kind name -> path) of the segment ``log_path`` of base offset ``base``,
        read on its own (no next segment): a segment under a name Kafka's listing leaves out."""
        self.segments = {base: Segment(base, log_path, None, True)}
        self._log_end = False
        return self._check_segment(base, present)


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


def _present(seg) -> dict:
    """kind name -> path of the indexes of a :class:`kdump.read.logdir.Segment` that exist."""
    return {k.value: seg.path(k) for k in (FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX) if seg.path(k)}

