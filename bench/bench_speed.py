#!/usr/bin/env python3
"""Every row of issue 13's speed table in one go, with ratios beside the absolute figures.

    python bench/bench_speed.py [--records 2000000] [--runs 3] [--convert-runs 1] [--out bench/out] [--before CHECKOUT]
    python bench/bench_speed.py --plain-runs [--old CHECKOUT]   (stats, txn, the Spark reader on plain messages)
    python bench/bench_speed.py --issue23 [--old CHECKOUT] [--runs 5]      # issue 23 items 2-4
    python bench/bench_speed.py --jobs-only [--old CHECKOUT] [--runs 5]    # its --jobs rows alone (item 4)
    python bench/bench_speed.py --issue23 --no-jobs [--old CHECKOUT]       # the quick before/after: items 2-3

Prepares (once, cached under OUT): the segments of bench_dump.py (RECORDS records in magic-2 batches of
1,000, 12-byte keys, 100-byte values; codec none and lz4), and the same records in magic 1 written by
kdump's own ``convert --to-magic 1`` (lz4 wrappers from the lz4 segment, plain messages from the other).
``--before CHECKOUT`` also runs the magic-1 uncompressed rows with another checkout's kdump (compiled in
place), for before/after figures from one run.
Then runs each command as a child process (stdout to /dev/null) and prints the best wall-clock seconds of
RUNS, records/s, the ratio the table's target is about, and the peak RSS of the child.

The shallow-verify row compares ``kdump verify`` with a bare CRC-32C pass over the same file, done here:
the file read in 1 MiB chunks, each chunk CRC-32C'd (the C function kdump itself uses), in a child
process of its own so that both sides pay the interpreter's start-up.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_dump import make_segment  # noqa: E402

LOG = "00000000000000000000.log"
CRC_PASS = (
    "import sys\n"
    "from kdump.format.crc import crc32c\n"
    "with open(sys.argv[1], 'rb', buffering=0) as f:\n"
    "    while True:\n"
    "        chunk = f.read(1 << 20)\n"
    "        if not chunk:\n"
    "            break\n"
    "        crc32c(chunk)\n"
)


IN_PROCESS = CRC_PASS.replace("with open(sys.argv[1]", "def crc_pass():\n  with open(sys.argv[1]").replace(
    "\n    ", "\n      ") + (
    "import time\n"
    "from kdump.verify import verify_one\n"
    "best = [9e9, 9e9]\n"
    "for _ in range(int(sys.argv[2])):\n"
    "    for i, fn in enumerate((crc_pass, lambda: verify_one(sys.argv[1]))):\n"
    "        t = time.perf_counter(); fn(); best[i] = min(best[i], time.perf_counter() - t)\n"
    "print(best[0], best[1])\n"
)


def in_process_shallow(path: Path, runs: int) -> tuple[float, float]:
    """Best seconds of the bare CRC-32C pass and of ``verify_one`` (shallow), alternating in one interpreter."""
    out = subprocess.run([sys.executable, "-c", IN_PROCESS, str(path), str(runs)], check=True, capture_output=True,
                         text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout.split()
    return float(out[0]), float(out[1])


CPU: dict[float, float] = {}  # best wall seconds of a row -> its best CPU seconds, for Table.row


def run(cmd: list[str], root: Path = ROOT) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system: the steadier figure on a shared machine) and peak RSS
    (bytes) of one child process running the kdump of the checkout ``root`` (this one by default)."""
    env = dict(os.environ, PYTHONPATH=str(root))
    with open(os.devnull, "wb") as devnull:
        start = time.perf_counter()
        # (run from the checkout: ``python -m`` puts the working directory before PYTHONPATH)
        proc = subprocess.Popen(cmd, stdout=devnull, stderr=devnull, env=env, cwd=root)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{cmd} failed with exit {os.waitstatus_to_exitcode(status)}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def best(cmd: list[str], runs: int, root: Path = ROOT) -> tuple[float, int]:
    results = [run(cmd, root) for _ in range(runs)]
    wall = min(r[0] for r in results)
    CPU[wall] = min(r[1] for r in results)
    return wall, max(r[2] for r in results)


