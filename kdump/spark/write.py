"""Writing records as Kafka log segments: a library (:class:`PartitionWriter`) and the Spark writer around it.

``df.write.format("kafka-log").option("codec", "lz4").save(DIR)`` writes ``DIR/<topic>-<partition>/``
directories of magic-2 segments with kdump's writer: each ``.log`` written and verified by reading it back
(:class:`kdump.SegmentWriter`), then placed together with its ``.index`` and ``.timeindex`` built as Kafka's
recovery would (:func:`kdump.convert.files.place_segment`, one group, as convert and salvage place theirs), so
``kafka-dump-log`` and a broker read them.

Columns used, checked on the driver before any task runs as Spark's Kafka sink checks them (:func:`check_columns`):
``value`` (required) and ``key`` (binary or string: a string is written as UTF-8), ``headers`` (Spark's Kafka
header array), ``timestamp`` (CreateTime, in ms; null or absent: the time of writing, as Kafka's producer stamps
it), ``offset`` (absent or null: assigned per topic-partition, in task order then row order, whatever the
DataFrame's partitioning), ``topic`` (the ``topic`` option overrides it, as in Spark), ``partition`` (int; absent
or null: the ``partition`` option, else where Kafka's default partitioner puts the row, :mod:`kdump.spark.partitioner`,
over ``numPartitions`` or the topic's partition directories in the target). Options, checked as the reader's
(``kafka.*`` producer settings ignored with one note): ``codec`` (none, gzip, snappy, lz4, zstd), ``segmentBytes``
(roll size, default 1 GiB as Kafka's ``segment.bytes``), ``batchRecords`` (default 1000) and ``batchBytes``
(default 1 MiB) per batch.

Save modes: ``append`` continues each topic-partition after its log end offset (new segments beside the old);
``overwrite`` replaces the directory whole. How a commit stages, numbers and moves: :class:`KafkaLogWriter`.
Streaming, exactly once: :class:`KafkaLogStreamWriter`.
"""
from __future__ import annotations

import itertools
import logging
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
    directory_state,
    file_name,
    sibling,
    temporary_affixes,
    topic_partition,
)
from kdump.spark import options as O

log = logging.getLogger("kdump.spark")


class WriteError(ValueError):
    pass


@dataclass
class WriteOptions:
    codec: int = 0
    segment_bytes: int = 1 << 30
    batch_records: int = 1000
    batch_bytes: int = 1 << 20
    topic: str | None = None
    partition: int | None = None  # every row without a partition column value goes there; None: Kafka's partitioner
    num_partitions: int | None = None  # a topic's partition count for the partitioner (new topics: 1, Kafka's default)
    partition_counts: dict = field(default_factory=dict)  # topic -> 1 + its highest partition directory in the target

    def partitions_of(self, topic: str) -> int:
        """How many partitions Kafka's partitioner spreads ``topic``'s rows over: ``numPartitions``, else what the
        target holds of the topic, else 1 (a broker's ``num.partitions`` default for a topic it creates)."""
        found = self.partition_counts.get(topic, 0)
        if self.num_partitions is not None:
            if self.num_partitions < found:
                raise WriteError(f"numPartitions={self.num_partitions}, but topic {topic!r} already has partition "
                                 f"{found - 1} in the target: a topic's partitions are never fewer")
            return self.num_partitions
        return found or 1

    def check_partition(self, topic: str, part: int, named_by: str) -> None:
        """Refuse a partition the topic does not have, as Kafka's producer does (it waits for the partition to
        appear in the topic's metadata, then fails the send naming partition, topic and count). A topic's count is
        known from ``numPartitions`` or the partition directories the target holds; a topic new to the target
        without ``numPartitions`` is made with the partitions its rows name."""
        if part < 0:
            raise WriteError(f"a row of topic {topic!r} has partition {part}; partitions are numbered from 0")
        known = self.num_partitions if self.num_partitions is not None else self.partition_counts.get(topic)
        if known is not None and part >= known:
            raise WriteError(f"{named_by} {part} for topic {topic!r}, which has {known} partition"
                             f"{'' if known == 1 else 's'} (0-{known - 1}); Kafka's producer refuses a partition "
                             "the topic does not have (numPartitions=N to write a topic of N partitions)")


