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

from importlib import import_module
from typing import Any, NamedTuple

from kdump.codec.errors import CodecError, DecompressedTooLarge, _view  # noqa: F401  (re-exported)

__all__ = [
    "CODECS",
    "Codec",
    "allowed_in",
    "known",
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

class Codec(NamedTuple):
    id: int  # Kafka's compression type id, the low 3 bits of a batch's or wrapper's attributes
    name: str  # Kafka's CompressionType.name: what DumpLogSegments prints, the JSON, Spark and CLI spelling
    module: str | None  # the module of this package that compresses and decompresses it (None: nothing to do)
    min_magic: int = 0  # the lowest message format that may use it (Kafka refuses it in older ones)
    by_magic: bool = False  # its framing depends on the message format (the module takes ``magic``)
    levels: bool = True  # it has compression levels (the module's compress takes ``level``)


# THE table of codecs, by id (Kafka's CompressionType.forId). Adding a codec is its module beside gzip.py and a
# row here: kdump/format/names.py, kdump/format/types.CompressionType, the header rules and every choice of a
# codec (CLI, Spark options) are derived from it.
CODECS = (
    Codec(0, "none", None),
    Codec(1, "gzip", "gzip"),
    Codec(2, "snappy", "snappy", levels=False),
    Codec(3, "lz4", "lz4", by_magic=True),
    # zstd came with the requirement of message format v2 (KIP-110): refused in magic 0/1, on read and write
    Codec(4, "zstd", "zstd", min_magic=2),
)
# The ids by name, for the code that treats one codec apart (an uncompressed batch, zstd's magic rule).
NONE, GZIP, SNAPPY, LZ4, ZSTD = (CODECS[i].id for i in range(5))


def known(codec: int) -> bool:
    """Whether Kafka knows the compression type id ``codec`` (3 bits hold 0-7)."""
    return 0 <= codec < len(CODECS)


def allowed_in(codec: int, magic: int) -> bool:
    """Whether a known ``codec`` may compress a batch or wrapper of message format ``magic``."""
    return known(codec) and CODECS[codec].min_magic <= magic


def _unknown(codec) -> CodecError:
    # Kafka: CompressionType.forId -> IllegalArgumentException("Unknown compression type id: " + id).
    # NONE is "known" to Kafka but there is nothing to (de)compress, so asking for it is a caller bug that we
    # report the same way rather than silently returning the input.
    if codec == NONE:
        return CodecError("none", "compression type id 0 (none) has no compressed form to decode or encode")
    return CodecError("unknown", f"Unknown compression type id: {codec}")


_MODULES: dict[int, Any] = {}


def _module(codec: int, magic: int) -> Any:
    """The module of ``codec`` (imported on first use), after Kafka's checks: a known id with something to
    do, allowed in message format ``magic`` (spec §3.3, §3.8: zstd inside a magic 0/1 wrapper is refused)."""
    if not known(codec) or CODECS[codec].module is None:
        raise _unknown(codec)
    c = CODECS[codec]
    if magic < c.min_magic:
        raise CodecError(
            c.name,
            f"{c.name} compression is not allowed with message format version {magic} "
            f"(Kafka requires magic {c.min_magic})",
        )
    module = _MODULES.get(codec)
    if module is None:
        module = _MODULES[codec] = import_module(f"kdump.codec.{c.module}")
    return module


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
    module = _module(codec, magic)
    if CODECS[codec].by_magic:
        return module.decompress(data, magic=magic, limit=limit)
    return module.decompress(data, limit=limit)


def compress(codec: int, data: bytes | bytearray, *, magic: int, level: int | None = None) -> bytes:
    """Compress ``data`` the way Kafka's producer/broker would for a batch or wrapper of format ``magic``.

    ``level`` overrides the codec's Kafka default (gzip 6, i.e. Java's -1; lz4 9 = lz4's fast compressor, other
    levels use lz4-HC like Kafka's ``highCompressor(level)``; zstd 3; snappy has no levels and ignores it).
    The output is what Kafka's reader accepts; for gzip, snappy and lz4 it has Kafka's exact framing (the
    deflate / block payload bytes match Java's only if the underlying C library versions match).
    """
    module = _module(codec, magic)
    c = CODECS[codec]
    options: dict = {"magic": magic} if c.by_magic else {}
    if c.levels:
        options["level"] = level
    return module.compress(data, **options)


# The codec modules (and the C libraries behind them) are imported on first use, by _module: a shallow dump
# never decompresses, and those imports cost tens of milliseconds at start-up.
