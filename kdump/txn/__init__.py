"""Transactions of a partition, as its log tells them: every transaction with its outcome, the hanging ones, the
last stable offset, and where the ``.txnindex`` and producer ``.snapshot`` files disagree with the log.

The batches of each partition are fed, in offset order, to the one producer/transaction state machine
(:class:`kdump.read.producer_state.ProducerStates`, Kafka's ``ProducerStateManager``): a transactional data batch of
a producer without an open transaction opens one at its base offset, the producer's next COMMIT or ABORT marker
ends it. A transaction is keyed by its producer id and the epoch of the batch that opened it (a marker may carry a
bumped epoch: the coordinator aborts a fenced transaction with the new one).

* **age**: the newest batch timestamp of the partition minus the first timestamp of the transaction's first
  batch (Kafka's transaction timeout counts from the coordinator's start time, which the log does not hold;
  the first batch's timestamp is the nearest the log knows);
* **hanging**: still open at the end of the log and either older than ``timeout_ms`` (Kafka's default
  ``transaction.max.timeout.ms`` is 15 minutes, so the coordinator would have aborted it by then) or open across
  a segment roll (begun before the active segment: a hanging transaction holds the LSO back, and with it every
  ``read_committed`` consumer, and keeps the old segments from being cleaned);
* **LSO**: :meth:`ProducerStates.last_stable_offset` at the end of the log: the first offset of the earliest open
  transaction, else the log end offset;
* **cross-checks**: each segment's ``.txnindex`` holds Kafka's ``AbortedTxn`` entries for the aborts whose marker
  is in that segment (spec §5.4); each producer ``<offset>.snapshot`` holds the producer state after the batches
  below its offset (spec §5.5): an open transaction's first offset and the producer epoch are compared.
  A snapshot at or below the first segment's base offset seeds the state instead, as Kafka's
  ``loadProducerState`` does (transactions opened before the log start are then known).

The segments are read as ``dump`` and ``verify`` read them, past damage (:func:`kdump.read.damage.readable`): each
damaged area, a file that is no Kafka log and a segment that cannot be read is an error
(:class:`kdump.report.findings.Problem`: file, byte position, cause), a crash-cut tail that Kafka reports with exit 0 a
note. Errors, disagreements and notes are all :class:`~kdump.report.findings.Problem` s (JSON objects ``{"path",
"position", "code", "message"}``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.format.legacy import LegacyRun
from kdump.read.damage import Damage
from kdump.read.logdir import FileKind, Partition, sibling, topic_partition
from kdump.read.producers import ABORT, COMMIT, OPEN, PartitionProducers
from kdump.read.producers import Transaction as LogTransaction
from kdump.read.scan import SegmentGroup
from kdump.report.findings import Problem
from kdump.report.outcome import label

DEFAULT_TIMEOUT_MS = 15 * 60 * 1000  # transaction.max.timeout.ms


@dataclass
class Transaction(LogTransaction):
    """A transaction of the log (:class:`kdump.read.producers.Transaction`) with this report's verdict on it."""

    age_ms: int | None = None
    hanging: list[str] = field(default_factory=list)  # why it is hanging (empty: it is not)

    def to_dict(self) -> dict:
        return {"producerId": self.producer_id, "producerEpoch": self.producer_epoch,
                "firstOffset": self.first_offset, "lastOffset": self.last_offset, "outcome": self.outcome,
                "markerOffset": self.marker_offset, "markerEpoch": self.marker_epoch, "startTime": self.start_time,
                "endTime": self.end_time, "batches": self.batches, "records": self.records,
                "firstSegment": self.first_segment, "ageMs": self.age_ms, "hanging": bool(self.hanging),
                "hangingReasons": self.hanging}