def write_options(options) -> WriteOptions:
    return WriteOptions(
        codec=CODEC_IDS[O.choice(options, "codec", CODEC_NAMES, "none")],
        segment_bytes=O.integer(options, "segmentBytes", 1 << 30, 1024),
        batch_records=O.integer(options, "batchRecords", 1000, 1),
        batch_bytes=O.integer(options, "batchBytes", 1 << 20, 1),
        topic=options.get("topic"),
        partition=O.integer(options, "partition", None, 0),
        num_partitions=O.integer(options, "numPartitions", None, 1),
    )


def partition_counts(directory: str) -> dict[str, int]:
    """topic -> 1 + the highest live partition directory of it under ``directory`` (a log directory may hold only
    some of a topic's partitions, as a broker's does: ``numPartitions`` then says how many there are)."""
    counts: dict[str, int] = {}
    try:
        names = os.listdir(directory)
    except OSError:
        return counts
    for name in names:
        tp = topic_partition(name)
        if tp is not None and directory_state(name) is None and os.path.isdir(os.path.join(directory, name)):
            counts[tp[0]] = max(counts.get(tp[0], 0), tp[1] + 1)
    return counts


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
        # the segment and its indexes placed together (as convert and salvage place theirs): a task cut short
        # leaves no segment without its indexes
        from kdump.convert.files import place_segment
        from kdump.write.group import AtomicGroup
        path = writer.path
        try:
            writer.atomic_file.prepare()  # read back and verified before its indexes are computed from it
        except BaseException:
            writer.abort()
            raise
        status = place_segment(AtomicGroup(os.path.dirname(path)), writer, path)
        if status is not None and status.problem:  # Kafka's recovery would fail on the segment just written
            raise WriteError(f"{path}: {status.note}")
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


def write_arrow(batches, directory: str, options: WriteOptions, seed: int = 0,
                spread: dict | None = None) -> list[Written]:
    """Write Arrow record batches (columns as in the module docstring) under ``directory``; returns what
    was written per topic-partition. Records of one topic-partition must come in offset order. A row that names
    no partition goes where Kafka's producer would send it (:mod:`kdump.spark.partitioner`; ``seed``: the Spark
    task's partition id, which fixes where null-keyed rows go; ``spread`` gets topic -> the partition count it was
    spread over)."""
    import pyarrow as pa

    from kdump.spark.partitioner import StickyPartitions, partition_for_key
    writers: dict[tuple, PartitionWriter] = {}
    sticky = StickyPartitions(seed)
    try:
        for rb in batches:
            names = {name.lower(): name for name in rb.schema.names}  # Spark resolves the columns case-insensitively
            n = rb.num_rows
            now_ms = time.time_ns() // 1_000_000
            if "timestamp" in names:
                ts_col = rb.column(names["timestamp"]).cast(pa.int64()).to_pylist()
            else:
                ts_col = [None] * n
            col = {name: rb.column(names[name]).to_pylist() if name in names else [None] * n
                   for name in ("key", "value", "offset", "topic", "partition", "headers")}
            for i in range(n):
                topic = options.topic if options.topic is not None else col["topic"][i]  # the option wins, as Spark's
                if topic is None:
                    raise WriteError("a row has a null topic and no topic option is given")
                key, value = _binary(col["key"][i]), _binary(col["value"][i])
                part = col["partition"][i]
                named_by = "a row's partition column is"
                if part is None and options.partition is not None:
                    part, named_by = options.partition, "option('partition') is"
                elif part is None:
                    count = options.partitions_of(topic)
                    if spread is not None:
                        spread[topic] = count
                    part = (partition_for_key(key, count) if key is not None
                            else sticky.partition(topic, count, len(value or b"")))
                w = writers.get((topic, part))
                if w is None:
                    options.check_partition(topic, part, named_by)  # once per topic-partition a task writes
                    w = writers[(topic, part)] = PartitionWriter(os.path.join(directory, f"{topic}-{part}"),
                                                                 topic, part, options)
                hdrs = col["headers"][i] or ()
                w.append(col["offset"][i], _ms(ts_col[i], now_ms), key, value,
                         [(h["key"], _binary(h["value"])) for h in hdrs])
        return [w.close() for w in writers.values()]
    except BaseException:
        for w in writers.values():
            w.abort()
        raise


