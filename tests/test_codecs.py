"""Tests for kdump.codec: Kafka's compression framing (spec §4).

Real Kafka bytes come from fixtures/codec/ (copied from the reference corpus; see fixtures/codec/README.md).
"""

from __future__ import annotations

import gzip as std_gzip
import hashlib
import io
import os
import random
import struct
import time
import tracemalloc
import zlib
from pathlib import Path

import lz4.block
import lz4.frame
import pytest
import snappy
import xxhash
import zstandard
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kdump import codec as C
from kdump.codec import gzip as kgzip
from kdump.codec import lz4 as klz4
from kdump.codec import snappy as ksnappy
from kdump.codec import zstd as kzstd

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "codec"
CODECS = [C.GZIP, C.SNAPPY, C.LZ4, C.ZSTD]
BIG = 10**8  # a limit that never triggers


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _dec(codec, data, magic=2, limit=BIG):
    return C.decompress(codec, data, magic=magic, limit=limit)


def _magics(codec):
    return [2] if codec == C.ZSTD else [0, 1, 2]


# ---------------------------------------------------------------------------------------------------------------
# input strategies
# ---------------------------------------------------------------------------------------------------------------


@st.composite
def payloads(draw):
    """Arbitrary bytes: mostly small, sometimes empty, sometimes > 64 KiB (random, repetitive or mixed)."""
    kind = draw(st.sampled_from(["small", "small", "small", "empty", "big"]))
    if kind == "empty":
        return b""
    if kind == "small":
        return draw(st.binary(max_size=3000))
    n = draw(st.integers(min_value=64 * 1024 - 10, max_value=300_000))
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    style = draw(st.sampled_from(["random", "text", "mixed"]))
    rnd = random.Random(seed)
    if style == "random":
        return rnd.randbytes(n)  # incompressible: lz4 stores blocks, snappy/zstd expand slightly
    if style == "text":
        words = [rnd.randbytes(rnd.randint(1, 8)) for _ in range(50)]
        out = bytearray()
        while len(out) < n:
            out += rnd.choice(words)
        return bytes(out[:n])
    return (rnd.randbytes(1000) + bytes(3000)) * (n // 4000 + 1)


# ---------------------------------------------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("codec,magic", [(c, m) for c in CODECS for m in _magics(c)])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=payloads())
def test_round_trip(codec, magic, data):
    z = C.compress(codec, data, magic=magic)
    assert isinstance(z, bytes)
    out = C.decompress(codec, z, magic=magic, limit=len(data))  # limit == size is allowed
    assert type(out) is bytes and out == data
    assert C.decompress(codec, memoryview(z), magic=magic, limit=len(data)) == data
    assert C.decompress(codec, bytearray(z), magic=magic, limit=len(data)) == data
    if data:
        with pytest.raises(C.DecompressedTooLarge):
            C.decompress(codec, z, magic=magic, limit=len(data) - 1)


def test_round_trip_memoryview_slices_and_input_types():
    data = b"kafka " * 20000
    for codec in CODECS:
        z = C.compress(codec, memoryview(bytearray(data)), magic=2)
        framed = memoryview(b"HEAD" + z + b"TAIL")[4:-4]  # a slice of a larger buffer, like a batch region
        assert _dec(codec, framed) == data


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("level", [1, 5])
def test_level_override(codec, level):
    data = os.urandom(500) * 300
    z = C.compress(codec, data, magic=2, level=level)
    assert _dec(codec, z) == data


def test_invalid_levels():
    with pytest.raises(ValueError):
        C.compress(C.GZIP, b"x", magic=2, level=10)
    with pytest.raises(ValueError):
        C.compress(C.LZ4, b"x", magic=2, level=0)
    with pytest.raises(ValueError):
        C.compress(C.ZSTD, b"x", magic=2, level=23)


def test_negative_limit_is_a_caller_error():
    with pytest.raises(ValueError):
        C.decompress(C.GZIP, C.compress(C.GZIP, b"x", magic=2), magic=2, limit=-1)


# ---------------------------------------------------------------------------------------------------------------
# API details: ids, errors, zstd and magic
# ---------------------------------------------------------------------------------------------------------------


def test_constants():
    assert (C.NONE, C.GZIP, C.SNAPPY, C.LZ4, C.ZSTD) == (0, 1, 2, 3, 4)
    assert issubclass(C.DecompressedTooLarge, C.CodecError)


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_ids(codec_id):
    with pytest.raises(C.CodecError, match=f"Unknown compression type id: {codec_id}"):
        C.decompress(codec_id, b"abc", magic=2, limit=100)
    with pytest.raises(C.CodecError, match=f"Unknown compression type id: {codec_id}"):
        C.compress(codec_id, b"abc", magic=2)


def test_none_codec_is_refused():
    with pytest.raises(C.CodecError):
        C.decompress(C.NONE, b"abc", magic=2, limit=100)
    with pytest.raises(C.CodecError):
        C.compress(C.NONE, b"abc", magic=2)


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_refused_below_magic_2(magic):
    z = C.compress(C.ZSTD, b"hello", magic=2)
    with pytest.raises(C.CodecError) as e:
        C.decompress(C.ZSTD, z, magic=magic, limit=100)
    assert e.value.codec == "zstd" and "magic" in e.value.detail
    with pytest.raises(C.CodecError):
        C.compress(C.ZSTD, b"hello", magic=magic)


def test_codec_error_attributes():
    with pytest.raises(C.CodecError) as e:
        _dec(C.LZ4, b"\x04\x22\x4d\x18\x60\x40\x82\x70\x11\x01\x00")  # block size 70000 > 64 KiB
    assert e.value.codec == "lz4"
    assert "at byte 7 declares 70000 bytes, the frame allows at most 65536" in e.value.detail
    assert str(e.value).startswith("lz4: ")


# ---------------------------------------------------------------------------------------------------------------
# xxh32
# ---------------------------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300), seed=st.integers(min_value=0, max_value=2**32 - 1))
def test_xxh32_matches_xxhash(data, seed):
    assert klz4.xxh32(data, seed) == xxhash.xxh32_intdigest(data, seed)


def test_xxh32_every_length_and_large_input():
    buf = os.urandom(100_003)
    for n in range(0, 70):
        assert klz4.xxh32(buf[:n]) == xxhash.xxh32_intdigest(buf[:n])
    assert klz4.xxh32(buf) == xxhash.xxh32_intdigest(buf)
    assert klz4.xxh32(memoryview(buf)[7:], 12345) == xxhash.xxh32_intdigest(buf[7:], 12345)


# ---------------------------------------------------------------------------------------------------------------
# lz4: Kafka's frame, the magic-0 checksum bug, python-lz4 frames, errors
# ---------------------------------------------------------------------------------------------------------------


def test_lz4_kafka_header_bytes():
    assert klz4.frame_header(0) == bytes.fromhex("04224d1860401a")
    assert klz4.frame_header(1) == bytes.fromhex("04224d18604082")
    assert klz4.frame_header(2) == bytes.fromhex("04224d18604082")
    for data in (b"", b"x", b"y" * 200_000):
        assert C.compress(C.LZ4, data, magic=0, level=None)[:7] == bytes.fromhex("04224d1860401a")
        assert C.compress(C.LZ4, data, magic=1)[:7] == bytes.fromhex("04224d18604082")
        assert C.compress(C.LZ4, data, magic=2)[:7] == bytes.fromhex("04224d18604082")
    # Empty input: header + end mark, like Lz4BlockOutputStream.close() with nothing written.
    assert C.compress(C.LZ4, b"", magic=2) == bytes.fromhex("04224d18604082") + b"\0\0\0\0"


def test_lz4_kafka_written_magic0_frame_decodes_despite_wrong_hc():
    # Written by Kafka's own Lz4BlockOutputStream for a magic-0 wrapper: HC is the "broken" 0x1a.
    v = _fixture("kafka-lz4-magic0-wrapper-value.bin")
    assert v[:7] == bytes.fromhex("04224d1860401a")
    out = _dec(C.LZ4, v, magic=0)
    # Expected size and sha256 from Kafka's own .to-magic-0.payload.txt
    assert len(out) == 99
    assert hashlib.sha256(out).hexdigest() == "1dd3915ea22601a86e86ca79c8f079b7ecfa1126f47fd640a0bb34cde61628b3"
    # The same bytes in a magic >= 1 context fail the header check, as in Kafka.
    for magic in (1, 2):
        with pytest.raises(C.CodecError, match="Stream frame descriptor corrupted"):
            _dec(C.LZ4, v, magic=magic)


def test_lz4_kafka_written_magic1_frame():
    v = _fixture("kafka-lz4-magic1-wrapper-value.bin")
    assert v[:7] == bytes.fromhex("04224d18604082")
    out = _dec(C.LZ4, v, magic=1)
    assert len(out) == 107
    assert hashlib.sha256(out).hexdigest() == "b5f1645e395daaf9826ba2269ebb8121e9c8fe1c7528b501d3c14320931a4cce"
    assert _dec(C.LZ4, v, magic=0) == out  # magic 0 just skips the check


def test_lz4_magic0_output_decodes_and_magic1_corrupted_hc_raises():
    data = b"records " * 1000
    z0 = C.compress(C.LZ4, data, magic=0)
    assert _dec(C.LZ4, z0, magic=0) == data
    z1 = bytearray(C.compress(C.LZ4, data, magic=1))
    assert _dec(C.LZ4, z1, magic=1) == data
    z1[6] ^= 0x01
    with pytest.raises(C.CodecError, match="Stream frame descriptor corrupted"):
        _dec(C.LZ4, z1, magic=1)
    assert _dec(C.LZ4, z1, magic=0) == data  # magic 0 ignores HC entirely


def test_lz4_incompressible_blocks_are_stored():
    data = os.urandom(70_000)
    z = C.compress(C.LZ4, data, magic=2)
    (size0,) = struct.unpack_from("<I", z, 7)
    assert size0 == 0x80000000 | 65536  # stored flag + full 64 KiB block
    assert z[11:11 + 65536] == data[:65536]
    assert z.endswith(b"\0\0\0\0")
    assert _dec(C.LZ4, z) == data


def test_lz4_python_lz4_frames():
    small = b"hello lz4 " * 1000  # < 64 KiB: one block, independent even with python-lz4's linked default
    for z in (
        lz4.frame.compress(small),  # defaults: content size present
        lz4.frame.compress(small, content_checksum=True),
        lz4.frame.compress(small, block_checksum=True),
        lz4.frame.compress(small, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False,
                           content_checksum=False, store_size=False),
    ):
        assert _dec(C.LZ4, z) == small
    assert lz4.frame.compress(
        small, block_size=lz4.frame.BLOCKSIZE_MAX64KB, block_linked=False, content_checksum=False, store_size=False
    )[:7] == bytes.fromhex("04224d18604082")

    big = os.urandom(3000) * 400  # 1.2 MB: many blocks
    for bs in (lz4.frame.BLOCKSIZE_MAX64KB, lz4.frame.BLOCKSIZE_MAX256KB, lz4.frame.BLOCKSIZE_MAX1MB,
               lz4.frame.BLOCKSIZE_MAX4MB):
        z = lz4.frame.compress(big, block_size=bs, block_linked=False, block_checksum=True, content_checksum=True)
        assert _dec(C.LZ4, z) == big
    # python-lz4's default (linked blocks) over several blocks: Kafka rejects dependent blocks, so do we.
    linked = lz4.frame.compress(big)
    assert not linked[4] & 0x20
    with pytest.raises(C.CodecError, match="Dependent block stream is unsupported"):
        _dec(C.LZ4, linked)


def test_lz4_our_frames_decode_with_python_lz4():
    data = b"abc" * 50_000
    assert lz4.frame.decompress(C.compress(C.LZ4, data, magic=2)) == data


def _lz4_frame(flg=0x60, bd=0x40, blocks=(), end=b"\0\0\0\0", content_size=None, magic=2):
    desc = bytes((flg, bd)) + (struct.pack("<Q", content_size) if content_size is not None else b"")
    hc = klz4.header_checksum(desc)
    return klz4.MAGIC_BYTES + desc + bytes((hc,)) + b"".join(blocks) + end


def test_lz4_header_errors():
    stored = struct.pack("<I", 0x80000003) + b"abc"
    assert _dec(C.LZ4, _lz4_frame(blocks=[stored])) == b"abc"
    cases = {
        b"\x04\x22\x4d": "Stream ended prematurely",
        b"\x05\x22\x4d\x18\x60\x40\x82\0\0\0\0": "invalid magic bytes",
        _lz4_frame(flg=0x61): "Reserved bits must be 0",
        _lz4_frame(flg=0x40): "Dependent block stream is unsupported",
        _lz4_frame(flg=0xA0): "Version 2 is unsupported",
        _lz4_frame(bd=0x41): "Reserved2 field must be 0",
        _lz4_frame(bd=0x30): "Block size value must be between 4 and 7",
        _lz4_frame(bd=0xC0): "Reserved3 field must be 0",
        bytes.fromhex("04224d186040"): "header checksum byte",
        bytes.fromhex("04224d186840"): "content size",
        _lz4_frame(end=b""): "no end mark",
        _lz4_frame(blocks=[struct.pack("<I", 10) + b"abc"], end=b""): "declares 10 bytes, only 3 remain",
        _lz4_frame(blocks=[struct.pack("<I", 0x80000000 | 65537)]): "Block size 65537 exceeded max: 65536",
        _lz4_frame(flg=0x64, blocks=[stored]): "content checksum",
        _lz4_frame(flg=0x70, blocks=[stored], end=b""): "block checksum at byte 14 is missing",
        _lz4_frame(flg=0x70, blocks=[stored + b"\0\0\0\0"]): "Block checksum mismatch",
        _lz4_frame(blocks=[struct.pack("<I", 4) + b"\xff\xff\xff\xff"]): "corrupt lz4 block at byte 7",
    }
    for frame, message in cases.items():
        with pytest.raises(C.CodecError, match=message) as e:
            _dec(C.LZ4, frame)
        assert type(e.value) is C.CodecError, frame.hex()


def test_lz4_reader_quirks():
    stored = struct.pack("<I", 0x80000003) + b"abc"
    # A size of 0 with the "uncompressed" bit set is an end mark for Kafka.
    assert _dec(C.LZ4, _lz4_frame(blocks=[stored], end=struct.pack("<I", 0x80000000))) == b"abc"
    # Bytes after the end mark are ignored; the content size is skipped, never trusted.
    assert _dec(C.LZ4, _lz4_frame(blocks=[stored]) + b"garbage") == b"abc"
    assert _dec(C.LZ4, _lz4_frame(flg=0x68, blocks=[stored], content_size=999)) == b"abc"
    # Content checksum must be present but is not verified (Kafka 4.0 reads and discards it).
    assert _dec(C.LZ4, _lz4_frame(flg=0x64, blocks=[stored], end=b"\0\0\0\0" + b"\xde\xad\xbe\xef")) == b"abc"
    # Block checksums are verified when flagged.
    ok = stored + struct.pack("<I", klz4.xxh32(b"abc"))
    assert _dec(C.LZ4, _lz4_frame(flg=0x70, blocks=[ok])) == b"abc"
    # Larger block-size ids allow larger blocks.
    piece = os.urandom(200_000)
    blk = struct.pack("<I", 0x80000000 | len(piece)) + piece
    assert _dec(C.LZ4, _lz4_frame(bd=0x50, blocks=[blk])) == piece
    with pytest.raises(C.CodecError, match="exceeded max: 65536"):
        _dec(C.LZ4, _lz4_frame(bd=0x40, blocks=[blk]))


@settings(max_examples=100, deadline=None)
@given(data=st.binary(min_size=1, max_size=2000), reps=st.integers(min_value=1, max_value=40))
def test_lz4_output_size_walker(data, reps):
    # The walker that tells "too large for the limit" from "corrupt" must count exactly what lz4 produces.
    block = lz4.block.compress(data * reps, store_size=False)
    size = len(data) * reps
    assert klz4._output_exceeds(memoryview(block), size - 1)
    assert not klz4._output_exceeds(memoryview(block), size)


def test_lz4_too_large_versus_corrupt_block():
    data = b"0123456789abcdef" * 4000  # 64000 bytes, one block
    block = lz4.block.compress(data, store_size=False)
    frame = _lz4_frame(blocks=[struct.pack("<I", len(block)) + block])
    assert _dec(C.LZ4, frame) == data
    with pytest.raises(C.DecompressedTooLarge):
        _dec(C.LZ4, frame, limit=1000)
    # Corrupt right at the start (the first match points before the block): corrupt, whatever the limit.
    bad = bytearray(block)
    bad[0] = 0x1F  # 1 literal, then a match
    bad[2:4] = b"\xff\x00"  # offset 255 > 1 byte produced so far
    frame = _lz4_frame(blocks=[struct.pack("<I", len(bad)) + bytes(bad)])
    for limit in (10, 1000, BIG):
        with pytest.raises(C.CodecError) as e:
            _dec(C.LZ4, frame, limit=limit)
        assert type(e.value) is C.CodecError


# ---------------------------------------------------------------------------------------------------------------
# snappy: xerial framing, raw blocks, concatenation, errors
# ---------------------------------------------------------------------------------------------------------------


def test_snappy_xerial_output_layout():
    data = os.urandom(1000) * 100  # 100 000 bytes -> 4 pieces of up to 32 KiB
    z = C.compress(C.SNAPPY, data, magic=2)
    assert z[:16] == bytes.fromhex("82534e41505059000000000100000001")
    pos, pieces = 16, []
    while pos < len(z):
        (n,) = struct.unpack_from(">i", z, pos)
        pieces.append(snappy.uncompress(z[pos + 4:pos + 4 + n]))
        pos += 4 + n
    assert [len(p) for p in pieces] == [32768, 32768, 32768, 100000 - 3 * 32768]
    assert b"".join(pieces) == data
    assert C.compress(C.SNAPPY, b"", magic=2) == z[:16]
    assert _dec(C.SNAPPY, z[:16]) == b""


def test_snappy_raw_block_without_xerial_header():
    for data in (b"a", b"hello", b"x" * 15, os.urandom(40_000), b"kafkajs " * 10_000):
        raw = snappy.compress(data)
        assert _dec(C.SNAPPY, raw) == data
        assert _dec(C.SNAPPY, memoryview(raw)) == data


def test_snappy_concatenated_xerial_streams():
    a, b, c = b"first " * 9000, b"", os.urandom(50_000)
    z = C.compress(C.SNAPPY, a, magic=2) + C.compress(C.SNAPPY, b, magic=2) + C.compress(C.SNAPPY, c, magic=2)
    assert _dec(C.SNAPPY, z) == a + b + c


def test_snappy_reader_quirks_and_errors():
    head = ksnappy.MAGIC + struct.pack(">ii", 1, 1)
    block = snappy.compress(b"abc")
    one = head + struct.pack(">i", len(block)) + block
    # 1-3 stray bytes where a chunk length would be: snappy-java ends the stream silently.
    assert _dec(C.SNAPPY, one + b"\x00\x01") == b"abc"
    # A concatenated header whose magic does not fully match ends the stream silently.
    assert _dec(C.SNAPPY, one + b"\x82SNA" + b"XXXX" + b"\0" * 8 + b"junk") == b"abc"
    # The first header's version is not checked by snappy-java 1.1.10; a concatenated one's is.
    assert _dec(C.SNAPPY, ksnappy.MAGIC + struct.pack(">ii", 0, 0) + one[16:]) == b"abc"
    cases = {
        b"": "Cannot decompress empty stream",
        one + head[:10]: "Insufficient header size in a concatenated block",
        one + ksnappy.MAGIC + struct.pack(">ii", 0, 1): "incompatible codec version 0",
        head + struct.pack(">i", -5): "chunkSize is too big or negative : -5",
        head + struct.pack(">i", 100) + block: "failed to read chunk: chunk at byte 16 declares 100 bytes",
        head + struct.pack(">i", 0): "empty snappy block",
        head + struct.pack(">i", ksnappy.MAX_CHUNK_SIZE + 1) + b"x": "maximum chunk size",
        head + struct.pack(">i", 3) + b"\x05ab": "chunk at byte 16: corrupt snappy block",
        b"\x05ab": "raw snappy block at byte 0: corrupt snappy block",
        b"\x80\x80\x80\x80\x80\x01": "longer than 5 bytes",
        b"\x80\x80": "varint at byte 0 is truncated",
    }
    for data, message in cases.items():
        with pytest.raises(C.CodecError, match=message) as e:
            _dec(C.SNAPPY, data)
        assert type(e.value) is C.CodecError, data.hex()


def test_snappy_declared_length_checked_before_allocation():
    # A 6-byte raw block claiming 4 GiB - 1: refused from the varint alone, nothing is allocated.
    tracemalloc.start()
    try:
        with pytest.raises(C.DecompressedTooLarge, match="declares 4294967295"):
            _dec(C.SNAPPY, b"\xff\xff\xff\xff\x0f\x00", limit=1 << 20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


# ---------------------------------------------------------------------------------------------------------------
# gzip: Kafka's header, concatenated members, Java header rules
# ---------------------------------------------------------------------------------------------------------------


def test_gzip_kafka_header_and_trailer():
    data = b"gzip me " * 1000
    z = C.compress(C.GZIP, data, magic=1)
    assert z[:10] == bytes.fromhex("1f8b08000000000000ff")
    assert struct.unpack("<II", z[-8:]) == (zlib.crc32(data), len(data))
    assert std_gzip.decompress(z) == data
    raw = zlib.compressobj(6, zlib.DEFLATED, -15, 8)
    assert z[10:-8] == raw.compress(data) + raw.flush()


def test_gzip_concatenated_members():
    a, b = b"one " * 5000, os.urandom(20_000)
    z = C.compress(C.GZIP, a, magic=2) + std_gzip.compress(b) + C.compress(C.GZIP, b"", magic=2)
    assert _dec(C.GZIP, z) == a + b


def test_gzip_java_header_rules():
    data = b"payload " * 100
    named = io.BytesIO()
    with std_gzip.GzipFile(filename="name.txt", mode="wb", fileobj=named, mtime=1) as f:
        f.write(data)
    assert named.getvalue()[3] & 0x08  # FNAME
    assert _dec(C.GZIP, named.getvalue()) == data
    body = C.compress(C.GZIP, data, magic=2)[10:]
    # FEXTRA + FCOMMENT + FHCRC, built by hand.
    head = bytes.fromhex("1f8b08") + bytes((0x04 | 0x10 | 0x02,)) + b"\0\0\0\0\0\xff" + b"\x03\x00xyz" + b"hi\0"
    head += struct.pack("<H", zlib.crc32(head) & 0xFFFF)
    assert _dec(C.GZIP, head + body) == data
    with pytest.raises(C.CodecError, match="corrupt gzip header"):
        _dec(C.GZIP, head[:-1] + bytes((head[-1] ^ 1,)) + body)
    # Reserved flag bits: zlib rejects them, Java (and so Kafka) does not look at them.
    reserved = bytes.fromhex("1f8b08e0000000000000") + body
    with pytest.raises(zlib.error):
        zlib.decompress(reserved, 31)
    assert _dec(C.GZIP, reserved) == data


def test_gzip_trailing_data_after_a_member():
    z = C.compress(C.GZIP, b"abc", magic=2)
    # Not a valid header -> Java's GZIPInputStream stops silently; so do we.
    for tail in (b"\0", b"\0" * 100, b"garbage!garbage!", b"\x1f\x8b\x08", b"\x1f\x8b\x07" + b"\0" * 20):
        assert _dec(C.GZIP, z + tail) == b"abc"
    # A valid header followed by corrupt or truncated data is an error, as in Java.
    with pytest.raises(C.CodecError):
        _dec(C.GZIP, z + z[:-3])
    with pytest.raises(C.CodecError):
        _dec(C.GZIP, z + z[:12] + b"\xff" * 20)


def test_gzip_errors():
    z = C.compress(C.GZIP, b"hello gzip " * 50, magic=2)
    cases = {
        b"": "empty input",
        b"\x1f\x8b\x08\0": "truncated",
        b"\x1f\x8c" + z[2:]: "not in gzip format",
        z[:2] + b"\x07" + z[3:]: "unsupported compression method 7",
        z[:-9]: "is truncated",
        z[:-4]: "trailer at byte",
        z[:-8] + bytes((z[-8] ^ 1,)) + z[-7:]: "corrupt gzip trailer",
        z[:-1] + bytes((z[-1] ^ 1,)): "corrupt gzip trailer",
        z[:10] + b"\xff" * 30: "corrupt deflate data in gzip member at byte 0",
    }
    for data, message in cases.items():
        with pytest.raises(C.CodecError, match=message) as e:
            _dec(C.GZIP, data)
        assert type(e.value) is C.CodecError, data.hex()


# ---------------------------------------------------------------------------------------------------------------
# zstd: frames without content size, concatenated and skippable frames, walker errors
# ---------------------------------------------------------------------------------------------------------------


def test_zstd_kafka_frame_shape():
    z = C.compress(C.ZSTD, b"zstd " * 100, magic=2)
    assert z[:6] == bytes.fromhex("28b52ffd0058")  # FHD 0: no content size, no checksum; 2 MiB window
    assert z.endswith(b"\x01\x00\x00")  # zstd-jni ends the frame with an empty last block


def test_zstd_frames_without_content_size_and_concatenated():
    a, b = b"a" * 100_000, os.urandom(5000)
    streamed = io.BytesIO()
    with zstandard.ZstdCompressor(write_content_size=False).stream_writer(streamed, closefd=False) as w:
        w.write(a)
    one_shot = zstandard.ZstdCompressor(write_checksum=True).compress(b)
    skippable = struct.pack("<II", 0x184D2A5E, 4) + b"skip"
    z = streamed.getvalue() + skippable + one_shot + C.compress(C.ZSTD, b"c", magic=2)
    assert _dec(C.ZSTD, z) == a + b + b"c"


def test_zstd_errors():
    z = C.compress(C.ZSTD, b"zstd data " * 100, magic=2)
    checked = zstandard.ZstdCompressor(write_checksum=True).compress(b"zstd data " * 100)
    cases = {
        b"": "empty input",
        b"\x28\xb5": "a frame magic needs 4",
        b"\x00" * 8: "not a zstd frame",
        z + b"trailing": "data after the last frame is not a zstd frame",
        z[:5]: "truncated frame header",
        z[:-1]: "truncated",
        checked[:-2]: "content checksum at byte",
        checked[:-1] + bytes((checked[-1] ^ 1,)): "corrupt zstd data",
        z[:4] + b"\x08" + z[5:]: "reserved bit",
        z[:6] + b"\x07\x00\x00": "reserved block type",
        struct.pack("<II", 0x184D2A50, 10) + b"x": "skippable frame at byte 0 declares 10 bytes",
    }
    for data, message in cases.items():
        with pytest.raises(C.CodecError, match=message) as e:
            _dec(C.ZSTD, data)
        assert type(e.value) is C.CodecError, data.hex()


# ---------------------------------------------------------------------------------------------------------------
# decompression bombs
# ---------------------------------------------------------------------------------------------------------------

BOMB_SIZE = 50_000_000
BOMB_LIMIT = 1 << 20


@pytest.fixture(scope="module")
def bombs():
    zeros = bytes(BOMB_SIZE)
    out = {c: C.compress(c, zeros, magic=2, level=1 if c == C.GZIP else None) for c in CODECS}
    out["raw-snappy"] = snappy.compress(zeros[:4_000_000])  # one raw block declaring 4 MB
    out["python-lz4-4MB-blocks"] = lz4.frame.compress(
        zeros, block_size=lz4.frame.BLOCKSIZE_MAX4MB, block_linked=False
    )
    return out


@pytest.mark.parametrize("which", CODECS + ["raw-snappy", "python-lz4-4MB-blocks"])
def test_decompression_bomb(bombs, which):
    codec = which if isinstance(which, int) else (C.SNAPPY if "snappy" in which else C.LZ4)
    z = bombs[which]
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(C.DecompressedTooLarge) as e:
            C.decompress(codec, z, magic=2, limit=BOMB_LIMIT)
        elapsed = time.perf_counter() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert e.value.limit == BOMB_LIMIT
    assert elapsed < 2.0
    # Python-level allocations stay around the limit (lz4 may hold one extra 4 MiB block transiently).
    assert peak < 3 * BOMB_LIMIT + (4 << 20 if which == "python-lz4-4MB-blocks" else 0), peak


@pytest.mark.parametrize("codec", CODECS)
def test_limit_boundaries(codec):
    data = b"0123456789" * 20_000
    z = C.compress(codec, data, magic=2)
    assert _dec(codec, z, limit=len(data)) == data
    with pytest.raises(C.DecompressedTooLarge):
        _dec(codec, z, limit=len(data) - 1)
    with pytest.raises(C.DecompressedTooLarge):
        _dec(codec, z, limit=0)
    empty = C.compress(codec, b"", magic=2)
    assert _dec(codec, empty, limit=0) == b""


# ---------------------------------------------------------------------------------------------------------------
# truncated and mutated inputs: CodecError, never anything else
# ---------------------------------------------------------------------------------------------------------------

_SAMPLE = (b"The quick brown fox " * 30 + bytes(range(256))) * 3


@pytest.mark.parametrize("codec,magic", [(c, m) for c in CODECS for m in _magics(c)])
def test_every_truncation(codec, magic):
    z = C.compress(codec, _SAMPLE, magic=magic)
    for n in range(len(z)):
        try:
            out = C.decompress(codec, z[:n], magic=magic, limit=BIG)
        except C.CodecError:
            continue
        # Only xerial snappy can end cleanly early: at a chunk boundary (a shorter, valid stream) or with 1-3
        # stray bytes, which snappy-java ignores. Everything else must notice the truncation.
        assert codec == C.SNAPPY and _SAMPLE.startswith(out), (codec, n)


def _mutate(z: bytes, ops) -> bytes:
    b = bytearray(z)
    for kind, pos, val in ops:
        if not b:
            break
        i = pos % len(b)
        if kind == "flip":
            b[i] ^= 1 << (val % 8)
        elif kind == "set":
            b[i] = val % 256
        elif kind == "insert":
            b[i:i] = bytes((val % 256,))
        elif kind == "delete":
            del b[i]
        elif kind == "truncate":
            del b[i:]
    return bytes(b)


_OPS = st.lists(
    st.tuples(
        st.sampled_from(["flip", "flip", "flip", "set", "insert", "delete", "truncate"]),
        st.integers(min_value=0, max_value=2**20),
        st.integers(min_value=0, max_value=255),
    ),
    min_size=1,
    max_size=4,
)


def _valid_outputs():
    data_small = b"kafka record " * 40
    data_big = (os.urandom(2000) + bytes(6000)) * 10  # 80 KB, several blocks/chunks
    outs = []
    for codec in CODECS:
        for magic in _magics(codec):
            for data in (data_small, data_big):
                outs.append((codec, magic, C.compress(codec, data, magic=magic)))
    outs.append((C.SNAPPY, 2, snappy.compress(data_small)))
    outs.append((C.LZ4, 2, lz4.frame.compress(data_small, block_checksum=True, content_checksum=True)))
    outs.append((C.ZSTD, 2, zstandard.ZstdCompressor(write_checksum=True).compress(data_small)))
    outs.append((C.GZIP, 2, std_gzip.compress(data_small) * 2))
    return outs


_VALID = _valid_outputs()


@settings(max_examples=600, deadline=None)
@given(idx=st.integers(min_value=0, max_value=len(_VALID) - 1), ops=_OPS, magic_override=st.sampled_from([None, 0, 1]))
def test_mutated_inputs_raise_only_codec_error(idx, ops, magic_override):
    codec, magic, z = _VALID[idx]
    if magic_override is not None and codec != C.ZSTD:
        magic = magic_override
    mutated = _mutate(z, ops)
    assume(mutated != z)
    try:
        out = C.decompress(codec, mutated, magic=magic, limit=200_000)
    except C.CodecError:
        return
    assert type(out) is bytes and len(out) <= 200_000


@settings(max_examples=200, deadline=None)
@given(codec=st.sampled_from(CODECS), data=st.binary(max_size=64), magic=st.sampled_from([0, 1, 2]))
def test_random_garbage_raises_only_codec_error(codec, data, magic):
    try:
        out = C.decompress(codec, data, magic=magic, limit=100_000)
    except C.CodecError:
        return
    assert type(out) is bytes and len(out) <= 100_000


# ---------------------------------------------------------------------------------------------------------------
# real Kafka data (fixtures/codec/, copied from the reference corpus)
# ---------------------------------------------------------------------------------------------------------------


def _walk_records(payload: bytes, count: int) -> None:
    """Check that ``payload`` is exactly ``count`` v2 records, each a zigzag-varint length + that many bytes."""
    pos = 0
    for _ in range(count):
        value = shift = 0
        while True:
            b = payload[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        length = (value >> 1) ^ -(value & 1)
        assert length > 0
        pos += length
        assert pos <= len(payload)
    assert pos == len(payload)


@pytest.mark.parametrize(
    "name,codec",
    [
        ("kafka-v2-gzip-batch0.bin", C.GZIP),
        ("kafka-v2-snappy-batch0.bin", C.SNAPPY),
        ("kafka-v2-snappy-batch4.bin", C.SNAPPY),
        ("kafka-v2-lz4-batch0.bin", C.LZ4),
        ("kafka-v2-lz4-batch4.bin", C.LZ4),
        ("kafka-v2-zstd-batch0.bin", C.ZSTD),
        ("broker-v2-snappy-raw-batch.bin", C.SNAPPY),
        ("librdkafka-v2-lz4-batch.bin", C.LZ4),
    ],
)
def test_real_kafka_v2_batches(name, codec):
    batch = _fixture(name)
    assert batch[16] == 2  # magic
    (attributes,) = struct.unpack_from(">h", batch, 21)
    assert attributes & 0x07 == codec
    (count,) = struct.unpack_from(">i", batch, 57)
    out = C.decompress(codec, memoryview(batch)[61:], magic=2, limit=BIG)
    assert out
    _walk_records(out, count)


def test_raw_snappy_batch_is_not_xerial_framed():
    payload = _fixture("broker-v2-snappy-raw-batch.bin")[61:]
    assert not payload.startswith(ksnappy.MAGIC)
    out = _dec(C.SNAPPY, payload)
    assert b"key-149" in out and b"value-149-2019-02-04T15:13:48.187Z" in out


def test_kafka_bytes_are_reproduced_for_gzip_and_zstd():
    # gzip: Java's Deflater and this zlib produce the same deflate stream at level 6.
    gz = _fixture("kafka-v2-gzip-batch0.bin")[61:]
    assert C.compress(C.GZIP, _dec(C.GZIP, gz), magic=2) == gz
    # zstd: zstd-jni 1.5.7 streaming output, reproduced when python-zstandard bundles the same libzstd.
    zs = _fixture("kafka-v2-zstd-batch0.bin")[61:]
    if zstandard.ZSTD_VERSION[:2] == (1, 5):
        assert C.compress(C.ZSTD, _dec(C.ZSTD, zs), magic=2) == zs


def test_kafka_082_wrappers():
    # Kafka 0.8.2.1 broker: the same 12578-byte inner message set, once gzip (OS byte 0: an old JDK) and once
    # xerial snappy.
    gz = _fixture("kafka082-v0-gzip-wrapper-value.bin")
    sn = _fixture("kafka082-v0-snappy-wrapper-value.bin")
    assert gz[:10] == bytes.fromhex("1f8b0800000000000000")
    assert sn.startswith(ksnappy.MAGIC)
    a = _dec(C.GZIP, gz, magic=0)
    b = _dec(C.SNAPPY, sn, magic=0)
    assert a == b and len(a) == 12578
    assert hashlib.sha256(a).hexdigest() == "91e7ae6b8609cf844836c51cf2d6cf82848d1aeafbd6d054dcfcb00ce507cc73"


def test_module_constants():
    assert kgzip.KAFKA_HEADER == bytes.fromhex("1f8b08000000000000ff")
    assert kzstd.FRAME_MAGIC.to_bytes(4, "little") == bytes.fromhex("28b52ffd")
    assert lz4.block.decompress(lz4.block.compress(b"x")) == b"x"  # sanity: the C library is importable
