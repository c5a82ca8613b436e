"""The offset index ``.index`` (``OffsetIndex.java``, spec §5.2): 8-byte entries ``int32 relativeOffset,
int32 position``, sparse, one entry per roughly ``index.interval.bytes`` of log."""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import NamedTuple

from kdump.format import index_layout as IL
from kdump.read.index_base import FixedEntryIndex

ENTRY = IL.OFFSET_INDEX_ENTRY
ENTRY_SIZE = ENTRY.size  # 8


class OffsetPosition(NamedTuple):
    offset: int  # absolute
    position: int  # byte position in the .log


class OffsetIndex(FixedEntryIndex):
    """A ``.index`` file opened read-only.

    >>> with OffsetIndex("00000000000000000000.index") as idx:      # doctest: +SKIP
    ...     idx.lookup(1234)          # OffsetPosition of the largest entry <= 1234, or (base, 0)
    """

    ENTRY = ENTRY
    KIND = "index"

    def _relative_of(self, raw):
        return raw[0]

    def _key_of(self, raw):
        return self.base_offset + raw[0]

    def entry(self, i: int) -> OffsetPosition:
        rel, pos = self._raw(i)
        return OffsetPosition(self.base_offset + rel, pos)

    def iter_entries(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, OffsetPosition]]:
        base = self.base_offset
        for i, (rel, pos) in self._iter_raw(start, stop):
            yield i, OffsetPosition(base + rel, pos)

    def last_entry(self) -> OffsetPosition:
        """Kafka's ``lastEntry``: the last slot (a zero tail's included), or (base, 0) when empty."""
        return self.entry(self.entries - 1) if self.entries else OffsetPosition(self.base_offset, 0)

    def lookup(self, target: int, *, entries: int | None = None) -> OffsetPosition:
        """``OffsetIndex.lookup``: the largest entry with offset <= target, else (base offset, 0)."""
        slot = self.largest_lower_bound_slot(target, entries)
        return OffsetPosition(self.base_offset, 0) if slot < 0 else self.entry(slot)

    def sanity_problems(self) -> list[str]:
        """``OffsetIndex.sanityCheck``: the messages of the ``CorruptIndexException`` Kafka would throw
        (it throws the first; all are listed here, in Kafka's order)."""
        problems = []
        abs_path = os.path.abspath(self.path)
        last = self.last_entry().offset
        if self.entries != 0 and last < self.base_offset:
            problems.append(f"Corrupt index found, index file {abs_path} has non-zero size but the last offset is "
                            f"{last} which is less than the base offset {self.base_offset}")
        if self.length % ENTRY_SIZE != 0:
            problems.append(f"Index file {abs_path} is corrupt, found {self.length} bytes which is neither positive "
                            f"nor a multiple of {ENTRY_SIZE}")
        return problems


def encode_entry(base_offset: int, offset: int, position: int) -> bytes:
    return ENTRY.pack(offset - base_offset, position)
