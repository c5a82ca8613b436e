"""``kdump stats``' time range is of record timestamps (the smallest and largest a record holds), not of the
batches' max timestamps; its total of several partitions gives no offset range (offsets of different partitions
do not add up). Expected values are the timestamps and offsets the test writes."""
import json

import pytest

from support.cli import run_cli
from kdump.write.segment import RecordBatchBuilder, write_segment

pytestmark = pytest.mark.usefixtures("backend")
T = 1_700_000_000_000


def _partition(root, name, batches):
    part = root / name
    part.mkdir()
    built = []
    for base, stamps in batches:
        b = RecordBatchBuilder(base_offset=base)
        for i, ts in enumerate(stamps):
            b.append(base + i, ts, b"k%d" % (base + i), b"v")
        built.append(b.build())
    write_segment(str(part / f"{batches[0][0]:020d}.log"), built)
    return part


def test_the_time_range_is_of_records(tmp_path):
    # one batch of 8 records from T to T+7 (its max timestamp T+7), one whose records are out of order
    part = _partition(tmp_path, "clicks-0", [(0, [T + i for i in range(8)]), (8, [T + 20, T + 3, T + 30, T + 10])])
    doc = json.loads(run_cli("stats", "--format", "json", part).stdout)
    (p,) = doc["partitions"]
    assert (p["minTimestamp"], p["maxTimestamp"]) == (T, T + 30)
    text = run_cli("stats", part).stdout
    assert f"timestamps {T} to {T + 30}" in text


def test_negative_timestamps_are_left_out(tmp_path):
    part = _partition(tmp_path, "clicks-0", [(0, [-1, T + 5, T + 2])])
    (p,) = json.loads(run_cli("stats", "--format", "json", part).stdout)["partitions"]
    assert (p["minTimestamp"], p["maxTimestamp"]) == (T + 2, T + 5)


def test_a_total_adds_no_offsets_of_different_partitions(tmp_path):
    _partition(tmp_path, "clicks-0", [(0, [T, T + 1, T + 2])])
    _partition(tmp_path, "clicks-1", [(2064, [T + 5, T + 6, T + 7])])
    doc = json.loads(run_cli("stats", "--format", "json", tmp_path).stdout)
    assert [(p["firstOffset"], p["lastOffset"]) for p in doc["partitions"]] == [(0, 2), (2064, 2066)]
    assert (doc["total"]["firstOffset"], doc["total"]["lastOffset"]) == (None, None)
    assert (doc["total"]["minTimestamp"], doc["total"]["maxTimestamp"]) == (T, T + 7)
    total = run_cli("stats", tmp_path).stdout.splitlines()
    (line,) = [line for line in total if line.startswith("total:")]
    assert "offsets" not in line and "6 records" in line
