"""What the read-back of a converted segment proves at once when the output is plain magic 0/1 messages.

A segment converted below magic 2 without compression is one message per record: millions of entries, each of
which ``kdump verify --deep`` and Kafka's recovery (:func:`kdump.index.rebuild.recover_segment`) would walk as an
object of its own. The read-back (:func:`kdump.convert.output.read_back_digests`) already reads them from the
written file as runs of columns (:meth:`kdump.read.segment.SegmentReader.runs`) and checks every CRC and record;
:class:`PlainMessages` follows the same runs and decides, from the columns, two things:

* **quiet**: the file is nothing but plain messages whose headers and offsets ``kdump verify --deep`` has nothing
  to say about: no attribute bit but magic 1's LogAppendTime (with a time), no timestamp below -1, offsets
  increasing (gaps are only information, as in a compacted log) and fitting the segment's base offset, and a file
  Kafka can load. Messages are all ``verify --deep`` looks at
  in such a file (plain messages have no records of their own to decode), so it would report them clean. Anything
  else (a wrapper, a batch, a gap, an unusual attribute...) and the writer runs ``verify --deep`` itself.
* **the indexes** Kafka's recovery writes for such a file (``LogSegment.recover``, spec §5.6): one offset entry
  (and a time entry when the largest timestamp so far grew) at the first message more than
  ``index.interval.bytes`` after the last entry, the largest timestamp once more at the end. Plain messages carry
  no producer state and no leader epoch, and increasing offsets in a file below 2 GiB leave none of recovery's
  refusals possible. The
  files are then checked as every rebuilt index is (:func:`kdump.index.rebuild.add_recovery`).

The checks are made on whole columns (list counts, ``min``, a range comparison, a bisection per index entry), so
their cost per message is a few C-level list operations, not Python code.
"""
from __future__ import annotations

import operator
from bisect import bisect_left, bisect_right
from itertools import accumulate

from kdump.format import index_layout as IL
from kdump.format import layout as L
from kdump.format.legacy import LegacyRun

INDEX_INTERVAL_BYTES = 4096  # log.index.interval.bytes (kdump.index.rebuild.DEFAULT_INDEX_INTERVAL_BYTES)
_OFFSET_ENTRY = IL.OFFSET_INDEX_ENTRY  # relative offset, position
_TIME_ENTRY = IL.TIME_INDEX_ENTRY  # timestamp, relative offset


class PlainMessages:
    """Follows the runs of a read-back (:meth:`run` for each :class:`LegacyRun`, :meth:`other` for any other
    entry); after the walk, :attr:`quiet` and (with a ``base_offset``) :meth:`indexes`."""

    def __init__(self, base_offset: int | None, index_interval_bytes: int = INDEX_INTERVAL_BYTES):
        self.base = base_offset
        self.interval = index_interval_bytes
        self.quiet = True
        self.messages = 0
        self.prev_last: int | None = None
        self.valid = 0  # bytes of the messages so far (where the next one starts)
        self.last_index_entry = 0
        self.index_base = 0 if base_offset is None else base_offset  # index entries are relative to it
        self.max_ts, self.max_ts_offset = L.NO_TIMESTAMP, self.index_base  # an empty time index's last entry
        self.last_time = (L.NO_TIMESTAMP, self.index_base)
        # the entries as they are written (kdump.index's layouts): a few bytes per 4 KiB of log
        self.offset_index = bytearray()
        self.time_index = bytearray()

    def other(self) -> None:
        """An entry that is no plain message: ``verify --deep`` and the index rebuild walk the file."""
        self.quiet = False

    def run(self, run: LegacyRun) -> None:
        """Plain messages read back with valid CRCs."""
        if not self.quiet:
            return
        cols = run.columns
        offsets = cols.offsets
        first, last = offsets[0], offsets[-1]
        base = self.base
        if (run.position != self.valid or (self.prev_last is not None and first <= self.prev_last)
                or not _increasing(offsets, first, last) or not _quiet_headers(cols) or run.end > L.INT32_MAX
                or (base is not None and (first < base or last - base > L.INT32_MAX))):
            self.quiet = False
            return
        self.prev_last = last
        self.messages += cols.count
        if base is None:  # no indexes without a base offset: only the position matters
            self.valid = run.end
            return
        self._index(cols.timestamps, offsets, cols.sizes, cols.count)

    def _index(self, timestamps: list, offsets: list, sizes: list, n: int) -> None:
        """``LogSegment.recover`` over these messages: before message ``j`` is counted, an entry when it starts
        more than the interval after the last entry; the largest timestamp so far includes message ``j``."""
        starts = list(accumulate(sizes, initial=self.valid))  # where each message starts; the last: the end
        top = list(accumulate(timestamps, max))  # the largest timestamp of this run's messages 0..j
        i = 0
        while True:
            j = bisect_right(starts, self.last_index_entry + self.interval, i, n)  # the next message indexed
            self._max(top, offsets, min(j + 1, n))
            if j >= n:
                break
            self.offset_index += _OFFSET_ENTRY.pack(offsets[j] - self.index_base, starts[j])
            if self.max_ts > self.last_time[0]:
                self.last_time = (self.max_ts, self.max_ts_offset)
                self.time_index += _TIME_ENTRY.pack(self.max_ts, self.max_ts_offset - self.index_base)
            self.last_index_entry = starts[j]
            i = j + 1
        self.valid = starts[n]

    def _max(self, top: list, offsets: list, stop: int) -> None:
        """Recovery's ``if batch.maxTimestamp > maxSoFar`` once messages ``..stop`` of the run are counted (``top``:
        the run's running maximum): a new largest timestamp is first reached at its first occurrence, which is
        where the running maximum first reaches it."""
        if stop <= 0:
            return
        t = top[stop - 1]
        if t > self.max_ts:
            self.max_ts, self.max_ts_offset = t, offsets[bisect_left(top, t, 0, stop)]

    def finished(self, entries: int) -> bool:
        """Whether the walk vouches for the whole file: quiet, and every one of its ``entries`` a plain message."""
        return self.quiet and self.messages == entries and entries > 0

    def indexes(self) -> tuple[bytes, bytes]:
        """(``.index``, ``.timeindex``) contents as recovery leaves them (the time index gets the largest timestamp
        once more at the end if it grew since its last entry); needs a ``base_offset``."""
        times = bytes(self.time_index)
        if self.max_ts > self.last_time[0]:
            times += _TIME_ENTRY.pack(self.max_ts, self.max_ts_offset - self.index_base)
        return bytes(self.offset_index), times


def _increasing(offsets: list, first: int, last: int) -> bool:
    """Each offset above the one before it (consecutive ones, the common case, checked as a range)."""
    if last - first == len(offsets) - 1 and offsets == list(range(first, last + 1)):
        return True
    return all(map(operator.lt, offsets, offsets[1:]))


def _quiet_headers(cols) -> bool:
    """No message of ``cols`` has a header ``verify --deep`` reports: attributes 0 (magic 0 then has timestamp
    -1), or magic 1 with the LogAppendTime bit and a time; no timestamp below -1."""
    n = cols.count
    attributes, timestamps = cols.attributes, cols.timestamps
    if min(timestamps) < L.NO_TIMESTAMP:
        return False
    plain = attributes.count(0)
    if plain == n:
        return True
    assert cols.magics is not None  # legacy columns
    if plain + attributes.count(L.LEGACY_TIMESTAMP_TYPE_MASK) != n or cols.magics.count(1) != n:
        return False
    return all(t >= 0 for a, t in zip(attributes, timestamps, strict=True) if a)
