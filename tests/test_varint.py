"""Varints and zig-zag (spec §3.5): property tests plus hand-checked encodings."""
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kdump.errors import FormatError
from kdump.format.varint import (encode_uvarint, encode_varint, read_uvarint, read_varint, read_varlong,
                                 zigzag_decode, zigzag_encode)

INT32 = st.integers(-(2**31), 2**31 - 1)
INT64 = st.integers(-(2**63), 2**63 - 1)


@pytest.mark.parametrize("value,encoded", [
    (0, "00"), (-1, "01"), (1, "02"), (-2, "03"), (63, "7e"), (-64, "7f"), (64, "8001"),
    (300, "d804"), (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f"),
])
def test_known_encodings(value, encoded):
    # zig-zag then LEB128, worked by hand: 300 -> 600 = 0b100_1011000 -> d8 04
    assert encode_varint(value).hex() == encoded
    assert read_varint(bytes.fromhex(encoded), 0) == (value, len(encoded) // 2)


@given(INT64)
def test_zigzag_round_trip(n):
    z = zigzag_encode(n) & 0xFFFFFFFFFFFFFFFF
    assert z >= 0
    assert zigzag_decode(z) == n


@given(INT64)
def test_zigzag_orders_small_magnitudes_first(n):
    # |n| small -> code small: 0,-1,1,-2,2 ... map to 0,1,2,3,4
    z = zigzag_encode(n) & 0xFFFFFFFFFFFFFFFF
    assert z == (2 * n if n >= 0 else -2 * n - 1)


@given(INT32)
def test_varint_round_trip(n):
    data = encode_varint(n)
    assert len(data) <= 5
    assert read_varint(data + b"\xaa", 0) == (n, len(data))


@given(INT64)
def test_varlong_round_trip(n):
    data = encode_varint(n)
    assert len(data) <= 10
    assert read_varlong(data, 0) == (n, len(data))


@given(st.integers(0, 2**64 - 1))
def test_uvarint_round_trip(n):
    data = encode_uvarint(n)
    assert read_uvarint(data, 0) == (n, len(data))


def test_varint_longer_than_5_bytes_is_rejected():
    with pytest.raises(FormatError, match="longer than 5 bytes"):
        read_varint(b"\x80\x80\x80\x80\x80\x01", 0)


def test_varlong_longer_than_10_bytes_is_rejected():
    with pytest.raises(FormatError, match="longer than 10 bytes"):
        read_varlong(b"\x80" * 10 + b"\x01", 0)


def test_truncated_varint():
    with pytest.raises(FormatError, match="runs past the end"):
        read_varint(b"\x80\x80", 0)


@given(st.binary(max_size=12))
def test_arbitrary_bytes_decode_or_raise_format_error(data):
    try:
        read_varlong(data, 0)
    except FormatError:
        pass