@dataclass
class PartitionTxns:
    """One partition directory's transactions: ``key`` (``<topic>-<n>``, or the directory), ``directory``, the
    segments named (``unreadable`` of them could not be read), and what the log and its companion files say."""

    key: str
    directory: str
    segments: int = 0
    transactions: list[Transaction] = field(default_factory=list)
    log_end_offset: int = 0
    last_stable_offset: int = 0
    newest_timestamp: int | None = None
    disagreements: list[Problem] = field(default_factory=list)  # .txnindex and .snapshot files against the log
    errors: list[Problem] = field(default_factory=list)  # damage, a file not Kafka's, a segment unreadable
    notes: list[Problem] = field(default_factory=list)
    unreadable: int = 0

    @property
    def hanging(self) -> list[Transaction]:
        return [t for t in self.transactions if t.hanging]

    @property
    def read(self) -> bool:
        """Anything of it was read (not every segment unreadable)."""
        return self.segments > self.unreadable

    @property
    def label(self) -> str:
        """FAIL with an error or a hanging transaction (either makes the run exit 1), WARN with a disagreement."""
        return label(len(self.errors) + len(self.hanging), len(self.disagreements))

    def count(self, outcome: str) -> int:
        return sum(1 for t in self.transactions if t.outcome == outcome)

    def to_dict(self) -> dict:
        named = topic_partition(os.path.basename(os.path.abspath(self.directory)))
        topic, partition = named if named is not None else (None, None)
        return {"path": self.directory, "topic": topic, "partition": partition, "label": self.label,
                "segments": self.segments, "logEndOffset": self.log_end_offset,
                "lastStableOffset": self.last_stable_offset, "newestTimestamp": self.newest_timestamp,
                "committed": self.count(COMMIT), "aborted": self.count(ABORT), "open": self.count(OPEN),
                "hanging": len(self.hanging), "transactions": [t.to_dict() for t in self.transactions],
                "disagreements": [d.to_dict("warning") for d in self.disagreements],
                "errors": [e.to_dict() for e in self.errors], "notes": [n.to_dict("note") for n in self.notes]}

    def damaged(self, path: str, error) -> None:
        """What the walk of a segment met (``on_damage`` of :meth:`PartitionProducers.scan
        <kdump.read.producers.PartitionProducers.scan>`): a damaged area, a file that is no Kafka log, or the
        OSError of a segment that cannot be read."""
        if isinstance(error, OSError):
            self.unreadable += 1
        note = isinstance(error, Damage) and not error.fails
        (self.notes if note else self.errors).append(Problem.of(path, error))


