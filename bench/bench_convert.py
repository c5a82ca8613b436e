#!/usr/bin/env python3
"""Benchmark `kdump convert`: the foundation benchmark's 2,000,000-record segment to magic 1 and back.

    python bench/bench_convert.py [--records 2000000] [--runs 1] [--phases] [--flat 200000]

Uses the segments of bench/bench_dump.py (bench/out/{none,lz4}-RECORDS/00000000000000000000.log: magic 2,
1,000 records per batch, 12-byte keys, 100-byte values; written here if absent). For each codec it runs
`python -m kdump convert` twice as a child process: the magic-2 segment to magic 1 (codec kept: the
uncompressed one becomes 2,000,000 single messages, the lz4 one 2,000 lz4 wrappers), then that magic-1
file back to magic 2 (uncompressed messages are cut into batches of at most 1 MiB, wrappers stay one
batch each). Printed per conversion: best wall-clock seconds of RUNS, records/s, MB/s (input bytes per
second), peak RSS of the child. Every conversion includes what the command always does: the read-back
verification, `kdump verify --deep` of the output, and the index rebuild.

--phases also times, in this process, where one conversion's time goes: the conversion alone (into a
byte counter), kdump convert's own read-back, kdump verify --deep, the index rebuild.
--flat N converts an N-record segment the same way, to show that peak RSS does not grow with file size.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_dump import make_segment, run_once  # noqa: E402


def segments(out: Path, records: int) -> dict[str, Path]:
    files = {}
    for name, codec in (("none", 0), ("lz4", 3)):
        path = out / f"{name}-{records}" / "00000000000000000000.log"
        t = time.perf_counter()
        make_segment(path, records, 1000, codec)
        files[name] = path
        print(f"# {name}: {path} {path.stat().st_size / 1e6:.1f} MB ({time.perf_counter() - t:.1f} s to prepare)")
    return files


def convert_cmd(src: Path, dst_dir: Path, magic: int) -> list[str]:
    return [sys.executable, "-m", "kdump", "convert", str(src), "--to-magic", str(magic), "-o", f"{dst_dir}/",
            "--force"]


def legs(files: dict[str, Path], work: Path, records: int):
    """(label, source, output dir, target magic) in the order they must run (back needs there)."""
    for name, src in files.items():
        there = work / f"{name}-{records}-v1"
        back = work / f"{name}-{records}-v2"
        yield f"{name} 2->1", src, there, 1
        yield f"{name} 1->2", there / "00000000000000000000.log", back, 2


def phases(src: Path, magic: int, work: Path) -> None:
    """Where the time of one conversion goes (in this process, same code as the command)."""
    from kdump.convert import ConvertOptions, Converter
    from kdump.convert.output import ByteCounter, deep_verify, read_back_digests
    from kdump.index.rebuild import rebuild_indexes
    from kdump.segment import SegmentReader

    out = work / f"phases-{src.parent.name}-to{magic}" / "00000000000000000000.log"
    if not out.exists():
        subprocess.run(convert_cmd(src, out.parent, magic), check=True, stdout=subprocess.DEVNULL)
    t = time.perf_counter()
    with SegmentReader(src) as reader:
        Converter(ConvertOptions(magic), ByteCounter(), hashlib.sha256()).convert(reader)
    convert_s = time.perf_counter() - t
    t = time.perf_counter()
    read_back_digests(out)
    readback_s = time.perf_counter() - t
    t = time.perf_counter()
    deep_verify(out, out, 1 << 28)
    verify_s = time.perf_counter() - t
    t = time.perf_counter()
    rebuild_indexes(out, force=True)
    index_s = time.perf_counter() - t
    total = convert_s + readback_s + verify_s + index_s
    print(f"  phases of {src.parent.name} -> magic {magic}: convert {convert_s:.1f} s, read-back {readback_s:.1f} s, "
          f"verify --deep {verify_s:.1f} s, index rebuild {index_s:.1f} s (sum {total:.1f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--phases", action="store_true", help="also time the phases of each conversion in-process")
    ap.add_argument("--flat", type=int, default=0, metavar="N", help="also convert an N-record segment (RSS check)")
    args = ap.parse_args()

    from kdump._backend import BACKEND
    work = args.out / "convert"
    sizes = [args.records] + ([args.flat] if args.flat else [])
    print(f"# python {sys.version.split()[0]}, record decoder backend: {BACKEND}, best of {args.runs} runs")
    for records in sizes:
        files = segments(args.out, records)
        print(f"{'records':>9} {'conversion':12} {'in MB':>7} {'out MB':>7} {'seconds':>8} {'records/s':>10} "
              f"{'MB/s':>6} {'peak RSS MB':>12}")
        for label, src, dst, magic in legs(files, work, records):
            results = [run_once(convert_cmd(src, dst, magic)) for _ in range(args.runs)]
            best = min(r[0] for r in results)
            rss = max(r[1] for r in results)
            size = src.stat().st_size
            out_size = (dst / "00000000000000000000.log").stat().st_size
            print(f"{records:>9,} {label:12} {size / 1e6:7.1f} {out_size / 1e6:7.1f} {best:8.1f} "
                  f"{records / best:10,.0f} {size / best / 1e6:6.1f} {rss / 1e6:12.1f}")
            if args.phases and records == args.records:
                phases(src, magic, work)


if __name__ == "__main__":
    main()
