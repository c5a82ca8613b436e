"""kdump.read.damage: one Damage per damaged area, its byte range, cause and the offsets it costs.

Reference answers are Kafka's own readings of the damaged corpus files (``.log.check.txt``: the batches Kafka read,
``INVALID`` batches, where it died or called the rest trailing bytes) and of the intact segments they were made
from (``.log.json``), and for the fixtures of ``fixtures/corrupt`` the ``expected.json`` that ``make_corrupt.py``
computed from where it put the damage; a few cases are built here with the fixture writer, the expected offsets
being the ones written. Then: every command says the same sentence for the same damage."""
from __future__ import annotations

import json
import re
import struct

import pytest

from corpus import CORPUS, FIXTURES
from kdump.format import framing as F
from kdump.read import damage as D
from kdump.read.partition import PartitionLog
from kdump.read.segment import SegmentReader, header_at
from kdump.write.segment import RecordBatchBuilder
from support.cli import run_cli

CORRUPT = CORPUS / "kafka-generated" / "corrupt"
NAME = "00000000000000000000.log"
# damaged size field of one batch of an intact segment: (the segment it was made from, the damaged batch's position)
DAMAGED_FRAMING = {"v2-bad-length-field": ("v2-none", 219), "v2-length-beyond-eof": ("v2-none", 219)}


def kafka_check(path):
    """Kafka's reading (``.check.txt``): batches {position: fields}, and its INVALID / FATAL / TRAILING lines."""
    batches, text = {}, open(f"{path}.check.txt").read()
    for line in text.splitlines():
        if line.startswith("batch "):
            fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            batches[int(fields["pos"])] = fields
    return batches, text


def damages(path, **kwargs) -> list[D.Damage]:
    with SegmentReader(path) as reader:
        return [d for d in D.readable(reader, **kwargs) if isinstance(d, D.Damage)]


# --- the corpus: what Kafka calls invalid or stops at ----------------------------------------------------------
@pytest.mark.parametrize("case", ["v0-crc-mismatch", "v2-crc-mismatch"])
def test_a_batch_kafka_calls_invalid_is_one_batch_damage_with_the_offsets_its_header_claims(case):
    log = CORRUPT / case / NAME
    batches, _ = kafka_check(log)
    (bad,) = [b for b in batches.values() if b["valid"] == "false"]
    (d,) = damages(log, show_invalid=False)
    start = int(bad["pos"])
    assert (d.kind, d.code, d.start, d.end) == (D.BATCH, "crc-mismatch", start, start + int(bad["size"]))
    lost = d.lost_offsets()
    assert tuple(lost) == (int(bad["base"]), int(bad["last"])) and lost.claimed
    # Kafka's own message names both CRCs; so does kdump's
    stored, computed = re.search(r"stored crc = (\d+), computed crc = (\d+)", _text(log)).groups()
    assert f"{stored} does not match the computed {computed}" in d.message
    # a reader that shows invalid batches (dump, as Kafka) sees no damage there
    assert damages(log) == []


def _text(log) -> str:
    return kafka_check(log)[1]


@pytest.mark.parametrize("case", sorted(DAMAGED_FRAMING))
def test_a_damaged_size_field_costs_the_offsets_of_the_batch_it_framed(case):
    """Kafka dies at the size field (or calls everything after it trailing bytes); the intact segment it was
    made from says which batch the damaged field framed, where the next one starts and which offsets it held."""
    log = CORRUPT / case / NAME
    intact, position = DAMAGED_FRAMING[case]
    original = json.loads((CORPUS / "kafka-generated" / intact / f"{NAME}.json").read_text())["batches"]
    i = next(k for k, b in enumerate(original) if b["position"] == position)
    lost_batch, after = original[i], original[i + 1]
    (d,) = damages(log)
    assert (d.kind, d.start, d.end, d.resumed) == (D.RANGE, position, after["position"], True)
    assert tuple(d.lost_offsets()) == (lost_batch["baseOffset"], lost_batch["lastOffset"])
    assert (d.last_good_offset, d.next_good_offset) == (original[i - 1]["lastOffset"], after["baseOffset"])
    text = _text(log)
    m = re.search(r"FATAL pos=(\d+) .*Found record size (-?\d+) smaller than minimum record overhead \(14\)", text)
    if m:  # Kafka's CorruptRecordException: the same rule, in kdump's one spelling of it
        assert int(m.group(1)) == position and d.code == "size-below-minimum"
        assert F.size_below_minimum(int(m.group(2))) in d.message
        assert "a log entry is at least 14 bytes" in d.message
    else:
        assert f"TRAILING pos={position} " in text and d.code == "size-beyond-end"


