"""``--format records``' compiled writer (kdump.render._jsonl.records_lines: each record's object whole, between a
head and the batch's members given once per batch) against its pure twin (kdump.render.records.records_lines_py,
``json.dumps`` of ``record_objects``), on hostile keys, values and headers (quotes, backslashes, control
characters, invalid UTF-8, non-ASCII, empty and null), magic 2 batches and plain magic 0/1 messages; each line read
back by an independent parser is the record's object with the head's and the tail's members. Also the compiled
escaping of keys and values (kdump/_bytescan.pxd ``json_escape_copy``, shared with ``--format json``) with a
character to escape at every place of values around its 16-byte blocks."""
from __future__ import annotations

import io
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.format.framing import entry_batch
from kdump.format.legacy_builder import legacy_message
from kdump.format.types import TimestampType
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.render.jsonl import _json, record_objects, records_json_py
from kdump.render.records import records_lines_py

LIMIT = 1 << 28
HOSTILE = [b"", b'"', b"\\", b'{"id":1,"user":"u\\"x","p":"a\\\\b"}', b"\x00\x01\x08\x09\x0a\x0c\x0d\x1f\x7f",
           "caf\u00e9 \u2192 \U0001F600 \u202e \u200b \u2028".encode(), b"\xc3", b"\xff\xfe", b"\xed\xa0\x80",
           b"\xf4\x90\x80\x80", b"\xc0\x80", b'"' * 20 + b"\\" * 20, b"x" * 15 + b'"' + "\u00e9".encode() * 9]
data = st.one_of(st.none(), st.sampled_from(HOSTILE), st.binary(max_size=40),
                 st.text(max_size=30).map(lambda s: s.encode("utf-8", "surrogatepass")))
headers = st.lists(st.tuples(st.text(max_size=5), data), max_size=3)
# what RecordsRenderer gives: the topic and partition from the directory's name, then the batch's members
HEADS = [_json({"topic": None, "partition": None})[:-1] + b", ",
         _json({"topic": 'or"ders\u00e9\\', "partition": 3})[:-1] + b", "]
TAIL_MEMBERS = {"magic": 2, "codec": "none", "producerId": -1, "isTransactional": False, "path": "d/\u00e9\"x.log",
                "position": 61}
TAIL = b", " + _json(TAIL_MEMBERS)[1:] + b"\n"


@pytest.fixture(scope="module")
def fast():
    return pytest.importorskip("kdump.render._jsonl", reason="the compiled extension is not built").records_lines


def _v2(records, ts_type=TimestampType.CREATE_TIME, producer=(-1, -1, -1)):
    b = RecordBatchBuilder(base_offset=0, timestamp_type=ts_type,
                           log_append_time=1_700_000_000_000 if ts_type is TimestampType.LOG_APPEND_TIME else None,
                           producer_id=producer[0], producer_epoch=producer[1], base_sequence=producer[2])
    for i, (key, value, hdrs) in enumerate(records):
        b.append(i, 1_700_000_000_000 + i, key, value, hdrs)
    raw = b.build()
    batch = entry_batch(0, 0, len(raw) - 12, raw[12:])
    return batch, batch.columns(LIMIT)


def _check(fast, batch, cols, head):
    ours = fast(batch, cols, head, TAIL)
    assert ours == records_lines_py(batch, cols, head, TAIL)
    lines = ours.split(b"\n")
    assert lines.pop() == b""
    want_head = json.loads(head[:-2] + b"}")
    assert [json.loads(line) for line in lines] == [
        {**want_head, **record, **TAIL_MEMBERS} for record in record_objects(batch, cols, True)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(data, data, headers), min_size=1, max_size=6),
       st.sampled_from(list(TimestampType)[1:]), st.sampled_from([(-1, -1, -1), (7, 0, 2**31 - 3)]),
       st.sampled_from(HEADS))
def test_compiled_records_lines_as_the_pure_twin(fast, records, ts_type, producer, head):
    batch, cols = _v2(records, ts_type, producer)
    _check(fast, batch, cols, head)


