"""Writing records as Kafka log segments: a library (:class:`PartitionWriter`) and the Spark writer around it.

``df.write.format("kafka-log").option("codec", "lz4").save(DIR)`` writes ``DIR/<topic>-<partition>/``
directories of magic-2 segments with kdump's writer: each ``.log`` written atomically and verified by
reading it back (:class:`kdump.SegmentWriter`), then its ``.index`` and ``.timeindex`` built as Kafka's
recovery would (:func:`kdump.index.rebuild.rebuild_indexes`), so ``kafka-dump-log`` and a broker read them.

Columns used: ``key``, ``value`` (binary or string: a string is written as UTF-8), ``headers`` (Spark's Kafka
header array), ``timestamp`` (CreateTime, in ms; null or absent: the time of writing, as Kafka's producer
stamps it), ``offset`` (absent or null: assigned from 0 per topic-partition, in task order then row order,
whatever the DataFrame's partitioning), ``topic``/``partition`` (absent: the ``topic``/``partition`` options).
Options: ``codec`` (none, gzip, snappy, lz4, zstd), ``segmentBytes`` (roll size, default 1 GiB as Kafka's
``segment.bytes``), ``batchRecords`` (default 1000) and ``batchBytes`` (default 1 MiB) per batch.

Save modes: ``append`` adds topic-partition directories and refuses one that already holds segments;
``overwrite`` replaces the directory whole. How a commit stages, numbers and moves: :class:`KafkaLogWriter`.
"""
from __future__ import annotations

import itertools
import os
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, field

from kdump.format import layout as L
from kdump.format.names import CODEC_IDS, CODEC_NAMES
from kdump.read.logdir import (
    FileKind,
    classify,
    file_name,
    segment_base_offset,
    sibling,
    temporary_affixes,
)
from kdump.spark import options as O


class WriteError(ValueError):
    pass


@dataclass
class WriteOptions:
    codec: int = 0
    segment_bytes: int = 1 << 30
    batch_records: int = 1000
    batch_bytes: int = 1 << 20
    topic: str | None = None
    partition: int = 0


def write_options(options) -> WriteOptions:
    return WriteOptions(
        codec=CODEC_IDS[O.choice(options, "codec", CODEC_NAMES, "none")],
        segment_bytes=O.integer(options, "segmentBytes", 1 << 30, 1024),
        batch_records=O.integer(options, "batchRecords", 1000, 1),
        batch_bytes=O.integer(options, "batchBytes", 1 << 20, 1),
        topic=options.get("topic"),
        partition=O.integer(options, "partition", 0, 0),
    )


@dataclass
class Written:
    """What one writer produced for one topic-partition: segment files and their offset ranges."""

    topic: str
    partition: int
    segments: list = field(default_factory=list)  # (path, first offset, last offset)
    assigned: bool = True  # every offset assigned by the writer (no offset column): the commit may renumber them


