"""The copies of a partition across brokers, compared offline by Kafka's replication rules (``kdump replicas``).

For every topic-partition found in two or more of the log directories given (or among partition directories of
one topic-partition), each copy (a *replica*) is surveyed and compared with a *reference* replica:

* **survey** (:func:`survey`): log start offset (the ``log-start-offset-checkpoint`` and the first segment, as
  Kafka's ``LogLoader`` takes the larger), log end offset (LEO: after the last readable batch), high watermark
  (``replication-offset-checkpoint``), recovery point (``recovery-point-offset-checkpoint``), leader epochs (the
  ``leader-epoch-checkpoint`` and the epochs the batches carry, assigned by Kafka's
  ``LeaderEpochFileCache.assign`` rule), the newest offset held, and whether the files are sound (the read
  layer's judgement: :attr:`kdump.read.damage.Damage.fails`). Batch headers and CRCs are read, no records.
* **reference**: the replica with the highest leader epoch, then the longest log (or the one named).
* **divergence point** (:func:`divergence_point`): the offset a follower truncates to when it starts fetching from
  the reference, worked as Kafka's fetcher works it (KIP-101, KIP-279). The rule followed is
  ``AbstractFetcherThread``'s (``maybeTruncate`` -> ``truncateToEpochEndOffsets`` -> ``getOffsetTruncationState``)
  with ``LeaderEpochFileCache.endOffsetFor`` answering on both sides (apache/kafka, core/.../AbstractFetcherThread.scala
  and storage/.../epoch/LeaderEpochFileCache.java):

  1. a follower without a leader epoch truncates to its high watermark (``truncateToHighWatermark``);
  2. else it asks the reference for the end offset of its latest epoch; the reference answers ``endOffsetFor``:
     its LEO for its own latest epoch, else (the largest epoch <= the one asked, the start offset of the next
     epoch), or the start of its first epoch when the epoch asked is older than all it knows, or undefined
     (``UnifiedLog.endOffsetForEpoch`` gives None for an undefined answer; the follower then truncates to its
     high watermark);
  3. the follower looks up the epoch answered in its own cache (``endOffsetFor`` again). Same epoch: truncate to
     min(its end offset of that epoch, the reference's end offset, its LEO), done. An older epoch (it lacks the
     epoch answered): truncate to min(that epoch's end offset on the follower, its LEO), drop the epochs from that
     offset on, and ask again with the new latest epoch (the walk back). No epoch at or below it: truncate to
     min(the reference's end offset, its LEO);
  4. a follower whose truncation point is above the reference's LEO is then cut to the reference's LEO (the
     fetcher's out-of-range handling, ``fetchOffsetAndApplyTruncateAndBuild``).

  Every record at or above that offset is lost when the follower rejoins, with the rest of a batch that holds
  the offset (``LogSegment.truncateTo`` cuts at the batch holding it: the batch goes whole); lost records below
  the follower's high watermark were acknowledged (committed) data.
* **mismatches** (:func:`compare_partition`): below each follower's divergence point, batch by batch, the base
  offset, last offset, leader epoch and CRC of every batch must equal the reference's; a batch in one copy and
  not the other, or any field that differs, is a mismatch (corruption or a broken replica, not an election).
  The copies are walked together, one batch of each at a time (memory bounded by the number of replicas, not by
  the batches).

The verdict of a follower is ``in-sync`` (same log as the reference), ``behind`` (a prefix of it), ``diverged``
(truncation would remove records) or ``inconsistent`` (a mismatch below the divergence point); a partition takes
the worst of its followers'.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from kdump.errors import FormatError, error_object
from kdump.read.checkpoints import parse_any
from kdump.read.damage import Damage, by_batch, foreign_start, readable
from kdump.read.logdir import FileKind, topic_partition
from kdump.read.partition import PartitionLog
from kdump.read.scan import scan
from kdump.read.segment import DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader

IN_SYNC, BEHIND, DIVERGED, INCONSISTENT, REFERENCE = "in-sync", "behind", "diverged", "inconsistent", "reference"
STATUSES = (IN_SYNC, BEHIND, DIVERGED, INCONSISTENT)
_WORSE = {IN_SYNC: 0, REFERENCE: 0, BEHIND: 1, DIVERGED: 2, INCONSISTENT: 3}
UNDEFINED_EPOCH = -1  # OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH (and RecordBatch.NO_PARTITION_LEADER_EPOCH)
UNDEFINED_EPOCH_OFFSET = -1
MAX_LISTED = 1000  # mismatches, lost records and damaged areas listed per partition or replica; the rest counted

HIGH_WATERMARKS = "replication-offset-checkpoint"
RECOVERY_POINTS = "recovery-point-offset-checkpoint"
LOG_START_OFFSETS = "log-start-offset-checkpoint"

Epochs = list[tuple[int, int]]  # (epoch, start offset), in order: a leader epoch cache


# --- the epoch cache, as LeaderEpochFileCache keeps it ------------------------------------------------------
def assign_epoch(epochs: Epochs, epoch: int, start: int) -> None:
    """``LeaderEpochFileCache.assign``: a batch of ``epoch`` at ``start`` appended; a new entry when the epoch
    differs from the latest or starts before it, after removing the entries it contradicts (an epoch as high or
    higher, or a start as late or later)."""
    if epoch < 0 or start < 0:
        return  # (magic 0/1 batches carry no epoch; Kafka refuses negative ones)
    if epochs and epochs[-1][0] == epoch and start >= epochs[-1][1]:
        return
    while epochs and (epochs[-1][0] >= epoch or epochs[-1][1] >= start):
        epochs.pop()
    epochs.append((epoch, start))


def truncate_from_end(epochs: Epochs, end_offset: int) -> Epochs:
    """``truncateFromEnd``: the entries starting at or after ``end_offset`` removed."""
    return [(e, s) for e, s in epochs if s < end_offset]


def truncate_from_start(epochs: Epochs, start_offset: int) -> Epochs:
    """``truncateFromStart``: entries before ``start_offset`` removed, the last of them kept, moved to it."""
    before = [(e, s) for e, s in epochs if s <= start_offset]
    after = [(e, s) for e, s in epochs if s > start_offset]
    return ([(before[-1][0], start_offset)] if before else []) + after


def end_offset_for(epochs: Epochs, requested: int, log_end_offset: int) -> tuple[int, int]:
    """``LeaderEpochFileCache.endOffsetFor``: (epoch, end offset) for ``requested``: the LEO for the latest
    epoch; else the largest epoch at or below it with the next epoch's start offset; the requested epoch with the
    first epoch's start when it is older than every one known; (-1, -1) when it is undefined or above all."""
    if requested == UNDEFINED_EPOCH or not epochs:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    if epochs[-1][0] == requested:
        return requested, log_end_offset
    higher = next(((e, s) for e, s in epochs if e > requested), None)
    if higher is None:
        return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
    floor = [(e, s) for e, s in epochs if e <= requested]
    if not floor:
        return requested, higher[1]
    return floor[-1][0], higher[1]


