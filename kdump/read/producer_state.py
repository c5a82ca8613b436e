"""Producer and transaction state of a partition, batch by batch: Kafka's ``ProducerStateManager`` and
``ProducerAppendInfo`` as a log is loaded or recovered (``AppendOrigin.REPLICATION``, spec §5.4-§5.6).

Feed it the magic-2 batches of a partition in offset order (:meth:`ProducerStates.apply`); it keeps one entry per
producer id and returns what each batch did, as events:

* :class:`TxnOpened`: a transactional data batch of a producer with no open transaction opens one at the batch's
  base offset (``ongoingTxns[firstOffset]``);
* :class:`TxnCommitted` / :class:`TxnAborted`: a control batch's first record is an end-transaction marker
  (COMMIT or ABORT, with the coordinator epoch); it completes the producer's open transaction. Its
  ``last_stable_offset`` is what Kafka writes into the ``.txnindex`` for an abort
  (``ProducerStateManager.lastStableOffset(completedTxn)``): the first offset of the earliest transaction still
  open of *another* producer, else the marker offset + 1;
* :class:`MarkerWithoutTxn`: a marker of a producer with no open transaction (it completes nothing; Kafka writes
  such markers when a transaction had no data on this partition);
* :class:`ProducerProblem`: what is wrong with a batch, by code: ``txn-state-invalid`` (a non-transactional data
  batch inside the producer's transaction: Kafka throws ``InvalidTxnStateException`` and the log does not load),
  ``txn-marker-invalid`` (a control batch of a producer whose first record is no end-transaction marker),
  ``producer-epoch-decreasing`` and ``coordinator-epoch-decreasing`` (Kafka only warns on replication),
  ``sequence-duplicate`` (the batch's epoch and first and last sequence equal one of the producer's last 5
  batches, ``ProducerStateEntry.findDuplicateBatch``; only with ``track_sequences``).
  ``fatal`` is True where Kafka's log loading throws.

A control batch without records (the cleaner removed the whole transaction) does nothing. Batches below magic 2
and batches without a producer id only advance :attr:`ProducerStates.end_offset` (Kafka's ``mapEndOffset``).
:meth:`ProducerStates.from_snapshot` seeds the state from a producer ``.snapshot`` (``loadFromSnapshot``), and
:meth:`ProducerStates.last_stable_offset` gives the partition's LSO: the first offset of the earliest open
transaction, else the high watermark (the end of what was applied, when none is given).

Memory: at most ``max_producers`` producer ids are tracked (later ones are counted in ``untracked``), and at most
5 batches per producer are remembered.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from kdump.errors import FormatError
from kdump.format import index_layout as IL
from kdump.format import layout as L
from kdump.format.control import parse_control_key, parse_end_txn_marker
from kdump.format.types import ControlRecordType

MAX_PRODUCERS = 1_000_000
BATCHES_RETAINED = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN
NO_EVENTS: tuple = ()


# --- events ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TxnOpened:
    producer_id: int
    producer_epoch: int
    first_offset: int
    position: int | None = None  # byte position of the batch that opened it, when known


@dataclass(frozen=True)
class TxnEnded:
    """A transaction completed by a marker at ``marker_offset`` (``last_offset`` in the ``.txnindex``)."""

    producer_id: int
    producer_epoch: int
    first_offset: int
    marker_offset: int
    coordinator_epoch: int
    last_stable_offset: int
    position: int | None = None  # of the marker batch
    committed: bool = False

    @property
    def last_offset(self) -> int:
        return self.marker_offset

    def aborted_txn(self):
        """The ``.txnindex`` entry Kafka appends for an aborted transaction."""
        from kdump.read.txn_index import AbortedTxn
        return AbortedTxn(self.producer_id, self.first_offset, self.marker_offset, self.last_stable_offset)


@dataclass(frozen=True)
class TxnCommitted(TxnEnded):
    committed: bool = True


@dataclass(frozen=True)
class TxnAborted(TxnEnded):
    committed: bool = False


@dataclass(frozen=True)
class MarkerWithoutTxn:
    producer_id: int
    producer_epoch: int
    marker_offset: int
    committed: bool
    coordinator_epoch: int
    position: int | None = None


@dataclass(frozen=True)
class ProducerProblem:
    code: str
    message: str
    position: int | None
    first_offset: int | None
    last_offset: int | None = None
    fatal: bool = False  # Kafka's log loading throws here

    @property
    def offset(self) -> int | None:
        return self.first_offset


@dataclass(frozen=True)
class OpenTxn:
    producer_id: int
    producer_epoch: int
    first_offset: int


# --- state ----------------------------------------------------------------------------------------------
@dataclass
class ProducerEntry:
    """What is known of one producer id: Kafka's ``ProducerStateEntry`` with its last batch's metadata, the fields
    of a producer ``.snapshot`` entry in their order there (:mod:`kdump.read.snapshot` reads and writes them), and
    the state machine's own record of the producer.

    ``last_sequence``/``last_offset``/``offset_delta`` describe its last data batch of ``epoch`` (-1/-1/0: none,
    as after an epoch bump); ``timestamp`` is Kafka's ``lastTimestamp`` (of its last batch, markers included);
    ``current_txn_first_offset`` is the first offset of its open transaction (< 0: none). ``position`` is the
    entry's byte position in the snapshot it was read from. ``recent`` holds (first, last) sequences of its last
    :data:`BATCHES_RETAINED` batches (``batchMetadata``), kept when sequences are tracked."""

    producer_id: int
    epoch: int
    last_sequence: int = L.NO_SEQUENCE
    last_offset: int = -1  # < 0: no batch metadata
    offset_delta: int = 0
    timestamp: int = L.NO_TIMESTAMP
    coordinator_epoch: int = -1
    current_txn_first_offset: int = -1  # < 0: no ongoing transaction
    position: int = 0
    recent: list = field(default_factory=list, compare=False, repr=False)

    @property
    def has_batch_metadata(self) -> bool:
        return self.last_offset >= 0

    @property
    def first_sequence(self) -> int:
        return L.decrement_sequence(self.last_sequence, self.offset_delta)

    @property
    def txn_first_offset(self) -> int | None:
        """The first offset of the producer's open transaction, None when it has none."""
        return self.current_txn_first_offset if self.current_txn_first_offset >= 0 else None

    def encode(self) -> bytes:
        return IL.SNAPSHOT_ENTRY.pack(self.producer_id, self.epoch, self.last_sequence, self.last_offset,
                                      self.offset_delta, self.timestamp, self.coordinator_epoch,
                                      self.current_txn_first_offset)


