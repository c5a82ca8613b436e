"""Issue 22 item 2, the last gap: a key, value or header value too large to render whole is written a slice at a
time (kdump/render/large_fields.py), and the output is byte for byte the whole field's.

The references: Java's decoding of the whole field (``java_utf8``, checked against Java's own output in
fixtures/java-utf8) for the slicing rule; the dump of the same file with the fields rendered whole (the default
threshold, far above these fields) for the renderers; kafka-python's record module for the bytes a JSON dump
gives back. The thresholds are lowered here (a field above 64 bytes, slices of 5 or 64 bytes) so that every field
crosses many slice edges; tests/test_memory_bound.py measures the memory of 64 MiB values in subprocesses.
"""
from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch
from support.cli import run_cli

import kdump.render.large_fields as LF
from kdump import codec as C
from kdump.format.legacy_builder import legacy_message
from kdump.format.text import java_utf8, utf8_slices
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.read.segment import SegmentReader
from kdump.render.jsonl import JsonLinesRenderer
from kdump.render.kafka_text import KafkaTextRenderer

NAME = "00000000000000000000.log"
T0 = 1_700_000_000_000

# --- the slicing rule: slices decode as the whole does ------------------------------------------------------

# bytes a UTF-8 decoder must take care with: continuation bytes, lead bytes of every length, the overlong and
# out-of-range leads, Java's encoded surrogates (ED A0-BF), a 4-byte emoji, valid text
_PIECES = [b"\x80", b"\xbf", b"\x80" * 7, b"\xc2", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc0\xaf", b"\xe0\x80\xaf",
           b"\xed\xa0\x80", b"\xed\xbf\xbf\x80", b"\xf4\x90\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xff", b"\xfe",
           "😀".encode(), "é€".encode(), b"a", b'"\\\n\x01']
_DATA = st.one_of(st.binary(max_size=300),
                  st.lists(st.sampled_from(_PIECES), max_size=80).map(b"".join),
                  st.lists(st.one_of(st.sampled_from(_PIECES), st.binary(max_size=6)), max_size=60).map(b"".join))