class PartitionWriter:
    """Records of one topic-partition, in offset order, into segments under ``directory``."""

    def __init__(self, directory: str, topic: str, partition: int, options: WriteOptions,
                 next_offset: int = 0):
        from kdump import RecordBatchBuilder
        self._builder_cls = RecordBatchBuilder
        self.directory = directory
        self.options = options
        self.written = Written(topic, partition)
        self.next_offset = next_offset
        self._builder = None
        self._builder_bytes = 0
        self._segment = None  # (SegmentWriter, base offset, bytes)
        self._last_offset: int | None = None
        os.makedirs(directory, exist_ok=True)

    def append(self, offset: int | None, timestamp_ms: int, key, value, headers=()) -> None:
        if offset is None:
            offset = self.next_offset
        else:
            self.written.assigned = False
            if self._last_offset is not None and offset <= self._last_offset:
                raise WriteError(f"{self.written.topic}-{self.written.partition}: "
                                 f"offset {offset} after {self._last_offset}; "
                                 "records must come in increasing offset order (sortWithinPartitions('offset'))")
        b = self._builder
        if b is None:
            b = self._builder = self._builder_cls(offset, codec=self.options.codec)
            self._builder_bytes = 0
        b.append(offset, timestamp_ms, key, value, headers)
        self._builder_bytes += (len(key) if key else 0) + (len(value) if value else 0)
        self._last_offset = offset
        self.next_offset = offset + 1
        if b.record_count >= self.options.batch_records or self._builder_bytes >= self.options.batch_bytes:
            self._flush_batch()

    def _flush_batch(self) -> None:
        b = self._builder
        if b is None:
            return
        self._builder = None
        data = b.build()
        if self._segment is not None and self._segment[2] + len(data) > self.options.segment_bytes:
            self._roll()
        if self._segment is None:
            from kdump import SegmentWriter
            path = os.path.join(self.directory, file_name(b.base_offset, FileKind.LOG))
            if os.path.exists(path):
                raise WriteError(f"{path} exists; kdump never replaces a segment")
            self._segment = [SegmentWriter(path), b.base_offset, 0, b.base_offset]
        seg = self._segment
        seg[0].write(data, 1)
        seg[2] += len(data)
        seg[3] = b.last_offset

    def _roll(self) -> None:
        seg, self._segment = self._segment, None
        if seg is None:
            return
        writer, base, _, last = seg
        path = writer.commit()
        from kdump.index.rebuild import rebuild_indexes
        rebuild_indexes(path)
        self.written.segments.append((path, base, last))

    def close(self) -> Written:
        self._flush_batch()
        self._roll()
        return self.written

    def abort(self) -> None:
        if self._segment is not None:
            self._segment[0].abort()
            self._segment = None


def _ms(micros: int | None, now_ms: int) -> int:
    """Spark's microsecond timestamp to Kafka's milliseconds (floor, as Spark's own Kafka sink does); null is
    the time of writing, as Spark's Kafka sink leaves it to the producer, which stamps the current time."""
    return now_ms if micros is None else micros // 1000


def _binary(value):
    """A key, value or header value as bytes: Spark's Kafka sink takes string or binary columns (a string is
    written as its UTF-8 bytes)."""
    return value.encode("utf-8") if isinstance(value, str) else value


def write_arrow(batches, directory: str, options: WriteOptions) -> list[Written]:
    """Write Arrow record batches (columns as in the module docstring) under ``directory``; returns what
    was written per topic-partition. Records of one topic-partition must come in offset order."""
    import pyarrow as pa
    writers: dict[tuple, PartitionWriter] = {}
    try:
        for rb in batches:
            names = rb.schema.names
            n = rb.num_rows
            now_ms = time.time_ns() // 1_000_000
            if "timestamp" in names:
                ts_col = rb.column("timestamp").cast(pa.int64()).to_pylist()
            else:
                ts_col = [None] * n
            col = {name: rb.column(name).to_pylist() if name in names else [None] * n
                   for name in ("key", "value", "offset", "topic", "partition", "headers")}
            for i in range(n):
                topic = col["topic"][i] if "topic" in names else options.topic
                if topic is None:
                    raise WriteError("no topic: give a topic column or the topic option")
                part = col["partition"][i] if "partition" in names else options.partition
                if part is None:
                    part = options.partition
                w = writers.get((topic, part))
                if w is None:
                    w = writers[(topic, part)] = PartitionWriter(os.path.join(directory, f"{topic}-{part}"),
                                                                 topic, part, options)
                hdrs = col["headers"][i] or ()
                w.append(col["offset"][i], _ms(ts_col[i], now_ms), _binary(col["key"][i]), _binary(col["value"][i]),
                         [(h["key"], _binary(h["value"])) for h in hdrs])
        return [w.close() for w in writers.values()]
    except BaseException:
        for w in writers.values():
            w.abort()
        raise


# --- Spark ---------------------------------------------------------------------------------------------
try:
    from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
except ImportError:  # the library above works without Spark
    DataSourceArrowWriter = object  # type: ignore[misc,assignment]  # plain bases when pyspark is absent
    WriterCommitMessage = object  # type: ignore[misc,assignment]  # plain bases when pyspark is absent


