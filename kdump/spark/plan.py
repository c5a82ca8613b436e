"""From the paths a user names to the slices each Spark task reads.

* :func:`find_segments` -- log directories, partition directories, segment files and (local) globs, local
  or remote, to :class:`SegmentFile` s in (topic, partition, base offset) order, each file once; topic and
  partition from the directory name (:mod:`kdump.read.logdir`, the one module that knows Kafka's names). Local
  paths are walked by :func:`kdump.read.scan.scan`, as every command walks them; remote ones (``pyarrow.fs``)
  by the same walk over the store's listing (:class:`RemoteFiles`, Spark's only lister of its own);
* :func:`plan_tasks` -- Spark's file-source packing (``FilePartition.getFilePartitions``): small segments
  share a task, each counted with an open cost of 4 MiB, and a segment larger than the split size is cut
  at batch boundaries that its offset index names (each checked to hold a sound batch);
* offset bounds (Spark's Kafka options, :mod:`kdump.spark.bounds`) reach each slice as ``offsets``.
"""
from __future__ import annotations

import errno
import glob
import itertools
import os
from dataclasses import dataclass, field, replace
from urllib.parse import urlparse

from kdump.read import logdir
from kdump.read.logdir import FileKind
from kdump.read.scan import scan
from kdump.spark import _source, remote
from kdump.spark.arrow import SegmentSlice

OPEN_COST = 4 << 20  # spark.sql.files.openCostInBytes
MAX_SPLIT = 128 << 20  # spark.sql.files.maxPartitionBytes


@dataclass(frozen=True, order=True)
class SegmentFile:
    topic: str | None
    partition: int | None
    base_offset: int
    location: str
    size: int
    active: bool = False  # the last segment of its directory: Kafka's active segment, a partial tail is no damage

    @property
    def directory(self) -> str:
        """The partition directory holding it (a path or a URI)."""
        return _parent(self.location)


class PathError(_source.KdumpError):
    """A path that does not exist or names no segment."""


def find_segments(paths, storage_options=None) -> list[SegmentFile]:
    seen = set()
    out = []
    for p in paths:
        for seg in _expand(p, storage_options):
            # once per partition directory that names it: a segment hard-linked (or symlinked) into two
            # partitions is read in both, a directory named twice once
            key = (_identity(seg.directory), _identity(seg.location))
            if key not in seen:
                seen.add(key)
                out.append(seg)
    out.sort(key=lambda s: (s.topic or "", s.partition if s.partition is not None else -1,
                            s.directory, s.base_offset, s.location))
    return [replace(s, active=i + 1 == len(out) or out[i + 1].directory != s.directory)
            for i, s in enumerate(out)]


def by_directory(segments) -> dict[str, list[SegmentFile]]:
    """``{partition directory: its segments}``, in the order :func:`find_segments` gives them (by directory,
    then base offset): the one grouping of segments into partitions that planning, bounds and jobs use."""
    groups: dict[str, list[SegmentFile]] = {}
    for seg in segments:
        groups.setdefault(seg.directory, []).append(seg)
    return groups


def _parent(location: str) -> str:
    return location.rstrip("/").rsplit("/", 1)[0]


def _identity(location):
    if remote.is_remote(location):
        return location
    st = os.stat(location)
    return st.st_dev, st.st_ino


