#!/usr/bin/env python3
"""Benchmark `kdump dump` on a large magic-2 segment written by kdump's own writer.

    python bench/bench_dump.py [--records 2000000] [--runs 3]

Writes (once, cached in bench/out/) two segments of RECORDS records, 1,000 records per batch, 12-byte
keys and 100-byte values: one uncompressed, one lz4. Then runs `python -m kdump dump` shallow,
`--deep-iteration` and `--deep-iteration --print-data-log` on each with stdout to /dev/null, and prints
for each: best wall-clock seconds of RUNS, records/s, MB/s (file bytes / second) and peak RSS.
"""
from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kdump.write.segment import RecordBatchBuilder  # noqa: E402

MODES = [("shallow", []), ("deep", ["--deep-iteration"]), ("deep+data", ["--deep-iteration", "--print-data-log"])]


def make_segment(path: Path, records: int, per_batch: int, codec: int) -> None:
    if path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(42)
    alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789 "
    values = [bytes(rnd.choice(alphabet) for _ in range(100)) for _ in range(512)]
    tmp = path.with_suffix(".tmp")
    ts = 1_700_000_000_000
    with open(tmp, "wb") as f:
        for base in range(0, records, per_batch):
            b = RecordBatchBuilder(base_offset=base, codec=codec)
            for off in range(base, min(base + per_batch, records)):
                b.append(off, ts + off, b"key-%08d" % off, values[off % 512])
            f.write(b.build())
    os.replace(tmp, path)


def run_once(cmd) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one child process."""
    with open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        err = proc.stderr.read()
        proc.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed: {err.decode()}")
    return elapsed, usage.ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--per-batch", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args()

    from kdump._backend import BACKEND
    files = {}
    for name, codec in (("none", 0), ("lz4", 3)):
        path = args.out / f"{name}-{args.records}" / "00000000000000000000.log"
        t = time.perf_counter()
        make_segment(path, args.records, args.per_batch, codec)
        files[name] = path
        print(f"# {name}: {path.stat().st_size / 1e6:.1f} MB ({time.perf_counter() - t:.1f} s to prepare)")
    print(f"# python {sys.version.split()[0]}, record decoder backend: {BACKEND}, best of {args.runs} runs")
    print(f"{'file':6} {'mode':10} {'seconds':>8} {'records/s':>12} {'MB/s':>8} {'peak RSS MB':>12}")
    for name, path in files.items():
        size = path.stat().st_size
        for mode, flags in MODES:
            cmd = [sys.executable, "-m", "kdump", "dump", *flags, str(path)]
            results = [run_once(cmd) for _ in range(args.runs)]
            best = min(r[0] for r in results)
            rss = max(r[1] for r in results)
            print(f"{name:6} {mode:10} {best:8.3f} {args.records / best:12,.0f} {size / best / 1e6:8.0f} "
                  f"{rss / 1e6:12.1f}")


if __name__ == "__main__":
    main()
