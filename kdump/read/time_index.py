"""The time index ``.timeindex`` (``TimeIndex.java``, spec §5.3): 12-byte entries ``int64 timestamp,
int32 relativeOffset``. An entry (T, O) says: the largest timestamp seen up to and including offset O is T."""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from kdump.format import index_layout as IL
from kdump.format import layout as L
from kdump.read.index_base import FixedEntryIndex

ENTRY = IL.TIME_INDEX_ENTRY
ENTRY_SIZE = ENTRY.size  # 12


class TimestampOffset(NamedTuple):
    timestamp: int
    offset: int  # absolute


class TimeIndex(FixedEntryIndex):
    """A ``.timeindex`` file opened read-only."""

    ENTRY = ENTRY
    KIND = "timeindex"

    def _relative_of(self, raw):
        return raw[1]

    def _key_of(self, raw):
        return raw[0]

    def entry(self, i: int) -> TimestampOffset:
        ts, rel = self._raw(i)
        return TimestampOffset(ts, self.base_offset + rel)

    def iter_entries(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, TimestampOffset]]:
        base = self.base_offset
        for i, (ts, rel) in self._iter_raw(start, stop):
            yield i, TimestampOffset(ts, base + rel)

    def last_entry(self) -> TimestampOffset:
        """Kafka's ``lastEntryFromIndexFile``: the last slot, or (-1, base) when empty."""
        return self.entry(self.entries - 1) if self.entries else TimestampOffset(L.NO_TIMESTAMP, self.base_offset)

    def lookup(self, target_ms: int, *, entries: int | None = None) -> TimestampOffset:
        """``TimeIndex.lookup``: the entry with the largest timestamp <= target, else (-1, base offset)."""
        slot = self.largest_lower_bound_slot(target_ms, entries)
        return TimestampOffset(L.NO_TIMESTAMP, self.base_offset) if slot < 0 else self.entry(slot)

    def sanity_problems(self) -> list[str]:
        """``TimeIndex.sanityCheck``: Kafka's ``CorruptIndexException`` messages, in Kafka's order.
        A preallocated zero tail fails the first check (its last timestamp 0 is below the first)."""
        problems = []
        abs_path = os.path.abspath(self.path)
        last = self.last_entry()
        if self.entries != 0:
            first_ts = self.entry(0).timestamp
            if last.timestamp < first_ts:
                problems.append(f"Corrupt time index found, time index file ({abs_path}) has non-zero size but the "
                                f"last timestamp is {last.timestamp} which is less than the first timestamp {first_ts}")
            if last.offset < self.base_offset:
                problems.append(f"Corrupt time index found, time index file ({abs_path}) has non-zero size but the "
                                f"last offset is {last.offset} which is less than the first offset {self.base_offset}")
        if self.length % ENTRY_SIZE != 0:
            problems.append(f"Time index file {abs_path} is corrupt, found {self.length} bytes which is neither "
                            f"positive nor a multiple of {ENTRY_SIZE}")
        return problems


def encode_entry(base_offset: int, timestamp: int, offset: int) -> bytes:
    return ENTRY.pack(timestamp, offset - base_offset)


def max_record_timestamp(batch, limit: int) -> int:
    """The largest record timestamp of a batch (-1 if none), as DumpLogSegments computes it for time indexes."""
    best = L.NO_TIMESTAMP
    for cols in batch.column_chunks(limit):  # a chunk at a time: memory bounded whatever count is declared
        if cols.count:
            best = max(best, max(cols.timestamps[:cols.count]))
        if cols.error is not None:
            raise cols.error.fresh()  # not the kept one: its traceback would hold cols, which holds it
    return best