def _expand(path: str, storage_options):
    if remote.is_remote(path):
        found = scan([path], files=RemoteFiles(storage_options))
    else:
        matches = sorted(glob.glob(path)) if glob.has_magic(path) else [path]
        if not matches:
            raise PathError(f"{path}: no such file or directory (the pattern matches nothing)")
        found = scan(matches)
    for entry in found.entries:  # each file once, nothing but regular files opened
        if entry.refused is not None:
            if not entry.from_dir or entry.kind is FileKind.LOG:
                missing = entry.refused.errno == errno.ENOENT and not os.path.islink(entry.path)
                raise PathError(f"{entry.path}: {'no such file or directory' if missing else entry.refused.reason}")
            if entry.refused in found.unlistable:  # records that cannot be read: the read fails, none is dropped
                raise PathError(f"{entry.path}: {entry.refused.reason}")
            continue
        if entry.kind is not FileKind.LOG:
            if not entry.from_dir:
                raise PathError(f"{entry.path}: not a log segment (expected <base offset>.log)")
            continue
        seg = _segment(entry.path, entry.size)
        if seg is None:  # named on the command line: copied.log has no base offset to place it by
            raise PathError(f"{entry.path}: not a log segment (expected <base offset>.log)")
        yield seg


def _segment(location: str, size: int) -> SegmentFile | None:
    """The segment at ``location`` (a local path or a URI), by Kafka's naming rules; None for another name."""
    if logdir.classify(location) is not FileKind.LOG:
        return None
    named = logdir.topic_partition(_parent(location))
    topic, partition = named if named is not None else (None, None)
    base = logdir.segment_base_offset(location)
    assert base is not None  # classify said LOG: the name is <digits>.log
    return SegmentFile(topic, partition, base, location, size)


class RemoteFiles:
    """A ``pyarrow.fs`` store as :func:`kdump.read.scan.scan` lists it (:class:`kdump.read.scan.Files`): a location
    is its own identity (a store has no links)."""

    def __init__(self, storage_options=None):
        self.storage_options = storage_options

    def stat(self, location: str) -> logdir.Listed:
        exists, is_dir, size = remote.stat(location, self.storage_options)
        name = location.rstrip("/").rsplit("/", 1)[-1]
        if not exists:
            return logdir.Listed(name, location, logdir.classify(name),
                                 refused=logdir.Refused(location, "No such file or directory", errno.ENOENT))
        return logdir.Listed(name, location, logdir.classify(name), is_dir, size, location)

    def listdir(self, location: str) -> list[logdir.Listed]:
        return [logdir.Listed(name, remote.join(location, name), logdir.classify(name), is_dir, size,
                              remote.join(location, name))
                for name, is_dir, size in sorted(remote.listdir(location, self.storage_options))]

    def parts(self, location: str) -> list[str]:
        return urlparse(location).path.split("/")


# --- read_committed ----------------------------------------------------------------------------------
def txn_filters(segments: list[SegmentFile], storage_options=None, max_batch_bytes: int | None = None) -> dict:
    """``{directory: TxnFilter}``: for each partition directory, what a read_committed consumer drops, from one
    pass over all its segments (give the segments before any pruning: a transaction can begin in a segment
    the filters rule out). Remote segments are spooled one at a time for the pass."""
    from kdump.spark.txn import PartitionTxns
    kwargs = {} if max_batch_bytes is None else {"max_batch_bytes": max_batch_bytes}
    out = {}
    for directory, segs in by_directory(segments).items():
        txns = PartitionTxns()
        for i, seg in enumerate(segs):
            with remote.local_copy(SegmentSlice(seg.location, seg.topic, seg.partition), storage_options) as path:
                txns.add(seg.base_offset, path, complete=i + 1 < len(segs) and not remote.is_remote(seg.location),
                         **kwargs)
        out[directory] = txns.filter()
    return out


# --- tasks ---------------------------------------------------------------------------------------------
@dataclass
class Task:
    slices: list = field(default_factory=list)
    cost: int = 0


def split_size(total_bytes: int, parallelism: int, max_split: int = MAX_SPLIT, open_cost: int = OPEN_COST) -> int:
    """Spark's ``maxSplitBytes``: min(maxPartitionBytes, max(openCost, bytes per core))."""
    per_core = (total_bytes + open_cost) // max(1, parallelism)
    return min(max_split, max(open_cost, per_core))