@dataclass
class Divergence:
    """Where a follower's log leaves the reference's: ``offset`` (the truncation point) and ``steps`` (how Kafka's
    fetcher gets there, one sentence per OffsetsForLeaderEpoch round)."""

    offset: int
    steps: list[str] = field(default_factory=list)


def divergence_point(follower_epochs: Epochs, follower_leo: int, follower_hw: int,
                     reference_epochs: Epochs, reference_leo: int) -> Divergence:
    """The offset a follower truncates to before fetching from the reference (see the module's docstring for the
    rule and where in Kafka it comes from)."""
    epochs = list(follower_epochs)
    leo = follower_leo
    steps: list[str] = []
    result: int | None = None
    for _ in range(len(epochs) + 2):  # each round that does not end drops at least the latest epoch
        if not epochs:
            result = follower_hw
            steps.append(f"no leader epoch: truncated to its high watermark {follower_hw}")
            break
        latest = epochs[-1][0]
        leader_epoch, leader_end = end_offset_for(reference_epochs, latest, reference_leo)
        if leader_end == UNDEFINED_EPOCH_OFFSET:
            result = follower_hw
            steps.append(f"epoch {latest} unknown to the reference: truncated to its high watermark {follower_hw}")
            break
        own_epoch, own_end = end_offset_for(epochs, leader_epoch, leo)
        if own_end == UNDEFINED_EPOCH_OFFSET:  # (UnifiedLog.endOffsetForEpoch: None)
            result = min(leader_end, leo)
            steps.append(f"epoch {latest}: the reference answers epoch {leader_epoch} ending at {leader_end}, older "
                         f"than every epoch here: truncated to {result}")
            break
        if own_epoch != leader_epoch:
            leo = min(own_end, leo)
            steps.append(f"epoch {latest}: the reference answers epoch {leader_epoch} ending at {leader_end}, which "
                         f"this replica lacks: truncated to the end of its epoch {own_epoch}, {leo}, and asked again")
            epochs = truncate_from_end(epochs, leo)
            continue
        result = min(own_end, leader_end, leo)
        steps.append(f"epoch {latest}: the reference answers epoch {leader_epoch} ending at {leader_end}; here it "
                     f"ends at {own_end}: truncated to {result}")
        break
    if result is None:  # (not reached: the loop ends when the epochs run out)
        result = follower_hw
    if result > reference_leo:
        steps.append(f"{result} is past the reference's log end: truncated to {reference_leo}")
        result = reference_leo
    return Divergence(result, steps)


