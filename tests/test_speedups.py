"""The compiled record decoder (kdump.format._records.parse_records) against the pure one (parse_records_py),
and the compiled record-line renderer (kdump.render._lines.render_v2_lines) against render_v2_lines_py.

Differential: both must give the same RecordColumns (every list) and the same FormatError (code and
message) or None, for payloads built by the independent encoder below (valid records, overlong and huge
varints, negative and wrong lengths, wrong counts, truncation at every position, bit flips) and for
every magic-2 batch of the corpus. The tests that need the extension are skipped when it is not built;
``test_backend_is_compiled_when_required`` fails instead when ``KDUMP_REQUIRE_COMPILED=1``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import kdump
import kdump._backend as backend
from kdump.format.columns import RecordSummary
from kdump.format.v2 import RecordBatch, RecordColumns, parse_records_py, summarize_records_py
from kdump.read.segment import SegmentReader

ROOT = Path(__file__).resolve().parent.parent
CORPUS_LOGS = sorted(p for p in (ROOT / "fixtures" / "corpus").rglob("*.log") if p.is_file())
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
EMPTY = ()
COLUMNS = ("count", "offsets", "timestamps", "attributes", "key_pos", "key_len", "value_pos", "value_len",
           "headers", "sizes")


def _on(name: str) -> bool:
    return os.environ.get(name, "") in ("1", "true", "yes")


# --- the one test that runs without the extension ----------------------------------------------------

def test_backend_is_compiled_when_required():
    """CI sets KDUMP_REQUIRE_COMPILED=1: there a missing or broken extension is a failure, not a skip."""
    if not (_on("KDUMP_REQUIRE_COMPILED") or os.environ.get("CI") == "true"):
        pytest.skip("neither KDUMP_REQUIRE_COMPILED=1 nor CI=true is set")
    import kdump.format._records  # noqa: F401  (an ImportError here says why it is not built)
    import kdump.render._lines  # noqa: F401
    import kdump.render._jsonl  # noqa: F401
    if _on("KDUMP_PURE_PYTHON"):  # the pure run of the suite: the switch must still win
        assert backend.BACKEND == "python"
    else:
        assert backend.BACKEND == "compiled", f"kdump._backend.BACKEND is {backend.BACKEND!r}"


@pytest.fixture(scope="module")
def fast():
    return pytest.importorskip("kdump.format._records", reason="the compiled extension is not built").parse_records


def test_backend_picks_compiled_whatever_is_imported_first(fast):
    """Whichever module is imported first (a compiled one included), the pure modules pick the compiled twins
    and hand them their pure twins (no import order to get right: there is no cycle)."""
    if _on("KDUMP_PURE_PYTHON"):
        pytest.skip("KDUMP_PURE_PYTHON forces the pure path")
    env = dict(os.environ, PYTHONPATH=str(Path(kdump.__file__).parent.parent))
    for first in ("kdump.format._records", "kdump.render._lines", "kdump._backend", "kdump.format.v2",
                  "kdump.render.kafka_text", "kdump"):
        code = (f"import {first}; import kdump._backend as b, kdump.format.v2 as v2, kdump.format._records as r, "
                "kdump.render.kafka_text as k, kdump.render._lines as l; "
                "print(b.BACKEND, v2.parse_records is r.parse_records and k.render_v2_lines is l.render_v2_lines "
                "and r.parse_records_py is v2.parse_records_py and l.render_v2_lines_py is k.render_v2_lines_py)")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                             cwd=str(ROOT / "tests"), check=True).stdout.split()
        assert out == ["compiled", "True"], (first, out)


# --- an independent encoder ------------------------------------------------------------------------

def zigzag(n: int) -> int:
    """Zig-zag of any Python int (not only 64-bit ones): 0, -1, 1, -2, ... -> 0, 1, 2, 3, ..."""
    return 2 * n if n >= 0 else -2 * n - 1


def leb128(u: int, pad: int = 0) -> bytes:
    """Unsigned LEB128; ``pad`` adds redundant zero groups (a valid but non-minimal, longer encoding)."""
    groups = []
    while True:
        groups.append(u & 0x7F)
        u >>= 7
        if not u:
            break
    groups += [0] * pad
    return bytes(g | 0x80 for g in groups[:-1]) + bytes([groups[-1]])


def varint(n: int, pad: int = 0) -> bytes:
    return leb128(zigzag(n), pad)


def record(attr=0, ts=0, off=0, key=b"k", value=b"v", headers=(), *, klen=None, vlen=None, nheaders=None,
           length_delta=0, pads=(0,) * 6) -> bytes:
    """One DefaultRecord; ``klen``/``vlen``/``nheaders``/``length_delta`` override what is declared."""
    body = bytearray([attr])
    body += varint(ts, pads[0]) + varint(off, pads[1])
    body += varint(klen if klen is not None else (-1 if key is None else len(key)), pads[2]) + (key or b"")
    body += varint(vlen if vlen is not None else (-1 if value is None else len(value)), pads[3]) + (value or b"")
    body += varint(len(headers) if nheaders is None else nheaders, pads[4])
    for hk, hv in headers:
        body += varint(len(hk)) + hk + varint(-1 if hv is None else len(hv)) + (hv or b"")
    return varint(len(body) + length_delta, pads[5]) + bytes(body)


# --- comparison --------------------------------------------------------------------------------------

def outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # both paths must fail alike on arguments outside the contract
        return None, (type(e), str(e))


def check_same(fast, buf, start, end, count, base_offset=0, base_timestamp=0, append_time=None, chunk=()):
    args = (buf, start, end, count, base_offset, base_timestamp, append_time, *chunk)
    want, want_exc = outcome(parse_records_py, args)
    got, got_exc = outcome(fast, args)
    assert got_exc == want_exc
    # the summary of the same records (verify --deep's walk): compiled, pure, and computed from the columns
    from kdump.format._records import summarize_records
    summary, summary_exc = outcome(summarize_records, args)
    pure_summary, pure_summary_exc = outcome(summarize_records_py, args)
    assert summary_exc == pure_summary_exc == want_exc
    if want is None:
        return None
    assert type(summary) is RecordSummary
    assert summary == pure_summary == RecordSummary.of(want)
    assert type(got) is RecordColumns
    assert got.buf is buf
    for name in COLUMNS:
        assert getattr(got, name) == getattr(want, name), name
    for name in ("offsets", "timestamps", "attributes", "key_pos", "key_len", "value_pos", "value_len", "sizes"):
        assert [type(x) for x in getattr(got, name)] == [type(x) for x in getattr(want, name)], name
    assert got.resume_at == want.resume_at
    assert all(h is EMPTY for h in got.headers if not h)
    assert all(type(k) is bytes and (v is None or type(v) is bytes) for h in got.headers for k, v in h)
    if want.error is None:
        assert got.error is None
    else:
        assert type(got.error) is type(want.error)
        assert (got.error.code, got.error.message, got.error.position) == \
            (want.error.code, want.error.message, want.error.position)
    return want


def sample_payload() -> list[bytes]:
    return [
        record(0, 0, 0, b"key-00000001", b"v" * 100),
        record(0, 5, 1, None, b"value"),
        record(3, -7, 2, b"", None, ((b"h1", b"x"), (b"", None), (b"h3", b""))),
        record(0, 2**40, 3, b"k", b"v", pads=(2, 1, 0, 3, 1, 1)),  # big delta, non-minimal varints
        record(0, -(2**63), 4, None, None),
        record(0, 2**63 - 1, 2**31 - 1, b"abc", b"def", ((b"only", b"one"),)),
    ]


# --- deterministic cases -----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_valid_payload_all_buffer_kinds(fast, kind):
    recs = sample_payload()
    data = b"\xAA" * 7 + b"".join(recs) + b"\xBB" * 3
    buf = kind(data)
    want = check_same(fast, buf, 7, len(data) - 3, len(recs), 1000, 1_700_000_000_000)
    assert want.error is None and want.count == len(recs)
    check_same(fast, buf, 7, len(data) - 3, len(recs), 1000, 1_700_000_000_000, append_time=42)


def test_every_truncation_and_every_bit_flip(fast):
    recs = sample_payload()
    data = b"".join(recs)
    n = len(recs)
    for end in range(len(data) + 1):
        check_same(fast, data, 0, end, n, 10, 20)  # the batch ends early
        check_same(fast, data[:end], 0, end, n, 10, 20)  # and the buffer too
    for pos in range(len(data)):
        for bit in range(8):
            flipped = bytearray(data)
            flipped[pos] ^= 1 << bit
            check_same(fast, bytes(flipped), 0, len(data), n, 10, 20)
        for byte in (0x00, 0x01, 0x7F, 0x80, 0xFF):
            changed = bytearray(data)
            changed[pos] = byte
            check_same(fast, bytes(changed), 0, len(data), n, 10, 20)


@pytest.mark.parametrize("count", [-1, -(2**70), 0, 1, 5, 6, 7, 2**31, 2**63, 2**70])
def test_counts(fast, count):
    data = b"".join(sample_payload())
    check_same(fast, data, 0, len(data), count, 0, 0)
    check_same(fast, b"", 0, 0, count, 0, 0)


@pytest.mark.parametrize("field", range(6))
@pytest.mark.parametrize("extra", [0, 1, 4, 5, 9, 10, 11])
def test_overlong_varints(fast, field, extra):
    """Non-minimal encodings up to the limit are accepted, one byte more is varint-too-long."""
    pads = [0] * 6
    pads[field] = extra
    data = record(0, 1, 1, b"key", b"value", pads=tuple(pads)) + record(0, 2, 2)
    check_same(fast, data, 0, len(data), 2, 5, 5)


def test_continuation_runs(fast):
    """Varints of nothing but continuation bytes, in every field, ending at the batch/record end or not."""
    for field in range(7):
        for run in (1, 4, 5, 6, 9, 10, 11, 12):
            body = bytearray([0])
            fields = [varint(1), varint(1), varint(1) + b"k", varint(1) + b"v", varint(1) + varint(1) + b"a" + varint(-1)]
            body += b"".join(fields)
            # put the run at the start of field `field` (6 = a header key length)
            offsets = [1]
            for f in fields:
                offsets.append(offsets[-1] + len(f))
            at = offsets[field] if field < 6 else offsets[4] + 1
            corrupt = bytes(body[:at]) + b"\x80" * run + bytes(body[at:])
            for payload in (varint(len(corrupt)) + corrupt, varint(len(body)) + corrupt, b"\x80" * run,
                            b"\xff" * run + b"\x01"):
                check_same(fast, payload, 0, len(payload), 1, 0, 0)
                check_same(fast, payload + b"\x00" * 4, 0, len(payload), 1, 0, 0)


def test_huge_timestamp_deltas_and_sums(fast):
    """A 10-byte varlong keeps its low 64 bits (Java's readVarlong); the sums are Python ints, never wrapped."""
    cases = []
    for ts in (2**63 - 1, -(2**63), 2**63, -(2**63) - 1, 2**64, 2**69 - 1, -(2**69), 2**40):
        cases.append(record(0, ts, 1))
    for off in (2**31 - 1, -(2**31), 2**34 - 1, -(2**34)):  # 5-byte varints hold 35 bits, unchecked
        cases.append(record(0, 0, off))
    data = b"".join(cases)
    for base_offset in (0, INT64_MAX, INT64_MIN, INT64_MAX - 3, INT64_MIN + 3, 2**80, -(2**80)):
        for base_ts in (0, INT64_MAX, INT64_MIN, 1_700_000_000_000, 2**70):
            check_same(fast, data, 0, len(data), len(cases), base_offset, base_ts)
    check_same(fast, data, 0, len(data), len(cases), INT64_MAX, INT64_MAX, append_time=INT64_MIN)


def test_lengths(fast):
    cases = [
        record(length_delta=-1), record(length_delta=1), record(length_delta=-100), record(length_delta=10**9),
        record(klen=-5), record(vlen=-2**34), record(klen=100), record(vlen=50), record(klen=2**34 - 1),
        record(nheaders=-1), record(nheaders=2**33), record(nheaders=3), record(nheaders=1),
        record(headers=((b"k", b"v"),), nheaders=2),
        varint(0), varint(0) + b"\x00", varint(1) + b"\x00", varint(2) + b"\x00\x00", varint(-1), varint(-(2**34)),
    ]
    for rec in cases:
        for tail in (b"", record(), b"\x00", b"\x80"):
            data = rec + tail
            for end in (len(rec), len(data)):
                check_same(fast, data, 0, end, 1, 0, 0)
                check_same(fast, data, 0, end, 2, 0, 0)


def test_empty_record_at_the_very_end(fast):
    """length 0 leaves the attributes byte outside the record: the pure path then reads buf[pos] unchecked."""
    for data, end in ((varint(0), 1), (varint(0) + b"\x05", 1), (varint(0) + b"\x05", 2), (record() + varint(0), None)):
        end = len(data) if end is None else end
        check_same(fast, data, 0, end, 2, 0, 0)
        check_same(fast, bytearray(data), 0, end, 1, 0, 0)


@pytest.mark.parametrize("args", [
    (b"\x00" * 8, -1, 8, 1, 0, 0, None),  # negative start
    (b"\x00" * 8, 0, 9, 1, 0, 0, None),  # end past the buffer
    (b"\x00" * 8, 5, 3, 0, 0, 0, None),  # start after end
    (b"\x00" * 8, 0, 8, True, 0, 0, None),  # bool count
    (b"\x00" * 8, 0, 8, 1.0, 0, 0, None),
    (b"\x0c\x00\x02\x02\x02k\x02v\x00", 0, 9, 1, 1.5, 0, None),  # float base offset
    (b"\x0c\x00\x02\x02\x02k\x02v\x00", 0, 9, 1, 0, None, 7),  # base_timestamp unused with append_time
    (b"\x0c\x00\x02\x02\x02k\x02v\x00", 0, 9, 1, 0, None, None),  # ... and used without
    (b"\x0c\x00\x02\x02\x02k\x02v\x00", 0, 2**70, 1, 0, 0, None),
    (memoryview(b"\x0c\x00\x02\x02\x02k\x02v\x00").cast("b"), 0, 9, 1, 0, 0, None),
    (memoryview(b"\x0c\x00\x02\x02\x02k\x02v\x00\x00")[::2], 0, 5, 1, 0, 0, None),
    ("not bytes", 0, 9, 1, 0, 0, None),
    (None, 0, 0, 0, 0, 0, None),
])
def test_arguments_outside_the_fast_path(fast, args):
    check_same(fast, *args)


def test_released_memoryview(fast):
    for args in ((0, 0, 0), (0, 1, 1)):
        m = memoryview(b"\x00")
        m.release()
        check_same(fast, m, *args)


def test_does_not_copy_or_hold_the_buffer(fast):
    buf = bytearray(b"".join(sample_payload()))
    cols = fast(buf, 0, len(buf), 6, 0, 0, None)
    assert cols.buf is buf and cols.error is None
    buf.extend(b"x")  # no buffer export left behind (a leaked one would raise BufferError)
    assert cols.key(0) == b"key-00000001"


# --- property-based ----------------------------------------------------------------------------------

small = st.integers(-70, 70)
pads = st.sampled_from([0, 0, 0, 0, 0, 1, 3, 4, 5, 9])
varlongs = st.one_of(small, st.integers(INT64_MIN, INT64_MAX), st.integers(-(2**69), 2**69 - 1),
                     st.integers(-(2**75), 2**75))
varints = st.one_of(small, st.integers(-(2**31), 2**31 - 1), st.integers(-(2**34), 2**34 - 1),
                    st.integers(-(2**40), 2**40))
bases = st.one_of(st.integers(INT64_MIN, INT64_MAX), st.sampled_from([0, INT64_MAX, INT64_MIN, INT64_MAX - 1]),
                  st.integers(-(2**80), 2**80))
maybe_bytes = st.none() | st.binary(max_size=24)


@st.composite
def records(draw):
    key, value = draw(maybe_bytes), draw(maybe_bytes)
    headers = draw(st.lists(st.tuples(st.binary(max_size=6), maybe_bytes), max_size=3))
    odd = draw(st.integers(0, 9)) == 0  # now and then, declare something else than what follows
    return record(
        draw(st.integers(0, 255)), draw(varlongs), draw(varints), key, value, tuple(headers),
        klen=draw(st.none() | varints) if odd else None,
        vlen=draw(st.none() | varints) if odd else None,
        nheaders=draw(st.none() | varints) if odd else None,
        length_delta=draw(st.integers(-3, 3)) if odd else 0,
        pads=tuple(draw(pads) for _ in range(6)),
    )


@st.composite
def batches(draw):
    recs = draw(st.lists(records(), max_size=8))
    prefix = draw(st.binary(max_size=4))
    suffix = draw(st.binary(max_size=4))
    data = bytearray(prefix + b"".join(recs) + suffix)
    start = len(prefix)
    end = len(data) - len(suffix)
    for _ in range(draw(st.integers(0, 2))):  # bit flips / byte changes anywhere
        if data:
            at = draw(st.integers(0, len(data) - 1))
            data[at] = draw(st.integers(0, 255)) if draw(st.booleans()) else data[at] ^ (1 << draw(st.integers(0, 7)))
    end = draw(st.sampled_from([end, end, end, draw(st.integers(start, end))]))  # truncation
    count = len(recs) + draw(st.sampled_from([0, 0, 0, 0, -1, 1, 2, -len(recs) - 1, 2**40]))
    kind = draw(st.sampled_from([bytes, bytes, bytearray, memoryview]))
    append_time = draw(st.sampled_from([None, None, None, 1_700_000_000_000, INT64_MIN]))
    return kind(bytes(data)), start, end, count, draw(bases), draw(bases), append_time


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batches())
def test_differential_generated_batches(fast, args):
    check_same(fast, *args)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.integers(-2, 6), bases, bases)