def _valid(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@settings(max_examples=3000, deadline=None)
@given(_DATA, st.integers(4, 12), st.integers(0, 3))
def test_slices_decode_as_the_whole_does(data, size, skip):
    start = min(skip, len(data))  # slices of a field that starts inside a buffer
    bounds = list(utf8_slices(data, start, len(data), size))
    assert [a for a, _ in bounds[1:]] == [b for _, b in bounds[:-1]]  # consecutive, covering the field
    assert (bounds[0][0], bounds[-1][1]) == (start, len(data)) if bounds else start == len(data)
    assert all(b - a <= size for a, b in bounds) and all(b - a >= size - 3 for a, b in bounds[:-1])
    whole = data[start:]
    assert "".join(java_utf8(data[a:b]) for a, b in bounds) == java_utf8(whole)
    assert all(_valid(data[a:b]) for a, b in bounds) == _valid(whole)


def test_a_run_of_continuation_bytes_is_cut_after_three():
    data = b"a" + b"\x80" * 20
    assert list(utf8_slices(data, 0, len(data), 4)) == [(0, 4), (4, 8), (8, 12), (12, 16), (16, 20), (20, 21)]
    emoji = "😀".encode() * 3  # F0 9F 98 80: each cut goes before a lead byte
    assert list(utf8_slices(emoji, 0, 12, 6)) == [(0, 4), (4, 8), (8, 12)]
    with pytest.raises(ValueError):
        list(utf8_slices(data, 0, len(data), 3))


# --- the renderers: sliced output == whole output -------------------------------------------------------------

INVALID = (b"\xff" * 70 + b"\xed\xa0\x80" + b"ok" + b"\xf0\x9f\x98" + b"\xc0\xaf" + b"\x80" * 9 + "😀".encode()
           + b"\xe2\x82")
ESCAPES = ('"quoted" \\ back\nslash\t\x01\x1f \u2028 \x85 é€😀 \u202ebidi' * 4).encode()
EMOJI = "😀".encode() * 40  # 4-byte characters across every slice edge
TEXT_THEN_BAD = b"plain text" * 10 + b"\xe2\x82"  # invalid in its last slice only


def _v2_segment(codec: int) -> bytes:
    builder = RecordBatchBuilder(0, codec)
    builder.append(0, T0, b"k0", b"small", [("h", b"v")])
    builder.append(1, T0, INVALID, ESCAPES, [("big-text", ESCAPES), ("big-binary", INVALID), ("null", None)])
    builder.append(2, T0, None, EMOJI)
    builder.append(3, T0, EMOJI, None, [("small", b"x"), ("big-bad-end", TEXT_THEN_BAD)])
    builder.append(4, T0, b"k4", TEXT_THEN_BAD)
    builder.append(5, T0, b"k5", b"small")
    first_large = RecordBatchBuilder(6, codec)  # a batch whose first record is large
    first_large.append(6, T0, ESCAPES, INVALID)
    first_large.append(7, T0, b"k7", b"v7")
    return builder.build() + first_large.build()


def _legacy_segment(magic: int) -> bytes:
    """Plain messages (read as runs) and a gzip wrapper holding large fields (read as a batch)."""
    plain = legacy_message(0, magic, b"k", INVALID, T0) + legacy_message(1, magic, None, ESCAPES, T0)
    values = [(b"k2", b"small"), (INVALID, ESCAPES), (None, EMOJI), (EMOJI, None), (b"k6", TEXT_THEN_BAD)]
    inner = b"".join(legacy_message(i if magic else 2 + i, magic, k, v, T0) for i, (k, v) in enumerate(values))
    wrapper = legacy_message(6, magic, None, C.compress(C.GZIP, inner, magic=magic), T0, codec=C.GZIP)
    return plain + wrapper


SEGMENTS = {
    "v2": lambda: _v2_segment(C.NONE),
    "v2-zstd": lambda: _v2_segment(C.ZSTD),
    "magic-1": lambda: _legacy_segment(1),
    "magic-0": lambda: _legacy_segment(0),
}
OPTIONS = {
    "text": [],
    "text-skip-metadata": ["--skip-record-metadata"],
    "text-scala": ["--compat", "scala"],
    "text-scala-skip": ["--compat", "scala", "--skip-record-metadata"],
    "text-iso-headers": ["--time-format", "iso", "--header-decoder", "hex"],
    "text-hex-keys": ["--key-decoder", "hex"],
    "json": ["--format", "json"],
    "json-iso": ["--format", "json", "--time-format", "iso"],
    "json-header-decoder": ["--format", "json", "--header-decoder", "hex"],
}


@pytest.fixture
def sliced(monkeypatch):
    """Fields above 64 bytes written in slices of ``size`` bytes; returns the fields (lengths) written so."""
    written: list[int] = []
    slices = LF._slices

    def counted(data, pos, n):
        written.append(n)
        return slices(data, pos, n)

    def lower(size: int) -> list[int]:
        monkeypatch.setattr(LF, "LARGE_FIELD_BYTES", 64)
        monkeypatch.setattr(LF, "SLICE_BYTES", size)
        monkeypatch.setattr(LF, "_slices", counted)
        return written
    return lower


def _segment(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / NAME
    path.write_bytes(data)
    return path


def _dump(path: Path, options: list[str]) -> bytes:
    result = run_cli("dump", "--deep-iteration", "--print-data-log", *options, path)
    assert result.exit_code == 0, result.output
    return result.stdout_bytes


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("segment", SEGMENTS)
@pytest.mark.parametrize("options", OPTIONS)
@pytest.mark.parametrize("size", [5, 64])
def test_a_dump_with_fields_in_slices_is_the_dump_with_fields_whole(tmp_path, sliced, segment, options, size):
    path = _segment(tmp_path, SEGMENTS[segment]())
    whole = _dump(path, OPTIONS[options])
    written = sliced(size)
    assert _dump(path, OPTIONS[options]) == whole
    assert written, "no field was written in slices"


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("format_", ["text", "json"])
def test_records_in_chunks_with_large_records_at_the_edges(tmp_path, sliced, monkeypatch, format_):
    # chunks of 2 records: a large record opens a chunk (more_records), ends one, or is alone in one
    from kdump.format import columns
    path = _segment(tmp_path, _v2_segment(C.ZSTD))
    options = ["--format", format_]
    whole = _dump(path, options)
    monkeypatch.setattr(columns, "RECORDS_PER_CHUNK", 2)
    written = sliced(7)
    assert _dump(path, options) == whole
    assert written


def test_a_json_dump_gives_back_the_bytes_kafka_reads(tmp_path, sliced):
    # the reference: kafka-python's record module reading the same batches
    data = _v2_segment(C.NONE)
    path = _segment(tmp_path, data)
    sliced(5)
    objects = [json.loads(line) for line in _dump(path, ["--format", "json"]).splitlines()]
    ours = [r for obj in objects for r in obj["records"]]
    theirs = []
    pos = 0
    while pos < len(data):
        size = int.from_bytes(data[pos + 8:pos + 12], "big") + 12  # offset, length: the entry's prefix
        theirs += list(DefaultRecordBatch(bytearray(data[pos:pos + size])))
        pos += size

    def back(text, encoding):
        return None if encoding is None else base64.b64decode(text) if encoding == "base64" else text.encode()
    assert len(ours) == len(theirs) == 8
    for r, k in zip(ours, theirs, strict=True):
        assert back(r["key"], r["keyEncoding"]) == k.key and back(r["value"], r["valueEncoding"]) == k.value
        assert [(h["key"], back(h["value"], h["valueEncoding"])) for h in r["headers"]] == k.headers
        assert r["valueEncoding"] in (None, "utf8" if _valid(k.value or b"") else "base64")


def test_a_text_dump_prints_javas_text_of_the_whole_field(tmp_path, sliced):
    path = _segment(tmp_path, _v2_segment(C.NONE))
    sliced(5)
    text = _dump(path, []).decode("utf-8")  # (the values hold line breaks: the lines are found by what follows)
    assert f" key: {java_utf8(INVALID)} payload: {java_utf8(ESCAPES)}\n| offset: 2 " in text
    assert f" payload: {EMOJI.decode()}\n| offset: 3 " in text


# --- where there is no binary stream beneath the output: text written as text, escaped on a terminal --------

class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _render(renderer, path: Path) -> str:
    with SegmentReader(path) as reader:
        for batch in reader:
            for cols in batch.column_chunks(1 << 24, 3):  # chunks of 3 records
                if cols is not None:
                    renderer.batch(batch, cols)
    return renderer.out.getvalue()


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("terminal", [False, True])
@pytest.mark.parametrize("kind", ["text", "json"])
def test_text_streams_and_terminals(tmp_path, sliced, kind, terminal):
    from kdump.decode.payload import load_decoder
    path = _segment(tmp_path, _v2_segment(C.NONE))
    string = load_decoder("string")

    def render() -> str:
        out = _Terminal() if terminal else io.StringIO()
        if kind == "text":
            renderer = KafkaTextRenderer(out, print_data=True, key_decoder=string, value_decoder=string,
                                         terminal=terminal)
        else:
            renderer = JsonLinesRenderer(out, print_data=True, deep=True, terminal=terminal)
        return _render(renderer, path)
    whole = render()
    written = sliced(5)
    assert render() == whole
    assert written
    if terminal:
        assert "\u202e" not in whole and "\x01" not in whole  # (the escaping is the renderers' own)
