"""lz4 (codec id 3): Kafka's own LZ4 frame reader and writer (``Lz4BlockInputStream`` / ``Lz4BlockOutputStream``).

Kafka uses the LZ4 *frame* format with a restricted feature set (spec §4.3)::

    magic  04 22 4D 18                  (0x184D2204 little-endian)
    FLG    bits 7-6 version = 01, bit 5 block independence, bit 4 block checksum, bit 3 content size,
           bit 2 content checksum, bits 1-0 reserved = 0          -- Kafka writes 0x60
    BD     bit 7 reserved, bits 6-4 block max size id (4..7 = 64 KiB, 256 KiB, 1 MiB, 4 MiB), bits 3-0 reserved
                                                                  -- Kafka writes 0x40
    [content size, 8 bytes LE, if FLG bit 3]                      -- skipped, never trusted
    HC     (xxh32(FLG, BD[, content size]; seed 0) >> 8) & 0xFF
    blocks uint32 LE size (high bit = stored uncompressed), data, [uint32 LE xxh32(data) if FLG bit 4]
    end    uint32 0, then [4-byte content checksum if FLG bit 2]

The frame is parsed here rather than by ``lz4.frame`` because Kafka deviates from the reference library:

* **The magic-0 header-checksum bug.** Kafka's first LZ4 writer computed HC over the magic bytes too (6 bytes
  instead of 2). Kafka therefore writes that "broken" HC for magic-0 wrappers and does *not check* HC when
  reading magic 0; for magic >= 1 HC is written correctly and verified. ``lz4.frame`` always verifies, so it
  would reject every genuine magic-0 lz4 wrapper.
* Only independent blocks are supported ("Dependent block stream is unsupported"): each compressed block is
  decoded on its own with ``lz4.block.decompress``. python-lz4's ``lz4.frame.compress`` defaults to linked
  blocks, which Kafka -- and therefore this reader -- rejects once the input spans more than one block.
* A block whose size field, with the "uncompressed" high bit masked off, is 0 is taken as the end mark (so
  ``0x80000000`` ends the frame too), exactly like Kafka.
* The content checksum after the end mark must be present but is not verified (Kafka 4.0's reader reads and
  discards it). Block checksums, when flagged, are verified.
* Only the first frame is read; bytes after the end mark (and content checksum) are ignored.

``limit`` is enforced before every block: a stored block is refused if it would overshoot, and a compressed
block is decoded into a buffer of at most ``remaining limit + 1`` bytes.

Writing reproduces ``Lz4BlockOutputStream``: FLG 0x60, BD 0x40 (64 KiB blocks), HC correct for magic >= 1 and
"broken" for magic 0, blocks compressed with lz4's fast compressor at Kafka's default level 9 (any other level
uses lz4-HC at that level, like Kafka's ``highCompressor(level)``), a block stored uncompressed when compression
does not make it smaller, then the end mark.

This module also provides :func:`xxh32`, a pure-Python XXH32 (the LZ4 frame checksum).
"""

from __future__ import annotations

import struct

import lz4.block as _lz4_block  # python-lz4 (C): raw LZ4 blocks

from .errors import CodecError, DecompressedTooLarge, _Output, _view

_NAME = "lz4"

MAGIC = 0x184D2204
MAGIC_BYTES = b"\x04\x22\x4d\x18"
KAFKA_FLG = 0x60  # version 1, independent blocks, no checksums, no content size
KAFKA_BD = 0x40  # block max size id 4 = 64 KiB
KAFKA_BLOCK_SIZE = 64 * 1024
KAFKA_DEFAULT_LEVEL = 9  # CompressionType.LZ4.defaultLevel(): uses lz4-java's fast compressor
_STORED = 0x80000000  # LZ4_FRAME_INCOMPRESSIBLE_MASK

# ---------------------------------------------------------------------------------------------------------------
# xxh32
# ---------------------------------------------------------------------------------------------------------------

