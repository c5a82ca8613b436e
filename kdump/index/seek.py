"""Seeking in a segment by offset or by time, with its indexes when they exist (Kafka's lookup), else by
walking batch headers.

By offset (``LogSegment.translateOffset``): the offset index gives the largest entry not above the target
(or the segment start), and the walk goes on from there to the first batch whose last offset reaches the
target. By time (``LogSegment.findOffsetByTimestamp``): the time index gives the largest entry whose
timestamp is not above the target, the offset index turns its offset into a position, and the walk finds the
first batch whose max timestamp reaches the target. In both cases the result is the byte position of that
batch (or the end of the log), which is what a full scan from the start finds too.

kdump does not trust an index blindly: the entry it lands on must point at a real batch whose first offset
is not above the target (a magic-2 batch also has its CRC checked when it is under 1 MiB). When that fails,
the seek falls back to walking from the start and says why in ``SeekResult.note``. The walk reads only the
61-byte header of each batch, so even the fallback does not read batch bodies.
"""
from __future__ import annotations

import datetime as _dt
import os
import re

from kdump.errors import FormatError
from kdump.read.logdir import FileKind, sibling
from kdump.read.segment import (
    BatchHeader,
    Stop,
    base_offset_from_name,
    first_offset,
    header_at,
    read_batch_at,
    walk_headers,
)

_VERIFY_CRC_BELOW = 1 << 20


class SeekResult:
    """``position``: where the first wanted batch starts (the log size if there is none); ``method``:
    "index", "scan" (no usable index) or "start" (target at or before the segment start); ``note``: why an
    existing index was not used; ``found``: False when no batch of this segment reaches the target."""

    __slots__ = ("position", "method", "note", "found", "entries_probed")

    def __init__(self, position: int, method: str, note: str | None = None, found: bool = True,
                 entries_probed: int = 0):
        self.position = position
        self.method = method
        self.note = note
        self.found = found
        self.entries_probed = entries_probed

    def __repr__(self) -> str:
        return f"SeekResult(position={self.position}, method={self.method!r}, found={self.found}, note={self.note!r})"


def parse_time(text: str) -> int:
    """Epoch milliseconds from ``1700000000000`` or an ISO-8601 time (``2024-05-01T12:00:00Z``,
    ``2024-05-01 12:00:00.250+02:00``; no zone means UTC). Raises ValueError."""
    text = text.strip()
    if re.fullmatch(r"[+-]?\d+", text):
        return int(text)
    t = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        when = _dt.datetime.fromisoformat(t)
    except ValueError:
        raise ValueError(f"{text!r} is neither epoch milliseconds nor an ISO-8601 time "
                         "(e.g. 2024-05-01T12:00:00Z)") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    delta = when - _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
    return (delta.days * 86400 + delta.seconds) * 1000 + delta.microseconds // 1000


class _Log:
    def __init__(self, path: str):
        self.path = path
        self.fd = os.open(path, os.O_RDONLY)
        self.size = os.fstat(self.fd).st_size

    def close(self):
        os.close(self.fd)


def batch_problem(fd: int, file_size: int, position: int, target_offset: int, *, verify_crc: bool = True) -> str | None:
    """None if a batch starts at ``position`` whose first offset is <= target_offset (an index entry may be
    trusted as a place to walk from); else why not. ``verify_crc``: also check a magic-2 batch's CRC when it
    is under 1 MiB (a seek does; a check of every entry of an index leaves it to the log's own checks)."""
    h = header_at(fd, position, file_size)
    if isinstance(h, Stop):
        return h.message
    if h.last_offset < (h.base_offset if h.base_offset is not None else h.last_offset):
        return f"the batch at position {position} has its last offset below its first"
    if verify_crc and h.magic == 2 and h.size <= _VERIFY_CRC_BELOW:
        try:
            if not read_batch_at(fd, h).is_valid():
                return f"the bytes at position {position} are not a valid batch (CRC mismatch)"
        except Exception as e:  # any parse problem: not a batch boundary
            return f"the bytes at position {position} are not a batch ({e})"
    first = h.base_offset
    if first is None and h.last_offset > target_offset:
        first = first_offset(fd, h)
    if first is not None and first > target_offset:
        return f"the batch at position {position} starts at offset {first}, after {target_offset}"
    return None


def _index_position(log: _Log, index_path: str, base: int, target: int) -> tuple[int, str | None, int]:
    """(position, note, entries probed) from the offset index: the largest valid entry <= target."""
    from kdump.read.offset_index import OffsetIndex

    with OffsetIndex(index_path, base_offset=base) as idx:
        n = idx.valid_entry_count_fast()
        if n == 0:
            return 0, None, 0
        slot = idx.largest_lower_bound_slot(target, entries=n)
        if slot < 0:
            return 0, None, 1
        entry = idx.entry(slot)
    problem = batch_problem(log.fd, log.size, entry.position, target)
    if problem is not None:
        return -1, (f"offset index entry {slot} (offset {entry.offset}, position {entry.position}) does not match "
                    f"the log: {problem}; walking the log from its start"), slot
    return entry.position, None, slot