class ProducerStates:
    """The producer table of one partition. See the module docstring for the rules and events."""

    def __init__(self, *, track_sequences: bool = False, max_producers: int = MAX_PRODUCERS, end_offset: int = 0):
        self.producers: dict[int, ProducerEntry] = {}
        self.ongoing: dict[int, int] = {}  # first offset -> producer id, in offset order (ongoingTxns)
        self.end_offset = end_offset  # last offset + 1 of the last batch applied (mapEndOffset)
        self.track_sequences = track_sequences
        self.max_producers = max_producers
        self.untracked = 0  # batches of producer ids beyond max_producers

    @classmethod
    def from_snapshot(cls, entries, snapshot_offset: int, **kwargs) -> ProducerStates:
        """Seed from a producer snapshot's entries (:class:`ProducerEntry`, ``loadFromSnapshot``) at its offset."""
        state = cls(end_offset=snapshot_offset, **kwargs)
        for e in sorted(entries, key=lambda e: e.current_txn_first_offset):
            entry = state.producers[e.producer_id] = replace(e, position=0, recent=[])
            if e.last_offset >= 0 and e.last_sequence >= 0:
                entry.recent.append((e.first_sequence, e.last_sequence))
            if e.current_txn_first_offset >= 0:
                state.ongoing[e.current_txn_first_offset] = e.producer_id
        return state

    # --- queries -----------------------------------------------------------------------------------------
    def open_transactions(self) -> list[OpenTxn]:
        """Transactions begun and not yet ended, in offset order."""
        return [OpenTxn(pid, self.producers[pid].epoch, first) for first, pid in sorted(self.ongoing.items())]

    def first_unstable_offset(self) -> int | None:
        return min(self.ongoing) if self.ongoing else None

    def last_stable_offset(self, high_watermark: int | None = None) -> int:
        """The partition's LSO: the first offset of the earliest open transaction, else the high watermark
        (``end_offset`` when not given)."""
        hw = self.end_offset if high_watermark is None else high_watermark
        first = self.first_unstable_offset()
        return hw if first is None else min(first, hw)

    def _completed_lso(self, producer_id: int, marker_offset: int) -> int:
        for first, pid in self.ongoing.items():  # offset order: transactions open in the order of the log
            if pid != producer_id:
                return first
        return marker_offset + 1

    # --- applying batches ----------------------------------------------------------------------------------
    def apply(self, batch, limit: int = 1 << 20) -> tuple:
        """Apply one batch: a RecordBatch/LegacyBatch, or a header with the same fields (``magic``,
        ``producer_id``, ``producer_epoch``, ``base_offset``, ``last_offset``, ``is_transactional``,
        ``is_control``, ``position``; ``base_sequence`` with ``track_sequences``). A control batch's marker is read
        from its first record (``column_chunks(limit, 1)``). Returns the events, in order (usually none)."""
        if batch.magic < 2:
            self.end_offset = batch.last_offset + 1
            return NO_EVENTS
        pid = batch.producer_id
        if pid < 0:
            self.end_offset = batch.last_offset + 1
            return NO_EVENTS
        entry = self.producers.get(pid)
        if entry is None:
            if len(self.producers) >= self.max_producers:
                self.untracked += 1
                self.end_offset = batch.last_offset + 1
                return NO_EVENTS
            entry = self.producers[pid] = ProducerEntry(pid, batch.producer_epoch)
        if batch.is_control:
            events = self._control(batch, entry, limit)
        else:
            events = self._data(batch, entry)
        self.end_offset = batch.last_offset + 1
        return events

    def _epoch(self, batch, entry: ProducerEntry):
        """``checkProducerEpoch``/``maybeUpdateProducerEpoch``: a lower epoch is reported and not adopted."""
        epoch = batch.producer_epoch
        if epoch < entry.epoch:
            return ProducerProblem("producer-epoch-decreasing",
                                   f"producer {entry.producer_id} writes with epoch {epoch} after epoch {entry.epoch}",
                                   batch.position, batch.base_offset, batch.last_offset)
        if epoch > entry.epoch:  # a new epoch forgets the batches of the old one (batchMetadata.clear())
            entry.epoch = epoch
            entry.recent = []
            entry.last_sequence, entry.last_offset, entry.offset_delta = L.NO_SEQUENCE, -1, 0
        return None

    def _data(self, batch, entry: ProducerEntry) -> tuple:
        events = []
        problem = self._epoch(batch, entry)
        delta = batch.last_offset - batch.base_offset
        sequence = L.NO_SEQUENCE  # not known without track_sequences (a header-only replay): none rather than stale
        if problem is not None:
            events.append(problem)
        elif self.track_sequences and batch.base_sequence >= 0:
            seq = batch.base_sequence
            sequence = L.increment_sequence(seq, delta)
            recent = entry.recent
            if (seq, sequence) in recent:
                events.append(ProducerProblem(
                    "sequence-duplicate", f"producer {entry.producer_id} epoch {entry.epoch}: sequences "
                    f"{seq}-{sequence} were already written by one of its previous {BATCHES_RETAINED} batches "
                    "(a duplicate write)", batch.position, batch.base_offset, batch.last_offset))
            recent.append((seq, sequence))
            if len(recent) > BATCHES_RETAINED:
                del recent[0]
        entry.last_sequence, entry.last_offset, entry.offset_delta = sequence, batch.last_offset, delta
        entry.timestamp = batch.max_timestamp
        first = entry.txn_first_offset
        if batch.is_transactional:
            if first is None:
                entry.current_txn_first_offset = batch.base_offset
                self.ongoing[batch.base_offset] = entry.producer_id
                events.append(TxnOpened(entry.producer_id, batch.producer_epoch, batch.base_offset, batch.position))
        elif first is not None:
            events.append(ProducerProblem(
                "txn-state-invalid", f"non-transactional batch of producer {entry.producer_id} while its transaction "
                f"from offset {first} is open (Kafka: InvalidTxnStateException)", batch.position, batch.base_offset,
                batch.last_offset, fatal=True))
        return tuple(events)

    def _control(self, batch, entry: ProducerEntry, limit: int) -> tuple:
        if batch.records_count == 0:
            return NO_EVENTS  # the cleaner removed the whole transaction
        pid = entry.producer_id
        events = []
        problem = self._epoch(batch, entry)
        if problem is not None:
            events.append(problem)
        try:
            marker = read_marker(batch, limit)
        except FormatError as e:
            events.append(ProducerProblem("txn-marker-invalid", f"control batch of producer {pid}: {e.message}",
                                          batch.position, batch.base_offset, batch.last_offset, fatal=True))
            return tuple(events)
        if marker is None:
            return tuple(events)
        if marker.coordinator_epoch < entry.coordinator_epoch:
            events.append(ProducerProblem(
                "coordinator-epoch-decreasing", f"marker of producer {pid} has coordinator epoch "
                f"{marker.coordinator_epoch}, below {entry.coordinator_epoch} of its previous marker",
                batch.position, batch.base_offset, batch.last_offset))
        entry.coordinator_epoch = marker.coordinator_epoch
        entry.timestamp = batch.max_timestamp
        committed = marker.type is ControlRecordType.COMMIT
        offset = batch.base_offset
        first = entry.txn_first_offset
        if first is None:
            events.append(MarkerWithoutTxn(pid, batch.producer_epoch, offset, committed, marker.coordinator_epoch,
                                           batch.position))
            return tuple(events)
        ended = TxnCommitted if committed else TxnAborted
        events.append(ended(pid, batch.producer_epoch, first, offset, marker.coordinator_epoch,
                            self._completed_lso(pid, offset), batch.position))
        entry.current_txn_first_offset = -1
        self.ongoing.pop(first, None)
        return tuple(events)


def read_marker(batch, limit: int = 1 << 20):
    """The end-transaction marker in a control batch's first record (``EndTransactionMarker``), None when the
    batch holds no record; FormatError when the first record is not a COMMIT or ABORT marker. Only the first
    record is decoded, however many the batch declares."""
    cols = next(batch.column_chunks(limit, 1))
    if cols.count == 0:
        if cols.error is not None:
            raise cols.error
        return None
    ctype, _ = parse_control_key(cols.key(0))
    if ctype not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise FormatError("end-txn-marker-invalid",
                          f"control record type {ctype.name} where an end transaction marker was expected")
    return parse_end_txn_marker(ctype, cols.value(0))