# --- one replica --------------------------------------------------------------------------------------------
@dataclass
class Replica:
    """One copy of a partition: ``path`` (its directory), ``source`` (the path given that holds it), what its
    files and its log directory's checkpoints say, and whether its files are sound."""

    path: str
    source: str
    topic: str | None
    partition: int | None
    log_start_offset: int = 0
    log_end_offset: int = 0
    newest_offset: int | None = None
    high_watermark: int | None = None  # the checkpoint's (None: no entry)
    recovery_point: int | None = None
    log_start_checkpoint: int | None = None
    checkpoint_epochs: Epochs | None = None  # the leader-epoch-checkpoint's (None: no usable file)
    batch_epochs: Epochs = field(default_factory=list)
    segments: int = 0
    batches: int = 0
    damage: list[dict] = field(default_factory=list)  # each damaged area that fails (Damage.to_dict)
    damage_count: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def sound(self) -> bool:
        return self.damage_count == 0

    @property
    def epochs(self) -> Epochs:
        """The epoch cache Kafka would load: the checkpoint cut to the log (``truncateFromEnd(LEO)``,
        ``truncateFromStart(logStartOffset)``, as ``LogLoader`` does), or the batches' when there is none."""
        source = self.checkpoint_epochs if self.checkpoint_epochs is not None else self.batch_epochs
        return truncate_from_start(truncate_from_end(source, self.log_end_offset), self.log_start_offset)

    @property
    def latest_epoch(self) -> int:
        return self.epochs[-1][0] if self.epochs else UNDEFINED_EPOCH

    @property
    def effective_high_watermark(self) -> int:
        """Kafka's high watermark at start-up: the checkpoint's (0 without an entry), kept within the log start
        offset and the LEO (``Partition.createLog`` then ``updateHighWatermark``)."""
        hw = self.high_watermark if self.high_watermark is not None else 0
        return max(self.log_start_offset, min(hw, self.log_end_offset))

    def to_dict(self) -> dict:
        return {"path": self.path, "source": self.source, "logStartOffset": self.log_start_offset,
                "logEndOffset": self.log_end_offset, "highWatermark": self.high_watermark,
                "recoveryPoint": self.recovery_point, "logStartOffsetCheckpoint": self.log_start_checkpoint,
                "newestOffset": self.newest_offset, "leaderEpochs": _epochs_json(self.epochs),
                "checkpointEpochs": None if self.checkpoint_epochs is None else _epochs_json(self.checkpoint_epochs),
                "batchEpochs": _epochs_json(self.batch_epochs), "segments": self.segments,
                "batches": self.batches, "sound": self.sound, "damage": self.damage,
                "damageCount": self.damage_count, "notes": self.notes}


