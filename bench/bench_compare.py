#!/usr/bin/env python3
"""Compare two checkouts of kdump on the same command lines, interleaved, in one run.

    python bench/bench_compare.py --old /path/to/old-checkout [--new .] [--runs 5] [--records 2000000]

The machine is shared and noisy, so absolute seconds drift between runs; ratios measured in one run,
with the two versions' runs interleaved (old, new, old, new, ...), are what this script reports. Each
command line runs as a child ``python -m kdump ...`` with ``PYTHONPATH`` set to one checkout (each
checkout needs its compiled modules built in place: ``python setup.py build_ext --inplace``). Segments are
the ones of ``bench_dump.py`` (cached in bench/out/). Prints, per command: best seconds and peak RSS of
each version, the new/old ratios of the wall and of the CPU seconds.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from bench_dump import make_segment  # noqa: E402


def child(cmd: list[str], tree: Path) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (bytes) of one child running ``tree``'s kdump;
    exit codes 0 and 1 are both a finished run. On a shared machine the CPU seconds are the steadier figure:
    wall time also counts the time the child waited for a core. The child runs in ``tree`` (``python -m``
    puts the working directory first on sys.path) with ``PYTHONPATH`` pointing there too."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    with open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=devnull, stderr=devnull)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} with PYTHONPATH={tree} failed with exit {code}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", type=Path, required=True, help="the checkout to compare against")
    ap.add_argument("--new", type=Path, default=ROOT)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args()
    files = {}
    for name, codec in (("none", 0), ("lz4", 3)):
        path = args.out / f"{name}-{args.records}" / "00000000000000000000.log"
        make_segment(path, args.records, 1000, codec)
        files[name] = path.resolve()
    work = Path(tempfile.mkdtemp(prefix="kdump-compare-"))
    py = sys.executable
    commands = []
    for name, path in files.items():
        commands += [
            (f"dump shallow ({name})", [py, "-m", "kdump", "dump", str(path)]),
            (f"dump --deep-iteration --print-data-log ({name})",
             [py, "-m", "kdump", "dump", "--deep-iteration", "--print-data-log", str(path)]),
            (f"verify ({name})", [py, "-m", "kdump", "verify", str(path)]),
            (f"verify --deep ({name})", [py, "-m", "kdump", "verify", "--deep", str(path)]),
        ]
    src = files["none"]
    commands.append(("convert --to-magic 1 (none)",
                     [py, "-m", "kdump", "convert", str(src), "--to-magic", "1", "-o", f"{work}/out/", "--force"]))
    for tree in (args.old, args.new):
        probe = subprocess.run([py, "-c", "import kdump, kdump._backend as b; print(kdump.__file__, b.BACKEND)"],
                               cwd=tree, env=dict(os.environ, PYTHONPATH=str(tree.resolve())), capture_output=True,
                               text=True, check=True)
        print(f"# {tree}: {probe.stdout.strip()}")
    print(f"# old: {args.old}\n# new: {args.new}\n# {args.records:,} records per segment, best of {args.runs}, "
          f"load average {os.getloadavg()[0]:.1f} at start")
    print("| command | old s | new s | new/old | old CPU s | new CPU s | CPU new/old | old RSS MB | new RSS MB |\n"
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for label, cmd in commands:
            wall = {"old": float("inf"), "new": float("inf")}
            cpu = dict(wall)
            rss = {"old": 0, "new": 0}
            for _ in range(args.runs):
                for which, tree in (("old", args.old), ("new", args.new)):
                    shutil.rmtree(work / "out", ignore_errors=True)
                    sec, cpu_sec, peak = child(cmd, tree.resolve())
                    wall[which] = min(wall[which], sec)
                    cpu[which] = min(cpu[which], cpu_sec)
                    rss[which] = max(rss[which], peak)
            o, n = wall["old"], wall["new"]
            print(f"| {label} | {o:.3f} | {n:.3f} | {n / o:.2f} | {cpu['old']:.3f} | {cpu['new']:.3f} | "
                  f"{cpu['new'] / cpu['old']:.2f} | {rss['old'] / 1e6:.1f} | {rss['new'] / 1e6:.1f} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
