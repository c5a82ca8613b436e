"""The part of Kafka's producer state that decides the transaction index (``ProducerStateManager``,
``ProducerAppendInfo`` with ``AppendOrigin.REPLICATION``, as ``LogSegment.recover`` uses them, spec §5.4/§5.6).

For every magic-2 batch with a producer id:

* a transactional data batch of a producer with no open transaction opens one at the batch's base offset
  (``ongoingTxns[firstOffset] = producer``);
* a control batch's first record is an end-transaction marker; if the producer has an open transaction it
  completes it. An ABORT is written to the transaction index as ``AbortedTxn(producerId, firstOffset,
  markerOffset, lastStableOffset)`` where ``lastStableOffset`` is the first offset of the earliest still-open
  transaction of *another* producer, else ``markerOffset + 1`` (``ProducerStateManager.lastStableOffset``);
* a marker without an open transaction, or an empty control batch (left by the cleaner), completes nothing.

Replication-origin appends skip epoch, sequence and coordinator-epoch validation. Kafka still throws for a
non-transactional data batch of a producer inside a transaction (``InvalidTxnStateException``), which stops
the broker from loading the log; kdump records that as a problem and goes on.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kdump.errors import FormatError
from kdump.format.control import parse_control_key, parse_end_txn_marker
from kdump.format.types import ControlRecordType
from kdump.index.txn_index import AbortedTxn


@dataclass
class TxnProblem:
    code: str
    message: str
    position: int | None
    offset: int | None


@dataclass
class ProducerState:
    open_txn: dict = field(default_factory=dict)  # producer id -> first offset of its open transaction
    ongoing: dict = field(default_factory=dict)  # first offset -> producer id
    end_offset: int = 0  # Kafka's mapEndOffset: last offset + 1 of the last batch applied

    @classmethod
    def from_snapshot(cls, entries, snapshot_offset: int) -> "ProducerState":
        """Seed from a producer snapshot's entries (``loadProducerEntry``: open transactions only matter here)."""
        state = cls(end_offset=snapshot_offset)
        for e in entries:
            if e.current_txn_first_offset >= 0:
                state.open_txn[e.producer_id] = e.current_txn_first_offset
                state.ongoing[e.current_txn_first_offset] = e.producer_id
        return state

    def last_stable_offset(self, producer_id: int, marker_offset: int) -> int:
        for first in sorted(self.ongoing):
            if self.ongoing[first] != producer_id:
                return first
        return marker_offset + 1

    def apply(self, batch, limit: int = 1 << 20) -> tuple[AbortedTxn | None, TxnProblem | None]:
        """Apply one batch (RecordBatch/LegacyBatch, or a header with the same fields for data batches);
        returns the aborted transaction it completes, if any, and a problem Kafka would have thrown for."""
        if batch.magic < 2:
            return None, None
        aborted = problem = None
        pid = batch.producer_id
        if pid >= 0:
            if batch.is_control:
                aborted, problem = self._control(batch, pid, limit)
            else:
                first = self.open_txn.get(pid)
                if first is not None and not batch.is_transactional:
                    problem = TxnProblem("txn-state-invalid",
                                         f"non-transactional batch of producer {pid} while its transaction from "
                                         f"offset {first} is open (Kafka: InvalidTxnStateException)",
                                         batch.position, batch.base_offset)
                elif first is None and batch.is_transactional:
                    self.open_txn[pid] = batch.base_offset
                    self.ongoing[batch.base_offset] = pid
        self.end_offset = batch.last_offset + 1
        return aborted, problem

    def _control(self, batch, pid: int, limit: int):
        if batch.records_count == 0:
            return None, None  # the cleaner removed the whole transaction
        try:
            cols = batch.columns(limit)
            if cols.count == 0:
                if cols.error is not None:
                    raise cols.error
                return None, None
            ctype, _ = parse_control_key(cols.key(0))
            if ctype not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
                raise FormatError("end-txn-marker-invalid",
                                  f"control record type {ctype.name} where an end transaction marker was expected")
            parse_end_txn_marker(ctype, cols.value(0))
        except FormatError as e:
            return None, TxnProblem("txn-marker-invalid", f"control batch of producer {pid}: {e.message}",
                                    batch.position, batch.base_offset)
        first = self.open_txn.pop(pid, None)
        if first is None:
            return None, None  # a marker without data: no effect on the index
        marker = batch.base_offset
        aborted = None
        if ctype is ControlRecordType.ABORT:
            aborted = AbortedTxn(pid, first, marker, self.last_stable_offset(pid, marker))
        self.ongoing.pop(first, None)
        return aborted, None
