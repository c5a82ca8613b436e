"""The cases of issue 20's table about exit codes and labels, each as "What to build" says (the whole matrix is
tests/test_conformance.py). References are Kafka's: its walk of a file (spec §3.9: fewer than 18 bytes left, or
an entry declaring more bytes than remain, are "Found N invalid bytes at the end", exit 0; a size field below 14
kills DumpLogSegments) and its own dumps in the corpus."""
from __future__ import annotations

import builtins
import errno
import json
import os
import struct

import pytest

from corpus import CORPUS, expected, scala_to_java_stdout
from support.cli import run_cli
from support.segments import data_batch, write_log
from kdump.report.outcome import FAIL, OK, UNREADABLE, WARN, Outcome

pytestmark = pytest.mark.usefixtures("backend")

V2_NONE = CORPUS / "kafka-generated/v2-none/00000000000000000000.log"
NAME = "00000000000000000000.log"
KAFKA_TRAILING_MAX = 17  # Kafka's FileLogInputStream: position >= end - HEADER_SIZE_UP_TO_MAGIC (17) stops the walk


def labels(text: str) -> set[str]:
    return {line.split(" ", 1)[0] for line in text.splitlines() if line.split(" ", 1)[0] in (OK, WARN, FAIL)}


@pytest.mark.parametrize("n", [1, 9, 16, 17, 18, 4096])
def test_a_zero_tail_is_kafkas_trailing_bytes_exactly_where_kafka_says(tmp_path, n):
    path = tmp_path / NAME
    path.write_bytes(V2_NONE.read_bytes() + bytes(n))
    dumped, verified = run_cli("dump", path), run_cli("verify", path)
    if n <= KAFKA_TRAILING_MAX:  # Kafka prints the line and exits 0; verify agrees, with a warning
        assert dumped.stdout.endswith(f"Found {n} invalid bytes at the end of {NAME}\n")
        assert (dumped.exit_code, dumped.stderr) == (0, "")
        assert verified.exit_code == 0 and labels(verified.stdout) == {WARN} and "truncated-tail" in verified.stdout
    else:  # a size field of 0: Kafka's tool dies (CorruptRecordException); both fail it
        assert "invalid bytes at the end" not in dumped.stdout
        assert dumped.exit_code == 1 and "zero bytes from here to the end" in dumped.stderr
        assert verified.exit_code == 1 and labels(verified.stdout) == {FAIL} and "zero-padding" in verified.stdout


def test_a_true_truncated_tail_dumps_as_kafka_and_verify_agrees(tmp_path):
    path = CORPUS / "kafka-generated/corrupt/v2-truncated-tail/00000000000000000000.log"
    kafka_out, _ = expected(path, "dumplog-shallow")
    assert b"invalid bytes at the end of" in kafka_out  # Kafka's own contract, with exit 0
    dumped = run_cli("dump", path)
    assert dumped.exit_code == 0 and dumped.stdout_bytes.endswith(kafka_out.splitlines(keepends=True)[-1])
    verified = run_cli("verify", "--deep", "--format", "json", path)
    doc = json.loads(verified.stdout)
    assert verified.exit_code == 0 and doc["label"] == WARN and doc["status"] == "ok"
    assert [(f["label"], f["codes"]) for f in doc["files"]] == [(WARN, {"truncated-tail": 1})]
    assert run_cli("verify", "--fail-on", "warning", path).exit_code == 1


def test_dump_deep_iteration_fails_a_crc_mismatch_and_keeps_kafkas_text(in_dir):
    path = CORPUS / "kafka-generated/corrupt/v2-crc-mismatch/00000000000000000000.log"
    kafka_out, _ = expected(path, "dumplog")
    in_dir(path.parent)  # Kafka's dumps were made from the file's directory
    result = run_cli("dump", "--deep-iteration", path.name)
    assert result.stdout_bytes == scala_to_java_stdout(kafka_out)
    assert result.exit_code == 1
    assert "stored CRC-32C" in result.stderr and "isvalid: false" in result.stderr


def test_an_index_entry_at_the_next_segments_base_is_an_error(tmp_path):
    part = tmp_path / "orders-0"
    write_log(part, 0, [data_batch(0, 3), data_batch(3, 3)])
    write_log(part, 6, [data_batch(6, 2)])
    first = data_batch(0, 3)
    # one entry: offset 6 (the next segment's base) at the second batch, which ends at offset 5
    (part / "00000000000000000000.index").write_bytes(struct.pack(">ii", 6, len(first)))
    result = run_cli("index", "check", "--format", "json", part)
    doc = json.loads(result.stdout)
    index = next(f for f in doc["files"] if f["path"].endswith("00000000000000000000.index"))
    assert (index["label"], index["codes"]) == (FAIL, {"index-offset-past-end": 1})
    assert "followers before Kafka 4.0" not in json.dumps(index)
    assert result.exit_code == 1