@dataclass
class TaskWritten(WriterCommitMessage):
    staging: str
    written: list


def renumber_segment(path: str, delta: int) -> str:
    """Move the segment at ``path`` (and its indexes) ``delta`` offsets on: every batch's base offset is
    rewritten in place and the files renamed for the new base offset. A v2 batch's CRC does not cover its
    base offset, and the indexes hold offsets relative to the segment's base, so nothing else changes; the
    headers are read back to check. Only for segments this writer staged (never a user's file)."""
    from kdump.read.segment import SegmentReader
    with SegmentReader(path) as reader:
        headers = [(h.position, h.base_offset or 0) for h in reader.headers()]  # v2: always set
    with open(path, "r+b") as f:
        for position, base in headers:
            f.seek(position + L.OFFSET_AT)
            f.write(L.INT64.pack(base + delta))
        f.flush()
        os.fsync(f.fileno())
    with SegmentReader(path) as reader:
        moved = [h.base_offset for h in reader.headers()]
    if moved != [base + delta for _, base in headers]:
        raise WriteError(f"{path}: base offsets read back as {moved[:3]}... after renumbering")
    old_base = segment_base_offset(path)
    assert old_base is not None  # the writer names its segments <base offset>.log
    new_path = path
    for kind in (FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX, FileKind.LOG):
        src = sibling(path, kind)
        dst = os.path.join(os.path.dirname(path), file_name(old_base + delta, kind))
        if os.path.exists(src):
            os.rename(src, dst)
        if kind is FileKind.LOG:
            new_path = dst
    return new_path


