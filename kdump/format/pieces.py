"""A large encoded record kept as its pieces (issue 22 item 2: memory bounded for a record near the batch limit).

The builders (:mod:`kdump.format.v2_builder`, :mod:`kdump.format.legacy_builder`) encode a record to bytes and
then take it into the batch being built (``encode`` + ``take``). For a record whose key, value and headers are above
:data:`LARGE_RECORD_BYTES`, joining its pieces would copy the value once, and taking the joined bytes into the
batch once more: a 255 MiB value held three times (its batch as read, the record, the batch being written).
Such a record is encoded as :class:`Pieces` instead: the head bytes and the key and value as they were given
(views of the batch read), which ``take`` appends to the batch one after the other.
"""
from __future__ import annotations

# Above this many key and value bytes a record is encoded as its pieces; below, one bytes object is faster.
LARGE_RECORD_BYTES = 1 << 20


def is_large(key, value, headers=()) -> bool:
    """Whether a record of this ``key``, ``value`` (bytes-like or None) and ``headers`` ((key, value) pairs) is
    encoded as :class:`Pieces`."""
    size = (0 if key is None else len(key)) + (0 if value is None else len(value))
    if headers:
        size += sum(len(k) + (0 if v is None else len(v)) for k, v in headers)
    return size > LARGE_RECORD_BYTES


class Pieces:
    """An encoded record as the bytes-like pieces that, one after the other, are its bytes; ``len`` is their
    total size (what a batch cut by size needs), ``bytes()`` joins them."""

    __slots__ = ("parts", "nbytes")

    def __init__(self, parts: list):
        self.parts = parts
        self.nbytes = sum(memoryview(p).nbytes for p in parts)

    def __len__(self) -> int:
        return self.nbytes

    def __bytes__(self) -> bytes:
        return b"".join(self.parts)


def append(out: bytearray, encoded) -> None:
    """An encoded record or entry (bytes, or its :class:`Pieces`) appended to the batch being built ``out``."""
    if isinstance(encoded, Pieces):
        for part in encoded.parts:
            out += part
    else:
        out += encoded
