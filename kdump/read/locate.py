"""Locate: the batch at an offset or at a time, in one segment or across a partition. Every command and the
Spark source find batches through here.

Kafka's semantics (spec §5.2, §5.3):

* by offset (``LogSegment.translateOffset``): the offset index gives the largest entry not above the target (or
  the segment start), and a walk of batch headers goes on from there to the first batch whose last offset
  reaches the target: the batch holding the offset, or the first one after it;
* by time (``LogSegment.findOffsetByTimestamp``): the time index gives the largest entry whose timestamp is not
  above the target, the offset index turns its offset into a position, and the walk finds the first batch whose
  max timestamp reaches the target;
* across a partition (:func:`locate_offset_in` / :func:`locate_time_in`): the segment holding an offset is the
  last one whose base offset (its file name) is not above it (Kafka's ``floorEntry``); a time is in the first
  segment with a batch that reaches it. A segment with no batch reaching the target hands over to the next.

The answer is a :class:`Located`: the segment, the byte position a :class:`~kdump.read.segment.SegmentReader`
can start from (where the walk ended when no batch reaches the target) and the header and first offset of the
batch found -- what a walk from the start of the log finds too.

kdump does not trust an index blindly: the entry it lands on must point at a real batch whose first offset is
not above the target (a magic-2 batch under 1 MiB also has its CRC checked; :func:`index_entry_problem`). When
that fails the lookup walks from the start of the log and says why in ``Located.note``. Walks read only the
61-byte header of each batch (:func:`first_batch_reaching`), so even the fallback does not read batch bodies.
"""
from __future__ import annotations

import bisect
import datetime as _dt
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass

from kdump.errors import FormatError, KdumpError
from kdump.format.framing import BatchHeader, Stop
from kdump.read.index_base import ReadOnlyFile
from kdump.read.logdir import FileKind, LogSegment, sibling
from kdump.read.offset_index import OffsetIndex
from kdump.read.segment import (
    DEFAULT_MAX_BATCH_BYTES,
    Batch,
    base_offset_from_name,
    first_offset,
    header_at,
    read_batch_at,
    walk_headers,
)

# An index entry is trusted only if the batch it points at checks out; a magic-2 batch that small also has its
# CRC computed (cheap next to the walk it saves; a larger one would cost more than the index saves).
VERIFY_CRC_BELOW = 1 << 20


@dataclass(frozen=True, slots=True)
class Located:
    """Where a lookup landed. ``segment``: the ``.log``; ``position``: where the batch found starts (else where
    the walk ended: the log's size, or the byte where its framing stopped); ``batch``: that batch's header (None:
    no batch of this segment reaches the target); ``base_offset``: its first offset (a compressed legacy
    wrapper's is read from its first inner message; None when not found or unreadable); ``method``: "index",
    "scan" (no usable index) or "start" (the target is at or before the segment's base offset); ``note``: why
    an existing index was not used."""

    segment: str
    position: int
    batch: BatchHeader | None
    base_offset: int | None
    method: str
    note: str | None = None

    @property
    def found(self) -> bool:
        return self.batch is not None


def first_batch_reaching(fd: int, start: int, end: int, *, offset: int | None = None,
                         time_ms: int | None = None) -> BatchHeader | Stop:
    """The first batch from byte ``start`` whose last offset is >= ``offset`` (or whose max timestamp is >=
    ``time_ms``), by a walk of headers; else the :class:`Stop` that ended the walk."""
    for h in walk_headers(fd, start, end):
        if isinstance(h, Stop):
            return h
        if offset is not None and h.last_offset >= offset:
            return h
        if time_ms is not None and h.max_timestamp >= time_ms:
            return h
    raise AssertionError("walk_headers always ends with a Stop")  # pragma: no cover


def last_batch_from(fd: int, start: int, end: int) -> BatchHeader | None:
    """The last batch of the walk of headers from byte ``start`` (None: not one)."""
    last = None
    for h in walk_headers(fd, start, end):
        if isinstance(h, Stop):
            return last
        last = h
    return last  # pragma: no cover - walk_headers always ends with a Stop


