"""The jobs behind ``kdump spark scan|verify|stats``: kdump's libraries run in Spark tasks, results merged
on the driver.

* :func:`export` -- each task converts its segment slices straight to one Parquet file with pyarrow
  (Spark's Parquet writer is far slower here, see bench/RESULTS.md); JSON goes through Spark's writer;
  the damaged regions the tasks skipped come back to the driver with their record counts;
* :func:`verify` -- the deep verifier (:mod:`kdump.verify`) per unit of its own walk (a segment file, or a
  partition directory, whose segments share producer state and are checked against each other), the
  reports put back in the order ``kdump verify`` gives them;
* :func:`stats` -- ``kdump stats``: :func:`kdump.stats.partition_stats` per partition directory, merged as
  ``kdump stats`` merges them.

``progress(done, total)`` is called from a driver thread as segments finish.
"""
from __future__ import annotations

import os
import threading
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kdump.parallel import largest_first
from kdump.read.damage import Damage
from kdump.spark.arrow import ReadOptions, read_slices
from kdump.spark.plan import balanced_tasks, by_directory, find_segments, plan_tasks, remote
from kdump.spark.schema import DECODED_FROM, default_columns

if TYPE_CHECKING:
    from kdump.stats import Summary


class _Progress:
    """Counts finished segments through an accumulator and reports from a driver thread."""

    def __init__(self, spark, total: int, progress):
        self.total = total
        self.progress = progress
        self.acc = spark.sparkContext.accumulator(0)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self):
        if self.progress is not None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self.acc

    def _run(self):
        last = -1
        while not self._stop.wait(0.5):
            if self.acc.value != last:
                last = self.acc.value
                self.progress(last, self.total)

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self.progress(self.acc.value, self.total)


# --- export ------------------------------------------------------------------------------------------
# Snappy; dictionaries only for the columns with few values and min/max statistics only for the small ones:
# a dictionary attempt and min/max over every key and value cost about a quarter of the write time and
# rarely pay off for Kafka payloads (bench/RESULTS.md).
_SMALL_COLUMNS = ["topic", "partition", "offset", "timestamp", "timestampType"]
PARQUET_OPTIONS = {"compression": "snappy", "use_dictionary": ["topic", "partition", "timestampType"],
                   "write_statistics": _SMALL_COLUMNS}


@dataclass
class Export:
    """What an export wrote: ``records``, and the damaged regions skipped (PERMISSIVE), each kdump's JSON error
    object (:meth:`kdump.read.damage.Damage.to_dict`: ``path``, ``position``, ``bytes`` (None: to the end of the
    file), ``code``, ``message``, ``firstOffset``, ``lastOffset`` (the offsets lost, None where unknown)), in file
    order."""

    records: int
    damage: list = field(default_factory=list)


def _damage_collector(found: list):
    def on_damage(sl, error):
        found.append((error if isinstance(error, Damage) else Damage.of_error(error)).to_dict(sl.location))
    return on_damage


def _in_driver_directory(task):
    """``task`` run in the driver's working directory: the paths a user gives (and the ones kdump's reports
    print) stay as given, relative ones included, while an executor, whose own working directory on a
    cluster is ``work/app-*/N/``, opens them where the driver meant (a shared file system mounted at the same
    place, as for any Spark job reading local paths)."""
    here = os.getcwd()

    def run(item):
        before = os.getcwd()
        try:
            os.chdir(here)
        except OSError as e:
            raise FileNotFoundError(f"relative paths are read from the driver's directory {here}, which this "
                                    f"executor cannot enter ({e.strerror}): give absolute paths on a file system "
                                    "every executor mounts") from None
        try:
            return task(item)
        finally:
            os.chdir(before)
    return run


def _export_task(index, slices, out_dir, options):
    """Write one task's records to ``out_dir/part-NNNNN.parquet`` (temp name, then rename): (record count,
    damaged regions skipped)."""
    import pyarrow.parquet as pq

    from kdump.spark.schema import arrow_schema
    final = os.path.join(out_dir, f"part-{index:05d}.parquet")
    tmp = os.path.join(out_dir, f".part-{index:05d}-{uuid.uuid4().hex}.tmp")
    n = 0
    damage: list = []
    try:
        with pq.ParquetWriter(tmp, arrow_schema(options.columns), **PARQUET_OPTIONS) as w:
            for rb in read_slices(slices, options, on_damage=_damage_collector(damage)):
                w.write_batch(rb)
                n += rb.num_rows
        os.replace(tmp, final)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return n, damage


def _damage_task(slices, options):
    """Only the damaged regions of ``slices`` (for an export that Spark's own writer wrote)."""
    damage: list = []
    for _ in read_slices(slices, replace(options, columns=("offset",)), on_damage=_damage_collector(damage)):
        pass
    return 0, damage


def _merge(results) -> Export:
    out = Export(0)
    for n, damage in results:
        out.records += n
        out.damage.extend(damage)
    out.damage.sort(key=lambda d: (d["path"], d["position"]))
    return out


def export_local(paths, out_dir, fmt="parquet", options: ReadOptions | None = None) -> Export:
    """:func:`export` without Spark, in this process (tests and the benchmark)."""
    options = options or ReadOptions()
    os.makedirs(out_dir, exist_ok=True)
    tasks = plan_tasks(find_segments(paths, options.storage_options), parallelism=1)
    return _merge(_export_task(i, t.slices, out_dir, options) for i, t in enumerate(tasks))