_P1 = 2654435761
_P2 = 2246822519
_P3 = 3266489917
_P4 = 668265263
_P5 = 374761393
_M = 0xFFFFFFFF


def xxh32(data, seed: int = 0) -> int:
    """XXH32 of ``data`` (bytes-like) with ``seed``, as an unsigned 32-bit int.

    Pure Python: LZ4 frames only need it over the 2-10 byte frame descriptor, or over block data when a frame
    carries block checksums (never in Kafka-written data). Processes 16-byte stripes with ``struct.iter_unpack``
    so that even a 4 MiB block takes about half a second.
    """
    mv = _view(data)
    n = len(mv)
    seed &= _M
    i = 0
    if n >= 16:
        v1 = (seed + _P1 + _P2) & _M
        v2 = (seed + _P2) & _M
        v3 = seed
        v4 = (seed - _P1) & _M
        stripes = n - (n % 16)
        for a, b, c, d in struct.iter_unpack("<4I", mv[:stripes]):
            v1 = (v1 + a * _P2) & _M
            v1 = (((v1 << 13) | (v1 >> 19)) & _M) * _P1 & _M
            v2 = (v2 + b * _P2) & _M
            v2 = (((v2 << 13) | (v2 >> 19)) & _M) * _P1 & _M
            v3 = (v3 + c * _P2) & _M
            v3 = (((v3 << 13) | (v3 >> 19)) & _M) * _P1 & _M
            v4 = (v4 + d * _P2) & _M
            v4 = (((v4 << 13) | (v4 >> 19)) & _M) * _P1 & _M
        h = (
            (((v1 << 1) | (v1 >> 31)) & _M)
            + (((v2 << 7) | (v2 >> 25)) & _M)
            + (((v3 << 12) | (v3 >> 20)) & _M)
            + (((v4 << 18) | (v4 >> 14)) & _M)
        ) & _M
        i = stripes
    else:
        h = (seed + _P5) & _M
    h = (h + n) & _M  # the total length, modulo 2^32
    while i + 4 <= n:
        (k,) = struct.unpack_from("<I", mv, i)
        h = (h + k * _P3) & _M
        h = (((h << 17) | (h >> 15)) & _M) * _P4 & _M
        i += 4
    while i < n:
        h = (h + mv[i] * _P5) & _M
        h = (((h << 11) | (h >> 21)) & _M) * _P1 & _M
        i += 1
    h ^= h >> 15
    h = (h * _P2) & _M
    h ^= h >> 13
    h = (h * _P3) & _M
    h ^= h >> 16
    return h


def header_checksum(descriptor) -> int:
    """The LZ4 frame HC byte: second byte of xxh32(descriptor, seed 0)."""
    return (xxh32(descriptor) >> 8) & 0xFF


# ---------------------------------------------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------------------------------------------


def _err(detail: str) -> CodecError:
    return CodecError(_NAME, detail)


