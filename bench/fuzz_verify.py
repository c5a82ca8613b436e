#!/usr/bin/env python3
"""The large fuzz campaign of ``kdump verify --deep`` (the suite runs a short one: tests/test_fuzz.py).

    python bench/fuzz_verify.py --cases 1000000 --seed 1 [--max-file-bytes 200000] [--report out.json]

In-process (the library, not a subprocess per case, for speed), one core. Every sound segment of
fixtures/corpus and fixtures/generated up to --max-file-bytes is mutated by tests/support/mutate.py (bit flips,
byte sets, truncation, zero fill, huge and tiny size fields, spliced/deleted/appended bytes, duplicated
batches, header and record changes with the CRC recomputed, decompression bombs) and verified with
--deep and --max-batch-bytes 1 MiB (bombs decompress to 4 MiB). A case fails if verify raises, takes
longer than --slow seconds, reports an I/O error, misses a mandatory finding (CRC-protected bytes changed,
or a cut/splice off an entry boundary), or a bomb is not refused. Peak RSS is reported at the end.
Failing inputs are saved to bench/out/fuzz-failures/ for replay.

Then the hostile structures of issue 11 (tests/support/hostile.py: a small batch of millions of empty
records, a legacy wrapper of millions of inner messages, a control batch of millions of markers,
decompression bombs of each codec, an empty batch holding a record, a varlong above 64 bits) go through
every command that reads records (HOSTILE_COMMANDS: dump text and JSON, verify --deep, index rebuild and
check --deep, stats, txn, salvage, groups, txn-state, metadata, convert to magic 1 and 2, and the Spark
source's reader as a Python worker runs it), each in a fresh subprocess, and their peak RSS is reported per
case and command; a case fails if it takes more than --hostile-max-rss MB (bombs: 1.2 x the command's
limit plus that: --max-batch-bytes 64 MiB where the command has it, the default 256 MiB otherwise) or
exits with anything but 0 or 1. --hostile-only skips the mutation part; --hostile-records scales the record
counts; --hostile-commands / --hostile-cases choose a subset.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kdump.report.findings import ERROR, WARNING  # noqa: E402
from kdump.verify import VerifyOptions, verify_one  # noqa: E402
from kdump import codec as _codec  # noqa: E402
from kdump.format.names import CODEC_NAMES  # noqa: E402
from tests.support import hostile as H  # noqa: E402
from tests.support.mutate import Mutator  # noqa: E402

MAX_BATCH = 1 << 20
BOMB = 4 << 20


def sources(max_bytes: int) -> list[Path]:
    out = []
    for base in (ROOT / "fixtures" / "corpus", ROOT / "fixtures" / "generated"):
        for p in sorted(base.rglob("*")):
            if p.suffix not in (".log", ".checkpoint") or not p.is_file() or "corrupt" in p.parts:
                continue
            if p.stat().st_size > max_bytes:
                continue
            out.append(p)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-file-bytes", type=int, default=200_000)
    ap.add_argument("--slow", type=float, default=10.0, help="seconds above which a case counts as a hang")
    ap.add_argument("--report", type=Path, default=None, help="write the summary as JSON here too")
    ap.add_argument("--hostile-only", action="store_true", help="only the hostile structures, no mutations")
    ap.add_argument("--hostile-records", type=int, default=4_000_000,
                    help="records in the many-records batch (the legacy wrapper holds a quarter as many)")
    ap.add_argument("--hostile-max-rss", type=float, default=200.0, help="MB a hostile case may take")
    ap.add_argument("--hostile-commands", default="", help="comma-separated subset of the commands (default: all)")
    ap.add_argument("--hostile-cases", default="", help="comma-separated subset of the cases (default: all)")
    args = ap.parse_args()
    if args.hostile_only:
        hostile = hostile_campaign(args)
        text = json.dumps({"command": "python bench/fuzz_verify.py " + " ".join(sys.argv[1:]), "hostile": hostile},
                          indent=1)
        print(text)
        if args.report:
            args.report.write_text(text + "\n")
        return 1 if any(not h["ok"] for h in hostile) else 0

    options = VerifyOptions(deep=True, max_batch_bytes=MAX_BATCH)
    files = sources(args.max_file_bytes)
    originals = []
    for p in files:
        data = p.read_bytes()
        # only sound sources: for them a missed mandatory finding is a real miss
        probe = Path(tempfile.gettempdir()) / "kdump-fuzz-probe" / p.name
        probe.parent.mkdir(exist_ok=True)
        probe.write_bytes(data)
        report = verify_one(probe, options)
        if any(f.severity in (ERROR, WARNING) for f in report.findings) or report.io_error:
            continue
        originals.append((p, p.name, Mutator(data, bomb_bytes=BOMB)))
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    work = Path(tempfile.mkdtemp(prefix="kdump-fuzz-", dir=shm))
    failures_dir = ROOT / "bench" / "out" / "fuzz-failures"
    rnd = random.Random(args.seed)
    kinds = Counter()
    mandatory = 0
    with_findings = 0
    failures = []
    slowest = (0.0, "")
    start = time.perf_counter()
    for i in range(args.cases):
        src, name, mutator = originals[rnd.randrange(len(originals))]
        m = mutator.mutate(rnd)
        kinds[m.kind] += 1
        path = work / name
        path.write_bytes(m.data)
        t = time.perf_counter()
        problem = None
        try:
            report = verify_one(path, options)
            found = [f for f in report.findings if f.severity in (ERROR, WARNING)]
            if report.io_error:
                problem = f"io error: {report.io_error}"
            elif m.mandatory and not found:
                problem = "mandatory finding missing"
            elif m.expect_code and m.expect_code not in {f.code for f in found}:
                problem = f"{m.expect_code} missing"
            with_findings += bool(found)
        except Exception:  # noqa: BLE001 - the point is to catch anything
            problem = "exception: " + traceback.format_exc(limit=3)
        dt = time.perf_counter() - t
        if dt > slowest[0]:
            slowest = (dt, f"{src.relative_to(ROOT)} {m.kind} {m.detail}")
        if dt > args.slow:
            problem = problem or f"slow: {dt:.1f} s"
        mandatory += m.mandatory
        if problem:
            failures_dir.mkdir(parents=True, exist_ok=True)
            saved = failures_dir / f"case-{args.seed}-{i}-{m.kind}-{name}"
            saved.write_bytes(m.data)
            failures.append({"case": i, "source": str(src.relative_to(ROOT)), "kind": m.kind, "detail": m.detail,
                             "problem": problem, "saved": str(saved.relative_to(ROOT))})
            print(f"FAIL case {i}: {src.relative_to(ROOT)} {m.kind} {m.detail}: {problem}", file=sys.stderr)
        if (i + 1) % 50000 == 0:
            el = time.perf_counter() - start
            print(f"# {i + 1} cases, {el:.0f} s, {len(failures)} failures", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - start
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    for p in work.iterdir():
        p.unlink()
    work.rmdir()
    summary = {
        "command": "python bench/fuzz_verify.py " + " ".join(sys.argv[1:]),
        "cases": args.cases, "seed": args.seed, "sources": len(originals), "seconds": round(elapsed, 1),
        "cases_per_second": round(args.cases / elapsed), "mandatory": mandatory, "with_findings": with_findings,
        "failures": len(failures), "slowest_case_seconds": round(slowest[0], 3), "slowest_case": slowest[1],
        "peak_rss_mb": round(peak_rss / 2**20, 1), "kinds": dict(sorted(kinds.items())),
        "failure_list": failures[:50],
    }
    summary["hostile"] = hostile = hostile_campaign(args)
    failed_hostile = [h for h in hostile if not h["ok"]]
    text = json.dumps(summary, indent=1)
    print(text)
    if args.report:
        args.report.write_text(text + "\n")
    return 1 if failures or failed_hostile else 0


# Every command that reads records (tests/support/hostile.py, shared with bench/bench_memory.py and the suite).
HOSTILE_COMMANDS = H.RECORD_COMMANDS
BOMB_LIMIT = 64 << 20  # --max-batch-bytes for the bombs (which decompress to twice that)
DEFAULT_LIMIT = H.DEFAULT_LIMIT


def hostile_cases(records: int) -> dict:
    cases = {
        "many-empty-records-zstd": H.many_records_batch(records),
        "legacy-gzip-wrapper": H.legacy_wrapper_of(max(records // 4, 1)),
        "control-batch-of-markers": H.control_batch_of(records),
        "empty-batch-holding-a-record": H.empty_batch_holding_a_record(),
        "varlong-above-64-bits": H.varlong_timestamp_batch(),
    }
    for codec in (_codec.GZIP, _codec.SNAPPY, _codec.LZ4, _codec.ZSTD):
        cases[f"bomb-{CODEC_NAMES[codec]}"] = H.bomb_batch(2 * BOMB_LIMIT, codec)
    return cases


def hostile_campaign(args) -> list[dict]:
    """Each hostile structure through each command in a fresh subprocess: exit code, seconds, peak RSS."""
    out = []
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    commands = args.hostile_commands.split(",") if args.hostile_commands else list(HOSTILE_COMMANDS)
    with tempfile.TemporaryDirectory(prefix="kdump-hostile-") as tmp:
        for name, data in hostile_cases(args.hostile_records).items():
            if args.hostile_cases and name not in args.hostile_cases.split(","):
                continue
            path = Path(tmp) / name / "00000000000000000000.log"
            path.parent.mkdir()
            path.write_bytes(data)
            bomb = name.startswith("bomb-")
            for command in commands:
                limit = BOMB_LIMIT if HOSTILE_COMMANDS[command][1] else DEFAULT_LIMIT
                bound = args.hostile_max_rss + (1.2 * limit / 2**20 if bomb else 0)
                result = Path(tmp) / "out" / command / name
                t = time.perf_counter()
                code, rss = H.peak_rss(H.command_argv(command, path, result, BOMB_LIMIT if bomb else None), env)
                case = {"case": name, "command": command, "file_bytes": len(data), "exit": code,
                        "seconds": round(time.perf_counter() - t, 2), "peak_rss_mb": round(rss, 1),
                        "limit_mb": limit >> 20, "ok": code in (0, 1) and rss <= bound}
                out.append(case)
                print(f"# hostile {name} {command}: exit {code}, {case['seconds']} s, peak RSS {rss:.0f} MB"
                      f"{'' if case['ok'] else ' FAIL'}", file=sys.stderr, flush=True)
    return out


if __name__ == "__main__":
    sys.exit(main())
