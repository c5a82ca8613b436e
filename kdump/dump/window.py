"""A seeking dump's window (``from_offset``/``to_offset``/``from_time``/``to_time``): which batches, and which
records of them, are shown."""
from __future__ import annotations

from typing import TYPE_CHECKING

from kdump.read.damage import RANGE, Damage

if TYPE_CHECKING:
    from kdump.dump.options import DumpOptions


class SeekWindow:
    """Which batches and records a seeking dump shows: from the first batch reaching ``from_offset`` (records
    from that offset) or the first batch whose max timestamp reaches ``from_time`` (records from its first
    record at or after that time, and everything after it), up to ``to_offset`` (records up to it)."""

    def __init__(self, opts: DumpOptions):
        self.from_offset = opts.from_offset
        self.to_offset = opts.to_offset
        self.from_time = opts.from_time
        self.to_time = opts.to_time
        self.started = self.from_offset is None and self.from_time is None
        self.first_batch = None  # the batch the window starts in (records before the start are hidden)
        self.first_record_shown = False  # in that batch, read in chunks: the start has been found

    def batch_verdict(self, batch, limit: int) -> str:
        if self.to_offset is not None and batch.last_offset > self.to_offset and \
                _first_offset(batch, limit) > self.to_offset:
            return "stop"
        if self.to_time is not None and _first_timestamp(batch) > self.to_time:
            return "stop"
        if self.started:
            return "show"
        if self.from_offset is not None and batch.last_offset < self.from_offset:
            return "skip"
        if self.from_time is not None and batch.max_timestamp < self.from_time:
            return "skip"
        self.started = True
        self.first_batch = batch
        return "show"

    def filter_records(self, batch, records, *, last_chunk: bool = True):
        """The records of one chunk of ``batch`` to show (a batch comes in one or more chunks, in order)."""
        lo = hi = None
        n = records.count
        offsets = records.offsets
        if batch is self.first_batch and not self.first_record_shown:
            if self.from_offset is not None:
                lo = next((i for i in range(n) if offsets[i] >= self.from_offset), n)
            elif self.from_time is not None:
                times = records.timestamps
                # no record at or after the time in a whole batch (its max timestamp says there is): show it all
                lo = next((i for i in range(n) if times[i] >= self.from_time), 0 if last_chunk else n)
            self.first_record_shown = lo < n
        if self.to_offset is not None:
            hi = next((i for i in range(n) if offsets[i] > self.to_offset), n)
        if lo is None and hi is None:
            return records
        lo = lo or 0
        hi = n if hi is None else hi
        if lo == 0 and hi == n:
            return records
        return records.slice(lo, hi)


def _first_timestamp(batch) -> int:
    """The timestamp a batch starts with: a v2 batch's base timestamp (unless it holds a delete horizon), else
    its max timestamp (a legacy entry's, or every record's under LogAppendTime)."""
    if batch.magic >= 2 and batch.delete_horizon_ms is None and int(batch.timestamp_type) == 0:
        return batch.base_timestamp
    return batch.max_timestamp


def _first_offset(batch, limit: int) -> int:
    return batch.base_offset  # decompresses a legacy wrapper; one that cannot be read gives its own offset


def before_window(damage: Damage, window: SeekWindow | None) -> bool:
    """Does a seeking dump's window leave out every offset lost in a damaged range?"""
    if window is None or damage.kind != RANGE:
        return False
    if not window.started and window.from_offset is not None and damage.next_good_offset is not None:
        return damage.next_good_offset <= window.from_offset
    return window.to_offset is not None and damage.last_good_offset is not None and \
        damage.last_good_offset >= window.to_offset
