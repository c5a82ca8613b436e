#!/usr/bin/env python3
"""Benchmark `kdump convert`: the foundation benchmark's 2,000,000-record segment to magic 1 and back.

    python bench/bench_convert.py [--records 2000000] [--runs 1] [--old CHECKOUT] [--phases] [--flat 200000]

Uses the segments of bench/bench_dump.py (bench/out/{none,lz4}-RECORDS/00000000000000000000.log: magic 2,
1,000 records per batch, 12-byte keys, 100-byte values; written here if absent) and the same records in magic 1,
written by this checkout's own `convert --to-magic 1` (the uncompressed segment becomes 2,000,000 plain messages,
the lz4 one 2,000 lz4 wrappers). Each conversion runs `python -m kdump convert` as a child process:

* none: magic 2 -> 1 and the magic-1 file -> 2 (plain messages are cut into batches of at most 1 MiB);
* lz4: the same with lz4 (wrappers stay one batch each);
* gzip: the lz4 magic-2 file -> magic 1 gzip, the lz4 magic-1 file -> magic 2 gzip.

Printed per conversion: best wall-clock seconds of RUNS, records/s, MB/s (input bytes per second), peak RSS of the
child. Every conversion includes what the command always does: the read-back verification, `kdump verify --deep`
of the output (or, for plain magic 0/1 messages, the same checks made by the read-back: kdump/convert/proof.py)
and the indexes. With --old, every conversion also runs with the kdump of another checkout (its compiled modules
built in place), the two interleaved, and the new/old ratio of the seconds is printed: the figure to read on a
shared machine.

--phases also times, in this process, where one conversion's time goes: the conversion alone (into a byte counter),
the read-back (with the proof of a plain-message output), kdump verify --deep, the index rebuild (recovery) --
the last two are what the read-back replaces for plain messages.
--flat N converts an N-record segment the same way, to show that peak RSS does not grow with file size.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_dump import make_segment, run_once  # noqa: E402

LOG = "00000000000000000000.log"


def convert_cmd(src: Path, dst_dir: Path, magic: int, compression: str = "keep") -> list[str]:
    return [sys.executable, "-m", "kdump", "convert", str(src), "--to-magic", str(magic), "--compression",
            compression, "-o", f"{dst_dir}/", "--force"]


def in_tree(cmd: list[str], tree: Path) -> tuple[float, int]:
    """Wall seconds and peak RSS of ``cmd`` running ``tree``'s kdump (working directory and PYTHONPATH there)."""
    os.environ["PYTHONPATH"] = str(tree)
    cwd = os.getcwd()
    os.chdir(tree)
    try:
        return run_once(cmd)
    finally:
        os.chdir(cwd)


def segments(out: Path, records: int) -> dict[str, Path]:
    files = {}
    for name, codec in (("none", 0), ("lz4", 3)):
        path = (out / f"{name}-{records}" / LOG).resolve()
        t = time.perf_counter()
        make_segment(path, records, 1000, codec)
        files[f"v2-{name}"] = path
        v1 = (out / "convert" / f"v1-{name}-{records}").resolve()
        if not (v1 / LOG).exists():
            in_tree(convert_cmd(path, v1, 1), ROOT)
        files[f"v1-{name}"] = v1 / LOG
        print(f"# {name}: magic 2 {path.stat().st_size / 1e6:.1f} MB, magic 1 {(v1 / LOG).stat().st_size / 1e6:.1f} MB "
              f"({time.perf_counter() - t:.1f} s to prepare)", flush=True)
    return files


def legs(files: dict[str, Path]):
    """(label, source, target magic, compression)."""
    return [
        ("none 2->1", files["v2-none"], 1, "keep"),
        ("none 1->2", files["v1-none"], 2, "keep"),
        ("lz4 2->1", files["v2-lz4"], 1, "keep"),
        ("lz4 1->2", files["v1-lz4"], 2, "keep"),
        ("gzip 2->1", files["v2-lz4"], 1, "gzip"),
        ("gzip 1->2", files["v1-lz4"], 2, "gzip"),
    ]