def slices_of(seg: SegmentFile, split: int, txns=None, offsets: tuple[int, int] | None = None) -> list[SegmentSlice]:
    """One slice for the whole segment, or several cut at index-named batch boundaries near every
    ``split`` bytes (local segments with a usable ``.index``; otherwise one slice). ``txns``: the
    partition's read_committed filter; ``offsets``: the partition's offset range ``[first, end)`` to read."""
    whole = [SegmentSlice(seg.location, seg.topic, seg.partition, 0, None, seg.size, seg.active, txns, offsets)]
    if seg.size <= split or remote.is_remote(seg.location):
        return whole
    cuts = _index_cuts(seg, split) or _header_cuts(seg, split)
    if not cuts:
        return whole
    bounds = [0, *cuts, seg.size]
    out = []
    for a, b in itertools.pairwise(bounds):
        last = b == seg.size
        out.append(SegmentSlice(seg.location, seg.topic, seg.partition, a, None if last else b, b - a,
                                seg.active and last, txns, offsets))
    return out


def _index_cuts(seg: SegmentFile, split: int) -> list[int]:
    """Batch boundaries near every ``split`` bytes that the segment's ``.index`` names, each checked to start a
    sound batch (none: no usable index)."""
    index = logdir.sibling(seg.location, FileKind.INDEX)
    if not os.path.exists(index):
        return []
    from kdump.read.locate import sound_batch_at
    cuts: list[int] = []
    target = split
    try:
        fd = os.open(seg.location, os.O_RDONLY)
    except OSError:
        return []
    try:
        size = os.fstat(fd).st_size
        for _, position in _source.offset_index_positions(index, seg.base_offset):
            if (position >= target and position < seg.size and (not cuts or position > cuts[-1])
                    and sound_batch_at(fd, size, position) is not None):
                cuts.append(position)
                target = position + split
    finally:
        os.close(fd)
    return cuts


def _header_cuts(seg: SegmentFile, split: int) -> list[int]:
    """Batch boundaries near every ``split`` bytes found by the reader's header walk (a segment without a usable
    index: one positional read per batch, no bodies); the walk's stop (damage) ends the cuts, the task after the
    last cut reads past it."""
    cuts: list[int] = []
    target = split
    try:
        for position, end, _ in _source.batch_headers(seg.location):
            if end is None:
                break
            if position >= target:
                cuts.append(position)
                target = position + split
    except OSError:
        return []
    return cuts


def plan_by_offsets(segments: list[SegmentFile], max_offsets: int, *, min_tasks: int | None = None,
                    txn_filters: dict | None = None, offset_ranges: dict | None = None) -> list[Task]:
    """Tasks of at most ``max_offsets`` offsets of one partition each (Spark's ``maxRecordsPerPartition``, which
    counts offsets as Spark's Kafka source does): each partition's offsets cut every ``max_offsets`` from its first,
    a task's slices starting at the batch holding its first offset (found by the header walk) and bounded to its
    offsets, so that a batch across a cut is read by both tasks, each taking its own records. Past a place where the
    header walk stops (damage), the rest of the segment goes to the task at hand with no upper bound, so that nothing
    the resynchronising read finds after the damage is left out. A remote segment is one task.

    ``min_tasks`` (Spark's ``minPartitions`` given too): when the cuts above give fewer tasks, their offset ranges
    are cut again as Spark's ``KafkaOffsetRangeCalculator`` cuts the ranges ``maxRecordsPerPartition`` left: a range
    whose share of all offsets rounds to at most one task stays whole, each other one is divided into equal parts in
    proportion to its size among them (:func:`spread_ranges`), so both options hold: no task above ``max_offsets``,
    about ``min_tasks`` tasks."""
    first_cuts = {directory: itertools.count(first + max_offsets, max_offsets)
                  for directory, first in _firsts(segments, offset_ranges).items()}
    tasks = _plan_cuts(segments, first_cuts, txn_filters, offset_ranges)
    if min_tasks is None or len(tasks) >= min_tasks:
        return tasks
    ranges = _task_ranges(tasks, {seg.location: seg.directory for seg in segments})
    parts = spread_ranges([hi - lo for _, lo, hi in ranges], min_tasks)
    cuts: dict[str, list[int]] = {}
    for (directory, lo, hi), n in zip(ranges, parts, strict=True):
        points = cuts.setdefault(directory, [])
        remaining, start = hi - lo, lo
        for part in range(n):  # equal parts, the last taking the rest (Spark's integer division)
            start += remaining // (n - part)
            remaining = hi - start
            points.append(start)
    # each partition's last point is its end: left out, so that its last task stays open above (what a read past
    # damage finds beyond the log end the header walk saw is still read)
    return _plan_cuts(segments, {d: iter(p[:-1]) for d, p in cuts.items()}, txn_filters, offset_ranges)


