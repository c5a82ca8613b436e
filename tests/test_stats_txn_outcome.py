"""``kdump stats`` and ``kdump txn`` (issue 20): they read a partition as ``dump`` and ``verify`` read it (past damage,
through :func:`kdump.read.damage.readable`), say each damaged area (file, byte position, cause) on stderr and as a
JSON error object, label each partition line, and end with the exit code of the one outcome policy
(:mod:`kdump.report.outcome`). Reference counts come from Kafka's own view of the corpus files (``.log.json``) and from
kafka-python's record reader over the intact batches, never from kdump's output."""
from __future__ import annotations

import json
import os
import shutil
import struct

import crc32c
import pytest
from kafka.record.memory_records import MemoryRecords

from corpus import CORPUS
from support.cli import run_cli

KAFKA = CORPUS / "kafka-generated"
V2_NONE = KAFKA / "v2-none/00000000000000000000.log"
V2_LZ4 = KAFKA / "v2-lz4/00000000000000000000.log"
V2_TXN = KAFKA / "v2-transactional/00000000000000000000.log"
SEGMENT = "00000000000000000000.log"


def kafka_view(log) -> list[dict]:
    """Kafka's own view of every batch of a corpus segment (position, size, offsets, record count...)."""
    return json.loads(log.with_name(log.name + ".json").read_text())["batches"]


def partition(root, data: bytes, name: str = "orders-0"):
    part = root / name
    part.mkdir(parents=True)
    (part / SEGMENT).write_bytes(data)
    return part


def kafka_python_count(data: bytes, batches: list[dict]) -> tuple[int, int, set]:
    """(batches, records, distinct keys) of ``batches`` of ``data`` read by kafka-python (an independent reader)."""
    chunk = b"".join(data[b["position"]:b["position"] + b["size"]] for b in batches)
    records = MemoryRecords(chunk)
    n_batches = n_records = 0
    keys = set()
    while records.has_next():
        batch = records.next_batch()
        n_batches += 1
        for r in batch:
            n_records += 1
            if r.key is not None:
                keys.add(r.key)
    return n_batches, n_records, keys


def size_field_damaged(root):
    """v2-none with batch 1's size field set to 5 (below Kafka's minimum of 14): its 2 records are lost."""
    view = kafka_view(V2_NONE)
    data = bytearray(V2_NONE.read_bytes())
    struct.pack_into(">i", data, view[1]["position"] + 8, 5)
    return partition(root, bytes(data)), view, view[1]


def stats_json(*args):
    result = run_cli("stats", "--format", "json", *args)
    return result, json.loads(result.stdout)


def test_a_damaged_size_field_mid_file_costs_only_its_batch_as_in_dump_and_verify(tmp_path):
    part, view, damaged = size_field_damaged(tmp_path)
    log = part / SEGMENT
    want = kafka_python_count(V2_NONE.read_bytes(), [b for b in view if b is not damaged])
    assert want[:2] == (7, 6115)  # the example: 7 batches, 6,115 records
    result, doc = stats_json(part)
    assert result.exit_code == 1
    (p,) = doc["partitions"]
    assert (p["batches"], p["records"]) == want[:2]
    assert (p["firstOffset"], p["lastOffset"]) == (view[0]["baseOffset"], view[-1]["lastOffset"])
    assert p["keys"]["keyedRecords"] + p["keys"]["keylessRecords"] == want[1]  # what the key figures cover
    assert p["keys"]["distinct"] == len(want[2])
    assert (p["path"], p["topic"], p["partition"], p["label"], p["damagedSegments"]) == (str(part), "orders", 0,
                                                                                          "FAIL", 1)
    (error,) = p["errors"]
    assert (error["path"], error["position"]) == (str(log), damaged["position"])
    assert "entry size field is 5" in error["message"] and "offsets 1-2 are lost" in error["message"]
    assert f"kdump: {log}: at byte {damaged['position']}: {error['message']}" in result.stderr
    verify = json.loads(run_cli("verify", "--deep", "--format", "json", part).stdout)["files"][0]
    assert (verify["batches"], verify["records"]) == (p["batches"], p["records"])
    dump = [json.loads(line) for line in run_cli("dump", "--format", "json", "--deep-iteration", part).stdout.splitlines()]
    assert len([o for o in dump if o["type"] == "batch"]) == p["batches"]
    text = run_cli("stats", part)
    assert text.exit_code == 1 and text.stdout.startswith(f"FAIL orders-0: 1 segment, 1 damaged, 7 batches, 6115 "
                                                          "records")
    assert f"kdump: {log}: at byte {damaged['position']}: " in text.stderr