class ForwardWalk:
    """Lookups of offsets in one open log, each from a start the caller chooses (an index entry's position).
    A lookup from the same start as the one before, for an offset not below its, goes on from the batch the
    one before found: batches before it end below that offset. Lookups in increasing order (the entries of a
    time index) so cost one walk per index interval, not one per entry."""

    def __init__(self, fd: int, size: int):
        self.fd = fd
        self.size = size
        self._last: tuple[int, int, BatchHeader] | None = None  # (start, offset, batch found)

    def reaching(self, offset: int, start: int) -> BatchHeader | Stop:
        """The first batch from ``start`` whose last offset is >= ``offset``, else where the walk stopped."""
        walk_from = start
        last = self._last
        if last is not None and last[0] == start and last[1] <= offset:
            walk_from = last[2].position
        found = first_batch_reaching(self.fd, walk_from, self.size, offset=offset)
        self._last = (start, offset, found) if isinstance(found, BatchHeader) else None
        return found


def index_entry_problem(fd: int, file_size: int, position: int, target_offset: int, *,
                        verify_crc: bool = True) -> str | None:
    """None if a batch starts at ``position`` whose first offset is <= ``target_offset`` (an index entry
    pointing there may be trusted as a place to walk from: no batch before it reaches the target); else why
    not. ``verify_crc``: also check a magic-2 batch's CRC when it is under :data:`VERIFY_CRC_BELOW` (a lookup
    does; a check of every entry of an index leaves it to the log's own checks)."""
    h = header_at(fd, position, file_size)
    if isinstance(h, Stop):
        return h.message
    if h.last_offset < (h.base_offset if h.base_offset is not None else h.last_offset):
        return f"the batch at position {position} has its last offset below its first"
    if verify_crc and h.magic == 2 and h.size <= VERIFY_CRC_BELOW:
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


