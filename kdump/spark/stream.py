"""``spark.readStream.format("kafka-log")``: tail live partition or log directories.

Offsets (JSON, one entry per partition directory)::

    {"orders-0": {"dir": "/data/orders-0", "offset": 1200, "segment": 1000, "position": 81920}}

``offset`` is the next Kafka offset to read, ``segment`` the base offset of the segment holding it and
``position`` the byte position there: a micro-batch reads whole batches from one such point to the next.
Each trigger walks the batches past the last point with the resynchronising walk ``kdump verify`` makes: a batch
still being written (a partial last entry with nothing valid after it) is left for the next trigger, damage (a
damaged size field with valid batches after it included) fails the query or is read past (``failOnDataLoss``),
a rolled segment is followed into the next one, and when the log
directory has a ``replication-offset-checkpoint`` reading stops at the high watermark it names (records
above it are not committed yet). A segment deleted by retention before it was read is data loss: with
``failOnDataLoss`` (default true, as Spark's Kafka source) the query fails, otherwise reading resumes at
the oldest remaining segment.

Options: those of the batch reader, plus ``startingOffsets`` (earliest, default, or latest) and
``maxRecordsPerTrigger`` (a read limit; ``Trigger.AvailableNow`` reads everything available in limited
micro-batches), ``isolationLevel=read_committed`` (aborted transactions dropped; a micro-batch ends before
the first offset of a transaction still open, Kafka's last stable offset, until its marker is written).
"""
from __future__ import annotations

import logging
import os
import time

from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from kdump.format.legacy import LegacyRun
from kdump.read.damage import TAIL, Damage
from kdump.spark import _source
from kdump.spark import kafka_options as K
from kdump.spark import options as O
from kdump.spark.accumulators import on_damage
from kdump.spark.arrow import SegmentSlice, read_slices
from kdump.spark.bounds import high_watermarks
from kdump.spark.plan import find_segments
from kdump.spark.schema import columns_of

log = logging.getLogger("kdump.spark")


class DataLoss(_source.KdumpError):
    pass


def _partitions(paths, storage_options, selection=None):
    """``{key: (directory, topic, partition, [SegmentFile in offset order])}`` of the partitions ``selection``
    (subscribe, subscribePattern, assign) keeps."""
    parts: dict = {}
    for seg in find_segments(paths, storage_options):
        if selection is not None and not selection.keeps(seg.topic, seg.partition):
            continue
        key = f"{seg.topic}-{seg.partition}" if seg.topic is not None else seg.directory
        parts.setdefault(key, (seg.directory, seg.topic, seg.partition, []))[3].append(seg)
    return parts


class SlicesPartition(InputPartition):
    def __init__(self, slices):
        super().__init__(None)
        self.slices = slices


