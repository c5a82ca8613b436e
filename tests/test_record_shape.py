"""One record shape for every magic: RecordColumns from legacy and magic-2 batches alike, the Batch
protocol, RecordColumns.slice, and decoded control records in every renderer's output.

Reference answers: kafka-python's legacy reader (test-only oracle), Kafka's own field-level view of the
corpus files (``.log.json``) and Kafka's DumpLogSegments text (``.dumplog.txt``)."""
import json
import re

import pytest
from kafka.record import MemoryRecords

from corpus import CORPUS, LOG_FILES, case_id, load_json
from support.cli import run_cli
from kdump.format.batch import Batch
from kdump.format.columns import Record, RecordColumns
from kdump.format.legacy import LegacyBatch
from kdump.format.v2 import RecordBatch
from kdump.read.segment import SegmentReader

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

LIMIT = 1 << 28
JSON_CASES = sorted(p for p in CORPUS.rglob("*.log") if (p.parent / f"{p.name}.json").exists())
LEGACY_CASES = [p for p in JSON_CASES if any(b["magic"] < 2 for b in load_json(p)["batches"])]
TXN = CORPUS / "kafka-generated/v2-transactional/00000000000000000000.log"
WRAPPERS = CORPUS / "kafka-generated/v1-gzip-createtime/00000000000000000000.log"


def read(path):
    with SegmentReader(path) as reader:
        return list(reader)


def test_there_are_legacy_corpus_files():
    assert len(LEGACY_CASES) >= 15


@pytest.mark.parametrize("path", LEGACY_CASES, ids=case_id)
def test_legacy_columns_equal_kafkas_view(path):
    """Offsets (Kafka's wrapper offset rules applied), timestamps, keys, values, CRCs, magics, sizes."""
    kafka = load_json(path)["batches"]
    batches = read(path)
    assert len(batches) == len(kafka)
    for batch, kb in zip(batches, kafka):
        if batch.magic == 2 or not kb["valid"]:
            continue
        cols = batch.columns(LIMIT)
        assert isinstance(cols, RecordColumns) and cols.error is None
        want = kb["records"]
        at = f"batch at {batch.position}"
        assert cols.count == len(want), at
        assert cols.offsets == [r["offset"] for r in want], at
        assert cols.timestamps == [r["timestamp"] for r in want], at
        assert [None if k is None else k.hex() for k in map(cols.key, range(cols.count))] == \
            [r["key"] for r in want], at
        assert [None if v is None else v.hex() for v in map(cols.value, range(cols.count))] == \
            [r["value"] for r in want], at
        assert cols.crcs == [r["legacyCrc"] for r in want], at
        assert cols.magics == [r["legacyMagic"] for r in want], at
        assert cols.sizes == [r["sizeInBytes"] for r in want], at
        assert cols.headers == [()] * cols.count, at


@pytest.mark.parametrize("path", LEGACY_CASES, ids=case_id)
def test_legacy_columns_equal_kafka_python(path):
    """kafka-python's legacy reader on each entry's bytes: the same records, CRCs and CRC verdicts."""
    for batch in read(path):
        if batch.magic == 2 or batch.message.offset == 0 and batch.is_compressed and batch.magic == 1:
            continue  # (kafka-python has no librdkafka rule for a magic-1 wrapper at offset 0)
        cols = batch.columns(LIMIT)
        krecords = list(MemoryRecords(batch.entry_bytes()).next_batch())
        at = f"{case_id(path)} batch at {batch.position}"
        assert cols.count == len(krecords), at
        assert cols.offsets == [r.offset for r in krecords], at
        # kafka-python reports a magic-0 timestamp as None where Kafka (and kdump) say -1
        assert cols.timestamps == [-1 if r.timestamp is None else r.timestamp for r in krecords], at
        assert [cols.key(i) for i in range(cols.count)] == [r.key for r in krecords], at
        assert [cols.value(i) for i in range(cols.count)] == [r.value for r in krecords], at
        assert cols.crcs == [r.checksum for r in krecords], at
        assert cols.magics == [r.magic for r in krecords], at
        assert cols.valid == [r.validate_crc() for r in krecords], at


