"""Kafka's compression codecs, byte for byte.

This package turns the compressed region of a Kafka batch into bytes and back again:

* magic 2: bytes ``[61, end of batch)`` of a record batch decompress to the concatenated records;
* magic 0/1: the value of a compressed wrapper message decompresses to an inner legacy message set.

Each codec follows what Apache Kafka's own reader accepts and what its writer produces (spec §4), including
the quirks that a generic library would get wrong:

* gzip: concatenated members are read (Java's ``GZIPInputStream`` does), trailing bytes that are not a gzip
  header are ignored (Java does that too);
* snappy: Kafka's Java client writes xerial snappy-java *stream framing* (not Google's framing format), while
  kafkajs/librdkafka-style producers write one plain raw snappy block; both are read;
* lz4: Kafka's own LZ4 frame reader, which only supports independent blocks and which, for magic 0, skips the
  frame-descriptor checksum because Kafka's first writer computed it over the wrong bytes;
* zstd: allowed only in magic 2 batches; frames may lack a content size and may be concatenated.

Every decompressor is bounded by ``limit``: corrupt or malicious input (a "decompression bomb") raises
:class:`DecompressedTooLarge` before more than about ``limit`` bytes are allocated, and any other malformed input
raises :class:`CodecError` -- never a library-specific exception type.

Everything here is byte-level: no file I/O, no printing.
"""

from __future__ import annotations

from kdump.codec.errors import CodecError, DecompressedTooLarge, _view  # noqa: F401  (re-exported)

__all__ = [
    "NONE",
    "GZIP",
    "SNAPPY",
    "LZ4",
    "ZSTD",
    "CodecError",
    "DecompressedTooLarge",
    "decompress",
    "compress",
]

# Compression type ids as stored in the low 3 bits of the batch / wrapper attributes.
# Their names are in kdump/format/names.py, with every other name kdump shows for a value.
NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4


def _unknown(codec) -> CodecError:
    # Kafka: CompressionType.forId -> IllegalArgumentException("Unknown compression type id: " + id).
    # NONE is "known" to Kafka but there is nothing to (de)compress, so asking for it is a caller bug that we
    # report the same way rather than silently returning the input.
    if codec == NONE:
        return CodecError("none", "compression type id 0 (none) has no compressed form to decode or encode")
    return CodecError("unknown", f"Unknown compression type id: {codec}")


def _check_zstd_magic(magic: int) -> None:
    # Kafka refuses zstd inside legacy (magic 0/1) wrappers, on read and on write (spec §3.3, §3.8): zstd was
    # introduced together with the requirement of message format v2 (KIP-110).
    if magic < 2:
        raise CodecError(
            "zstd",
            f"zstd compression is not allowed with message format version {magic} (Kafka requires magic 2)",
        )


def decompress(codec: int, data, *, magic: int, limit: int) -> bytes:
    """Decompress Kafka's compressed region ``data`` (bytes, bytearray or memoryview) with codec id ``codec``.

    ``magic`` is the message-format version of the batch or wrapper the data came from (0, 1 or 2); it only
    changes behaviour for lz4 (magic 0 frames carry a header checksum computed the wrong way, which Kafka does
    not check) and zstd (refused below magic 2). ``limit`` is the largest acceptable decompressed size in bytes.

    Raises :class:`DecompressedTooLarge` if the output would exceed ``limit`` and :class:`CodecError` for any
    other problem (unknown codec id, corrupt or truncated input).
    """
    if not isinstance(limit, int) or limit < 0:
        raise ValueError(f"limit must be a non-negative int, not {limit!r}")
    try:
        return _decompress(codec, data, magic, limit)
    except CodecError as e:
        # Without the decompressor's frames: they hold its partial output (up to ``limit`` bytes), which an
        # error kept for a report, or raised from, would keep alive (issue 22 item 2).
        raise e.with_traceback(None) from None


def _decompress(codec: int, data, magic: int, limit: int) -> bytes:
    if codec == GZIP:
        from . import gzip as _gzip
        return _gzip.decompress(data, limit=limit)
    if codec == SNAPPY:
        from . import snappy as _snappy
        return _snappy.decompress(data, limit=limit)
    if codec == LZ4:
        from . import lz4 as _lz4
        return _lz4.decompress(data, magic=magic, limit=limit)
    if codec == ZSTD:
        _check_zstd_magic(magic)
        from . import zstd as _zstd
        return _zstd.decompress(data, limit=limit)
    raise _unknown(codec)


def compress(codec: int, data: bytes | bytearray, *, magic: int, level: int | None = None) -> bytes:
    """Compress ``data`` the way Kafka's producer/broker would for a batch or wrapper of format ``magic``.

    ``level`` overrides the codec's Kafka default (gzip 6, i.e. Java's -1; lz4 9 = lz4's fast compressor, other
    levels use lz4-HC like Kafka's ``highCompressor(level)``; zstd 3; snappy has no levels and ignores it).
    The output is what Kafka's reader accepts; for gzip, snappy and lz4 it has Kafka's exact framing (the
    deflate / block payload bytes match Java's only if the underlying C library versions match).
    """
    if codec == GZIP:
        from . import gzip as _gzip
        return _gzip.compress(data, level=level)
    if codec == SNAPPY:
        from . import snappy as _snappy
        return _snappy.compress(data)
    if codec == LZ4:
        from . import lz4 as _lz4
        return _lz4.compress(data, magic=magic, level=level)
    if codec == ZSTD:
        _check_zstd_magic(magic)
        from . import zstd as _zstd
        return _zstd.compress(data, level=level)
    raise _unknown(codec)

# The codec modules (and the C libraries behind them) are imported on first use, inside the functions
# above: a shallow dump never decompresses, and those imports cost tens of milliseconds at start-up.