def decompress(data, *, magic: int, limit: int) -> bytes:
    """Decode one Kafka LZ4 frame; the HC byte is checked only for ``magic >= 1``; output bounded by ``limit``."""
    mv = _view(data)
    n = len(mv)
    if n < 6:
        raise _err(f"Stream ended prematurely: {n} bytes, the frame header needs at least 7")
    if mv[:4] != MAGIC_BYTES:
        raise _err(f"Stream unsupported (invalid magic bytes): {bytes(mv[:4]).hex()} at byte 0, expected 04224d18")

    flg = mv[4]
    if flg & 0x03:
        raise _err(f"Reserved bits must be 0: FLG byte {flg:#04x} at byte 4")
    if not flg & 0x20:
        raise _err(f"Dependent block stream is unsupported: FLG byte {flg:#04x} at byte 4 has block independence 0")
    version = flg >> 6
    if version != 1:
        raise _err(f"Version {version} is unsupported: FLG byte {flg:#04x} at byte 4")
    block_checksums = bool(flg & 0x10)
    content_size = bool(flg & 0x08)
    content_checksum = bool(flg & 0x04)

    bd = mv[5]
    if bd & 0x0F:
        raise _err(f"Reserved2 field must be 0: BD byte {bd:#04x} at byte 5")
    size_id = (bd >> 4) & 0x07
    if not 4 <= size_id <= 7:
        raise _err(f"Block size value must be between 4 and 7: BD byte {bd:#04x} at byte 5 has {size_id}")
    if bd & 0x80:
        raise _err(f"Reserved3 field must be 0: BD byte {bd:#04x} at byte 5")
    max_block = 1 << (2 * size_id + 8)

    pos = 6
    if content_size:
        # Kafka skips the 8-byte content size: it is neither trusted nor used to size buffers.
        if n - pos < 8:
            raise _err(f"Stream ended prematurely: content size field at byte {pos} needs 8 bytes")
        pos += 8
    if pos >= n:
        raise _err(f"Stream ended prematurely: header checksum byte at byte {pos} is missing")
    if magic >= 1:
        want = header_checksum(mv[4:pos])
        if mv[pos] != want:
            raise _err(
                f"Stream frame descriptor corrupted: header checksum at byte {pos} is {mv[pos]:#04x}, "
                f"expected {want:#04x}"
            )
    # magic 0: Kafka's old writer computed HC over magic+FLG+BD, so Kafka skips the byte unchecked.
    pos += 1

    chunks = _Output()
    total = 0
    while True:
        if n - pos < 4:
            raise _err(f"Stream ended prematurely: block size at byte {pos} is missing (no end mark)")
        (raw_size,) = struct.unpack_from("<I", mv, pos)
        stored = bool(raw_size & _STORED)
        size = raw_size & ~_STORED
        if size == 0:
            # End mark (Kafka also treats a size of 0 with the "uncompressed" bit set as the end mark).
            if content_checksum and n - (pos + 4) < 4:
                raise _err(f"Stream ended prematurely: content checksum after the end mark at byte {pos} is missing")
            break
        if size > max_block:
            raise _err(
                f"Block size {size} exceeded max: {max_block} (lz4 block at byte {pos} declares {size} bytes, "
                f"the frame allows at most {max_block})"
            )
        start = pos + 4
        end = start + size
        if end > n:
            raise _err(
                f"Stream ended prematurely: lz4 block at byte {pos} declares {size} bytes, only {n - start} remain"
            )
        block = mv[start:end]
        if block_checksums:
            if n - end < 4:
                raise _err(f"Stream ended prematurely: block checksum at byte {end} is missing")
            (want_sum,) = struct.unpack_from("<I", mv, end)
            got_sum = xxh32(block)
            if want_sum != got_sum:
                raise _err(
                    f"Block checksum mismatch: lz4 block at byte {pos} has checksum {want_sum:#010x}, "
                    f"computed {got_sum:#010x}"
                )
            next_pos = end + 4
        else:
            next_pos = end

        room = limit - total
        if stored:
            if size > room:
                raise DecompressedTooLarge(
                    _NAME,
                    f"stored lz4 block at byte {pos} holds {size} bytes, only {room} left of the limit of {limit}",
                    limit,
                )
            out = bytes(block)
        else:
            out = _decompress_block(block, pos, max_block, room, limit)
        total += len(out)
        chunks.append(out)
        pos = next_pos

    return chunks.value()


def _decompress_block(block: memoryview, pos: int, max_block: int, room: int, limit: int) -> bytes:
    """Decode one independent compressed block into at most ``min(max_block, room + 1)`` bytes."""
    cap = min(max_block, room + 1)
    try:
        out = _lz4_block.decompress(block, uncompressed_size=cap)
    except Exception as e:  # python-lz4 raises LZ4BlockError
        if cap < max_block and _output_exceeds(block, room):
            # The block did not fit in what is left of the limit (rather than being corrupt before that point).
            raise DecompressedTooLarge(
                _NAME,
                f"lz4 block at byte {pos} decompresses to more than the {room} bytes left of the limit of {limit}",
                limit,
            ) from None
        raise _err(
            f"corrupt lz4 block at byte {pos} ({len(block)} bytes, at most {max_block} decompressed): {e}"
        ) from None
    if len(out) > room:
        raise DecompressedTooLarge(
            _NAME,
            f"lz4 block at byte {pos} decompresses to more than the {room} bytes left of the limit of {limit}",
            limit,
        )
    return out