@example(b"\x00", 1, 0, 0)
@example(b"\x02\x00", 1, 0, 0)
@example(b"\xff\xff\xff\xff\x0f", 1, 0, 0)
def test_differential_random_bytes(fast, data, count, base_offset, base_timestamp):
    check_same(fast, data, 0, len(data), count, base_offset, base_timestamp)


# --- the corpus --------------------------------------------------------------------------------------

def magic2_payloads(path):
    with SegmentReader(path) as reader:
        for batch in reader:
            if not isinstance(batch, RecordBatch):
                continue
            try:
                buf, start, end = batch.records_payload(1 << 28)
            except kdump.FormatError:
                continue  # cannot be decompressed: nothing for either decoder
            yield batch, buf, start, end


@pytest.mark.parametrize("path", CORPUS_LOGS, ids=[str(p.relative_to(ROOT / "fixtures" / "corpus")) for p in CORPUS_LOGS])
def test_corpus_batches_decode_identically(fast, path):
    for batch, buf, start, end in magic2_payloads(path):
        check_same(fast, buf, start, end, batch.records_count, batch.base_offset, batch.base_timestamp,
                   batch.append_time)


def test_corpus_has_magic2_records(fast):
    decoded = 0
    for path in CORPUS_LOGS:
        for batch, buf, start, end in magic2_payloads(path):
            decoded += fast(buf, start, end, batch.records_count, batch.base_offset, batch.base_timestamp,
                            batch.append_time).count
    assert decoded > 100


