#!/usr/bin/env python3
"""Benchmark a key filter of `kdump dump` against `kdump dump ... | grep` on the 2,000,000-record segment of
bench_dump.py (issue 14).

    python bench/bench_filter.py [--records 2000000] [--runs 3] [--key key-01234567]

Uses (and makes, once) bench_dump.py's uncompressed and lz4 segments in bench/out/. For each it times, with
stdout to /dev/null, best of RUNS:

* `kdump dump --key KEY` (record metadata of the matching record; keys compared as bytes, nothing rendered
  for the others),
* `kdump dump --print-data-log --key KEY` (the same with key and value printed),
* `kdump dump --deep-iteration --print-data-log FILE | grep -F 'key: KEY '` (what people do today),
* `kdump dump --producer-id 12345` (a header filter that matches no batch: nothing decompressed or decoded).

and checks that the filter and grep find the same record line.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_dump import make_segment  # noqa: E402


def best_of(runs: int, cmd: str) -> tuple[float, str]:
    """Best wall seconds of a shell pipeline, and its output (for the check)."""
    best, out = float("inf"), ""
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
        best = min(best, time.perf_counter() - start)
        if proc.returncode not in (0, 1):  # grep exits 1 when nothing matched
            raise SystemExit(f"{cmd} failed: {proc.stderr.decode()}")
        out = proc.stdout.decode()
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--per-batch", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--key", default=None, help="the key looked for (default: the key of the middle record)")
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args()
    key = args.key or "key-%08d" % (args.records // 2)
    py = shlex.quote(sys.executable)
    print(f"# python {sys.version.split()[0]}, key {key}, best of {args.runs} runs")
    print(f"{'file':6} {'command':60} {'seconds':>8}")
    for name, codec in (("none", 0), ("lz4", 3)):
        path = args.out / f"{name}-{args.records}" / "00000000000000000000.log"
        make_segment(path, args.records, args.per_batch, codec)
        f = shlex.quote(str(path))
        kdump = f"{py} -m kdump dump"
        cases = [
            ("dump --key KEY", f"{kdump} --key {key} {f}"),
            ("dump --print-data-log --key KEY", f"{kdump} --print-data-log --key {key} {f}"),
            ("dump --deep-iteration --print-data-log | grep -F 'key: KEY '",
             f"{kdump} --deep-iteration --print-data-log {f} | grep -F 'key: {key} '"),
            ("dump --producer-id 12345 (no batch matches)", f"{kdump} --producer-id 12345 {f}"),
        ]
        found = {}
        for label, cmd in cases:
            seconds, out = best_of(args.runs, cmd)
            found[label] = [line for line in out.splitlines() if line.startswith("| offset:")]
            print(f"{name:6} {label:60} {seconds:8.3f}")
        grep = found["dump --deep-iteration --print-data-log | grep -F 'key: KEY '"]
        if found["dump --print-data-log --key KEY"] != grep or len(grep) != 1:
            raise SystemExit(f"the filter and grep disagree: {found}")


if __name__ == "__main__":
    main()