def kdump(*args: str) -> list[str]:
    return [sys.executable, "-m", "kdump", *args]


def convert_cmd(src: Path, out_dir: Path, magic: int, compression: str = "keep") -> list[str]:
    return kdump("convert", str(src), "--to-magic", str(magic), "--compression", compression, "-o", f"{out_dir}/",
                 "--force")


def prepare(out: Path, records: int) -> dict[str, Path]:
    files = {}
    for name, codec in (("none", 0), ("lz4", 3)):
        path = out / f"{name}-{records}" / LOG
        t = time.perf_counter()
        make_segment(path, records, 1000, codec)
        files[f"v2-{name}"] = path
        v1 = out / "speed" / f"v1-{name}-{records}"
        if not (v1 / LOG).exists():
            run(convert_cmd(path, v1, 1))
        files[f"v1-{name}"] = v1 / LOG
        print(f"# {name}: magic 2 {path.stat().st_size / 1e6:.1f} MB, magic 1 {(v1 / LOG).stat().st_size / 1e6:.1f} MB "
              f"({time.perf_counter() - t:.1f} s to prepare)", flush=True)
    return files


class Table:
    def __init__(self, records: int):
        self.records = records
        print(f"{'row':58} {'seconds':>8} {'CPU s':>7} {'records/s':>12} {'ratio':>7} {'target':>14} {'RSS MB':>7}")

    def row(self, label: str, seconds: float, rss: int, ratio: str = "", target: str = "") -> None:
        cpu = f"{CPU[seconds]:7.3f}" if seconds in CPU else " " * 7
        print(f"{label:58} {seconds:8.3f} {cpu} {self.records / seconds:12,.0f} {ratio:>7} {target:>14} "
              f"{rss / 1e6:7.1f}", flush=True)


# --- issue 23, items 2-4: stats, JSON, shallow verify and --jobs, this checkout against another ---------------
# ``--issue23 [--old CHECKOUT]``: every row of items 2-4 measured in one run, each command of the old checkout (its
# compiled modules built in place) right after the same command of this one, best of RUNS.

PARENT_AND_WORKERS = (
    "import resource, sys, time\n"
    "from kdump import parallel\n"
    "from kdump.cli import main\n"
    "out, sys.argv = sys.argv[1], ['kdump', *sys.argv[2:]]\n"
    "marks = []  # the parent's CPU seconds when it starts its workers and when it has used all their results\n"
    "def timed(*args):\n"
    "    marks.append(time.process_time())\n"
    "    try:\n"
    "        return (yield from forked(*args))\n"
    "    finally:\n"
    "        marks.append(time.process_time())\n"
    "if hasattr(parallel, '_forked_results'):\n"
    "    forked, parallel._forked_results = parallel._forked_results, timed\n"
    "else:  # a checkout before ordered_results: a function that returns the list\n"
    "    forked = parallel._forked_map\n"
    "    parallel._forked_map = lambda *args: list(timed(*args))\n"
    "try:\n"
    "    main()\n"
    "except SystemExit:\n"
    "    pass\n"
    "cpu = [sum(resource.getrusage(w)[:2]) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]\n"
    "fork, joined = marks[:2] if marks else (cpu[0], cpu[0])\n"
    "open(out, 'w').write(f'{cpu[0]} {cpu[1]} {fork} {joined - fork} {cpu[0] - joined}')\n"
)


def at(root: Path, *cmd: str) -> list[str]:
    """``cmd`` run in the checkout at ``root`` (``python -m`` and ``-c`` look in the working directory first)."""
    return ["env", "-C", str(root), f"PYTHONPATH={root}", *cmd]


def kdump_at(root: Path, *args: str) -> list[str]:
    return at(root, sys.executable, "-m", "kdump", *args)


