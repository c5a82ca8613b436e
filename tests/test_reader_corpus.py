"""The segment reader against Kafka's own field-level view of every corpus file (`.log.json`,
written by Kafka's FileRecords + deep iteration)."""
import pytest

from corpus import CORPUS, batch_view, case_id, load_json, record_view
from kdump.read.segment import SegmentReader

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

JSON_CASES = sorted(p for p in CORPUS.rglob("*.log") if (p.parent / f"{p.name}.json").exists())
LIMIT = 1 << 28


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
        expected = {k: kb[k] for k in batch_view(batch)}
        assert batch_view(batch) == expected, f"batch at {batch.position}"
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
