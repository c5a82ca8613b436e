"""The framing core: every stop kind, the header-only walk against the batch walk, the resynchronising
event walk and live files. Inputs are built with ``struct`` and kdump's writer; expected values come from
what was written, never from the reader under test."""
from __future__ import annotations

import os
import struct
import zlib

import crc32c
import pytest

from corpus import CORPUS
from kdump.format import framing as F
from kdump.read.segment import (BadEntry, DamagedRange, GoodBatch, LargeEntry, SegmentReader, Stop, entries_in,
                           header_at, walk_headers)
from kdump.write.segment import RecordBatchBuilder, SegmentWriter, legacy_message

TS = 1_700_000_000_000
CORPUS_LOGS = sorted(p for p in CORPUS.rglob("*.log") if p.is_file())


def batch(base: int = 0, n: int = 3, **kw) -> bytes:
    b = RecordBatchBuilder(base_offset=base, **kw)
    for off in range(base, base + n):
        b.append(off, TS + off, b"k", b"value %d" % off)
    return b.build()


def v2_entry(base_offset: int, records: bytes = b"", *, magic: int = 2, size: int | None = None,
             attributes: int = 0, last_offset_delta: int = 0, max_ts: int = TS, pid: int = -1,
             count: int = 0) -> bytes:
    """A magic-2 entry spelled out field by field (DefaultRecordBatch's layout), CRC-32C over attributes..end."""
    after = struct.pack(">hiqqqhii", attributes, last_offset_delta, TS, max_ts, pid, -1, -1, count) + records
    length = 49 + len(records) if size is None else size
    return struct.pack(">qiib", base_offset, length, 7, magic) + struct.pack(">I", crc32c.crc32c(after)) + after


def write(tmp_path, data: bytes, name: str = "00000000000000000000.log"):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def tail_of(path, **kw) -> Stop:
    with SegmentReader(path, **kw) as reader:
        for _ in reader:
            pass
        return reader.tail


# --- every stop kind -----------------------------------------------------------------------------------
def test_end(tmp_path):
    data = batch(0) + batch(3)
    stop = tail_of(write(tmp_path, data))
    assert (stop.kind, stop.position, stop.length, stop.fatal) == ("end", len(data), 0, False)


def test_short_tail_is_kafkas_trailing_bytes(tmp_path):
    good = batch(0)
    stop = tail_of(write(tmp_path, good + b"\x01" * 17))
    assert (stop.kind, stop.position, stop.length, stop.code, stop.fatal) == ("short", len(good), 17,
                                                                                "truncated-tail", False)


def test_truncated_last_entry(tmp_path):
    good, cut = batch(0), batch(3)[:40]
    stop = tail_of(write(tmp_path, good + cut))
    assert (stop.kind, stop.position, stop.length, stop.fatal) == ("truncated", len(good), 40, False)
    assert stop.declared == len(batch(3))


def test_zero_padding(tmp_path):
    good = batch(0)
    stop = tail_of(write(tmp_path, good + bytes(4096)))
    assert (stop.kind, stop.position, stop.length, stop.code) == ("zeros", len(good), 4096, "zero-padding")


@pytest.mark.parametrize("bad, code", [
    (struct.pack(">qi", 3, 5) + bytes(40), "size-below-minimum"),  # size below 14
    (v2_entry(3, magic=7), "magic-unknown"),  # unknown magic, framing intact
    (v2_entry(3, size=20) + bytes(8), "batch-too-small"),  # magic 2 but smaller than its 49-byte header
])
def test_corrupt(tmp_path, bad, code):
    good = batch(0)
    stop = tail_of(write(tmp_path, good + bad))
    assert (stop.kind, stop.position, stop.code, stop.fatal) == ("corrupt", len(good), code, True)


def test_too_large(tmp_path):
    big = batch(0, 200)
    stop = tail_of(write(tmp_path, big), max_batch_bytes=1000)
    assert (stop.kind, stop.position, stop.code, stop.fatal) == ("too-large", 0, "batch-too-large", True)
    assert stop.declared == len(big)


def test_limit(tmp_path):
    a, b = batch(0), batch(3)
    path = write(tmp_path, a + b)
    stop = tail_of(path, max_bytes=len(a) + 30)
    assert (stop.kind, stop.position, stop.length) == ("limit", len(a), 30)
    assert tail_of(path, max_bytes=len(a)).kind == "limit"


def test_beyond_and_end_of_a_header_lookup(tmp_path):
    data = batch(0)
    path = write(tmp_path, data)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert header_at(fd, len(data) + 10, len(data)).kind == "beyond"
        assert header_at(fd, -1, len(data)).kind == "beyond"
        assert header_at(fd, len(data), len(data)).kind == "end"
        assert header_at(fd, 5, len(data)).kind in ("corrupt", "truncated")  # inside a batch: no entry
    finally:
        os.close(fd)