def parent_and_workers(root: Path, args: list[str]) -> tuple[float, ...]:
    """The CPU seconds of one run of ``kdump ARGS`` in one interpreter: its own (start-up, imports, scan, the
    report: what no second core takes over) and its workers' (the parallel part); then its own split in three:
    before its forked workers start (start-up, imports, the scan), while they run, after their last result (the
    report); with one job all of it is "before"."""
    import tempfile
    with tempfile.NamedTemporaryFile("r") as out:
        subprocess.run(at(root, sys.executable, "-c", PARENT_AND_WORKERS, out.name, *args),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return tuple(float(x) for x in out.read().split())


def jobs_rows(args, t: Table, sides: list[tuple[str, Path]]) -> None:
    """Item 4: each command with ``--jobs`` on 8 partitions of 250,000 records (gzip batches of 1,000: CPU work to
    spread), ``--jobs 1`` then ``--jobs 2``: best wall seconds of RUNS (meaningful on an idle machine only), then
    the model, RUNS rounds with the sides interleaved, medians (a shared machine's load moves single runs by 5 %):
    the CPU seconds an idle two-core machine would take, the parent's serial part plus half the workers'
    (speed-up = one job's CPU / that), with the parent's part split (before its workers start / while they run /
    after); in brackets the same with the parent's work while they run shared with them (dump's writing out)."""
    import statistics
    runs = args.runs
    logs = args.out / "logdir-8-250000-gzip"
    for p in range(8):
        make_segment(logs / f"bench-{p}" / LOG, 250_000, 1000, 1)
    # index rebuild takes partition directories; in a copy, its index files written once, then found in place
    rebuilt = args.out / "logdir-8-250000-gzip-rebuilt"
    if not rebuilt.exists():
        shutil.copytree(logs, rebuilt)
    partitions = sorted(str(p) for p in rebuilt.iterdir())
    for label, cmd in (("verify --deep", ["verify", "--deep"]), ("stats", ["stats"]), ("txn", ["txn"]),
                       ("index check --deep", ["index", "check", "--deep"]),
                       ("index rebuild (files in place)", ["index", "rebuild"]),
                       ("dump --deep-iteration --print-data-log", ["dump", "--deep-iteration", "--print-data-log"])):
        paths = partitions if cmd[:2] == ["index", "rebuild"] else [str(logs)]
        for name, root in sides:
            one = best(kdump_at(root, *cmd, "--jobs", "1", *paths), runs)
            two = best(kdump_at(root, *cmd, "--jobs", "2", *paths), runs)
            t.row(f"{label} --jobs 1, 8 gzip partitions [{name}]", *one)  # CPU s: the workers' too (wait4)
            t.row(f"{label} --jobs 2 [{name}]: speed-up", *two, f"{one[0] / two[0]:.2f}x", ">= 1.8x")
        rounds: dict[str, list[tuple[float, ...]]] = {name: [] for name, _ in sides}
        for _ in range(runs):
            for name, root in sides:
                own1 = parent_and_workers(root, [*cmd, "--jobs", "1", *paths])[0]
                rounds[name].append((own1, *parent_and_workers(root, [*cmd, "--jobs", "2", *paths])))
        for name, _ in sides:
            medians = (statistics.median(x) for x in zip(*rounds[name], strict=True))
            own1, own2, workers2, before, during, after = medians
            # the parent's work while its workers run shares the two cores with them: the second figure
            print(f"#   {label} [{name}]: CPU s, one job {own1:.3f}; two jobs: parent {own2:.3f} (before the "
                  f"workers {before:.3f}, while they run {during:.3f}, after {after:.3f}), workers {workers2:.3f}: "
                  f"{workers2 - (own1 - before):+.3f} on one job's work after its start; idle-machine speed-up "
                  f"{own1 / (own2 + workers2 / 2):.2f}x ({own1 / (before + after + (during + workers2) / 2):.2f}x)",
                  flush=True)


def compared_sides(args) -> list[tuple[str, Path]]:
    """This checkout ("new") and, with --old, the other one ("old"), each compiled to .pyc first."""
    sides = [("new", ROOT)] + ([("old", args.old)] if args.old else [])
    compile_sides(sides)
    return sides


def compile_sides(sides: list[tuple[str, Path]]) -> None:
    """Start-up as installed: kdump's modules compiled to .pyc (this machine's shell may not write them)."""
    for _, root in sides:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(root / "kdump")], check=True,
                       stdout=subprocess.DEVNULL)