# --- Spark ---------------------------------------------------------------------------------------------
try:
    from pyspark.sql.datasource import DataSourceArrowWriter, DataSourceStreamArrowWriter, WriterCommitMessage
except ImportError:  # the library above works without Spark
    DataSourceArrowWriter = object  # type: ignore[misc,assignment]  # plain bases when pyspark is absent
    DataSourceStreamArrowWriter = object  # type: ignore[misc,assignment]  # plain bases when pyspark is absent
    WriterCommitMessage = object  # type: ignore[misc,assignment]  # plain bases when pyspark is absent


@dataclass
class TaskWritten(WriterCommitMessage):
    staging: str
    written: list
    spread: dict = field(default_factory=dict)  # topic -> partitions Kafka's partitioner spread its rows over


_TEXT_OR_BINARY = "binary or string"


def check_columns(schema, options: WriteOptions) -> None:
    """Refuse, on the driver before any task runs, a DataFrame Spark's Kafka sink would refuse
    (``KafkaWriter.validateQuery``): no ``value`` column, no topic (column or option), a column of the wrong type.
    Every problem is told in one sentence. Columns the sink does not take are left alone, as Spark's."""
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        IntegerType,
        LongType,
        StringType,
        StructType,
        TimestampType,
    )
    fields = {f.name.lower(): f.dataType for f in schema.fields}
    text_or_binary = (StringType, BinaryType)

    def header_type(t) -> bool:
        if not isinstance(t, ArrayType) or not isinstance(t.elementType, StructType):
            return False
        inner = {f.name: f.dataType for f in t.elementType.fields}
        return (set(inner) == {"key", "value"} and isinstance(inner["key"], StringType)
                and isinstance(inner["value"], text_or_binary))

    wanted = {  # column -> (type test, what it must be)
        "key": (lambda t: isinstance(t, text_or_binary), _TEXT_OR_BINARY),
        "value": (lambda t: isinstance(t, text_or_binary), _TEXT_OR_BINARY),
        "topic": (lambda t: isinstance(t, StringType), "string"),
        "partition": (lambda t: isinstance(t, IntegerType), "int"),
        "offset": (lambda t: isinstance(t, (IntegerType, LongType)), "long"),
        "timestamp": (lambda t: isinstance(t, TimestampType), "timestamp"),
        "headers": (header_type, "array<struct<key: string, value: binary>>"),
    }
    problems = []
    if "value" not in fields:
        problems.append(f"it has no value column ({_TEXT_OR_BINARY}, the record's value; columns: "
                        f"{', '.join(schema.fieldNames()) or 'none'})")
    if "topic" not in fields and options.topic is None:
        problems.append("it names no topic (a topic column or option('topic', ...))")
    for name, (fits, expected) in wanted.items():
        t = fields.get(name)
        if t is not None and not fits(t):
            problems.append(f"column {name} is {t.simpleString()}, not {expected}"
                            + (f" (CAST({name} AS STRING))" if expected == _TEXT_OR_BINARY else ""))
    if problems:
        raise WriteError("kafka-log cannot write this DataFrame, as Spark's Kafka sink would not: "
                         + "; ".join(problems))


