"""One judgement of the bytes (issue 29): every command reads a damaged segment's bytes the same way, through the
read layer's one policy (:attr:`kdump.read.damage.Damage.fails`), so that ``dump``, ``verify``, ``stats``, ``txn``
and ``salvage`` exit alike on the same file and none of them loses data without failing.

The inputs are copies of the corpus's Kafka-written segments with the damage a crash or a disk leaves: a torn write
(a batch cut part-way, then the batch written again whole with the ones after it, as a producer's retry after a
broker crash mid-write leaves it), a run of zeros, and Kafka's own crash-cut tail. What each must give is Kafka's
judgement: DumpLogSegments reports a tail of 17 bytes or fewer as ``Found N invalid bytes at the end`` and exits 0
(spec §2.4); anything else it cannot read in the middle of a file is damage."""
from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

import pytest
from corpus import CORPUS
from support.cli import run_cli

from kdump.read.segment import SegmentReader

pytestmark = pytest.mark.usefixtures("backend")

GEN = CORPUS / "kafka-generated"
NAME = "00000000000000000000.log"


def _segment(case: str) -> tuple[bytes, list[tuple[int, int]]]:
    path = GEN / case / NAME
    with SegmentReader(path) as reader:
        batches = [(b.position, b.size) for b in reader.batches()]
    return path.read_bytes(), batches