def _decoder_options(options: ReadOptions) -> dict:
    """The reader options that give ``options``' decoded columns (keyJson, valueSchemaId, ...)."""
    out = {f"{side}Decoder": "schema-registry" for side in ("key", "value")
           if any(c.startswith(side) and c in DECODED_FROM for c in options.columns)}
    if out and options.schemas:
        out["schemas"] = options.schemas
    return out


def export(spark, paths, out_dir, fmt="parquet", options: ReadOptions | None = None, *, progress=None) -> Export:
    """Export the records under ``paths`` to ``out_dir`` (a new directory). In FAILFAST mode
    (``options.failfast``) the first damaged region fails the job; otherwise damaged regions are skipped
    and listed in the result."""
    options = options or ReadOptions(columns=tuple(default_columns(True, False)))
    if os.path.exists(out_dir) and os.listdir(out_dir):
        raise FileExistsError(f"{out_dir} exists and is not empty; kdump writes exports to a new directory")
    segments = find_segments(paths, options.storage_options)
    tasks = balanced_tasks(segments, cores=spark.sparkContext.defaultParallelism)
    work = [(i, t.slices) for i, t in enumerate(tasks)]
    if fmt == "json":  # Spark's JSON writer writes the records; the damage comes from a pass of kdump's tasks
        mode = "FAILFAST" if options.failfast else "PERMISSIVE"
        df = spark.read.format("kafka-log").options(includeHeaders="true", mode=mode, **_decoder_options(options))
        df = df.load(list(paths))
        df.write.mode("errorifexists").json(out_dir)
        result = _merge(spark.sparkContext.parallelize(work, max(1, len(work)))
                        .map(_in_driver_directory(lambda item: _damage_task(item[1], options))).collect())
        result.records = spark.read.json(out_dir).count()
        return result
    os.makedirs(out_dir, exist_ok=True)
    with _Progress(spark, len(segments), progress) as acc:
        def run(item):
            index, slices = item
            out = _export_task(index, slices, out_dir, options)
            acc.add(len({s.location for s in slices}))
            return out
        results = spark.sparkContext.parallelize(work, max(1, len(work))).map(_in_driver_directory(run)).collect()
    open(os.path.join(out_dir, "_SUCCESS"), "w").close()
    return _merge(results)


# --- verify ------------------------------------------------------------------------------------------
def verify(spark, paths, options, *, progress=None):
    """``kdump verify`` over Spark: the same list of FileReports, in the same order."""
    from kdump.verify import collect, verify_unit
    units = collect(paths)
    total = sum(_segments_in(kind, item) for kind, item in units)
    with _Progress(spark, total, progress) as acc:
        def run(indexed):
            index, (kind, item) = indexed
            reports = verify_unit(kind, item, options)
            acc.add(_segments_in(kind, item))
            return index, reports
        done = (spark.sparkContext.parallelize(list(enumerate(units)), max(1, len(units)))
                .map(_in_driver_directory(run)).collect())
    return [r for _, reports in sorted(done, key=lambda x: x[0]) for r in reports]


def _segments_in(kind: str, item) -> int:
    """The segments a verify unit reads, what the progress line counts (a partition's segments, a named segment;
    leftovers, companions and errors are no segments)."""
    return len(item[1]) if kind == "partition" else 1 if kind == "file" else 0


# --- stats -------------------------------------------------------------------------------------------
def partition_key(seg) -> str:
    """``kdump stats``'s name of a segment's partition: topic-N, or the directory as reached."""
    return f"{seg.topic}-{seg.partition}" if seg.topic is not None else seg.directory


def _partitions(segments) -> list[tuple[str, list]]:
    """``(partition key, its segments in offset order)`` per directory (as :meth:`kdump.read.scan.Scan.segment_groups`
    groups them), the largest first so that they start early (:func:`kdump.parallel.largest_first`)."""
    partitions = [(partition_key(segs[0]), segs) for segs in by_directory(segments).values()]
    return [partitions[i] for i in largest_first([sum(s.size for s in segs) for _, segs in partitions])]


def stats(spark, paths, *, storage_options=None, memory_bytes=None, progress=None) -> Summary:
    """``kdump stats`` in Spark: :func:`kdump.stats.partition_stats` per partition directory, one task each
    (keys, producers and transactions span its segments), merged on the driver by
    :func:`kdump.stats.merge_partitions`. Remote segments are copied to a local temporary file one at a time."""
    from kdump.stats import DEFAULT_MEMORY, merge_partitions, partition_stats
    segments = find_segments(paths, storage_options)
    partitions = _partitions(segments)
    memory = DEFAULT_MEMORY if memory_bytes is None else memory_bytes
    with _Progress(spark, len(segments), progress) as acc:
        def local_logs(segs):
            from kdump.spark.arrow import SegmentSlice
            for seg in segs:  # partition_stats walks each before asking for the next: the copy lives that long
                with remote.local_copy(SegmentSlice(seg.location, seg.topic, seg.partition), storage_options) as path:
                    yield path
                acc.add(1)

        def run(partition):
            _, segs = partition
            return ((segs[0].directory, segs[0].topic, segs[0].partition),
                    *partition_stats(local_logs(segs), memory_bytes=memory))
        done = (spark.sparkContext.parallelize(partitions, max(1, len(partitions)))
                .map(_in_driver_directory(run)).collect())
    return merge_partitions(done)
