"""A seeded mutation campaign of the differential target ``agree``: each execution takes a seed segment
(tests/fuzz/seeds.py), applies one to three of the mutations that matter here (size fields, runs of zeros at any
alignment, flipped bytes, torn writes, truncation) and runs every command on it, in this process.

``--form lib`` (the default): the library calls behind the commands (tests/fuzz/agree_lib.py), fast; ``--form
cli``: the commands through Click (tests/fuzz/agree.py), a slower cross-check. ``--backend``: ``both`` (each input
on the compiled and the pure-Python backend, which must agree too), ``alternate`` (one backend per execution, in
turn: twice the executions), ``compiled`` or ``python``. Each disagreement is written to
bench/out/fuzz/agree/disagree-<sha1> (with a .txt of what differed); the figures (executions, outcome classes,
disagreements) are printed as one JSON line and appended to --stats, and rewritten to --progress every minute; a
campaign stopped with SIGTERM (``kill PID``) writes them as at its end.

    python tools/fuzz_agree.py --seconds 1200 --seed 1 [--executions N] [--stats bench/out/fuzz/runs.jsonl]
    python tools/fuzz_agree.py --replay FILE...
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import signal
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out" / "fuzz" / "agree"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stats")
    ap.add_argument("--executions", type=int, default=0, help="stop after this many (0: --seconds only)")
    ap.add_argument("--form", choices=("lib", "cli"), default="lib")
    ap.add_argument("--backend", choices=("both", "alternate", "compiled", "python"), default="both")
    ap.add_argument("--progress", help="a file rewritten every minute with the figures so far (one JSON object)")
    ap.add_argument("--seed-bytes", type=int, default=0,
                    help="cut each seed segment to this many bytes (0: as tests/fuzz/seeds.py gives them, 16 KiB)")
    ap.add_argument("--replay", nargs="+")
    args = ap.parse_args()
    from kdump import _backend
    from tests.fuzz.agree import fuzz_agree
    from tests.fuzz.agree_lib import fuzz_agree_lib
    from tests.fuzz.seeds import seeds

    def target(data: bytes, n: int):
        if args.form == "cli":
            return fuzz_agree(data)
        if args.backend == "both":
            return fuzz_agree_lib(data)
        if args.backend == "alternate":
            names = ("compiled", "python") if _backend.COMPILED_AVAILABLE else ("python",)
            return fuzz_agree_lib(data, (names[n % len(names)],))
        return fuzz_agree_lib(data, (args.backend,))
    if args.replay:
        for name in args.replay:
            print(name, target(Path(name).read_bytes(), 0))
        return 0
    rng = random.Random(args.seed)
    pool = [data[:args.seed_bytes] if args.seed_bytes else data for _, data in seeds("agree")]
    OUT.mkdir(parents=True, exist_ok=True)
    # executions, outcome classes, mutations, disagreements kept, and disagreements by kind (numbers left out)
    state: dict = {"runs": 0, "classes": {}, "kinds": {}, "found": [], "seen": {}}
    began = time.monotonic()
    end = began + args.seconds
    shown = began

    def figures() -> dict:
        seconds = time.monotonic() - began
        runs = state["runs"]
        return {"target": "agree", "form": args.form, "backend": args.backend, "seed": args.seed,
                "seedBytes": args.seed_bytes, "seconds": round(seconds, 1), "executions": runs,
                "execPerSecond": round(runs / max(seconds, 1e-9), 2), "classes": state["classes"],
                "mutations": state["kinds"], "disagreements": state["found"], "kinds": state["seen"]}
    def stop(signum, frame):
        raise KeyboardInterrupt
    # SIGTERM (or SIGINT, which a shell's background job ignores) stops a campaign early; its figures so far are
    # written as at the end
    signal.signal(signal.SIGTERM, stop)
    try:
        _campaign(args, rng, pool, target, end, shown, figures, state)
    except KeyboardInterrupt:
        pass
    line = json.dumps(figures())
    if args.progress:
        Path(args.progress).write_text(line + "\n")
    print(line)
    if args.stats:
        with open(args.stats, "a") as f:
            f.write(line + "\n")
    return 1 if state["found"] else 0


def _campaign(args, rng, pool, target, end, shown, figures, state) -> None:
    from tests.fuzz.agree import Disagreement, mutate
    classes, kinds, found, seen = state["classes"], state["kinds"], state["found"], state["seen"]
    while time.monotonic() < end and (not args.executions or state["runs"] < args.executions):
        if args.progress and time.monotonic() - shown >= 60:
            shown = time.monotonic()
            Path(args.progress).write_text(json.dumps(figures()) + "\n")
        data = rng.choice(pool)
        done = []
        for _ in range(rng.randint(1, 3)):
            what, data = mutate(data, rng)
            done.append(what)
            kinds[what.split("@")[0].split("x")[0]] = kinds.get(what.split("@")[0].split("x")[0], 0) + 1
        state["runs"] += 1
        try:
            result = target(data, state["runs"])
        except Exception as e:  # a disagreement, or anything else escaping a command (a bug: exit 70)
            what = str(e) if isinstance(e, Disagreement) else traceback.format_exc()
            kind = re.sub(r"\d+", "N", str(e) if isinstance(e, Disagreement) else f"{type(e).__name__}: {e}")[:80]
            seen[kind] = seen.get(kind, 0) + 1
            if seen[kind] > 3:  # the same disagreement again: counted, not kept
                continue
            sha = hashlib.sha1(data).hexdigest()
            (OUT / f"disagree-{sha}").write_bytes(data)
            (OUT / f"disagree-{sha}.txt").write_text(f"{' '.join(done)}\n{what}\n")
            found.append({"input": f"disagree-{sha}", "mutations": done, "what": what[-300:]})
            continue
        classes[result["class"]] = classes.get(result["class"], 0) + 1


if __name__ == "__main__":
    sys.exit(main())