class _Walk:
    """The cross-checks of one partition's walk, beside its producer replay."""

    def __init__(self, result: PartitionTxns, producers: PartitionProducers, snapshots: list):
        self.result = result
        self.producers = producers
        self.state = producers.state
        self.snapshots = snapshots  # (offset, ProducerSnapshot) still to compare, in offset order

    def before(self, batch) -> None:
        """Before a batch is applied: the snapshots at or below its offset, against the state so far. Before a run of
        plain magic 0/1 messages (applied whole: their offsets increase), the snapshots at or below each message's
        offset, against the state before that message: the same, as those messages change no producer, and the log
        end offset before each is the one before it plus one."""
        snapshots = self.snapshots
        while snapshots and snapshots[0][0] <= batch.base_offset:
            self.compare_snapshot(*snapshots.pop(0))
        if type(batch) is LegacyRun and snapshots and snapshots[0][0] <= batch.last_offset:
            offsets = batch.columns.offsets  # (read only where a snapshot falls inside the run)
            for k in range(1, len(offsets)):
                while snapshots and snapshots[0][0] <= offsets[k]:
                    offset, snap = snapshots.pop(0)
                    self.compare_snapshot(offset, snap, end_offset=offsets[k - 1] + 1)

    def compare_snapshot(self, offset: int, snap, end_offset: int | None = None) -> None:
        """The snapshot at ``offset`` against the state after the batches below it (``end_offset``: the log end
        offset there, when the state's is not: inside a run of plain messages applied whole)."""
        r = self.result
        path = snap.path
        end = self.state.end_offset if end_offset is None else end_offset

        def disagrees(message: str) -> None:
            r.disagreements.append(Problem(path, None, "snapshot-disagrees", message))
        if end != offset:
            r.notes.append(Problem(path, None, "snapshot-not-compared", f"offset {offset} falls inside a batch (the "
                                   f"log continues at {end}); not compared"))
            return
        producers = self.state.producers
        seen = set()
        for e in snap.entries:
            seen.add(e.producer_id)
            mine = producers.get(e.producer_id)
            theirs = e.current_txn_first_offset if e.current_txn_first_offset >= 0 else None
            if mine is None:
                if theirs is not None:
                    disagrees(f"producer {e.producer_id} has a transaction open from offset {theirs}, but the log "
                              f"below {offset} has no batch of that producer")
                continue
            if mine.txn_first_offset != theirs:
                said = f"open from offset {theirs}" if theirs is not None else "no open transaction"
                log = (f"open from offset {mine.txn_first_offset}" if mine.txn_first_offset is not None
                       else "no open transaction")
                disagrees(f"producer {e.producer_id}: the snapshot says {said}, the log says {log}")
            if mine.epoch != e.epoch:
                disagrees(f"producer {e.producer_id}: epoch {e.epoch} in the snapshot, {mine.epoch} in the log")
        for pid, entry in producers.items():
            if entry.txn_first_offset is not None and pid not in seen:
                # Kafka never expires a producer with an open transaction, so it must be in the snapshot
                disagrees(f"producer {pid} has a transaction open from offset {entry.txn_first_offset} in the log, "
                          "and no entry in the snapshot")

    def end_segment(self, base: int, log: str) -> None:
        """The segment's ``.txnindex`` against the aborts whose markers are in it."""
        r = self.result
        path = sibling(log, FileKind.TXNINDEX)
        mine = [t.aborted_txn() for t in self.producers.aborted_in(base)]

        def disagrees(message: str) -> None:
            r.disagreements.append(Problem(path, None, "txnindex-disagrees", message))
        if not os.path.isfile(path):
            if mine:
                what = (f"missing, but the segment holds {len(mine)} aborted transaction(s) (first: producer "
                        f"{mine[0].producer_id}, offsets {mine[0].first_offset}-{mine[0].last_offset})")
                if os.path.isfile(sibling(log, FileKind.INDEX)):
                    disagrees(what)
                else:  # a segment copied without its companion files: nothing to compare with
                    r.notes.append(Problem(path, None, "txnindex-missing",
                                           f"{what}; the segment has no index files, so this is not a disagreement"))
            return
        from kdump.read.txn_index import TxnIndexFile
        try:
            with TxnIndexFile(path) as f:
                theirs = [e for _, e in f.entries()]
        except OSError as e:
            r.notes.append(Problem.of(path, e))
            return

        def entry_key(t):
            return (t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)
        in_index = {entry_key(t) for t in theirs}
        in_log = {entry_key(t) for t in mine}
        for pid, first, last, lso in sorted(in_log - in_index, key=lambda k: k[2]):
            disagrees(f"no entry for the aborted transaction of producer {pid}, offsets {first}-{last} (last stable "
                      f"offset {lso})")
        for pid, first, last, lso in sorted(in_index - in_log, key=lambda k: k[2]):
            disagrees(f"entry for producer {pid}, offsets {first}-{last} (last stable offset {lso}) matches no "
                      "aborted transaction in the segment")


def _snapshots(directory: str, notes: list) -> list:
    from kdump.read.snapshot import read_snapshot
    out = []
    for offset, path in Partition(directory).snapshots:
        try:
            snap = read_snapshot(path)
        except OSError as e:
            notes.append(Problem.of(path, e))
            continue
        if snap.error is not None:
            notes.append(Problem(path, None, "snapshot-invalid", f"{snap.error} (Kafka ignores it); not compared"))
            continue
        out.append((offset, snap))
    return out


class _Advance:
    """``progress(n)`` as a partition's segments are read: each batch's bytes as the walk passes it, and at a segment's
    end whatever it skipped (damage, a tail), so the reports add up to the segments' sizes."""

    def __init__(self, progress):
        self.progress = progress
        self.done = 0  # bytes of the current segment reported

    def before(self, then):
        def before(batch) -> None:
            end = batch.position + batch.size
            if end > self.done:
                self.progress(end - self.done)
                self.done = end
            then(batch)
        return before

    def after_segment(self, then):
        def after_segment(base: int, path: str) -> None:
            then(base, path)
            try:
                size = os.path.getsize(path)
            except OSError:
                size = self.done
            if size > self.done:
                self.progress(size - self.done)
            self.done = 0
        return after_segment


