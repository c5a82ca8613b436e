"""kdump salvage: every batch that verifies is copied, after damage too; the rest is listed; the input is untouched
and the output verifies clean with its indexes.

Corpus: each kafka-generated corrupt case is a copy of an intact case with bytes changed (or cut off). Kafka's view
of the damaged file (its ``.log.json``) gives the batches its reader accepts before the damage; Kafka's view of the
intact original gives the batches after it, and those whose bytes the damage did not touch are "intact". Salvage
must keep exactly those, byte for byte."""
from __future__ import annotations

import hashlib
import json
import struct

import pytest

from kdump.format.crc import crc32c
from support.cli import run_cli
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.convert.salvage import salvage_directory, salvage_segment
from kdump.read.segment import SegmentReader
from kdump.verify import VerifyOptions, verify_paths
from kdump.write.segment import write_segment

from corpus import CORPUS

GEN = CORPUS / "kafka-generated"
# damaged case -> the intact case it was made from (same bytes except the damage; checked below)
ORIGINALS = {"corrupt/v0-crc-mismatch": "v0-none", "corrupt/v2-bad-length-field": "v2-none",
             "corrupt/v2-crc-mismatch": "v2-none", "corrupt/v2-length-beyond-eof": "v2-none",
             "corrupt/v2-truncated-tail": "v2-lz4"}
BROKER_DAMAGED = ["fetch-truncated-mid-message", "fetch-v0-invalid-crc-0.9.0.0"]
CASES = [GEN / c for c in ORIGINALS] + [CORPUS / "broker-written" / c for c in BROKER_DAMAGED]


def _log(case):
    return next(case.glob("*.log"))


def _kafka_batches(log):
    return json.loads(log.with_name(log.name + ".json").read_text())["batches"]


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _expected_entries(case) -> list[bytes]:
    """The entries salvage must keep, from Kafka's views (see the module docstring)."""
    log = _log(case)
    data = log.read_bytes()
    rel = str(case.relative_to(GEN)) if case.is_relative_to(GEN) else None
    if rel not in ORIGINALS:  # no intact original: what Kafka's reader accepts is all that is known to be good
        return [data[b["position"]:b["position"] + b["size"]] for b in _kafka_batches(log) if b["valid"]]
    original_log = _log(GEN / ORIGINALS[rel])
    original = original_log.read_bytes()
    first_damage = next((i for i, (a, b) in enumerate(zip(data, original)) if a != b), min(len(data), len(original)))
    before = [b for b in _kafka_batches(log) if b["valid"] and b["position"] + b["size"] <= first_damage]
    # Kafka's reader accepts exactly the original's batches up to the damage
    assert [(b["position"], b["size"]) for b in before] == [
        (b["position"], b["size"]) for b in _kafka_batches(original_log) if b["position"] + b["size"] <= first_damage]
    after = [b for b in _kafka_batches(original_log) if b["position"] + b["size"] > first_damage
             and data[b["position"]:b["position"] + b["size"]] == original[b["position"]:b["position"] + b["size"]]]
    return [data[b["position"]:b["position"] + b["size"]] for b in before + after]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_salvage_keeps_what_kafka_accepts_before_the_damage_and_every_intact_batch_after(case, tmp_path):
    log = _log(case)
    before = _sha(log)
    out = tmp_path / log.name
    result = salvage_segment(log, out)
    assert _sha(log) == before  # the input is untouched
    with SegmentReader(out) as reader:
        kept = [b.entry_bytes() for b in reader]
    assert kept == _expected_entries(case)
    assert result.kept_batches == len(kept)
    assert result.dropped and result.lost_data  # every case here is damaged
    reports = verify_paths([str(tmp_path)], VerifyOptions(deep=True))
    assert {r.kind for r in reports} >= {"log", "index", "timeindex"}
    assert [(r.path, r.status) for r in reports if r.status != "ok"] == []


def _batch(base: int, n: int, *, key=b"k") -> bytes:
    b = RecordBatchBuilder(base)
    for o in range(base, base + n):
        b.append(o, 1_700_000_000_000 + o, key + b"%d" % o, b"value %d" % o)
    return b.build()


