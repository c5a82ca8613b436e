"""Rebuild ``.index``, ``.timeindex`` and ``.txnindex`` exactly as Kafka's segment recovery writes them
(``LogSegment.recover``, spec §5.6), trimmed, atomically, without ever touching the ``.log``.

Recovery walks the batches from the start of the log:

1. each batch must be valid (``ensureValid``: CRC, size); the first one that is not ends the walk (Kafka then
   truncates the log there; kdump only reports it) and so does a size field below 14 or an unknown magic;
2. its last offset must fit a 32-bit offset relative to the base offset (else Kafka splits the segment:
   kdump refuses);
3. ``if batch.maxTimestamp > maxSoFar``: remember (maxTimestamp, batch.lastOffset);
4. ``if validBytes - lastIndexEntry > index.interval.bytes``: offset entry (batch.lastOffset, validBytes) and
   time entry (maxSoFar, offsetOfMaxSoFar) if its timestamp is above the last one; ``lastIndexEntry = validBytes``;
5. ``validBytes += batch size``; magic-2 batches update the producer state, whose completed aborted
   transactions become ``.txnindex`` entries (:mod:`kdump.read.producer_state`), and the leader epoch cache;
6. at the end the time index gets (maxSoFar, offsetOfMaxSoFar) once more if newer, and both indexes are trimmed.

Recovery is batch-granular: one index candidate per batch. Kafka's append path was append-granular until
KAFKA-806 (Kafka 4.0): a follower append of several batches got one entry (last offset of the *last* batch,
position of the *first*), so indexes written by older followers can differ from a rebuild; leader appends
(one batch each) index identically. Time index entries also come from every clean segment close or roll
(``LogSegment.onBecomeInactiveSegment``/``close`` append the max timestamp so far), so a broker that was
restarted has more time entries than recovery writes. docs/index.md shows both on the corpus.

The transaction index depends on transactions opened before the segment: :func:`rebuild_indexes` seeds the
producer state like Kafka's ``loadProducerState``, from the newest readable producer snapshot at or below the
segment's base offset in the same directory, then replays the earlier segments from that offset.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from kdump.errors import KdumpError, WriteError
from kdump.format.legacy import LegacyRun
from kdump.read import offset_index as oi
from kdump.read import time_index as ti
from kdump.read.damage import foreign_start
from kdump.read.logdir import SEGMENT_COMPANIONS, Partition, sibling
from kdump.read.partition import PartitionLog
from kdump.read.producer_state import ProducerProblem, ProducerStates, TxnAborted
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES, SegmentReader, base_offset_from_name
from kdump.report.findings import ERROR, WARNING, FileReport

if TYPE_CHECKING:
    # the writer's module (hashlib, tempfile, digest threads: 0.013 s) is imported where files are written: a
    # check (index check --deep, verify) recovers segments and writes nothing, once per --jobs worker
    from kdump.write.group import AtomicGroup
    from kdump.write.killed import Leftover

DEFAULT_INDEX_INTERVAL_BYTES = 4096  # log.index.interval.bytes
DEFAULT_MAX_INDEX_BYTES = 10 * 1024 * 1024  # log.index.size.max.bytes / segment.index.bytes
INT32_MAX = 2**31 - 1


class RebuildError(KdumpError):
    """The log is such that Kafka's recovery would fail (not merely truncate), so no index is written."""

    def __init__(self, message: str, *, code: str, position: int | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.position = position

    def __reduce__(self):  # keyword-only arguments: pickled whole (``--jobs`` workers hand it to the parent)
        return _rebuild_error, (self.message, self.code, self.position)


def _rebuild_error(message: str, code: str, position: int | None) -> RebuildError:
    return RebuildError(message, code=code, position=position)


class ExistingCheck(Protocol):
    """Checks an existing index file against its segment: :class:`kdump.index.check.CompanionChecks`, handed in by
    the caller (index check imports this module, so this module does not import it)."""

    def report(self, path: str, kind: str, log_path: str) -> FileReport: ...


@dataclass
class Recovery:
    """What recovery computed for one segment (file contents trimmed, ready to write)."""

    log_path: str
    base_offset: int
    index_interval_bytes: int
    offset_index: bytearray = field(default_factory=bytearray)
    time_index: bytearray = field(default_factory=bytearray)
    aborted: list = field(default_factory=list)  # AbortedTxn
    leader_epochs: list = field(default_factory=list)  # (epoch, start offset) assignments
    batches: int = 0
    valid_bytes: int = 0
    log_size: int = 0
    stop_code: str | None = None  # why the walk ended before the end of the log
    stop_message: str | None = None
    problems: list = field(default_factory=list)  # ProducerProblem: what Kafka's loading throws for

    @property
    def truncated_bytes(self) -> int:
        """Bytes Kafka's recovery would cut from the end of the log."""
        return self.log_size - self.valid_bytes

    @property
    def offset_entry_count(self) -> int:
        return len(self.offset_index) // oi.ENTRY_SIZE

    @property
    def time_entry_count(self) -> int:
        return len(self.time_index) // ti.ENTRY_SIZE

    def offset_entries(self) -> list[oi.OffsetPosition]:
        entries = (oi.ENTRY.unpack_from(self.offset_index, k) for k in range(0, len(self.offset_index), oi.ENTRY_SIZE))
        return [oi.OffsetPosition(self.base_offset + r, p) for r, p in entries]

    def time_entries(self) -> list[ti.TimestampOffset]:
        entries = (ti.ENTRY.unpack_from(self.time_index, k) for k in range(0, len(self.time_index), ti.ENTRY_SIZE))
        return [ti.TimestampOffset(t, self.base_offset + r) for t, r in entries]


def recover_segment(log_path, *, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
                    producer_state: ProducerStates | None = None, leader_epoch: int | None = None,
                    max_index_bytes: int = DEFAULT_MAX_INDEX_BYTES,
                    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES, base_offset: int | None = None) -> Recovery:
    """Compute the indexes ``LogSegment.recover`` would write for ``log_path``. ``producer_state`` is
    updated in place (pass the state left by the previous segments); ``leader_epoch`` is the latest epoch
    of the leader epoch cache before this segment; ``base_offset`` is the segment's base offset when ``log_path`` is
    not named after it (a converted segment still under its temporary name). Raises :class:`RebuildError` where
    Kafka's recovery throws instead of truncating, OSError if the log cannot be read."""
    log_path = os.fspath(log_path)
    base = base_offset if base_offset is not None else base_offset_from_name(log_path)
    if base is None:
        raise RebuildError(f"{log_path}: the file name is not <20-digit base offset>.log, so the base offset the "
                           "index entries are relative to is not known", code="file-name-invalid")
    if index_interval_bytes < 0:
        raise ValueError("index_interval_bytes must be >= 0")
    state = producer_state if producer_state is not None else ProducerStates()
    rec = Recovery(log_path, base, index_interval_bytes)
    walk = _IndexWalk(rec, base, index_interval_bytes, max_index_bytes)
    limit = 1 << 20
    with SegmentReader(log_path, max_batch_bytes=max_batch_bytes) as reader:
        rec.log_size = reader.file_size
        foreign = foreign_start(reader)
        if foreign is not None:  # e.g. text renamed .log: said as such, and no (empty) index written for it
            raise RebuildError(foreign.message, code=foreign.code, position=0)
        # Kafka's walk, with plain magic 0/1 messages a run at a time (no object per message); each message is
        # still the batch recovery counts, indexes and stops at
        for batch in reader.runs():
            if isinstance(batch, LegacyRun):
                if not walk.run(batch):
                    break
                continue
            if not batch.is_valid():
                walk.corrupt(batch)
                break
            walk.batch(batch.position, batch.last_offset, batch.max_timestamp, batch.size)
            if batch.magic >= 2:
                ple = batch.partition_leader_epoch
                if ple >= 0 and (leader_epoch is None or ple > leader_epoch):
                    rec.leader_epochs.append((ple, batch.base_offset))
                    leader_epoch = ple
                for event in state.apply(batch, limit):
                    if isinstance(event, TxnAborted):
                        rec.aborted.append(event.aborted_txn())
                    elif isinstance(event, ProducerProblem) and event.fatal:
                        rec.problems.append(event)
        tail = reader.tail
    rec.valid_bytes = walk.valid
    if rec.stop_code is None and tail is not None and tail.kind not in ("end", "limit"):
        rec.stop_code = tail.code or tail.kind
        if tail.kind in ("short", "truncated"):
            rec.stop_message = f"{tail.message} (Kafka's recovery drops it)"
        elif tail.code == "batch-too-large":
            raise RebuildError(f"batch at byte {tail.position}: {tail.message}", code="batch-too-large",
                               position=tail.position)
        else:
            rec.stop_message = tail.message
    walk.finish()
    return rec


class _IndexWalk:
    """``LogSegment.recover``'s index entries, one batch at a time (steps 2-4 of the module's docstring)."""

    def __init__(self, rec: Recovery, base: int, index_interval_bytes: int, max_index_bytes: int):
        self.rec, self.base, self.interval, self.max_index_bytes = rec, base, index_interval_bytes, max_index_bytes
        self.max_offset_entries = max_index_bytes // oi.ENTRY_SIZE
        self.max_time_entries = max_index_bytes // ti.ENTRY_SIZE
        self.max_ts, self.max_ts_offset = -1, base  # TimeIndex.lastEntry() of an empty index: (NO_TIMESTAMP, base)
        self.last_time = (-1, base)
        self.time_entries = 0
        self.last_index_offset: int | None = None
        self.valid = 0
        self.last_index_entry = 0

    def corrupt(self, batch) -> None:
        """The first batch that fails its CRC: where recovery stops."""
        rec = self.rec
        kind = "Record batch" if batch.magic >= 2 else "Record"
        rec.stop_code = "crc-mismatch"
        rec.stop_message = f"{kind} is corrupt (stored crc = {batch.crc}, computed crc = {batch.compute_crc()})"

    def run(self, run: LegacyRun) -> bool:
        """The plain messages of a run, each a batch; False at the first that fails its CRC (where recovery stops)."""
        cols = run.columns
        offsets, timestamps, sizes, valid = cols.offsets, cols.timestamps, cols.sizes, run.valid
        position = run.position
        step = self.batch
        for i in range(cols.count):
            if not valid[i]:
                self.corrupt(run.message_at(i))
                return False
            step(position, offsets[i], timestamps[i], sizes[i])
            position += sizes[i]
        return True

    def batch(self, position: int, last: int, max_timestamp: int, size: int) -> None:
        """One valid batch (its position, last offset, max timestamp and size)."""
        rec, base = self.rec, self.base
        if not 0 <= last - base <= INT32_MAX:
            raise RebuildError(f"batch at byte {position}: last offset {last} does not fit a 32-bit offset "
                               f"relative to the base offset {base} (Kafka's recovery throws "
                               "LogSegmentOffsetOverflowException and splits the segment)",
                               code="offset-overflow", position=position)
        if max_timestamp > self.max_ts:
            self.max_ts, self.max_ts_offset = max_timestamp, last
        if self.valid - self.last_index_entry > self.interval:
            if self.last_index_offset is not None and last <= self.last_index_offset:
                raise RebuildError(f"batch at byte {position}: offset {last} is not above the last indexed "
                                   f"offset {self.last_index_offset} (Kafka's recovery throws InvalidOffsetException)",
                                   code="offset-not-increasing", position=position)
            if len(rec.offset_index) // oi.ENTRY_SIZE >= self.max_offset_entries:
                raise RebuildError(f"batch at byte {position}: the offset index is full "
                                   f"({self.max_offset_entries} entries of segment.index.bytes="
                                   f"{self.max_index_bytes}); Kafka's recovery fails here",
                                   code="index-full", position=position)
            rec.offset_index += oi.encode_entry(base, last, self.valid)
            self.last_index_offset = last
            if self.time_entries >= self.max_time_entries - 1:  # TimeIndex.isFull keeps the last slot for the roll
                raise RebuildError(f"batch at byte {position}: the time index is full; Kafka's recovery "
                                   "fails here", code="index-full", position=position)
            if self.time_entries and self.max_ts_offset < self.last_time[1]:
                raise RebuildError(f"batch at byte {position}: time index offset {self.max_ts_offset} is below "
                                   f"the last one {self.last_time[1]} (Kafka's recovery throws "
                                   "InvalidOffsetException)", code="offset-not-increasing", position=position)
            if self.max_ts > self.last_time[0]:
                rec.time_index += ti.encode_entry(base, self.max_ts, self.max_ts_offset)
                self.last_time = (self.max_ts, self.max_ts_offset)
                self.time_entries += 1
            self.last_index_entry = self.valid
        self.valid += size
        rec.batches += 1

    def finish(self) -> None:
        if self.time_entries and self.max_ts_offset < self.last_time[1]:
            raise RebuildError(f"time index offset {self.max_ts_offset} is below the last one {self.last_time[1]}",
                               code="offset-not-increasing")
        if self.max_ts > self.last_time[0]:  # the final entry a clean close appends (skipFullCheck)
            self.rec.time_index += ti.encode_entry(self.base, self.max_ts, self.max_ts_offset)


# --- producer state before a segment (LogLoader.loadProducerState) -------------------------------------
def state_before(directory: str, base_offset: int, *, notes: list | None = None,
                 partition: Partition | None = None) -> ProducerStates:
    """Producer state at ``base_offset`` of the partition in ``directory``: the newest readable snapshot at or
    below it, then the earlier segments replayed from the snapshot's offset (Kafka's ``loadProducerState``, done
    by :meth:`kdump.read.partition.PartitionLog.producers`)."""
    log = PartitionLog(partition if partition is not None else Partition(directory))
    return log.producers(base_offset, snapshot_notes=notes).state


# --- writing ----------------------------------------------------------------------------------------------
def index_paths(log_path: str, out_dir: str | None) -> dict[str, str]:
    """Where a segment's rebuilt indexes go: beside it (:func:`kdump.read.logdir.sibling`), or under the same names
    in ``out_dir``."""
    directory = out_dir if out_dir is not None else os.path.dirname(os.path.abspath(log_path))
    stem = os.path.join(directory, os.path.basename(log_path))
    return {kind.value: sibling(stem, kind) for kind in SEGMENT_COMPANIONS}


@dataclass
class RebuildOutcome:
    recovery: Recovery
    written: list = field(default_factory=list)  # paths, in index/timeindex/txnindex order
    backups: list = field(default_factory=list)
    unchanged: list = field(default_factory=list)  # existing files that already hold what recovery writes
    kept: list = field(default_factory=list)  # existing files that differ from it but check clean against the log
    notes: list = field(default_factory=list)


def _verify_offset_index(expected: bytes, base: int):
    def verify(tmp_path: str) -> None:
        with oi.OffsetIndex(tmp_path, base_offset=base) as idx:
            if idx.partial_bytes or idx.sanity_problems():
                raise KdumpError(f"rebuilt offset index fails Kafka's sanity check: {idx.sanity_problems()}")
            prev = None
            for _, e in idx.iter_entries():
                if prev is not None and (e.offset <= prev.offset or e.position <= prev.position):
                    raise KdumpError(f"rebuilt offset index is not increasing at offset {e.offset}")
                prev = e
    return verify


def _verify_time_index(base: int):
    def verify(tmp_path: str) -> None:
        with ti.TimeIndex(tmp_path, base_offset=base) as idx:
            if idx.partial_bytes or idx.sanity_problems():
                raise KdumpError(f"rebuilt time index fails Kafka's sanity check: {idx.sanity_problems()}")
    return verify


def write_recovery(rec: Recovery, out_dir: str | None = None, *, force: bool = False,
                   existing: ExistingCheck | None = None) -> RebuildOutcome:
    """Write what :func:`recover_segment` computed: ``.index`` and ``.timeindex`` always (empty when there
    are no entries, as Kafka's trimmed files are), ``.txnindex`` when there are aborted transactions or one
    exists already (Kafka's recovery truncates it to empty). Existing files are refused unless ``force``; then
    only the files that differ are rewritten, each old one kept as ``.bak`` (one per file). All targets are
    checked before anything is written, and they are placed as one :class:`~kdump.write.group.AtomicGroup`.
    ``existing``: keep an existing file that differs but checks clean against the log (see :func:`add_recovery`)."""
    from kdump.write.lock import partition_lock
    if out_dir is not None and not os.path.isdir(out_dir):
        raise NotADirectoryError(f"{out_dir}: not a directory")
    with partition_lock(out_dir if out_dir is not None else os.path.dirname(rec.log_path)):
        group, outcome, index_path = _recovery_group(rec, out_dir, force, existing=existing)
        try:
            group.commit()
        except FileExistsError:
            raise
        except OSError as e:  # every step here writes (or lists the directory written to)
            if isinstance(e, WriteError):
                raise
            raise WriteError(e.errno, e.strerror or str(e), e.filename or index_path) from e
    return _placed(group, outcome)


def _recovery_group(rec: Recovery, out_dir: str | None, force: bool, found: list[Leftover] | None = None,
                    existing: ExistingCheck | None = None) -> tuple[AtomicGroup, RebuildOutcome, str]:
    """The group of ``rec``'s index files, written and ready to commit; its outcome; the ``.index`` path.
    ``found``: the output directory's leftovers, listed once for a whole partition."""
    outcome = RebuildOutcome(rec)
    if out_dir is not None and not os.path.isdir(out_dir):
        raise NotADirectoryError(f"{out_dir}: not a directory")
    from kdump.write.group import AtomicGroup
    paths = index_paths(rec.log_path, out_dir)
    try:
        group = AtomicGroup(os.path.dirname(paths["index"]), overwrite=force, protect=[rec.log_path])
        add_recovery(group, rec, paths, outcome, found, existing)
    except (FileExistsError, WriteError):
        raise
    except OSError as e:  # every step here writes (or lists the directory written to)
        raise WriteError(e.errno, e.strerror or str(e), e.filename or paths["index"]) from e
    return group, outcome, paths["index"]


def _placed(group: AtomicGroup, outcome: RebuildOutcome) -> RebuildOutcome:
    """``outcome`` once ``group`` is committed: what was written, what was kept as ``.bak``."""
    unchanged = {os.path.abspath(p) for p in outcome.unchanged}
    outcome.written = [m.path for m in group.members if m.path not in unchanged]
    outcome.kept = [os.path.abspath(p) for p in outcome.kept]
    outcome.backups = group.backups
    return outcome


def add_recovery(group: AtomicGroup, rec: Recovery, paths: dict[str, str], outcome: RebuildOutcome,
                 found: list[Leftover] | None = None, existing: ExistingCheck | None = None) -> None:
    """Add the index files of ``rec`` to ``group``, to be written at ``paths`` (kind name -> path): the stale
    leftovers of an interrupted run removed first (noted in ``outcome``), files that already hold these bytes left
    alone (``outcome.unchanged``), other existing files refused unless the group may replace them
    (FileExistsError). With ``existing`` (``index rebuild``: the segment is the one the files index), an existing
    file that differs but checks clean against the log is kept too (``outcome.kept``: written by Kafka's append
    path, which indexes differently from recovery); then a rerun after a kill finishes the job without
    ``--force``. The ``.index`` is the group's last file; when the group places two or more files it is placed
    again even if unchanged (and not kept), so that its absence marks every intermediate state (see
    :mod:`kdump.write.group`)."""
    contents = {"index": bytes(rec.offset_index), "timeindex": bytes(rec.time_index),
                "txnindex": b"".join(t.encode() for t in rec.aborted)}
    targets = ["index", "timeindex"]
    if rec.aborted or os.path.lexists(paths["txnindex"]):
        targets.append("txnindex")
    refused = set(group.clean([paths[k] for k in targets], found))
    outcome.notes.extend(f"removed {p}: left by an interrupted kdump run" for p in group.cleaned)
    changed = [k for k in targets if not _holds(paths[k], contents[k])]
    outcome.unchanged.extend(paths[k] for k in targets if k not in changed)
    kept, unsound = _sound_existing([k for k in changed if paths[k] in refused], paths, rec, existing)
    if unsound:
        raise FileExistsError(f"{'; '.join(unsound)} (not replaced unless asked to; the old files are then kept "
                              "as .bak)")
    outcome.kept.extend(paths[k] for k in kept)
    changed = [k for k in changed if k not in kept]
    verifiers = {"index": _verify_offset_index(contents["index"], rec.base_offset),
                 "timeindex": _verify_time_index(rec.base_offset), "txnindex": None}
    if len(changed) + len(group.members) >= 2 and "index" not in changed and "index" not in kept:
        changed.insert(0, "index")  # rewritten unchanged (no new .bak): the group's last file
    for k in changed:
        f = group.add(paths[k], verify=verifiers[k], last=k == "index", backup=paths[k] not in outcome.unchanged)
        f.write(contents[k])


def _sound_existing(kinds: list[str], paths: dict[str, str], rec: Recovery,
                    existing: ExistingCheck | None) -> tuple[list[str], list[str]]:
    """Of the existing files of ``kinds`` (which differ from what recovery writes and may not be replaced): those
    that check clean against the log (kept), and for the others what is wrong with them."""
    kept, unsound = [], []
    for k in kinds:
        report = existing.report(paths[k], k, rec.log_path) if existing is not None else None
        if report is not None and report.status == "ok":
            kept.append(k)
        elif report is None:
            unsound.append(f"{paths[k]} exists")
        else:
            first = report.io_error or next(f.message for f in report.findings if f.severity in (ERROR, WARNING))
            unsound.append(f"{paths[k]} exists and does not check clean against the log ({first})")
    return kept, unsound


def _holds(path: str, content: bytes) -> bool:
    """``path`` is a regular file whose bytes are ``content`` (index files are small: read whole)."""
    try:
        if not os.path.isfile(path) or os.path.getsize(path) != len(content):
            return False
        with open(path, "rb") as f:
            return f.read() == content
    except OSError:
        return False


def rebuild_segment(log_path, out_dir=None, *, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
                    force: bool = False, producer_state: ProducerStates | None = None,
                    leader_epoch: int | None = None, max_index_bytes: int = DEFAULT_MAX_INDEX_BYTES,
                    existing: ExistingCheck | None = None) -> RebuildOutcome:
    """Recover one segment and write its indexes. Without ``producer_state``, the state before the segment is
    derived from its directory (:func:`state_before`). ``existing``: keep existing files that check clean (see
    :func:`add_recovery`); without it they are refused unless ``force``."""
    log_path = os.path.abspath(os.fspath(log_path))
    notes: list = []
    if producer_state is None:
        base = base_offset_from_name(log_path)
        if base is not None:
            producer_state = state_before(os.path.dirname(log_path), base, notes=notes)
    rec = recover_segment(log_path, index_interval_bytes=index_interval_bytes, producer_state=producer_state,
                          leader_epoch=leader_epoch, max_index_bytes=max_index_bytes)
    outcome = write_recovery(rec, out_dir, force=force, existing=existing)
    outcome.notes.extend(notes)
    return outcome


def rebuild_indexes(log_path, out_dir=None, *, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
                    force: bool = False) -> list[str]:
    """Write ``.index``, ``.timeindex`` and (when needed) ``.txnindex`` for the segment ``log_path`` exactly as
    Kafka's recovery would, next to it or into ``out_dir``; returns the paths written.

    Never touches the ``.log``. Raises FileExistsError if an index exists and not ``force`` (with ``force``
    the old files are kept as ``.bak``), :class:`RebuildError` where Kafka's recovery itself would fail,
    OSError for unreadable input. A damaged tail is not an error: the indexes cover the valid part, as after
    Kafka's recovery (see :func:`rebuild_segment` for the details, including the bytes Kafka would truncate).
    """
    return rebuild_segment(log_path, out_dir, index_interval_bytes=index_interval_bytes, force=force).written


# Segments whose index files are committed together by rebuild_directory: each commit costs one file-system sync
# and a few directory fsyncs, whatever its size; a batch holds three open temporaries per segment and their bytes.
REBUILD_BATCH_SEGMENTS = 256
REBUILD_BATCH_BYTES = 64 << 20


def rebuild_directory(directory, out_dir=None, *, index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES,
                      force: bool = False, existing: ExistingCheck | None = None,
                      progress=None) -> list[RebuildOutcome]:
    """Every segment of a partition directory, in offset order, carrying producer state and leader epoch
    from one segment to the next. Stops at the first segment that raises (the segments before it are written).
    ``existing``: as for :func:`rebuild_segment` (then a rebuild that was killed is finished by the next one).
    ``progress(n)``: n more bytes of log recovered, as each segment is.

    The segments' files are placed in batches (:func:`kdump.write.group.commit_groups`): each segment's files still
    appear together, as with :func:`write_recovery`, but a partition of 10,000 small segments takes seconds,
    not the minutes of about ten fsyncs per segment; the directory's leftovers are listed once, not per segment."""
    partition = Partition(directory)
    if not partition.segments:
        return []
    from kdump.write.lock import partition_lock
    with partition_lock(out_dir if out_dir is not None else partition.directory):
        return _rebuild_directory(partition, out_dir, index_interval_bytes, force, existing, progress)


def _rebuild_directory(partition: Partition, out_dir, index_interval_bytes: int, force: bool,
                       existing: ExistingCheck | None, progress=None) -> list[RebuildOutcome]:
    outcomes: list[RebuildOutcome] = []
    from kdump.write.group import commit_groups
    from kdump.write.killed import leftovers
    notes: list = []
    state = state_before(partition.directory, partition.segments[0].base_offset, notes=notes, partition=partition)
    epoch = None
    pending: list[tuple[AtomicGroup, RebuildOutcome, str]] = []
    pending_bytes = 0
    found: dict[str, list[Leftover]] = {}  # output directory -> its leftovers, listed once

    def commit_pending() -> None:
        nonlocal pending_bytes
        if not pending:
            return
        try:
            commit_groups([g for g, _, _ in pending])
        except FileExistsError:
            raise
        except OSError as e:
            raise WriteError(e.errno, e.strerror or str(e), e.filename or pending[0][2]) from e
        outcomes.extend(_placed(g, o) for g, o, _ in pending)
        pending.clear()
        pending_bytes = 0

    try:
        for seg in partition.segments:
            try:
                rec = recover_segment(seg.log, index_interval_bytes=index_interval_bytes, producer_state=state,
                                      leader_epoch=epoch)
                target = os.path.dirname(index_paths(rec.log_path, out_dir)["index"])
                if target not in found:
                    found[target] = leftovers(target)
                group, outcome, index_path = _recovery_group(rec, out_dir, force, found[target], existing)
            except Exception:
                commit_pending()  # the segments before this one are written, as they were one by one
                raise
            if progress is not None:
                progress(rec.valid_bytes + rec.truncated_bytes)
            if rec.leader_epochs:
                epoch = rec.leader_epochs[-1][0]
            outcome.notes.extend(notes)
            notes = []
            pending.append((group, outcome, index_path))
            pending_bytes += len(rec.offset_index) + len(rec.time_index)
            if len(pending) >= REBUILD_BATCH_SEGMENTS or pending_bytes >= REBUILD_BATCH_BYTES:
                commit_pending()
        commit_pending()
    except BaseException:
        for g, _, _ in pending:
            g.abort()
        raise
    return outcomes