def test_index_check_of_a_producer_snapshot_checks_it(tmp_path):
    snapshot = CORPUS / "broker-written/producer-snapshot-3-producers/00000000000000094751.snapshot"
    copy = tmp_path / snapshot.name
    copy.write_bytes(snapshot.read_bytes())
    result = run_cli("index", "check", copy)
    assert result.exit_code == 0
    assert result.stdout.startswith(f"OK {copy} (snapshot)") and "1 file checked" in result.stdout


def test_index_rebuild_says_a_text_file_is_no_segment_and_writes_nothing(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / NAME).write_text("operator notes: this is no segment\n" * 20)
    out = tmp_path / "out"
    result = run_cli("index", "rebuild", "-o", out, part)
    assert result.exit_code == 1 and "not a Kafka log segment" in result.stderr
    assert not out.exists() or os.listdir(out) == []


TRUNCATED_WHILE_READ = {  # command -> its words before the path (a new output directory is "out")
    "dump": ("dump",),
    "verify": ("verify",),
    "convert": ("convert", "--to-magic", "1", "-o", "{out}/"),
    "salvage": ("salvage", "-o", "{out}/"),
    "stats": ("stats",),
}


@pytest.mark.parametrize("command", list(TRUNCATED_WHILE_READ))
def test_a_file_truncated_while_read_fails_every_command(tmp_path, monkeypatch, command):
    """The file loses its second half after kdump opened it (what a broker's truncation or a copy in progress
    does): what was read is not the file, so the run exits 1 (convert writes nothing; salvage writes what it
    could read, and lists the rest)."""
    from kdump.read import segment
    path = tmp_path / NAME
    path.write_bytes(V2_NONE.read_bytes())
    opened = segment.SegmentReader.__init__

    def then_truncated(self, *args, **kwargs):
        opened(self, *args, **kwargs)
        if os.path.getsize(path) > 300:
            os.truncate(path, 300)  # inside the second batch, after the reader took the file's size

    monkeypatch.setattr(segment.SegmentReader, "__init__", then_truncated)
    out = tmp_path / "out"
    result = run_cli(*[w.format(out=out) for w in TRUNCATED_WHILE_READ[command]], path)
    assert result.exit_code == 1, result.output
    if command == "convert":
        assert not (out / NAME).exists()


def test_index_check_of_a_log_directory_checks_past_an_unreadable_segment(tmp_path, monkeypatch):
    """One partition's segment cannot be opened (EACCES, made so for root too): it is reported, every other
    partition is still checked, and the run exits 1."""
    logs = tmp_path / "logs"
    for n in (0, 1):
        write_log(logs / f"orders-{n}", 0, [data_batch(0, 3)])
        (logs / f"orders-{n}" / "00000000000000000000.index").write_bytes(b"")
    locked = str(logs / "orders-1" / NAME)
    real_open, real_os_open = builtins.open, os.open

    def denied(path, *args, **kwargs):
        if os.fspath(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", locked)
        return (real_os_open if isinstance(args[0] if args else None, int) else real_open)(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", lambda p, *a, **k: denied(p, *a, **k) if os.fspath(p) == locked
                        else real_os_open(p, *a, **k))
    monkeypatch.setattr(builtins, "open", lambda p, *a, **k: denied(p, *a, **k) if not isinstance(p, int)
                        and os.fspath(p) == locked else real_open(p, *a, **k))
    result = run_cli("index", "check", "-j", "1", "--format", "json", logs)
    doc = json.loads(result.stdout)
    by_partition = {os.path.basename(os.path.dirname(f["path"])): f for f in doc["files"]}
    assert set(by_partition) == {"orders-0", "orders-1"}
    assert by_partition["orders-0"]["label"] == OK
    assert by_partition["orders-1"]["label"] in (FAIL, UNREADABLE)
    assert result.exit_code == 1


# --- the policy's own record of a run ---------------------------------------------------------------------
def test_a_path_seen_many_times_counts_once_with_all_its_problems():
    o = Outcome()
    o.saw("a")
    o.saw("a", errors=1)
    o.saw("b", warnings=2)
    assert o.exit_code() == 1 and (o.read, o.damaged, o.warned) == (2, 1, 1)
    assert o.exit_code() == 1 and o.read == 2  # settled once
    assert o.run_label() == FAIL


def test_a_refused_report_exits_2_and_an_unreadable_one_1_among_readable():
    from kdump.report.findings import FileReport, exit_code
    sound = FileReport("a.log", "log")
    assert exit_code([sound, FileReport("b.log", "log", io_error="cannot read: Permission denied")]) == 1
    assert exit_code([sound, FileReport("c", "unknown", io_error="no such file", refused=True)]) == 2
    assert exit_code([FileReport("b.log", "log", io_error="cannot read: Permission denied")]) == 2
    assert exit_code([]) == 2  # nothing read is never a success
