#!/usr/bin/env python3
"""Benchmark seeking in a ~1 GB segment: time to the first record for an offset near the end, with the
segment's offset index (binary search) and without it (a walk of batch headers), and for a timestamp.

    python bench/bench_seek.py [--size-mb 1024] [--runs 20]

Prepares once, cached in bench/out/seek-<size>/: a magic-2 segment written with kdump's writer
(``SegmentWriter``, verified by reading it back), 64 records of ~150 bytes per batch, consecutive
timestamps; then its .index/.timeindex/.txnindex with ``kdump.index.rebuild.rebuild_indexes`` (Kafka's
recovery, index.interval.bytes 4096). Then measures, best and median of RUNS (page cache warm):

* library: ``locate_offset`` (index lookup + verification + header walk) then the first batch read and
  decoded until the record with the target offset: the time to the first record;
* the same with ``use_index=False`` (walk from the start: what a dump without an index costs);
* ``locate_time`` for a timestamp near the end (time index, then offset index);
* the same offset seek with the segment's files evicted from the page cache first (``posix_fadvise``
  DONTNEED on the .log, .index and .timeindex only): the disk reads a seek needs;
* ``kdump dump --deep-iteration --from-offset N --to-offset N`` in-process (the Dumper with its text
  renderer, imports already done), and as a child process (includes interpreter start-up and imports),
  stdout to /dev/null.
"""
from __future__ import annotations

import argparse
import os
import statistics
import struct
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kdump.format.crc import crc32c  # noqa: E402
from kdump.format import layout as L  # noqa: E402
from kdump.write.segment import RecordBatchBuilder, SegmentWriter  # noqa: E402

PER_BATCH = 64
T0 = 1_700_000_000_000


def template() -> bytes:
    b = RecordBatchBuilder(0)
    for i in range(PER_BATCH):
        b.append(i, T0 + i, b"key-%08d" % i, (b"value %06d " % i) * 10)
    return b.build()


def make_segment(path: Path, size_mb: int) -> tuple[int, int]:
    """Write the segment (once). Returns (batches, records)."""
    tpl = bytearray(template())
    batch_size = len(tpl)
    n_batches = size_mb * 1024 * 1024 // batch_size
    if path.exists() and path.stat().st_size == n_batches * batch_size:
        return n_batches, n_batches * PER_BATCH
    path.parent.mkdir(parents=True, exist_ok=True)
    for p in path.parent.iterdir():
        p.unlink()
    base_ts_at = L.LOG_OVERHEAD + 15  # baseTimestamp, then maxTimestamp (file offsets 27 and 35)
    writer = SegmentWriter(path, deep_verify=False)
    chunk = bytearray()
    for i in range(n_batches):
        base = i * PER_BATCH
        ts = T0 + base
        struct.pack_into(">q", tpl, 0, base)
        struct.pack_into(">qq", tpl, base_ts_at, ts, ts + PER_BATCH - 1)
        struct.pack_into(">I", tpl, L.LOG_OVERHEAD + L.V2_BODY_CRC_AT, crc32c(memoryview(tpl)[21:]))
        chunk += tpl
        if len(chunk) >= 8 << 20:
            writer.write(bytes(chunk))
            chunk.clear()
    if chunk:
        writer.write(bytes(chunk))
    writer.commit()
    return n_batches, n_batches * PER_BATCH


def first_record(log: Path, target: int, *, use_index: bool = True, by_time: int | None = None):
    """Seek, read the batch, decode up to the wanted record; returns (seconds, record offset)."""
    from kdump.read.locate import locate_offset, locate_time
    from kdump.read.segment import SegmentReader
    start = time.perf_counter()
    res = locate_time(log, by_time, use_index=use_index) if by_time is not None else \
        locate_offset(log, target, use_index=use_index)
    with SegmentReader(log, start=res.position) as reader:
        for batch in reader:
            cols = batch.columns(1 << 26)
            for i in range(cols.count):
                if (by_time is not None and cols.timestamps[i] >= by_time) or \
                        (by_time is None and cols.offsets[i] >= target):
                    return time.perf_counter() - start, cols.offsets[i], res.method
    raise SystemExit("target not found")


