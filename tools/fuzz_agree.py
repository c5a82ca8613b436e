"""A seeded mutation campaign of the differential target ``agree`` (tests/fuzz/agree.py), for where atheris is not
installed: each execution takes a seed segment (tests/fuzz/seeds.py), applies one to three of the mutations that
matter here (size fields, runs of zeros at any alignment, flipped bytes, torn writes, truncation) and runs every
command on it, in this process, on both backends. Each disagreement is written to
bench/out/fuzz/agree/disagree-<sha1> (with a .txt of what differed); the figures (executions, outcome classes,
disagreements) are printed as one JSON line and appended to --stats.

    python tools/fuzz_agree.py --seconds 1200 --seed 1 [--stats bench/out/fuzz/runs.jsonl]
    python tools/fuzz_agree.py --replay FILE...
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "bench" / "out" / "fuzz" / "agree"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--stats")
    ap.add_argument("--replay", nargs="+")
    args = ap.parse_args()
    from tests.fuzz.agree import Disagreement, fuzz_agree, mutate
    from tests.fuzz.seeds import seeds
    if args.replay:
        for name in args.replay:
            print(name, fuzz_agree(Path(name).read_bytes()))
        return 0
    rng = random.Random(args.seed)
    pool = [data for _, data in seeds("agree")]
    OUT.mkdir(parents=True, exist_ok=True)
    runs, classes, kinds, found = 0, {}, {}, []
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        data = rng.choice(pool)
        done = []
        for _ in range(rng.randint(1, 3)):
            what, data = mutate(data, rng)
            done.append(what)
            kinds[what.split("@")[0].split("x")[0]] = kinds.get(what.split("@")[0].split("x")[0], 0) + 1
        runs += 1
        try:
            result = fuzz_agree(data)
        except Disagreement as e:
            sha = hashlib.sha1(data).hexdigest()
            (OUT / f"disagree-{sha}").write_bytes(data)
            (OUT / f"disagree-{sha}.txt").write_text(f"{' '.join(done)}\n{e}\n")
            found.append({"input": f"disagree-{sha}", "mutations": done, "what": str(e)[:300]})
            continue
        classes[result["class"]] = classes.get(result["class"], 0) + 1
    line = json.dumps({"target": "agree", "seed": args.seed, "seconds": args.seconds, "executions": runs,
                       "classes": classes, "mutations": kinds, "disagreements": found})
    print(line)
    if args.stats:
        with open(args.stats, "a") as f:
            f.write(line + "\n")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
