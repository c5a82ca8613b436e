"""The segment reader: walks the offset/size framing of a ``.log`` (or KRaft ``.checkpoint``) file.

It follows Kafka's own walk (``FileLogInputStream.nextBatch``, spec §3.9) so that what kdump calls a
batch is exactly what Kafka calls one, and it reports what Kafka would stop at instead of dying:

* fewer than 18 bytes left, or an entry whose declared size runs past the end: a *trailing* tail
  (Kafka prints "Found N invalid bytes at the end of ...");
* a declared size below 14: Kafka throws ``CorruptRecordException``; kdump classifies the rest of the
  file as zero padding (a preallocated or zero-filled tail) or corruption, and stops there;
* a magic byte that is not 0, 1 or 2, or a batch too small for its header: corruption.

Memory: one batch at a time is held (read with buffered sequential reads, never the whole file), and a
batch larger than ``max_batch_bytes`` is refused before it is read.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterator, Union

from kdump.errors import FormatError
from kdump.format import layout as L
from kdump.format.legacy import LegacyBatch
from kdump.format.v2 import RecordBatch

Batch = Union[RecordBatch, LegacyBatch]

DEFAULT_MAX_BATCH_BYTES = 256 * 1024 * 1024
# Bounds the decompressed size of one batch's records; Kafka's own limits are far below this.
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024

_SEGMENT_NAME = re.compile(r"^(\d+)\.")


def base_offset_from_name(path) -> int | None:
    """Kafka's ``offsetFromFileName``: the number before the first dot, or None if there is none."""
    m = _SEGMENT_NAME.match(os.path.basename(os.fspath(path)))
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Tail:
    """What stopped the walk. ``kind`` is one of:

    ``end`` (nothing left), ``short`` (fewer than 18 bytes: Kafka's trailing bytes), ``truncated`` (the
    last entry declares more bytes than the file has: a crash-cut tail, Kafka's trailing bytes),
    ``zeros`` (zero-filled from here to the end), ``corrupt`` (bytes that are no entry),
    ``limit`` (stopped at ``--max-bytes``).
    ``fatal`` is True where Kafka's DumpLogSegments dies instead of reporting trailing bytes.
    """

    kind: str
    position: int
    length: int
    message: str
    code: str = ""
    fatal: bool = False


class SegmentReader:
    """Iterate over the batches of one log file.

    >>> with SegmentReader("00000000000000000000.log") as reader:   # doctest: +SKIP
    ...     for batch in reader:
    ...         print(batch.base_offset, batch.is_valid())
    ...     print(reader.tail)

    ``start`` begins the walk at a byte position (an index lookup); ``max_bytes`` reads only that many
    bytes from the start of the file, like DumpLogSegments' ``--max-bytes``.
    """

    def __init__(self, path, *, start: int = 0, max_bytes: int | None = None,
                 max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES):
        self.path = os.fspath(path)
        self.start = start
        self.max_batch_bytes = max_batch_bytes
        self._file = open(self.path, "rb", buffering=1 << 20)  # read-only, always
        self.file_size = os.fstat(self._file.fileno()).st_size
        self.end = self.file_size if max_bytes is None else min(self.file_size, max_bytes)
        self.limited = max_bytes is not None and max_bytes < self.file_size
        self.base_offset = base_offset_from_name(self.path)
        self.tail: Tail | None = None
        self.bytes_read = 0  # sum of the sizes of the whole batches walked

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "SegmentReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __iter__(self) -> Iterator[Batch]:
        return self.batches()

    def batches(self) -> Iterator[Batch]:
        f = self._file
        pos = self.start
        end = self.end
        f.seek(pos)
        prefix = L.PREFIX
        while True:
            remaining = end - pos
            if remaining <= L.HEADER_SIZE_UP_TO_MAGIC:
                self._set_tail_short(pos, remaining)
                return
            head = f.read(L.LOG_OVERHEAD)
            offset, size = prefix.unpack(head)
            if size < L.LEGACY_RECORD_OVERHEAD_V0:
                self.tail = self._classify_bad_size(pos, size, head)
                return
            if pos + L.LOG_OVERHEAD + size > end:
                self._set_tail_truncated(pos, size, remaining)
                return
            if size > self.max_batch_bytes:
                self.tail = Tail("corrupt", pos, remaining,
                                 f"entry declares {size} bytes, above the limit of {self.max_batch_bytes} "
                                 "(raise --max-batch-bytes to read it)", code="batch-too-large", fatal=True)
                return
            body = f.read(size)
            if len(body) != size:  # the file shrank under us
                self.tail = Tail("truncated", pos, remaining, "file ended while reading (was it truncated?)",
                                 code="truncated-tail", fatal=True)
                return
            try:
                batch = batch_from_entry(pos, offset, size, body)
            except FormatError as e:
                self.tail = Tail("corrupt", pos, remaining, e.message, code=e.code, fatal=True)
                return
            pos += L.LOG_OVERHEAD + size
            self.bytes_read = pos - self.start
            yield batch

    # --- tail classification -----------------------------------------------------------------
    def _set_tail_short(self, pos: int, remaining: int) -> None:
        if remaining <= 0:
            kind, msg = ("limit", "stopped at --max-bytes") if self.limited else ("end", "")
            self.tail = Tail(kind, pos, 0, msg)
        elif self.limited:
            self.tail = Tail("limit", pos, remaining, "stopped at --max-bytes")
        else:
            self.tail = Tail("short", pos, remaining,
                             f"{remaining} bytes at the end are too few for an entry header (17 bytes needed)",
                             code="truncated-tail")

    def _set_tail_truncated(self, pos: int, size: int, remaining: int) -> None:
        if self.limited:
            self.tail = Tail("limit", pos, remaining, "stopped at --max-bytes")
        else:
            self.tail = Tail("truncated", pos, remaining,
                             f"entry declares {L.LOG_OVERHEAD + size} bytes but only {remaining} remain "
                             "(an incomplete last batch)", code="truncated-tail")

    def _classify_bad_size(self, pos: int, size: int, head: bytes) -> Tail:
        remaining = self.end - pos
        if self._rest_is_zero(pos, head):
            return Tail("zeros", pos, remaining,
                        f"{remaining} zero bytes from here to the end (a preallocated or zero-filled tail)",
                        code="zero-padding", fatal=True)
        return Tail("corrupt", pos, remaining,
                    f"found record size {size} smaller than minimum record overhead "
                    f"({L.LEGACY_RECORD_OVERHEAD_V0})", code="size-below-minimum", fatal=True)

    def _rest_is_zero(self, pos: int, head: bytes) -> bool:
        if any(head):
            return False
        f = self._file
        left = self.end - pos - len(head)
        while left > 0:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            if chunk.count(0) != len(chunk):
                return False
            left -= len(chunk)
        return True


def batch_from_entry(position: int, offset: int, size: int, body: bytes) -> Batch:
    """The batch object for one framed entry (``body`` = the ``size`` bytes after the size field), by its
    magic byte. Raises FormatError for an unknown magic or an entry too small for its format."""
    magic = body[L.BODY_MAGIC]
    if magic == 2:
        return RecordBatch(position, offset, size, body)
    if magic <= 1:
        return LegacyBatch(position, offset, body)
    raise FormatError("magic-unknown",
                      f"unknown magic byte {magic} (expected 0, 1 or 2) in an entry declaring {size} bytes",
                      position=position)


def iter_batches(path, **kwargs) -> Iterator[Batch]:
    """Convenience: the batches of one file (the tail is not reported; use SegmentReader for that)."""
    with SegmentReader(path, **kwargs) as reader:
        yield from reader
