#!/usr/bin/env python3
"""Benchmark ``kdump stats`` on the 2,000,000-record segments of bench/bench_dump.py.

    python bench/bench_stats.py [--records 2000000] [--runs 3]

The segments (cached in bench/out/: 1,000 records per batch, 12-byte keys, all distinct, 100-byte values;
uncompressed and lz4) are the ones every benchmark here uses. For each, best of RUNS, ``python -m kdump stats
--format json`` as a child process (wall seconds including interpreter start-up, records/s, peak RSS):

* with the default ``--memory 256M``: the 2,000,000 key digests fit, counted in memory;
* with ``--memory 64M``: they do not, and are spilled to disk (the same exact counts, bounded memory).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_dump import make_segment  # noqa: E402

from kdump import codec as _codec  # noqa: E402


def child(cmd) -> tuple[float, int, bytes]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{cmd} failed")
    return elapsed, usage.ru_maxrss * 1024, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "kdump")], check=True)
    env_path = str(ROOT)
    print("| file | --memory | seconds | records/s | peak RSS MB | keys | method |")
    print("|---|---|---:|---:|---:|---:|---|")
    for name, codec in (("none", _codec.NONE), ("lz4", _codec.LZ4)):
        seg = ROOT / "bench" / "out" / f"{name}-{args.records}" / "00000000000000000000.log"
        make_segment(seg, args.records, 1000, codec)
        for memory in ("256M", "64M"):
            with tempfile.TemporaryDirectory() as spill:
                cmd = [sys.executable, "-m", "kdump", "stats", "--format", "json", "--memory", memory,
                       "--spill-dir", spill, str(seg)]
                os.environ["PYTHONPATH"] = env_path
                runs = [child(cmd) for _ in range(args.runs)]
            elapsed, rss, out = min(runs, key=lambda r: r[0])
            total = json.loads(out)["total"]
            print(f"| {name} | {memory} | {elapsed:.2f} | {total['records'] / elapsed:,.0f} | {rss / 2**20:.1f} | "
                  f"{total['keys']['distinct']:,} | {total['keys']['method']} |")


if __name__ == "__main__":
    main()