def _epochs_json(epochs: Epochs) -> list[dict]:
    return [{"epoch": e, "startOffset": s} for e, s in epochs]


@dataclass
class Head:
    """What is compared of a batch: its offsets, leader epoch, CRC and record count (``batch``: the batch)."""

    base: int
    last: int
    epoch: int
    crc: int
    count: int
    batch: object


def _head(batch) -> Head:
    try:
        base = batch.base_offset
    except FormatError:  # a magic 0/1 wrapper that does not decompress: its first offset is not known
        base = batch.last_offset
    epoch = batch.partition_leader_epoch if batch.magic >= 2 else UNDEFINED_EPOCH
    count = batch.records_count if batch.magic >= 2 else batch.last_offset - base + 1
    return Head(base, batch.last_offset, epoch, batch.crc, count, batch)


def walk(log: PartitionLog, start: int | None = None, on_damage=None) -> Iterator[Head]:
    """The readable batches of a partition in offset order (headers and CRCs; the read layer's walk past damage,
    magic 0/1 runs message by message), from the segment holding ``start`` on; ``on_damage(segment, damage)``
    gets each damaged area (a :class:`~kdump.read.damage.Damage`) and each segment that cannot be read (its
    OSError)."""
    segments = log.segments
    for i, segment in enumerate(segments):
        next_base = segments[i + 1].base_offset if i + 1 < len(segments) else None
        if start is not None and next_base is not None and next_base <= start:
            continue
        try:
            with SegmentReader(segment.log) as reader:
                foreign = foreign_start(reader)
                if foreign is not None:  # (text renamed .log...: said as such, not as damage in a log)
                    if on_damage is not None:
                        on_damage(segment.log, Damage.of_error(foreign, file=segment.log))
                    continue
                for item in by_batch(readable(reader, show_invalid=False, next_base=next_base)):
                    if isinstance(item, Damage):
                        if on_damage is not None:
                            on_damage(segment.log, item)
                    elif hasattr(item, "crc"):  # (not the final Stop)
                        yield _head(item)
        except OSError as e:  # a segment that cannot be read (or is gone): its batches are missing from the walk
            if on_damage is not None:
                on_damage(segment.log, e)


def _offset_checkpoint(log_dir: str, name: str, topic: str | None, partition: int | None,
                       notes: list[str]) -> int | None:
    path = os.path.join(log_dir, name)
    if topic is None or not os.path.isfile(path):
        return None
    try:
        cp = parse_any(path, kind=FileKind.OFFSET_CHECKPOINT.value)
    except (OSError, ValueError) as e:
        notes.append(f"{path}: cannot read: {e}")
        return None
    if cp.problems:
        notes.append(f"{path}: {cp.problems[0].message}")
    return next((off for t, p, off in cp.entries if t == topic and p == partition), None)