def issue23(args, files: dict[str, Path]) -> None:
    sides = compared_sides(args)
    runs = args.runs
    t = Table(args.records)
    none = str(files["v2-none"])
    deep = ("dump", "--deep-iteration", "--print-data-log")

    def both(label: str, *cmd: str) -> dict[str, tuple[float, int]]:
        got = {}
        for name, root in sides:
            got[name] = best(kdump_at(root, *cmd), runs)
        return got

    def show(label: str, got: dict, base: dict | None = None, target: str = "") -> None:
        """Rows with the ratio to ``base``: of wall seconds, then of CPU seconds (steadier on a shared machine)."""
        for name, (secs, rss) in got.items():
            ratio = f"{secs / base[name][0]:.2f}x/{CPU[secs] / CPU[base[name][0]]:.2f}x" if base else ""
            t.row(f"{label} [{name}]", secs, rss, ratio, target)

    # item 2: stats against verify --deep on the 2,000,000-record segment
    vd = both("verify --deep", "verify", "--deep", none)
    st = both("stats", "stats", "--format", "json", none)
    show("verify --deep, v2 none", vd)
    show("stats, v2 none", st, vd, "<= 2x deep")
    # item 3: JSON against text, shallow verify against a bare CRC-32C pass (both child processes)
    text = both("text", *deep, none)
    js = both("json", *deep, "--format", "json", none)
    show("dump --deep-iteration --print-data-log (text)", text)
    show("dump ... --format json", js, text, "<= 1x text")
    crc = {name: best(at(root, sys.executable, "-c", CRC_PASS, none), runs)
           for name, root in sides}
    sv = both("verify", "verify", none)
    show("bare CRC-32C pass over the v2 none file", crc)
    show("verify (shallow), v2 none", sv, crc, "<= 1.5x CRC")
    for name, root in sides:
        bare, _ = best([sys.executable, "-c", "pass"], runs)
        imports, _ = best(at(root, sys.executable, "-c", "import kdump.cli, kdump.verify, kdump.commands.verify"),
                          runs)
        t.row(f"start-up: python alone [{name}]", bare, 0)
        t.row(f"start-up: python importing kdump verify's modules [{name}]", imports, 0)
    if not args.no_jobs:
        jobs_rows(args, t, sides)  # item 4


# --- issue 23 item 1, round 2: stats, txn and the Spark reader on plain magic 0/1 messages ----------------------
# ``--plain-runs [--old CHECKOUT]``: each command on the magic 2 uncompressed segment and on the same records as plain
# magic-1 messages, then (with --old) the other checkout's on the magic-1 file, best of RUNS, in one run.

SPARK_READ = (
    "import sys\n"
    "from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices\n"
    "rows = sum(rb.num_rows for rb in read_slices([SegmentSlice(sys.argv[1], 't', 0)], ReadOptions()))\n"
    "assert rows == int(sys.argv[2]), rows\n"
)