def sound_batch_at(fd: int, file_size: int, position: int, *,
                   max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> Batch | None:
    """The batch starting at ``position`` if a whole, CRC-valid one of at most ``max_batch_bytes`` does (a
    boundary a reader may start or stop at, such as a split point named by the index), else None."""
    h = header_at(fd, position, file_size)
    if isinstance(h, Stop):
        return None
    try:
        batch = read_batch_at(fd, h, max_batch_bytes)
        return batch if batch.is_valid() else None
    except (OSError, KdumpError):
        return None


class SegmentLocator(ReadOnlyFile):
    """One segment's log opened for lookups, with its offset index (opened when first needed; not used when
    ``use_index`` is false or the file name gives no base offset).

    ``verify_crc`` (see :func:`index_entry_problem`); ``strict_entries``: an index entry is trusted only if its
    batch starts at or before the entry's own offset (else: at or before the target of the lookup, which is all
    a lookup needs; a checker asking many lookups wants each entry judged once). ``index_error``: why the offset
    index could not be opened (None: it was, or there is none)."""

    def __init__(self, log_path, *, base_offset: int | None = None, use_index: bool = True,
                 verify_crc: bool = True, strict_entries: bool = False):
        super().__init__(log_path)
        self.base_offset = base_offset if base_offset is not None else base_offset_from_name(self.path)
        self.use_index = use_index and self.base_offset is not None
        self.verify_crc = verify_crc
        self.strict_entries = strict_entries
        self.walk = ForwardWalk(self.fd, self.size)
        self.index_error: OSError | FormatError | None = None
        self.index_note: str | None = None  # why the last index_start gave None
        self._index: OffsetIndex | None = None
        self._index_entries = 0
        self._index_opened = False
        self._problems: dict[tuple[int, int], str | None] = {}

    @property
    def fd(self) -> int:
        return self._fd

    @property
    def size(self) -> int:
        """The log's size when it was opened: lookups see the batches written by then."""
        return self.length

    def close(self) -> None:
        if self._index is not None:
            self._index.close()
            self._index = None
        super().close()

    def __enter__(self) -> SegmentLocator:
        return self

    # --- the offset index -------------------------------------------------------------------------------------
    @property
    def index_path(self) -> str:
        return sibling(self.path, FileKind.INDEX)

    def has_index(self) -> bool:
        """An offset index file is there to be used."""
        return self.use_index and os.path.isfile(self.index_path)

    def _offset_index(self) -> OffsetIndex | None:
        if not self._index_opened:
            self._index_opened = True
            if self.has_index():
                try:
                    index = OffsetIndex(self.index_path, base_offset=self.base_offset)
                except (OSError, FormatError) as e:
                    self.index_error = e
                    return None
                try:
                    self._index_entries = index.valid_entry_count_fast()
                except (OSError, FormatError) as e:
                    index.close()
                    self.index_error = e
                    return None
                self._index = index
        return self._index

    def distrust_index(self) -> None:
        """Use the offset index no more (a lookup found it misleading): later lookups walk from the start."""
        self._index_opened = True
        if self._index is not None:
            self._index.close()
            self._index = None

    def index_start(self, target: int) -> int | None:
        """Where a walk for ``target`` may start: the position of the largest offset-index entry not above it
        when the batch there can be trusted (0 when no entry is), or None when the index is not used: there is
        none, it could not be opened (``index_error``) or the entry does not match the log (``index_note`` says
        why). Raises OSError/FormatError if the index cannot be read past its opening."""
        self.index_note = None
        index = self._offset_index()
        if index is None:
            return None
        n = self._index_entries
        if n == 0:
            return 0
        slot = index.largest_lower_bound_slot(target, entries=n)
        if slot < 0:
            return 0
        entry = index.entry(slot)
        against = entry.offset if self.strict_entries else target
        key = (slot, against)
        if key not in self._problems:
            self._problems[key] = index_entry_problem(self.fd, self.size, entry.position, against,
                                                      verify_crc=self.verify_crc)
        problem = self._problems[key]
        if problem is not None:
            self.index_note = (f"offset index entry {slot} (offset {entry.offset}, position {entry.position}) does "
                               f"not match the log: {problem}; walking the log from its start")
            return None
        return entry.position

    # --- lookups --------------------------------------------------------------------------------------------
    def _located(self, found: BatchHeader | Stop, method: str, note: str | None = None) -> Located:
        if isinstance(found, Stop):
            return Located(self.path, found.position, None, None, method, note)
        return Located(self.path, found.position, found, first_offset(self.fd, found), method, note)

    def locate_offset(self, target: int) -> Located:
        """The first batch whose last offset is >= ``target``: the batch holding it, or the first after it."""
        if self.base_offset is not None and target <= self.base_offset:
            return self._located(header_at(self.fd, 0, self.size), "start")
        note = None
        if self.has_index():
            try:
                start = self.index_start(target)
                note = self.index_note
            except (OSError, FormatError) as e:
                self.index_error, start = e, None
            if self.index_error is not None:
                note = f"offset index unreadable ({_reason(self.index_error)}); walking the log"
            if start is not None:
                return self._located(first_batch_reaching(self.fd, start, self.size, offset=target), "index")
        return self._located(first_batch_reaching(self.fd, 0, self.size, offset=target), "scan", note)

    def locate_time(self, target_ms: int) -> Located:
        """The first batch whose max timestamp is >= ``target_ms``."""
        from kdump.read.time_index import TimeIndex

        tindex_path = sibling(self.path, FileKind.TIMEINDEX)
        note = None
        if self.has_index() and os.path.isfile(tindex_path):
            try:
                with TimeIndex(tindex_path, base_offset=self.base_offset) as tidx:
                    n = tidx.valid_entry_count_fast()
                    slot = tidx.largest_lower_bound_slot(target_ms, entries=n) if n else -1
                    entry = tidx.entry(slot) if slot >= 0 else None
                start: int | None = 0
                if entry is not None:
                    start = self.index_start(entry.offset)
                    if self.index_error is not None:
                        raise self.index_error
                    note = self.index_note
                    if start is not None and not self._time_entry_matches(start, entry):
                        start, note = None, (f"time index entry {slot} (timestamp {entry.timestamp}, offset "
                                             f"{entry.offset}) does not match the log; walking the log from its start")
                if start is not None:
                    found = first_batch_reaching(self.fd, start, self.size, time_ms=target_ms)
                    if isinstance(found, BatchHeader) or slot < 0 or slot == n - 1:
                        return self._located(found, "index")
                    note = (f"time index entry {slot + 1} has a timestamp above {target_ms} but no batch after entry "
                            f"{slot} reaches it: the time index does not match the log; walking the log from its "
                            "start")
            except (OSError, FormatError) as e:
                note = f"time index unreadable ({_reason(e)}); walking the log"
        return self._located(first_batch_reaching(self.fd, 0, self.size, time_ms=target_ms), "scan", note)

    def _time_entry_matches(self, start: int, entry) -> bool:
        """The batch holding a time index entry's offset must carry its timestamp; else the entry is not used."""
        h = first_batch_reaching(self.fd, start, self.size, offset=entry.offset)
        if isinstance(h, Stop):
            return False
        first = first_offset(self.fd, h)
        return (first is None or first <= entry.offset) and h.max_timestamp == entry.timestamp

    def end_offset(self) -> int | None:
        """The last offset + 1 of the segment's last batch (None: it has none), by a walk from the last
        offset-index entry when the batch there can be trusted: a damaged index must not decide the end."""
        start = 0
        try:
            index = self._offset_index()
            if index is not None and self._index_entries:
                entry = index.entry(self._index_entries - 1)
                if index_entry_problem(self.fd, self.size, entry.position, entry.offset,
                                       verify_crc=self.verify_crc) is None:
                    start = entry.position
        except (OSError, FormatError):
            start = 0
        last = last_batch_from(self.fd, start, self.size)
        if last is None and start:
            last = last_batch_from(self.fd, 0, self.size)
        return None if last is None else last.last_offset + 1


def _reason(e: BaseException) -> str:
    return getattr(e, "strerror", None) or str(e)


# --- one segment, by path ---------------------------------------------------------------------------------------
def locate_offset(log_path, target: int, *, use_index: bool = True) -> Located:
    """The first batch of ``log_path`` whose last offset is >= ``target`` (:meth:`SegmentLocator.locate_offset`)."""
    with SegmentLocator(log_path, use_index=use_index) as loc:
        return loc.locate_offset(target)


def locate_time(log_path, target_ms: int, *, use_index: bool = True) -> Located:
    """The first batch of ``log_path`` whose max timestamp is >= ``target_ms``."""
    with SegmentLocator(log_path, use_index=use_index) as loc:
        return loc.locate_time(target_ms)


def segment_end_offset(log_path, base_offset: int | None = None) -> int | None:
    """The segment's last offset + 1 (its base offset when it holds no batch; None if the log cannot be read)."""
    try:
        loc = SegmentLocator(log_path, base_offset=base_offset)
    except OSError:
        return None
    with loc:
        end = loc.end_offset()
        return end if end is not None else loc.base_offset


# --- a partition's segments -------------------------------------------------------------------------------------
def locate_offset_in(segments: Sequence[LogSegment], target: int, *, use_index: bool = True) -> Located | None:
    """The batch holding ``target`` or the first after it, in a partition's ``segments`` (offset order): from
    the last segment whose base offset is not above it (the first segment for an offset below them all). None
    for a partition without segments; ``found`` false when no batch reaches it."""
    if not segments:
        return None
    i = max(0, bisect.bisect_right([s.base_offset for s in segments], target) - 1)
    located = None
    for seg in segments[i:]:
        located = locate_offset(seg.log, target, use_index=use_index)
        if located.found:
            return located
    return located


def locate_time_in(segments: Sequence[LogSegment], target_ms: int, *, use_index: bool = True) -> Located | None:
    """The first batch of a partition's ``segments`` (offset order) whose max timestamp is >= ``target_ms``."""
    located = None
    for seg in segments:
        located = locate_time(seg.log, target_ms, use_index=use_index)
        if located.found:
            return located
    return located


def log_end_offset_of(segments: Sequence[LogSegment]) -> int | None:
    """The partition's log end offset: the offset after its last batch (the last segment's base offset when
    that segment is empty; None without segments or when the last log cannot be read)."""
    if not segments:
        return None
    last = segments[-1]
    return segment_end_offset(last.log, last.base_offset)


# --- a time as a user writes it -----------------------------------------------------------------------------------
def parse_time(text: str) -> int:
    """Epoch milliseconds from ``1700000000000`` or an ISO-8601 time (``2024-05-01T12:00:00Z``,
    ``2024-05-01 12:00:00.250+02:00``; no zone means UTC): the target of a time lookup. Raises ValueError."""
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
