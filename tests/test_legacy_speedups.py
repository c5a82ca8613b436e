"""The compiled magic 0/1 inner-message walk (kdump.format._legacy.inner_columns) against the pure one
(kdump.format.legacy.inner_columns_py), and the legacy reader's columns on both backends.

Differential: both walks must give the same columns (every list), stored offsets, resume position and
the same FormatError (code, message, position), raised or kept in ``error``, for every compressed
legacy wrapper of the corpus, the generated fixtures and the convert references, for every truncation and
bit flip of their inner message sets, in chunks, and for inner message sets built by the independent
encoder below (sizes too small and too large, magics 0-3, null and overlong keys and values, nested
compression, LogAppendTime). Skipped when the extension is not built (test_speedups.py fails instead
when it is required).
"""
from __future__ import annotations

import random
import struct
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kdump import _backend
from kdump.errors import FormatError
from kdump.format.columns import InnerSummary
from kdump.format.legacy import LegacyBatch, inner_columns_py, inner_summary_py
from kdump.read.segment import SegmentReader

ROOT = Path(__file__).resolve().parent.parent
LEGACY_TREES = ("corpus", "generated", "convert")
LOGS = sorted(p for tree in LEGACY_TREES for p in (ROOT / "fixtures" / tree).rglob("*.log") if p.is_file())
COLUMNS = ("count", "timestamps", "attributes", "key_pos", "key_len", "value_pos", "value_len", "headers",
           "sizes", "crcs", "magics", "valid", "resume_at")


@pytest.fixture(scope="module")
def fast():
    return pytest.importorskip("kdump.format._legacy", reason="the compiled extension is not built").inner_columns


def _error(e):
    return None if e is None else (type(e), e.code, e.message, e.position)


def outcome(fn, *args):
    try:
        cols, offsets, resume = fn(*args)
    except FormatError as e:
        return ("raised", _error(e))
    except Exception as e:  # arguments outside the contract: both paths must fail alike
        return ("raised", (type(e), str(e)))
    return ({name: getattr(cols, name) for name in COLUMNS}, offsets, resume, _error(cols.error),
            cols.buf is args[0])


def summary_outcome(fn, *args):
    try:
        return fn(*args)
    except FormatError as e:
        return ("raised", _error(e))
    except Exception as e:
        return ("raised", (type(e), str(e)))


def check_same(fast, data, pos0=1234, start_at=0, max_count=None, first_index=0):
    args = (data, pos0, start_at, max_count, first_index)
    ours, pure = outcome(fast, *args), outcome(inner_columns_py, *args)
    assert ours == pure, args[1:]
    # the same walk summarized (verify --deep): compiled, pure, and from the columns, for either wrapper magic
    from kdump.format._legacy import inner_summary
    for magic in (0, 1):
        summary_args = (data, pos0, magic, start_at, max_count, first_index)
        got, want = summary_outcome(inner_summary, *summary_args), summary_outcome(inner_summary_py, *summary_args)
        assert got == want, summary_args[1:]
        if pure[0] == "raised":
            assert got == pure
        else:
            cols, inner_offsets, resume = inner_columns_py(*args)
            assert got == InnerSummary.of(data, start_at, cols, inner_offsets, resume, magic)
    return pure


def check_chunks(fast, data, chunk):
    """Walk ``data`` in chunks of ``chunk`` messages on both paths, as column_chunks does."""
    pos, n = 0, 0
    while pos is not None:
        got = check_same(fast, data, 77, pos, chunk, n)
        if got[0] == "raised":
            return
        pos, n = got[2], n + got[0]["count"]


# --- an independent encoder of legacy messages -----------------------------------------------------------

def message(offset=0, magic=1, attributes=0, timestamp=0, key=b"k", value=b"v", *, key_len=None, value_len=None,
            size_delta=0, crc=None) -> bytes:
    """One ``offset size message`` entry; the ``*_len``/``size_delta``/``crc`` arguments override what is declared."""
    body = struct.pack(">Bb", magic, attributes)
    if magic == 1:
        body += struct.pack(">q", timestamp)
    for data, declared in ((key, key_len), (value, value_len)):
        body += struct.pack(">i", (-1 if data is None else len(data)) if declared is None else declared)
        body += data or b""
    stored = zlib.crc32(body) if crc is None else crc
    msg = struct.pack(">I", stored) + body
    return struct.pack(">qi", offset, len(msg) + size_delta) + msg


def sample_set() -> bytes:
    return b"".join([
        message(0, 1, 0, 1_700_000_000_000, b"key-0", b"value-0"),
        message(1, 1, 0x08, -1, None, b"v"),
        message(2, 1, 0, 5, b"", None),
        message(3, 0, 0, 0, b"k", b"old magic"),
        message(4, 1, 0, 7, b"k", b"bad crc", crc=12345),
        message(5, 1, -128, 2**63 - 1, b"k" * 300, b"v" * 70000),
        message(-3, 1, 0, -(2**63), None, None),
    ])