class KafkaLogStreamReader(DataSourceStreamReader):
    def __init__(self, options, schema, damage_accumulator=None):
        self.damage_accumulator = damage_accumulator
        self.kafka = K.stream_read(options)
        O.warn_once(self.kafka.notes)
        self.paths = O.paths(options)
        self.options = O.read_options(options, columns_of(schema), self.kafka)
        O.apply_kafka_isolation(self.options, options, self.kafka)
        self.options.live = True
        self.starting = self.kafka.starting.kind
        # maxOffsetsPerTrigger is Spark's Kafka-source name of maxRecordsPerTrigger (offsets are records here)
        self.max_records = O.integer(options, "maxRecordsPerTrigger", None, 1) or self.kafka.max_offsets_per_trigger
        self.fail_on_data_loss = self.kafka.fail_on_data_loss
        self.txns: dict = {}  # read_committed: key -> PartitionTxns, scanned on as the partition grows
        self.last_trigger_ms = 0  # when a micro-batch last got data (minOffsetsPerTrigger waits at most
        # maxTriggerDelay from there; 0, as in Spark: the first trigger never waits)
        self.latest: dict | None = None  # the latest offsets the last latestOffset saw (reportLatestOffset)

    def _txn_filter(self, key, segs, hw=None):
        """read_committed: the partition's filter after scanning what was appended since the last trigger
        (None for read_uncommitted)."""
        if self.options.isolation != "read_committed":
            return None
        from kdump.spark.txn import PartitionTxns
        txns = self.txns.setdefault(key, PartitionTxns())
        txns.scan([(s.base_offset, s.location) for s in segs], max_batch_bytes=self.options.max_batch_bytes)
        return txns.filter(hw)

    # --- offsets ---------------------------------------------------------------------------------
    def initialOffset(self):
        out = {}
        found = _partitions(self.paths, self.options.storage_options, self.kafka.selection)
        for key, (directory, _, _, segs) in found.items():
            first = segs[0]
            out[key] = {"dir": directory, "offset": first.base_offset, "segment": first.base_offset, "position": 0}
        if self.starting == "latest":
            return self._advance(out, None)
        if self.starting != "earliest":  # per partition, or by time: where each partition's start offset is
            from kdump.spark.bounds import offset_ranges
            segments = [seg for _, _, _, segs in found.values() for seg in segs]
            starts = offset_ranges(segments, self.kafka, stop_at_high_watermark=False)
            for key, (directory, _, _, segs) in found.items():
                if directory in starts:
                    out[key] = _point_at(directory, segs, starts[directory][0])
        return out

    def getDefaultReadLimit(self):
        """maxRecordsPerTrigger/maxOffsetsPerTrigger as ReadMaxRows; else minOffsetsPerTrigger as ReadMinRows (the
        engine then calls latestOffset with a limit other than ReadAllAvailable, which is Trigger.AvailableNow's:
        minOffsetsPerTrigger is applied by :meth:`latestOffset` for any limit but that one)."""
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows, ReadMinRows
        if self.max_records:
            return ReadMaxRows(self.max_records)
        minimum = self.kafka.min_offsets_per_trigger
        return ReadMinRows(minimum) if minimum is not None else ReadAllAvailable()

    def latestOffset(self, start, limit):
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows
        budget = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        latest = self.latest = self._advance(self._known_ahead(start), None)
        minimum = self.kafka.min_offsets_per_trigger
        if minimum is not None and not isinstance(limit, ReadAllAvailable) and self._delay(start, latest, minimum):
            return start
        return latest if budget is None else self._advance(start, budget)

    def _known_ahead(self, start: dict) -> dict:
        """``start``, with each partition moved on to the latest point an earlier trigger walked to: the walk to the
        latest offsets goes on from there, so that a backlog read a limited micro-batch at a time is walked once."""
        if not self.latest:
            return start
        out = dict(start)
        for key, point in self.latest.items():
            here = out.get(key)
            if here is None or (point["segment"], point["position"]) > (here["segment"], here["position"]):
                out[key] = point
        return out

    def _delay(self, start: dict, latest: dict, minimum: int) -> bool:
        """minOffsetsPerTrigger, as Spark's Kafka source: wait while fewer offsets than ``minimum`` are new, unless
        maxTriggerDelay has passed since the last micro-batch (``ReadAllAvailable``, Trigger.AvailableNow's
        limit, never waits)."""
        now = int(time.time() * 1000)
        if now - self.last_trigger_ms >= self.kafka.max_trigger_delay_ms:
            self.last_trigger_ms = now
            return False
        new = sum(p["offset"] - start.get(key, {"offset": p["offset"]})["offset"] for key, p in latest.items())
        if new < minimum:
            return True
        self.last_trigger_ms = now
        return False

    def reportLatestOffset(self):
        """The offsets available on disk when the last micro-batch was planned (what Spark shows as the source's
        ``latestOffset`` in the query's progress: its ``endOffset`` per partition subtracted from it is the lag,
        what Spark's Kafka source reports as ``offsetsBehindLatest``; pyspark 4.3 gives a Python source no hook
        for ``metrics``)."""
        return self.latest

    def _advance(self, start: dict, budget: int | None) -> dict:
        """Walk each partition's whole batches from ``start``; at most ``budget`` records in all."""
        parts = _partitions(self.paths, self.options.storage_options, self.kafka.selection)
        end = dict(start)
        for key, (directory, topic, partition, segs) in parts.items():
            if key not in end:  # a partition that appeared: from its beginning
                end[key] = {"dir": directory, "offset": segs[0].base_offset, "segment": segs[0].base_offset,
                            "position": 0}
            hw = high_watermarks(os.path.dirname(directory)).get((topic, partition)) if topic else None
            txns = self._txn_filter(key, segs, hw)
            if txns is not None:  # read_committed: nothing from the last stable offset on
                hw = txns.last_stable_offset
            end[key], used = self._walk_partition(key, end[key], segs, hw, budget)
            if budget is not None:
                budget -= used
                if budget <= 0:
                    break
        return end

    def _walk_partition(self, key, point, segs, hw, budget):
        bases = [s.base_offset for s in segs]
        if point["segment"] not in bases:
            if self.fail_on_data_loss:
                raise DataLoss(f"{key}: segment {point['segment']} (offset {point['offset']}) was deleted before it "
                               "was read (retention?); set failOnDataLoss=false to go on from the oldest segment")
            later = [s for s in segs if s.base_offset > point["segment"]] or segs[-1:]
            log.warning("kdump: %s: segment %s was deleted before it was read (retention?): offsets %s..%s are lost "
                        "(failOnDataLoss=false)", key, point["segment"], point["offset"],
                        max(point["offset"], later[0].base_offset) - 1)
            point = {**point, "segment": later[0].base_offset, "position": 0,
                     "offset": max(point["offset"], later[0].base_offset)}
        used = 0
        i = bases.index(point["segment"])
        point = dict(point)
        while i < len(segs):
            seg = segs[i]
            last_segment = i == len(segs) - 1
            # the resynchronising walk that verify and every batch read make (kdump.read.damage.readable): in the
            # active segment an entry cut short with nothing valid after it is a batch being written (wait for it),
            # a damaged size field with valid batches after it is damage
            w = _source.walk(seg.location, point["position"], None, live=last_segment,
                             max_batch_bytes=self.options.max_batch_bytes,
                             on_damage=lambda damage, location=seg.location: self._data_loss(key, location, damage))
            stopped = False
            for item in w:
                for batch in (item.messages() if type(item) is LegacyRun else (item,)):
                    if hw is not None and batch.last_offset >= hw:
                        stopped = True
                        break
                    n = batch.records_count if batch.records_count is not None else 1
                    if budget is not None and used and used + n > budget:
                        stopped = True
                        break
                    used += n
                    point["position"] = batch.position + batch.size
                    point["offset"] = batch.last_offset + 1
                if stopped:
                    break
            if stopped or last_segment:
                break
            i += 1
            point["segment"] = segs[i].base_offset
            point["position"] = 0
            point["offset"] = max(point["offset"], segs[i].base_offset)
        return point, used

    def _data_loss(self, key: str, location: str, damage: Damage) -> None:
        """Damage met walking ahead: it fails the query (failOnDataLoss=true, naming the file, the bytes and the
        offsets lost) or is read past with a warning (the micro-batch that reads it counts it, as a batch read
        does). Zero padding at a segment's end (a preallocated segment) loses nothing: the walk stops there."""
        if damage.kind == TAIL and damage.zeros:
            return
        where = f"{location}: {damage}"
        if self.fail_on_data_loss:
            raise DataLoss(f"{key}: {where} (failOnDataLoss=true; set failOnDataLoss=false to read past it)")
        log.warning("kdump: %s: %s (failOnDataLoss=false: reading past it)", key, where)

    # --- micro-batches -----------------------------------------------------------------------------
    def partitions(self, start, end):
        parts = _partitions(self.paths, self.options.storage_options, self.kafka.selection)
        out = []
        for key, stop in end.items():
            begin = start.get(key) if start else None
            if begin is None:
                begin = {"segment": None, "position": 0}
            if key not in parts or (begin.get("segment"), begin.get("position")) == (stop["segment"], stop["position"]):
                continue
            _, topic, partition, segs = parts[key]
            # the aborted transactions; the range already ends at or below the last stable offset
            txns = self._txn_filter(key, segs)
            if txns is not None:
                txns.last_stable_offset = None
            slices = []
            for seg in segs:
                if begin["segment"] is not None and seg.base_offset < begin["segment"]:
                    continue
                if seg.base_offset > stop["segment"]:
                    break
                a = begin["position"] if seg.base_offset == begin["segment"] else 0
                b = stop["position"] if seg.base_offset == stop["segment"] else None
                if b is not None and b <= a:
                    continue
                slices.append(SegmentSlice(seg.location, topic, partition, a, b, (b or seg.size) - a, txns=txns,
                                           offsets=(begin.get("offset", 0), stop["offset"])))
            if slices:
                out.append(SlicesPartition(slices))
        return out

    def read(self, partition):
        # InputPartition(None): nothing to read
        return read_slices(getattr(partition, "slices", ()), self.options, on_damage(self.damage_accumulator))

    def commit(self, end):
        pass


def _point_at(directory: str, segs, offset: int) -> dict:
    """The stream position of ``offset`` in a partition: the batch holding it (or the first after it) through the
    read layer's lookup; the records of that batch before ``offset`` are left out by the slice's bounds."""
    from kdump.read.logdir import segment_base_offset
    from kdump.read.partition import PartitionLog
    located = PartitionLog(directory).locate_offset(offset)
    if located is None or not located.found:  # beyond the log's end: from its end
        last = segs[-1]
        return {"dir": directory, "offset": offset, "segment": last.base_offset, "position": last.size}
    return {"dir": directory, "offset": offset, "segment": segment_base_offset(located.segment),
            "position": located.position}
