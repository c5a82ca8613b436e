"""Kafka's variable-length integers (spec §3.5).

Signed values are zig-zag encoded (``(n << 1) ^ (n >> 63)``) and then written as unsigned LEB128: seven
bits per byte, low group first, high bit set on every byte but the last. A 32-bit varint takes at most
5 bytes and a 64-bit varlong at most 10; Kafka rejects longer encodings, and so does kdump.
"""
from __future__ import annotations

from kdump.errors import FormatError

MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10


def read_uvarint(buf, pos: int, max_bytes: int = MAX_VARLONG_BYTES) -> tuple[int, int]:
    """Read an unsigned LEB128 value at ``pos``; return (value, position after it)."""
    value = 0
    shift = 0
    end = len(buf)
    for _ in range(max_bytes):
        if pos >= end:
            raise FormatError("varint-truncated", f"varint at byte {pos} runs past the end of its data")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
    raise FormatError(
        "varint-too-long",
        f"varint ending at byte {pos} is longer than {max_bytes} bytes "
        "(the most significant bit of its last byte is set)",
    )


def zigzag_decode(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def zigzag_encode(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def read_varint(buf, pos: int) -> tuple[int, int]:
    """Read a zig-zag varint (at most 5 bytes, a signed 32-bit value)."""
    raw, pos = read_uvarint(buf, pos, MAX_VARINT_BYTES)
    value = zigzag_decode(raw)
    if not -(2**31) <= value < 2**31:
        raise FormatError("varint-too-long", f"varint before byte {pos} does not fit in 32 bits")
    return value, pos


def read_varlong(buf, pos: int) -> tuple[int, int]:
    """Read a zig-zag varlong (at most 10 bytes, a signed 64-bit value)."""
    raw, pos = read_uvarint(buf, pos, MAX_VARLONG_BYTES)
    value = zigzag_decode(raw)
    if not -(2**63) <= value < 2**63:
        raise FormatError("varint-too-long", f"varlong before byte {pos} does not fit in 64 bits")
    return value, pos


def encode_uvarint(n: int) -> bytes:
    if n < 0:
        raise ValueError("unsigned varint of a negative number")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_varint(n: int) -> bytes:
    """Zig-zag varint of a signed value (32 or 64 bit; the encoding is the same)."""
    if not -(2**63) <= n < 2**63:
        raise ValueError(f"{n} does not fit in 64 bits")
    return encode_uvarint(zigzag_encode(n) & 0xFFFFFFFFFFFFFFFF)


def varint_size(n: int) -> int:
    return len(encode_varint(n))