# --- the tests -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview])
def test_valid_set_all_buffer_kinds(fast, kind):
    data = sample_set()
    got = check_same(fast, kind(data))
    assert got[0]["count"] == 7 and got[3] is None
    assert got[0]["valid"] == [True, True, True, True, False, True, True]
    assert got[1] == [0, 1, 2, 3, 4, 5, -3]


def test_every_truncation_and_bit_flip(fast):
    data = sample_set()[:400]
    for n in range(len(data) + 1):
        check_same(fast, data[:n])
    rnd = random.Random(13)
    for i in range(len(data)):
        for bit in (0, 7, rnd.randrange(8)):
            flipped = bytearray(data)
            flipped[i] ^= 1 << bit
            check_same(fast, bytes(flipped))


@pytest.mark.parametrize("bad", [
    dict(size_delta=-20),                   # declares less than the 14-byte minimum
    dict(size_delta=-9),                    # magic 1 with fewer than 22 bytes
    dict(magic=2), dict(magic=3), dict(magic=255),
    dict(key_len=1000), dict(value_len=1000), dict(key_len=2**31 - 1), dict(key_len=-7),
    dict(value_len=-2**31), dict(attributes=1), dict(attributes=0x0B), dict(attributes=4),
    dict(size_delta=3),                     # runs past the end: Kafka ends the set there
    dict(size_delta=-1),                    # the value's last byte cut: value runs past the message
])
@pytest.mark.parametrize("where", [0, 1, 3])
def test_bad_messages(fast, bad, where):
    good = [message(i, 1, 0, i, b"k%d" % i, b"v%d" % i) for i in range(4)]
    good[where] = message(where, **{"magic": 1, **bad})
    data = b"".join(good) + b"\x00" * 5
    check_same(fast, data)
    check_chunks(fast, data, 1)
    check_chunks(fast, data, 2)


def test_empty_and_tiny_sets(fast):
    for data in (b"", b"\x00" * 11, b"\x00" * 12, b"\x00" * 26, message()[:-1]):
        check_same(fast, data)


@pytest.mark.parametrize("args", [(0, None, 5), (7, None, 0), (0, 0, 0), (0, -1, 0), (10**6, None, 0),
                                  (-1, None, 0), (0, 2, 3)])
def test_chunk_arguments(fast, args):
    start_at, max_count, first_index = args
    check_same(fast, sample_set(), 5, start_at, max_count, first_index)


@pytest.mark.parametrize("chunk", [1, 2, 3, 6, 7, 100])
def test_chunks(fast, chunk):
    check_chunks(fast, sample_set() + b"\x01\x02", chunk)


@st.composite
def inner_sets(draw):
    parts = []
    for i in range(draw(st.integers(0, 6))):
        key = draw(st.none() | st.binary(max_size=20))
        value = draw(st.none() | st.binary(max_size=40))
        parts.append(message(
            draw(st.integers(-2**63, 2**63 - 1) | st.integers(0, 10)), draw(st.sampled_from([0, 1, 1, 1, 2])),
            draw(st.sampled_from([0, 0, 0x08, 1, 3, -1])), draw(st.integers(-2**63, 2**63 - 1)), key, value,
            key_len=draw(st.none() | st.none() | st.integers(-5, 60)),
            value_len=draw(st.none() | st.none() | st.integers(-5, 60)),
            size_delta=draw(st.sampled_from([0, 0, 0, -1, 1, -15, 4])),
            crc=draw(st.none() | st.integers(0, 2**32 - 1))))
    return b"".join(parts) + draw(st.binary(max_size=14))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inner_sets(), st.sampled_from([None, 1, 2]))
def test_differential_generated_sets(fast, data, chunk):
    check_same(fast, data)
    if chunk:
        check_chunks(fast, data, chunk)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_differential_random_bytes(fast, data):
    check_same(fast, data)


# --- every legacy file of the fixtures ---------------------------------------------------------------------

def legacy_batches(path):
    try:
        with SegmentReader(path) as reader:
            for batch in reader:
                if isinstance(batch, LegacyBatch):
                    yield batch
    except FormatError:
        return  # a damaged file: the entries before the damage were yielded


def wrapper_sets(path):
    for batch in legacy_batches(path):
        if batch.is_compressed:
            try:
                yield batch, batch.inner_set(1 << 28)
            except FormatError:
                continue  # cannot be decompressed: nothing for either walk