def spread_ranges(sizes: list[int], min_parts: int) -> list[int]:
    """How many tasks Spark's Kafka source gives each offset range of ``sizes`` to reach ``min_parts``
    (``KafkaOffsetRangeCalculator.getRanges``): a range whose share rounds to at most one stays whole; the others
    share what is left of ``min_parts`` in proportion to their sizes (rounded half up, at least one each)."""
    total = sum(sizes)
    if not total or len(sizes) >= min_parts:
        return [1] * len(sizes)

    def count(size: int, of: int, parts: int) -> int:
        return max(int(size / of * parts + 0.5), 1)

    whole = [count(s, total, min_parts) == 1 for s in sizes]
    split_total = total - sum(s for s, w in zip(sizes, whole, strict=True) if w)
    split_parts = max(min_parts - sum(whole), 1)
    return [1 if w else count(s, split_total, split_parts) for s, w in zip(sizes, whole, strict=True)]


def _firsts(segments: list[SegmentFile], offset_ranges: dict | None) -> dict[str, int]:
    return {directory: ((offset_ranges or {}).get(directory) or (segs[0].base_offset, None))[0]
            for directory, segs in by_directory(segments).items()}


def _task_ranges(tasks: list[Task], directories: dict[str, str]) -> list[tuple[str, int, int]]:
    """(directory, first, end) of each task of :func:`_plan_cuts` (``directories``: segment location -> its
    directory), a task's end at most its partition's log end; a remote partition's task counts as one offset (it
    is never cut)."""
    from kdump.read.partition import PartitionLog
    log_ends: dict[str, int | None] = {}
    out = []
    for t in tasks:
        directory = directories[t.slices[0].location]
        lo = t.slices[0].offsets[0]
        hi = min(sl.offsets[1] for sl in t.slices)  # a slice read past damage is open above; the task's cut is not
        if remote.is_remote(directory):
            hi = lo + 1
        else:
            if directory not in log_ends:
                log_ends[directory] = PartitionLog(directory).log_end_offset()
            end = log_ends[directory]
            hi = max(lo, min(hi, end)) if end is not None else min(hi, lo + 1)
        out.append((directory, lo, hi))
    return out


def _plan_cuts(segments: list[SegmentFile], cut_points: dict, txn_filters: dict | None,
               offset_ranges: dict | None) -> list[Task]:
    """Tasks of each partition's offsets cut at ``cut_points[directory]`` (increasing offsets, an iterator)."""
    tasks: list[Task] = []
    for directory, segs in by_directory(segments).items():
        first, end = (offset_ranges or {}).get(directory) or (segs[0].base_offset, None)
        cut = _OffsetCuts(first, end, cut_points.get(directory, iter(())),
                          txn_filters.get(directory) if txn_filters else None)
        for seg in segs:
            if cut.done:
                break
            if remote.is_remote(seg.location):
                tasks.append(Task([cut.piece(seg, 0, None, None)], seg.size))
                continue
            start = 0
            for position, stop, last in _source.batch_headers(seg.location):
                if stop is None:  # the header walk stops at damage: the rest is read whole, unbounded above
                    cut.task.slices.append(cut.piece(seg, start, None, None))
                    start = seg.size
                    break
                if last < cut.lo:  # before the read's first offset
                    start = stop
                    continue
                while last + 1 >= cut.hi and not cut.done:
                    cut.task.slices.append(cut.piece(seg, start, stop, cut.hi))
                    tasks.append(cut.next())
                    start = stop if last + 1 == cut.lo else position  # the next offsets start after it, or in it
                if cut.done:
                    break
            if start < seg.size and not cut.done:
                cut.task.slices.append(cut.piece(seg, start, None, cut.hi))
        if cut.task.slices:
            tasks.append(cut.task)
    for t in tasks:
        t.cost = sum(sl.size for sl in t.slices)
    return tasks


