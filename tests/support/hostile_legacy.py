"""Damaged compressed legacy (magic 0/1) wrappers whose message CRC is right (issue 22, item 1): the damage
is inside the compressed value, so only decompression finds it. Each builder returns whole log entries.

The messages are built byte by byte here (offset, size, CRC-32, magic, attributes, [timestamp], key, value),
independently of kdump's writer, which refuses some of these shapes (zstd in a legacy wrapper)."""
from __future__ import annotations

import gzip
import struct
import zlib

from kdump import codec as _codec

T0 = 1_700_000_000_000


def message(offset: int, magic: int, value: bytes | None, *, codec: int = 0, key: bytes | None = None,
            timestamp: int = T0) -> bytes:
    """One legacy log entry, its CRC-32 computed over magic..end as Kafka's ``LegacyRecord`` does."""
    def sized(b):
        return struct.pack(">i", -1) if b is None else struct.pack(">i", len(b)) + b
    stamp = struct.pack(">q", timestamp) if magic == 1 else b""
    after_crc = bytes((magic, codec)) + stamp + sized(key) + sized(value)
    body = struct.pack(">I", zlib.crc32(after_crc)) + after_crc
    return struct.pack(">qi", offset, len(body)) + body


def inner_set(n: int, magic: int = 1) -> bytes:
    """``n`` uncompressed inner messages, offsets 0..n-1 (relative for magic 1, absolute for magic 0)."""
    return b"".join(message(i, magic, b"v%d" % i) for i in range(n))


def flip(data: bytes, at: int) -> bytes:
    """``data`` with the byte at ``at`` (negative: from the end) inverted."""
    b = bytearray(data)
    b[at] ^= 0xFF
    return bytes(b)


def gzip_bad_trailer(magic: int = 1) -> bytes:
    """A gzip wrapper whose gzip CRC trailer is wrong (the deflate stream itself is whole)."""
    return message(2, magic, flip(gzip.compress(inner_set(3, magic)), -5), codec=_codec.GZIP)


def snappy_corrupt(magic: int = 1) -> bytes:
    """A snappy wrapper cut in the middle of its compressed value (snappy blocks carry no checksum: a flipped
    byte can decompress to other bytes, a cut one cannot decompress)."""
    value = _codec.compress(_codec.SNAPPY, inner_set(3, magic), magic=magic)
    return message(2, magic, value[:len(value) // 2], codec=_codec.SNAPPY)


def lz4_corrupt(magic: int = 1) -> bytes:
    """An lz4 wrapper cut in the middle of its compressed value."""
    value = _codec.compress(_codec.LZ4, inner_set(3, magic), magic=magic)
    return message(2, magic, value[:len(value) // 2], codec=_codec.LZ4)


def zstd_in_legacy(magic: int = 1) -> bytes:
    """zstd in a magic 0/1 wrapper (Kafka refuses it: zstd needs magic 2); the zstd frame itself is whole."""
    return message(2, magic, _codec.compress(_codec.ZSTD, inner_set(3, magic), magic=2), codec=_codec.ZSTD)


def nested(magic: int = 1) -> bytes:
    """A gzip wrapper whose inner message is itself a gzip wrapper (inner messages must not be compressed)."""
    inner = message(0, magic, gzip.compress(inner_set(2, magic)), codec=_codec.GZIP)
    return message(0, magic, gzip.compress(inner), codec=_codec.GZIP)


def gzip_bomb(size: int = 1 << 30, magic: int = 1) -> bytes:
    """A gzip wrapper whose value inflates to ``size`` zero bytes (about 1 MB stored for 1 GB)."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    chunk = bytes(1 << 20)
    parts = [z.compress(chunk) for _ in range(size >> 20)]
    parts.append(z.flush())
    return message(0, magic, b"".join(parts), codec=_codec.GZIP)


VARIANTS = {
    "gzip-trailer": gzip_bad_trailer,
    "snappy": snappy_corrupt,
    "lz4": lz4_corrupt,
    "zstd-in-legacy": zstd_in_legacy,
    "nested": nested,
}
