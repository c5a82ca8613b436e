"""The offsets a kafka-log read takes from each partition: Spark's Kafka-source bounds (:mod:`kafka_options`)
resolved against what is on disk, through the read layer (first offsets from segment names, the log end and
the batch at a time from :mod:`kdump.read.locate`), and the high watermark a log directory's
``replication-offset-checkpoint`` names (a batch read stops there, as a consumer does, unless
``stopAtHighWatermark`` is false).
"""
from __future__ import annotations

import logging
import os

from kdump.read.logdir import HIGH_WATERMARK_CHECKPOINT, FileKind
from kdump.spark import kafka_options as K
from kdump.spark import remote
from kdump.spark.plan import by_directory

logger = logging.getLogger("kdump.spark")


def high_watermarks(log_dir: str) -> dict:
    """``{(topic, partition): offset}`` from a log directory's replication-offset-checkpoint, read by
    kdump's checkpoint parser (Kafka's rules); empty if there is none. A checkpoint Kafka could not read
    gives no high watermark either (logged): reading is then bounded by what is whole on disk."""
    from kdump.read.checkpoints import parse_checkpoint
    path = os.path.join(log_dir, HIGH_WATERMARK_CHECKPOINT)
    try:
        cp = parse_checkpoint(path, kind=FileKind.OFFSET_CHECKPOINT.value)
    except (OSError, ValueError) as e:
        if os.path.exists(path):
            logger.warning("kdump: %s: %s", path, e)
        return {}
    if cp.problems:
        logger.warning("kdump: %s: %s", path, cp.problems[0].message)
        return {}
    return {(topic, partition): offset for topic, partition, offset in cp.entries}


def first_offset_at_or_after(log, time_ms: int) -> int | None:
    """Kafka's ``offsetsForTimes`` in the partition ``log`` (a :class:`~kdump.read.partition.PartitionLog`): the
    offset of the first record whose timestamp is at or after ``time_ms`` (the batch from ``locate_time``, then
    its records); None when no record is that late."""
    from kdump.read.segment import DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader
    located = log.locate_time(time_ms)
    if located is None or not located.found:
        return None
    with SegmentReader(located.segment, start=located.position) as reader:
        for batch in reader:
            if batch.max_timestamp < time_ms:
                continue
            for record in batch.records(DEFAULT_MAX_DECOMPRESSED_BYTES):
                if record.timestamp >= time_ms:
                    return record.offset
    return None


def offset_ranges(segments, read: K.KafkaRead, *, stop_at_high_watermark: bool = True) -> dict:
    """``{directory: (first, end)}`` for every partition directory of ``segments`` (SegmentFiles in directory
    order) whose read is bounded: by the options' bounds, or by a high watermark below the log end. A
    directory missing from the answer is read whole."""
    from kdump.read.partition import PartitionLog
    plain = read.starting.kind == "earliest" and read.ending is not None and read.ending.kind == "latest"
    out = {}
    watermarks: dict[str, dict] = {}  # log directory -> its high watermarks (one checkpoint read per directory)
    groups = by_directory(segments)
    K.check_named_partitions(read, (_tp(segs[0], directory) for directory, segs in groups.items()))
    for directory, segs in groups.items():
        topic, partition = segs[0].topic, segs[0].partition
        if remote.is_remote(directory):
            if not plain:
                raise K.KafkaOptionError(f"{directory}: offset and timestamp bounds are read from local files "
                                         "only; copy the partition locally or read it whole")
            continue
        hw = None
        if stop_at_high_watermark and topic is not None:
            log_dir = os.path.dirname(directory)
            if log_dir not in watermarks:
                watermarks[log_dir] = high_watermarks(log_dir)
            hw = watermarks[log_dir].get((topic, partition))
        if plain and hw is None:
            continue
        log = PartitionLog(directory)
        log_end = log.log_end_offset()
        if log_end is None:
            log_end = segs[-1].base_offset
        extent = K.PartitionExtent(log_start=segs[0].base_offset, log_end=log_end,
                                   latest=log_end if hw is None else min(hw, log_end))
        tp = _tp(segs[0], directory)
        def at_time(ms: int, partition_log: PartitionLog = log) -> int | None:
            return first_offset_at_or_after(partition_log, ms)
        rng = K.resolve(read, tp, extent, at_time, lambda message: logger.warning("kdump: %s", message))
        out[directory] = (rng.start, rng.end)
    return out


def _tp(seg, directory: str) -> K.TopicPartition:
    """The topic-partition bounds name a directory by (the directory itself when it is not named topic-N)."""
    return (seg.topic if seg.topic is not None else directory, seg.partition if seg.partition is not None else -1)


def bounded(segments, ranges: dict) -> list:
    """The segments that can hold an offset of their directory's range (a segment holds offsets from its base
    offset to below the next segment's)."""
    kept = []
    for i, seg in enumerate(segments):
        rng = ranges.get(seg.directory)
        if rng is None:
            kept.append(seg)
            continue
        first, end = rng
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        if seg.base_offset >= end:
            continue
        if nxt is not None and nxt.directory == seg.directory and nxt.base_offset <= first:
            continue
        kept.append(seg)
    return kept
