"""snappy (codec id 2): xerial snappy-java stream framing, or one raw snappy block.

Kafka's Java client writes snappy with xerial snappy-java's ``SnappyOutputStream`` (spec §4.2) -- *not* Google's
"framing format" (which is what ``snappy.stream_compress`` and friends implement, so they must not be used):

    magic   82 53 4E 41 50 50 59 00      ("\\x82SNAPPY\\0")
    int32 BE version               = 1
    int32 BE min compatible version = 1
    repeated: int32 BE compressed length, then one raw snappy block (uncompressed-length varint + elements),
              each block holding up to 32 KiB of input

Reading mirrors ``SnappyInputStream`` of snappy-java 1.1.10.x (the version Kafka ships):

* empty input is an error ("Cannot decompress empty stream");
* input shorter than 16 bytes, or not starting with the 8 magic bytes, is ONE raw snappy block -- that is how
  kafkajs, librdkafka and other non-Java producers write snappy, and Kafka accepts it;
* the first header's version fields are not checked (1.1.10's ``readHeader`` only tests the magic prefix);
* a chunk length equal to the first four magic bytes (0x82534E41, negative as an int32) starts a *concatenated*
  stream: the rest of that 16-byte header must be present; if its 8 magic bytes do not match, the stream
  silently ends there; a version below 1 is an error;
* other negative lengths, lengths above 512 MiB and truncated chunks are errors;
* fewer than 4 bytes left where a chunk length should be means end of stream (snappy-java ignores them).

Every raw block starts with its uncompressed length as a varint. That length is read and checked against the
remaining ``limit`` *before* the block is handed to the snappy library, because the library allocates that
many bytes up front: a 5-byte block claiming 4 GiB would otherwise allocate 4 GiB.
"""

from __future__ import annotations

import snappy as _snappy_lib  # python-snappy: raw snappy blocks (compress / uncompress)

from .errors import CodecError, DecompressedTooLarge, _Output, _view

_NAME = "snappy"

MAGIC = b"\x82SNAPPY\x00"
HEADER_SIZE = 16  # magic (8) + version (4) + min compatible version (4)
MAGIC_HEAD = 0x82534E41  # the first 4 magic bytes read as a big-endian int: marks a concatenated stream
BLOCK_SIZE = 32 * 1024  # SnappyOutputStream.DEFAULT_BLOCK_SIZE
MAX_CHUNK_SIZE = 512 * 1024 * 1024  # SnappyInputStream.MAX_CHUNK_SIZE (snappy-java >= 1.1.10.1)
_HEADER = MAGIC + (1).to_bytes(4, "big") + (1).to_bytes(4, "big")


def _raw_block(mv: memoryview, start: int, end: int, room: int, limit: int, where: str) -> bytes:
    """Decompress the raw snappy block ``mv[start:end]``, refusing output above ``room`` bytes.

    ``where`` describes the block for error messages (e.g. "chunk at byte 16").
    """
    if end <= start:
        raise CodecError(_NAME, f"{where}: empty snappy block (no uncompressed-length varint)")
    # Uncompressed length: little-endian base-128 varint of at most 5 bytes (a uint32).
    declared = 0
    shift = 0
    p = start
    while True:
        if p >= end:
            raise CodecError(_NAME, f"{where}: uncompressed-length varint at byte {start} is truncated")
        b = mv[p]
        declared |= (b & 0x7F) << shift
        p += 1
        if not b & 0x80:
            break
        shift += 7
        if shift >= 35:
            raise CodecError(_NAME, f"{where}: uncompressed-length varint at byte {start} is longer than 5 bytes")
    if declared > 0xFFFFFFFF:
        raise CodecError(_NAME, f"{where}: uncompressed length {declared} at byte {start} does not fit 32 bits")
    if declared > room:
        raise DecompressedTooLarge(
            _NAME,
            f"{where}: block declares {declared} uncompressed bytes, only {room} left of the limit of {limit}",
            limit,
        )
    try:
        out = _snappy_lib.uncompress(mv[start:end])
    except Exception as e:  # python-snappy raises UncompressError; be defensive about the C layer's types
        msg = str(e) or type(e).__name__
        raise CodecError(_NAME, f"{where}: corrupt snappy block of {end - start} bytes ({msg})") from None
    if len(out) != declared:
        raise CodecError(
            _NAME, f"{where}: block declared {declared} uncompressed bytes but decompressed to {len(out)}"
        )
    return out


def decompress(data, *, limit: int) -> bytes:
    """Decompress xerial-framed (possibly concatenated) or raw snappy; output bounded by ``limit`` bytes."""
    mv = _view(data)
    n = len(mv)
    if n == 0:
        raise CodecError(_NAME, "Cannot decompress empty stream")
    if n < HEADER_SIZE or mv[:8] != MAGIC:
        # Not xerial framing: the whole input is one raw snappy block (kafkajs / librdkafka style).
        return _raw_block(mv, 0, n, limit, limit, "raw snappy block at byte 0")

    chunks = _Output()
    total = 0
    pos = HEADER_SIZE
    while n - pos >= 4:
        size = int.from_bytes(mv[pos:pos + 4], "big")
        if size == MAGIC_HEAD:
            # A second SnappyOutputStream's output appended to the first one's.
            if n - pos < HEADER_SIZE:
                raise CodecError(
                    _NAME,
                    f"Insufficient header size in a concatenated block: header at byte {pos} needs "
                    f"{HEADER_SIZE} bytes, {n - pos} present",
                )
            if mv[pos:pos + 8] != MAGIC:
                break  # snappy-java: not a valid header -> end of stream, silently
            version = int.from_bytes(mv[pos + 8:pos + 12], "big", signed=True)
            if version < 1:
                raise CodecError(
                    _NAME,
                    f"Compressed with an incompatible codec version {version} (header at byte {pos}). "
                    "At least version 1 is required",
                )
            pos += HEADER_SIZE
            continue
        if size >= 0x80000000:
            raise CodecError(
                _NAME, f"chunkSize is too big or negative : {size - 0x100000000} (chunk length at byte {pos})"
            )
        if size > MAX_CHUNK_SIZE:
            raise CodecError(
                _NAME,
                f"chunk at byte {pos} declares {size} bytes, more than the maximum chunk size {MAX_CHUNK_SIZE}",
            )
        start = pos + 4
        if n - start < size:
            raise CodecError(
                _NAME,
                f"failed to read chunk: chunk at byte {pos} declares {size} bytes, only {n - start} remain",
            )
        out = _raw_block(mv, start, start + size, limit - total, limit, f"chunk at byte {pos}")
        total += len(out)
        chunks.append(out)
        pos = start + size
    # 1..3 bytes left over where a chunk length would be: snappy-java's readNext returns short and the stream
    # ends without error, so they are ignored here too.
    return chunks.value()


def compress(data) -> bytes:
    """xerial framing as written by Kafka's producer: 16-byte header, then 32 KiB input pieces as raw blocks."""
    mv = _view(data)
    parts = [_HEADER]
    for i in range(0, len(mv), BLOCK_SIZE):
        block = _snappy_lib.compress(mv[i:i + BLOCK_SIZE])
        parts.append(len(block).to_bytes(4, "big"))
        parts.append(block)
    return b"".join(parts)
