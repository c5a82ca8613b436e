"""What offset and time indexes share: fixed-size entries read in place, Kafka's search and zero-tail rule.

Kafka maps index files into memory. kdump reads them with ``pread`` instead: a file that a running broker
truncates under kdump then gives short reads (reported), never a SIGBUS, and memory stays at one chunk
whatever the file size. A file is opened read-only and its length taken once, as Kafka's read-only index
does: ``entries = length // entry_size`` (a preallocated zero tail included, a partial last entry ignored).
"""
from __future__ import annotations

import os
import struct
from collections.abc import Iterator

from kdump.errors import FormatError
from kdump.read.segment import base_offset_from_name

WARM_BYTES = 8192  # AbstractIndex.warmEntries(): the last 8192 bytes of entries are searched first
_CHUNK_ENTRIES = 8192


class ReadOnlyFile:
    """A companion file opened read-only (``os.open``, read with ``pread``), its length taken once."""

    def __init__(self, path):
        self.path = os.fspath(path)
        self._fd = os.open(self.path, os.O_RDONLY)
        try:
            self.length = os.fstat(self._fd).st_size
        except BaseException:
            os.close(self._fd)
            raise

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class FixedEntryIndex(ReadOnlyFile):
    """Base of :class:`~kdump.read.offset_index.OffsetIndex` and :class:`~kdump.read.time_index.TimeIndex`."""

    ENTRY: struct.Struct
    KIND = "index"

    def __init__(self, path, base_offset: int | None = None):
        self.path = os.fspath(path)
        if base_offset is None:
            base_offset = base_offset_from_name(self.path)
            if base_offset is None:
                raise FormatError("file-name-invalid",
                                  f"the file name is not <20-digit base offset>{os.path.splitext(self.path)[1]}, "
                                  "so the base offset its entries are relative to is not known")
        self.base_offset = base_offset
        self.entry_size = self.ENTRY.size
        super().__init__(self.path)
        self.entries = self.length // self.entry_size
        self.partial_bytes = self.length % self.entry_size
        self._valid: int | None = None

    # --- raw access -----------------------------------------------------------------------------
    def _raw(self, i: int) -> tuple:
        data = os.pread(self._fd, self.entry_size, i * self.entry_size)
        if len(data) != self.entry_size:
            raise FormatError("index-truncated",
                              f"entry {i} could not be read: the file is now shorter than the {self.length} bytes "
                              "it had when opened (is a broker writing it?)", position=i * self.entry_size)
        return self.ENTRY.unpack(data)

    def _iter_raw(self, start: int = 0, stop: int | None = None) -> Iterator[tuple[int, tuple]]:
        """(slot, raw fields) for slots ``start..stop-1``, read a chunk at a time."""
        stop = self.entries if stop is None else min(stop, self.entries)
        size = self.entry_size
        unpack = self.ENTRY.unpack_from
        i = start
        while i < stop:
            n = min(_CHUNK_ENTRIES, stop - i)
            data = os.pread(self._fd, n * size, i * size)
            got = len(data) // size
            for k in range(got):
                yield i + k, unpack(data, k * size)
            if got < n:
                raise FormatError("index-truncated",
                                  f"the file became shorter while it was read (now {i * size + len(data)} bytes, "
                                  f"{self.length} when opened)", position=(i + got) * size)
            i += n

    # --- Kafka's semantics, implemented by subclasses ---------------------------------------------
    def _relative_of(self, raw: tuple) -> int:
        raise NotImplementedError

    def _key_of(self, raw: tuple) -> int:
        """The value Kafka's search compares (offset for .index, timestamp for .timeindex)."""
        raise NotImplementedError

    # --- the zero tail ----------------------------------------------------------------------------
    def dump_entry_count(self) -> int:
        """Entries DumpLogSegments prints: it stops at the first slot after the first whose offset is the
        base offset (relative offset 0), taking it for the start of a preallocated zero tail."""
        if self._valid is None:
            count = self.entries
            for i, raw in self._iter_raw(1):
                if self._relative_of(raw) == 0:
                    count = i
                    break
            self._valid = count
        return self._valid

    def valid_entry_count_fast(self) -> int:
        """The same count by binary search, for a well-formed index (relative offsets increasing, then a
        zero tail): O(log n) reads. Callers that seek with it verify what they find."""
        n = self.entries
        if n <= 1 or self._relative_of(self._raw(n - 1)) != 0:
            return n
        lo, hi = 1, n - 1  # the answer is in [1, n-1]: the first slot >= 1 whose relative offset is 0
        while lo < hi:
            mid = (lo + hi) // 2
            if self._relative_of(self._raw(mid)) <= 0:
                hi = mid
            else:
                lo = mid + 1
        return lo

    def zero_tail_start(self) -> int:
        """The first slot of a preallocated zero tail (``entries``: none), whether or not a real entry precedes it.

        Kafka preallocates an active segment's index (``segment.index.bytes``, 10 MB) and counts its entries in
        memory; only a clean close trims the file (``trimToValidSize``). A running or crashed broker's active
        segment therefore has zero slots after its real entries, or zero slots only before its first entry is
        written (``index.interval.bytes`` into the segment). On loading such a file, ``AbstractIndex`` takes
        ``length / entrySize`` entries and ``lastEntry`` is the last zero slot, (base offset, 0) or (0, base
        offset): the sanity checks pass, and the recovery of an unflushed segment rebuilds the index from the log
        (``LogSegment.recover`` resets it). So zero slots are no entries, wherever they start: after the entries
        DumpLogSegments prints (:meth:`dump_entry_count`), or from slot 0 when every slot of a file of two or more
        is zero (Kafka's append never writes an entry at position 0 or timestamp 0 twice, and slot 0's (0, 0) of a
        one-slot file is left as the real entry it may be)."""
        valid = self.dump_entry_count()
        if valid >= self.entries or not self.tail_is_zero(valid):
            return self.entries
        if valid == 1 and self.entries >= 2 and self.tail_is_zero(0):
            return 0
        return valid

    def tail_is_zero(self, start: int) -> bool:
        """True when every byte from entry ``start`` to the end of the whole entries is zero."""
        pos = start * self.entry_size
        end = self.entries * self.entry_size
        while pos < end:
            data = os.pread(self._fd, min(1 << 20, end - pos), pos)
            if not data:
                return False
            if data.count(0) != len(data):
                return False
            pos += len(data)
        return True

    # --- Kafka's search -----------------------------------------------------------------------------
    def largest_lower_bound_slot(self, target: int, entries: int | None = None) -> int:
        """``AbstractIndex.largestLowerBoundSlotFor``: the slot of the largest entry whose key is <= target,
        or -1. Searches the last 8192 bytes of entries first, exactly as Kafka does, over ``entries`` slots
        (all of them by default, a zero tail included, as Kafka's read-only index has them)."""
        n = self.entries if entries is None else entries
        if n == 0:
            return -1
        first_hot = max(0, n - 1 - WARM_BYTES // self.entry_size)
        if self._key_of(self._raw(first_hot)) < target:
            return self._binary_search(target, first_hot, n - 1)
        if self._key_of(self._raw(0)) > target:
            return -1
        return self._binary_search(target, 0, first_hot)

    def _binary_search(self, target: int, lo: int, hi: int) -> int:
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            key = self._key_of(self._raw(mid))
            if key > target:
                hi = mid - 1
            elif key < target:
                lo = mid
            else:
                return mid
        return lo