def prepare(options, schema) -> tuple[str, WriteOptions]:
    """The target directory and write options of a batch or stream write, every check made: option names (the
    ``kafka.*`` producer settings ignored with one note), option values, columns. Runs on the driver."""
    from kdump.spark import kafka_options as K
    note = K.ignored_note(K.check_write_names(options))
    if note is not None:
        log.warning("kdump: %s", note)
    path = O.paths(options)[0].rstrip(os.sep) or os.sep
    wo = write_options(options)
    check_columns(schema, wo)
    wo.partition_counts = partition_counts(path)
    if wo.topic is not None and wo.partition is None:  # a wrong numPartitions for a topic known now: said now
        wo.partitions_of(wo.topic)
    if wo.topic is not None and wo.partition is not None:  # a partition option the topic lacks: before any task
        wo.check_partition(wo.topic, wo.partition, "option('partition') is")
    return path, wo


def _task_dir(root: str) -> tuple[str, int]:
    """A task's own staging directory under ``root`` (unique per attempt and micro-batch) and its seed."""
    from pyspark import TaskContext
    ctx = TaskContext.get()
    pid = ctx.partitionId() if ctx else 0
    attempt = ctx.attemptNumber() if ctx else 0
    # a stream's micro-batch id is part of the seed: otherwise every micro-batch would start its null-keyed rows
    # in the same partitions
    batch = (ctx.getLocalProperty("streaming.sql.batchId") if ctx else None) or "0"
    return os.path.join(root, f"{pid}-{attempt}-{uuid.uuid4().hex}"), int(batch) * 1_000_003 + pid


def _write_task(iterator, root: str, options: WriteOptions) -> TaskWritten:
    staging, seed = _task_dir(root)
    spread: dict = {}
    written = write_arrow(iterator, staging, options, seed, spread)
    return TaskWritten(staging, written, spread)


def renumber_segment(path: str, delta: int) -> None:
    """Move the segment staged at ``path`` ``delta`` offsets on: every batch's base offset is rewritten in place.
    A v2 batch's CRC does not cover its base offset, and the indexes hold offsets relative to the segment's base,
    so nothing else changes; the headers are read back to check. The files keep their staged names: the commit
    places them under the names of the new base offset (:func:`_moves`). Only for segments this writer staged
    (never a user's file)."""
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


class KafkaLogWriter(DataSourceArrowWriter):
    """``df.write.format("kafka-log").mode("append" | "overwrite").save(DIR)``. Spark allows no other save mode
    for a Python data source (its own error says so). Tasks write into one staging directory beside ``DIR``
    (``.<name>.<random>.tmp``, a kdump temporary that ``kdump verify`` names if a killed run leaves it); the
    commit on the driver gives offsets to records that had none, per topic-partition in task order whatever the
    DataFrame's partitioning (as Kafka would assign them on arrival), then moves the partitions into place as
    one group of the write layer (:func:`_place`): append continues each partition after its log end offset (new
    segments beside the old ones, the log directory's checkpoints rewritten in the same group; a kill between
    renames is taken back by the next append), overwrite assembles the new ``DIR`` so and replaces it whole
    (:func:`kdump.write.tempdir.replace_directory`). A failed write removes the staging directory, and ``DIR``
    when this write created it."""

    def __init__(self, options, schema, overwrite: bool):
        self.path, self.options = prepare(options, schema)
        self.overwrite = overwrite
        if overwrite and self.options.num_partitions is not None:
            self.options.partition_counts = {}  # the topics are written anew: numPartitions is their count
        self.created_target = not os.path.exists(self.path)
        parent, name = os.path.split(self.path)
        prefix, suffix = temporary_affixes(name)
        try:
            # (not locked as kdump.write.atomic's are: Spark plans, commits and aborts in Python workers that may
            # each be another process, so none of them could hold a lock for the write's whole life)
            os.makedirs(parent, exist_ok=True)
            self.staging_root = tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent)
        except OSError as e:
            raise _not_written(e, self.path) from None

    def write(self, iterator):
        return _write_task(iterator, self.staging_root, self.options)

    def commit(self, messages):
        from kdump.write.tempdir import replace_directory
        try:
            if not self.overwrite:
                # appends read the log end offsets and move files into DIR: under DIR's lock, so that a second
                # writer (another Spark job, an index rebuild) is refused (exit 2, naming it) rather than interleaved
                from kdump.write.lock import partition_lock
                os.makedirs(self.path, exist_ok=True)
                with partition_lock(self.path):
                    self._append(messages)
                return
            assembled = os.path.join(self.staging_root, "assembled")
            by_partition = _numbered(messages, {})
            os.makedirs(assembled)
            _place(assembled, _moves(by_partition, assembled), [])
            _add_partitions(messages, assembled)
            replace_directory(assembled, self.path)  # DIR is the old one until one rename makes it the new one
        finally:
            shutil.rmtree(self.staging_root, ignore_errors=True)

    def _append(self, messages) -> None:
        from kdump.write.group import resolve_interrupted
        resolve_interrupted(self.path)  # an append a kill cut short is taken back (a stream's batch finished)
        before = log_ends(self.path, {tp for m in messages if m for tp in ((w.topic, w.partition) for w in m.written)})
        by_partition = _numbered(messages, before)
        moves = _moves(by_partition, self.path)
        _check_new(moves)
        checkpoints = checkpoint_updates(self.path, *_appended(by_partition, before, self.path, every_start=False))
        _place(self.path, moves, checkpoints, resolve="undo")
        _add_partitions(messages, self.path)

    def abort(self, messages):
        shutil.rmtree(self.staging_root, ignore_errors=True)
        if self.created_target:
            try:
                os.rmdir(self.path)  # only if empty: nothing of another writer's is removed
            except OSError:
                pass


