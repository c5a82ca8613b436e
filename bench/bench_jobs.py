#!/usr/bin/env python3
"""Benchmark ``--jobs`` on a log directory of PARTITIONS partitions written by kdump's writer.

    python bench/bench_jobs.py [--partitions 8] [--records 250000] [--codec none] [--jobs 1 2] [--runs 3]

Writes (once, cached in bench/out/logdir-P-R/) PARTITIONS partition directories of RECORDS records each
(1,000 records per batch, 12-byte keys, 100-byte values, compressed with CODEC), then runs ``kdump verify``,
``kdump verify --deep`` and ``kdump index check --deep`` on the log directory with each ``--jobs``, one
after the other, RUNS times in turn (the machine may be shared: compare the figures of one run), and prints
the best seconds, records/s, the speed-up over the first ``--jobs`` and peak RSS (the largest process).
Uncompressed segments are read at the page cache's speed, so there is little for a second core to do;
a codec gives every partition CPU work (decompression) to spread.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_dump import make_segment, run_once  # noqa: E402

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
COMMANDS = [("verify", ["verify"]), ("verify --deep", ["verify", "--deep"]),
            ("index check --deep", ["index", "check", "--deep"])]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--records", type=int, default=250_000, help="records per partition")
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--codec", choices=list(CODECS), default="none")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args()
    suffix = "" if args.codec == "none" else f"-{args.codec}"
    logs = args.out / f"logdir-{args.partitions}-{args.records}{suffix}"
    t = time.perf_counter()
    for p in range(args.partitions):
        make_segment(logs / f"bench-{p}" / "00000000000000000000.log", args.records, 1000, CODECS[args.codec])
    size = sum(f.stat().st_size for f in logs.rglob("*.log"))
    total = args.partitions * args.records
    print(f"# {logs}: {args.partitions} partitions, {total:,} records, {size / 1e6:.0f} MB "
          f"({time.perf_counter() - t:.1f} s to prepare); {os.cpu_count()} cores")
    print(f"{'command':22} {'jobs':>4} {'seconds':>8} {'records/s':>12} {'speed-up':>8} {'peak RSS MB':>12}")
    for name, cmd in COMMANDS:
        best: dict[int, tuple[float, int]] = {}
        for _ in range(args.runs):
            for jobs in args.jobs:
                seconds, rss = run_once([sys.executable, "-m", "kdump", *cmd, "--jobs", str(jobs), str(logs)])
                if jobs not in best or seconds < best[jobs][0]:
                    best[jobs] = (seconds, rss)
        first = best[args.jobs[0]][0]
        for jobs in args.jobs:
            seconds, rss = best[jobs]
            print(f"{name:22} {jobs:4} {seconds:8.2f} {total / seconds:12,.0f} {first / seconds:7.2f}x "
                  f"{rss / 1e6:12.1f}")


if __name__ == "__main__":
    main()