def partition_transactions(group: SegmentGroup, *, timeout_ms: int = DEFAULT_TIMEOUT_MS,
                           progress=None) -> PartitionTxns:
    """The transactions of the segments of one partition (see the module docstring); ``progress(n)``: n more bytes
    of its segments read."""
    result = PartitionTxns(group.key, group.directory, segments=len(group.logs))
    snapshots = _snapshots(group.directory, result.notes)
    segments = group.based()
    first_base = segments[0][0] if segments else None
    if first_base is not None:
        # a snapshot at or below the log start seeds the state (its notes were made by _snapshots), the later
        # ones are compared with it
        producers = PartitionProducers.starting(Partition(group.directory), first_base, transactions=True,
                                                snapshot_notes=None)
        snapshots = [(o, s) for o, s in snapshots if o > first_base]
    else:
        producers = PartitionProducers(transactions=True)
    walk = _Walk(result, producers, snapshots)
    before, after_segment = walk.before, walk.end_segment
    if progress is not None:
        advance = _Advance(progress)
        before, after_segment = advance.before(before), advance.after_segment(after_segment)
    producers.scan(segments, whole_batches=True, before=before, after_segment=after_segment,
                   on_damage=result.damaged)
    # where Kafka's log loading would throw (a sequence or epoch out of order): each noted once, as the replay met it
    result.notes.extend(Problem(group.directory, None, problem.code, note)
                        for problem, note in zip(producers.problems, producers.notes, strict=False))
    state = producers.state
    for offset, snap in walk.snapshots:
        if offset == state.end_offset:
            walk.compare_snapshot(offset, snap)
        else:
            result.notes.append(Problem(snap.path, None, "snapshot-not-compared", f"offset {offset} is beyond the "
                                        f"log end {state.end_offset}; not compared"))
    result.transactions = [Transaction(**vars(t)) for t in producers.transactions or ()]
    result.newest_timestamp = producers.newest_timestamp
    result.log_end_offset = state.end_offset
    result.last_stable_offset = state.last_stable_offset()
    active = segments[-1][0] if segments else None
    newest = result.newest_timestamp
    for t in result.transactions:
        if t.start_time is not None and newest is not None:
            t.age_ms = newest - t.start_time
        if t.outcome != OPEN:
            continue
        if t.age_ms is not None and t.age_ms > timeout_ms:
            t.hanging.append(f"open for {format_ms(t.age_ms)}, longer than the timeout {format_ms(timeout_ms)}")
        if t.first_segment is None or (active is not None and t.first_segment != active):
            where = "before the log start" if t.first_segment is None else f"in segment {t.first_segment}"
            t.hanging.append(f"open across a segment roll (begun {where}, the active segment starts at {active})")
    return result


def transactions(groups, *, timeout_ms: int = DEFAULT_TIMEOUT_MS, jobs: int = 1, progress=None) -> list[PartitionTxns]:
    """:func:`partition_transactions` of each :class:`~kdump.read.scan.SegmentGroup` (or of their
    :func:`kdump.jobs.group_work`, made once for a progress bar's total), in order; ``jobs`` > 1: in that
    many worker processes (:func:`kdump.jobs.ordered_map`), the same results. ``progress(bytes)`` as the segments
    are read, in the workers too (they report as they go)."""
    from kdump.jobs import group_work, ordered_map
    work = group_work(groups)
    return ordered_map(_partition_transactions, [(g, timeout_ms) for g in work.units], jobs, sizes=work.sizes,
                       progress=progress)


def _partition_transactions(group: SegmentGroup, timeout_ms: int, *, progress=None) -> PartitionTxns:
    """:func:`partition_transactions` with positional arguments (what a worker process of :func:`transactions` is
    handed)."""
    return partition_transactions(group, timeout_ms=timeout_ms, progress=progress)


def format_ms(ms: int) -> str:
    """``1h 2m 3s`` (or ``450 ms`` below a second)."""
    if ms < 1000:
        return f"{ms} ms"
    s = ms // 1000
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            parts.append(f"{s // size}{unit}")
            s %= size
    if s or not parts:
        parts.append(f"{s}s")
    return " ".join(parts)