def warm(path: Path) -> None:
    with open(path, "rb") as f:
        while f.read(16 << 20):
            pass


def evict(*paths: Path) -> None:
    """Drop these files' pages from the page cache (only these: other work on the machine is not disturbed)."""
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def dump_in_process(log: Path, target: int) -> float:
    from kdump.dump import Dumper, DumpOptions
    from kdump.decode.payload import load_decoder
    from kdump.render.kafka_text import KafkaTextRenderer
    with open(os.devnull, "w") as out:
        start = time.perf_counter()
        opts = DumpOptions(deep_iteration=True, from_offset=target, to_offset=target)
        renderer = KafkaTextRenderer(out, key_decoder=load_decoder("string"), value_decoder=load_decoder("string"))
        Dumper(opts, renderer).dump_paths([str(log)])
        out.flush()
        return time.perf_counter() - start


def summarize(samples):
    return min(samples) * 1000, statistics.median(samples) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args()

    log = args.out / f"seek-{args.size_mb}" / "00000000000000000000.log"
    t = time.perf_counter()
    n_batches, n_records = make_segment(log, args.size_mb)
    index = log.with_suffix(".index")
    if not index.exists():
        from kdump.index.rebuild import rebuild_indexes
        t1 = time.perf_counter()
        rebuild_indexes(log)
        print(f"# rebuild_indexes: {time.perf_counter() - t1:.1f} s")
    print(f"# segment {log}: {log.stat().st_size / 2**20:.0f} MiB, {n_batches} batches, {n_records} records; "
          f".index {index.stat().st_size} bytes ({index.stat().st_size // 8} entries), "
          f".timeindex {log.with_suffix('.timeindex').stat().st_size} bytes; prepared in {time.perf_counter() - t:.1f} s")

    target = n_records - 1000  # near the end
    target_ts = T0 + n_records - 5000
    warm(log)  # a cached file for the warm rows (an earlier run may have evicted it)
    rows = []
    for name, kwargs, runs in (
            ("offset, with index", dict(target=target), args.runs),
            ("offset, no index (header walk)", dict(target=target, use_index=False), max(3, args.runs // 5)),
            ("timestamp, with time index", dict(target=0, by_time=target_ts), args.runs)):
        samples = []
        got = None
        for _ in range(runs):
            secs, got, method = first_record(log, **kwargs)
            samples.append(secs)
        best, median = summarize(samples)
        rows.append((name, best, median, got, method))
    cold = []
    try:
        for _ in range(5):
            evict(log, index, log.with_suffix(".timeindex"))
            secs, got, method = first_record(log, target)
            cold.append(secs)
        best, median = summarize(cold)
        rows.append(("offset, with index, files not in page cache", best, median, got, method))
    except (AttributeError, OSError) as e:
        print(f"# cold-cache run skipped: {e}")
    inproc = [dump_in_process(log, target) for _ in range(args.runs)]
    best, median = summarize(inproc)
    rows.append(("kdump dump --from-offset (in-process)", best, median, target, "index"))

    cmd = [sys.executable, "-m", "kdump", "dump", "--deep-iteration", "--from-offset", str(target), "--to-offset",
           str(target), str(log)]
    cli = []
    for _ in range(max(3, args.runs // 4)):
        with open(os.devnull, "wb") as devnull:
            s = time.perf_counter()
            subprocess.run(cmd, stdout=devnull, check=True)
            cli.append(time.perf_counter() - s)
    base = []
    for _ in range(max(3, args.runs // 4)):
        s = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        base.append(time.perf_counter() - s)

    print(f"# target offset {target}, target timestamp {target_ts}; python {sys.version.split()[0]}")
    print(f"{'what':42} {'best ms':>9} {'median ms':>10}  first record  method")
    for name, best, median, got, method in rows:
        print(f"{name:42} {best:9.2f} {median:10.2f}  {got:12d}  {method}")
    b, m = summarize(cli)
    print(f"{'kdump dump --from-offset (child process)':42} {b:9.1f} {m:10.1f}")
    b, m = summarize(base)
    print(f"{'python -c pass (interpreter start-up)':42} {b:9.1f} {m:10.1f}")


if __name__ == "__main__":
    main()
