"""The numbers of a log: per topic-partition and in total, segments, batches, records, bytes, offset and
time ranges, and the mix of codecs and magics. One segment at a time (:func:`segment_stats`), merged with
:meth:`Stats.merge`, so that the same numbers come from one process or from Spark tasks.

Header fields only, except for compressed legacy wrappers, whose record count only their inner messages
tell. Timestamps: the smallest and largest batch max timestamp (Kafka's time index keeps the same);
-1 (no timestamp) is left out. Offsets: the first batch's first offset and the last batch's last offset.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from kdump.errors import KdumpError
from kdump.format.columns import RECORDS_PER_CHUNK
from kdump.format.names import codec_name
from kdump.read.segment import DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader

DEFAULT_MEMORY = 256 << 20  # for the key digests of one partition (kdump stats --memory)


@dataclass
class Stats:
    segments: int = 0
    batches: int = 0
    records: int = 0
    bytes: int = 0  # file bytes (trailing bytes included)
    first_offset: int | None = None
    last_offset: int | None = None
    min_timestamp: int | None = None
    max_timestamp: int | None = None
    codecs: dict = field(default_factory=dict)  # codec name -> batches
    magics: dict = field(default_factory=dict)  # "0"/"1"/"2" -> batches
    damaged_segments: int = 0  # segments whose walk stopped before the end (a truncated tail counts)

    def merge(self, other: Stats) -> Stats:
        def lo(a, b):
            return b if a is None else a if b is None else min(a, b)

        def hi(a, b):
            return b if a is None else a if b is None else max(a, b)
        out = Stats(self.segments + other.segments, self.batches + other.batches, self.records + other.records,
                    self.bytes + other.bytes, lo(self.first_offset, other.first_offset),
                    hi(self.last_offset, other.last_offset), lo(self.min_timestamp, other.min_timestamp),
                    hi(self.max_timestamp, other.max_timestamp), dict(self.codecs), dict(self.magics),
                    self.damaged_segments + other.damaged_segments)
        for mine, theirs in ((out.codecs, other.codecs), (out.magics, other.magics)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        return out

    def to_dict(self) -> dict:
        d = asdict(self)
        d["codecs"] = dict(sorted(self.codecs.items()))
        d["magics"] = dict(sorted(self.magics.items()))
        return d


def _records(batch) -> int:
    if batch.records_count is not None:
        return batch.records_count
    n = 0
    try:
        for cols in batch.column_chunks(DEFAULT_MAX_DECOMPRESSED_BYTES, RECORDS_PER_CHUNK):
            n += cols.count  # counted up to the damage, as a reader would deliver them
    except KdumpError:
        pass
    return n


def segment_stats(path: str, size: int | None = None, observe=None) -> Stats:
    """The numbers of one segment file; ``observe(batch)``, if given, sees every batch (the record-level pass of
    :class:`RecordAnalysis`, in the same walk)."""
    import os
    s = Stats(segments=1, bytes=os.path.getsize(path) if size is None else size)
    with SegmentReader(path) as reader:
        for batch in reader:
            if observe is not None:
                observe(batch)
            s.batches += 1
            s.records += _records(batch)
            first = batch.base_offset if batch.magic >= 2 else None
            if s.first_offset is None:
                try:
                    s.first_offset = batch.base_offset if first is None else first
                except KdumpError:
                    s.first_offset = batch.last_offset
            s.last_offset = batch.last_offset
            ts = batch.max_timestamp
            if ts >= 0:
                s.min_timestamp = ts if s.min_timestamp is None else min(s.min_timestamp, ts)
                s.max_timestamp = ts if s.max_timestamp is None else max(s.max_timestamp, ts)
            codec = codec_name(batch.codec_id)
            s.codecs[codec] = s.codecs.get(codec, 0) + 1
            s.magics[str(batch.magic)] = s.magics.get(str(batch.magic), 0) + 1
        if reader.tail is not None and reader.tail.kind not in ("end", "limit"):
            s.damaged_segments += 1
    return s


def summarize(per_segment) -> dict:
    """``{"partitions": {"topic-N" or directory: Stats}, "total": Stats}`` from ``(key, Stats)`` pairs."""
    partitions: dict[str, Stats] = {}
    total = Stats()
    for key, st in per_segment:
        partitions[key] = partitions[key].merge(st) if key in partitions else st
        total = total.merge(st)
    return {"partitions": dict(sorted(partitions.items())), "total": total}


def summary_doc(summary: dict) -> dict:
    """The summary as a JSON document (``kdump stats --format json``, written by :data:`kdump.render.RENDERERS`,
    which adds the time range in a non-epoch ``--time-format`` beside the epoch ms); with the record-level
    numbers (``summary["records"]``, from :func:`partition_stats`) each partition and the total carry them too."""
    details = summary.get("records")

    def entry(key, st):
        d = st.to_dict()
        if details is not None:
            d.update(details[key].to_dict())
        return d
    return {"partitions": {k: entry(k, v) for k, v in summary["partitions"].items()},
            "total": entry("total", summary["total"])}


def render_text(summary: dict, when=str) -> str:
    """``when`` prints the time range (:func:`kdump.text.times.time_formatter`)."""
    lines = []
    for key, s in [*summary["partitions"].items(), ("total", summary["total"])]:
        offsets = f"offsets {s.first_offset}-{s.last_offset}" if s.first_offset is not None else "no offsets"
        times = (f", timestamps {when(s.min_timestamp)} to {when(s.max_timestamp)}" if s.min_timestamp is not None
                 else "")
        mix = ", ".join(f"{k} {v}" for k, v in sorted(s.codecs.items()))
        magics = ", ".join(f"v{k} {v}" for k, v in sorted(s.magics.items()))
        damaged = f", {s.damaged_segments} damaged" if s.damaged_segments else ""
        lines.append(f"{key}: {s.segments} segments{damaged}, {s.batches} batches, {s.records} records, "
                     f"{s.bytes} bytes, {offsets}{times}; codecs: {mix or '-'}; magic: {magics or '-'}")
        if summary.get("records") is not None:
            lines.extend("  " + line for line in _record_lines(summary["records"][key]))
    return "\n".join(lines)


def _record_lines(r: RecordStats) -> list[str]:
    d = r.to_dict()
    ratios = ", ".join(f"{codec} {c['bytes']} -> {c['uncompressedBytes']} bytes uncompressed (x{c['ratio']})"
                       for codec, c in d["compression"].items())
    k, c, t = d["keys"], d["compaction"], d["transactions"]
    lines = [f"compression: {ratios or '-'}",
             f"producers {r.producers}; transactions: {t['committed']} committed, {t['aborted']} aborted, "
             f"{t['open']} open; control records {r.control_records}",
             f"keys: {k['distinct']} distinct in {k['keyedRecords']} keyed records, {k['keylessRecords']} without a "
             f"key ({k['method']})",
             f"compaction would remove {c['supersededRecords']} superseded records ({c['supersededBytes']} bytes); "
             f"tombstones {c['tombstones']}, {c['liveTombstones']} of them the last record of their key"]
    if r.unreadable_batches:
        lines.append(f"{r.unreadable_batches} batches whose records could not be decoded are left out of these")
    return lines


def partition_stats(logs, *, memory_bytes: int = DEFAULT_MEMORY, spill_dir: str | None = None,
                    progress=None) -> tuple[Stats, RecordStats]:
    """The numbers of one partition's segments (in offset order), header and record level in one walk."""
    analysis = RecordAnalysis(memory_bytes, spill_dir=spill_dir, progress=progress)
    st = Stats()
    for log in logs:
        st = st.merge(segment_stats(log, observe=analysis.batch))
    return st, analysis.finish()


