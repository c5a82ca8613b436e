"""The jobs behind ``kdump spark scan|verify|stats``: kdump's libraries run in Spark tasks, results merged
on the driver.

* :func:`export` -- each task converts its segment slices straight to one Parquet file with pyarrow
  (Spark's Parquet writer is far slower here, see bench/RESULTS.md); JSON goes through Spark's writer;
  the damaged regions the tasks skipped come back to the driver with their record counts;
* :func:`verify` -- the deep verifier (:mod:`kdump.verify`) per unit of its own walk (a segment file, or a
  partition directory, whose segments share producer state and are checked against each other), the
  reports put back in the order ``kdump verify`` gives them;
* :func:`stats` -- ``kdump stats``: :func:`kdump.stats.counts.partition_stats` per partition directory, merged as
  ``kdump stats`` merges them.

``progress(done, total)`` is called from a driver thread as segments finish.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import shutil
import socket
import threading
import uuid
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kdump.errors import WriteError
from kdump.jobs import largest_first
from kdump.read.damage import Damage
from kdump.spark import _source
from kdump.spark.arrow import ReadOptions, read_slices
from kdump.spark.plan import balanced_tasks, by_directory, find_segments, plan_tasks, remote
from kdump.spark.schema import DECODED_FROM, default_columns
from kdump.write.atomic import crash_point

if TYPE_CHECKING:
    from kdump.stats.counts import Summary


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


class ExportWriteFailed(_source.KdumpError):
    """A task could not write its part file (a full disk, a read-only file system, no permission): raised in the
    executor with the file, the errno and the reason in its text, which is all that crosses Spark's wrapping of a
    task's error (read back on the driver by :func:`write_failure`)."""


_WRITE_FAILED = re.compile(r"ExportWriteFailed: \[errno (\d+)\] (.*?) \[path (.*?)\]$", re.MULTILINE)
_TASK_WRITE_ERROR = re.compile(r"kdump\.errors\.WriteError: \[Errno (\d+)\] (.*?): '(.*)'$", re.MULTILINE)
# what a JVM writer (Spark's JSON) says for the errors of a write that no retry mends
_JAVA_WRITE_ERRORS = {"No space left on device": errno.ENOSPC, "Read-only file system": errno.EROFS,
                      "Permission denied": errno.EACCES, "Disk quota exceeded": errno.EDQUOT}


def _write_failed(path: str, error: OSError) -> ExportWriteFailed:
    number = error.errno
    if not number:  # pyarrow's errors carry the errno in their text only ("... [errno 28] No space left ...")
        m = re.search(r"errno (\d+)", str(error))
        number = int(m.group(1)) if m else errno.EIO
    return ExportWriteFailed(f"[errno {number}] {os.strerror(number)} [path {path}]")


def write_failure(error: BaseException) -> WriteError | None:
    """The write failure a failed job reports (a task's :class:`ExportWriteFailed`, or a JVM writer's
    IOException), as a :class:`~kdump.errors.WriteError` naming the file; None for any other failure."""
    text = f"ExportWriteFailed: {error}" if isinstance(error, ExportWriteFailed) else str(error)
    m = _WRITE_FAILED.search(text)
    if m:
        return WriteError(int(m.group(1)), m.group(2), m.group(3))
    m = _TASK_WRITE_ERROR.search(text)
    if m:  # kdump's own WriteError in a task (stats' spilled key digests...), as Python prints an OSError
        return WriteError(int(m.group(1)), m.group(2), m.group(3))
    for reason, number in _JAVA_WRITE_ERRORS.items():
        if reason in text and ("IOException" in text or "FileSystemException" in text):
            return WriteError(number, reason, None)
    return None


