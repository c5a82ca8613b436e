"""The codec package's errors and its buffer helper, in a leaf module (the codec modules import them, and
the package ``__init__`` imports the codec modules)."""

from __future__ import annotations


class CodecError(Exception):
    """Compressed data could not be decoded (or a codec/magic combination Kafka refuses was asked for).

    Attributes:
        codec:  codec name (``"gzip"``, ``"snappy"``, ``"lz4"``, ``"zstd"``, or ``"unknown"``).
        detail: what was wrong and where -- the byte offset inside the compressed input when known, e.g.
                ``"lz4 block at byte 7 declares 70000 bytes, the frame allows at most 65536"``.
    """

    def __init__(self, codec: str, detail: str) -> None:
        self.codec = codec
        self.detail = detail
        super().__init__(f"{codec}: {detail}")


class DecompressedTooLarge(CodecError):
    """The decompressed output would exceed ``limit`` bytes.

    Raised *before* more than about ``limit`` bytes are allocated, so a decompression bomb costs neither memory
    nor much time. ``limit`` is the limit that was exceeded.
    """

    def __init__(self, codec: str, detail: str, limit: int) -> None:
        self.limit = limit
        super().__init__(codec, detail)


def _view(data) -> memoryview:
    """A flat unsigned-byte memoryview over ``data`` (no copy for bytes, bytearray or a byte memoryview)."""
    mv = data if isinstance(data, memoryview) else memoryview(data)
    if mv.ndim != 1 or mv.format != "B":
        # e.g. a signed-char view or an array('I'); cast needs C-contiguous data (raises TypeError otherwise)
        mv = mv.cast("B")
    return mv


class _Output:
    """Decompressed output, gathered without holding it twice: pieces are appended to one growing buffer
    (``io.BytesIO``, whose ``getvalue`` hands over that buffer as ``bytes`` without a copy), so a payload
    near the limit costs about its own size, not the size of the pieces plus their join."""

    __slots__ = ("_io", "_first", "size")

    def __init__(self):
        self._io = None
        self._first = None  # a single piece is returned as it is
        self.size = 0

    def append(self, piece: bytes) -> None:
        self.size += len(piece)
        if self._io is None:
            if self._first is None:
                self._first = piece
                return
            import io
            self._io = io.BytesIO()
            self._io.write(self._first)
            self._first = None
        self._io.write(piece)

    def value(self) -> bytes:
        if self._io is not None:
            return self._io.getvalue()
        return b"" if self._first is None else bytes(self._first)
