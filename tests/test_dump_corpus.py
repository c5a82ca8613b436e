"""`kdump dump` against Kafka's own DumpLogSegments output, for every log file of the corpus.

Two comparisons per file and mode: with ``--compat scala`` the output must be byte-identical to what
Kafka's Scala tool printed (the corpus), and by default it must equal the same text in the newest
(Java) tool's form. Where Kafka's tool died, stdout must still match up to that point, and kdump must
say what stopped it (file, byte position) and exit 1 instead of dumping a stack trace.

Two corpus files are an intact segment with the size field of one batch damaged (:data:`DAMAGED_FRAMING`):
Kafka dies there or calls everything after it "invalid bytes at the end"; kdump reads past the damage
(issue 11), so its output is Kafka's dump of the intact segment without the lost batch, one error line
naming the region and the offsets lost, and exit 1.
"""
import re

import pytest

from corpus import (LOG_FILES, MODES, abs_dir_placeholder, case_id, expected, kafka_died, load_json,
                    scala_to_java_stderr, scala_to_java_stdout)
from support.cli import run_cli

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

CASES = [(p, m) for p in LOG_FILES for m in MODES]
# corrupt case -> (the intact segment it was made from, position of the batch whose size field is damaged)
DAMAGED_FRAMING = {"v2-bad-length-field": ("v2-none", 219), "v2-length-beyond-eof": ("v2-none", 219)}
LEADER_CHANGE_JSON = re.compile(rb" LeaderChange: \{[^\n]*\}")
DECODER_HINT = re.compile(rb"kdump: note: __\w+ records are binary; add --[\w-]+-decoder \(or --decoder auto\) to "
                          rb"decode them\n")


def run_dump(path, flags, in_dir):
    in_dir(path.parent)
    return run_cli("dump", *flags, path.name)


def without_batch(dump: bytes, position: int) -> bytes:
    """Kafka's dump text without the batch at ``position`` (its batch line and its record lines)."""
    out, skipping = [], False
    for line in dump.splitlines(keepends=True):
        if not line.startswith(b"| "):
            skipping = f" position: {position} ".encode() in line
        if not skipping:
            out.append(line)
    return b"".join(out)


def past_damage(path, stem):
    """For a DAMAGED_FRAMING case: (stdout, the damaged batch's position, its (first, last) offsets) from
    Kafka's dump of the intact segment."""
    intact_dir, position = DAMAGED_FRAMING[path.parent.name]
    intact = path.parent.parent.parent / intact_dir / path.name
    exp_out, _ = expected(intact, stem)
    line = next(x for x in exp_out.splitlines() if f" position: {position} ".encode() in x)
    first, last = (int(v) for v in re.match(rb"baseOffset: (\d+) lastOffset: (\d+)", line).groups())
    return without_batch(exp_out, position), position, (first, last)


def check_past_damage(result, path, stem, deep):
    exp_out, position, (first, last) = past_damage(path, stem)
    assert result.stdout_bytes == exp_out
    err = abs_dir_placeholder(result.stderr_bytes, path.parent).decode().splitlines()
    assert err[0].startswith(f"kdump: {path.name}: at byte {position}: ")
    assert f"offsets {first}-{last} are lost" in err[0]
    non_consecutive = [f"Non-consecutive offsets in <dir>/{path.name}", f"  {first - 1} is followed by {last + 1}"]
    assert err[1:] == (non_consecutive if deep else [])
    assert result.exit_code == 1


def check_result(result, path, exp_out, exp_err):
    assert result.stdout_bytes.decode("utf-8", "replace").splitlines() == \
        exp_out.decode("utf-8", "replace").splitlines()  # readable diff first
    assert result.stdout_bytes == exp_out
    # kdump's hint that an internal topic has a decoder (issue 20) is its own line, not Kafka's
    err = DECODER_HINT.sub(b"", abs_dir_placeholder(result.stderr_bytes, path.parent))
    if kafka_died(exp_err):
        assert result.exit_code == 1
        lines = err.decode().strip().splitlines()
        assert lines, "kdump must explain what stopped the dump"
        assert all(line.startswith(f"kdump: {path.name}: at byte ") for line in lines), lines
    else:
        # A batch Kafka's own view says fails its CRC: Kafka prints isvalid: false and exits 0; kdump prints the
        # same text and, the data being damaged, one error line per such batch before Kafka's report, and exits 1
        # (issue 20: the one outcome policy keeps Kafka's exit 0 only for a crash-cut tail)
        view = path.parent / f"{path.name}.json"
        invalid = [b["position"] for b in (load_json(path)["batches"] if view.exists() else [])
                   if not b.get("crcValid", True)]
        lines = err.splitlines(keepends=True)
        for line, position in zip(lines, invalid, strict=False):
            assert line.startswith(f"kdump: {path.name}: at byte {position}: ".encode()), line
            assert b"isvalid: false" in line
        assert b"".join(lines[len(invalid):]) == (exp_err or b"")
        assert result.exit_code == (1 if invalid else 0)


@pytest.mark.parametrize("path,mode", CASES, ids=[f"{case_id(p)}-{m}" for p, m in CASES])
def test_scala_compat_output_is_kafkas(path, mode, in_dir):
    flags, stem = MODES[mode]
    exp_out, exp_err = expected(path, stem)
    result = run_dump(path, ["--compat", "scala", *flags], in_dir)
    if path.parent.name in DAMAGED_FRAMING:
        check_past_damage(result, path, stem, bool(flags))
        return
    check_result(result, path, exp_out, exp_err)


@pytest.mark.parametrize("path,mode", CASES, ids=[f"{case_id(p)}-{m}" for p, m in CASES])
def test_default_output_is_newest_kafkas(path, mode, in_dir):
    flags, stem = MODES[mode]
    exp_out, exp_err = expected(path, stem)
    if path.parent.name in DAMAGED_FRAMING:
        check_past_damage(run_dump(path, flags, in_dir), path, stem, bool(flags))
        return
    exp_out = scala_to_java_stdout(exp_out)
    if exp_err is not None and not kafka_died(exp_err):
        exp_err = scala_to_java_stderr(exp_err)
    result = run_dump(path, flags, in_dir)
    # The Java tool prints LEADER_CHANGE records as JSON (checked field by field in test_control.py);
    # the Scala corpus has the generic form there.
    result.stdout_bytes = LEADER_CHANGE_JSON.sub(b" controlType: LEADER_CHANGE(2)", result.stdout_bytes)
    check_result(result, path, exp_out, exp_err)