# --- the record-line renderer: compiled vs pure -----------------------------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(batches(), st.integers(-3, 2**31 - 1), st.booleans(), st.booleans())
def test_render_v2_lines_same_text(fast, args, base_seq, print_data, skip_metadata):
    from kdump.render._lines import render_v2_lines
    from kdump.render.kafka_text import render_v2_lines_py
    buf, start, end, count, base_offset, base_timestamp, append_time = args
    cols = parse_records_py(buf, start, end, count, base_offset, base_timestamp, append_time)
    ours = render_v2_lines(cols, "CreateTime", base_offset, base_seq, print_data, skip_metadata)
    pure = render_v2_lines_py(cols, "CreateTime", base_offset, base_seq, print_data, skip_metadata)
    assert ours == pure


def test_chunks(fast):
    """Decoding in chunks (first record index, stop index, resume position): both paths give the same
    chunks, resume positions and errors, including a records-remaining error only in the last chunk."""
    payload = b"".join(sample_payload())
    n = len(sample_payload())
    whole = check_same(fast, payload, 0, len(payload), n, 5, 7)
    for extra in (b"", b"\x00\x00"):
        data = payload + extra
        for size in (1, 2, 3, n, n + 1):
            first, at = 0, 0
            while True:
                got = check_same(fast, data, 0, len(data), n, 5, 7, chunk=(first, first + size, at))
                assert got.offsets == whole.offsets[first:first + got.count]
                if got.resume_at is None:
                    break
                first, at = first + got.count, got.resume_at
            assert (got.error is not None) == bool(extra)
    for bad in ((0, None, -1), (0, None, len(payload) + 1), (-1, 2, 0), (3, 1, 0), (0, 2, 1)):
        check_same(fast, payload, 0, len(payload), n, 5, 7, chunk=bad)


def test_render_v2_lines_reentrant(monkeypatch):
    """The compiled renderer builds in one kept buffer; a call made while it is in use (another thread
    running while this one is in Python code, here a nested call from the header-key decoding) builds in its
    own buffer, and both give the pure function's bytes."""
    lines = pytest.importorskip("kdump.render._lines")
    from kdump.format.text import java_utf8
    from kdump.render.kafka_text import render_v2_lines_py
    payload = b"".join(sample_payload())
    cols = parse_records_py(payload, 0, len(payload), len(sample_payload()), 5, 7, None)
    assert any(cols.headers), "the sample needs a record with headers"
    expected = render_v2_lines_py(cols, "CreateTime", 5, 0, True, False)
    nested: list = []

    def decode_and_render(data):
        if not nested:
            nested.append(None)
            nested[0] = lines.render_v2_lines(cols, "CreateTime", 5, 0, True, False)
        return java_utf8(data)

    monkeypatch.setattr(lines, "java_utf8", decode_and_render)
    assert lines.render_v2_lines(cols, "CreateTime", 5, 0, True, False) == expected
    assert nested == [expected]
