"""``kdump index rebuild`` of one partition directory of many small segments (issue 22, item 5).

Builds N segments (default 10,000) of one small batch each in a fresh directory and times
``kdump index rebuild DIR`` (indexes written next to the segments, the common case, then again with ``--force``
where every file is unchanged). Run from the repository: ``python bench/bench_index_rebuild.py [N] [BEFORE]``;
``BEFORE``: another checkout of kdump (e.g. ``git worktree add /tmp/before <commit>``, extensions built) timed on
an identical directory first, for a before/after figure from one run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from kdump.format.v2_builder import RecordBatchBuilder  # noqa: E402


def make_partition(directory: str, n: int) -> None:
    os.makedirs(directory)
    for i in range(n):
        b = RecordBatchBuilder(base_offset=i)
        b.append(i, 1_700_000_000_000 + i, b"k", b"v%d" % i)
        with open(os.path.join(directory, f"{i:020d}.log"), "wb") as f:
            f.write(b.build())


def timed(root: str, *args) -> float:
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "kdump", *args], cwd=root, capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": root})
    if r.returncode != 0:
        raise SystemExit(f"kdump {' '.join(args)}: exit {r.returncode}: {r.stderr[-2000:]}")
    return time.perf_counter() - t


def run(root: str, label: str, n: int) -> None:
    base = tempfile.mkdtemp(prefix="kdump-bench-rebuild-")
    directory = os.path.join(base, "t-0")
    try:
        make_partition(directory, n)
        first = timed(root, "index", "rebuild", directory)
        again = timed(root, "index", "rebuild", "--force", directory)
        check = timed(root, "index", "check", directory)
        print(f"{label}: {n} segments: index rebuild {first:.1f} s ({n / first:.0f} segments/s); "
              f"again with --force (unchanged) {again:.1f} s; index check {check:.1f} s", flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    if len(sys.argv) > 2:
        run(os.path.abspath(sys.argv[2]), "before", n)
    run(ROOT, "this checkout", n)

if __name__ == "__main__":
    main()
