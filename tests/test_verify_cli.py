"""The real ``kdump verify`` command: CI sanity on the fixtures, exit codes, JSON and text output, options.

The CI-sanity tests run ``python -m kdump verify`` in a subprocess, as a CI job would: every sound
fixture verifies clean with ``--deep`` (exit 0, no finding), every damaged one fails (exit 1) with the
findings its ``expected.json`` (fixtures/corrupt, computed by make_corrupt.py from where it put the
damage) or Kafka's own answers (the corpus's damaged files) give, at the byte positions given there.
"""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from corpus import CORPUS, FIXTURES, ROOT
from support.cli import run_cli

CORRUPT = FIXTURES / "corrupt"
CASES = sorted(p for p in CORRUPT.iterdir() if (p / "expected.json").exists())
SOUND_CORPUS_DIRS = sorted(
    d for d in (list((CORPUS / "kafka-generated").iterdir()) + list((CORPUS / "broker-written").iterdir())
                + list((CORPUS / "kafka-generated/internal-topics").iterdir()))
    if d.is_dir() and d.name not in ("corrupt", "internal-topics", "fetch-v0-invalid-crc-0.9.0.0",
                                     "fetch-truncated-mid-message"))


def kdump(*args, cwd=ROOT):
    """Run the installed command line as CI does; returns (exit code, stdout, stderr)."""
    env = dict(os.environ, NO_COLOR="1")
    proc = subprocess.run([sys.executable, "-m", "kdump", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


# --- CI sanity ----------------------------------------------------------------------------------------------
# the corpus's internal-topic segments end with records made not to decode (their CONTENTS.txt): offsets
# 39-43 of __cluster_metadata-0 (unknown apiKey 200, frame version 2, version 99, truncated, empty), 64-68 of
# __consumer_offsets-0 (a type-16 key without its value's fields, a cut key, a 1-byte key, value version 99, an
# empty value), 18 of __transaction_state-0 (key version 1); --deep says so and nothing else
INTERNAL_PARTLY_DECODED = {"__cluster_metadata-0": (5, 39, 39), "__consumer_offsets-0": (5, 69, 64),
                           "__transaction_state-0": (1, 19, 18)}


def test_ci_sound_fixtures_verify_clean_with_deep():
    code, out, err = kdump("verify", "--deep", "--format", "json", str(FIXTURES / "generated"),
                           *map(str, SOUND_CORPUS_DIRS))
    doc = json.loads(out)
    internal = {}
    for f in doc["files"]:
        topic = Path(f["path"]).parent.name
        if topic in INTERNAL_PARTLY_DECODED and f["kind"] == "log":
            internal[topic] = [(x["code"], x["severity"], x["message"].split(" with ")[0], x["firstOffset"])
                               for x in f["findings"]]
    assert internal == {topic: [("internal-record-partly-decoded", "warning",
                                 f"{n} of {records} records decode only in part", first)]
                        for topic, (n, records, first) in INTERNAL_PARTLY_DECODED.items()}
    # segments copied without their indexes get index check's findings (the gate never passes what index check
    # fails): a warning for each missing .index (Kafka rebuilds it), and one where the log has aborted transactions
    # and no .txnindex lists them (Kafka's recovery of a segment without its offset index writes it)
    assert sorted((Path(f["path"]).relative_to(ROOT).as_posix(), x["code"]) for f in doc["files"]
                  if Path(f["path"]).parent.name not in internal for x in f["findings"]
                  if x["severity"] != "info" and x["code"] != "index-missing") == [
        (f"fixtures/{d}/v2-transactional/00000000000000000000.txnindex", "txnindex-missing")
        for d in ("corpus/kafka-generated", "generated")]
    assert code == 0, err  # (warnings do not fail verify)
    code, out, _ = kdump("verify", "--deep", "--format", "json", str(FIXTURES / "generated"))
    assert code == 0 and all(x["severity"] == "info" or x["code"] in ("index-missing", "txnindex-missing")
                             for f in json.loads(out)["files"] for x in f["findings"])
    logs = [f for f in doc["files"] if f["kind"] in ("log", "checkpoint")]
    n_expected = len(list((FIXTURES / "generated").rglob("*.log"))) + sum(
        1 for d in SOUND_CORPUS_DIRS for p in d.iterdir() if p.suffix in (".log", ".checkpoint"))
    assert len(logs) == n_expected


@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_ci_corrupt_fixtures_fail_with_the_expected_findings(deep):
    groups = {}
    for case in CASES:
        exp = json.loads((case / "expected.json").read_text())
        if exp["deep"] == deep:
            groups.setdefault(tuple(exp["args"]), []).append((case, exp))
    assert groups
    for args, cases in groups.items():
        code, out, err = kdump("verify", *(["--deep"] if deep else []), *args, "--format", "json",
                               *(str(c) for c, _ in cases))
        doc = json.loads(out)
        # warnings are reported but fail the run only with --fail-on warning (every damaged fixture then fails)
        assert code == (1 if doc["summary"]["errors"] else 0), err
        assert doc["summary"]["errors"] + doc["summary"]["warnings"] >= len(cases)
        strict, _, err = kdump("verify", *(["--deep"] if deep else []), *args, "--fail-on", "warning",
                               *(str(c) for c, _ in cases))
        assert strict == 1, err
        for case, exp in cases:
            files = [f for f in doc["files"] if Path(f["path"]).parent == case]
            got = sorted((Path(f["path"]).name, x["code"], x.get("position"), x.get("firstOffset"),
                          x.get("lastOffset"))
                         for f in files for x in f["findings"] if x["severity"] != "info"
                         and x["code"] != "index-missing")  # (copied without indexes: index check's warning)
            want = sorted((e["file"], e["code"], e["position"], e["first_offset"], e["last_offset"])
                          for e in exp["findings"])
            assert got == want, case.name


def test_ci_corpus_negative_cases_fail_where_kafka_says():
    paths = [CORPUS / "kafka-generated/corrupt", CORPUS / "broker-written/fetch-v0-invalid-crc-0.9.0.0",
             CORPUS / "broker-written/fetch-truncated-mid-message"]
    code, out, err = kdump("verify", "--deep", "--format", "json", *map(str, paths))
    assert code == 1, err
    doc = json.loads(out)
    logs = [f for f in doc["files"] if f["kind"] == "log"]  # (then their companion checks: no index was copied)
    assert len(logs) == 7 and all(f["status"] == "findings" for f in logs)
    for f in logs:
        text = Path(f["path"] + ".check.txt").read_text()
        kafka = [int(p) for p in re.findall(r"^(?:INVALID|FATAL) pos=(\d+)", text, re.M)]
        # Kafka's trailing partial batch (its checker's exit 3; DumpLogSegments' "Found N invalid bytes", exit 0)
        # is a warning (issue 20: Kafka's exit 0 is kept for a crash-cut tail); everything else an error
        trailing = [int(p) for p in re.findall(r"^TRAILING pos=(\d+)", text, re.M)]
        positions = {x["position"] for x in f["findings"] if x["severity"] == "error"}
        warned = {x["position"] for x in f["findings"] if x["severity"] == "warning"}
        assert set(kafka) <= positions and set(trailing) <= positions | warned, f["path"]
        assert min(positions | warned) == min(kafka + trailing), f["path"]  # nothing reported before Kafka saw it


# --- exit codes -----------------------------------------------------------------------------------------------
def run(*args):
    return run_cli("verify", *args)


def test_exit_codes(tmp_path):
    good = str(CORPUS / "kafka-generated/v2-none/00000000000000000000.log")
    bad = str(CORPUS / "kafka-generated/corrupt/v2-crc-mismatch/00000000000000000000.log")
    assert run(good).exit_code == 0
    assert run(good, bad).exit_code == 1
    assert run(good, bad, str(tmp_path / "missing.log")).exit_code == 2
    assert run().exit_code == 2  # no paths: usage
    assert run("--max-batch-bytes", "10", good).exit_code == 2
    assert run("--format", "xml", good).exit_code == 2


def test_help_documents_the_exit_codes():
    result = run("--help")
    assert result.exit_code == 0
    for line in ("0  no error", "1  findings", "2  usage error", "--deep", "--max-batch-bytes",
                 "--format", "--fail-on"):
        assert line in result.output


def test_info_findings_do_not_fail_a_run():
    result = run("--deep", str(CORPUS / "kafka-generated/v2-compacted"))
    assert result.exit_code == 0
    assert "offset-gap" not in result.output
    verbose = run("--deep", "-v", str(CORPUS / "kafka-generated/v2-compacted"))
    assert verbose.exit_code == 0 and "info offset-gap" in verbose.output


# --- output ---------------------------------------------------------------------------------------------------
def test_json_document_shape():
    path = CORPUS / "kafka-generated/corrupt/v2-bad-length-field/00000000000000000000.log"
    result = run("--format", "json", str(path), str(CORPUS / "kafka-generated/v2-none"))
    doc = json.loads(result.output)
    assert doc["status"] == "findings"
    # (a partition's companion checks follow its segments, as index check runs them: here no .index was copied)
    bad, good, missing = doc["files"]
    assert (Path(missing["path"]).name, missing["codes"]) == ("00000000000000000000.index", {"index-missing": 1})
    assert set(bad) == {"path", "kind", "status", "label", "batches", "records", "bytes", "errors", "warnings",
                        "infos", "codes", "findings"}
    assert (bad["label"], good["label"], doc["label"]) == ("FAIL", "OK", "FAIL")  # as the text says them
    listed = [x for x in bad["findings"]]  # nothing capped here: the counts are those of the listed findings
    assert bad["errors"] == sum(x["severity"] == "error" for x in listed) >= 1
    assert bad["codes"] == {c: sum(x["code"] == c for x in listed) for c in {x["code"] for x in listed}}
    assert doc["summary"]["files"] == 3 and doc["summary"]["errors"] == bad["errors"]
    assert doc["summary"]["bytes"] == bad["bytes"] + good["bytes"]
    assert doc["summary"]["records"] == bad["records"] + good["records"]
    assert (bad["status"], bad["kind"], bad["bytes"]) == ("findings", "log", path.stat().st_size)
    assert good["status"] == "ok" and good["findings"] == []
    damaged = next(x for x in bad["findings"] if x["code"] == "damaged-range")
    assert damaged == {"code": "damaged-range", "severity": "error", "message": damaged["message"],
                       "position": 219, "firstOffset": 1, "lastOffset": 2, "bytes": 290}


def test_json_of_an_unreadable_path(tmp_path):
    result = run("--format", "json", str(tmp_path / "nope"))
    doc = json.loads(result.stdout)
    assert result.exit_code == 2 and doc["status"] == "error"
    assert doc["summary"]["files"] == 0  # listed with its error, never counted as a file checked
    error = doc["files"][0]["error"]  # kdump's one error object (docs/json.md)
    assert doc["files"][0]["status"] == "unreadable" and "no such file" in error["message"]
    assert (error["type"], error["path"], error["code"]) == ("error", str(tmp_path / "nope"), "cannot-read")


@pytest.mark.parametrize("command", [("verify",), ("index", "check")])
def test_a_missing_path_is_a_usage_error_never_a_file_checked(tmp_path, command):
    """docs/cli.md: a path missing is exit 2 and said as every command says it; the files checked are the ones
    read (one here), in text and in JSON."""
    good = CORPUS / "kafka-generated/v2-none/00000000000000000000.log"
    missing = tmp_path / "nope"
    alone = run_cli(*command, missing)
    assert alone.exit_code == 2
    assert alone.stderr.strip() == f"kdump: {missing}: cannot read: no such file or directory"
    assert alone.stdout == ""
    both = run_cli(*command, missing, good)
    assert both.exit_code == 2 and f"kdump: {missing}: cannot read" in both.stderr
    assert str(missing) not in both.stdout
    assert re.search(r"^1 files? checked", both.stdout, re.M), both.stdout
    doc = json.loads(run_cli(*command, "--format", "json", missing, good).stdout)
    assert (doc["summary"]["files"], doc["summary"]["unreadable"], doc["summary"]["exitCode"]) == (1, 0, 2)


def test_text_summary():
    bad = CORPUS / "kafka-generated/corrupt/v2-crc-mismatch/00000000000000000000.log"
    good = CORPUS / "kafka-generated/v2-none/00000000000000000000.log"
    result = run(str(bad), str(good))
    lines = result.output.splitlines()
    assert lines[0].startswith(f"FAIL {bad} (log): 8 batches, ")
    assert lines[1].startswith("  error crc-mismatch at byte 509 offsets 3-12: stored CRC-32C 164499185 does not match")
    assert lines[2] == f"OK {good} (log): 8 batches, 6117 records, 820849 bytes"
    assert lines[3] == "2 files checked, 1 with findings: 1 error, 0 warnings"
    assert "\x1b[" not in result.output


def test_many_sound_files_are_summarised(tmp_path):
    result = run(str(FIXTURES / "generated"))
    assert result.exit_code == 0
    # the sound segments summarised; each copied without its .index gets index check's warning (index-missing)
    logs = list((FIXTURES / "generated").rglob("*.log"))
    unindexed = [p for p in logs if not p.with_suffix(".index").exists()]
    *warned, last = result.output.splitlines()
    assert last == (f"{len(logs) + len(unindexed)} files checked, {len(unindexed)} with findings: 0 errors, "
                    f"{len(unindexed)} warnings")
    assert [line for line in warned if line.startswith(("WARN", "FAIL"))] == [
        f"WARN {p.with_suffix('.index')} (index): 0 bytes" for p in sorted(unindexed)]


def test_colour_only_on_request_and_never_with_no_color(monkeypatch):
    bad = str(CORPUS / "kafka-generated/corrupt/v2-crc-mismatch/00000000000000000000.log")
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich: behave as on a terminal
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" in run(bad).output
    assert "\x1b[" not in run("--no-color", bad).output


def test_progress_bar_on_a_terminal_for_large_inputs(monkeypatch):
    import kdump.commands.progress as cmd
    import kdump.verify as lib
    calls = []
    real = lib.verify_paths

    def spy(paths, options=None, *, progress=None, **kwargs):
        calls.append(progress)
        return real(paths, options, progress=progress, **kwargs)
    monkeypatch.setattr(lib, "verify_paths", spy)
    monkeypatch.setattr(cmd, "SHOW_AFTER_SECONDS", 0)
    monkeypatch.setattr(cmd, "stderr_is_terminal", lambda: True)
    result = run(str(CORPUS / "kafka-generated/v2-none"))
    assert result.exit_code == 0
    assert calls and calls[0] is not None  # the bar's callback was handed to the walk
    monkeypatch.setattr(cmd, "SHOW_AFTER_SECONDS", 1e9)
    run(str(CORPUS / "kafka-generated/v2-none"))
    assert calls[1] is None


def test_corrupt_fixtures_are_what_make_corrupt_writes(tmp_path):
    """fixtures/corrupt is generated (deterministically); a stale or hand-edited copy would make the
    expectations above meaningless."""
    subprocess.run([sys.executable, str(CORRUPT / "make_corrupt.py"), str(tmp_path)], check=True,
                   capture_output=True, timeout=300)
    made = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    kept = sorted(p.relative_to(CORRUPT) for p in CORRUPT.rglob("*") if p.is_file() and p.name != "make_corrupt.py"
                  and "__pycache__" not in p.parts)
    assert made == kept
    for rel in made:
        assert (tmp_path / rel).read_bytes() == (CORRUPT / rel).read_bytes(), rel


# --- counts, grouping, --fail-on ------------------------------------------------------------------------------
CODE = "leader-epoch-decreasing"


@pytest.fixture
def many_warnings(tmp_path):
    """A segment of 2,001 batches whose partition leader epoch goes down at each: 2,000 leader-epoch-decreasing
    warnings (and nothing else), twenty times the cap of listed findings."""
    from support.segments import data_batch, write_log
    write_log(tmp_path / "t-0", 0, [data_batch(i, 1, ple=2001 - i) for i in range(2001)])
    return tmp_path / "t-0" / "00000000000000000000.log"


def test_capped_findings_are_all_counted(many_warnings):
    doc = json.loads(run("--format", "json", str(many_warnings)).output)
    (f,) = doc["files"]
    listed = [x for x in f["findings"] if x["code"] == CODE]
    assert len(listed) == 100 and all(x["severity"] == "warning" for x in listed)
    assert [x["message"] for x in f["findings"] if x["code"] == "findings-capped"] == [
        f"1900 more {CODE} findings not listed (2000 in all, the first of them at byte "
        f"{_batch_positions(many_warnings)[101]})"]
    assert (f["warnings"], f["errors"], f["codes"]) == (2000, 0, {CODE: 2000})
    assert (doc["summary"]["warnings"], doc["summary"]["errors"], doc["summary"]["files"]) == (2000, 0, 1)
    text = run(str(many_warnings)).output.splitlines()
    assert text[-1] == "1 file checked, 1 with findings: 0 errors, 2000 warnings"


def _batch_positions(log):
    from kdump.read.segment import SegmentReader
    with SegmentReader(str(log)) as reader:
        return [b.position for b in reader]


def test_identical_findings_are_one_text_line_with_a_count(many_warnings):
    lines = run(str(many_warnings)).output.splitlines()
    (line,) = [x for x in lines if CODE in x]
    positions = _batch_positions(many_warnings)
    # the range is of all 2000, the 1900 unlisted included (issue 20: it was of the first 100 only)
    assert line.startswith(f"  warning {CODE} x2000 at bytes {positions[1]}-{positions[2000]} offsets 1-2000: ")
    assert line.endswith("(the first of 2000)")
    assert len(lines) == 3  # the file, its one finding line, the totals (no findings-capped line)


def test_warnings_fail_the_run_only_with_fail_on_warning(many_warnings):
    assert run(str(many_warnings)).exit_code == 0
    assert run("--fail-on", "error", str(many_warnings)).exit_code == 0
    strict = run("--fail-on", "warning", "--format", "json", str(many_warnings))
    assert strict.exit_code == 1 and json.loads(strict.output)["status"] == "findings"
    assert json.loads(run("--format", "json", str(many_warnings)).output)["status"] == "ok"
    check = run_cli("index", "check", "--fail-on", "warning", many_warnings.parent)
    assert check.exit_code == 1 and "warning index-missing" in check.output
    assert run_cli("index", "check", many_warnings.parent).exit_code == 0
    assert run("--fail-on", "info", str(many_warnings)).exit_code == 2  # not a choice