SINK_STATE = ".kdump-sink"  # hidden: no command searches it for data (kdump.read.logdir.is_hidden)


class KafkaLogStreamWriter(DataSourceStreamArrowWriter):
    """``df.writeStream.format("kafka-log").option("checkpointLocation", CP).start(DIR)``: each micro-batch is
    appended as a batch write appends (offsets go on after each partition's log end offset), exactly once.

    Spark records a micro-batch as done in its checkpoint only after this sink's commit returns, so after a crash
    between the two it runs the same batch id again with the same rows. Each commit places its files, the log
    directory's checkpoints and a record of the batch id (``DIR/.kdump-sink/batch-<id>.json``) as one group of the
    write layer (:func:`_place`), the record last. A batch id that has its record is not written again (the rows
    of its second run are dropped); a commit a kill cut short between renames is finished from the group's
    journal by the next commit (:func:`kdump.write.group.resolve_interrupted`), then treated as done. A batch id
    at or below the last one recorded that has no record, or whose record names another ``checkpointLocation``,
    comes from another query or a new checkpoint, and is refused rather than skipped in silence: one streaming
    query per output directory, as Spark's file sink.
    Spark's complete output mode (``overwrite``) appends too, as Spark's Kafka sink does (Kafka cannot truncate
    a topic)."""

    KEEP = 2  # records kept: Spark runs again at most the last batch whose commit it did not record

    def __init__(self, options, schema, overwrite: bool):
        self.path, self.options = prepare(options, schema)
        self.state = os.path.join(self.path, SINK_STATE)
        # the query's checkpoint, when given as an option: tells a batch id run again from one of another query
        self.checkpoint = options.get("checkpointLocation")
        self.staging_root = os.path.join(self.state, "staging")
        os.makedirs(self.staging_root, exist_ok=True)

    def write(self, iterator):
        return _write_task(iterator, self.staging_root, self.options)

    def _record(self, batch_id: int) -> str:
        return os.path.join(self.state, f"batch-{batch_id}.json")

    def _committed(self) -> dict[int, dict]:
        """batch id -> the record of its commit (placed with the commit's files, as one group)."""
        import json
        out = {}
        for name in os.listdir(self.state):
            if name.startswith("batch-") and name.endswith(".json"):
                with open(os.path.join(self.state, name), encoding="utf-8") as f:
                    out[int(name[6:-5])] = json.load(f)
        unfinished = sorted(bid for bid, record in out.items() if not record.get("done"))
        if unfinished:  # only an earlier kdump wrote a record before its renames
            raise WriteError(f"{self._record(unfinished[0])}: a commit an earlier kdump left unfinished; run the "
                             "query again with that kdump to finish it")
        return out

    def commit(self, messages, batchId):
        from kdump.write.lock import partition_lock
        with partition_lock(self.path):  # one writer of DIR's files at a time (see KafkaLogWriter.commit)
            self._commit(messages, batchId)

    def _commit(self, messages, batchId) -> None:
        import json

        from kdump.write.group import resolve_interrupted
        for key, outcome in resolve_interrupted(self.path):  # a commit a kill cut short: its renames are made
            if outcome == "finished" and key:
                _make_partitions(key.get("spread", {}), self.path)
        records = self._committed()
        last = max(records, default=None)
        known = records.get(batchId)
        replay = known is not None and known.get("checkpoint") == self.checkpoint
        if last is not None and batchId <= last and not replay:
            raise WriteError(f"{self.path} already holds micro-batch {last} of a stream and batch {batchId} is no "
                             "second run of one of its batches: another query or a new checkpoint writes here (one "
                             "streaming query per output directory; restart from its checkpoint)")
        if known is None:
            parts = {(w.topic, w.partition) for m in messages if m for w in m.written}
            before = log_ends(self.path, parts)
            by_partition = _numbered(messages, before)
            moves = _moves(by_partition, self.path)
            _check_new(moves)
            spread = _spread(messages)
            record = {"batchId": batchId, "checkpoint": self.checkpoint, "moves": moves, "spread": spread,
                      "done": True}
            checkpoints = checkpoint_updates(self.path, *_appended(by_partition, before, self.path, every_start=True))
            _place(self.path, moves, checkpoints, resolve="finish", key={"batchId": batchId, "spread": spread},
                   record=(self._record(batchId), json.dumps(record).encode()))
            _make_partitions(spread, self.path)
            records[batchId] = record
        for bid in sorted(records)[:-self.KEEP]:
            os.remove(self._record(bid))
        self._clean()

    def _clean(self) -> None:
        """Remove every task's staging: Spark runs one micro-batch at a time, and this one is committed (or was
        already: a second run's rows are dropped)."""
        for name in os.listdir(self.staging_root):
            shutil.rmtree(os.path.join(self.staging_root, name), ignore_errors=True)

    def abort(self, messages, batchId):
        for m in messages:
            if m is not None:
                shutil.rmtree(m.staging, ignore_errors=True)