def plain_runs(args, files: dict[str, Path]) -> None:
    sides = compared_sides(args)
    runs = args.runs
    t = Table(args.records)
    v2, v1 = str(files["v2-none"]), str(files["v1-none"])
    rows = [("stats --format json", ["stats", "--format", "json"]), ("txn --format json", ["txn", "--format", "json"]),
            ("verify --deep", ["verify", "--deep"])]
    for label, cmd in rows:
        n2 = best(kdump_at(ROOT, *cmd, v2), runs)
        t.row(f"{label}, magic 2 none", *n2)
        for name, root in sides:
            n1 = best(kdump_at(root, *cmd, v1), runs)
            t.row(f"{label}, magic 1 none [{name}]", *n1, f"{n1[0] / n2[0]:.2f}x/{CPU[n1[0]] / CPU[n2[0]]:.2f}x",
                  "<= 1.5x v2" if name == "new" else "")
    # the Spark source's Arrow batches (no Spark session: kdump.spark.arrow.read_slices in one process)
    spark = [sys.executable, "-c", SPARK_READ]
    n2 = best(at(ROOT, *spark, v2, str(args.records)), runs)
    t.row("Spark reader (read_slices), magic 2 none", *n2)
    for name, root in sides:
        n1 = best(at(root, *spark, v1, str(args.records)), runs)
        t.row(f"Spark reader (read_slices), magic 1 none [{name}]", *n1,
              f"{n1[0] / n2[0]:.2f}x/{CPU[n1[0]] / CPU[n2[0]]:.2f}x", "<= 1.5x v2" if name == "new" else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--convert-runs", type=int, default=1)
    ap.add_argument("--out", type=Path, default=ROOT / "bench" / "out")
    ap.add_argument("--skip-convert", action="store_true")
    ap.add_argument("--before", type=Path, default=None,
                    help="another checkout (compiled in place): its magic-1 uncompressed rows too, before/after")
    ap.add_argument("--issue23", action="store_true", help="only the rows of issue 23 items 2-4 (see issue23())")
    ap.add_argument("--old", type=Path, help="with --issue23, --jobs-only or --plain-runs: a checkout to compare, "
                    "command by command")
    ap.add_argument("--plain-runs", action="store_true",
                    help="only stats, txn, verify --deep and the Spark reader, magic 1 none vs magic 2 none")
    ap.add_argument("--no-jobs", action="store_true", help="with --issue23: leave out its --jobs rows (the slow part: "
                    "8 gzip partitions of 250,000 records, each command twice per side)")
    ap.add_argument("--jobs-only", action="store_true", help="only the --jobs rows of --issue23 (item 4), with --old")
    args = ap.parse_args()

    from kdump._backend import BACKEND
    if args.jobs_only:
        print(f"# python {sys.version.split()[0]}, backend {BACKEND}, best of {args.runs} runs, {os.cpu_count()} "
              f"cores, load {os.getloadavg()[0]:.1f}")
        jobs_rows(args, Table(8 * 250_000), compared_sides(args))
        return
    files = prepare(args.out, args.records)
    print(f"# python {sys.version.split()[0]}, backend {BACKEND}, best of {args.runs} runs "
          f"({args.convert_runs} for convert), {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    if args.issue23:
        issue23(args, files)
        return
    if args.plain_runs:
        plain_runs(args, files)
        return
    t = Table(args.records)
    runs = args.runs

    # 1. verify --deep, magic 1 (lz4 wrappers) vs magic 2 (lz4 batches): the same records.
    v2, rss2 = best(kdump("verify", "--deep", str(files["v2-lz4"])), runs)
    v1, rss1 = best(kdump("verify", "--deep", str(files["v1-lz4"])), runs)
    t.row("verify --deep, magic 2 lz4", v2, rss2)
    t.row("verify --deep, magic 1 lz4 wrappers", v1, rss1, f"{v1 / v2:.2f}x", "<= 1.5x v2")

    # 2. dump --deep-iteration --print-data-log, magic 1 vs magic 2.
    deep = ("dump", "--deep-iteration", "--print-data-log")
    d2, rss2 = best(kdump(*deep, str(files["v2-lz4"])), runs)
    d1, rss1 = best(kdump(*deep, str(files["v1-lz4"])), runs)
    t.row("dump --deep-iteration --print-data-log, magic 2 lz4", d2, rss2)
    t.row("dump --deep-iteration --print-data-log, magic 1 lz4", d1, rss1, f"{d1 / d2:.2f}x", "<= 1.5x v2")

    # 1-2 (issue 23). The same on plain messages: magic 1 uncompressed vs magic 2 uncompressed (each magic-1
    # message is an entry of its own: the read layer takes them as runs), with --before the other checkout's.
    plain = [("verify --deep", ("verify", "--deep")), ("dump --deep-iteration --print-data-log", deep),
             ("dump ... --format json", (*deep, "--format", "json"))]
    for label, command in plain:
        n2, rss2 = best(kdump(*command, str(files["v2-none"])), runs)
        n1, rss1 = best(kdump(*command, str(files["v1-none"])), runs)
        t.row(f"{label}, magic 2 none", n2, rss2)
        t.row(f"{label}, magic 1 none", n1, rss1, f"{n1 / n2:.2f}x", "<= 1.5x v2")
        if args.before is not None:
            # (the JSON dump of plain messages took half a minute before issue 23: one run of it is enough)
            b1, rss_b = best(kdump(*command, str(files["v1-none"])), 1 if "json" in command else runs, args.before)
            t.row(f"  before ({args.before.name}): {label}, magic 1 none", b1, rss_b, f"{b1 / n2:.2f}x")

    # 4-5. JSON vs text, and the text rate (magic 2, none).
    text, rss_t = best(kdump(*deep, str(files["v2-none"])), runs)
    js, rss_j = best(kdump(*deep, "--format", "json", str(files["v2-none"])), runs)
    t.row("dump --deep-iteration --print-data-log, v2 none (text)", text, rss_t, "", ">= 1.5M rec/s")
    t.row("dump --format json --deep-iteration --print-data-log", js, rss_j, f"{js / text:.2f}x", "<= 1x text")

    # 6. verify --deep rate (magic 2, none).
    vd, rss = best(kdump("verify", "--deep", str(files["v2-none"])), runs)
    t.row("verify --deep, v2 none", vd, rss, "", ">= 6M rec/s")

    # 7. shallow verify vs a bare CRC-32C pass over the file.
    crc, rss_c = best([sys.executable, "-c", CRC_PASS, str(files["v2-none"])], runs)
    sv, rss = best(kdump("verify", str(files["v2-none"])), runs)
    t.row("bare CRC-32C pass over the v2 none file (1 MiB reads)", crc, rss_c)
    t.row("verify (shallow), v2 none", sv, rss, f"{sv / crc:.2f}x", "<= 1.5x CRC")
    # ... and what the two child processes spend before reading a byte: the interpreter alone, then the
    # interpreter importing what `kdump verify` imports (Click and kdump's modules);
    bare, _ = best([sys.executable, "-c", "pass"], runs)
    imports, _ = best([sys.executable, "-c", "import kdump.cli, kdump.verify, kdump.commands.verify"], runs)
    t.row("start-up: python alone", bare, 0)
    t.row("start-up: python importing kdump verify's modules", imports, 0)
    # ... and the same two passes in one warm interpreter (start-up and imports excluded), alternating.
    crc_in, verify_in = in_process_shallow(files["v2-none"], runs)
    t.row("in one process: bare CRC-32C pass", crc_in, 0)
    t.row("in one process: verify_one (shallow)", verify_in, 0, f"{verify_in / crc_in:.2f}x", "<= 1.5x CRC")

    # 3. convert, either direction, codec none (target), lz4 and gzip (reported).
    if args.skip_convert:
        return
    work = args.out / "speed" / "convert"
    legs = [
        ("convert none, magic 2 -> 1", files["v2-none"], 1, "keep"),
        ("convert none, magic 1 -> 2", files["v1-none"], 2, "keep"),
        ("convert lz4, magic 2 -> 1", files["v2-lz4"], 1, "keep"),
        ("convert lz4, magic 1 -> 2", files["v1-lz4"], 2, "keep"),
        ("convert gzip, magic 2 (lz4) -> 1 gzip", files["v2-lz4"], 1, "gzip"),
        ("convert gzip, magic 1 (lz4) -> 2 gzip", files["v1-lz4"], 2, "gzip"),
    ]
    for label, src, magic, compression in legs:
        dst = work / label.replace(" ", "_").replace(",", "").replace(">", "").replace("(", "").replace(")", "")
        secs, rss = best(convert_cmd(src, dst, magic, compression), args.convert_runs)
        target = ">= 1M rec/s" if "none" in label else "(report)"
        t.row(label, secs, rss, "", target)
        shutil.rmtree(dst, ignore_errors=True)


if __name__ == "__main__":
    main()
