"""The transaction index ``.txnindex`` (``TransactionIndex.java``, ``AbortedTxn.java``, spec §5.4).

One 34-byte entry per aborted transaction: ``int16 version, int64 producerId, int64 firstOffset,
int64 lastOffset (the ABORT marker), int64 lastStableOffset``. No preallocation; a partial last entry
is ignored when reading. Kafka's ``AbortedTxn.version()`` reads a single (signed) byte at offset 0 (the
high byte of the int16 written), and reading refuses an entry whose version byte is above 0; kdump
reports the same byte.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from kdump.format import index_layout as IL
from kdump.read.index_base import ReadOnlyFile

ENTRY = IL.TXN_INDEX_ENTRY
ENTRY_SIZE = ENTRY.size  # 34
CURRENT_VERSION = 0


@dataclass(frozen=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = 0  # as Kafka reads it: the signed first byte of the entry

    def encode(self) -> bytes:
        return ENTRY.pack(CURRENT_VERSION, self.producer_id, self.first_offset, self.last_offset,
                          self.last_stable_offset)

    def kafka_repr(self) -> str:
        """``AbortedTxn.toString`` (used in Kafka's sanity-check message)."""
        return (f"AbortedTxn(version={self.version}, producerId={self.producer_id}, firstOffset={self.first_offset}, "
                f"lastOffset={self.last_offset}, lastStableOffset={self.last_stable_offset})")



def decode_entry(data: bytes, offset: int = 0) -> AbortedTxn:
    _v16, pid, first, last, lso = ENTRY.unpack_from(data, offset)
    (version,) = IL.TXN_INDEX_VERSION_BYTE.unpack_from(data, offset)
    return AbortedTxn(pid, first, last, lso, version)


class TxnIndexFile(ReadOnlyFile):
    """A ``.txnindex`` opened read-only; :meth:`entries` yields ``(byte position, AbortedTxn)``."""

    def __init__(self, path):
        super().__init__(path)
        self.count = self.length // ENTRY_SIZE
        self.partial_bytes = self.length % ENTRY_SIZE

    def entries(self) -> Iterator[tuple[int, AbortedTxn]]:
        chunk = ENTRY_SIZE * 4096
        pos = 0
        end = self.count * ENTRY_SIZE
        while pos < end:
            data = os.pread(self._fd, min(chunk, end - pos), pos)
            n = len(data) // ENTRY_SIZE
            for k in range(n):
                yield pos + k * ENTRY_SIZE, decode_entry(data, k * ENTRY_SIZE)
            if n == 0:
                return  # the file shrank under us; the caller sees fewer entries than count
            pos += n * ENTRY_SIZE


def encode(txns) -> bytes:
    return b"".join(t.encode() for t in txns)