# The log directory's checkpoints a broker reads at start-up and that name per-partition offsets: an append moves the
# high watermark and the recovery point to the new log end (else a consumer, or kdump's own batch read, stops at the
# old high watermark, and a broker's recovery starts from the old point); a partition the append creates gets its log
# start. Only checkpoints the target already has are kept true: a target without them (kdump's writer makes none for
# a new topic) leaves a broker to derive them from the segments, as it does for a new log directory.
APPENDED_CHECKPOINTS = ("replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                        "log-start-offset-checkpoint")


def checkpoint_updates(root: str, ends: dict[tuple, int], starts: dict[tuple, int]) -> list:
    """The checkpoints of log directory ``root`` rewritten for an append, prepared (written beside, fsynced and read
    back) but not placed: ``ends`` (topic, partition) -> the log end offset after the append, ``starts`` -> the
    partition's first offset, the log start of a partition the log-start checkpoint lacks (one the append creates). A
    checkpoint Kafka could not read is refused before anything moves."""
    from kdump.read.checkpoints import parse_checkpoint
    from kdump.write.atomic import AtomicFile
    prepared: list = []
    try:
        for name in APPENDED_CHECKPOINTS:
            path = os.path.join(root, name)
            if not os.path.exists(path):
                continue
            cp = parse_checkpoint(path, kind=FileKind.OFFSET_CHECKPOINT.value)
            if cp.problems:
                raise WriteError(f"{path}: {cp.problems[0].message}; an append must keep it true and cannot read it "
                                 "(kdump index check says more)")
            entries = {(topic, part): offset for topic, part, offset in cp.entries}
            for tp in ends:
                if name == "log-start-offset-checkpoint":
                    if tp not in entries and tp in starts:
                        entries[tp] = starts[tp]
                else:
                    entries[tp] = ends[tp]
            text = "".join(f"{topic} {part} {offset}\n" for (topic, part), offset in entries.items())
            f = AtomicFile(path, overwrite=True, backup=False)
            prepared.append(f)
            f.write(f"0\n{len(entries)}\n{text}".encode())
            f.prepare()
    except BaseException:
        for f in prepared:
            f.abort()
        raise
    return prepared


def _appended(by_partition, before: dict[tuple, int], root: str, *, every_start: bool) -> tuple[dict, dict]:
    """The (ends, starts) :func:`checkpoint_updates` takes for an append of ``by_partition`` (numbered) after the log
    ends ``before``: each partition's new log end, and the first offset of each partition the append creates (with
    ``every_start``, a stream's, of every partition it writes: the first segment's base already there)."""
    from kdump.read.partition import PartitionLog
    spans = {tp: [o for _, w in items for _, first, last in w.segments for o in (first, last)]
             for tp, items in by_partition.items()}
    ends = {tp: max(o) + 1 for tp, o in spans.items() if o}
    starts = {tp: min(o) for tp, o in spans.items() if o and tp not in before}
    if every_start:
        starts.update({tp: PartitionLog(os.path.join(root, f"{tp[0]}-{tp[1]}")).segments[0].base_offset
                       for tp in ends if tp in before})
    return ends, starts


def _place(root: str, moves: list[tuple[str, str]], checkpoints: list, *, resolve: str | None = None,
           key: dict | None = None, record: tuple[str, bytes] | None = None) -> None:
    """Every staged file moved to its place under ``root``, the log directory's checkpoints rewritten and a
    stream's batch record written, as ONE group of the write layer (:class:`kdump.write.group.AtomicGroup`, the
    record its last member): they appear together or not at all. A failure takes back what was placed (nothing
    was written); a kill leaves the group's journal, which the next commit resolves as ``resolve`` says
    (:func:`kdump.write.group.resolve_interrupted`: "undo" for a batch write, "finish" for a stream's)."""
    from kdump.write.group import AtomicGroup
    group = AtomicGroup(root, undo=True, resolve=resolve, key=key)
    try:
        # temporaries a commit killed before its journal left (this run's own are held, so not stale)
        group.clean([dst for _, dst in moves] + [f.path for f in checkpoints] + ([record[0]] if record else []))
        for src, dst in moves:
            group.move_in(dst, src)
        for f in checkpoints:
            group.adopt(f)
        if record is not None:
            group.add(record[0], last=True).write(record[1])
    except BaseException:
        group.abort()
        for f in checkpoints:
            f.abort()
        raise
    group.commit()


def log_ends(root: str, partitions) -> dict[tuple, int]:
    """(topic, partition) -> its log end offset under ``root``, for those that hold segments: where an append
    continues them. A partition whose last segment cannot be read is refused (kdump would not know where to go
    on: ``kdump verify`` says why)."""
    from kdump.read.partition import PartitionLog
    ends = {}
    for topic, part in partitions:
        target = os.path.join(root, f"{topic}-{part}")
        if not os.path.isdir(target) or not any(classify(n) is FileKind.LOG for n in os.listdir(target)):
            continue
        end = PartitionLog(target).log_end_offset()
        if end is None:
            raise WriteError(f"{target}: its last segment cannot be read, so an append cannot tell where its offsets "
                             "go on (kdump verify says why)")
        ends[(topic, part)] = end
    return ends


def _numbered(messages, starts: dict[tuple, int]) -> dict:
    """The tasks' segments per topic-partition, numbered: records that had no offset from ``starts`` (the log
    end offset an append continues, else 0) in task order; offsets a column gave checked to go on from there and
    not to overlap between tasks. Nothing is moved."""
    by_partition: dict = {}
    for m in messages:  # in task (partition id) order: the order Kafka would give records that arrive so
        if m is None:
            continue
        for w in m.written:
            by_partition.setdefault((w.topic, w.partition), []).append((m.staging, w))
    for (topic, part), items in by_partition.items():
        start = starts.get((topic, part), 0)
        if all(w.assigned for _, w in items):
            _assign_offsets(items, start)
        ranges = sorted((first, last, path) for _, w in items for path, first, last in w.segments)
        if ranges and ranges[0][0] < start:
            raise WriteError(f"{topic}-{part}: the offset column starts at {ranges[0][0]}, but the partition already "
                             f"holds offsets up to {start - 1}; an append goes on after them (drop the offset column "
                             "to let the writer number the records)")
        for (a0, a1, ap), (b0, b1, bp) in itertools.pairwise(ranges):
            if b0 <= a1:
                raise WriteError(f"{topic}-{part}: tasks wrote overlapping offsets ({ap}: {a0}-{a1}, "
                                 f"{bp}: {b0}-{b1}) from the offset column; give each record its own offset "
                                 "or drop the column to let the writer assign them")
    return by_partition


# the order a segment's files are placed in: its .index last, the sign Kafka's log loading reads a segment as whole by
PLACING_ORDER = (FileKind.LOG, FileKind.TIMEINDEX, FileKind.TXNINDEX, FileKind.INDEX)


def _moves(by_partition, root: str) -> list[tuple[str, str]]:
    """(staged file, its place under ``root``) for every file of every segment, named for the segment's first
    offset (the one the commit numbered)."""
    moves: list[tuple[str, str]] = []
    for (topic, part), items in by_partition.items():
        target = os.path.join(root, f"{topic}-{part}")
        for _, w in items:
            for path, first, _ in w.segments:
                moves.extend((sibling(path, kind), os.path.join(target, file_name(first, kind)))
                             for kind in PLACING_ORDER if os.path.exists(sibling(path, kind)))
    return moves


def _check_new(moves: list[tuple[str, str]]) -> None:
    """Every check before the first move: a refusal moves nothing."""
    for _, dst in moves:
        if os.path.lexists(dst):
            raise WriteError(f"{dst} exists; kdump never replaces a file")


def _add_partitions(messages, root: str) -> None:
    """The partition directories a topic spread by Kafka's partitioner has and the target lacks: a topic's
    partitions all exist, as a broker creates them, so the next write finds the same partition count."""
    _make_partitions(_spread(messages), root)


def _spread(messages) -> dict[str, int]:
    """Topic -> how many partitions Kafka's partitioner spread it over, in the tasks' messages (what a stream's
    journal records, to make them when it is finished)."""
    spread: dict[str, int] = {}
    for m in messages:
        for topic, count in (m.spread if m else {}).items():
            spread[topic] = max(spread.get(topic, 0), count)
    return spread


def _make_partitions(spread: dict[str, int], root: str) -> None:
    for topic, count in spread.items():
        for part in range(count):
            os.makedirs(os.path.join(root, f"{topic}-{part}"), exist_ok=True)


def _not_written(error: OSError, path: str) -> OSError:
    from kdump.write.guards import TAKEN_BACK, write_error
    return write_error(error, path, TAKEN_BACK)


def _assign_offsets(items, start: int = 0) -> None:
    """Number the records of one topic-partition across tasks from ``start``: each task counted from 0, moved on
    by ``start`` and the records of the tasks before it."""
    next_offset = start
    for _, w in items:
        if not w.segments:
            continue
        delta = next_offset - w.segments[0][1]
        if delta:
            for path, _, _ in w.segments:
                renumber_segment(path, delta)
            w.segments = [(path, first + delta, last + delta) for path, first, last in w.segments]
        next_offset = w.segments[-1][2] + 1