def _check_time_entry(log: _Log, start: int, slot: int, entry) -> tuple[int, str | None]:
    """The batch holding a time index entry's offset must carry its timestamp; else the entry is not used."""
    for h in walk_headers(log.fd, start, log.size):
        if isinstance(h, Stop):
            break
        if h.last_offset >= entry.offset:
            first = h.base_offset if h.base_offset is not None else first_offset(log.fd, h)
            if (first is None or first <= entry.offset) and h.max_timestamp == entry.timestamp:
                return start, None
            break
    return -1, (f"time index entry {slot} (timestamp {entry.timestamp}, offset {entry.offset}) does not match the "
                "log; walking the log from its start")


def _walk_to(log: _Log, start: int, *, offset: int | None = None, time_ms: int | None = None) -> tuple[int, bool]:
    """First batch at or after ``start`` whose last offset >= offset (or max timestamp >= time_ms)."""
    for h in walk_headers(log.fd, start, log.size):
        if isinstance(h, Stop):
            return h.position, False
        if offset is not None and h.last_offset >= offset:
            return h.position, True
        if time_ms is not None and h.max_timestamp >= time_ms:
            return h.position, True
    return log.size, False  # pragma: no cover - walk_headers always ends with a Stop


def seek_offset(log_path, target: int, *, use_index: bool = True) -> SeekResult:
    """Position of the first batch of ``log_path`` whose last offset is >= ``target``."""
    log_path = os.fspath(log_path)
    base = base_offset_from_name(log_path)
    log = _Log(log_path)
    try:
        if base is not None and target <= base:
            return SeekResult(0, "start", found=log.size > 0)
        index_path = sibling(log_path, FileKind.INDEX)
        note = None
        if use_index and base is not None and os.path.isfile(index_path):
            try:
                pos, note, probed = _index_position(log, index_path, base, target)
            except (OSError, FormatError) as e:
                note = f"offset index unreadable ({getattr(e, 'strerror', None) or e}); walking the log"
                pos, probed = -1, 0
            if pos >= 0:
                position, found = _walk_to(log, pos, offset=target)
                return SeekResult(position, "index", found=found, entries_probed=probed)
        position, found = _walk_to(log, 0, offset=target)
        return SeekResult(position, "scan", note, found)
    finally:
        log.close()


def seek_time(log_path, target_ms: int, *, use_index: bool = True) -> SeekResult:
    """Position of the first batch of ``log_path`` whose max timestamp is >= ``target_ms``."""
    from kdump.read.time_index import TimeIndex

    log_path = os.fspath(log_path)
    base = base_offset_from_name(log_path)
    log = _Log(log_path)
    try:
        tindex_path = sibling(log_path, FileKind.TIMEINDEX)
        index_path = sibling(log_path, FileKind.INDEX)
        note = None
        if use_index and base is not None and os.path.isfile(tindex_path) and os.path.isfile(index_path):
            try:
                with TimeIndex(tindex_path, base_offset=base) as tidx:
                    n = tidx.valid_entry_count_fast()
                    slot = tidx.largest_lower_bound_slot(target_ms, entries=n) if n else -1
                    entry = tidx.entry(slot) if slot >= 0 else None
                if entry is None:
                    pos, note = 0, None
                else:
                    pos, note, _ = _index_position(log, index_path, base, entry.offset)
                    if pos >= 0:
                        pos, note = _check_time_entry(log, pos, slot, entry)
                if pos >= 0:
                    position, found = _walk_to(log, pos, time_ms=target_ms)
                    if found or slot < 0 or slot == n - 1:
                        return SeekResult(position, "index", found=found)
                    note = (f"time index entry {slot + 1} has a timestamp above {target_ms} but no batch after entry "
                            f"{slot} reaches it: the time index does not match the log; walking the log from its start")
            except (OSError, FormatError) as e:
                note = f"time index unreadable ({getattr(e, 'strerror', None) or e}); walking the log"
        position, found = _walk_to(log, 0, time_ms=target_ms)
        return SeekResult(position, "scan", note, found)
    finally:
        log.close()


def first_batch_at(log_path, position: int) -> BatchHeader | Stop:
    """The header of the batch at ``position`` (used by tests and the benchmark)."""
    log = _Log(os.fspath(log_path))
    try:
        return header_at(log.fd, position, log.size)
    finally:
        log.close()