def stats_paths(groups, *, memory_bytes: int = DEFAULT_MEMORY, spill_dir: str | None = None, progress=None,
                jobs: int = 1) -> dict:
    """:func:`merge_partitions` of :func:`partition_stats` over the :class:`kdump.read.scan.SegmentGroup` s. One
    partition at a time: ``memory_bytes`` bounds each. ``jobs`` > 1: the partitions in that many worker processes
    (:func:`kdump.parallel.ordered_map`; ``progress`` then advances as each partition ends), the same summary."""
    if jobs <= 1 or len(groups) <= 1:
        return merge_partitions((g.key, *partition_stats(g.logs, memory_bytes=memory_bytes, spill_dir=spill_dir,
                                                         progress=progress)) for g in groups)
    from kdump.parallel import bytes_of, ordered_map
    sizes = [bytes_of(g.logs) for g in groups]
    done = None if progress is None else (lambda i: progress(sizes[i]))
    counted = ordered_map(_partition_stats, [(g.logs, memory_bytes, spill_dir) for g in groups], jobs, done=done,
                          sizes=sizes)
    return merge_partitions((g.key, *numbers) for g, numbers in zip(groups, counted, strict=True))


def _partition_stats(logs, memory_bytes: int, spill_dir: str | None) -> tuple[Stats, RecordStats]:
    """:func:`partition_stats` in a worker of :func:`stats_paths` (positional arguments, a module-level name:
    what a worker process is handed)."""
    return partition_stats(logs, memory_bytes=memory_bytes, spill_dir=spill_dir)