def test_incomplete_in_a_live_file(tmp_path):
    good = batch(0)
    path = write(tmp_path, good + batch(3)[:40])
    stop = tail_of(path, live=True)
    assert (stop.kind, stop.position, stop.length, stop.fatal, stop.code) == ("incomplete", len(good), 40, False, "")
    assert tail_of(path).kind == "truncated"  # the same bytes, not live
    short = write(tmp_path, good + batch(3)[:10], "00000000000000000001.log")
    assert tail_of(short, live=True).kind == "incomplete"
    with SegmentReader(path, live=True) as reader:
        assert [h.position for h in reader.headers()] == [0]
        assert reader.tail.kind == "incomplete"
    with SegmentReader(path, live=True) as reader:
        events = list(reader.events())
    assert [type(e) for e in events] == [GoodBatch, Stop] and events[-1].kind == "incomplete"


def test_damage_in_a_live_file_is_not_incomplete(tmp_path):
    path = write(tmp_path, batch(0) + struct.pack(">qi", 3, 5) + bytes(40))
    assert tail_of(path, live=True).kind == "corrupt"


def test_kinds_are_one_set():
    assert set(F.KINDS) == {"end", "short", "truncated", "incomplete", "zeros", "corrupt", "too-large", "limit",
                            "beyond"}


# --- parsing a header from bytes ------------------------------------------------------------------------
def test_v2_header_fields():
    entry = v2_entry(1000, bytes(30), attributes=0x30, last_offset_delta=4, max_ts=TS + 9, pid=77, count=5)
    h = F.parse_header(entry[:61], 123, len(entry))
    assert (h.position, h.size, h.magic, h.base_offset, h.last_offset, h.max_timestamp) == (
        123, len(entry), 2, 1000, 1004, TS + 9)
    assert (h.partition_leader_epoch, h.producer_id, h.records_count, h.is_control, h.is_transactional) == (
        7, 77, 5, True, True)


def test_legacy_header_fields():
    v1 = legacy_message(42, 1, b"k", b"v", TS)
    h = F.parse_header(v1[:61], 0, len(v1))
    assert (h.magic, h.base_offset, h.last_offset, h.max_timestamp, h.size) == (1, 42, 42, TS, len(v1))
    v0 = legacy_message(9, 0, None, b"value")
    h = F.parse_header(v0, 0, len(v0))
    assert (h.magic, h.base_offset, h.max_timestamp) == (0, 9, -1)
    # a compressed wrapper: the first offset needs decompression
    wrapper = struct.pack(">qiIBbq", 50, 22, 0, 1, 2, TS) + struct.pack(">ii", -1, 0)
    assert F.parse_header(wrapper, 0, len(wrapper)).base_offset is None


def test_legacy_magic_is_read_unsigned():
    """Kafka's framing compares the magic byte as a number 0..255: 0x80 is magic 128 (unknown), not -128."""
    entry = bytearray(legacy_message(1, 1, b"k", b"v", TS))
    entry[16] = 0x80
    stop = F.parse_header(bytes(entry), 0, len(entry))
    assert isinstance(stop, Stop) and stop.kind == "corrupt" and "128" in stop.message
    assert not F.header_sane(bytes(entry), 1 << 20, len(entry))


def test_header_stops_from_bytes():
    assert F.parse_header(b"\x00" * 10, 0, 10).kind == "short"
    assert F.parse_header(struct.pack(">qi", 0, 13) + bytes(10), 0, 22).kind == "corrupt"
    entry = batch(0)
    stop = F.parse_header(entry[:61], 0, 50)
    assert (stop.kind, stop.declared, stop.length) == ("truncated", len(entry), 50)


def test_sanity_and_crc_span():
    entry = batch(0)
    assert F.header_sane(entry[:61], 1 << 20, len(entry))
    assert not F.header_sane(entry[:61], 1 << 20, len(entry) - 1)  # does not fit
    assert F.header_sane(entry[:61], 1 << 20, len(entry) - 1, need_fit=False)
    stored, start, end, fn = F.crc_span(entry[:61])
    assert (start, end) == (21, len(entry)) and fn(entry[start:end]) == stored == struct.unpack(">I", entry[17:21])[0]
    v1 = legacy_message(1, 1, b"k", b"v", TS)
    stored, start, end, fn = F.crc_span(v1)
    assert (start, end) == (16, len(v1)) and stored == zlib.crc32(v1[16:])
    assert not F.header_sane(os.urandom(5) + bytes(56), 1 << 20, 61)