def _columns_on(backend, path):
    """Every legacy entry's columns (whole and in chunks of 2) as plain values, read on ``backend``."""
    _backend.use(backend)
    out = []
    for batch in legacy_batches(path):
        for read in (lambda b: [b.columns(1 << 28)], lambda b: list(b.column_chunks(1 << 28, 2))):
            fresh = LegacyBatch(batch.position, batch.message.offset, batch.message.body)
            try:
                chunks = read(fresh)
            except FormatError as e:
                out.append(("raised", _error(e)))
                continue
            out.append([({name: getattr(c, name) for name in COLUMNS}, c.offsets, _error(c.error))
                        for c in chunks])
    return out


@pytest.mark.parametrize("path", LOGS, ids=[str(p.relative_to(ROOT / "fixtures")) for p in LOGS])
def test_fixture_files_read_identically(fast, path):
    previous = _backend.BACKEND
    try:
        assert _columns_on("compiled", path) == _columns_on("python", path)
    finally:
        _backend.use(previous)
    for batch, data in wrapper_sets(path):
        check_same(fast, data, batch.position)
        check_chunks(fast, data, 3)


def test_fixture_files_have_wrappers_and_damage(fast):
    """The file-level test is not vacuous: wrappers of both magics, and some of them damaged inside."""
    magics, walked, mutated = set(), 0, 0
    rnd = random.Random(5)
    for path in LOGS:
        for batch, data in wrapper_sets(path):
            magics.add(batch.magic)
            walked += 1
            for _ in range(3):  # mutated copies of the real sets
                bad = bytearray(data)
                if bad:
                    bad[rnd.randrange(len(bad))] ^= 1 << rnd.randrange(8)
                got = check_same(fast, bytes(bad[:rnd.randrange(len(bad) + 1)]), batch.position)
                mutated += got[0] == "raised" or got[3] is not None
    assert magics == {0, 1} and walked > 20 and mutated > 5


# --- the record-line renderer for legacy messages: compiled vs pure -----------------------------------------

@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inner_sets(), st.sampled_from(["CreateTime", "LogAppendTime", "NoTimestampType"]), st.sampled_from(["", "}"]),
       st.booleans(), st.booleans())
def test_render_legacy_lines_same_text(fast, data, ts_name, brace, print_data, skip_metadata):
    from kdump.render._lines import render_legacy_lines
    from kdump.render.kafka_text import render_legacy_lines_py
    try:
        cols, offsets, _ = inner_columns_py(data, 0)
    except FormatError:
        return
    cols.offsets = offsets
    ours = render_legacy_lines(cols, ts_name, brace, print_data, skip_metadata)
    pure = render_legacy_lines_py(cols, ts_name, brace, print_data, skip_metadata)
    assert ours == pure


def test_render_legacy_lines_non_utf8(fast):
    from kdump.render._lines import render_legacy_lines
    from kdump.render.kafka_text import render_legacy_lines_py
    data = message(0, 1, 0, 1, b"\xed\xa0\x80\xff", b"caf\xc3\xa9 \xc3") + message(1, 0, 0, 0, None, b"")
    cols, cols.offsets, _ = inner_columns_py(data, 0)
    ours = render_legacy_lines(cols, "CreateTime", "", True, False)
    pure = render_legacy_lines_py(cols, "CreateTime", "", True, False)
    assert ours == pure and "\ufffd".encode() in ours.splitlines()[0]


def test_crc_of_every_length(fast):
    """The compiled walk computes short messages' CRC-32 by slicing-by-8 and long ones with zlib: a message
    of every size up to past the switch (and one flipped bit in each) is valid, and invalid, exactly as the
    pure walk (zlib) says."""
    data = b"".join(message(i, 1, 0, i, b"k", bytes(range(256)) * (i // 256) + bytes(range(i % 256)))
                    for i in range(700))
    assert check_same(fast, data)[0]["valid"] == [True] * 700
    bad = bytearray(data)
    pos = 0
    for _ in range(700):  # flip a bit of each key (after offset, size, crc, magic, attributes, timestamp, key size)
        size = struct.unpack_from(">i", bad, pos + 8)[0]
        bad[pos + 12 + 4 + 1 + 1 + 8 + 4] ^= 0x10
        pos += 12 + size
    got = check_same(fast, bytes(bad))
    assert got[0]["valid"] == [False] * 700


def test_compiled_crc32_is_zlibs():
    """kdump.format._legacy.crc32 (carry-less multiplication where the processor has it, slicing-by-8 for the
    rest) against zlib.crc32: every length up to 300, random lengths up to 200 KB, at every alignment, and
    any buffer."""
    legacy = pytest.importorskip("kdump.format._legacy")
    rnd = random.Random(7)
    data = rnd.randbytes(200_000)
    for n in [*range(301), *(rnd.randrange(300, 200_000) for _ in range(200))]:
        start = rnd.randrange(16)
        piece = data[start:start + n]
        assert legacy.crc32(piece) == zlib.crc32(piece), n
    assert legacy.crc32(bytearray(data)) == legacy.crc32(memoryview(data)) == zlib.crc32(data)
