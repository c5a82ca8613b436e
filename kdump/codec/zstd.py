"""zstd (codec id 4): standard zstd frames (RFC 8878), as written by zstd-jni's streaming compressor.

Kafka's writer is zstd-jni's ``ZstdOutputStreamNoFinalizer``: streaming, so the frame header carries *no content
size*, and no checksum (the corpus frames start ``28 b5 2f fd 00 58``: FHD 0, window 2 MiB) and end with an
empty last block. Its reader,
zstd-jni's streaming decompressor, also reads several concatenated frames (and skips skippable frames).
zstd is only legal in magic 2 batches; the package's ``decompress``/``compress`` refuse it below magic 2.

Why the input is walked by hand before decompressing: python-zstandard's ``stream_reader`` silently returns
what it has when the input ends in the middle of a frame, and its ``decompressobj`` has no output bound. So the
frame and block *headers* are walked here first (cheap: one step per block of up to 128 KiB). That finds
truncation, trailing garbage and reserved block types with exact byte offsets; the validated bytes are then
decompressed with ``stream_reader(read_across_frames=True)`` in reads of bounded size, stopping as soon as the
output passes ``limit``.
"""

from __future__ import annotations

import zstandard as _zstd_lib

from .errors import CodecError, DecompressedTooLarge, _Output, _view

_NAME = "zstd"

FRAME_MAGIC = 0xFD2FB528  # bytes 28 b5 2f fd
_SKIPPABLE_MASK = 0xFFFFFFF0
_SKIPPABLE_MAGIC = 0x184D2A50  # 0x184D2A50 .. 0x184D2A5F
KAFKA_DEFAULT_LEVEL = 3  # CompressionType.ZSTD.defaultLevel()
_READ_CHUNK = 1 << 20  # largest single output buffer requested from the decompressor

def _err(detail: str) -> CodecError:
    return CodecError(_NAME, detail)


def _walk(mv: memoryview) -> None:
    """Check the frame/block structure of ``mv`` (one or more frames); raise CodecError with the byte offset."""
    n = len(mv)
    pos = 0
    frames = 0
    while pos < n:
        if n - pos < 4:
            raise _err(f"truncated frame at byte {pos}: {n - pos} bytes, a frame magic needs 4")
        magic = int.from_bytes(mv[pos:pos + 4], "little")
        if magic & _SKIPPABLE_MASK == _SKIPPABLE_MAGIC:
            if n - pos < 8:
                raise _err(f"truncated skippable frame header at byte {pos}")
            size = int.from_bytes(mv[pos + 4:pos + 8], "little")
            if n - (pos + 8) < size:
                raise _err(
                    f"skippable frame at byte {pos} declares {size} bytes, only {n - pos - 8} remain"
                )
            pos += 8 + size
            frames += 1
            continue
        if magic != FRAME_MAGIC:
            what = "not a zstd frame" if frames == 0 else "data after the last frame is not a zstd frame"
            raise _err(f"{what}: bytes {bytes(mv[pos:pos + 4]).hex()} at byte {pos} (expected 28b52ffd)")
        frame_start = pos
        if n - pos < 5:
            raise _err(f"truncated frame header at byte {frame_start}")
        fhd = mv[pos + 4]
        if fhd & 0x08:
            raise _err(f"frame at byte {frame_start}: reserved bit set in frame header descriptor {fhd:#04x}")
        fcs_flag = fhd >> 6
        single_segment = bool(fhd & 0x20)
        has_checksum = bool(fhd & 0x04)
        did_flag = fhd & 0x03
        header_len = (
            5
            + (0 if single_segment else 1)
            + (0, 1, 2, 4)[did_flag]
            + ((1 if single_segment else 0), 2, 4, 8)[fcs_flag]
        )
        if n - pos < header_len:
            raise _err(f"truncated frame header at byte {frame_start}: needs {header_len} bytes, {n - pos} present")
        pos += header_len
        while True:
            if n - pos < 3:
                raise _err(f"frame at byte {frame_start} is truncated: block header at byte {pos} is missing")
            bh = int.from_bytes(mv[pos:pos + 3], "little")
            last = bh & 1
            btype = (bh >> 1) & 3
            bsize = bh >> 3
            if btype == 3:
                raise _err(f"frame at byte {frame_start}: block at byte {pos} has the reserved block type 3")
            content = 1 if btype == 1 else bsize  # RLE blocks store one byte, repeated bsize times
            if n - (pos + 3) < content:
                raise _err(
                    f"frame at byte {frame_start} is truncated: block at byte {pos} needs {content} bytes, "
                    f"{n - pos - 3} remain"
                )
            pos += 3 + content
            if last:
                break
        if has_checksum:
            if n - pos < 4:
                raise _err(f"frame at byte {frame_start} is truncated: content checksum at byte {pos} is missing")
            pos += 4
        frames += 1
    if frames == 0:
        raise _err("empty input: no zstd frame")


def decompress(data, *, limit: int) -> bytes:
    """Decompress one or more concatenated zstd frames; never produces more than ``limit + 1`` bytes."""
    mv = _view(data)
    _walk(mv)
    chunks = _Output()
    total = 0
    try:
        # A fresh context per call: ZstdDecompressor objects must not be shared between threads.
        reader = _zstd_lib.ZstdDecompressor().stream_reader(mv, read_across_frames=True)
        while True:
            want = min(limit - total + 1, _READ_CHUNK)
            out = reader.read(want)
            if not out:
                break
            total += len(out)
            if total > limit:
                raise DecompressedTooLarge(
                    _NAME, f"zstd data decompresses past the limit of {limit} bytes", limit
                )
            chunks.append(out)
    except CodecError:
        raise
    except Exception as e:  # ZstdError, and defensively anything else the C layer might raise
        raise _err(f"corrupt zstd data: {e or type(e).__name__}") from None
    return chunks.value()


def compress(data, *, level: int | None = None) -> bytes:
    """One zstd frame the way Kafka (zstd-jni's streaming compressor) writes it.

    zstd-jni never learns the input size, so the frame has no content size, no checksum, and a window chosen
    from the level alone (level 3: 2 MiB, window descriptor 0x58). On close it flushes the pending block and
    then ends the frame with an empty last block (``01 00 00``); doing the same here reproduces Kafka's bytes
    exactly when the libzstd versions match (checked against the corpus: zstd-jni 1.5.7).
    """
    if level is None:
        level = KAFKA_DEFAULT_LEVEL
    if not isinstance(level, int) or not -131072 <= level <= 22:
        raise ValueError(f"zstd level must be -131072..22 (Kafka's range), not {level!r}")
    cobj = _zstd_lib.ZstdCompressor(level=level, write_checksum=False).compressobj()
    return b"".join(
        (
            cobj.compress(_view(data)),
            cobj.flush(_zstd_lib.COMPRESSOBJ_FLUSH_BLOCK),
            cobj.flush(_zstd_lib.COMPRESSOBJ_FLUSH_FINISH),
        )
    )