def merge_partitions(per_partition) -> dict:
    """The summary of ``(key, Stats, RecordStats)`` per partition (``kdump stats`` and ``kdump spark stats``):
    :func:`summarize` of the header numbers, with the record-level numbers under ``"records"`` (per partition key,
    and ``"total"``). Partitions sharing a key (the same topic-partition in two log directories) are summed."""
    header = []
    details: dict[str, RecordStats] = {}
    for key, st, rs in per_partition:
        header.append((key, st))
        details[key] = details[key].merge(rs) if key in details else rs
    summary = summarize(header)
    total = RecordStats()
    for rs in details.values():
        total = total.merge(rs)
    details["total"] = total
    summary["records"] = details
    return summary


# --- record-level numbers (kdump stats) -------------------------------------------------------------------


@dataclass
class RecordStats:
    """What only the records tell, per partition (summed over partitions for the total): compression, producers,
    transactions, control records, keys and what a compaction would remove (:mod:`kdump.keytable`)."""

    compression: dict = field(default_factory=dict)  # codec -> [batches, bytes, uncompressed bytes]
    producers: int = 0
    committed: int = 0
    aborted: int = 0
    open_transactions: int = 0
    control_records: int = 0
    keyed_records: int = 0
    keyless_records: int = 0
    tombstones: int = 0
    distinct_keys: int = 0
    superseded_records: int = 0
    superseded_bytes: int = 0
    live_tombstones: int = 0
    spilled_partitions: int = 0  # partitions whose keys did not fit --memory and were counted on disk
    unreadable_batches: int = 0  # batches whose records could not be decoded (left out of these numbers)

    def merge(self, other: RecordStats) -> RecordStats:
        out = RecordStats(**{k: v for k, v in asdict(self).items() if k != "compression"})
        for k, v in asdict(other).items():
            if k != "compression":
                setattr(out, k, getattr(out, k) + v)
        for mine in (self.compression, other.compression):
            for codec, counts in mine.items():
                have = out.compression.setdefault(codec, [0, 0, 0])
                for i, n in enumerate(counts):
                    have[i] += n
        return out

    def to_dict(self) -> dict:
        return {
            "compression": {codec: {"batches": b, "bytes": n, "uncompressedBytes": u,
                                    "ratio": round(u / n, 3) if n else None}
                            for codec, (b, n, u) in sorted(self.compression.items())},
            "producers": self.producers,
            "transactions": {"committed": self.committed, "aborted": self.aborted, "open": self.open_transactions},
            "controlRecords": self.control_records,
            "keys": {"distinct": self.distinct_keys, "keyedRecords": self.keyed_records,
                     "keylessRecords": self.keyless_records,
                     "method": "exact, key digests in memory" if not self.spilled_partitions else
                     f"exact, key digests spilled to disk in {self.spilled_partitions} partition(s)"},
            "compaction": {"supersededRecords": self.superseded_records, "supersededBytes": self.superseded_bytes,
                           "tombstones": self.tombstones, "liveTombstones": self.live_tombstones},
            "unreadableBatches": self.unreadable_batches,
        }


