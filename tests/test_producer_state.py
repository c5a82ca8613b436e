"""kdump.read.producer_state: Kafka's producer/transaction state (ProducerStateManager, ProducerAppendInfo with
AppendOrigin.REPLICATION, spec §5.4-§5.6). Expected values follow Kafka's rules by hand; the corpus case is
checked against the markers Kafka's own DumpLogSegments printed for that file."""
from __future__ import annotations

import re
import struct
from types import SimpleNamespace

from kdump.read.snapshot import ProducerEntry
from kdump.read.producer_state import (MarkerWithoutTxn, OpenTxn, ProducerProblem, ProducerStates, TxnAborted,
                                  TxnCommitted, TxnOpened)
from kdump.read.segment import SegmentReader

from corpus import CORPUS

TXN_LOG = CORPUS / "kafka-generated/v2-transactional/00000000000000000000.log"
ABORT, COMMIT = 0, 1
T0 = 1_700_000_000_000


def data(base, last, pid, epoch=0, *, txn=True, seq=0, position=None):
    return SimpleNamespace(magic=2, producer_id=pid, producer_epoch=epoch, base_offset=base, last_offset=last,
                           base_sequence=seq, is_transactional=txn, is_control=False, records_count=last - base + 1,
                           max_timestamp=T0 + last, position=base if position is None else position)


class _Cols:
    def __init__(self, records):
        self.records = records
        self.count = len(records)
        self.error = None

    def key(self, i):
        return self.records[i][0]

    def value(self, i):
        return self.records[i][1]


def marker(offset, pid, epoch, ctype, coordinator_epoch=0, *, records=None):
    """A control batch whose first record is ``key: int16 version 0, int16 type``, ``value: int16 version 0,
    int32 coordinator epoch`` (spec §3.6)."""
    if records is None:
        records = [(struct.pack(">hh", 0, ctype), struct.pack(">hi", 0, coordinator_epoch))]
    return SimpleNamespace(magic=2, producer_id=pid, producer_epoch=epoch, base_offset=offset, last_offset=offset,
                           base_sequence=-1, is_transactional=True, is_control=True, records_count=len(records),
                           max_timestamp=T0 + offset, position=offset, column_chunks=lambda limit, chunk: iter([_Cols(records[:chunk])]))


def events(state, *batches):
    out = []
    for b in batches:
        out.extend(state.apply(b))
    return out


def test_the_corpus_transactions_as_kafka_printed_their_markers():
    """Rules applied to the batches of kafka-generated/v2-transactional; the markers, their types and
    coordinator epochs are those in Kafka's DumpLogSegments output for the file."""
    dumped = (TXN_LOG.parent / (TXN_LOG.name + ".dumplog-data.txt")).read_text()
    kafka_markers = [(int(o), t == "COMMIT", int(c)) for o, t, c in
                     re.findall(r"\| offset: (\d+) .*endTxnMarker: (\w+) coordinatorEpoch: (\d+)", dumped)]
    state = ProducerStates()
    with SegmentReader(TXN_LOG) as reader:
        got = [e for b in reader for e in state.apply(b)]
    assert [(e.marker_offset, e.committed, e.coordinator_epoch) for e in got if hasattr(e, "marker_offset")] == \
        kafka_markers
    assert got == [
        TxnOpened(2001, 0, 0, 0),
        TxnOpened(2002, 3, 5, 527),
        TxnCommitted(2001, 0, 0, 65, 11, 5, 4480),  # 2002's transaction from 5 is still open
        TxnAborted(2002, 3, 5, 86, 11, 87, 5621),  # nothing else open: marker + 1
        TxnOpened(2003, 0, 87, 5699),
        TxnOpened(2001, 0, 1087, 63391),
        TxnAborted(2001, 0, 1087, 1089, 12, 87, 63701),  # 2003's transaction from 87 is open
        TxnCommitted(2003, 0, 87, 1090, 12, 1091, 63779),
        MarkerWithoutTxn(2004, 7, 1091, False, 13, 63857),  # producer 2004 wrote no data here
    ]
    assert state.open_transactions() == []
    assert state.end_offset == 1092 and state.last_stable_offset() == 1092


def test_aborted_transaction_is_the_txnindex_entry():
    state = ProducerStates()
    (ended,) = events(state, data(10, 12, 7), marker(13, 7, 0, ABORT))[1:]
    t = ended.aborted_txn()
    assert (t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset) == (7, 10, 13, 14)


def test_last_stable_offset_is_the_first_open_transaction():
    state = ProducerStates()
    events(state, data(0, 4, 1), data(5, 9, 2), data(10, 10, 3, txn=False))
    assert state.open_transactions() == [OpenTxn(1, 0, 0), OpenTxn(2, 0, 5)]
    assert state.first_unstable_offset() == 0
    assert state.last_stable_offset() == 0
    events(state, marker(11, 1, 0, COMMIT))
    assert state.last_stable_offset() == 5
    assert state.last_stable_offset(high_watermark=3) == 3
    events(state, marker(12, 2, 0, ABORT))
    assert state.last_stable_offset() == 13 and state.last_stable_offset(high_watermark=12) == 12