def _export_task(index, slices, out_dir, options):
    """Write one task's records to ``out_dir/part-NNNNN.parquet`` (temp name, then rename): (record count,
    damaged regions skipped). A write that fails raises :class:`ExportWriteFailed` (a read that fails, the
    reader's own error), and leaves no temporary."""
    import pyarrow.parquet as pq

    from kdump.spark.schema import arrow_schema
    final = os.path.join(out_dir, f"part-{index:05d}.parquet")
    tmp = os.path.join(out_dir, f".part-{index:05d}-{uuid.uuid4().hex}.tmp")
    n = 0
    damage: list = []
    try:
        try:
            w = pq.ParquetWriter(tmp, arrow_schema(options.columns), **PARQUET_OPTIONS)
        except OSError as e:
            raise _write_failed(final, e) from None
        with w:
            for rb in read_slices(slices, options, on_damage=_damage_collector(damage)):
                try:
                    w.write_batch(rb)
                except OSError as e:
                    raise _write_failed(final, e) from None
                n += rb.num_rows
            try:
                w.close()
            except OSError as e:
                raise _write_failed(final, e) from None
        try:
            crash_point("export-part-written")
            os.replace(tmp, final)
        except OSError as e:
            raise _write_failed(final, e) from None
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass
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
    """:func:`export` without Spark, in this process (tests and the benchmark): committed the same way."""
    options = options or ReadOptions()
    tasks = plan_tasks(find_segments(paths, options.storage_options), parallelism=1)
    with _Staging(out_dir) as staging:
        with staging.writing():
            result = _merge(_export_task(i, t.slices, staging.work, options) for i, t in enumerate(tasks))
        staging.commit(result)
    return result


class _Staging:
    """An export's staging directory ``.<OUT name>.<random>.tmp`` beside ``OUT`` (Spark's and Kafka's habit:
    write aside, then one rename). :meth:`commit` writes ``_SUCCESS`` (who wrote the export: a run that loses the
    race names it) and renames the directory to ``OUT``, refusing (FileExistsError, nothing left) when ``OUT``
    was filled meanwhile; leaving the block without a commit, or with an error, removes the staging directory, so
    a failed export leaves nothing that could pass for one. A killed run's staging directory (its lock is free)
    is removed by the next export into the same ``OUT``. Errors of the file system (a full disk, read-only,
    no permission) are :class:`~kdump.errors.WriteError` naming the file."""

    def __init__(self, out_dir):
        from kdump.write.guards import check_new_directory
        from kdump.write.killed import clean_leftovers
        from kdump.write.tempdir import TemporaryDirectory
        self.path = os.path.abspath(os.fspath(out_dir))
        check_new_directory(self.path)
        parent = os.path.dirname(self.path)
        try:
            os.makedirs(parent, exist_ok=True)
            clean_leftovers(parent, {os.path.basename(self.path)})
            self._dir = TemporaryDirectory(self.path)
        except OSError as e:
            raise _nothing_left(e, self.path) from None
        self.work = self._dir.work

    def __enter__(self) -> _Staging:
        return self

    def __exit__(self, *exc) -> None:
        self._dir.remove()

    @contextlib.contextmanager
    def writing(self):
        """The tasks writing into the staging directory: a write that fails (:func:`write_failure`) is a
        :class:`~kdump.errors.WriteError` naming ``OUT`` and the file, after which nothing is left."""
        try:
            yield
        except Exception as e:
            failure = write_failure(e)
            if failure is None:
                raise
            name = os.path.basename(failure.filename) if failure.filename else None
            raise WriteError(failure.errno, f"{failure.strerror}{f' (writing {name})' if name else ''}; nothing was "
                             f"left (no {os.path.basename(self.path)})", self.path) from None

    def commit(self, result: Export) -> None:
        marker = {"writer": "kdump spark scan", "pid": os.getpid(), "host": socket.gethostname(),
                  "records": result.records}
        try:
            with open(os.path.join(self.work, "_SUCCESS"), "w", encoding="utf-8") as f:
                json.dump(marker, f)
                f.flush()
                os.fsync(f.fileno())
            crash_point("export-staged")
            published = self._dir.publish()
        except OSError as e:
            raise _nothing_left(e, self.path) from None
        if not published:
            raise FileExistsError(errno.EEXIST, f"was written meanwhile by {_writer_of(self.path)}; this run's "
                                  "export was not committed and nothing of it was left", self.path)


def _nothing_left(error: OSError, out_dir: str) -> WriteError:
    return WriteError(error.errno, f"{error.strerror or error}; nothing was left (no {os.path.basename(out_dir)})",
                      error.filename or out_dir)


def _writer_of(out_dir: str) -> str:
    """Who wrote the export at ``out_dir``, from its ``_SUCCESS`` (kdump's: writer, pid, host)."""
    try:
        with open(os.path.join(out_dir, "_SUCCESS"), encoding="utf-8") as f:
            doc = json.load(f)
        return f"another run ({doc['writer']}, pid {doc['pid']} on {doc['host']})"
    except (OSError, ValueError, KeyError, TypeError):
        return "another writer"