def test_an_undecompressable_batch_is_damage_in_text_and_json(tmp_path):
    """v2-lz4 with the 5000-record batch's lz4 frame magic overwritten (its CRC made right again): the batch is
    counted (as verify counts it), its records are not, and the key and compaction figures cover the 1117 read."""
    view = kafka_view(V2_LZ4)
    bad = max(view, key=lambda b: b["recordCount"])
    data = bytearray(V2_LZ4.read_bytes())
    start, end = bad["position"], bad["position"] + bad["size"]
    data[start + 61:start + 65] = b"\xff" * 4
    struct.pack_into(">I", data, start + 17, crc32c.crc32c(bytes(data[start + 21:end])))
    part = partition(tmp_path, bytes(data))
    n_batches, n_records, keys = kafka_python_count(V2_LZ4.read_bytes(), [b for b in view if b is not bad])
    assert n_records == 1117
    result, doc = stats_json(part)
    assert result.exit_code == 1
    (p,) = doc["partitions"]
    assert (p["batches"], p["records"], p["unreadableBatches"]) == (n_batches + 1, n_records, 1)
    assert p["keys"]["keyedRecords"] + p["keys"]["keylessRecords"] == n_records and p["keys"]["distinct"] == len(keys)
    (error,) = p["errors"]
    assert error["position"] == bad["position"] and error["code"] == "decompress-failed" and "lz4" in error["message"]
    text = run_cli("stats", part)
    assert text.exit_code == 1 and text.stdout.startswith("FAIL orders-0: ")
    assert f"kdump: {part / SEGMENT}: at byte {bad['position']}: " in text.stderr
    assert "1 batch whose records could not be decoded" in text.stdout and "1 error on stderr" in text.stdout


def _empty(root):
    (root / "empty").mkdir()
    return root / "empty"


def _fifo(root):
    os.mkfifo(root / SEGMENT)
    return root / SEGMENT


def _loop(root):
    (root / SEGMENT).symlink_to(root / SEGMENT)
    return root / SEGMENT


NOTHING = {"empty directory": _empty, "missing path": lambda root: root / "nonexistent", "fifo": _fifo,
           "/dev/zero": lambda root: "/dev/zero", "symlink loop": _loop}


@pytest.mark.parametrize("command", ["stats", "txn"])
@pytest.mark.parametrize("case", list(NOTHING))
def test_nothing_to_read_exits_2_without_a_report(tmp_path, command, case):
    path = NOTHING[case](tmp_path)
    result = run_cli(command, path)
    assert result.exit_code == 2 and result.stdout == ""  # no all-zero report
    assert f"kdump: {path}: " in result.stderr
    result = run_cli(command, "--format", "json", path)
    doc = json.loads(result.stdout)
    assert result.exit_code == 2 and doc["partitions"] == [] and doc.get("total") is None
    assert [e["path"] for e in doc["errors"]] == [str(path)]