_NO_END = (1 << 63) - 1


class _OffsetCuts:
    """The offsets ``[lo, hi)`` of the task being planned for one partition, and its slices (:func:`_plan_cuts`);
    ``end``: the read's end (None: the log's); ``points``: the offsets where the next tasks start (none left: the
    last task takes the rest)."""

    def __init__(self, first: int, end: int | None, points, txns):
        self.points, self.end, self.txns = points, end, txns
        self.lo, self.hi = first, next(points, _NO_END)
        self.task = Task()

    @property
    def done(self) -> bool:
        return self.end is not None and self.lo >= self.end

    def next(self) -> Task:
        """The task planned; the next one takes the next offsets."""
        done, self.task = self.task, Task()
        self.lo, self.hi = self.hi, next(self.points, _NO_END)
        return done

    def piece(self, seg: SegmentFile, a: int, b: int | None, upper: int | None) -> SegmentSlice:
        bound = [x for x in (upper, self.end) if x is not None and x < _NO_END]
        return SegmentSlice(seg.location, seg.topic, seg.partition, a, b, (seg.size if b is None else b) - a,
                            seg.active and b is None, self.txns, (self.lo, min(bound, default=_NO_END)))


def plan_tasks(segments: list[SegmentFile], *, parallelism: int, max_split: int = MAX_SPLIT,
               open_cost: int = OPEN_COST, txn_filters: dict | None = None,
               offset_ranges: dict | None = None) -> list[Task]:
    """Pack slices into tasks as Spark's file sources do (in segment order, so a task reads neighbours).
    ``txn_filters``: ``{directory: TxnFilter}`` (read_committed), ``offset_ranges``: ``{directory: (first,
    end)}`` (the offsets a read is bounded to), each handed to every slice of that directory."""
    total = sum(s.size + open_cost for s in segments)
    split = split_size(total, parallelism, max_split, open_cost)
    tasks: list[Task] = []
    current = Task()
    for seg in segments:
        txns = txn_filters.get(seg.directory) if txn_filters else None
        offsets = offset_ranges.get(seg.directory) if offset_ranges else None
        for sl in slices_of(seg, split, txns, offsets):
            cost = sl.size + open_cost
            if current.slices and current.cost + cost > split:
                tasks.append(current)
                current = Task()
            current.slices.append(sl)
            current.cost += cost
    if current.slices:
        tasks.append(current)
    return tasks


def balanced_tasks(segments: list[SegmentFile], *, cores: int, open_cost: int = OPEN_COST) -> list[Task]:
    """Tasks for a job that runs them all at once on ``cores`` (an export): Spark's packing for ``cores``,
    ``2 * cores``, ... ``4 * cores`` and the plan that ends first when tasks go, in order, to the first free
    core (3 equal tasks on 2 cores take twice as long as 4 of half the size)."""
    best: list[Task] = []
    best_end: float | None = None
    for k in range(1, 5):
        tasks = plan_tasks(segments, parallelism=k * cores, open_cost=open_cost)
        loads = [0] * max(1, cores)
        for t in tasks:
            loads[loads.index(min(loads))] += t.cost
        if best_end is None or max(loads) < best_end * 0.95:  # fewer tasks unless clearly better
            best, best_end = tasks, max(loads)
    return best
