"""The segment reader against Kafka's own field-level view of every corpus file (`.log.json`,
written by Kafka's FileRecords + deep iteration)."""
import pytest

from corpus import CORPUS, case_id, load_json
from kdump.format.control import parse_control_key, parse_end_txn_marker
from kdump.format.types import ControlRecordType
from kdump.segment import SegmentReader

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

JSON_CASES = sorted(p for p in CORPUS.rglob("*.log") if (p.parent / f"{p.name}.json").exists())
LIMIT = 1 << 28
TS_NAMES = {-1: "NO_TIMESTAMP_TYPE", 0: "CREATE_TIME", 1: "LOG_APPEND_TIME"}
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def hexb(b):
    return None if b is None else b.hex()


def batch_view(batch, records):
    v = {
        "position": batch.position, "size": batch.size, "lastOffset": batch.last_offset,
        "magic": batch.magic, "codec": CODECS[batch.codec_id], "crc": batch.crc, "crcValid": batch.is_valid(),
        "timestampType": TS_NAMES[int(batch.timestamp_type)], "maxTimestamp": batch.max_timestamp,
        "isTransactional": batch.is_transactional, "isControl": batch.is_control,
        "producerId": batch.producer_id, "producerEpoch": batch.producer_epoch,
        "baseSequence": batch.base_sequence, "lastSequence": batch.last_sequence,
        "partitionLeaderEpoch": batch.partition_leader_epoch, "deleteHorizonMs": batch.delete_horizon_ms,
        "recordCount": batch.records_count,
    }
    v["baseOffset"] = batch.base_offset
    return v


def record_view(batch, r):
    v = {
        "offset": r.offset, "timestamp": r.timestamp, "timestampType": TS_NAMES[int(r.timestamp_type)],
        "key": hexb(r.key), "value": hexb(r.value),
        "headers": [{"key": k, "value": hexb(val)} for k, val in r.headers],
        "sequence": r.sequence, "sizeInBytes": r.size_in_bytes,
    }
    if batch.magic < 2:
        v["legacyMagic"] = r.magic
        v["legacyCrc"] = r.crc
    if batch.is_control:
        ctype, _ = parse_control_key(r.key)
        if ctype in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            v["control"] = {"type": ctype.name,
                            "coordinatorEpoch": parse_end_txn_marker(ctype, r.value).coordinator_epoch}
    return v


@pytest.mark.parametrize("path", JSON_CASES, ids=case_id)
def test_batches_and_records_equal_kafkas_view(path):
    kafka = load_json(path)
    with SegmentReader(path) as reader:
        batches = list(reader)
        tail = reader.tail
    assert len(batches) == len(kafka["batches"])
    total_records = 0
    for batch, kb in zip(batches, kafka["batches"]):
        records = [record_view(batch, r) for r in batch.records(LIMIT)] if kb["valid"] else []
        kafka_records = kb["records"]
        for kr in kafka_records:
            if "control" in kr and kr["control"].get("type") not in ("ABORT", "COMMIT"):
                kr.pop("control")  # KRaft control values are checked in test_control.py
        total_records += len(records)
        expected = {k: kb[k] for k in batch_view(batch, records)}
        assert batch_view(batch, records) == expected, f"batch at {batch.position}"
        assert records == kafka_records, f"records of the batch at {batch.position}"
        assert batch.is_valid() == kb["valid"]
    totals = kafka["totals"]
    assert total_records == totals["records"]
    assert sum(1 for b in batches if not b.is_valid()) == totals["invalidBatches"]
    valid_end = batches[-1].position + batches[-1].size if batches else 0
    assert valid_end == totals["validEnd"]
    if totals["fatal"]:
        assert tail.fatal and tail.position == totals["validEnd"]
    else:
        assert not tail.fatal
        assert (tail.length if tail.kind in ("short", "truncated") else 0) == totals["trailingBytes"]
