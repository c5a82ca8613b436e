"""Batch headers read in place: what an index entry points at, without reading batch bodies.

Index work needs, at a byte position of a ``.log``, the batch that starts there: its size, magic, last
offset (what Kafka's ``FileChannelRecordBatch.lastOffset`` gives), max timestamp and, for magic 2, base
offset, leader epoch and producer fields. :func:`header_at` reads that with one ``pread`` of at most 73 bytes,
and :func:`walk_headers` walks from a position to the end the way ``FileLogInputStream.nextBatch`` does
(spec §3.9), so that seeking and index checks cost one small read per batch instead of whole batches.

Stop rules are Kafka's: fewer than 17 bytes left or an entry running past the end ends the walk quietly
(``trailing``); a size below 14 or an unknown magic byte is what Kafka throws ``CorruptRecordException`` for
(``corrupt``). Nothing here decompresses: for a compressed magic 0/1 wrapper the first offset is unknown
(``base_offset`` is None) until :func:`read_batch_at` reads the whole entry.
"""
from __future__ import annotations

import os
import struct
from typing import Iterator

from kdump.errors import FormatError
from kdump.format import layout as L

_V2_HEAD = struct.Struct(">qiibIhiqqqhii")  # prefix + v2 header up to recordsCount (61 bytes)
_LEGACY_HEAD = struct.Struct(">qiIBb")  # prefix + crc, magic, attributes (18 bytes)
_TS = struct.Struct(">q")
PEEK_BYTES = L.V2_RECORD_BATCH_OVERHEAD  # 61: enough for every header kdump needs here


class BatchHeader:
    """The header fields of the batch at ``position`` (plain slotted class: cheap to import and create)."""

    __slots__ = ("position", "size", "magic", "last_offset", "base_offset", "max_timestamp", "attributes",
                 "partition_leader_epoch", "producer_id", "producer_epoch", "records_count")

    def __init__(self, position: int, size: int, magic: int, last_offset: int, base_offset: int | None,
                 max_timestamp: int, attributes: int, partition_leader_epoch: int = -1, producer_id: int = -1,
                 producer_epoch: int = -1, records_count: int | None = None):
        self.position = position
        self.size = size  # whole entry, prefix included
        self.magic = magic
        self.last_offset = last_offset
        self.base_offset = base_offset  # None for a compressed legacy wrapper (needs decompression)
        self.max_timestamp = max_timestamp
        self.attributes = attributes
        self.partition_leader_epoch = partition_leader_epoch
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.records_count = records_count

    def __repr__(self) -> str:
        return (f"BatchHeader(position={self.position}, size={self.size}, magic={self.magic}, "
                f"base_offset={self.base_offset}, last_offset={self.last_offset})")

    @property
    def end(self) -> int:
        return self.position + self.size

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & L.V2_CONTROL_MASK)

    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & L.V2_TRANSACTIONAL_MASK)


class Stop:
    """Why a walk or a peek found no batch: ``end`` (nothing left), ``trailing`` (Kafka's trailing bytes:
    fewer than 17 bytes, or an entry running past the end), ``corrupt`` (Kafka throws), ``beyond``
    (the position lies past the end of the file)."""

    __slots__ = ("kind", "position", "message")

    def __init__(self, kind: str, position: int, message: str):
        self.kind = kind
        self.position = position
        self.message = message

    def __repr__(self) -> str:
        return f"Stop({self.kind!r}, {self.position}, {self.message!r})"


def header_at(fd: int, position: int, file_size: int) -> BatchHeader | Stop:
    """The batch starting at ``position`` of the open file ``fd``, or why there is none."""
    if position < 0 or position > file_size:
        return Stop("beyond", position, f"position {position} is outside the log ({file_size} bytes)")
    remaining = file_size - position
    if remaining == 0:
        return Stop("end", position, f"position {position} is the end of the log")
    if remaining <= L.HEADER_SIZE_UP_TO_MAGIC:
        return Stop("trailing", position,
                    f"only {remaining} bytes at position {position}, too few for a batch header (17 needed)")
    want = min(PEEK_BYTES, remaining)
    head = os.pread(fd, want, position)
    if len(head) < want:  # the file shrank since its size was taken
        return Stop("trailing", position, f"the log ended at byte {position + len(head)} while reading a header "
                    "(was it truncated meanwhile?)")
    return parse_header(head, position, remaining)


