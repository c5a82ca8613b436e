"""``--format json`` records: the compiled writer (kdump.render._jsonl.records_json) against the pure one
(kdump.render.jsonl.records_json_py, ``json.dumps`` of ``record_objects``), on generated batches (text and
binary keys, values and headers, null keys and values, quotes, control and non-ASCII characters, sequences
that wrap, every timestamp type) and on every magic-2 batch of the corpus; and the renderer's terminal mode.
The whole-corpus CLI output (both backends) is covered by tests/test_dump_corpus.py and the schema tests.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdump.format.types import TimestampType
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.text.escape import escape_json
from kdump.render.jsonl import JsonLinesRenderer, record_objects, records_json_py
from kdump.read.segment import SegmentReader

ROOT = Path(__file__).resolve().parent.parent
CORPUS_LOGS = sorted(p for p in (ROOT / "fixtures" / "corpus").rglob("*.log") if p.is_file())
LIMIT = 1 << 28


@pytest.fixture(scope="module")
def fast():
    return pytest.importorskip("kdump.render._jsonl", reason="the compiled extension is not built").records_json


data = st.one_of(st.none(), st.binary(max_size=12), st.text(max_size=8).map(lambda s: s.encode("utf-8", "surrogatepass")),
                 st.sampled_from([b'"\\', b"\x00\x1f\x7f", "\u0085\u202e\u00e9\U0001f600".encode(), b"\xc3"]))
headers = st.lists(st.tuples(st.text(max_size=5), data), max_size=3)


@st.composite
def batch_files(draw, tmp):
    ts_type = draw(st.sampled_from(list(TimestampType)[1:]))
    producer = draw(st.sampled_from([(-1, -1, -1), (7, 0, 2**31 - 3), (7, 1, 0)]))
    b = RecordBatchBuilder(base_offset=draw(st.sampled_from([0, 5, 2**62])), timestamp_type=ts_type,
                           log_append_time=1_700_000_000_000 if ts_type is TimestampType.LOG_APPEND_TIME else None,
                           producer_id=producer[0], producer_epoch=producer[1], base_sequence=producer[2])
    for i, (key, value, hdrs) in enumerate(draw(st.lists(st.tuples(data, data, headers), min_size=1, max_size=6))):
        b.append(b.base_offset + i, draw(st.sampled_from([-1, 0, 1_700_000_000_000 + i])), key, value, hdrs)
    path = tmp / "00000000000000000000.log"
    path.write_bytes(b.build())
    return path


def _batches(path):
    with SegmentReader(str(path)) as reader:
        for batch in reader:
            if batch.magic == 2 and not batch.is_control and batch.is_valid():
                try:
                    yield batch, batch.columns(LIMIT)
                except Exception:  # cannot be decompressed: nothing for either writer
                    continue


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(st.data(), st.booleans())
def test_same_text_generated(fast, tmp_path, data, print_data):
    path = data.draw(batch_files(tmp_path))
    for batch, cols in _batches(path):
        ours = fast(batch, cols, print_data)
        assert ours == records_json_py(batch, cols, print_data)
        # and the text is the record objects, read back by an independent parser
        assert json.loads(b"[" + ours + b"]") == record_objects(batch, cols, print_data)


@pytest.mark.parametrize("path", CORPUS_LOGS, ids=[str(p.relative_to(ROOT / "fixtures" / "corpus")) for p in CORPUS_LOGS])
def test_same_text_corpus(fast, path):
    for batch, cols in _batches(path):
        for print_data in (False, True):
            assert fast(batch, cols, print_data) == records_json_py(batch, cols, print_data)


def test_numbers_beyond_int64_take_the_pure_path(fast, tmp_path):
    """An offset past int64 (a hostile base offset plus its delta) is written as the pure path writes it."""
    b = RecordBatchBuilder(base_offset=2**63 - 2)
    b.append(2**63 - 2, 0, b"k", b"v")
    b.append(2**63 - 1, 0, b"k", b"v")
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b.build())
    for batch, cols in _batches(path):
        cols.offsets[1] = 2**63  # what a delta past the end of int64 decodes to
        assert fast(batch, cols, True) == records_json_py(batch, cols, True)
        assert b'"offset": 9223372036854775808' in fast(batch, cols, True)


def test_terminal_mode_escapes_records_too(tmp_path):
    """On a terminal the records' C1 and bidi characters are \\u escapes, as in the batch's other members."""
    b = RecordBatchBuilder(base_offset=0)
    b.append(0, 0, "\u202ekey".encode(), "val\u0085".encode(), [("h\u202e", b"\xe2\x80\xae")])
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b.build())
    texts = {}
    for terminal in (False, True):
        out = io.StringIO()
        r = JsonLinesRenderer(out, print_data=True, deep=True, terminal=terminal)
        r.begin_file(str(path), None)
        for batch, cols in _batches(path):
            r.batch(batch, cols)
        texts[terminal] = out.getvalue()
    assert "\u202e" in texts[False] and "\u202e" not in texts[True]
    assert texts[True] == escape_json(texts[False])
    assert json.loads(texts[True]) == json.loads(texts[False])


def test_every_byte_class_at_every_word_position(fast, tmp_path):
    """The compiled writers test 8 bytes at a time whether a key or value can be copied as it is (printable
    ASCII without quote or backslash for JSON, ASCII for the text lines): a byte of each class at each
    place of a value longer than two words gives the pure writers' bytes."""
    lines = pytest.importorskip("kdump.render._lines")
    from kdump.render.kafka_text import render_v2_lines_py
    b = RecordBatchBuilder(base_offset=0)
    n = 0
    for special in (0x00, 0x1F, 0x20, 0x21, 0x22, 0x5C, 0x7E, 0x7F, 0x80, 0xC3, 0xFF):
        for at in range(19):
            value = bytearray(b"abcdefghijklmnopqrs")
            value[at] = special
            b.append(n, 0, bytes(value[: at + 1]), bytes(value))
            n += 1
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b.build())
    (batch, cols), = _batches(path)
    assert cols.count == n
    assert fast(batch, cols, True) == records_json_py(batch, cols, True)
    assert (lines.render_v2_lines(cols, "CreateTime", 0, -1, True, False)
            == render_v2_lines_py(cols, "CreateTime", 0, -1, True, False))