def survey(directory: str, source: str) -> Replica:
    """One replica surveyed (see the module's docstring): its checkpoints, and one walk of its batch headers."""
    log = PartitionLog(directory)
    rep = Replica(log.directory, source, log.topic, log.partition, segments=len(log.segments))
    log_dir = os.path.dirname(os.path.abspath(log.directory))
    rep.high_watermark = _offset_checkpoint(log_dir, HIGH_WATERMARKS, log.topic, log.partition, rep.notes)
    rep.recovery_point = _offset_checkpoint(log_dir, RECOVERY_POINTS, log.topic, log.partition, rep.notes)
    rep.log_start_checkpoint = _offset_checkpoint(log_dir, LOG_START_OFFSETS, log.topic, log.partition, rep.notes)
    lec = log.files.checkpoints.get(FileKind.LEADER_EPOCH_CHECKPOINT)
    if lec is not None:
        try:
            cp = parse_any(lec, kind=FileKind.LEADER_EPOCH_CHECKPOINT.value)
        except (OSError, ValueError) as e:
            rep.notes.append(f"{lec}: cannot read: {e}")
        else:
            if cp.problems:
                rep.notes.append(f"{lec}: {cp.problems[0].message} (the epochs the batches carry are used)")
            elif any(e < 0 or start < 0 for e, start in cp.entries):
                rep.notes.append(f"{lec}: a negative epoch or offset, which Kafka refuses to load (the epochs the "
                                 "batches carry are used)")
            else:
                # loaded as LeaderEpochFileCache loads it: each entry assigned, contradicted ones dropped
                rep.checkpoint_epochs = []
                for epoch, start in cp.entries:
                    assign_epoch(rep.checkpoint_epochs, epoch, start)
    else:
        rep.notes.append("no leader-epoch-checkpoint: the epochs the batches carry are used (Kafka would start "
                         "with those of the segments it recovers only)")
    first_base = log.segments[0].base_offset if log.segments else 0
    rep.log_start_offset = max(first_base, rep.log_start_checkpoint or 0)

    def damaged(path: str, damage: Damage | OSError) -> None:
        if isinstance(damage, OSError):
            rep.damage_count += 1
            rep.damage.append(error_object(path, "cannot-read", f"cannot read: {damage.strerror or damage}"))
        elif damage.fails:
            rep.damage_count += 1
            if len(rep.damage) < MAX_LISTED:
                rep.damage.append(damage.to_dict(path))

    last = None
    for head in walk(log, on_damage=damaged):
        rep.batches += 1
        assign_epoch(rep.batch_epochs, head.epoch, head.base)
        last = head.last
    rep.newest_offset = last
    rep.log_end_offset = last + 1 if last is not None else rep.log_start_offset
    if rep.checkpoint_epochs is not None:
        cut = truncate_from_start(truncate_from_end(rep.checkpoint_epochs, rep.log_end_offset), rep.log_start_offset)
        if cut != truncate_from_start(rep.batch_epochs, rep.log_start_offset):
            rep.notes.append(f"the leader-epoch-checkpoint {_epochs_text(cut)} differs from the epochs the batches "
                             f"carry {_epochs_text(rep.batch_epochs)}")
    return rep


def _epochs_text(epochs: Epochs) -> str:
    return "[" + ", ".join(f"{e}@{s}" for e, s in epochs) + "]"


# --- a partition's replicas compared ------------------------------------------------------------------------
@dataclass
class Loss:
    """What a follower loses when it truncates to ``offset``: ``records`` (count), their offset ranges, how many
    are below its high watermark (acknowledged), and with records asked for the records themselves."""

    replica: str
    offset: int
    steps: list[str]
    records: int = 0
    ranges: list[list[int]] = field(default_factory=list)  # [first, last] offsets, merged
    acknowledged: int = 0  # of them below the replica's high watermark
    listed: list = field(default_factory=list)  # kdump.format.columns.Record s, with records asked for
    not_listed: int = 0

    def add(self, first: int, last: int) -> None:
        if self.ranges and self.ranges[-1][1] + 1 >= first:
            self.ranges[-1][1] = max(self.ranges[-1][1], last)
        elif len(self.ranges) < MAX_LISTED:
            self.ranges.append([first, last])

    def to_dict(self) -> dict:
        return {"replica": self.replica, "offset": self.offset, "records": self.records,
                "offsets": [{"first": a, "last": b} for a, b in self.ranges], "acknowledged": self.acknowledged,
                "steps": self.steps}


