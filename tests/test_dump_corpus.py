"""`kdump dump` against Kafka's own DumpLogSegments output, for every log file of the corpus.

Two comparisons per file and mode: with ``--compat scala`` the output must be byte-identical to what
Kafka's Scala tool printed (the corpus), and by default it must equal the same text in the newest
(Java) tool's form. Where Kafka's tool died, stdout must still match up to that point, and kdump must
say what stopped it (file, byte position) and exit 1 instead of dumping a stack trace.
"""
import re

import pytest
from click.testing import CliRunner

from corpus import (LOG_FILES, MODES, abs_dir_placeholder, case_id, expected, kafka_died,
                    scala_to_java_stderr, scala_to_java_stdout)
from kdump.cli import cli

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

CASES = [(p, m) for p in LOG_FILES for m in MODES]
LEADER_CHANGE_JSON = re.compile(rb" LeaderChange: \{[^\n]*\}")


def run_dump(path, flags, in_dir):
    in_dir(path.parent)
    return CliRunner().invoke(cli, ["dump", *flags, path.name], catch_exceptions=False)


def check_result(result, path, exp_out, exp_err):
    assert result.stdout_bytes.decode("utf-8", "replace").splitlines() == \
        exp_out.decode("utf-8", "replace").splitlines()  # readable diff first
    assert result.stdout_bytes == exp_out
    err = abs_dir_placeholder(result.stderr_bytes, path.parent)
    if kafka_died(exp_err):
        assert result.exit_code == 1
        lines = err.decode().strip().splitlines()
        assert lines, "kdump must explain what stopped the dump"
        assert all(line.startswith(f"kdump: {path.name}: at byte ") for line in lines), lines
    else:
        assert err == (exp_err or b"")
        assert result.exit_code == 0


@pytest.mark.parametrize("path,mode", CASES, ids=[f"{case_id(p)}-{m}" for p, m in CASES])
def test_scala_compat_output_is_kafkas(path, mode, in_dir):
    flags, stem = MODES[mode]
    exp_out, exp_err = expected(path, stem)
    result = run_dump(path, ["--compat", "scala", *flags], in_dir)
    check_result(result, path, exp_out, exp_err)


@pytest.mark.parametrize("path,mode", CASES, ids=[f"{case_id(p)}-{m}" for p, m in CASES])
def test_default_output_is_newest_kafkas(path, mode, in_dir):
    flags, stem = MODES[mode]
    exp_out, exp_err = expected(path, stem)
    exp_out = scala_to_java_stdout(exp_out)
    if exp_err is not None and not kafka_died(exp_err):
        exp_err = scala_to_java_stderr(exp_err)
    result = run_dump(path, flags, in_dir)
    # The Java tool prints LEADER_CHANGE records as JSON (checked field by field in test_control.py);
    # the Scala corpus has the generic form there.
    result.stdout_bytes = LEADER_CHANGE_JSON.sub(b" controlType: LEADER_CHANGE(2)", result.stdout_bytes)
    check_result(result, path, exp_out, exp_err)