def test_a_truncated_tail_costs_the_offsets_after_the_last_batch_kafka_read():
    log = CORRUPT / "v2-truncated-tail" / NAME
    batches, text = kafka_check(log)
    pos, n = (int(x) for x in re.search(r"TRAILING pos=(\d+) bytes=(\d+)", text).groups())
    last = max(int(b["last"]) for b in batches.values())
    (d,) = damages(log)
    assert (d.kind, d.code, d.start, d.end, d.resumed) == (D.TAIL, "truncated-tail", pos, pos + n, False)
    assert tuple(d.lost_offsets()) == (last + 1, None)  # nothing follows in this file: open-ended
    assert tuple(d.lost_offsets(next_base=last + 11)) == (last + 1, last + 10)  # the next segment bounds it


# --- fixtures/corrupt: what make_corrupt.py put where --------------------------------------------------------------
FIXTURE_CASES = sorted(p for p in (FIXTURES / "corrupt").iterdir() if (p / "expected.json").exists()
                       and (p / NAME).exists())


@pytest.mark.parametrize("case", FIXTURE_CASES, ids=lambda p: p.name)
def test_damaged_ranges_have_the_byte_position_and_lost_offsets_the_fixture_was_made_with(case):
    expected = json.loads((case / "expected.json").read_text())
    ranges = [f for f in expected["findings"] if f["code"] == "damaged-range"]
    found = [d for d in damages(case / NAME, show_invalid=False) if d.kind == D.RANGE]
    assert [(d.start, d.to_dict()["firstOffset"], d.to_dict()["lastOffset"]) for d in found] == \
        [(f["position"], f["first_offset"], f["last_offset"]) for f in ranges]


def test_an_entry_with_an_unknown_magic_is_skipped_by_its_size_and_costs_its_own_offsets():
    log = FIXTURES / "corrupt" / "v2-magic-flipped" / NAME
    data = log.read_bytes()
    (d,) = damages(log)
    size = struct.unpack_from(">i", data, d.start + 8)[0]
    base, lod = struct.unpack_from(">q", data, d.start)[0], struct.unpack_from(">i", data, d.start + 23)[0]
    assert (d.kind, d.code, d.end) == (D.ENTRY, "magic-unknown", d.start + 12 + size)
    assert data[d.start + 16] == 7
    assert tuple(d.lost_offsets()) == (base, base + lod)  # between the good batches around it


def test_zero_padding_is_a_tail_that_costs_no_offsets():
    (d,) = damages(FIXTURES / "corrupt" / "v2-zero-padding" / NAME)
    assert (d.kind, d.code, d.zeros, d.start) == (D.TAIL, "zero-padding", True, 651)
    assert tuple(d.lost_offsets()) == (None, None) and d.to_dict()["firstOffset"] is None


# --- built here: the partition view, and walks that start mid-file --------------------------------------------------
T0 = 1_700_000_000_000


def _batch(base: int, n: int) -> bytes:
    b = RecordBatchBuilder(base_offset=base)
    for o in range(base, base + n):
        b.append(o, T0 + o, b"k", b"v%d" % o)
    return b.build()


def test_damage_that_runs_to_the_end_of_a_segment_is_bounded_by_the_next_segments_base_offset(tmp_path):
    first = _batch(0, 3) + _batch(3, 3)
    (tmp_path / NAME).write_bytes(first + b"\x00" * 8 + struct.pack(">i", 5) + b"garbage" * 20)
    (tmp_path / "00000000000000000010.log").write_bytes(_batch(10, 2))
    (d,) = PartitionLog(tmp_path).damage()
    assert (d.kind, d.start, d.resumed, d.next_base) == (D.RANGE, len(first), False, 10)
    assert tuple(d.lost_offsets()) == (6, 9)  # after the last good batch, before the next segment
    assert d.describe().endswith("no intact batch follows: offsets 6-9 are lost")
    with SegmentReader(tmp_path / NAME) as reader:  # the segment alone does not know where its offsets end
        (alone,) = [x for x in D.readable(reader) if isinstance(x, D.Damage)]
    assert tuple(alone.lost_offsets()) == (6, None)