class RecordAnalysis:
    """The record-level pass over one partition's batches, in offset order (:meth:`batch`, the ``observe`` of
    :func:`segment_stats`), then :meth:`finish`.

    * compression: per codec the batches' bytes on disk and what they would take uncompressed (magic 2: the
      61-byte header and the records; magic 0/1: the inner messages as plain entries); ratio = uncompressed / on disk;
    * producers: distinct producer ids of magic 2 batches; transactions: the COMMIT and ABORT markers that end one,
      and those still open, by the producer state machine (:mod:`kdump.read.producer_state`);
    * keys: every data record with a key (control records are not data); superseded: a record whose key comes again
      later in the partition (the cleaner removes it), its bytes its record size; tombstones: records with a key
      and a null value; live tombstones: the last record of their key (removed after ``delete.retention.ms``).
    """

    def __init__(self, memory_bytes: int = DEFAULT_MEMORY, *, spill_dir: str | None = None,
                 limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES, progress=None):
        from kdump.keytable import KeyTable
        from kdump.read.producers import PartitionProducers
        self.stats = RecordStats()
        self.keys = KeyTable(memory_bytes, spill_dir=spill_dir)
        self.producers = PartitionProducers(keep_aborted=False)
        self.limit = limit
        self.progress = progress  # callable(bytes) per batch, or None

    def batch(self, batch) -> None:
        from kdump.format.layout import V2_RECORD_BATCH_OVERHEAD
        s = self.stats
        if self.progress is not None:
            self.progress(batch.size)
        # bounded memory, whatever the count declared; the keys as digests, no Python object per record
        chunks = batch.key_chunks(self.limit, RECORDS_PER_CHUNK)
        try:
            part = next(chunks)
        except KdumpError:
            s.unreadable_batches += 1
            return
        control = batch.magic == 2 and batch.is_control
        record_bytes = records = 0
        unreadable = False
        while part is not None:
            unreadable = unreadable or part.error is not None
            record_bytes += part.record_bytes
            records += part.count
            if not control:  # control records are not data: their keys are no keys of the topic
                s.keyless_records += part.keyless
                s.keyed_records += part.count - part.keyless
                s.tombstones += part.tombstones
                self.keys.add_entries(part.entries)
            part = next(chunks, None)
        s.unreadable_batches += unreadable
        codec = codec_name(batch.codec_id)
        counts = s.compression.setdefault(codec, [0, 0, 0])
        counts[0] += 1
        counts[1] += batch.size
        counts[2] += record_bytes + (V2_RECORD_BATCH_OVERHEAD if batch.magic == 2 else 0)
        if batch.magic == 2:
            self.producers.apply(batch, self.limit)
            if control:
                s.control_records += records

    def finish(self) -> RecordStats:
        s = self.stats
        keys = self.keys.finish()
        s.distinct_keys = keys.keys
        s.superseded_records = keys.superseded
        s.superseded_bytes = keys.superseded_bytes
        s.live_tombstones = keys.live_tombstones
        s.spilled_partitions = 1 if keys.spilled_buckets else 0
        state = self.producers.state
        s.producers = len(state.producers)
        s.committed = self.producers.committed_count
        s.aborted = self.producers.aborted_count
        s.open_transactions = len(state.ongoing)
        return s
