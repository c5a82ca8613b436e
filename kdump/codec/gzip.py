"""gzip (codec id 1), as read by Java's ``GZIPInputStream`` and written by Kafka's ``GzipOutputStream``.

Reading mirrors ``java.util.zip.GZIPInputStream`` rather than zlib's own gzip wrapper, because the two accept
slightly different inputs and kdump must say what Kafka would say:

* the RFC 1952 header is parsed here, the Java way: magic ``1f 8b``, method 8, the optional FEXTRA / FNAME /
  FCOMMENT fields are skipped, FHCRC is verified; reserved flag bits are *not* rejected (zlib would reject them);
* the deflate body is inflated raw (``wbits=-15``) with ``max_length`` so that at most ``limit + 1`` bytes are
  ever produced -- a decompression bomb stops after about ``limit`` bytes;
* the trailer (CRC-32 and ISIZE, both little-endian) is checked here;
* after a member, Java tries to read another member header if any bytes remain. If that header is valid the
  next member is decoded (and its errors are errors); if it is not a valid header (garbage, zero padding, a
  truncated header) Java silently treats the stream as finished, and so do we.

Writing reproduces Kafka's framing: Java's fixed 10-byte header ``1f 8b 08 00 00000000 00 ff`` (mtime 0, no
optional fields, OS byte 255 as written by JDK 16+), raw deflate at zlib level 6 (Java's default level -1) with
windowBits 15 and memLevel 8, then CRC-32 and ISIZE.
"""

from __future__ import annotations

import struct
import zlib

from .errors import CodecError, DecompressedTooLarge, _Output, _view

_NAME = "gzip"

# What Java's GZIPOutputStream writes: magic, CM=8 (deflate), FLG=0, MTIME=0, XFL=0, OS=255 (JDK 16+; older
# JDKs wrote 0 -- readers never look at it).
KAFKA_HEADER = bytes.fromhex("1f8b08000000000000ff")

_FHCRC, _FEXTRA, _FNAME, _FCOMMENT = 0x02, 0x04, 0x08, 0x10
_PIECE = 1 << 20  # largest output asked of zlib at a time: one call for the whole limit would take it twice


class _BadHeader(Exception):
    """Internal: the bytes at a member start are not a gzip header Java would accept."""


def _parse_header(mv: memoryview, pos: int) -> int:
    """Return the offset just past the gzip member header starting at ``pos``; raise _BadHeader if invalid."""
    n = len(mv)
    if n - pos < 10:
        raise _BadHeader(f"gzip header at byte {pos} is truncated: {n - pos} of at least 10 bytes present")
    if mv[pos] != 0x1F or mv[pos + 1] != 0x8B:
        raise _BadHeader(f"not in gzip format: bytes {pos}..{pos + 1} are {bytes(mv[pos:pos + 2]).hex()}, not 1f8b")
    if mv[pos + 2] != 8:
        raise _BadHeader(f"unsupported compression method {mv[pos + 2]} at byte {pos + 2} (only 8, deflate)")
    flg = mv[pos + 3]
    p = pos + 10  # skip CM, FLG, MTIME (4), XFL, OS
    if flg & _FEXTRA:
        if n - p < 2:
            raise _BadHeader(f"gzip FEXTRA length at byte {p} is truncated")
        xlen = mv[p] | (mv[p + 1] << 8)
        p += 2
        if n - p < xlen:
            raise _BadHeader(f"gzip FEXTRA field at byte {p} declares {xlen} bytes, only {n - p} present")
        p += xlen
    for bit, what in ((_FNAME, "FNAME"), (_FCOMMENT, "FCOMMENT")):
        if flg & bit:
            end = _find_zero(mv, p)
            if end < 0:
                raise _BadHeader(f"gzip {what} field starting at byte {p} has no terminating zero byte")
            p += end + 1
    if flg & _FHCRC:
        if n - p < 2:
            raise _BadHeader(f"gzip header CRC at byte {p} is truncated")
        want = mv[p] | (mv[p + 1] << 8)
        got = zlib.crc32(mv[pos:p]) & 0xFFFF
        if want != got:
            raise _BadHeader(f"corrupt gzip header: header CRC at byte {p} is {want:#06x}, computed {got:#06x}")
        p += 2
    return p