@dataclass
class Mismatch:
    """A batch below the divergence point that is not the same on every replica: its ``offset`` (base) and
    ``last_offset`` (the reference's, else the replica's), the replicas that differ from the reference and how."""

    offset: int
    last_offset: int
    replicas: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"offset": self.offset, "lastOffset": self.last_offset, "replicas": self.replicas,
                "differences": self.differences}


@dataclass
class PartitionReplicas:
    """One topic-partition's replicas compared: the reference, each follower's divergence and verdict, the
    mismatches below the divergence points."""

    topic: str | None
    partition: int | None
    replicas: list[Replica]
    reference: int  # index in replicas
    divergence: dict[str, Loss] = field(default_factory=dict)  # follower path -> its loss
    verdicts: dict[str, str] = field(default_factory=dict)  # path -> status (the reference: REFERENCE)
    mismatches: list[Mismatch] = field(default_factory=list)
    mismatch_count: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def status(self) -> str:
        return max((v for v in self.verdicts.values()), key=lambda v: _WORSE[v], default=IN_SYNC).replace(
            REFERENCE, IN_SYNC)

    @property
    def key(self) -> str:
        return f"{self.topic}-{self.partition}" if self.topic is not None else self.replicas[0].path

    @property
    def sound(self) -> bool:
        return all(r.sound for r in self.replicas)

    def to_dict(self) -> dict:
        ref = self.replicas[self.reference]
        return {"topic": self.topic, "partition": self.partition, "status": self.status, "reference": ref.path,
                "replicas": [{**r.to_dict(), "status": self.verdicts.get(r.path)} for r in self.replicas],
                "divergence": [loss.to_dict() for loss in self.divergence.values()],
                "mismatches": [m.to_dict() for m in self.mismatches], "mismatchCount": self.mismatch_count,
                "notes": self.notes}


def choose_reference(replicas: Sequence[Replica], named: str | None = None) -> int:
    """The index of the reference: the replica under ``named`` (a path given) when there is one, else the one
    with the highest leader epoch, then the longest log (the first given on a tie)."""
    if named is not None:
        for i, r in enumerate(replicas):
            if _under(named, r):
                return i
    best = 0
    for i, r in enumerate(replicas):
        if (r.latest_epoch, r.log_end_offset) > (replicas[best].latest_epoch, replicas[best].log_end_offset):
            best = i
    return best


def _under(named: str, replica: Replica) -> bool:
    where = os.path.abspath(named)
    return (os.path.join(os.path.abspath(replica.path), "").startswith(os.path.join(where, ""))
            or os.path.abspath(replica.source) == where)


class _Cursor:
    """One follower's walk, one batch ahead, within the offsets it is compared over (``start``..``stop``)."""

    def __init__(self, replica: Replica, start: int, stop: int, loss: Loss, records: bool):
        self.replica, self.start, self.stop, self.loss, self.records = replica, start, stop, loss, records
        self.hw = replica.effective_high_watermark if replica.high_watermark is not None else None
        self._walk = walk(PartitionLog(replica.path), start)
        self.head: Head | None = None
        self.advance()

    def advance(self) -> None:
        """The next batch inside the compared range; the batches at or above the divergence point counted as
        lost on the way. A batch that holds the divergence point (starts below it) is lost whole, as Kafka's
        ``LogSegment.truncateTo`` cuts the segment at the batch holding the offset: the offsets compared then end
        at its base."""
        for head in self._walk:
            if head.last >= self.loss.offset:
                self.stop = min(self.stop, head.base)
                self._lost(head)
                continue
            if head.base < self.start:
                continue
            self.head = head
            return
        self.head = None

    def _lost(self, head: Head) -> None:
        loss, hw = self.loss, self.hw
        dense = head.count == head.last - head.base + 1  # one record per offset: counted from the header
        if dense and not self.records:
            loss.records += head.count
            loss.add(head.base, head.last)
            if hw is not None:
                loss.acknowledged += max(0, min(head.last, hw - 1) - head.base + 1)
            return
        # a compacted batch (offsets without records), or the records asked for: its records read
        try:
            kept = list(head.batch.records(DEFAULT_MAX_DECOMPRESSED_BYTES))  # type: ignore[attr-defined]
        except FormatError:  # (records unreadable: the header's count)
            loss.records += head.count
            loss.add(head.base, head.last)
            return
        loss.records += len(kept)
        if kept:
            loss.add(kept[0].offset, kept[-1].offset)
        if hw is not None:
            loss.acknowledged += sum(1 for r in kept if r.offset < hw)
        if self.records:
            room = max(MAX_LISTED - len(loss.listed), 0)
            loss.listed.extend(kept[:room])
            loss.not_listed += max(len(kept) - room, 0)


