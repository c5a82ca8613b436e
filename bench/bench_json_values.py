"""``dump --format json`` and ``--format records`` against the text dump on real payloads: values that are JSON
documents (a quote every few bytes: the most common Kafka value) and binary values (not UTF-8: base64).

    python bench/bench_json_values.py [--records 2000000] [--runs 3] [--out bench/out] [--old CHECKOUT]
                                      [--values json|binary|both]

Writes two segments of RECORDS records (batches of 1,000, uncompressed, keys ``k<i>``), then times
``kdump dump --print-data-log`` (this checkout, ``python -m kdump``, output to /dev/null) with each format, best
wall seconds of RUNS rounds (the three formats take turns in each round, the order reversed every other round;
kdump's modules compiled to .pyc first, as installed); the figure to read is the ratio to the text dump of the same
run (the machine is shared); the CPU seconds (user + system, best of the rounds) are beside them, which the load
moves less, and the median over the rounds of each round's CPU ratio (a round's runs meet the same load: the
figure that holds when the machine's speed drifts during the run). With ``--old``, the same three commands of
another checkout (compiled in place: before a change) take their turns in the same rounds, on a row of their own.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_speed import compile_sides  # noqa: E402

from kdump.format.v2_builder import RecordBatchBuilder  # noqa: E402
from kdump.write.segment import write_segment  # noqa: E402


def segment(path: Path, n: int, value) -> None:
    if path.exists():
        return
    batches = []
    for base in range(0, n, 1000):
        b = RecordBatchBuilder(base_offset=base)
        for i in range(base, min(base + 1000, n)):
            b.append(i, 1_700_000_000_000 + i, b"k%d" % i, value(i))
        batches.append(b.build())
    path.parent.mkdir(parents=True, exist_ok=True)
    write_segment(str(path), batches, deep_verify=False)


def json_value(i: int) -> bytes:
    return b'{"id":%d,"user":"u%d","p":"%s"}' % (i, i % 9973, b"abcdefghij" * 4)


def binary_value(i: int) -> bytes:
    return bytes((i * 7 + j * 31) % 256 for j in range(48)) + b"\xff"


def seconds(args: list[str], checkout: Path = ROOT) -> tuple[float, float]:
    """The wall seconds of a run and its CPU seconds (user + system: what the load moves less)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    with open(os.devnull, "wb") as out:
        subprocess.run([sys.executable, "-m", "kdump", *args], cwd=checkout, stdout=out, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def rounds(commands: list[tuple[Path, list[str]]], runs: int) -> list[list[tuple[float, float]]]:
    """The (wall, CPU) seconds of each command (run in its checkout) in each of ``runs`` rounds, the commands taking
    turns within a round (the order reversed every other round): on a shared machine neighbours in a round meet the
    same load, so their ratio compares like with like."""
    times: list[list[tuple[float, float]]] = [[] for _ in commands]
    order = list(range(len(commands)))
    for r in range(runs):
        for i in (order if r % 2 == 0 else order[::-1]):
            checkout, args = commands[i]
            times[i].append(seconds(args, checkout))
    return times


def round_ratio(a: list[tuple[float, float]], b: list[tuple[float, float]], cpu: bool) -> float:
    """The median over the rounds of a's seconds over b's in the same round (CPU or wall)."""
    k = 1 if cpu else 0
    return statistics.median([x[k] / y[k] for x, y in zip(a, b, strict=True)])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "bench" / "out"))
    ap.add_argument("--values", choices=("json", "binary", "both"), default="both")
    ap.add_argument("--old", type=Path, help="another checkout (compiled in place) whose commands take turns with "
                                             "this one's, on rows of their own")
    a = ap.parse_args()
    sides = [("this", ROOT)] + ([("old", a.old.resolve())] if a.old else [])
    compile_sides(sides)  # start-up as installed, in both checkouts
    print(f"| values ({a.records:,} records) | checkout | text s | json s | json / text | records s | records / text "
          "| CPU s: text, json, records | CPU json / text | CPU records / text | CPU json / text, median of rounds "
          "| CPU records / text, median of rounds |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, value in (("JSON documents", json_value), ("binary", binary_value)):
        if a.values not in ("both", name.split()[0].lower()):
            continue
        path = Path(a.out) / f"json-values-{name.split()[0].lower()}-{a.records}" / "00000000000000000000.log"
        segment(path, a.records, value)
        commands = [(checkout, args) for _, checkout in sides
                    for args in (["dump", "--print-data-log", str(path.resolve())],
                                 ["dump", "--print-data-log", "--format", "json", str(path.resolve())],
                                 ["dump", "--format", "records", str(path.resolve())])]
        times = rounds(commands, a.runs)
        best = [(min(w for w, _ in t), min(c for _, c in t)) for t in times]
        for k, (side, _) in enumerate(sides):
            (text, ct), (js, cj), (rec, cr) = best[3 * k:3 * k + 3]
            t_text, t_json, t_rec = times[3 * k:3 * k + 3]
            print(f"| {name} | {side} | {text:.2f} | {js:.2f} | {js / text:.2f}x | {rec:.2f} | {rec / text:.2f}x "
                  f"| {ct:.2f}, {cj:.2f}, {cr:.2f} | {cj / ct:.2f}x | {cr / ct:.2f}x "
                  f"| {round_ratio(t_json, t_text, True):.2f}x | {round_ratio(t_rec, t_text, True):.2f}x |", flush=True)


if __name__ == "__main__":
    main()
