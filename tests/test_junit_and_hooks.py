"""CI habits: ``kdump verify --format junit`` (JUnit XML, one test case per file, its findings as a failure),
checked against the damage fixtures' own expectations (fixtures/corrupt/*/expected.json, written by the script that
put the damage there); and the pre-commit hook definition (.pre-commit-hooks.yaml), whose file pattern takes
Kafka's segment and companion names and whose entry is the verify command."""
import json
import os
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from support.cli import run_cli

pytestmark = pytest.mark.usefixtures("backend")
ROOT = Path(__file__).resolve().parent.parent
CORRUPT = ROOT / "fixtures/corrupt"
SHALLOW = sorted(d for d in CORRUPT.iterdir() if d.is_dir() and not json.loads(
    (d / "expected.json").read_text())["deep"] and not json.loads((d / "expected.json").read_text())["args"])


def _junit(*args):
    result = run_cli("verify", "--format", "junit", *args)
    return result, ET.fromstring(result.stdout)


def test_one_test_case_per_file_with_findings_as_failures():
    sound = ROOT / "fixtures/generated/v2-none-createtime"
    result, root = _junit(*SHALLOW, sound)
    as_json = run_cli("verify", "--format", "json", *SHALLOW, sound)
    assert result.exit_code == as_json.exit_code == 1
    files = json.loads(as_json.stdout)["files"]
    (suite,) = root.findall("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [f["path"] for f in files]
    assert suite.get("tests") == str(len(cases)) and root.get("failures") == suite.get("failures")
    by_name = {c.get("name"): c for c in cases}
    for f in files:  # a failure exactly where the file fails the run (label FAIL), as the exit code says
        assert (by_name[f["path"]].find("failure") is not None) == (f["label"] == "FAIL"), f["path"]
    for case_dir in SHALLOW:
        expected = json.loads((case_dir / "expected.json").read_text())["findings"]
        for finding in expected:  # every finding the damage must give, in the failure or (a warning) the output
            case = by_name[str(case_dir / finding["file"])]
            shown = case.find("failure") if case.find("failure") is not None else case.find("system-out")
            assert f"{finding['code']} at byte {finding['position']}" in shown.text, case_dir.name
    clean = [c for c in cases if "v2-none-createtime" in c.get("name")]
    assert clean and all(c.find("failure") is None and c.find("error") is None for c in clean)
    assert int(suite.get("failures")) == sum(c.find("failure") is not None for c in cases) > len(SHALLOW) // 2


def test_junit_of_a_sound_run_and_an_unreadable_file(tmp_path):
    result, root = _junit(ROOT / "fixtures/generated/v2-gzip-createtime")
    assert result.exit_code == 0 and root.get("failures") == "0" and root.get("errors") == "0"
    os.mkfifo(tmp_path / "fifo.log")  # refused, never opened
    result, root = _junit(tmp_path / "fifo.log")
    assert result.exit_code == 2 and root.get("errors") == "1"


def test_the_pre_commit_hook():
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "kdump-verify" and hook["language"] == "python"
    files = re.compile(hook["files"])
    for name in ("00000000000000000000.log", "data/orders-0/00000000000000001234.index", "7.timeindex",
                 "00000000000000000010.txnindex", "00000000000000000100.snapshot",
                 "__cluster_metadata-0/00000000000000012345-0000000007.checkpoint"):
        assert files.search(name), name
    for name in ("README.md", "notes.log.txt", "copied.log", "leader-epoch-checkpoint", "x.index.bak"):
        assert not files.search(name), name
    # pre-commit runs the entry with the staged files that match as arguments
    entry = shlex.split(hook["entry"])
    assert entry[:2] == ["kdump", "verify"]
    staged = [str(CORRUPT / "v2-flip-in-first-batch/00000000000000000000.log")]
    assert run_cli(*entry[1:], *staged).exit_code == 1
    assert run_cli(*entry[1:], str(ROOT / "fixtures/generated/v2-headers/00000000000000000000.log")).exit_code == 0