@pytest.fixture
def one_unreadable(tmp_path, monkeypatch):
    """A log directory of two partitions whose second's segment cannot be opened (EACCES; made so by a stand-in
    for the reader, so that it holds for root as well)."""
    from kdump.read import producers, segment
    from kdump.stats import counts as stats
    logs = tmp_path / "logs"
    partition(logs, V2_NONE.read_bytes(), "orders-0")
    unreadable = partition(logs, V2_NONE.read_bytes(), "orders-1") / SEGMENT

    class Refusing(segment.SegmentReader):
        def __init__(self, path, **kwargs):
            if os.fspath(path) == str(unreadable):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            super().__init__(path, **kwargs)
    monkeypatch.setattr(stats, "SegmentReader", Refusing)
    monkeypatch.setattr(producers, "SegmentReader", Refusing)
    return logs, unreadable


@pytest.mark.parametrize("command", ["stats", "txn"])
def test_an_unreadable_segment_among_readable_ones_exits_1_with_the_others_reported(one_unreadable, command):
    logs, unreadable = one_unreadable
    # one process: the stand-in reader lives in this one (with a thread running, e.g. a Spark session's, --jobs
    # would start fresh worker processes that import the real reader)
    result = run_cli(command, "--jobs", "1", logs)
    assert result.exit_code == 1
    assert f"kdump: {unreadable}: cannot read: Permission denied" in result.stderr
    assert result.stdout.startswith("OK orders-0: ") and "orders-1" not in result.stdout
    doc = json.loads(run_cli(command, "--jobs", "1", "--format", "json", logs).stdout)
    assert [p["partition"] for p in doc["partitions"]] == [0]
    assert doc["errors"] == [{"type": "error", "path": str(unreadable), "position": None, "code": "cannot-read",
                              "message": "cannot read: Permission denied"}]


@pytest.mark.parametrize("command", ["stats", "txn"])
def test_a_text_file_named_log_is_not_a_kafka_log_segment(tmp_path, command):
    part = partition(tmp_path, b"operator notes: this is no segment\n" * 20)
    result = run_cli(command, part)
    assert result.exit_code == 1
    assert f"kdump: {part / SEGMENT}: at byte 0: not a Kafka log segment: " in result.stderr
    assert "incomplete" not in result.stderr
    (p,) = json.loads(run_cli(command, "--format", "json", part).stdout)["partitions"]
    assert [(e["code"], e["position"]) for e in p["errors"]] == [("not-a-kafka-log", 0)] and p["label"] == "FAIL"


@pytest.mark.parametrize("command", ["stats", "txn"])
def test_a_crash_cut_tail_is_kafkas_note_not_a_failure(tmp_path, command):
    """The last batch cut short (what a crash leaves): Kafka's DumpLogSegments says "Found N invalid bytes at the
    end" and exits 0; the batches before it are all there."""
    view = kafka_view(V2_NONE)
    part = partition(tmp_path, V2_NONE.read_bytes()[:-100])
    result = run_cli(command, "--format", "json", part)
    assert result.exit_code == 0
    (p,) = json.loads(result.stdout)["partitions"]
    assert p["errors"] == [] and p["label"] == "OK"
    (note,) = p["notes"]
    assert note["position"] == view[-1]["position"] and note["code"] == "truncated-tail"
    if command == "stats":
        assert (p["batches"], p["records"]) == (len(view) - 1, sum(b["recordCount"] for b in view[:-1]))
        assert f"kdump: {part / SEGMENT}: note: at byte {view[-1]['position']}: " in run_cli("stats", part).stderr


def _big_segment(part):
    from kdump.format.v2_builder import RecordBatchBuilder
    from kdump.write.segment import write_segment
    part.mkdir()

    def batch(base):
        b = RecordBatchBuilder(base)
        for i in range(10):
            b.append(base + i, 1_700_000_000_000, b"k%d" % i, b"v" * 10_000)
        return b.build()
    return write_segment(part / SEGMENT, [batch(i * 10) for i in range(40)])  # 4 MB: beyond the reader's buffer