class KafkaLogWriter(DataSourceArrowWriter):
    """``df.write.format("kafka-log").mode("append" | "overwrite").save(DIR)``. Spark allows no other save mode
    for a Python data source (its own error says so). Tasks write into one staging directory beside ``DIR``
    (``.<name>.<random>.tmp``, a kdump temporary that ``kdump verify`` names if a killed run leaves it); the
    commit on the driver gives offsets to records that had none, per topic-partition in task order whatever the
    DataFrame's partitioning (as Kafka would assign them on arrival), then moves the partitions into place:
    append adds partition directories and refuses one that already holds segments, overwrite replaces ``DIR``
    whole (renamed aside, then removed). A failed write removes the staging directory, and ``DIR`` when this
    write created it."""

    def __init__(self, options, schema, overwrite: bool):
        self.path = O.paths(options)[0].rstrip(os.sep) or os.sep
        self.options = write_options(options)
        self.overwrite = overwrite
        self.created_target = not os.path.exists(self.path)
        parent, name = os.path.split(self.path)
        prefix, suffix = temporary_affixes(name)
        try:
            # (not locked as kdump.atomic's are: Spark plans, commits and aborts in Python workers that may
            # each be another process, so none of them could hold a lock for the write's whole life)
            os.makedirs(parent, exist_ok=True)
            self.staging_root = tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent)
        except OSError as e:
            raise _not_written(e, self.path) from None

    def write(self, iterator):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        task = f"{ctx.partitionId()}-{ctx.attemptNumber()}" if ctx else uuid.uuid4().hex
        staging = os.path.join(self.staging_root, task)
        written = write_arrow(iterator, staging, self.options)
        return TaskWritten(staging, written)

    def commit(self, messages):
        by_partition: dict = {}
        for m in messages:  # in task (partition id) order: the order Kafka would give records that arrive so
            if m is None:
                continue
            for w in m.written:
                by_partition.setdefault((w.topic, w.partition), []).append((m.staging, w))
        for (topic, part), items in by_partition.items():
            if all(w.assigned for _, w in items):
                _assign_offsets(items)
            ranges = sorted((first, last, path) for _, w in items for path, first, last in w.segments)
            for (a0, a1, ap), (b0, b1, bp) in itertools.pairwise(ranges):
                if b0 <= a1:
                    raise WriteError(f"{topic}-{part}: tasks wrote overlapping offsets ({ap}: {a0}-{a1}, "
                                     f"{bp}: {b0}-{b1}) from the offset column; give each record its own offset "
                                     "or drop the column to let the writer assign them")
        try:
            if self.overwrite:
                self._replace(by_partition)
            else:
                self._append(by_partition)
        finally:
            self._drop_staging()

    def _drop_staging(self) -> None:
        shutil.rmtree(self.staging_root, ignore_errors=True)

    def _moves(self, by_partition, root: str) -> list[tuple[str, str]]:
        moves: list[tuple[str, str]] = []
        for (topic, part), items in by_partition.items():
            target = os.path.join(root, f"{topic}-{part}")
            for staging, _ in items:
                src_dir = os.path.join(staging, f"{topic}-{part}")
                moves.extend((os.path.join(src_dir, n), os.path.join(target, n)) for n in sorted(os.listdir(src_dir)))
        return moves

    def _append(self, by_partition) -> None:
        for topic, part in by_partition:  # every check before the first move: a refusal moves nothing
            target = os.path.join(self.path, f"{topic}-{part}")
            if os.path.isdir(target) and any(classify(n) is FileKind.LOG for n in os.listdir(target)):
                raise WriteError(f"{target} already holds segments; kdump never adds to or replaces them "
                                 "(mode('overwrite') replaces the whole directory)")
        moves = self._moves(by_partition, self.path)
        for _, dst in moves:
            if os.path.exists(dst):
                raise WriteError(f"{dst} exists; kdump never replaces a file")
        _rename_all(moves)

    def _replace(self, by_partition) -> None:
        assembled = os.path.join(self.staging_root, "assembled")
        os.makedirs(assembled)
        _rename_all(self._moves(by_partition, assembled))
        parent, name = os.path.split(self.path)
        if os.path.lexists(self.path):
            prefix, suffix = temporary_affixes(name)
            aside = tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent)
            os.rename(self.path, os.path.join(aside, name))  # one rename: DIR is the old one until the next
            try:
                os.rename(assembled, self.path)
            except OSError as e:  # the old DIR back in its place: the write did not happen
                os.rename(os.path.join(aside, name), self.path)
                shutil.rmtree(aside, ignore_errors=True)
                raise _not_written(e, self.path) from None
            shutil.rmtree(aside, ignore_errors=True)
        else:
            try:
                os.rename(assembled, self.path)
            except OSError as e:
                raise _not_written(e, self.path) from None

    def abort(self, messages):
        self._drop_staging()
        if self.created_target:
            try:
                os.rmdir(self.path)  # only if empty: nothing of another writer's is removed
            except OSError:
                pass


def _not_written(error: OSError, path: str) -> OSError:
    from kdump.atomic import write_error
    return write_error(error, path, "nothing was written (any file already moved was moved back)")


def _rename_all(moves: list[tuple[str, str]]) -> None:
    """Move every staged file into place, or none: a move that fails (a full or read-only disk, no permission)
    takes the ones before it back, and the partition directories this made are removed again."""
    done: list[tuple[str, str]] = []
    made: list[str] = []
    try:
        for src, dst in moves:
            parent = os.path.dirname(dst)
            if not os.path.isdir(parent):
                os.makedirs(parent)
                made.append(parent)
            os.rename(src, dst)
            done.append((src, dst))
    except OSError as e:
        for src, dst in reversed(done):
            os.rename(dst, src)
        for parent in reversed(made):
            try:
                os.rmdir(parent)
            except OSError:
                pass
        raise _not_written(e, moves[len(done)][1]) from None


def _assign_offsets(items) -> None:
    """Number the records of one topic-partition across tasks: each task counted from 0, moved on by the
    records of the tasks before it."""
    next_offset = 0
    for _, w in items:
        if not w.segments:
            continue
        delta = next_offset - w.segments[0][1]
        if delta:
            w.segments = [(renumber_segment(path, delta), first + delta, last + delta)
                          for path, first, last in w.segments]
        next_offset = w.segments[-1][2] + 1
