"""The jobs behind ``kdump spark scan|verify|stats``: kdump's libraries run in Spark tasks, results merged
on the driver.

* :func:`export` -- each task converts its segment slices straight to one Parquet file with pyarrow
  (Spark's Parquet writer is far slower here, see bench/RESULTS.md); JSON goes through Spark's writer;
* :func:`verify` -- the deep verifier (:mod:`kdump.verify`) per unit of its own walk (a segment file, or a
  partition directory, whose segments share producer state and are checked against each other), the
  reports put back in the order ``kdump verify`` gives them;
* :func:`stats` -- :func:`kdump.stats.segment_stats` per segment, summed per topic-partition.

``progress(done, total)`` is called from a driver thread as segments finish.
"""
from __future__ import annotations

import os
import threading
import uuid

from kdump.spark.arrow import ReadOptions, read_slices
from kdump.spark.plan import find_segments, plan_tasks, remote
from kdump.spark.schema import default_columns


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
def _export_task(index, slices, out_dir, options):
    """Write one task's records to ``out_dir/part-NNNNN.parquet`` (temp name, then rename); record count."""
    import pyarrow.parquet as pq

    from kdump.spark.schema import arrow_schema
    final = os.path.join(out_dir, f"part-{index:05d}.parquet")
    tmp = os.path.join(out_dir, f".part-{index:05d}-{uuid.uuid4().hex}.tmp")
    n = 0
    try:
        with pq.ParquetWriter(tmp, arrow_schema(options.columns), compression="snappy") as w:
            for rb in read_slices(slices, options):
                w.write_batch(rb)
                n += rb.num_rows
        os.replace(tmp, final)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return n


def export_local(paths, out_dir, fmt="parquet", options: ReadOptions | None = None) -> int:
    """:func:`export` without Spark, in this process (tests and the benchmark)."""
    options = options or ReadOptions()
    os.makedirs(out_dir, exist_ok=True)
    tasks = plan_tasks(find_segments(paths, options.storage_options), parallelism=1)
    return sum(_export_task(i, t.slices, out_dir, options) for i, t in enumerate(tasks))


def export(spark, paths, out_dir, fmt="parquet", options: ReadOptions | None = None, *, progress=None) -> int:
    """Export the records under ``paths`` to ``out_dir`` (a new directory); the number of records."""
    options = options or ReadOptions(columns=tuple(default_columns(True, False)))
    if os.path.exists(out_dir) and os.listdir(out_dir):
        raise FileExistsError(f"{out_dir} exists and is not empty; kdump writes exports to a new directory")
    if fmt == "json":
        df = spark.read.format("kafka-log").options(includeHeaders="true").load(list(paths))
        df.write.mode("errorifexists").json(out_dir)
        return spark.read.json(out_dir).count()
    segments = find_segments(paths, options.storage_options)
    tasks = plan_tasks(segments, parallelism=spark.sparkContext.defaultParallelism)
    os.makedirs(out_dir, exist_ok=True)
    with _Progress(spark, len(segments), progress) as acc:
        def run(item):
            index, slices = item
            n = _export_task(index, slices, out_dir, options)
            acc.add(len({s.location for s in slices}))
            return n
        work = [(i, t.slices) for i, t in enumerate(tasks)]
        counts = spark.sparkContext.parallelize(work, max(1, len(work))).map(run).collect()
    open(os.path.join(out_dir, "_SUCCESS"), "w").close()
    return sum(counts)


# --- verify ------------------------------------------------------------------------------------------
def verify(spark, paths, options, *, progress=None):
    """``kdump verify`` over Spark: the same list of FileReports, in the same order."""
    from kdump.verify import collect, verify_unit
    units = collect(paths)
    total = sum(len(item[1]) if kind == "partition" else 1 for kind, item in units)
    with _Progress(spark, total, progress) as acc:
        def run(indexed):
            index, (kind, item) = indexed
            reports = verify_unit(kind, item, options)
            acc.add(len(item[1]) if kind == "partition" else 1)
            return index, reports
        done = spark.sparkContext.parallelize(list(enumerate(units)), max(1, len(units))).map(run).collect()
    return [r for _, reports in sorted(done, key=lambda x: x[0]) for r in reports]


# --- stats -------------------------------------------------------------------------------------------
def partition_key(seg) -> str:
    if seg.topic is not None:
        return f"{seg.topic}-{seg.partition}"
    return seg.location.rstrip("/").rsplit("/", 1)[0]


def stats(spark, paths, *, storage_options=None, progress=None) -> dict:
    """:func:`kdump.stats.summarize` of every segment under ``paths``, computed in Spark tasks."""
    from kdump.stats import segment_stats, summarize
    segments = find_segments(paths, storage_options)
    with _Progress(spark, len(segments), progress) as acc:
        def run(seg):
            from kdump.spark.arrow import SegmentSlice
            with remote.local_copy(SegmentSlice(seg.location, seg.topic, seg.partition), storage_options) as path:
                st = segment_stats(path, seg.size)
            acc.add(1)
            return partition_key(seg), st
        per_segment = spark.sparkContext.parallelize(segments, max(1, min(len(segments), 1000))).map(run).collect()
    return summarize(per_segment)