def test_an_invalid_crc_shows_in_the_valid_column():
    path = CORPUS / "broker-written/fetch-v0-invalid-crc-0.9.0.0/00000000000000000000.log"
    kafka = load_json(path)["batches"]
    batches = read(path)
    got = [batch.columns(LIMIT).valid[0] for batch in batches if batch.message.codec_id == 0]
    assert got == [kb["crcValid"] for kb in kafka if kb["codec"] == "none"]
    assert False in got


@pytest.mark.parametrize("path", [TXN, WRAPPERS], ids=case_id)
def test_records_are_one_shape_built_from_the_columns(path):
    for batch in read(path):
        cols = batch.columns(LIMIT)
        records = list(batch.records(LIMIT))
        assert all(type(r) is Record for r in records)
        assert [r.offset for r in records] == cols.offsets
        assert [r.timestamp for r in records] == cols.timestamps
        assert [(r.key, r.value) for r in records] == [(cols.key(i), cols.value(i)) for i in range(cols.count)]
        if batch.magic == 2:
            assert cols.crcs is cols.magics is cols.valid is None
            assert {(r.crc, r.magic, r.is_valid()) for r in records} <= {(None, None, None)}
        else:
            assert [(r.crc, r.magic, r.is_valid()) for r in records] == list(zip(cols.crcs, cols.magics, cols.valid))


# --- slice -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", [TXN, WRAPPERS], ids=case_id)
def test_slice_is_a_view_of_a_range_of_records(path):
    batch = next(b for b in read(path) if b.columns(LIMIT).count >= 3)
    cols = batch.columns(LIMIT)
    n = cols.count
    for start, stop in ((0, n), (1, n), (0, 2), (1, 2), (2, 2), (n - 1, n + 5), (-2, n), (3, 1)):
        part = cols.slice(start, stop)
        idx = list(range(n))[start:stop]
        assert part.buf is cols.buf  # no copy of keys and values
        assert part.count == len(idx)
        assert part.offsets == [cols.offsets[i] for i in idx]
        assert part.timestamps == [cols.timestamps[i] for i in idx]
        assert [part.key(j) for j in range(part.count)] == [cols.key(i) for i in idx]
        assert [part.value(j) for j in range(part.count)] == [cols.value(i) for i in idx]
        assert part.sizes == [cols.sizes[i] for i in idx]
        assert part.headers == [cols.headers[i] for i in idx]
        if cols.crcs is None:
            assert part.crcs is part.magics is part.valid is None
        else:
            assert part.crcs == [cols.crcs[i] for i in idx] and part.valid == [cols.valid[i] for i in idx]


def test_slice_keeps_the_decoding_error_with_the_end():
    batch = next(b for b in read(TXN) if b.records_count >= 3 and not b.is_control)
    cols = batch.columns(LIMIT)
    cols.error = ValueError("stopped here")  # as if decoding had stopped after these records
    assert cols.slice(0, cols.count).error is cols.error
    assert cols.slice(1, cols.count + 3).error is cols.error
    assert cols.slice(0, 1).error is None


# --- the Batch protocol ------------------------------------------------------------------------------
BATCH_FIELDS = ("position", "size", "magic", "base_offset", "last_offset", "max_timestamp", "timestamp_type",
                "codec_id", "crc", "is_valid", "producer_id", "producer_epoch", "base_sequence",
                "is_transactional", "is_control", "partition_leader_epoch", "records_count", "columns", "records")