def compare_partition(replicas: list[Replica], reference: int, *, records: bool = False) -> PartitionReplicas:
    """The divergence point of each follower and the mismatches below them (see the module's docstring); the
    reference is walked once, each follower beside it."""
    ref = replicas[reference]
    result = PartitionReplicas(ref.topic, ref.partition, replicas, reference)
    result.verdicts[ref.path] = REFERENCE
    cursors: list[_Cursor] = []
    for r in replicas:
        if r is ref:
            continue
        d = divergence_point(r.epochs, r.log_end_offset, r.effective_high_watermark, ref.epochs, ref.log_end_offset)
        loss = result.divergence[r.path] = Loss(r.path, d.offset, d.steps)
        start = max(ref.log_start_offset, r.log_start_offset)
        cursors.append(_Cursor(r, start, d.offset, loss, records))
    inconsistent: set[str] = set()

    def mismatch(offset: int, last: int, replica: str, what: str) -> None:
        inconsistent.add(replica)
        if result.mismatches and result.mismatches[-1].offset == offset:
            m = result.mismatches[-1]
        else:
            result.mismatch_count += 1
            if len(result.mismatches) >= MAX_LISTED:
                return
            m = Mismatch(offset, last)
            result.mismatches.append(m)
        if replica not in m.replicas:
            m.replicas.append(replica)
        m.differences.append(f"{replica}: {what}")

    stop = max((c.stop for c in cursors), default=0)
    for head in walk(PartitionLog(ref.path), min((c.start for c in cursors), default=None)):
        if head.base >= stop:
            break
        for c in cursors:
            if head.base < c.start or head.last >= c.stop:
                continue
            while c.head is not None and c.head.base < head.base:
                mismatch(c.head.base, c.head.last, c.replica.path,
                         f"batch {c.head.base}-{c.head.last} is not on the reference")
                c.advance()
            h = c.head
            if h is None or h.base > head.base:
                mismatch(head.base, head.last, c.replica.path,
                         f"lacks the reference's batch {head.base}-{head.last}")
                continue
            diffs = [f"{name} {mine} (reference {theirs})" for name, mine, theirs in
                     (("last offset", h.last, head.last), ("leader epoch", h.epoch, head.epoch),
                      ("CRC", f"0x{h.crc:08x}", f"0x{head.crc:08x}")) if mine != theirs]
            if diffs:
                mismatch(head.base, head.last, c.replica.path, "; ".join(diffs))
            c.advance()
    for c in cursors:  # what is left below the divergence point is on the follower only
        while c.head is not None:
            mismatch(c.head.base, c.head.last, c.replica.path,
                     f"batch {c.head.base}-{c.head.last} is not on the reference")
            c.advance()
    result.mismatches.sort(key=lambda m: m.offset)
    for c in cursors:
        r, loss = c.replica, c.loss
        if r.path in inconsistent:
            result.verdicts[r.path] = INCONSISTENT
        elif loss.records or r.log_end_offset > loss.offset:
            result.verdicts[r.path] = DIVERGED
        elif r.log_end_offset < ref.log_end_offset:
            result.verdicts[r.path] = BEHIND
        else:
            result.verdicts[r.path] = IN_SYNC
    return result