def _torn(case: str, batch: int, cut: int | None) -> bytes:
    """The batch ``batch`` of ``case`` cut after ``cut`` bytes (None: half way), then it and every batch after it
    whole."""
    data, batches = _segment(case)
    position, size = batches[batch]
    return data[:position + (size // 2 if cut is None else cut)] + data[position:]


def _zeros_before(case: str, batch: int, n: int) -> bytes:
    data, batches = _segment(case)
    position = batches[batch][0]
    return data[:position] + bytes(n) + data[position:]


def _size_field(case: str, batch: int, value: int) -> bytes:
    """The size field of the batch ``batch`` of ``case`` set to ``value`` (a damaged size field, intact batches
    after it)."""
    data, batches = _segment(case)
    position = batches[batch][0]
    return data[:position + 8] + value.to_bytes(4, "big", signed=True) + data[position + 12:]


def _exits(tmp_path, data: bytes) -> dict[str, int]:
    part = tmp_path / "t-0"
    part.mkdir()
    log = part / NAME
    log.write_bytes(data)
    codes = {name: run_cli(*args, log).exit_code for name, args in
             (("dump", ("dump",)), ("verify", ("verify", "--deep")), ("stats", ("stats",)), ("txn", ("txn",)))}
    codes["salvage"] = run_cli("salvage", log, "-o", tmp_path / "out" / NAME).exit_code
    return codes


CASES = {
    # a magic 0 message cut after 1 or 5 bytes: they are the high bytes of its offset field, all zero
    "torn-v0-after-1-zero-byte": (lambda: _torn("v0-none", 1, 1), 1),
    "torn-v0-after-5-zero-bytes": (lambda: _torn("v0-none", 3, 5), 1),
    "torn-v2-half-way": (lambda: _torn("v2-none", 3, None), 1),
    "torn-v2-after-17-bytes": (lambda: _torn("v2-none", 2, 17), 1),
    # 18 zero bytes at the end: Kafka's tool dies on a size field of 0 (not its "invalid bytes at the end")
    "zero-tail-of-18": (lambda: _segment("v2-none")[0] + bytes(18), 1),
    "zeros-between-batches": (lambda: _zeros_before("v1-gzip-createtime", 2, 40), 1),
    # a size field that points past the end with intact batches after it: no tail (the convert case)
    "damaged-size-field-mid-file": (lambda: _size_field("v2-none", 3, 2**31 - 1), 1),
    # Kafka's crash-cut tail: 17 bytes or fewer, or a last entry declaring more than remain
    "kafka-tail-of-17-zeros": (lambda: _segment("v2-none")[0] + bytes(17), 0),
    "kafka-tail-cut-last-batch": (lambda: _segment("v2-none")[0][:-30], 0),
}


@pytest.mark.parametrize("case", CASES)
def test_every_command_exits_alike_on_the_same_bytes(case, tmp_path):
    make, expected = CASES[case]
    assert _exits(tmp_path, make()) == dict.fromkeys(("dump", "verify", "stats", "txn", "salvage"), expected)


TAILS = ("kafka-tail-cut-last-batch", "zero-tail-of-18", "damaged-size-field-mid-file")


@pytest.mark.parametrize("case", TAILS)
def test_dump_verify_and_salvage_judge_a_tail_by_the_one_policy(case, tmp_path, monkeypatch):
    """Which tail fails a run is said once, by the read layer (``Damage.fails``): dump, verify and salvage exit
    alike on a crash-cut tail, a zero tail of 18 bytes and a damaged size field, and follow that one policy where
    it changes (here: no tail is Kafka's any more, so every one fails), rather than deciding from the kind of the
    walk's stop each for itself."""
    from kdump.read.damage import Damage
    make, _ = CASES[case]
    data = make()
    monkeypatch.setattr(Damage, "kafka_tail", property(lambda self: False))
    codes = {k: v for k, v in _exits(tmp_path, data).items() if k in ("dump", "verify", "salvage")}
    assert codes == dict.fromkeys(("dump", "verify", "salvage"), 1)


def test_verify_of_a_directory_of_bare_segments_judges_as_index_check(tmp_path):
    """A partition copied as its bare ``.log`` (no indexes) whose log has aborted transactions: Kafka's LogLoader
    recovers a segment whose offset index is missing (LogSegment.sanityCheck's NoSuchFileException), and recovery
    writes the ``.txnindex`` too, so the missing transaction index is a warning, as the missing ``.index`` is; beside
    an offset index it stays missing (consumers reading committed data would see the aborted records), and both
    ``index check --deep`` and the gate fail it."""
    from kdump.index.rebuild import rebuild_indexes
    part = tmp_path / "t-0"
    part.mkdir()
    (part / NAME).write_bytes((GEN / "v2-transactional" / NAME).read_bytes())
    for target in (part, tmp_path):
        index = run_cli("index", "check", "--deep", "--format", "json", target)
        verify = run_cli("verify", "--deep", "--format", "json", target)
        assert index.exit_code == verify.exit_code == 0, target
        assert {"txnindex-missing", "index-missing"} <= _codes(index) <= _codes(verify), target
        shallow = run_cli("verify", "--format", "json", target)
        assert shallow.exit_code == 0 and "index-missing" in _codes(shallow)
    rebuild_indexes(part / NAME)
    (part / NAME).with_suffix(".txnindex").unlink()
    for target in (part, tmp_path):
        index = run_cli("index", "check", "--deep", "--format", "json", target)
        verify = run_cli("verify", "--deep", "--format", "json", target)
        assert index.exit_code == verify.exit_code == 1, target
        assert "txnindex-missing" in _codes(index) and _codes(index) <= _codes(verify), target


def _zeroed_in_a_batch(d) -> tuple[Path, int]:
    """A partition of one 200-record segment (3 batches, indexes every 4096 bytes as a broker writes them, leader
    epoch 3 from offset 40) whose bytes 4096-8191 were then zeroed: the run of zeros begins inside the second batch
    and covers the start of the third. Returns the log and the end of the first batch (the one intact batch)."""
    from support.segments import T0, data_batch, write_log

    from kdump.index.rebuild import rebuild_indexes
    batches = [data_batch(0, 40, ts=T0), data_batch(40, 100, ts=T0 + 100, value=b"v" * 40, ple=3),
               data_batch(140, 60, ts=T0 + 300, value=b"v" * 40, ple=3)]
    log = Path(write_log(d, 0, batches))
    rebuild_indexes(log)
    (d / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n3 40\n")
    data = bytearray(log.read_bytes())
    assert len(batches[0]) < 4096 < len(batches[0]) + len(batches[1]) < 8192 < len(data)
    data[4096:8192] = bytes(4096)
    log.write_bytes(bytes(data))
    return log, len(batches[0])


def _ranges(items, start="position", size="bytes") -> list[tuple[int, int]]:
    return sorted((x[start], x[start] + x[size]) for x in items if x.get(size))


def test_a_run_of_zeros_inside_a_batch_is_one_classification_of_the_bytes(tmp_path):
    """Bytes 4096-8191 of a segment zeroed (a lost page): the file's bytes are one classification -- the intact
    first batch, then damaged parts that never overlap and add up to the rest of the file, the zeros a part of
    their own called zeros though they begin inside a batch, no claim that the damaged batch's (intact) size field
    is damaged -- and the intact index, time index and leader epoch checkpoint are not blamed for it."""
    log, intact = _zeroed_in_a_batch(tmp_path / "t-0")
    size = log.stat().st_size
    result = run_cli("verify", "--deep", "--format", "json", log.parent)
    assert result.exit_code == 1
    files = {Path(f["path"]).name: f for f in json.loads(result.stdout)["files"]}
    findings = files[log.name]["findings"]
    ranges = _ranges(findings)
    assert ranges[0][0] == intact and ranges[-1][1] == size
    assert all(a[1] == b[0] for a, b in pairwise(ranges))  # no overlap, no gap
    assert sum(f.get("bytes") or 0 for f in findings) == size - intact
    (zeros,) = [f for f in findings if (f.get("position"), f.get("bytes")) == (4096, 4096)]
    assert "are all zero" in zeros["message"]
    assert "probably damaged" not in result.stdout
    for name, report in files.items():
        if name != log.name:
            assert [f["code"] for f in report["findings"] if f["severity"] != "info"] == [], name
    salvage = run_cli("salvage", "--format", "json", log, "-o", tmp_path / "out" / NAME)
    assert salvage.exit_code == 1
    dropped = _ranges(json.loads(salvage.stdout)["files"][0]["dropped"])
    assert all(a[1] <= b[0] for a, b in pairwise(dropped))
    assert sum(b - a for a, b in dropped) == size - intact


def _codes(result) -> set[str]:
    return {f["code"] for r in json.loads(result.stdout)["files"] for f in r["findings"]}


def test_a_text_file_named_as_a_segment_is_no_kafka_log_in_index_check_and_verify(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    (part / NAME).write_text("this is a text file, not a Kafka log\n" * 20)
    for args in (("index", "check"), ("index", "check", "--deep"), ("verify",), ("verify", "--deep")):
        for target in (part, tmp_path):
            result = run_cli(*args, "--format", "json", target)
            assert result.exit_code == 1, (args, target)
            assert "not-a-kafka-log" in _codes(result), (args, target)


def test_verify_of_a_partition_or_log_directory_checks_what_index_check_checks(tmp_path):
    """The gate never passes what ``index check`` fails: a malformed ``partition.metadata`` and a log directory's
    malformed checkpoint fail both, beside a segment copied without its indexes (a warning in both)."""
    part = tmp_path / "t-0"
    part.mkdir()
    (part / NAME).write_bytes((GEN / "v2-none" / NAME).read_bytes())
    (part / "partition.metadata").write_text("garbage\n")
    for target in (part, tmp_path):
        index = run_cli("index", "check", "--format", "json", target)
        verify = run_cli("verify", "--deep", "--format", "json", target)
        assert index.exit_code == verify.exit_code == 1, target
        assert _codes(index) <= _codes(verify) and {"checkpoint-malformed", "index-missing"} <= _codes(verify)
    (part / "partition.metadata").write_text("version: 0\ntopic_id: 3Yzr5xEnQpOJUkVq0W5mDA\n")
    (tmp_path / "replication-offset-checkpoint").write_text("0\n1\nt 0 x\n")
    index = run_cli("index", "check", "--format", "json", tmp_path)
    verify = run_cli("verify", "--deep", "--format", "json", tmp_path)
    assert index.exit_code == verify.exit_code == 1
    assert _codes(index) <= _codes(verify)