def _decoder_options(options: ReadOptions) -> dict:
    """The reader options that give ``options``' decoded columns (keyJson, valueSchemaId, ...)."""
    out = {f"{side}Decoder": "schema-registry" for side in ("key", "value")
           if any(c.startswith(side) and c in DECODED_FROM for c in options.columns)}
    if out and options.schemas:
        out["schemas"] = options.schemas
    return out


def export(spark, paths, out_dir, fmt="parquet", options: ReadOptions | None = None, *, progress=None) -> Export:
    """Export the records under ``paths`` to ``out_dir`` (a new directory, or an empty one). In FAILFAST mode
    (``options.failfast``) the first damaged region fails the job; otherwise damaged regions are skipped
    and listed in the result. The files are written into a staging directory beside ``out_dir`` that becomes it
    in one rename (:class:`_Staging`): the export is whole or absent, whatever fails or kills the run, and of two
    runs into one ``out_dir`` one commits and the other raises FileExistsError naming it."""
    options = options or ReadOptions(columns=tuple(default_columns(True, False)))
    if "://" in str(out_dir):  # a store Spark's own writer reaches (JSON only): its commit protocol is Spark's
        segments = find_segments(paths, options.storage_options)
        tasks = balanced_tasks(segments, cores=spark.sparkContext.defaultParallelism)
        work = [(i, t.slices) for i, t in enumerate(tasks)]
        return _export_json(spark, paths, str(out_dir), options, work, move_up=False)
    with _Staging(out_dir) as staging:
        segments = find_segments(paths, options.storage_options)
        tasks = balanced_tasks(segments, cores=spark.sparkContext.defaultParallelism)
        work = [(i, t.slices) for i, t in enumerate(tasks)]
        if fmt == "json":
            with staging.writing():
                result = _export_json(spark, paths, staging.work, options, work)
        else:
            with _Progress(spark, len(segments), progress) as acc, staging.writing():
                def run(item):
                    index, slices = item
                    out = _export_task(index, slices, staging.work, options)
                    acc.add(len({s.location for s in slices}))
                    return out
                result = _merge(spark.sparkContext.parallelize(work, max(1, len(work)))
                                .map(_in_driver_directory(run)).collect())
        staging.commit(result)
    return result


def _export_json(spark, paths, work_dir: str, options: ReadOptions, work, *, move_up: bool = True) -> Export:
    """Spark's JSON writer writes the records into ``work_dir/json`` (it makes the directory itself), moved up
    into ``work_dir`` (``move_up=False``: straight into ``work_dir``, a remote store); the damage comes from a
    pass of kdump's tasks."""
    mode = "FAILFAST" if options.failfast else "PERMISSIVE"
    df = spark.read.format("kafka-log").options(includeHeaders="true", mode=mode, **_decoder_options(options))
    df = df.load(list(paths))
    written = os.path.join(work_dir, "json") if move_up else work_dir
    df.write.mode("errorifexists").json(written)
    result = _merge(spark.sparkContext.parallelize(work, max(1, len(work)))
                    .map(_in_driver_directory(lambda item: _damage_task(item[1], options))).collect())
    result.records = spark.read.json(written).count()
    if not move_up:
        return result
    for name in os.listdir(written):
        if name != "_SUCCESS":
            os.rename(os.path.join(written, name), os.path.join(work_dir, name))
    shutil.rmtree(written)
    return result


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
    groups them), the largest first so that they start early (:func:`kdump.jobs.largest_first`)."""
    partitions = [(partition_key(segs[0]), segs) for segs in by_directory(segments).values()]
    return [partitions[i] for i in largest_first([sum(s.size for s in segs) for _, segs in partitions])]


def stats(spark, paths, *, storage_options=None, memory_bytes=None, progress=None) -> Summary:
    """``kdump stats`` in Spark: :func:`kdump.stats.counts.partition_stats` per partition directory, one task each
    (keys, producers and transactions span its segments), merged on the driver by
    :func:`kdump.stats.counts.merge_partitions`. Remote segments are copied to a local temporary file one at a time."""
    from kdump.stats.counts import DEFAULT_MEMORY, merge_partitions, partition_stats
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
