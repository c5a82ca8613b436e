"""Access to the reference corpus copied into fixtures/corpus (real Kafka files + Kafka's own answers).

The dumps there were printed by Kafka's Scala DumpLogSegments (commit 1eb7644349cb). kdump's default
text is the newest (Java) tool's; :func:`scala_to_java_stdout` / :func:`scala_to_java_stderr` apply the
documented differences (spec §2.3, §2.7, §10) so both forms can be compared with the same files.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = FIXTURES / "corpus"

LOG_FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".log", ".checkpoint") and p.is_file())

# which dump output goes with which flags
MODES = {
    "shallow": ([], "dumplog-shallow"),
    "deep": (["--deep-iteration"], "dumplog"),
    "data": (["--deep-iteration", "--print-data-log"], "dumplog-data"),
}


def case_id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def expected(path: Path, stem: str) -> tuple[bytes, bytes | None]:
    """(stdout, stderr or None) Kafka printed for this file in that mode."""
    out = (path.parent / f"{path.name}.{stem}.txt").read_bytes()
    err_path = path.parent / f"{path.name}.{stem}.stderr.txt"
    return out, (err_path.read_bytes() if err_path.exists() else None)


def kafka_died(stderr: bytes | None) -> bool:
    return stderr is not None and b"Exception in thread" in stderr


_BRACE = re.compile(rb"(isValid: (?:true|false) crc: \d+)\}")


def scala_to_java_stdout(text: bytes) -> bytes:
    """The Java tool prints no stray '}' after the crc of legacy record lines."""
    return _BRACE.sub(rb"\1", text)


def scala_to_java_stderr(text: bytes) -> bytes:
    """Java sorts each file's non-consecutive pairs by the previous offset (a TreeMap); Scala printed them
    in reverse discovery order."""
    lines = text.decode().split("\n")
    out, block = [], []

    def flush():
        pairs = [tuple(int(x) for x in re.findall(r"-?\d+", b)) for b in block]
        out.extend(f"  {a} is followed by {b}" for a, b in sorted(dict(pairs).items()))
        block.clear()

    for line in lines:
        if line.startswith("  ") and "is followed by" in line:
            block.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return "\n".join(out).encode()


def load_json(path: Path) -> dict:
    return json.loads((path.parent / f"{path.name}.json").read_text())


def abs_dir_placeholder(text: bytes, directory: Path) -> bytes:
    """The corpus writes the directory in 'Non-consecutive offsets in' reports as '<dir>/'."""
    return text.replace(os.fsencode(str(directory.resolve())) + b"/", b"<dir>/")