@settings(max_examples=100, deadline=None)
@given(data, data, st.sampled_from([0, 1]), st.sampled_from(HEADS))
def test_plain_legacy_message_as_the_pure_twin(fast, key, value, magic, head):
    entry = legacy_message(5, magic, key, value, timestamp=1_700_000_000_000)
    batch = entry_batch(0, 5, len(entry) - 12, entry[12:])
    _check(fast, batch, batch.columns(LIMIT), head)


def test_hostile_values_and_empty_batch(fast):
    records = [(k, v, [("h\"\\", v), ("", None)]) for k in [*HOSTILE, None] for v in (None, b"", HOSTILE[3])]
    batch, cols = _v2(records)
    for head in HEADS:
        _check(fast, batch, cols, head)
    assert fast(batch, cols.slice(0, 0), HEADS[0], TAIL) == b""


def test_escape_at_every_place_around_16_byte_blocks(fast):
    """A character to escape (or a multi-byte one, or a byte that is not UTF-8) at each place of values of 15 to 49
    bytes: the compiled escaping stores 16 bytes at a time and stops at the first to escape."""
    records = []
    for special in (b"\x00", b"\x1f", b'"', b"\\", b"\x7f", "\u00e9".encode(), "\u20ac".encode(),
                    "\U0001F600".encode(), b"\xff", b"\xc3"):
        for n in (15, 16, 17, 31, 32, 33, 49):
            for at in range(n - len(special) + 1):
                value = bytearray(b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP"[:n])
                value[at:at + len(special)] = special
                records.append((bytes(value[:at + 1]), bytes(value) + b'"', []))
    batch, cols = _v2(records)
    compiled = pytest.importorskip("kdump.render._jsonl")
    previous = compiled.use_escape_form("words")
    try:
        for form in compiled.escape_forms():  # each form of the escaping (kdump/_bytescan.pxd json_escape_copy)
            compiled.use_escape_form(form)
            assert compiled.records_json(batch, cols, True) == records_json_py(batch, cols, True), form
            _check(fast, batch, cols, HEADS[1])
    finally:
        compiled.use_escape_form(previous)


def test_handed_to_a_writer_from_the_buffer_it_was_built_in(fast):
    """With a writer, the same bytes are handed to it (a view of the compiled writer's own buffer, released when
    the call returns: a sink that keeps it reads an error, never the next batch's bytes)."""
    batch, cols = _v2([(k, v, [("h", v)]) for k, v in zip(HOSTILE, reversed(HOSTILE), strict=True)])
    expected = records_lines_py(batch, cols, HEADS[1], TAIL)
    for writer in (fast, records_lines_py):
        copied = io.BytesIO()
        assert writer(batch, cols, HEADS[1], TAIL, copied.write) is None
        assert copied.getvalue() == expected
    kept: list = []
    fast(batch, cols, HEADS[1], TAIL, kept.append)
    fast(batch, cols, HEADS[0], TAIL)
    with pytest.raises(ValueError):
        bytes(kept[0])


def test_json_records_handed_to_a_writer(fast):
    """``--format json``'s records are handed to the output stream the same way (records_json's writer)."""
    compiled = pytest.importorskip("kdump.render._jsonl").records_json
    batch, cols = _v2([(k, v, [("h", v)]) for k, v in zip(HOSTILE, reversed(HOSTILE), strict=True)])
    for print_data in (False, True):
        expected = records_json_py(batch, cols, print_data)
        for writer in (compiled, records_json_py):
            copied = io.BytesIO()
            assert writer(batch, cols, print_data, copied.write) is None
            assert copied.getvalue() == expected


def test_a_large_batch_handed_over_in_pieces(fast):
    """A batch whose lines outgrow the piece the compiled writer hands over at once (128 KiB) reaches the writer
    whole and in order."""
    batch, cols = _v2([(b"k%d" % i, HOSTILE[3] * 8 + b"%d" % i, []) for i in range(1000)])
    compiled = pytest.importorskip("kdump.render._jsonl").records_json
    for write_with, pure in ((lambda w: fast(batch, cols, HEADS[1], TAIL, w),
                              records_lines_py(batch, cols, HEADS[1], TAIL)),
                             (lambda w: compiled(batch, cols, True, w), records_json_py(batch, cols, True))):
        pieces: list[bytes] = []
        write_with(lambda data, pieces=pieces: pieces.append(bytes(data)))
        assert len(pieces) > 2 and b"".join(pieces) == pure
