"""convert never takes damage for the end of the file: a damaged size field with intact batches after it is
refused (exit 1, nothing written), or with --skip-damaged converted around (exactly the records of the intact
batches, exit 1), as verify, dump, stats and salvage judge the same bytes.

The expected records come from the corpus: Kafka's own view of the undamaged segment (``.log.json``), less the
batch whose size field the test damages; the output is read back with kafka-python (an independent reader)."""
from __future__ import annotations

import json
import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.legacy_records import LegacyRecordBatch

from corpus import FIXTURES
from support.cli import run_cli

pytestmark = pytest.mark.usefixtures("backend")

SEGMENT = "00000000000000000000.log"
SOURCE = FIXTURES / "corpus" / "kafka-generated" / "v2-none" / SEGMENT
KAFKA_VIEW = json.loads(SOURCE.with_name(SEGMENT + ".json").read_text())


def damaged_copy(tmp_path, batch_index: int, size: int):
    """The corpus segment with the size field of its ``batch_index``-th batch set to ``size``; the offsets of the
    records Kafka's view shows in every other batch."""
    data = bytearray(SOURCE.read_bytes())
    batch = KAFKA_VIEW["batches"][batch_index]
    struct.pack_into(">i", data, batch["position"] + 8, size)
    path = tmp_path / "in" / SEGMENT
    path.parent.mkdir()
    path.write_bytes(bytes(data))
    kept = [r["offset"] for i, b in enumerate(KAFKA_VIEW["batches"]) if i != batch_index for r in b["records"]]
    return path, kept


def kafka_python_offsets(path) -> list[int]:
    """Every record offset of a segment, read by kafka-python's record module."""
    data = path.read_bytes()
    pos, offsets = 0, []
    while pos < len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        entry = data[pos:pos + 12 + size]
        magic = entry[16]
        batch = DefaultRecordBatch(entry) if magic == 2 else LegacyRecordBatch(entry, magic)
        offsets.extend(r.offset for r in batch)
        pos += 12 + size
    return offsets


@pytest.mark.parametrize("batch_index,size", [(3, 0x7FFF0000), (0, 2**31 - 1)], ids=["4th-batch", "first-batch"])
@pytest.mark.parametrize("target", [0, 1, 2])
def test_a_damaged_size_field_with_batches_after_it_is_refused_not_taken_for_a_tail(tmp_path, batch_index, size,
                                                                                   target):
    src, _ = damaged_copy(tmp_path, batch_index, size)
    position = KAFKA_VIEW["batches"][batch_index]["position"]
    res = run_cli("convert", src, "--to-magic", target, "-o", f"{tmp_path}/out/")
    assert res.exit_code == 1, res.output
    assert f"at byte {position}:" in res.output and "size field is damaged" in res.output
    assert "--skip-damaged" in res.output  # what to do instead
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []  # nothing, no temporary


@pytest.mark.parametrize("batch_index,size", [(3, 0x7FFF0000), (0, 2**31 - 1)], ids=["4th-batch", "first-batch"])
@pytest.mark.parametrize("target", [0, 1, 2])
def test_skip_damaged_writes_exactly_the_records_of_the_intact_batches_and_fails(tmp_path, batch_index, size,
                                                                                 target):
    src, kept = damaged_copy(tmp_path, batch_index, size)
    res = run_cli("convert", src, "--to-magic", target, "--skip-damaged", "-o", f"{tmp_path}/out/")
    assert res.exit_code == 1, res.output  # data was lost: the run fails as verify does
    out = tmp_path / "out" / SEGMENT
    offsets = kafka_python_offsets(out)
    assert offsets == kept  # (this segment has no control batch, which going down would drop)
    assert "damaged bytes" in res.output
    # the same bytes, the same judgement: verify fails the input, salvage keeps the same records
    assert run_cli("verify", src).exit_code == 1
    salvaged = run_cli("salvage", src, "-o", f"{tmp_path}/salvaged/")
    assert salvaged.exit_code == 1
    assert kafka_python_offsets(tmp_path / "salvaged" / SEGMENT) == kept


def test_skip_damaged_reports_the_damage_in_json(tmp_path):
    src, kept = damaged_copy(tmp_path, 3, 0x7FFF0000)
    position = KAFKA_VIEW["batches"][3]["position"]
    res = run_cli("convert", src, "--to-magic", "1", "--skip-damaged", "--format", "json", "-o", f"{tmp_path}/o/")
    assert res.exit_code == 1
    doc = json.loads(res.stdout)
    [result] = doc["results"]
    assert result["output"]["records"] == len(kept)
    [damage] = result["damage"]
    next_position = KAFKA_VIEW["batches"][4]["position"]
    assert (damage["position"], damage["bytes"]) == (position, next_position - position)
    lost = [r["offset"] for r in KAFKA_VIEW["batches"][3]["records"]]
    assert (damage["firstOffset"], damage["lastOffset"]) == (lost[0], lost[-1])
    assert [e["position"] for e in doc["errors"]] == [position]


def test_a_crash_cut_tail_is_still_a_loss_not_damage(tmp_path):
    """A last batch cut short with nothing after it is where Kafka's readers stop too (exit 0, noted)."""
    data = SOURCE.read_bytes()
    last = KAFKA_VIEW["batches"][-1]
    src = tmp_path / "in" / SEGMENT
    src.parent.mkdir()
    src.write_bytes(data[:last["position"] + 100])
    res = run_cli("convert", src, "--to-magic", "1", "-o", f"{tmp_path}/out/")
    assert res.exit_code == 0, res.output
    assert kafka_python_offsets(tmp_path / "out" / SEGMENT) == [
        r["offset"] for b in KAFKA_VIEW["batches"][:-1] for r in b["records"]]
    assert "100 bytes of an incomplete last batch" in res.output