def _output_exceeds(block: memoryview, room: int) -> bool:
    """True if the LZ4 block's sequences produce more than ``room`` bytes before any structural error.

    Used only after the C decoder failed with an output buffer of ``room + 1`` bytes, to tell "would exceed the
    limit" from "corrupt", without allocating the block's full (up to 4 MiB) output. This is what a streaming
    decoder would report: it would reach the limit before reaching the corruption. It walks the sequence
    headers only (token, length extensions, offsets) -- no bytes are produced -- and stops as soon as the
    running output size passes ``room``.
    """
    n = len(block)
    p = 0
    out = 0
    while p < n:
        token = block[p]
        p += 1
        lit = token >> 4
        if lit == 15:
            while True:
                if p >= n:
                    return False
                b = block[p]
                p += 1
                lit += b
                if b != 255:
                    break
        p += lit
        out += lit
        if p > n:
            return False  # literals run past the end of the block: corrupt
        if out > room:
            return True
        if p == n:
            return False  # last sequence (literals only) ended within the limit: the failure was corruption
        if n - p < 2:
            return False
        offset = block[p] | (block[p + 1] << 8)
        p += 2
        if offset == 0 or offset > out:
            return False  # references bytes before the start of the block: corrupt
        match = (token & 0x0F) + 4
        if match == 19:
            while True:
                if p >= n:
                    return False
                b = block[p]
                p += 1
                match += b
                if b != 255:
                    break
        out += match
        if out > room:
            return True
    return False


# ---------------------------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------------------------


def frame_header(magic: int) -> bytes:
    """Kafka's 7-byte frame header; for magic 0 with the "broken" HC computed over magic + FLG + BD."""
    head = MAGIC_BYTES + bytes((KAFKA_FLG, KAFKA_BD))
    hc = header_checksum(head) if magic == 0 else header_checksum(head[4:])
    return head + bytes((hc,))


def compress(data, *, magic: int, level: int | None = None) -> bytes:
    """One LZ4 frame exactly as ``Lz4BlockOutputStream`` frames it (64 KiB independent blocks, no checksums)."""
    if level is None:
        level = KAFKA_DEFAULT_LEVEL
    if not isinstance(level, int) or not 1 <= level <= 17:
        raise ValueError(f"lz4 level must be 1..17 (Kafka's range), not {level!r}")
    if level == KAFKA_DEFAULT_LEVEL:
        # Kafka uses lz4-java's fastCompressor() for its default level, highCompressor(level) otherwise.
        def _compress(piece):
            return _lz4_block.compress(piece, mode="default", store_size=False)
    else:
        def _compress(piece):
            return _lz4_block.compress(piece, mode="high_compression", compression=level, store_size=False)

    mv = _view(data)
    parts: list[bytes | memoryview] = [frame_header(magic)]
    for i in range(0, len(mv), KAFKA_BLOCK_SIZE):
        piece = mv[i:i + KAFKA_BLOCK_SIZE]
        block = _compress(piece)
        if len(block) >= len(piece):
            # Incompressible: Kafka stores the piece as is, flagged by the size field's high bit.
            parts.append(struct.pack("<I", len(piece) | _STORED))
            parts.append(piece)
        else:
            parts.append(struct.pack("<I", len(block)))
            parts.append(block)
    parts.append(b"\x00\x00\x00\x00")  # end mark; Kafka writes no content checksum
    return b"".join(parts)
