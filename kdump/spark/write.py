"""Writing records as Kafka log segments: a library (:class:`PartitionWriter`) and the Spark writer around it.

``df.write.format("kafka-log").option("codec", "lz4").save(DIR)`` writes ``DIR/<topic>-<partition>/``
directories of magic-2 segments with kdump's writer: each ``.log`` written atomically and verified by
reading it back (:class:`kdump.SegmentWriter`), then its ``.index`` and ``.timeindex`` built as Kafka's
recovery would (:func:`kdump.index.rebuild.rebuild_indexes`), so ``kafka-dump-log`` and a broker read them.

Columns used: ``key``, ``value`` (binary), ``headers`` (Spark's Kafka header array), ``timestamp``
(CreateTime, in ms; null or absent: -1), ``offset`` (absent: assigned from 0 in arrival order per
topic-partition), ``topic``/``partition`` (absent: the ``topic``/``partition`` options). Options:
``codec`` (none, gzip, snappy, lz4, zstd), ``segmentBytes`` (roll size, default 1 GiB as Kafka's
``segment.bytes``), ``batchRecords`` (default 1000) and ``batchBytes`` (default 1 MiB) per batch.

Tasks write into a staging directory; the driver's commit checks that no two tasks wrote overlapping
offsets of one topic-partition and renames the segments into place. Existing segments are never
replaced: writing into a partition directory that already holds segments fails (SaveMode overwrite too).
"""
from __future__ import annotations

import itertools
import os
import shutil
import uuid
from dataclasses import dataclass, field

from kdump.read.logdir import KDUMP_STAGING_PREFIX, FileKind, classify, file_name
from kdump.spark import options as O

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


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
        codec=CODECS[O.choice(options, "codec", tuple(CODECS), "none")],
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
        elif self._last_offset is not None and offset <= self._last_offset:
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


def _ms(micros: int | None) -> int:
    """Spark's microsecond timestamp to Kafka's milliseconds (floor, as Spark's own Kafka sink does);
    null is Kafka's "no timestamp" (-1)."""
    return -1 if micros is None else micros // 1000


def write_arrow(batches, directory: str, options: WriteOptions) -> list[Written]:
    """Write Arrow record batches (columns as in the module docstring) under ``directory``; returns what
    was written per topic-partition. Records of one topic-partition must come in offset order."""
    import pyarrow as pa
    writers: dict[tuple, PartitionWriter] = {}
    try:
        for rb in batches:
            names = rb.schema.names
            n = rb.num_rows
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
                w.append(col["offset"][i], _ms(ts_col[i]), col["key"][i], col["value"][i],
                         [(h["key"], h["value"]) for h in hdrs])
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


class KafkaLogWriter(DataSourceArrowWriter):
    def __init__(self, options, schema, overwrite: bool):
        self.path = O.paths(options)[0]
        self.options = write_options(options)
        self.overwrite = overwrite
        self.staging_root = os.path.join(self.path, KDUMP_STAGING_PREFIX + uuid.uuid4().hex)
        if overwrite:
            raise WriteError("kdump never replaces segments: use mode('append') or mode('error') "
                             "with a new directory")

    def write(self, iterator):
        from pyspark import TaskContext
        ctx = TaskContext.get()
        task = f"{ctx.partitionId()}-{ctx.attemptNumber()}" if ctx else uuid.uuid4().hex
        staging = os.path.join(self.staging_root, task)
        written = write_arrow(iterator, staging, self.options)
        return TaskWritten(staging, written)

    def commit(self, messages):
        moves: list[tuple[str, str]] = []
        by_partition: dict = {}
        for m in messages:
            for w in m.written:
                by_partition.setdefault((w.topic, w.partition), []).append((m.staging, w))
        for (topic, part), items in by_partition.items():
            ranges = sorted((first, last, path) for _, w in items for path, first, last in w.segments)
            for (a0, a1, ap), (b0, b1, bp) in itertools.pairwise(ranges):
                if b0 <= a1:
                    raise WriteError(f"{topic}-{part}: tasks wrote overlapping offsets ({ap}: {a0}-{a1}, "
                                     f"{bp}: {b0}-{b1}); give an offset column, or repartition('topic', "
                                     "'partition') so that one task writes each topic-partition")
            target = os.path.join(self.path, f"{topic}-{part}")
            os.makedirs(target, exist_ok=True)
            if any(classify(n) is FileKind.LOG for n in os.listdir(target)):
                raise WriteError(f"{target} already holds segments; kdump never adds to or replaces them")
            for staging, _ in items:
                src_dir = os.path.join(staging, f"{topic}-{part}")
                moves.extend((os.path.join(src_dir, name), os.path.join(target, name)) for name in os.listdir(src_dir))
        for _, dst in moves:
            if os.path.exists(dst):
                raise WriteError(f"{dst} exists; kdump never replaces a file")
        for src, dst in moves:
            os.rename(src, dst)
        shutil.rmtree(self.staging_root, ignore_errors=True)

    def abort(self, messages):
        shutil.rmtree(self.staging_root, ignore_errors=True)
