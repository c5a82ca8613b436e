"""Issue 22, item 3: offsets and timestamps past a Java long. Kafka's reader computes ``baseOffset +
offsetDelta``, ``firstTimestamp + timestampDelta``, ``baseOffset + lastOffsetDelta`` and a magic 1 wrapper's
``absoluteBaseOffset + innerOffset`` in Java ``long`` arithmetic: they wrap (2^63-1 + 1 = -2^63). kdump computes
the same on every path (decoders compiled and pure, renderers, the Arrow builders, convert, verify), so no path
meets a number no Java long holds (an exit 70 in convert's encoders before) and nothing prints one.

The expected values come from an independent two's complement computation (``struct``), not from kdump."""
import gzip
import json
import struct

import pytest

from support import hostile_legacy as HL
from support.cli import run_cli
from support.hostile import T0, v2_batch
from kdump.format.crc import crc32c
from kdump.format import layout as L
from kdump.format.varint import encode_uvarint, zigzag_encode
from kdump.read.segment import SegmentReader

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

MAX, MIN = 2**63 - 1, -(2**63)
NAME = "00000000000000000000.log"


def java(v: int) -> int:
    """``v`` wrapped as a Java long: its low 64 bits read as two's complement."""
    return struct.unpack(">q", struct.pack(">Q", v % 2**64))[0]


def record(offset_delta: int, timestamp_delta: int = 0) -> bytes:
    body = bytes((0,)) + encode_uvarint(zigzag_encode(timestamp_delta)) + \
        encode_uvarint(zigzag_encode(offset_delta)) + bytes((1, 1, 0))  # null key, null value, no headers
    return encode_uvarint(zigzag_encode(len(body))) + body


def base_offset_batch() -> bytes:
    """Base offset 2^63-1, records at deltas 0 and 1."""
    return v2_batch(record(0) + record(1), count=2, base_offset=MAX, last_offset_delta=1)


def first_timestamp_batch() -> bytes:
    """Base offset 0, firstTimestamp (and maxTimestamp) 2^63-1, records at timestamp deltas 0 and 1."""
    payload = record(0) + record(1, 1)
    after = L.V2_AFTER_CRC.pack(0, 1, MAX, MAX, -1, -1, -1, 2) + payload
    before = L.V2_BEFORE_CRC.pack(0, L.V2_BODY_HEAD_SIZE + len(payload), 0, 2)
    return before + L.UINT32.pack(crc32c(after)) + after


@pytest.fixture
def segment(tmp_path):
    def make(data: bytes):
        path = tmp_path / NAME
        path.write_bytes(data)
        return path
    return make


@pytest.mark.parametrize("v", [0, MAX, MIN, MAX + 1, MIN - 1, 2**64 - 1, 2**64 + 5, -(2**64), MAX + MAX])
def test_java_long_is_twos_complement(v):
    assert L.java_long(v) == java(v)


def test_offsets_past_2_63_wrap_as_in_kafka(segment):
    path = segment(base_offset_batch())
    with SegmentReader(path) as reader:
        (batch,) = list(reader)
        assert batch.last_offset == java(MAX + 1) == MIN
        assert batch.columns(1 << 20).offsets == [MAX, MIN]
    dumped = run_cli("dump", "--deep-iteration", path)
    assert dumped.exit_code == 0, dumped.output
    assert f"baseOffset: {MAX} lastOffset: {MIN} " in dumped.stdout
    assert f"| offset: {MIN} " in dumped.stdout
    assert f" {MAX + 1}" not in dumped.stdout  # no number a Java long cannot hold
    assert "Non-consecutive" not in dumped.stdout  # Kafka's lastOffset + 1 wraps too: MIN follows MAX
    js = run_cli("dump", "--format", "json", "--deep-iteration", path)
    assert js.exit_code == 0
    doc = json.loads(js.stdout.splitlines()[0])
    assert doc["lastOffset"] == MIN and [r["offset"] for r in doc["records"]] == [MAX, MIN]


def test_timestamps_past_2_63_wrap_as_in_kafka(segment):
    path = segment(first_timestamp_batch())
    with SegmentReader(path) as reader:
        (batch,) = list(reader)
        assert batch.columns(1 << 20).timestamps == [MAX, java(MAX + 1)]
    dumped = run_cli("dump", "--deep-iteration", path)
    assert f"| offset: 1 CreateTime: {MIN} " in dumped.stdout and dumped.exit_code == 0
    js = run_cli("dump", "--format", "json", "--deep-iteration", path)
    assert [r["timestamp"] for r in json.loads(js.stdout.splitlines()[0])["records"]] == [MAX, MIN]


def test_verify_reports_the_wrap(segment):
    result = run_cli("verify", "--deep", segment(base_offset_batch()))
    assert result.exit_code == 1
    assert "record-offset-invalid" in result.stdout and "past 2^63-1" in result.stdout
    result = run_cli("verify", "--deep", segment(first_timestamp_batch()))
    assert "timestamp-invalid" in result.stdout and str(MIN) in result.stdout


@pytest.mark.parametrize("magic", [0, 1, 2])
@pytest.mark.parametrize("make", [base_offset_batch, first_timestamp_batch])
def test_convert_never_meets_a_number_past_a_long(segment, tmp_path, make, magic):
    result = run_cli("convert", "--to-magic", magic, segment(make()), "-o", tmp_path / "out.log")
    assert result.exit_code in (0, 1), result.output  # never 70
    if make is base_offset_batch:
        assert result.exit_code == 1 and "byte 0" in result.stderr  # verify --deep finds the input damaged


@pytest.mark.parametrize("command", [["stats"], ["txn"], ["salvage", "-o", "OUT"], ["index", "rebuild", "-o", "OUT"],
                                     ["index", "check", "--deep"]])
@pytest.mark.parametrize("make", [base_offset_batch, first_timestamp_batch])
def test_other_commands_never_meet_a_number_past_a_long(segment, tmp_path, make, command):
    path = segment(make())
    args = [str(tmp_path / "out") if a == "OUT" else a for a in command]
    result = run_cli(*args[:1], *args[1:], path) if command[0] != "index" else run_cli(*args, path)
    assert result.exit_code in (0, 1), result.output


def test_magic_1_wrapper_offsets_wrap_as_in_kafka(segment):
    # wrapper offset 2^63-1, inner offsets -2 and -1: absoluteBaseOffset = MAX - (-1) wraps to MIN, then
    # MIN + (-2) and MIN + (-1) wrap to MAX - 1 and MAX
    inner = HL.message(-2, 1, b"a") + HL.message(-1, 1, b"b")
    path = segment(HL.message(MAX, 1, gzip.compress(inner), codec=1))
    base = java(MAX - (-1))
    with SegmentReader(path) as reader:
        (batch,) = list(reader)
        assert batch.columns(1 << 20).offsets == [java(base - 2), java(base - 1)] == [MAX - 1, MAX]
        assert batch.base_offset == MAX - 1


def test_arrow_builders_agree_on_wrapped_values(segment):
    pytest.importorskip("pyarrow")
    from test_spark_arrow import assert_builders_agree
    for make, column, expected in [(base_offset_batch, "offset", [MAX, MIN]),
                                   (first_timestamp_batch, "offset", [0, 1])]:
        table, damage = assert_builders_agree(str(segment(make())))
        assert table.column(column).to_pylist() == expected and damage == []
