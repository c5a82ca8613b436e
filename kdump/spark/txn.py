"""``isolationLevel=read_committed``: which records a Kafka consumer reading committed data would not see.

Kafka's rules (``FetchResponse`` aborted transactions, the consumer's ``CompletedFetch.nextFetchedRecord``):

* the broker returns data only below the **last stable offset** (LSO): the first offset of the earliest
  transaction still open, else the high watermark;
* with it, the aborted transactions overlapping the fetch, each ``(producer id, first offset, last offset)``
  (``last offset``: the ABORT marker), read from the segments' ``.txnindex``;
* the consumer drops a *transactional data batch* of producer P when an aborted transaction of P began at
  or before the batch's last offset and its ABORT marker comes after the batch; control batches are never
  data. Non-transactional batches are never dropped.

:class:`PartitionTxns` is a view of the one producer replay (:class:`kdump.read.producers.PartitionProducers`):
one pass over a partition's batch headers (control batches read whole for their marker) whose aborted
transactions are those of a segment without a ``.txnindex``, and whose transactions still open at the end give
the LSO. A segment's ``.txnindex``, when present and readable, is
Kafka's own list of the transactions aborted in it (what the broker serves) and is used for that segment.
The pass is incremental (:meth:`PartitionTxns.scan` goes on from where it stopped), so a stream tailing a
partition reads each batch header once.

:class:`TxnFilter` (what tasks receive): a stateless test per batch, so that a partition split across
tasks (or micro-batches) gives the same answer as one consumer reading it from the start.
"""
from __future__ import annotations

import bisect
import os

from kdump.errors import KdumpError
from kdump.read.logdir import FileKind, sibling
from kdump.read.producers import PartitionProducers
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES

READ_UNCOMMITTED = "read_uncommitted"
READ_COMMITTED = "read_committed"
ISOLATION_LEVELS = (READ_UNCOMMITTED, READ_COMMITTED)


class TxnFilter:
    """What a read_committed consumer drops: batches of aborted transactions, and everything from the LSO
    on (``last_stable_offset`` None: no bound)."""

    def __init__(self, aborted=(), last_stable_offset: int | None = None):
        by_producer: dict[int, list[tuple[int, int]]] = {}
        for producer_id, first, last in aborted:
            by_producer.setdefault(producer_id, []).append((first, last))
        self._firsts = {}
        self._lasts = {}
        for pid, spans in by_producer.items():
            spans.sort()
            self._firsts[pid] = [f for f, _ in spans]
            self._lasts[pid] = [last for _, last in spans]
        self.last_stable_offset = last_stable_offset

    def drops(self, batch) -> bool:
        lso = self.last_stable_offset
        if lso is not None and batch.last_offset >= lso:
            return True
        if not batch.is_transactional or batch.is_control:
            return False
        firsts = self._firsts.get(batch.producer_id)
        if firsts is None:
            return False
        # the producer's latest aborted transaction begun at or before the batch's last offset
        i = bisect.bisect_right(firsts, batch.last_offset) - 1
        return i >= 0 and batch.last_offset < self._lasts[batch.producer_id][i]

    def __repr__(self) -> str:
        n = sum(len(v) for v in self._firsts.values())
        return f"TxnFilter({n} aborted transactions, last_stable_offset={self.last_stable_offset})"


class PartitionTxns:
    """The transaction state of one partition as a read_committed consumer needs it: a view of one incremental
    producer replay (:class:`kdump.read.producers.PartitionProducers`) over its segments in offset order, with each
    complete segment's aborts taken from its ``.txnindex`` when it has a readable one."""

    def __init__(self) -> None:
        # Spark reads from the log start and lists no snapshots (its segments may be remote): no seed
        self.producers = PartitionProducers()
        # segment base offset -> the aborts its .txnindex lists, None: its markers tell (in the order scanned)
        self._index_aborts: dict[int, list | None] = {}

    @property
    def aborted(self) -> list[tuple[int, int, int]]:
        """(producer id, first offset, ABORT marker offset) of every aborted transaction scanned."""
        out = []
        for base, listed in self._index_aborts.items():
            if listed is not None:
                out.extend(listed)
            else:
                out.extend((t.producer_id, t.first_offset, t.marker_offset) for t in self.producers.aborted_in(base))
        return out

    def scan(self, segments, *, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> None:
        """Apply the batches of ``segments`` (``(base offset, local .log path)`` in offset order) that were not
        applied yet. A partial last entry (a live segment) or damage ends the pass over a segment: what
        follows in that segment is not applied (a consumer cannot read past it either), and a later scan
        goes on from there."""
        segments = list(segments)
        if self.producers.segment is not None and self.producers.segment not in [b for b, _ in segments]:
            self._index_aborts.clear()  # the segment we were in was deleted (retention): the replay starts again
        last = segments[-1][0] if segments else None

        def look_at_index(base: int, path: str) -> None:
            # the last segment may still be written (its .txnindex still growing): its markers tell
            self._look_at_index(base, path, complete=base != last)
        self.producers.scan(segments, after_segment=look_at_index, max_batch_bytes=max_batch_bytes)

    def add(self, base: int, path: str, *, complete: bool, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> None:
        """Apply one segment (the next in offset order, or the one the last scan stopped in). ``complete``: the
        segment is no longer written, so its ``.txnindex`` (when there is one) lists all its aborts."""
        start = self.producers.position if base == self.producers.segment else 0
        self.producers.scan_segment(base, path, start=start, max_batch_bytes=max_batch_bytes)
        self._look_at_index(base, path, complete=complete)

    def _look_at_index(self, base: int, path: str, *, complete: bool) -> None:
        """The first time a segment is met, whether its aborts come from its ``.txnindex`` (once complete, Kafka's
        own list of them) or from its markers."""
        if base not in self._index_aborts:
            self._index_aborts[base] = self._aborted_from_index(path) if complete else None

    @staticmethod
    def _aborted_from_index(path: str) -> list | None:
        """The aborted transactions of the segment from its ``.txnindex``, or None when it has none or Kafka could
        not read it (then the markers tell)."""
        from kdump.read.txn_index import TxnIndexFile
        index = sibling(path, FileKind.TXNINDEX)
        if not os.path.isfile(index):
            return None
        try:
            with TxnIndexFile(index) as f:
                entries = [t for _, t in f.entries()]
        except (OSError, KdumpError):
            return None
        if any(t.version != 0 for t in entries):  # Kafka refuses the index ("Unexpected version")
            return None
        return [(t.producer_id, t.first_offset, t.last_offset) for t in entries]

    def filter(self, high_watermark: int | None = None) -> TxnFilter:
        """The filter for what has been scanned: aborted transactions, and the LSO (the first offset of the
        earliest open transaction, bounded by ``high_watermark`` when given)."""
        first_open = self.producers.state.first_unstable_offset()
        bounds = [b for b in (first_open, high_watermark) if b is not None]
        return TxnFilter(self.aborted, min(bounds) if bounds else None)


def partition_filter(segment_paths, *, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
                     high_watermark: int | None = None) -> TxnFilter:
    """:class:`TxnFilter` of one partition from its segments (``(base offset, local path)``, offset order)."""
    txns = PartitionTxns()
    txns.scan(segment_paths, max_batch_bytes=max_batch_bytes)
    return txns.filter(high_watermark)


__all__ = ["TxnFilter", "PartitionTxns", "partition_filter", "ISOLATION_LEVELS", "READ_COMMITTED",
           "READ_UNCOMMITTED"]