@pytest.mark.parametrize("command", ["stats", "txn"])
def test_a_file_truncated_while_being_read_exits_1(tmp_path, monkeypatch, command):
    from kdump.read.producers import PartitionProducers
    from kdump.stats.counts import RecordAnalysis
    log = _big_segment(tmp_path / "t-0")
    cls, name = (RecordAnalysis, "batch") if command == "stats" else (PartitionProducers, "apply")
    original = getattr(cls, name)

    def truncating(self, batch, *args):
        if os.path.getsize(log) > 1 << 20:
            os.truncate(log, 1 << 20)  # as retention or an operator would, while kdump reads it
        return original(self, batch, *args)
    monkeypatch.setattr(cls, name, truncating)
    result = run_cli(command, log)
    assert result.exit_code == 1
    assert f"kdump: {log}: at byte " in result.stderr and "while being read" in result.stderr


def test_txn_reads_past_damage_as_dump_does(tmp_path):
    """v2-transactional with producer 2001's data batch at offsets 58-64 made unreadable (size field 5): every
    transaction Kafka printed is still there, its markers read past the damage; that transaction has the records of
    its other batch only (Kafka's view: 5)."""
    view = kafka_view(V2_TXN)
    damaged = next(b for b in view if b["baseOffset"] == 58)
    data = bytearray(V2_TXN.read_bytes())
    struct.pack_into(">i", data, damaged["position"] + 8, 5)
    part = partition(tmp_path, bytes(data), "payments-0")
    result = run_cli("txn", "--format", "json", part)
    assert result.exit_code == 1
    (p,) = json.loads(result.stdout)["partitions"]
    got = sorted((t["producerId"], t["firstOffset"], t["lastOffset"], t["outcome"], t["records"])
                 for t in p["transactions"])
    first = next(b for b in view if b["baseOffset"] == 0)
    assert got == [(2001, 0, 65, "COMMIT", first["recordCount"]), (2001, 1087, 1089, "ABORT", 2),
                   (2002, 5, 86, "ABORT", 70), (2003, 87, 1090, "COMMIT", 1000)]
    assert p["lastStableOffset"] == view[-1]["lastOffset"] + 1 and p["label"] == "FAIL"
    (error,) = p["errors"]
    assert error["position"] == damaged["position"] and error["path"] == str(part / SEGMENT)
    text = run_cli("txn", part)
    assert text.stdout.startswith("FAIL payments-0: ") and f"at byte {damaged['position']}: " in text.stderr


def test_labels_say_ok_and_fail_per_partition(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(V2_NONE.parent, logs / "good-0")
    size_field_damaged(logs)  # orders-0
    result = run_cli("stats", logs)
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if not line.startswith(" ")]
    assert [line.split(":")[0] for line in lines] == ["OK good-0", "FAIL orders-0", "total"]


@pytest.mark.parametrize("length", [1, 9, 16, 17, 18, 40, 4096])
@pytest.mark.parametrize("fill", ["zeros", "cut entry"])
def test_kafka_tail_is_kafkas_rule_for_every_length(tmp_path, length, fill):
    """Kafka's walk (spec §3.9): 17 bytes or fewer after the last batch are "invalid bytes at the end" whatever they
    hold; beyond that a zero size field (below 14) throws, and an entry declaring more than remains is again a
    trailing partial batch."""
    from kdump.read.damage import Damage, readable
    from kdump.read.segment import SegmentReader
    data = V2_NONE.read_bytes()
    big = max(kafka_view(V2_NONE), key=lambda b: b["size"])
    tail = bytes(length) if fill == "zeros" else data[big["position"]:big["position"] + length]  # cut short
    log = partition(tmp_path, data + tail) / SEGMENT
    with SegmentReader(log) as reader:
        (damage,) = [d for d in readable(reader) if isinstance(d, Damage)]
    assert damage.start == len(data)
    assert damage.kafka_tail == (length <= 17 or fill == "cut entry")