def test_both_batch_classes_implement_the_protocol():
    batches = read(CORPUS / "kafka-generated/mixed-magic/00000000000000000000.log")
    kinds = {type(b) for b in batches}
    assert kinds == {RecordBatch, LegacyBatch}
    for batch in batches:
        assert isinstance(batch, Batch)
        for name in BATCH_FIELDS:
            assert hasattr(batch, name), (type(batch).__name__, name)
        assert callable(batch.columns) and callable(batch.records) and callable(batch.is_valid)
    # the protocol names exactly these fields (data members annotated, methods defined)
    declared = set(Batch.__annotations__) | {n for n in ("is_valid", "columns", "records") if callable(getattr(Batch, n))}
    assert declared == set(BATCH_FIELDS)


def test_an_object_without_columns_is_not_a_batch():
    class HeaderOnly:
        pass
    obj = HeaderOnly()
    for name in BATCH_FIELDS:
        if name not in ("columns", "records", "is_valid"):
            setattr(obj, name, 0)
    assert not isinstance(obj, Batch)


# --- decoded control records in JSON Lines -----------------------------------------------------------
def _json_records(path):
    result = run_cli("dump", "--deep-iteration", "--format", "json", path)
    assert result.exit_code == 0, result.output
    return [(b, r) for line in result.stdout.splitlines() for b in [json.loads(line)] for r in b.get("records", [])]


def test_json_carries_decoded_transaction_markers():
    want = {r["offset"]: r for b in load_json(TXN)["batches"] for r in b["records"] if "control" in r}
    got = {r["offset"]: r for b, r in _json_records(TXN) if b["isControl"]}
    assert want and set(got) == set(want)
    for offset, w in want.items():
        value = bytes.fromhex(w["value"])
        assert got[offset]["control"] == {"type": w["control"]["type"], "version": int.from_bytes(value[:2], "big"),
                                          "coordinatorEpoch": w["control"]["coordinatorEpoch"]}
    assert all("control" not in r for b, r in _json_records(TXN) if not b["isControl"])


_KRAFT_LINE = re.compile(r"^\| offset: (\d+) .*headerKeys: \[[^\]]*\] "
                         r"(SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters|LeaderChange:) (\{.*\})$")
_KRAFT_TYPES = {"SnapshotHeader": "SNAPSHOT_HEADER", "SnapshotFooter": "SNAPSHOT_FOOTER",
                "KRaftVersion": "KRAFT_VERSION", "KRaftVoters": "KRAFT_VOTERS", "LeaderChange:": "LEADER_CHANGE"}


def _dumplog(path):
    text = path.parent / f"{path.name}.dumplog.txt"
    return text.read_text().splitlines() if text.exists() else []


KRAFT_CASES = [p for p in LOG_FILES if any(_KRAFT_LINE.match(line) for line in _dumplog(p))]


def test_there_are_kraft_control_records_in_the_corpus():
    assert len(KRAFT_CASES) >= 2


@pytest.mark.parametrize("path", KRAFT_CASES, ids=case_id)
def test_json_carries_decoded_kraft_control_records(path):
    """The KRaft message as Kafka's DumpLogSegments printed it, with the control type beside it."""
    want = {}
    for line in _dumplog(path):
        m = _KRAFT_LINE.match(line)
        if m:
            want[int(m.group(1))] = {"type": _KRAFT_TYPES[m.group(2)], **json.loads(m.group(3))}
    got = {r["offset"]: r["control"] for b, r in _json_records(path) if b["isControl"]}
    assert want
    for offset, obj in want.items():
        assert got[offset] == obj, offset


def test_json_of_an_invalid_control_record_says_why(tmp_path):
    from kdump.write.segment import RecordBatchBuilder
    b = RecordBatchBuilder(0, 0, producer_id=7, producer_epoch=0, is_transactional=True, is_control=True)
    b.append(0, 1_700_000_000_000, b"\x00\x00\x00\x01", b"\x00\x00")  # COMMIT with a 2-byte value
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b.build())
    ((_, rec),) = _json_records(path)
    assert rec["control"]["type"] == "COMMIT"
    assert "at least 6 bytes, but found only 2" in rec["control"]["error"]