def test_a_walk_that_starts_past_the_segment_start_does_not_claim_the_offsets_before_it(tmp_path):
    a, b, c = _batch(0, 2), _batch(2, 2), _batch(4, 2)
    bad = bytearray(b)
    struct.pack_into(">i", bad, 8, 5)  # a size field below 14
    (tmp_path / NAME).write_bytes(a + bytes(bad) + c)
    with SegmentReader(tmp_path / NAME, start=len(a)) as reader:
        (d,) = [x for x in D.readable(reader) if isinstance(x, D.Damage)]
    assert tuple(d.lost_offsets()) == (None, 3)
    assert "the offsets lost before 4 are not known (the walk started at byte" in d.describe()
    assert tuple(damages(tmp_path / NAME)[0].lost_offsets()) == (2, 3)


def test_an_entry_followed_by_a_crc_failing_batch_ends_where_that_batch_begins(tmp_path):
    batches = [_batch(0, 2), _batch(2, 2), _batch(4, 2), _batch(6, 2)]
    magic = bytearray(batches[1])
    magic[16] = 9
    crc = bytearray(batches[2])
    crc[-1] ^= 0xFF
    (tmp_path / NAME).write_bytes(batches[0] + bytes(magic) + bytes(crc) + batches[3])
    entry, batch = damages(tmp_path / NAME, show_invalid=False)
    assert (entry.kind, tuple(entry.lost_offsets())) == (D.ENTRY, (2, 3))
    assert (batch.kind, tuple(batch.lost_offsets())) == (D.BATCH, (4, 5))


# --- one rule, one sentence ---------------------------------------------------------------------------------------
def test_a_size_field_below_14_is_said_the_same_by_every_walk(tmp_path):
    good = _batch(0, 1)
    bad = bytearray(good * 2)
    struct.pack_into(">i", bad, len(good) + 8, 5)
    path = tmp_path / NAME
    path.write_bytes(bytes(bad))
    rule = F.size_below_minimum(5)
    with SegmentReader(path) as reader:
        list(reader.batches())
        assert reader.tail is not None and rule in reader.tail.message  # Kafka's walk
    with open(path, "rb") as f:
        stop = header_at(f.fileno(), len(good), len(bad))  # positional header reads (index work)
    assert isinstance(stop, F.Stop) and rule in stop.message
    (d,) = damages(path)  # the resynchronising walk
    assert rule in d.message


def test_dump_verify_spark_and_salvage_say_the_same_for_the_same_damage(tmp_path):
    from kdump.convert.salvage import plan
    from kdump.spark._source import walk
    from kdump.verify.walk import SegmentVerifier, VerifyOptions
    log = FIXTURES / "corrupt" / "v2-zero-hole" / NAME
    (d,) = damages(log)
    text = d.describe()
    assert text.startswith(f"{d.end - d.start} bytes (to byte {d.end}) are all zero: ")
    assert "offsets 6-11 are lost" in text  # expected.json: the damaged range costs offsets 6-11
    dump = run_cli("dump", log)
    assert dump.stderr.splitlines() == [f"kdump: {log}: at byte {d.start}: {text}"]
    spark: list = []
    list(walk(str(log), on_damage=spark.append))
    assert [x.to_dict()["description"] for x in spark] == [text]
    report = SegmentVerifier(str(log), VerifyOptions()).run()
    (finding,) = [f for f in report.findings if f.code == "damaged-range"]
    assert finding.message == d.describe(f"see {d.code}")  # the cause is its own finding beside it
    (dropped,) = plan(str(log)).dropped
    assert (dropped.start, dropped.end, dropped.code, dropped.reason) == (d.start, d.end, d.code, d.message)
    assert (dropped.first_offset, dropped.last_offset) == tuple(d.lost_offsets())


@pytest.mark.parametrize("magic", [1, 2])
def test_an_entry_too_small_for_its_format_is_said_the_same_by_every_walk(tmp_path, magic):
    from kdump.format.legacy import message_too_small
    from kdump.format.v2 import batch_too_small
    good = _batch(0, 1)
    head = bytearray(good[:40])
    struct.pack_into(">i", head, 8, 20)  # 20 bytes after the size field: below 22 (magic 1) and 49 (magic 2)
    head[16] = magic
    path = tmp_path / NAME
    path.write_bytes(bytes(head[:32]))
    rule = batch_too_small(32) if magic == 2 else message_too_small("magic 1 message", 20, 22)
    with SegmentReader(path) as reader:
        list(reader.batches())
        assert reader.tail is not None and rule in reader.tail.message  # the batch readers (v2.py, legacy.py)
    with open(path, "rb") as f:
        stop = header_at(f.fileno(), 0, 32)  # the positional header walk (framing.parse_header)
    assert isinstance(stop, F.Stop) and rule in stop.message