# --- paths to partitions --------------------------------------------------------------------------------------
@dataclass
class Found:
    """The partitions of the paths given: ``groups`` (key -> [(partition directory, path given)]) in key order,
    those held by one path only (``alone``), and the paths that hold no partition (``empty``)."""

    groups: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    alone: list[tuple[str, str]] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)
    # a second copy of a partition under one path, or a directory reached again: passed over
    duplicates: list[tuple[str, str]] = field(default_factory=list)


def find_partitions(paths: Sequence[str]) -> Found:
    """Each path's partition directories (:func:`kdump.read.scan.scan`), grouped by topic-partition; partition
    directories named on their own that are not named ``<topic>-<n>`` form one group."""
    found = Found()
    groups: dict[str, list[tuple[str, str]]] = {}
    directories: set[str] = set()  # each partition directory is one replica, however often it is reached
    for p in paths:
        parts = [log for log in scan([p]).partitions if log.segments]
        if not parts:
            found.empty.append(p)
            continue
        seen: set[str] = set()
        for log in parts:
            named = topic_partition(os.path.basename(os.path.abspath(log.directory)))
            key = f"{named[0]}-{named[1]}" if named is not None else "(unnamed)"
            real = os.path.realpath(log.directory)
            if key in seen or real in directories:
                found.duplicates.append((log.directory, p))
                continue
            seen.add(key)
            directories.add(real)
            groups.setdefault(key, []).append((log.directory, p))
    for key in sorted(groups, key=_order):
        if len(groups[key]) >= 2:
            found.groups[key] = groups[key]
        else:
            found.alone.extend(groups[key])
    return found


def _order(key: str):
    named = topic_partition(key)
    return (named[0], named[1]) if named is not None else (key, -1)


def compare(paths: Sequence[str], *, reference: str | None = None, records: bool = False, jobs: int = 1,
            mapper: Callable[[Callable, list[tuple]], list] | None = None) -> tuple[Found, list[PartitionReplicas]]:
    """Every topic-partition held by two or more of ``paths`` compared: the surveys first, one per replica, then
    the comparisons, one per partition, each a call of ``mapper(fn, calls)`` (``[fn(*args) for args in calls]``
    somewhere: by default in ``jobs`` worker processes, :func:`kdump.jobs.ordered_map`; Spark's tasks for
    ``kdump spark replicas``)."""
    found = find_partitions(paths)
    calls = [(d, src) for members in found.groups.values() for d, src in members]
    if mapper is None:
        from kdump.jobs import ordered_map, path_work
        # each replica's directory and its segments' bytes, counted once: a survey weighs its replica's, a
        # comparison its replicas' together
        weighed = path_work([d for d, _ in calls])
        size_of = dict(zip(weighed.units, weighed.sizes, strict=True))

        def weight(args: tuple) -> int:
            return size_of[args[0]] if isinstance(args[0], str) else sum(size_of[r.path] for r in args[0])

        def mapper(fn, calls):
            return ordered_map(fn, calls, jobs, sizes=[weight(args) for args in calls])
    surveyed = mapper(survey, calls)
    by_dir = dict(zip(calls, surveyed, strict=True))
    work = []
    for members in found.groups.values():
        reps = [by_dir[m] for m in members]
        work.append((reps, choose_reference(reps, reference), records, reference))
    return found, mapper(_compare_call, work)


def _compare_call(replicas: list[Replica], reference: int, records: bool, named: str | None
                  ) -> PartitionReplicas:
    result = compare_partition(replicas, reference, records=records)
    if named is not None and not any(_under(named, r) for r in replicas):
        result.notes.append(f"no copy of it under {named}: the reference is the replica with the highest leader "
                            "epoch, then the longest log")
    return result
