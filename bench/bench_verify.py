#!/usr/bin/env python3
"""Benchmark ``kdump verify`` against aiokafka's compiled reader and kafka-python, on the same bytes.

    pip install aiokafka            # bench-only dependency (kafka-python is a test dependency)
    python bench/bench_verify.py [--records 2000000] [--runs 3]

Uses the segments of bench/bench_dump.py (cached in bench/out/: RECORDS records, 1,000 per batch, 12-byte
keys, 100-byte values; uncompressed and lz4), plus one a tenth of that size to show that memory does not
grow with the file. For each segment, best of RUNS:

* ``kdump verify`` shallow and ``--deep`` as a command (``python -m kdump verify``, a child process:
  wall seconds including interpreter start-up, MB/s, records/s, peak RSS), and the same command on an empty
  segment: its start-up alone. kdump's modules are byte-compiled first (``compileall``, as ``pip install``
  does; this sandbox sets PYTHONDONTWRITEBYTECODE, without which every run would compile them again);
* the same in-process (``kdump.verify.verify_one``): what the library itself does per second;
* aiokafka (``aiokafka.record.memory_records.MemoryRecords``, its compiled Cython reader) and kafka-python
  (``kafka.record.memory_records.MemoryRecords``, pure Python): every batch's CRC validated and every record
  iterated (offset, timestamp, key, value, headers read), in-process, on the file's bytes already in memory
  (their readers take a buffer) -- the closest thing they do to a deep verify. The ratio column is kdump
  ``--deep`` in-process records/s divided by theirs.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_dump import make_segment  # noqa: E402

from kdump.verify import VerifyOptions, verify_one  # noqa: E402


def child(cmd) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (bytes) and exit code of one child process."""
    with open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=devnull, close_fds=False)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    return elapsed, usage.ru_maxrss * 1024, os.waitstatus_to_exitcode(status)


def best(fn, runs):
    results = [fn() for _ in range(runs)]
    return min(results, key=lambda r: r[0])


def in_process(path: Path, deep: bool):
    start = time.perf_counter()
    report = verify_one(path, VerifyOptions(deep=deep))
    elapsed = time.perf_counter() - start
    bad = [f for f in report.findings if f.severity != "info"]
    if bad:
        raise SystemExit(f"{path}: unexpected findings {bad[:3]}")
    return elapsed, report.records


def third_party(memory_records_cls, data: bytes):
    start = time.perf_counter()
    records = 0
    m = memory_records_cls(data)
    while True:
        batch = m.next_batch()
        if batch is None:
            break
        if not batch.validate_crc():
            raise SystemExit("CRC mismatch?")
        for r in batch:
            r.offset, r.timestamp, r.key, r.value, r.headers
            records += 1
    return time.perf_counter() - start, records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--per-batch", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    args = ap.parse_args()

    from kdump._backend import BACKEND
    files = []
    for name, codec, n in (("none", 0, args.records), ("lz4", 3, args.records), ("none", 0, args.records // 10)):
        path = args.out / f"{name}-{n}" / "00000000000000000000.log"
        make_segment(path, n, args.per_batch, codec)
        files.append((f"{name}-{n}", path, n))
    try:
        from aiokafka.record.memory_records import MemoryRecords as AioMemoryRecords
        import aiokafka
        aio = f"aiokafka {aiokafka.__version__}"
    except ImportError:
        AioMemoryRecords, aio = None, "aiokafka (not installed: pip install aiokafka)"
    from kafka.record.memory_records import MemoryRecords as KafkaPythonMemoryRecords
    import kafka

    print(f"# python {sys.version.split()[0]}, record decoder backend: {BACKEND}, best of {args.runs} runs, "
          f"{os.cpu_count()} CPUs (one used)")
    import compileall
    compileall.compile_dir(str(ROOT / "kdump"), quiet=1)
    empty = args.out / "empty" / "00000000000000000000.log"
    empty.parent.mkdir(parents=True, exist_ok=True)
    empty.write_bytes(b"")
    startup, _, _ = best(lambda: child([sys.executable, "-m", "kdump", "verify", str(empty)]), args.runs)
    print(f"# start-up: `kdump verify` on an empty segment takes {startup:.3f} s; `python -c pass` "
          f"{best(lambda: child([sys.executable, '-c', 'pass']), args.runs)[0]:.3f} s")
    # The commands run first, while this process is still small: a child's peak RSS is measured from its
    # fork, before exec, when it still maps its parent (close_fds=False also lets Python use posix_spawn).
    rows = {label: [] for label, _, _ in files}
    for label, path, n in files:
        for mode, flags in (("shallow", []), ("deep", ["--deep"])):
            sec, rss, code = best(lambda: child([sys.executable, "-m", "kdump", "verify", *flags, str(path)]),
                                  args.runs)
            if code != 0:
                raise SystemExit(f"kdump verify {mode} exited {code} on {path}")
            rows[label].append((f"kdump verify {mode} (command)", sec, rss, n))
    for label, path, n in files:
        for mode, deep in (("shallow", False), ("deep", True)):
            sec, records = best(lambda: in_process(path, deep), args.runs)
            assert records == n, (records, n)
            rows[label].append((f"kdump verify {mode} (library)", sec, None, n))
        kdump_deep = n / rows[label][-1][1]
        data = path.read_bytes()
        others = [(aio, AioMemoryRecords), (f"kafka-python {kafka.__version__}", KafkaPythonMemoryRecords)]
        for name, cls in others:
            if cls is None:
                continue
            sec, records = best(lambda: third_party(cls, data), 1 if "kafka-python" in name else args.runs)
            assert records == n, (name, records)
            rows[label].append((name, sec, None, n, kdump_deep / (n / sec)))
        del data
    print("# net: the command's seconds minus its start-up (what the verification itself took)")
    print(f"{'file':14} {'what':34} {'seconds':>8} {'MB/s':>8} {'records/s':>11} {'peak RSS MB':>11} "
          f"{'ratio':>6} {'net MB/s':>9}")
    for label, path, n in files:
        size = path.stat().st_size
        for row in rows[label]:
            what, sec, rss, recs = row[:4]
            ratio = f"{row[4]:.2f}x" if len(row) > 4 else ""
            net = f"{size / (sec - startup) / 1e6:.0f}" if rss is not None and sec > startup else ""
            print(f"{label:14} {what:34} {sec:8.3f} {size / sec / 1e6:8.0f} {recs / sec:11,.0f} "
                  f"{'' if rss is None else f'{rss / 2**20:.0f}':>11} {ratio:>6} {net:>9}")


if __name__ == "__main__":
    main()