def phases(src: Path, magic: int, work: Path) -> None:
    """Where the time of one conversion goes (in this process, same code as the command)."""
    from kdump.convert import Converter, ConvertOptions
    from kdump.convert.output import ByteCounter, deep_verify, read_back_digests
    from kdump.convert.proof import PlainMessages
    from kdump.index.rebuild import recover_segment
    from kdump.read.segment import SegmentReader

    out = work / f"phases-{src.parent.name}-to{magic}" / LOG
    if not out.exists():
        subprocess.run(convert_cmd(src, out.parent, magic), check=True, stdout=subprocess.DEVNULL)
    t = time.perf_counter()
    with SegmentReader(src) as reader:
        Converter(ConvertOptions(magic), ByteCounter(), hashlib.sha256()).convert(reader)
    convert_s = time.perf_counter() - t
    t = time.perf_counter()
    plain = PlainMessages(0)
    entries = read_back_digests(out, plain=plain)[0]
    readback_s = time.perf_counter() - t
    proved = plain.finished(entries)
    t = time.perf_counter()
    deep_verify(out, out, 1 << 28)
    verify_s = time.perf_counter() - t
    t = time.perf_counter()
    recover_segment(out)
    index_s = time.perf_counter() - t
    print(f"  phases of {src.parent.name} -> magic {magic}: convert {convert_s:.2f} s, read-back {readback_s:.2f} s "
          f"({'proves the output: the next two do not run' if proved else 'then'}: verify --deep {verify_s:.2f} s, "
          f"index recovery {index_s:.2f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--old", type=Path, help="another checkout to compare with, interleaved")
    ap.add_argument("--only", help="run only the conversions whose label contains this (e.g. none)")
    ap.add_argument("--phases", action="store_true", help="also time the phases of each conversion in-process")
    ap.add_argument("--flat", type=int, default=0, metavar="N", help="also convert an N-record segment (RSS check)")
    args = ap.parse_args()

    from kdump._backend import BACKEND
    work = (args.out / "convert").resolve()
    trees = [("new", ROOT)] + ([("old", args.old.resolve())] if args.old else [])
    sizes = [args.records] + ([args.flat] if args.flat else [])
    print(f"# python {sys.version.split()[0]}, backend: {BACKEND}, best of {args.runs} runs, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}; new: {ROOT}" + (f", old: {args.old}" if args.old else ""))
    for records in sizes:
        files = segments(args.out, records)
        head = "| records | conversion | in MB | out MB | new s | new rec/s | new MB/s | new peak RSS MB |"
        if args.old:
            head += " old s | old rec/s | old peak RSS MB | new/old |"
        print(head)
        print("|" + "---|" * (head.count("|") - 1))
        for label, src, magic, compression in legs(files):
            if args.only and args.only not in label:
                continue
            dst = work / f"out-{label.replace(' ', '').replace('->', 'to')}-{records}"
            best = {}
            for _ in range(args.runs):
                for which, tree in trees:
                    shutil.rmtree(dst, ignore_errors=True)
                    secs, rss = in_tree(convert_cmd(src, dst, magic, compression), tree)
                    if which not in best or secs < best[which][0]:
                        best[which] = (secs, rss)
            size = src.stat().st_size
            out_size = (dst / LOG).stat().st_size
            secs, rss = best["new"]
            line = (f"| {records:,} | {label} | {size / 1e6:.1f} | {out_size / 1e6:.1f} | {secs:.2f} | "
                    f"{records / secs:,.0f} | {size / secs / 1e6:.1f} | {rss / 1e6:.1f} |")
            if args.old:
                osecs, orss = best["old"]
                line += f" {osecs:.2f} | {records / osecs:,.0f} | {orss / 1e6:.1f} | **{secs / osecs:.3f}** |"
            print(line, flush=True)
            shutil.rmtree(dst, ignore_errors=True)
            if args.phases and records == args.records:
                phases(src, magic, work)


if __name__ == "__main__":
    main()