def parse_header(head: bytes, position: int, remaining: int) -> BatchHeader | Stop:
    if len(head) <= L.HEADER_SIZE_UP_TO_MAGIC:
        return Stop("trailing", position, f"only {len(head)} bytes at position {position}, too few for a batch header")
    offset, size = L.PREFIX.unpack_from(head, 0)
    if size < L.LEGACY_RECORD_OVERHEAD_V0:
        return Stop("corrupt", position,
                    f"record size {size} at position {position} is smaller than the minimum record overhead (14)")
    total = L.LOG_OVERHEAD + size
    if total > remaining:
        return Stop("trailing", position,
                    f"the entry at position {position} declares {total} bytes but only {remaining} remain")
    magic = head[L.LOG_OVERHEAD + L.BODY_MAGIC]
    if magic == 2:
        if size < L.V2_BODY_HEAD_SIZE or len(head) < L.V2_RECORD_BATCH_OVERHEAD:
            return Stop("corrupt", position,
                        f"magic 2 batch at position {position} declares {total} bytes, less than its 61-byte header")
        (base, _size, ple, _magic, _crc, attrs, last_delta, _base_ts, max_ts, pid, epoch, _seq,
         count) = _V2_HEAD.unpack_from(head, 0)
        return BatchHeader(position, total, 2, base + last_delta, base, max_ts, attrs & 0xFFFF, ple, pid, epoch,
                           count)
    if magic > 2:
        return Stop("corrupt", position, f"invalid magic byte {magic} at position {position} (expected 0, 1 or 2)")
    _off, _size, _crc, _magic, attrs = _LEGACY_HEAD.unpack_from(head, 0)
    ts = L.NO_TIMESTAMP
    if magic == 1:
        if size < L.LEGACY_RECORD_OVERHEAD_V1:
            return Stop("corrupt", position, f"magic 1 message at position {position} is {size} bytes, less than 22")
        (ts,) = _TS.unpack_from(head, L.LOG_OVERHEAD + 6)
    compressed = attrs & L.LEGACY_CODEC_MASK
    return BatchHeader(position, total, magic, offset, None if compressed else offset, ts, attrs & 0xFF)


def walk_headers(fd: int, start: int, end: int) -> Iterator[BatchHeader | Stop]:
    """Batch headers from ``start`` to ``end`` (bytes); the last item is always a :class:`Stop`."""
    pos = start
    while True:
        item = header_at(fd, pos, end)
        yield item
        if isinstance(item, Stop):
            return
        pos = item.end


def read_batch_at(fd: int, header: BatchHeader, max_batch_bytes: int = 256 * 1024 * 1024):
    """The whole batch a header describes, as a RecordBatch/LegacyBatch (bodies are read only here).

    Raises FormatError for a batch above ``max_batch_bytes`` or one whose bytes do not parse."""
    from kdump.format.legacy import LegacyBatch
    from kdump.format.v2 import RecordBatch

    if header.size > max_batch_bytes:
        raise FormatError("batch-too-large",
                          f"batch declares {header.size} bytes, above the limit of {max_batch_bytes}",
                          position=header.position)
    data = os.pread(fd, header.size, header.position)
    if len(data) != header.size:
        raise FormatError("truncated-tail", "the log ended while reading a batch (was it truncated?)",
                          position=header.position)
    offset, size = L.PREFIX.unpack_from(data, 0)
    body = data[L.LOG_OVERHEAD:]
    if header.magic == 2:
        return RecordBatch(header.position, offset, size, body)
    return LegacyBatch(header.position, offset, body)


def first_offset(fd: int, header: BatchHeader, limit: int = 256 * 1024 * 1024) -> int | None:
    """The first offset of a batch: from the header, or by decompressing a legacy wrapper (None if that fails)."""
    if header.base_offset is not None:
        return header.base_offset
    try:
        return read_batch_at(fd, header, limit).base_offset
    except FormatError:
        return None


def max_record_timestamp(batch, limit: int) -> int:
    """The largest record timestamp of a batch (-1 if none), as DumpLogSegments computes it for time indexes."""
    best = L.NO_TIMESTAMP
    cols = batch.columns(limit)
    if cols.count:
        best = max(best, max(cols.timestamps[:cols.count]))
    if cols.error is not None:
        raise cols.error
    return best