def test_entries_in_and_the_writer_refuse_partial_entries(tmp_path):
    a, b = batch(0), batch(3)
    found, stop = entries_in(a + b)
    assert [(pos, off) for pos, off, _size in found] == [(0, 0), (len(a), 3)] and stop.kind == "end"
    for data, message in ((a + b"\x00" * 5, "ends with 5 bytes that are not a whole entry"),
                          (a + b[:-1], f"entry at byte {len(a)} of the data declares size {len(b) - 12}, which does "
                                       "not fit"),
                          (a + struct.pack(">qi", 0, 3) + bytes(10), f"entry at byte {len(a)} of the data declares "
                                                                     "size 3")):
        path = tmp_path / "00000000000000000000.log"
        with pytest.raises(ValueError, match=message):
            with SegmentWriter(path) as w:
                w.write(data)
        assert not path.exists()


# --- header-only walk and batch walk agree -------------------------------------------------------------------
@pytest.mark.parametrize("path", CORPUS_LOGS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_headers_agree_with_batches_on_the_corpus(path):
    with SegmentReader(path) as reader:
        batches = [(b.position, b.size, b.magic, b.last_offset, b.max_timestamp) for b in reader.batches()]
        batch_tail = reader.tail
    with SegmentReader(path) as reader:
        headers = list(reader.headers())
        header_tail = reader.tail
    assert [(h.position, h.size, h.magic, h.last_offset, h.max_timestamp) for h in headers] == batches
    assert header_tail.position == batch_tail.position
    # the header walk reads no further than a header, so it does not tell zero padding from corruption
    assert header_tail.kind == ("corrupt" if batch_tail.kind == "zeros" else batch_tail.kind)
    fd = os.open(path, os.O_RDONLY)
    try:
        walked = list(walk_headers(fd, 0, os.fstat(fd).st_size))
    finally:
        os.close(fd)
    assert [h.position for h in walked[:-1]] == [b[0] for b in batches] and isinstance(walked[-1], Stop)


# --- the resynchronising event walk ----------------------------------------------------------------------------
def events_of(tmp_path, data: bytes, **kw) -> list:
    with SegmentReader(write(tmp_path, data), **kw) as reader:
        events = list(reader.events())
        assert reader.tail is events[-1]
    return events


def test_a_damaged_size_field_in_the_middle(tmp_path):
    a, b, c = batch(0), batch(3), batch(6)
    bad = bytearray(b)
    struct.pack_into(">i", bad, 8, 0x7FFFFF00)  # the size field of the middle batch, far past the end
    events = events_of(tmp_path, a + bytes(bad) + c)
    assert [type(e) for e in events] == [GoodBatch, DamagedRange, GoodBatch, Stop]
    assert events[0].batch.base_offset == 0 and events[2].batch.base_offset == 6
    d = events[1]
    assert (d.start, d.end, d.resumed, d.code) == (len(a), len(a) + len(b), True, "size-beyond-end")
    assert (d.last_good_offset, d.next_good_offset) == (2, 6)  # offsets 3-5 lost
    assert events[-1].kind == "end"


def test_a_size_field_below_the_minimum_in_the_middle(tmp_path):
    a, b, c = batch(0), batch(3), batch(6)
    bad = bytearray(b)
    struct.pack_into(">i", bad, 8, 5)
    events = events_of(tmp_path, a + bytes(bad) + c)
    assert [type(e) for e in events] == [GoodBatch, DamagedRange, GoodBatch, Stop]
    assert (events[1].code, events[1].start, events[1].end) == ("size-below-minimum", len(a), len(a) + len(b))


def test_an_unknown_magic_with_intact_framing_is_skipped_by_its_size(tmp_path):
    a, b, c = batch(0), bytearray(batch(3)), batch(6)
    b[16] = 7
    events = events_of(tmp_path, a + bytes(b) + c)
    assert [type(e) for e in events] == [GoodBatch, BadEntry, GoodBatch, Stop]
    bad = events[1]
    assert (bad.position, bad.size, bad.offset, bad.error.code, bad.batch) == (len(a), len(b), 3, "magic-unknown",
                                                                               None)


def test_a_crc_mismatch_is_a_bad_entry_with_its_batch(tmp_path):
    a, b, c = batch(0), bytearray(batch(3)), batch(6)
    b[-1] ^= 1
    events = events_of(tmp_path, a + bytes(b) + c)
    assert [type(e) for e in events] == [GoodBatch, BadEntry, GoodBatch, Stop]
    assert events[1].error.code == "crc-mismatch" and events[1].batch.base_offset == 3


def test_a_bad_entry_whose_size_points_nowhere_starts_a_damaged_range(tmp_path):
    a, b, c = batch(0), bytearray(batch(3)), batch(6)
    b[-1] ^= 1  # CRC broken
    struct.pack_into(">i", b, 8, len(b) - 12 - 7)  # and the size field points inside the batch
    events = events_of(tmp_path, a + bytes(b) + c)
    assert [type(e) for e in events] == [GoodBatch, BadEntry, DamagedRange, GoodBatch, Stop]
    d = events[2]
    assert (d.start, d.end, d.code, d.next_good_offset) == (len(a), len(a) + len(b), None, 6)


def test_damage_to_the_end(tmp_path):
    a = batch(0)
    events = events_of(tmp_path, a + struct.pack(">qi", 3, 5) + b"\xee" * 300)
    assert [type(e) for e in events] == [GoodBatch, DamagedRange, Stop]
    assert (events[1].resumed, events[1].end, events[1].last_good_offset) == (False, len(a) + 312, 2)
    assert events[-1].kind == "corrupt"


def test_a_zero_filled_hole_and_tails(tmp_path):
    a, c = batch(0), batch(6)
    events = events_of(tmp_path, a + bytes(500) + c + bytes(100))
    assert [type(e) for e in events] == [GoodBatch, DamagedRange, GoodBatch, Stop]
    assert events[1].zeros and events[-1].kind == "zeros"
    assert events_of(tmp_path, a + b"\x01" * 10)[-1].kind == "short"
    assert events_of(tmp_path, a + batch(3)[:40])[-1].kind == "truncated"


def test_an_entry_above_the_batch_limit_is_checked_without_reading_it(tmp_path):
    big, c = batch(0, 200), batch(200)
    events = events_of(tmp_path, big + c, max_batch_bytes=1000)
    assert [type(e) for e in events] == [LargeEntry, GoodBatch, Stop]
    assert (events[0].size, events[0].header.last_offset) == (len(big), 199)
    damaged = bytearray(big)
    damaged[-1] ^= 1
    events = events_of(tmp_path, bytes(damaged) + c, max_batch_bytes=1000)
    assert [type(e) for e in events] == [BadEntry, GoodBatch, Stop] and events[0].error.code == "crc-mismatch"


# --- the v2 header rules: one table, and the fast predicate that must agree with it --------------------------
def test_every_header_rule_has_an_example_that_breaks_it_alone_and_the_fast_predicate_rejects_it():
    assert F.v2_header_fast_ok(F.SOUND_V2_HEADER) and not F.v2_header_problems(F.SOUND_V2_HEADER)
    for rule in F.V2_HEADER_RULES:
        header = F.SOUND_V2_HEADER._replace(**rule.example)
        assert [r for r in F.V2_HEADER_RULES if r.broken(header)] == [rule], rule.code
        # a rule the fast predicate does not know would let this header through unchecked
        assert not F.v2_header_fast_ok(header), f"v2_header_fast_ok does not know the rule {rule.code}"


def test_the_fast_predicate_says_exactly_what_the_header_rules_say():
    """A grid of boundary values of every field the rules read (an independent enumeration): the fast
    predicate accepts a header exactly when no rule of the table is broken."""
    import itertools
    grid = {
        "attributes": (-1, 0, 1, 4, 5, 7, 0x08, 0x10, 0x20, 0x30, 0x7F, 0x80, 0x100),
        "last_offset_delta": (-2, -1, 0, 2),
        "records_count": (-1, 0, 1, 3, 4),
        "producer_id": (-2, -1, 0, 7),
        "producer_epoch": (-2, -1, 0),
        "base_sequence": (-2, -1, 0),
        "max_timestamp": (-2, -1, 0),
    }
    for values in itertools.product(*grid.values()):
        header = F.V2HeaderFields(**dict(zip(grid, values)))
        assert F.v2_header_fast_ok(header) == (not F.v2_header_problems(header)), header


def test_resynchronisation_sanity_uses_the_table_rules_marked_for_it():
    """header_sane rejects a header breaking any rule marked ``sanity`` (codec, attributes, lastOffsetDelta,
    record count), CRC aside."""
    good = bytearray(batch(0))
    assert F.header_sane(bytes(good[:61]), 1 << 20, len(good))
    for rule in (None, *F.SANITY_RULES):
        bad = bytearray(good)
        header = F.SOUND_V2_HEADER._replace(**(rule.example if rule is not None else {}))
        # the rule's example written into a real header (attributes at byte 21, lastOffsetDelta at 23, record
        # count at 57: Kafka's DefaultRecordBatch layout)
        struct.pack_into(">h", bad, 21, header.attributes)
        struct.pack_into(">i", bad, 23, header.last_offset_delta)
        struct.pack_into(">i", bad, 57, header.records_count)
        # (None: the sound header's values, which must pass, or the test would prove nothing)
        assert F.header_sane(bytes(bad[:61]), 1 << 20, len(bad)) == (rule is None), rule
