"""Producer and transaction state of a partition, replayed once for every command and the Spark source.

:class:`PartitionProducers` is the one result: the producer table (:class:`~kdump.read.producer_state.ProducerStates`,
Kafka's ``ProducerStateManager``), the aborted transactions by the segment their ABORT marker is in, and, when
asked for, every :class:`Transaction` with its outcome, times and size. It is built as Kafka's
``loadProducerState`` builds its state:

1. **seed** (:func:`usable_snapshot`): the newest producer ``.snapshot`` at or below the offset the state is wanted
   from that reads without error (an unreadable or damaged one is passed over for the next older one, as Kafka
   deletes it); without one, an empty table at the log start;
2. **replay** (:meth:`PartitionProducers.scan`): the batches of the segments from the snapshot's offset on, in
   offset order, up to an offset or the end. Batch headers are enough for data batches (one small read each);
   control batches are read whole, as their marker is in their first record, and one that does not read or fails its
   CRC ends the replay of that segment (Kafka's recovery would have truncated the segment there). With
   ``whole_batches`` every batch is read whole, past damage as ``dump`` and ``verify`` read it
   (:func:`kdump.read.damage.readable`), each damaged area handed to ``on_damage`` or noted (what ``kdump txn``
   reports, which needs every batch's first timestamp).

The scan is incremental: it remembers the segment and byte position it stopped at, so a stream tailing a partition
reads each header once; if that segment disappears (retention) the next scan starts again from what is there.

Consumers: ``index rebuild``/``check``/``convert`` take the state before a segment (:meth:`PartitionLog.producers
<kdump.read.partition.PartitionLog.producers>`), ``kdump txn`` and Spark's ``read_committed`` are views of one
scan (``kdump.txn.PartitionTxns``, ``kdump.spark.txn.PartitionTxns``), and ``kdump stats`` feeds the batches of
its own record pass to :meth:`PartitionProducers.apply`.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from kdump.errors import FormatError
from kdump.format.framing import BatchHeader, Stop
from kdump.format.legacy import LegacyBatch, LegacyRun
from kdump.format.names import CONTROL_TYPE_NAMES
from kdump.format.types import ControlRecordType, TimestampType
from kdump.format.v2 import RecordBatch
from kdump.read.damage import Damage, foreign_start, readable
from kdump.read.logdir import Partition
from kdump.read.producer_state import ProducerProblem, ProducerStates, TxnAborted, TxnCommitted, TxnOpened
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES, SegmentReader, read_batch_at, walk_headers
from kdump.read.snapshot import ProducerSnapshot, read_snapshot

# A transaction's outcome: its marker's control type, as Kafka names it, or still open.
COMMIT, ABORT, OPEN = CONTROL_TYPE_NAMES[ControlRecordType.COMMIT], CONTROL_TYPE_NAMES[ControlRecordType.ABORT], "OPEN"
MARKER_READ_LIMIT = 1 << 20  # bytes a control batch's first record may decompress to


@dataclass
class Transaction:
    """One transaction as the log tells it, keyed by its producer id and the epoch of the batch that opened it (a
    marker may carry a bumped epoch: the coordinator aborts a fenced transaction with the new one)."""

    producer_id: int
    producer_epoch: int  # of the batch that opened it
    first_offset: int
    last_offset: int  # the marker, or the last data batch of an open transaction
    outcome: str = OPEN
    marker_offset: int | None = None
    marker_epoch: int | None = None
    start_time: int | None = None  # first timestamp of its first batch (None: opened before the replay began)
    end_time: int | None = None  # the marker batch's timestamp
    batches: int = 0
    records: int = 0
    first_segment: int | None = None  # base offset of the segment it began in


def first_timestamp(batch) -> int:
    """The first record's timestamp from a whole batch's header (a delete horizon takes the base timestamp's place,
    and log-append time stamps every record with the maximum)."""
    if batch.has_delete_horizon or batch.timestamp_type is TimestampType.LOG_APPEND_TIME:
        return batch.max_timestamp
    return batch.base_timestamp


def usable_snapshot(partition: Partition, offset: int,
                    notes: list | None = None) -> tuple[int, ProducerSnapshot] | None:
    """Kafka's choice in ``loadProducerState``: the newest producer snapshot of ``partition`` at or below ``offset``
    that reads without error, as (its offset, the snapshot); None when there is none. Each snapshot passed over is
    noted in ``notes`` (with the reason)."""
    for snap_offset, path in reversed(partition.snapshots):
        if snap_offset > offset:
            continue
        try:
            snap = read_snapshot(path)
        except OSError as e:
            if notes is not None:
                notes.append(f"{path}: unreadable ({e.strerror or e}); trying an older snapshot")
            continue
        if snap.error is not None:
            if notes is not None:
                notes.append(f"{path}: {snap.error}; trying an older snapshot (Kafka deletes it)")
            continue
        return snap_offset, snap
    return None


class PartitionProducers:
    """Producer and transaction state of one partition after the batches applied to it (see the module docstring).

    * ``state``: the producer table (open transactions, last stable offset, ``end_offset``);
    * ``snapshot``: the snapshot the state began from (None: from the first batch); ``start_offset``: its offset
      (batches that end below it are already in the state and are skipped);
    * ``aborted``: segment base offset -> the :class:`~kdump.read.producer_state.TxnAborted` whose marker is in that
      segment (key None for batches applied outside :meth:`scan`); ``committed_count``/``aborted_count`` count the
      COMMIT and ABORT markers that ended a transaction;
    * ``transactions``: every :class:`Transaction` (those the seed snapshot says are open first), when built with
      ``transactions=True``, else None;
    * ``problems``: the :class:`~kdump.read.producer_state.ProducerProblem` where Kafka's log loading throws;
      ``notes``: those problems and where a replay stopped early, in the order met;
    * ``newest_timestamp``: the largest batch timestamp applied;
    * ``segment``/``position``: the segment applied last and the byte position after its last batch applied.

    ``keep_aborted=False`` only counts aborts (a pass over a huge partition that needs no list of them); ``notes``:
    the list the notes are appended to (a report's own, to keep them in the order met).
    """

    def __init__(self, state: ProducerStates | None = None, *, snapshot: ProducerSnapshot | None = None,
                 transactions: bool = False, keep_aborted: bool = True, notes: list | None = None):
        self.state = state if state is not None else ProducerStates()
        self.snapshot = snapshot
        self.start_offset = self.state.end_offset
        self.keep_aborted = keep_aborted
        self.aborted: dict[int | None, list[TxnAborted]] = {}
        self.committed_count = 0
        self.aborted_count = 0
        self.transactions: list[Transaction] | None = [] if transactions else None
        self._open: dict[int, Transaction] = {}  # producer id -> its open transaction (with ``transactions``)
        self.problems: list[ProducerProblem] = []
        self.notes: list[str] = notes if notes is not None else []
        self.newest_timestamp: int | None = None
        self.segment: int | None = None
        self.position = 0
        if self.transactions is not None:
            for o in self.state.open_transactions():  # begun before the replay: only the snapshot knows them
                t = Transaction(o.producer_id, o.producer_epoch, o.first_offset, o.first_offset)
                self._open[o.producer_id] = t
                self.transactions.append(t)

    @classmethod
    def starting(cls, partition: Partition, offset: int, *, from_snapshot: bool = True,
                 snapshot_notes: list | None = None, track_sequences: bool = False, **kwargs) -> PartitionProducers:
        """The state to replay ``partition`` from when the state at ``offset`` is wanted: seeded from the usable
        snapshot at or below ``offset`` (:func:`usable_snapshot`; ``snapshot_notes`` gets the ones passed over)
        when ``from_snapshot``, else empty; ``track_sequences``: keep each producer's sequences (and check them for
        duplicates), which needs whole batches. Nothing is replayed yet (:meth:`scan`)."""
        found = usable_snapshot(partition, offset, snapshot_notes) if from_snapshot else None
        if found is None:
            return cls(ProducerStates(track_sequences=track_sequences), **kwargs)
        snap_offset, snap = found
        return cls(ProducerStates.from_snapshot(snap.entries, snap_offset, track_sequences=track_sequences),
                   snapshot=snap, **kwargs)

    # --- queries -----------------------------------------------------------------------------------------------
    @property
    def end_offset(self) -> int:
        return self.state.end_offset

    def last_stable_offset(self, high_watermark: int | None = None) -> int:
        return self.state.last_stable_offset(high_watermark)

    def aborted_in(self, segment: int | None) -> list[TxnAborted]:
        """The aborted transactions whose ABORT marker is in the segment at base offset ``segment``."""
        return self.aborted.get(segment, [])

    def all_aborted(self) -> list[TxnAborted]:
        """Every aborted transaction applied, segment by segment in the order applied."""
        return [t for aborts in self.aborted.values() for t in aborts]

    # --- applying batches ------------------------------------------------------------------------------------
    def apply(self, batch, limit: int = MARKER_READ_LIMIT) -> tuple:
        """Apply one batch (a whole batch or, outside ``transactions``, a data batch's header) in offset order;
        its events (:meth:`ProducerStates.apply <kdump.read.producer_state.ProducerStates.apply>`)."""
        ts = batch.max_timestamp
        if ts >= 0 and (self.newest_timestamp is None or ts > self.newest_timestamp):
            self.newest_timestamp = ts
        events = self.state.apply(batch, limit)
        for event in events:
            kind = type(event)
            if kind is TxnAborted:
                self.aborted_count += 1
                if self.keep_aborted:
                    self.aborted.setdefault(self.segment, []).append(event)
            elif kind is TxnCommitted:
                self.committed_count += 1
            elif kind is ProducerProblem and event.fatal:
                self.problems.append(event)
                self.notes.append(f"at byte {event.position} of segment {self.segment}: {event.message}")
        if self.transactions is not None and batch.magic >= 2:
            self._record(batch, events)
        return events

    def _record(self, batch, events: tuple) -> None:
        """The transactions of one magic-2 batch's events, and its size in the transaction it belongs to."""
        transactions = self.transactions
        assert transactions is not None
        for event in events:
            kind = type(event)
            if kind is TxnOpened:
                opened = Transaction(event.producer_id, event.producer_epoch, event.first_offset, batch.last_offset,
                                     start_time=first_timestamp(batch), first_segment=self.segment)
                self._open[event.producer_id] = opened
                transactions.append(opened)
            elif kind is TxnCommitted or kind is TxnAborted:
                found = self._open.pop(event.producer_id, None)
                if found is None:  # opened before the replay began (the state came from a snapshot)
                    found = Transaction(event.producer_id, event.producer_epoch, event.first_offset,
                                        event.marker_offset)
                    transactions.append(found)
                found.outcome = COMMIT if kind is TxnCommitted else ABORT
                found.marker_offset = found.last_offset = event.marker_offset
                found.marker_epoch = batch.producer_epoch
                found.end_time = batch.max_timestamp
        if batch.is_transactional and not batch.is_control:
            t = self._open.get(batch.producer_id)
            if t is not None:
                t.last_offset = batch.last_offset
                t.batches += 1
                t.records += max(batch.records_count, 0)

    # --- replaying segments ----------------------------------------------------------------------------------
    def scan(self, segments: Iterable[tuple[int, str]], *, upto_offset: int | None = None,
             whole_batches: bool = False, before: Callable | None = None, after_segment: Callable | None = None,
             max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES, on_damage: Callable | None = None) -> None:
        """Apply the batches of ``segments`` (``(base offset, local .log path)`` in offset order) not applied yet,
        up to ``upto_offset`` (a batch that reaches it is not applied). Segments that end below :attr:`start_offset`
        are skipped. ``before(batch)`` is called before each batch is applied (a run of plain magic
        0/1 messages whose offsets increase is applied whole: ``before`` gets the
        :class:`~kdump.format.legacy.LegacyRun`), ``after_segment(base, path)`` after
        each segment scanned. Whole batches are read when asked or when the state tracks sequences (a header has
        none); then ``on_damage(path, error)`` gets each damaged area (a :class:`~kdump.read.damage.Damage`), a file
        that is no Kafka log (a FormatError) and a segment that cannot be read (the OSError: the scan goes on with
        the next), else they are noted."""
        whole_batches = whole_batches or self.state.track_sequences
        segments = list(segments)
        bases = [b for b, _ in segments]
        if self.segment is not None and self.segment not in bases:
            self._restart()  # the segment we were in was deleted (retention): start again from what is there
        for i, (base, path) in enumerate(segments):
            if upto_offset is not None and base >= upto_offset:
                break
            if self.segment is not None and base < self.segment:
                continue
            if i + 1 < len(bases) and bases[i + 1] <= self.start_offset:
                continue  # wholly below the snapshot the state began from
            start = self.position if base == self.segment else 0
            reached = self.scan_segment(base, path, start=start, upto_offset=upto_offset, whole_batches=whole_batches,
                                        before=before, max_batch_bytes=max_batch_bytes, on_damage=on_damage)
            if after_segment is not None:
                after_segment(base, path)
            if reached:
                break

    def _restart(self) -> None:
        fresh = PartitionProducers(ProducerStates(track_sequences=self.state.track_sequences),
                                   transactions=self.transactions is not None, keep_aborted=self.keep_aborted,
                                   notes=self.notes)
        self.__dict__.update(fresh.__dict__)

    def scan_segment(self, base: int, path: str, *, start: int = 0, upto_offset: int | None = None,
                     whole_batches: bool = False, before: Callable | None = None,
                     max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES, on_damage: Callable | None = None) -> bool:
        """Apply the batches of one segment (the next in offset order, or the one the last scan stopped in) from
        byte ``start`` (0 with ``whole_batches``) to its end, to ``upto_offset`` or to the first batch that cannot
        be applied (a partial last entry of a live segment, damage): what follows in that segment is not applied (a
        consumer cannot read past it either), and a later scan goes on from there; with ``whole_batches``, to its
        end past damage (:meth:`scan`). True when ``upto_offset`` was reached."""
        self.segment = base
        if whole_batches or self.state.track_sequences:
            return self._scan_whole(path, upto_offset, before, max_batch_bytes, on_damage)
        end = start
        reached = False
        with open(path, "rb") as f:
            fd = f.fileno()
            for header in walk_headers(fd, start, os.fstat(fd).st_size):
                if isinstance(header, Stop):
                    break
                if upto_offset is not None and header.last_offset >= upto_offset:
                    reached = True
                    break
                if header.last_offset >= self.start_offset:
                    batch: BatchHeader | RecordBatch | LegacyBatch = header
                    if header.is_control and header.producer_id >= 0:  # its marker is in its record
                        try:
                            whole = read_batch_at(fd, header, max_batch_bytes)
                        except FormatError:
                            break
                        if not whole.is_valid():
                            break  # where Kafka's recovery of the segment stops
                        batch = whole
                    if before is not None:
                        before(batch)
                    self.apply(batch)
                end = header.end
        self.position = end
        return reached

    def _scan_whole(self, path: str, upto_offset: int | None, before: Callable | None, max_batch_bytes: int,
                    on_damage: Callable | None) -> bool:
        damaged = on_damage if on_damage is not None else self._note_damage
        reached = False
        try:
            with SegmentReader(path, max_batch_bytes=max_batch_bytes) as reader:
                foreign = foreign_start(reader)
                if foreign is not None:
                    damaged(path, foreign)
                    return False
                for item in readable(reader, show_invalid=False):
                    if type(item) is LegacyRun and self._whole_run(item, upto_offset):
                        if before is not None and item.last_offset >= self.start_offset:
                            before(item)
                        self.apply_run(item)
                        self.position = item.end
                        continue
                    if isinstance(item, Damage):
                        damaged(path, item)
                        continue
                    if isinstance(item, Stop):
                        break
                    # (a run reached or straddled by the bounds: as the batches it holds)
                    batches = item.messages() if type(item) is LegacyRun else (item,)
                    if self._apply_each(batches, upto_offset, before):
                        reached = True
                        break
        except OSError as e:
            if on_damage is None:
                raise
            on_damage(path, e)
        return reached

    def _apply_each(self, batches, upto_offset: int | None, before: Callable | None) -> bool:
        """Apply ``batches`` one by one, as :meth:`_scan_whole` applies what it reads; True when ``upto_offset`` is
        reached."""
        for batch in batches:
            if upto_offset is not None and batch.last_offset >= upto_offset:
                return True
            if batch.last_offset >= self.start_offset:
                if before is not None:
                    before(batch)
                self.apply(batch)
            self.position = batch.position + batch.size
        return False

    def _whole_run(self, run: LegacyRun, upto_offset: int | None) -> bool:
        """Is ``run`` (intact plain magic 0/1 messages) applied whole, as :meth:`apply_run`, with the same result as
        its messages one by one? When its offsets increase (its last is its largest) and neither ``upto_offset`` nor
        :attr:`start_offset` falls inside it (else some messages are applied, some not)."""
        s = run.summary
        if s is None or s.decreasing_at >= 0:
            return False
        first, last = run.base_offset, run.last_offset
        return (upto_offset is None or last < upto_offset) and (first >= self.start_offset or last < self.start_offset)

    def apply_run(self, run: LegacyRun) -> None:
        """A run of intact plain magic 0/1 messages whose offsets increase, applied whole: what :meth:`apply` makes
        of each (no producer, no event: the log end offset and the newest timestamp) when the run lies at or above
        :attr:`start_offset` (below it, nothing)."""
        if run.last_offset < self.start_offset:
            return
        s = run.summary
        assert s is not None
        if s.max_timestamp is not None and s.max_timestamp >= 0 and (
                self.newest_timestamp is None or s.max_timestamp > self.newest_timestamp):
            self.newest_timestamp = s.max_timestamp  # (of the magic 1 messages; magic 0 has none)
        self.state.end_offset = run.last_offset + 1

    def _note_damage(self, path: str, error: FormatError) -> None:
        self.notes.append(f"{os.path.basename(path)}: {error}")


def replay(partition: Partition, upto_offset: int | None = None, *, from_snapshot: bool = True,
           snapshot_notes: list | None = None, **kwargs) -> PartitionProducers:
    """Producer and transaction state of ``partition`` after its batches below ``upto_offset`` (all of them when
    None), from the usable snapshot at or below ``upto_offset`` (below the last segment's base offset when None:
    a snapshot there lies inside the log) when ``from_snapshot``. ``snapshot_notes`` gets the snapshots passed over;
    ``kwargs`` go to :class:`PartitionProducers`."""
    segments = [(s.base_offset, s.log) for s in partition.segments]
    if upto_offset is not None:
        seed_at = upto_offset
    elif segments:
        seed_at = segments[-1][0]
    else:
        seed_at = -1
    producers = PartitionProducers.starting(partition, seed_at, from_snapshot=from_snapshot,
                                            snapshot_notes=snapshot_notes, **kwargs)
    producers.scan(segments, upto_offset=upto_offset)
    return producers
