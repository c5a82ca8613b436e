"""``--format json``/``records`` keys and values that need escaping (JSON documents as values: quotes; backslashes,
control characters, non-ASCII UTF-8) are written by the compiled renderer in C, the same bytes as ``json.dumps``
(the pure twin), and text that is not UTF-8 (overlong forms, surrogates, beyond U+10FFFF, cut sequences) still
as base64; at the speed of values that need none."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kdump.format.framing import entry_batch
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.render.jsonl import records_json_py

LIMIT = 1 << 28
NOT_UTF8 = [b"\xc0\x80", b"\xc1\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
            b"\xe0\x80\x80", b"\xf0\x80\x80\x80", b"\xc3", b"\xe2\x82", b"\x80", b"\xff"]
TEXT = [b'{"id":1,"user":"u\\"x","p":"a\\\\b"}', b"line\nbreak\ttab\r\x00\x01\x08\x0c\x1f\x7f",
        "caf\u00e9 \u2192 \U0001F600 \u202e \u200b".encode(), b'"' * 40, b"\\" * 33, b"x" * 15 + b'"' + b"y" * 17,
        "\u00e9".encode() * 20 + b"plain text of more than sixteen bytes" + b'"', b"\xed\x9f\xbf\xee\x80\x80",
        b"\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"]


@pytest.fixture(scope="module")
def fast():
    return pytest.importorskip("kdump.render._jsonl", reason="the compiled extension is not built").records_json


FORMS = ("words", "sse2", "ssse3")  # the compiled escaping's forms (kdump/_bytescan.pxd json_escape_copy)


@pytest.fixture(params=FORMS)
def form(request):
    """Each form of the compiled escaping in turn (8 bytes at a time; SSE2; SSSE3's byte shuffle), where this build
    and processor have it; the best one again afterwards."""
    compiled = pytest.importorskip("kdump.render._jsonl", reason="the compiled extension is not built")
    if request.param not in compiled.escape_forms():
        pytest.skip(f"this build or processor has no {request.param} form")
    previous = compiled.use_escape_form(request.param)
    yield request.param
    compiled.use_escape_form(previous)


def _batch(values, keys=None):
    b = RecordBatchBuilder(base_offset=0)
    for i, v in enumerate(values):
        b.append(i, 1_700_000_000_000 + i, None if keys is None else keys[i], v)
    data = b.build()
    batch = entry_batch(0, 0, len(data) - 12, data[12:])
    return batch, batch.columns(LIMIT)


def test_escaped_and_invalid_values_as_json_dumps(fast, form):
    values = TEXT + NOT_UTF8 + [t + bad + t for t in TEXT[:3] for bad in NOT_UTF8]
    batch, cols = _batch(values, keys=list(reversed(values)))
    assert fast(batch, cols, True) == records_json_py(batch, cols, True)
    got = json.loads(b"[" + fast(batch, cols, True) + b"]")
    for record, value in zip(got, values, strict=True):
        try:
            assert (record["value"], record["valueEncoding"]) == (value.decode("utf-8"), "utf8")
        except UnicodeDecodeError:
            assert record["valueEncoding"] == "base64"


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=70),
                          st.text(max_size=40).map(lambda s: s.encode("utf-8", "surrogatepass")),
                          st.sampled_from(TEXT + NOT_UTF8)), min_size=1, max_size=8))
def test_compiled_equals_pure(values):
    compiled = pytest.importorskip("kdump.render._jsonl")
    batch, cols = _batch(values, keys=values)
    expected = records_json_py(batch, cols, True)
    previous = compiled.use_escape_form("words")
    try:
        for name in compiled.escape_forms():  # each form: the last block of a value read with what follows it
            compiled.use_escape_form(name)  # (another record's bytes) or, at the buffer's end, copied out
            assert compiled.records_json(batch, cols, True) == expected, name
    finally:
        compiled.use_escape_form(previous)


JSON_DOCUMENTS = [b'{"id":%d,"user":"u%d","p":"%s","q":"\\%s"}' % (i, i * 7, b"ab" * (i % 23), b"c" * (i % 5))
                  for i in range(300)]


def test_json_documents_at_every_length_as_json_dumps(fast, form):
    """Values that are JSON documents (quotes at places that move with the digits: SSSE3's shuffle of a block with
    quotes and backslashes only), of every length around the 16-byte blocks, each followed by other bytes or last
    in its batch's buffer."""
    for end in (1, 7, 100, 300):
        batch, cols = _batch(JSON_DOCUMENTS[:end], keys=[b"k%d" % i for i in range(end)])
        assert fast(batch, cols, True) == records_json_py(batch, cols, True)


def test_the_best_form_is_the_default_and_the_processor_decides():
    """Unless told otherwise, the compiled escaping uses the best form this processor runs: SSSE3's where the
    processor says it has it (x86-64 Linux: /proc/cpuinfo), SSE2 on any other x86-64."""
    import platform
    import subprocess
    import sys
    from pathlib import Path
    compiled = pytest.importorskip("kdump.render._jsonl", reason="the compiled extension is not built")
    code = ("from kdump.render import _jsonl; from tests.test_json_escapes import _batch; b, c = _batch([b'\"x\"']); "
            "_jsonl.records_json(b, c, True); print(_jsonl.use_escape_form('words'), _jsonl.escape_forms()[-1])")
    used, best = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                cwd=Path(__file__).resolve().parents[1]).stdout.split()
    assert used == best
    if platform.machine() in ("x86_64", "AMD64"):
        assert "sse2" in compiled.escape_forms()
        try:
            with open("/proc/cpuinfo") as info:
                flags = next(line for line in info if line.startswith("flags")).split()
        except (OSError, StopIteration):
            return
        assert ("ssse3" in compiled.escape_forms()) == ("ssse3" in flags)


def test_escaped_text_never_goes_through_python(fast, monkeypatch):
    # the compiled path escapes in C: Python's encode_basestring, which the pure twin and the old compiled path
    # used for every such value, is not called (a timing test would not hold on a shared machine)
    import kdump.render._jsonl as compiled

    def through_python(text):
        raise AssertionError(f"escaped in Python: {text!r}")
    values = [v for v in TEXT]
    batch, cols = _batch(values, keys=values)
    expected = records_json_py(batch, cols, True)
    monkeypatch.setattr(compiled, "encode_basestring", through_python)
    assert fast(batch, cols, True) == expected