def _damaged_fixture(tmp_path):
    """Five batches (offsets 0-1, 2-4, 5, 6-9, 10-11); batch 2 (offsets 2-4) gets a flipped byte in its records
    (CRC mismatch), batch 4 (offsets 6-9) a record count one too high under a recomputed CRC (CRC valid, records
    not decodable as the header says); batches 1, 3 and 5 are intact."""
    entries = [_batch(0, 2), _batch(2, 3), _batch(5, 1), _batch(6, 4), _batch(10, 2)]
    bad_crc = bytearray(entries[1])
    bad_crc[-3] ^= 0xFF
    bad_count = bytearray(entries[3])
    struct.pack_into(">i", bad_count, 57, 5)  # records count (spec §3.2: at byte 57 of the entry)
    struct.pack_into(">I", bad_count, 17, crc32c(bytes(bad_count[21:])))  # CRC-32C from the attributes on
    entries[1], entries[3] = bytes(bad_crc), bytes(bad_count)
    src = tmp_path / "in" / "00000000000000000000.log"
    src.parent.mkdir()
    src.write_bytes(b"".join(entries))
    positions = [sum(map(len, entries[:i])) for i in range(len(entries))]
    return src, entries, positions


def test_salvage_of_a_fixture_drops_the_bad_batches_and_keeps_the_rest(tmp_path):
    src, entries, pos = _damaged_fixture(tmp_path)
    out = tmp_path / "out" / src.name
    result = salvage_segment(src, out)
    with SegmentReader(out) as reader:
        assert [b.entry_bytes() for b in reader] == [entries[0], entries[2], entries[4]]
    assert (result.kept_batches, result.kept_records, result.first_offset, result.last_offset) == (3, 5, 0, 11)
    dropped = [(d.start, d.end, d.first_offset, d.last_offset, d.records) for d in result.dropped]
    # the CRC mismatch: offsets and count as its (untrusted) header claims them; the bad count: 4 records, 6-9
    assert dropped == [(pos[1], pos[2], 2, 4, 3), (pos[3], pos[4], 6, 9, 5)]
    assert result.dropped[0].code == "crc-mismatch" and result.dropped[0].claimed
    assert not result.dropped[1].claimed
    assert sorted(p.rsplit(".", 1)[1] for p in result.indexes) == ["index", "timeindex"]
    reports = verify_paths([str(out.parent)], VerifyOptions(deep=True))
    assert all(r.status == "ok" for r in reports)


def test_salvage_refuses_to_write_over_the_input_or_an_existing_output(tmp_path):
    src, _, _ = _damaged_fixture(tmp_path)
    with pytest.raises(FileExistsError):
        salvage_segment(src, src)
    out = tmp_path / "o.log"
    out.write_bytes(b"keep me")
    with pytest.raises(FileExistsError):
        salvage_segment(src, out)
    assert out.read_bytes() == b"keep me"


def test_salvage_of_a_partition_directory_into_a_new_directory(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    write_segment(part / "00000000000000000000.log", [_batch(0, 2), _batch(2, 2)])
    damaged = bytearray(_batch(4, 2))
    damaged[-1] ^= 1
    (part / "00000000000000000004.log").write_bytes(bytes(damaged) + _batch(6, 1))
    (part / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    results = salvage_directory(part, tmp_path / "rescued")
    assert [(r.kept_batches, len(r.dropped)) for r in results] == [(2, 0), (1, 1)]
    names = sorted(p.name for p in (tmp_path / "rescued").iterdir())
    assert names == ["00000000000000000000.index", "00000000000000000000.log", "00000000000000000000.timeindex",
                     "00000000000000000004.index", "00000000000000000004.log", "00000000000000000004.timeindex",
                     "partition.metadata"]
    with pytest.raises(FileExistsError):  # never into a directory that has files
        salvage_directory(part, tmp_path / "rescued")


def run(*args):
    return run_cli("salvage", *args)


def test_cli_text_json_and_exit_codes(tmp_path):
    src, _, pos = _damaged_fixture(tmp_path)
    r = run(str(src), "-o", str(tmp_path / "a" / src.name))
    assert r.exit_code == 1  # damaged data was left out
    assert f"dropped bytes {pos[1]}-{pos[2] - 1} [crc-mismatch]" in r.output and "verify's deep checks: clean" in r.output
    r = run("--format", "json", str(src), "-o", str(tmp_path / "b") + "/")
    assert r.exit_code == 1
    doc = json.loads(r.output)["files"][0]
    assert doc["kept"]["batches"] == 3 and [d["firstOffset"] for d in doc["dropped"]] == [2, 6]
    intact = tmp_path / "intact" / "00000000000000000000.log"
    intact.parent.mkdir()
    write_segment(intact, [_batch(0, 3)])
    assert run(str(intact), "-o", str(tmp_path / "c" / intact.name)).exit_code == 0
    assert run(str(intact), "-o", str(tmp_path / "c" / intact.name)).exit_code == 2  # exists
    assert run(str(tmp_path / "missing.log"), "-o", str(tmp_path / "d.log")).exit_code == 2
    assert "Examples" in run("--help").output