def _find_zero(mv: memoryview, p: int) -> int:
    """Index (relative to ``p``) of the first zero byte at or after ``p``, or -1; scans in chunks, no big copy."""
    n = len(mv)
    start = p
    while start < n:
        chunk = bytes(mv[start:start + 65536])
        i = chunk.find(b"\x00")
        if i >= 0:
            return start - p + i
        start += len(chunk)
    return -1


def decompress(data, *, limit: int) -> bytes:
    """Decompress one or more concatenated gzip members; output bounded by ``limit`` bytes."""
    mv = _view(data)
    n = len(mv)
    if n == 0:
        raise CodecError(_NAME, "empty input: not in gzip format")
    chunks = _Output()
    total = 0
    pos = 0
    member = 0
    while True:
        try:
            body = _parse_header(mv, pos)
        except _BadHeader as e:
            if member == 0:
                raise CodecError(_NAME, str(e)) from None
            # Java's GZIPInputStream.readTrailer: a failing header read after a complete member means "end of
            # stream", silently -- trailing garbage after the first member is ignored.
            break

        d = zlib.decompressobj(-15)
        crc = 0
        size = 0
        buf: memoryview | bytes = mv[body:]
        while True:
            room = limit - total
            try:
                # max_length bounds the output buffer zlib allocates: at most room + 1 bytes per call.
                out = d.decompress(buf, min(room + 1, _PIECE))
            except zlib.error as e:
                raise CodecError(
                    _NAME, f"corrupt deflate data in gzip member at byte {pos} (data starts at byte {body}): {e}"
                ) from None
            if out:
                crc = zlib.crc32(out, crc)
                size += len(out)
                total += len(out)
                if total > limit:
                    raise DecompressedTooLarge(
                        _NAME,
                        f"gzip member at byte {pos} decompresses past the limit of {limit} bytes",
                        limit,
                    )
                chunks.append(out)
            if d.eof:
                break
            buf = d.unconsumed_tail
            if not buf:
                raise CodecError(
                    _NAME,
                    f"gzip member at byte {pos} is truncated: input ends at byte {n} inside the deflate data",
                )
        trailer = n - len(d.unused_data)
        if n - trailer < 8:
            raise CodecError(
                _NAME,
                f"gzip member at byte {pos} is truncated: trailer at byte {trailer} needs 8 bytes, "
                f"{n - trailer} present",
            )
        want_crc, want_size = struct.unpack_from("<II", mv, trailer)
        if want_crc != crc or want_size != size & 0xFFFFFFFF:
            raise CodecError(
                _NAME,
                f"corrupt gzip trailer at byte {trailer}: CRC32 {want_crc:#010x} / ISIZE {want_size} stored, "
                f"{crc:#010x} / {size & 0xFFFFFFFF} computed",
            )
        pos = trailer + 8
        member += 1
        if pos >= n:
            break

    return chunks.value()


def compress(data, *, level: int | None = None) -> bytes:
    """One gzip member framed exactly like Kafka's (Java's) ``GZIPOutputStream``."""
    if level is None or level == -1:
        level = 6  # Kafka's default gzip level is -1 = Deflater.DEFAULT_COMPRESSION = zlib level 6
    if not isinstance(level, int) or not 0 <= level <= 9:
        raise ValueError(f"gzip level must be 1..9 or -1 (Kafka's range; 0 = stored is also accepted), not {level!r}")
    mv = _view(data)
    c = zlib.compressobj(level, zlib.DEFLATED, -15, 8, zlib.Z_DEFAULT_STRATEGY)
    body = c.compress(mv) + c.flush()
    trailer = struct.pack("<II", zlib.crc32(mv), len(mv) & 0xFFFFFFFF)
    return b"".join((KAFKA_HEADER, body, trailer))
