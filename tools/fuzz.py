#!/usr/bin/env python3
"""Coverage-guided fuzzing of kdump's readers with atheris (libFuzzer underneath); docs/fuzzing.md.

    python tools/fuzz.py --target NAME --seconds N [--jobs J] [-- LIBFUZZER_FLAGS...]
    python tools/fuzz.py --list
    python tools/fuzz.py --target NAME --replay FILE...      # run inputs once, no fuzzing

The targets are tests/fuzz/targets.py's (each runs its input on the compiled and the pure backend and
compares). The working corpus is bench/out/fuzz/<target>/corpus (gitignored), seeded from fixtures/ by
tests/fuzz/seeds.py and from fixtures/fuzz/<target>/ (earlier crashes); crashes are written to
bench/out/fuzz/<target>/ as ``crash-<sha1>`` (minimise with ``-minimize_crash=1``, then copy to
fixtures/fuzz/<target>/). Every input is bounded in time (``-timeout``, default 10 s) and memory
(``-rss_limit_mb``, default 1024). The run's statistics (executions, new coverage) are printed by libFuzzer
on stderr and, with ``--stats FILE``, appended to FILE as one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out" / "fuzz"
REGRESSIONS = ROOT / "fixtures" / "fuzz"


def _child(target: str, argv: list[str]) -> None:
    """Run inside the fuzzing process: instrument kdump, then hand over to libFuzzer."""
    import atheris
    sys.path.insert(0, str(ROOT))
    with atheris.instrument_imports(include=["kdump"]):
        # the modules the targets import lazily, imported here so that they are instrumented too
        import kdump.decode.internal.coordinator
        import kdump.decode.internal.metadata
        import kdump.decode.internal.tables
        import kdump.format.schema
        import kdump.read.checkpoints
        import kdump.read.offset_index
        import kdump.read.segment
        import kdump.read.snapshot
        import kdump.read.time_index
        import kdump.read.txn_index  # noqa: F401
    from tests.fuzz.targets import TARGETS, schema_messages
    schema_messages()
    fn = TARGETS[target]
    atheris.Setup([os.environ.get("KDUMP_FUZZ_WRAPPER", sys.argv[0]), *argv], fn)
    atheris.Fuzz()


def _corpus(target: str) -> Path:
    corpus = OUT / target / "corpus"
    if not corpus.is_dir() or not any(corpus.iterdir()):
        from tests.fuzz.seeds import write_seeds
        n = write_seeds(target, str(corpus))
        print(f"seeded {corpus} with {n} inputs from fixtures/", file=sys.stderr)
    return corpus


def run(target: str, seconds: int, jobs: int, extra: list[str], stats: str | None) -> int:
    sys.path.insert(0, str(ROOT))
    corpus = _corpus(target)
    out = OUT / target
    regressions = REGRESSIONS / target
    dirs = [str(corpus)] + ([str(regressions)] if regressions.is_dir() else [])
    flags = [f"-max_total_time={seconds}", "-timeout=10", "-rss_limit_mb=1024", "-max_len=65536",
             f"-artifact_prefix={out}/", "-print_final_stats=1"]
    # fork mode even for one job: a crash is saved and the run goes on (libFuzzer restarts the child)
    flags += [f"-fork={jobs}", "-ignore_crashes=1", "-ignore_timeouts=1", "-ignore_ooms=1"]
    # libFuzzer's fork mode re-runs argv[0] with the flags for each job: a wrapper that names the target
    wrapper = out / "run-target"
    env = f"KDUMP_FUZZ_TARGET={target} KDUMP_FUZZ_WRAPPER={wrapper}"
    wrapper.write_text(f"#!/bin/sh\n{env} exec {sys.executable} {__file__} \"$@\"\n")
    wrapper.chmod(0o755)
    argv = [str(wrapper), *flags, *extra, *dirs]
    log = out / "last-run.log"
    start = time.time()
    with open(log, "w") as f:
        proc = subprocess.run(argv, stderr=subprocess.STDOUT, stdout=f, cwd=ROOT, check=False)
    text = log.read_text(errors="replace")
    # fork mode's parent prints the total executions of all its jobs as "#N: cov: ..."
    runs = [int(m) for m in re.findall(r"^#(\d+): cov:", text, re.M)][-1:]
    crashes = sorted(p.name for p in out.glob("crash-*")) + sorted(p.name for p in out.glob("timeout-*")) + \
        sorted(p.name for p in out.glob("oom-*"))
    record = {"target": target, "seconds": round(time.time() - start), "jobs": jobs,
              "executions": sum(runs), "exit": proc.returncode, "artifacts": crashes,
              "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    print(json.dumps(record))
    if stats:
        with open(stats, "a") as f:
            f.write(json.dumps(record) + "\n")
    return proc.returncode


def replay(target: str, files: list[str]) -> int:
    sys.path.insert(0, str(ROOT))
    from tests.fuzz.targets import TARGETS
    for name in files:
        print(name)
        TARGETS[target](Path(name).read_bytes())
    return 0


def main() -> int:
    if os.environ.get("KDUMP_FUZZ_TARGET"):  # the fuzzing process (run-target), flags for libFuzzer only
        _child(os.environ["KDUMP_FUZZ_TARGET"], sys.argv[1:])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--target", help="a target of tests/fuzz/targets.py (--list)")
    p.add_argument("--seconds", type=int, default=60, help="how long to fuzz (libFuzzer -max_total_time)")
    p.add_argument("--jobs", type=int, default=1, help="parallel fuzzing processes (libFuzzer -fork); 1 by default")
    p.add_argument("--stats", help="append the run's figures (executions, artifacts) to this file as JSON")
    p.add_argument("--list", action="store_true", help="list the targets")
    p.add_argument("--replay", nargs="+", metavar="FILE", help="run these inputs through the target once")
    p.add_argument("libfuzzer", nargs="*", help="extra libFuzzer flags, after --")
    a = p.parse_args()
    if a.list or not a.target:
        sys.path.insert(0, str(ROOT))
        from tests.fuzz.targets import TARGETS
        for name, fn in TARGETS.items():
            print(f"{name:14} {(fn.__doc__ or '').split('.')[0].strip()}")
        return 0
    if a.replay:
        return replay(a.target, a.replay)
    return run(a.target, a.seconds, a.jobs, a.libfuzzer, a.stats)


if __name__ == "__main__":
    sys.exit(main())
