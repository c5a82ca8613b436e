"""The one place where the Spark pipeline touches kdump's reader API.

Everything under :mod:`kdump.spark` reads segments through these functions, so that a change of the
reader (legacy batches giving ``RecordColumns``, the live-file mode of ``SegmentReader``, the log-directory
model) is made here and nowhere else:

* :func:`walk` -- the batches of ``[start, end)`` of one local segment file, then how the walk ended;
* :func:`v2_payload` -- a magic-2 batch's serialized records (decompressed), for the compiled Arrow path;
* :func:`record_columns` -- any batch's records as columns (``count``, ``offsets``, ``timestamps``,
  ``key(i)``, ``value(i)``, ``headers``, ``error``), whatever its magic;
* :func:`batch_fields` -- the batch-level values the metadata columns show;
* :func:`first_batch_at` -- is there a sound batch at this byte position (split points from the index)?
* :func:`offset_index_positions` -- the byte positions the offset index names.
"""
from __future__ import annotations

import inspect
import os
from dataclasses import dataclass

from kdump import SegmentReader
from kdump.errors import FormatError, KdumpError
from kdump.format import layout as L
from kdump.segment import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED_BYTES, base_offset_from_name

__all__ = ["walk", "Walk", "v2_payload", "record_columns", "batch_fields", "first_batch_at",
           "offset_index_positions", "base_offset_from_name", "DEFAULT_MAX_DECOMPRESSED_BYTES",
           "FormatError", "KdumpError", "aborted_ranges_from_markers"]

# SegmentReader(live=True) (a partial last entry is "incomplete", not "truncated") comes with the
# restructure; until then a live walk is told apart here, from the tail kinds a partial entry gives.
_READER_HAS_LIVE = "live" in inspect.signature(SegmentReader.__init__).parameters
_INCOMPLETE_KINDS = ("short", "truncated", "incomplete")
# Tails that are not damage: the end of the file, or the end of the range asked for.
_CLEAN_KINDS = ("end", "limit")


@dataclass
class Walk:
    """How a walk ended: ``end`` (the byte after the last whole batch read), ``damage`` (a FormatError-like
    description of what stopped it early, None when nothing did), ``incomplete`` (a live file's last entry
    is still being written: not damage, read it next time)."""

    end: int
    damage: FormatError | None = None
    incomplete: bool = False


class _Batches:
    """Iterator over batches that fills in a :class:`Walk` when exhausted."""

    def __init__(self, path, start, end, live, max_batch_bytes):
        kwargs = {"start": start, "max_batch_bytes": max_batch_bytes}
        if end is not None:
            kwargs["max_bytes"] = end
        if live and _READER_HAS_LIVE:
            kwargs["live"] = True
        self.live = live
        self.reader = SegmentReader(path, **kwargs)
        self.result = Walk(start)

    def __iter__(self):
        reader = self.reader
        try:
            for batch in reader:
                self.result.end = batch.position + batch.size
                yield batch
            tail = reader.tail
            if tail is None or tail.kind in _CLEAN_KINDS:
                return
            if self.live and tail.kind in _INCOMPLETE_KINDS:
                self.result.incomplete = True
                return
            self.result.damage = FormatError(tail.code or tail.kind, tail.message or tail.kind,
                                             position=tail.position)
        finally:
            reader.close()


def walk(path: str, start: int = 0, end: int | None = None, *, live: bool = False,
         max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> _Batches:
    """Batches of a local segment file from byte ``start`` (a batch boundary) up to byte ``end``
    (a batch boundary, or None for the end of the file). After iterating, ``.result`` is a :class:`Walk`.
    With ``live``, a partial last entry is the writer's, not damage."""
    return _Batches(os.fspath(path), start, end, live, max_batch_bytes)


def v2_payload(batch, limit: int):
    """``(buffer, start, end)`` of a magic-2 batch's serialized records (decompressed, bounded by
    ``limit``); raises FormatError when the payload cannot be decompressed."""
    return batch.records_payload(limit)


class _LegacyColumns:
    """A legacy batch's records in the shape of ``RecordColumns`` (what the restructured legacy reader
    gives directly)."""

    __slots__ = ("count", "offsets", "timestamps", "_keys", "_values", "headers", "error")

    def __init__(self):
        self.count = 0
        self.offsets, self.timestamps, self._keys, self._values, self.headers = [], [], [], [], []
        self.error = None

    def key(self, i):
        return self._keys[i]

    def value(self, i):
        return self._values[i]


def record_columns(batch, limit: int):
    """The records of any batch as columns; ``error`` is set after the records that did decode (a
    payload that cannot be decompressed at all raises FormatError)."""
    if batch.magic >= 2 or hasattr(batch, "columns"):
        return batch.columns(limit)
    cols = _LegacyColumns()
    try:
        for r in batch.records(limit):
            cols.offsets.append(r.offset)
            cols.timestamps.append(r.timestamp)
            cols._keys.append(r.key)
            cols._values.append(r.value)
            cols.headers.append(())
            cols.count += 1
    except FormatError as e:
        if cols.count == 0:
            raise
        cols.error = e.at(batch.position)
    return cols


def batch_fields(batch, first_offset: int | None, check_crc: bool) -> dict:
    """The values of the metadata columns for one batch (``first_offset``: a legacy batch's first record
    offset, which only its records tell)."""
    return {
        "magic": batch.magic, "codec": batch.codec_id, "timestampType": int(batch.timestamp_type),
        "baseOffset": batch.base_offset if batch.magic >= 2 else first_offset,
        "producerId": batch.producer_id, "producerEpoch": batch.producer_epoch,
        "baseSequence": batch.base_sequence, "isTransactional": batch.is_transactional,
        "isControl": batch.is_control, "partitionLeaderEpoch": batch.partition_leader_epoch,
        "position": batch.position, "crcValid": batch.is_valid() if check_crc else None,
    }


def first_batch_at(path: str, position: int, *, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES):
    """The batch starting at ``position`` if a whole, CRC-valid one does (a safe split point), else None."""
    try:
        for batch in walk(path, position, None, max_batch_bytes=max_batch_bytes):
            return batch if batch.is_valid() else None
    except (OSError, KdumpError):
        return None
    return None


def offset_index_positions(index_path: str, base_offset: int) -> list[tuple[int, int]]:
    """``(offset, position)`` of every entry of an offset index, in order; empty if it is unreadable."""
    from kdump.index.offset_index import OffsetIndex
    try:
        with OffsetIndex(index_path, base_offset=base_offset) as idx:
            n = idx.valid_entry_count_fast()
            return [(e.offset, e.position) for _, e in idx.iter_entries(0, n)]
    except (OSError, KdumpError):
        return []


def aborted_ranges_from_markers(batch, cols) -> tuple[int, bool] | None:
    """For a transaction marker (a control batch whose record key is ABORT or COMMIT): ``(producer id,
    committed)``; None for any other batch."""
    if not batch.is_control or cols.count == 0:
        return None
    key = cols.key(0)
    if key is None or len(key) < 4:
        return None
    _version, kind = L.CONTROL_RECORD_KEY.unpack_from(key, 0)
    if kind not in (0, 1):  # ControlRecordType ABORT / COMMIT
        return None
    return batch.producer_id, kind == 1
