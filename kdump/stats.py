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
from kdump.segment import DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader

CODEC_NAMES = ("none", "gzip", "snappy", "lz4", "zstd")


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

    def merge(self, other: "Stats") -> "Stats":
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
        for _ in batch.records(DEFAULT_MAX_DECOMPRESSED_BYTES):
            n += 1
    except KdumpError:
        pass  # counted up to the damage, as a reader would deliver them
    return n


def segment_stats(path: str, size: int | None = None) -> Stats:
    """The numbers of one segment file."""
    import os
    s = Stats(segments=1, bytes=os.path.getsize(path) if size is None else size)
    with SegmentReader(path) as reader:
        for batch in reader:
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
            codec = CODEC_NAMES[batch.codec_id] if batch.codec_id < len(CODEC_NAMES) else f"unknown({batch.codec_id})"
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


def render_json(summary: dict) -> str:
    import json
    return json.dumps({"partitions": {k: v.to_dict() for k, v in summary["partitions"].items()},
                       "total": summary["total"].to_dict()}, indent=2)


def render_text(summary: dict) -> str:
    lines = []
    for key, s in [*summary["partitions"].items(), ("total", summary["total"])]:
        offsets = f"offsets {s.first_offset}-{s.last_offset}" if s.first_offset is not None else "no offsets"
        times = f", timestamps {s.min_timestamp}-{s.max_timestamp}" if s.min_timestamp is not None else ""
        mix = ", ".join(f"{k} {v}" for k, v in sorted(s.codecs.items()))
        magics = ", ".join(f"v{k} {v}" for k, v in sorted(s.magics.items()))
        damaged = f", {s.damaged_segments} damaged" if s.damaged_segments else ""
        lines.append(f"{key}: {s.segments} segments{damaged}, {s.batches} batches, {s.records} records, "
                     f"{s.bytes} bytes, {offsets}{times}; codecs: {mix or '-'}; magic: {magics or '-'}")
    return "\n".join(lines)