def test_seeded_from_a_snapshot_with_an_open_transaction():
    # ProducerEntry(pid, epoch, last seq, last offset, offset delta, timestamp, coordinator epoch, txn first offset)
    snap = [ProducerEntry(7, 2, 9, 99, 4, 0, 5, 90), ProducerEntry(8, 0, 3, 95, 3, 0, -1, -1)]
    state = ProducerStates.from_snapshot(snap, 100, track_sequences=True)
    assert state.end_offset == 100
    assert state.open_transactions() == [OpenTxn(7, 2, 90)]
    got = events(state, data(100, 101, 8, seq=5), marker(102, 7, 2, ABORT, 5))
    assert got == [TxnOpened(8, 0, 100, 100), TxnAborted(7, 2, 90, 102, 5, 100, 102)]  # 8's from 100 is open
    # producer 8's last batch from the snapshot (sequences 0-3) is remembered for duplicate detection
    dup = events(state, data(103, 106, 8, seq=0))
    assert [e.code for e in dup] == ["sequence-duplicate"]


def test_non_transactional_write_inside_a_transaction_is_fatal():
    state = ProducerStates()
    got = events(state, data(0, 1, 5), data(2, 2, 5, txn=False, position=77))
    assert isinstance(got[1], ProducerProblem)
    assert (got[1].code, got[1].fatal, got[1].position, got[1].first_offset) == ("txn-state-invalid", True, 77, 2)
    assert state.open_transactions() == [OpenTxn(5, 0, 0)]  # the transaction stays open


def test_markers_that_end_nothing():
    state = ProducerStates()
    assert events(state, marker(0, 9, 0, COMMIT, 3)) == [MarkerWithoutTxn(9, 0, 0, True, 3, 0)]
    # an empty control batch (the cleaner removed the transaction) does nothing, not even end the transaction
    events(state, data(1, 1, 9))
    assert events(state, marker(2, 9, 0, ABORT, records=[])) == []
    assert state.open_transactions() == [OpenTxn(9, 0, 1)]


def test_control_record_that_is_no_end_marker():
    state = ProducerStates()
    leader_change = [(struct.pack(">hh", 0, 2), b"\x00\x00")]
    (problem,) = events(state, marker(4, 9, 0, None, records=leader_change))
    assert (problem.code, problem.fatal) == ("txn-marker-invalid", True)
    assert "LEADER_CHANGE" in problem.message
    short = [(struct.pack(">hh", 0, ABORT), b"\x00")]
    (problem,) = events(state, marker(5, 9, 0, None, records=short))
    assert problem.code == "txn-marker-invalid"


def test_epochs_and_duplicates():
    state = ProducerStates(track_sequences=True)
    got = events(state, data(0, 4, 3, epoch=2, txn=False, seq=0), data(5, 9, 3, epoch=2, txn=False, seq=5),
                 data(10, 14, 3, epoch=2, txn=False, seq=0))
    assert [(e.code, e.first_offset, e.last_offset) for e in got] == [("sequence-duplicate", 10, 14)]
    assert "sequences 0-4" in got[0].message
    got = events(state, data(15, 15, 3, epoch=1, txn=False, seq=10))
    assert [(e.code, e.message) for e in got] == [("producer-epoch-decreasing",
                                                   "producer 3 writes with epoch 1 after epoch 2")]
    # a new epoch starts a new batch history: the same sequences again are no duplicate
    assert events(state, data(16, 20, 3, epoch=3, txn=False, seq=0)) == []
    # only the last 5 batches are kept (ProducerStateEntry.NUM_BATCHES_TO_RETAIN)
    for k in range(1, 6):
        events(state, data(20 + 5 * k - 4, 20 + 5 * k, 3, epoch=3, txn=False, seq=5 * k))
    assert events(state, data(100, 104, 3, epoch=3, txn=False, seq=0)) == []
    assert [e.code for e in events(state, data(105, 109, 3, epoch=3, txn=False, seq=25))] == ["sequence-duplicate"]


def test_sequences_wrap_at_int32():
    state = ProducerStates(track_sequences=True)
    events(state, data(0, 5, 4, txn=False, seq=2**31 - 3))
    (dup,) = events(state, data(6, 11, 4, txn=False, seq=2**31 - 3))
    assert f"sequences {2**31 - 3}-2 " in dup.message


def test_coordinator_epoch_going_back_is_reported():
    state = ProducerStates()
    got = events(state, data(0, 0, 6), marker(1, 6, 0, COMMIT, 9), data(2, 2, 6), marker(3, 6, 0, ABORT, 8))
    assert [type(e).__name__ for e in got] == ["TxnOpened", "TxnCommitted", "TxnOpened", "ProducerProblem",
                                               "TxnAborted"]
    assert got[3].code == "coordinator-epoch-decreasing" and not got[3].fatal


def test_batches_without_producer_and_legacy_batches_only_move_the_end():
    state = ProducerStates()
    assert events(state, data(0, 9, -1, txn=False), SimpleNamespace(magic=1, last_offset=12)) == []
    assert state.end_offset == 13 and state.producers == {}


def test_producer_table_is_bounded():
    state = ProducerStates(max_producers=2)
    events(state, data(0, 0, 1), data(1, 1, 2), data(2, 2, 3))
    assert sorted(state.producers) == [1, 2] and state.untracked == 1
