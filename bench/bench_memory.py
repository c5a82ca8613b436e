#!/usr/bin/env python3
"""Peak RSS of every command that reads records on the hostile structures of issue 22 item 2 (small files that
are large in what they make a reader build), each command in a fresh process; prints a Markdown table.

    python bench/bench_memory.py [--pure] [--cases a,b] [--commands x,y] [--bound 256] [--json out.json]

The structures (tests/support/hostile.py builds them; tests/test_memory_bound.py checks smaller ones):

* ``headers-10M-one-record``, ``headers-20M-one-record``: one record declaring 10 M / 20 M empty headers, zstd;
* ``headers-40x262143``: 40 records of 262,143 empty headers each (10.5 M headers, each record under the limit);
* ``headers-2.5Mx4``: 2.5 M records of 4 empty headers each (10 M headers spread over many records);
* ``records-10M``: 10 M empty records with offsets 0..n-1 (a batch that verifies), zstd;
* ``legacy-wrapper-2.5M``: a magic-1 gzip wrapper of 2.5 M inner messages with offsets 0..n-1;
* ``legacy-gzip-bomb-1G``: a magic-1 wrapper whose gzip value decompresses to 1 GiB;
* ``values-4096x16K-not-utf8``: 4,096 records of 16 KiB values of 0xFF bytes (64 MiB, 20 KB in zstd): what the
  renderers make of one chunk of values that are not text (each byte a U+FFFD in text, an escape in JSON);
* ``value-64M-not-utf8``, ``value-64M-text-escapes``, ``value-255M-not-utf8``, ``header-value-64M-not-utf8``: one
  record whose value (header value) is larger than a chunk: 64 MiB of 0xFF bytes, of valid UTF-8 needing JSON
  escapes, 255 MiB of 0xFF bytes (a record as large as the default batch limit allows), zstd (a few KB to 260 KB).

A command fails the run (exit 1) if it exits with anything but 0 or 1 or takes more than --bound MiB (256: the
documented bound) beyond the batch data it must hold (README, "Memory"): the batch's decompressed records, and for
convert the batch it writes. --from-json prints the table of a saved --json run again.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support import hostile as H  # noqa: E402

CASES = {
    "headers-10M-one-record": lambda: H.headers_batch([10_000_000]),
    "headers-20M-one-record": lambda: H.headers_batch([20_000_000]),
    "headers-40x262143": lambda: H.headers_batch([262_143] * 40),
    "headers-2.5Mx4": lambda: H.sequential_records_batch(2_500_000, headers=4),
    "records-10M": lambda: H.sequential_records_batch(10_000_000),
    "legacy-wrapper-2.5M": lambda: H.sequential_legacy_wrapper(2_500_000),
    "legacy-gzip-bomb-1G": lambda: H.legacy_wrapper_bomb(1 << 30),
    "values-4096x16K-not-utf8": lambda: _values_batch(4096, b"\xff" * 16384),
    "value-64M-not-utf8": lambda: H.one_record_batch(b"\xff" * (64 << 20)),
    "value-64M-text-escapes": lambda: H.one_record_batch(ESCAPED_TEXT * ((64 << 20) // len(ESCAPED_TEXT))),
    "value-255M-not-utf8": lambda: H.one_record_batch(b"\xff" * (255 << 20)),
    "header-value-64M-not-utf8": lambda: H.one_record_batch(None, (b"\xff" * (64 << 20),)),
}


# valid UTF-8 that JSON escapes (quotes, backslash, controls) or that takes 2-4 bytes a character
ESCAPED_TEXT = '"q" \\ \n\x01\x1f é€😀 \u2028'.encode()


def _values_batch(n: int, value: bytes) -> bytes:
    from kdump import codec
    from kdump.format.v2_builder import RecordBatchBuilder
    builder = RecordBatchBuilder(0, codec.ZSTD)
    for i in range(n):
        builder.append(i, H.T0, None, value)
    return builder.build()


MiB = 1 << 20


def held_mib(path: Path) -> float:
    """The batch data a reader of ``path`` (one batch) must hold: its decompressed records, or 1.1 x the default
    limit for a batch refused as a decompression bomb (what gathering them costs before the refusal)."""
    from kdump.errors import FormatError
    from kdump.read.segment import SegmentReader
    with SegmentReader(path) as reader:
        batch = next(iter(reader))
        try:
            data = batch.records_payload(H.DEFAULT_LIMIT)[0] if batch.magic == 2 else batch.inner_set(H.DEFAULT_LIMIT)
        except FormatError:
            return 1.1 * H.DEFAULT_LIMIT / MiB
        return len(data) / MiB


def judge(row: dict, command: str, beyond: float) -> str:
    """'' within the documented bound (``beyond`` MiB beyond the data held), '+' within it counting the batch
    convert writes (at most 1.1 x the limit before compression) or the Arrow batch the Spark reader hands over
    (its keys, values and headers: at most the data held), 'over' past it, 'exit N' on another exit code."""
    run = row["runs"][command]
    if run["exit"] not in (0, 1):
        return f"exit {run['exit']}"
    bound = beyond + row["held_mib"]
    if run["peak_rss_mib"] <= bound:
        return ""
    if command.startswith("convert") and run["peak_rss_mib"] <= bound + 1.1 * H.DEFAULT_LIMIT / MiB:
        return "+"
    if command == "spark-reader" and run["peak_rss_mib"] <= bound + row["held_mib"]:
        return "+"
    return "over"


def print_table(rows: list[dict], commands: list[str], backend: str, beyond: float) -> int:
    print(f"Peak RSS in MiB ({backend}; exit code in brackets when not 0). Bound: {beyond:.0f} MiB beyond the data "
          "held (column 'held': the batch's decompressed records; + : within it counting the batch convert writes, or the "
          "Arrow batch of the Spark reader):\n")
    print("| structure | file bytes | held | " + " | ".join(commands) + " |")
    print("|---|---:|---:|" + "---:|" * len(commands))
    failed = 0
    for row in rows:
        cells = []
        for command in commands:
            run, verdict = row["runs"][command], judge(row, command, beyond)
            failed += verdict not in ("", "+")
            code = "" if run["exit"] == 0 else f" ({run['exit']})"
            cells.append(f"{run['peak_rss_mib']:.0f}{code}{' **' + verdict + '**' if verdict else ''}")
        print(f"| {row['case']} | {row['file_bytes']:,} | {row['held_mib']:.0f} | " + " | ".join(cells) + " |")
    slowest = max((r["runs"][c]["seconds"], r["case"], c) for r in rows for c in commands)
    print(f"\nSlowest run: {slowest[2]} on {slowest[1]}, {slowest[0]:.1f} s.")
    return failed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pure", action="store_true", help="KDUMP_PURE_PYTHON=1 (the pure-Python twins)")
    ap.add_argument("--cases", default="", help="comma-separated subset of the structures (default: all)")
    ap.add_argument("--commands", default="", help="comma-separated subset of the commands (default: all)")
    ap.add_argument("--bound", type=float, default=256.0, help="MiB of peak RSS beyond the data held (documented)")
    ap.add_argument("--json", type=Path, default=None, help="write the measurements as JSON here too")
    ap.add_argument("--from-json", type=Path, default=None, help="print the table of a saved run, measure nothing")
    args = ap.parse_args()
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        rows = saved["rows"]
        with tempfile.TemporaryDirectory(prefix="kdump-memory-") as tmp:
            for row in rows:
                if "held_mib" not in row:  # a run saved before the column existed: the structure built again
                    path = Path(tmp) / row["case"]
                    path.write_bytes(CASES[row["case"]]())
                    row["held_mib"] = round(held_mib(path), 1)
        print(f"Command: `{saved['command']}`\n")
        return 1 if print_table(rows, list(rows[0]["runs"]), saved["backend"], args.bound) else 0
    cases = args.cases.split(",") if args.cases else list(CASES)
    commands = args.commands.split(",") if args.commands else list(H.RECORD_COMMANDS)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    if args.pure:
        env["KDUMP_PURE_PYTHON"] = "1"
    rows = []
    with tempfile.TemporaryDirectory(prefix="kdump-memory-") as tmp:
        for name in cases:
            path = Path(tmp) / name / "00000000000000000000.log"
            path.parent.mkdir()
            data = CASES[name]()
            path.write_bytes(data)
            row = {"case": name, "file_bytes": len(data), "held_mib": round(held_mib(path), 1), "runs": {}}
            for command in commands:
                t = time.perf_counter()
                code, rss = H.peak_rss(H.command_argv(command, path, Path(tmp) / "out" / command / name), env)
                row["runs"][command] = {"exit": code, "peak_rss_mib": round(rss, 1),
                                        "seconds": round(time.perf_counter() - t, 2)}
                verdict = judge(row, command, args.bound)
                print(f"# {name} {command}: exit {code}, {time.perf_counter() - t:.1f} s, {rss:.0f} MiB {verdict}",
                      file=sys.stderr, flush=True)
            rows.append(row)
    backend = "pure Python" if args.pure else "compiled"
    if args.json:
        args.json.write_text(json.dumps({"command": "python bench/bench_memory.py " + " ".join(sys.argv[1:]),
                                         "backend": backend, "rows": rows}, indent=1) + "\n")
    return 1 if print_table(rows, commands, backend, args.bound) else 0


if __name__ == "__main__":
    sys.exit(main())
