"""kdump.read.producers / PartitionLog.producers: producer and transaction state replayed over a partition, from a
producer snapshot when one is usable. Reference answers are Kafka's own: the snapshot a broker wrote at the end of a
corpus log (and Kafka's dump of it), the batches and markers Kafka's DumpLogSegments printed for the transactional
and idempotent corpus logs, and Java's int arithmetic (numpy int32) for the sequence helpers."""
from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from corpus import CORPUS
from kdump.format.layout import INT32_MAX, decrement_sequence, increment_sequence
from kdump.read.logdir import Partition
from kdump.read.scan import scan
from kdump.read.partition import PartitionLog
from kdump.read.producer_state import ProducerEntry
from kdump.read.producers import PartitionProducers
from kdump.read.snapshot import encode_snapshot, read_snapshot
from kdump.spark.txn import PartitionTxns as ReadCommittedTxns
from kdump.txn import partition_transactions

IDEMPOTENT_BROKER = CORPUS / "broker-written/java-producer-headers-idempotent"  # log 0..79 and Kafka's 80.snapshot
TRANSACTIONAL = CORPUS / "kafka-generated/v2-transactional"
IDEMPOTENT = CORPUS / "kafka-generated/v2-idempotent"
SNAPSHOT_LINE = re.compile(
    r"producerId: (-?\d+) producerEpoch: (-?\d+) coordinatorEpoch: (-?\d+) currentTxnFirstOffset: (\S+) "
    r"lastTimestamp: (-?\d+) ?(?:firstSequence: (-?\d+) lastSequence: (-?\d+) lastOffset: (-?\d+) "
    r"offsetDelta: (-?\d+) timestamp: (-?\d+))?")
BATCH_LINE = re.compile(r"baseOffset: (\d+) lastOffset: (\d+) count: \d+ baseSequence: (-?\d+) lastSequence: (-?\d+) "
                        r"producerId: (-?\d+) producerEpoch: (-?\d+) .*isTransactional: (\w+) isControl: (\w+) .*"
                        r"CreateTime: (-?\d+)")
MARKER_LINE = re.compile(r"\| offset: (\d+) .*endTxnMarker: (\w+) coordinatorEpoch: (-?\d+)")


def kafka_snapshot_dump(path) -> dict:
    """Kafka's dump of a producer snapshot: producer id -> the fields it printed."""
    out = {}
    for line in path.read_text().splitlines():
        m = SNAPSHOT_LINE.match(line)
        if m:
            pid, epoch, ce, txn, ts, fs, ls, lo, od, _ = m.groups()
            out[int(pid)] = {"epoch": int(epoch), "coordinator_epoch": int(ce),
                             "txn": None if txn == "OptionalLong.empty" else int(txn[len("OptionalLong["):-1]),
                             "timestamp": int(ts), "first_sequence": int(fs), "last_sequence": int(ls),
                             "last_offset": int(lo), "offset_delta": int(od)}
    return out


def as_dumped(e: ProducerEntry) -> dict:
    return {"epoch": e.epoch, "coordinator_epoch": e.coordinator_epoch, "txn": e.txn_first_offset,
            "timestamp": e.timestamp, "first_sequence": e.first_sequence, "last_sequence": e.last_sequence,
            "last_offset": e.last_offset, "offset_delta": e.offset_delta}


def kafka_batches(log):
    """(base, last, base sequence, last sequence, producer id, epoch, transactional, control, max timestamp) of each
    batch, and offset -> (marker type, coordinator epoch), as Kafka's DumpLogSegments printed them."""
    batches = [(int(b), int(la), int(bs), int(ls), int(p), int(e), t == "true", c == "true", int(ts))
               for b, la, bs, ls, p, e, t, c, ts in BATCH_LINE.findall((log.parent / f"{log.name}.dumplog.txt").read_text())]
    data = (log.parent / f"{log.name}.dumplog-data.txt").read_text(errors="replace")
    markers = {int(o): (kind, int(ce)) for o, kind, ce in MARKER_LINE.findall(data)}
    return batches, markers


# --- the state Kafka wrote ------------------------------------------------------------------------------------
def test_replaying_a_brokers_log_gives_the_snapshot_the_broker_wrote():
    """The broker wrote 00000000000000000080.snapshot at the end of this log (offsets 0-79): replaying the log with
    sequences gives its 27 entries field for field, as Kafka's dump prints them, and the same bytes."""
    log = PartitionLog(IDEMPOTENT_BROKER)
    replayed = log.producers(80, from_snapshot=False)  # headers only: no sequences
    assert replayed.snapshot is None and replayed.end_offset == 80
    assert all(e.last_sequence == -1 for e in replayed.state.producers.values())
    whole = PartitionProducers.starting(log.files, 80, from_snapshot=False, track_sequences=True)
    whole.scan([(s.base_offset, s.log) for s in log.segments], upto_offset=80)
    kafka = kafka_snapshot_dump(IDEMPOTENT_BROKER / "00000000000000000080.snapshot.dumplog.txt")
    assert len(kafka) == 27
    assert {pid: as_dumped(e) for pid, e in whole.state.producers.items()} == kafka
    snap = read_snapshot(IDEMPOTENT_BROKER / "00000000000000000080.snapshot")
    in_file_order = [whole.state.producers[e.producer_id] for e in snap.entries]
    assert encode_snapshot(in_file_order) == (IDEMPOTENT_BROKER / "00000000000000000080.snapshot").read_bytes()
    # without sequences the rest of the state is the same
    for pid, e in replayed.state.producers.items():
        assert (e.epoch, e.last_offset, e.offset_delta, e.timestamp, e.current_txn_first_offset) == \
            (kafka[pid]["epoch"], kafka[pid]["last_offset"], kafka[pid]["offset_delta"], kafka[pid]["timestamp"], -1)


def test_a_usable_snapshot_at_the_offset_is_the_state():
    """Kafka's loadProducerState: the snapshot at the offset asked for is the state, nothing is replayed."""
    state = PartitionLog(IDEMPOTENT_BROKER).producers(80)
    assert state.snapshot is not None and state.start_offset == 80 and state.end_offset == 80
    kafka = kafka_snapshot_dump(IDEMPOTENT_BROKER / "00000000000000000080.snapshot.dumplog.txt")
    assert {pid: as_dumped(e) for pid, e in state.state.producers.items()} == kafka
    below = PartitionLog(IDEMPOTENT_BROKER).producers(79)  # the snapshot lies above: a replay from the start
    assert below.snapshot is None and below.end_offset == 79


def test_the_three_producer_snapshot_seeds_what_kafka_printed():
    d = CORPUS / "broker-written/producer-snapshot-3-producers"
    state = PartitionProducers.starting(Partition(d), 94751)
    assert state.start_offset == 94751 and state.state.open_transactions() == []
    assert {pid: as_dumped(e) for pid, e in state.state.producers.items()} == \
        kafka_snapshot_dump(d / "00000000000000094751.snapshot.dumplog.txt")


# --- transactions, against Kafka's dump of the transactional corpus ------------------------------------------
def expected_by_kafkas_rules(upto: int):
    """Producer table and transactions of kafka-generated/v2-transactional below ``upto``, worked out from Kafka's
    dump: a transactional data batch opens its producer's transaction, its next marker ends it; the producer
    keeps the epoch, coordinator epoch and timestamp of its last batch."""
    batches, markers = kafka_batches(TRANSACTIONAL / "00000000000000000000.log")
    producers: dict = {}
    open_txns: dict = {}
    ended = []
    end = 0
    for base, last, _, _, pid, epoch, txn, control, ts in batches:
        if last >= upto:
            break
        end = last + 1
        if pid < 0:
            continue
        p = producers.setdefault(pid, {"epoch": epoch, "coordinator_epoch": -1, "last_offset": -1, "timestamp": -1})
        p["epoch"], p["timestamp"] = epoch, ts
        if control:
            kind, coordinator_epoch = markers[base]
            p["coordinator_epoch"] = coordinator_epoch
            if pid in open_txns:
                ended.append((pid, open_txns.pop(pid), base, kind))
        else:
            p["last_offset"] = last
            if txn and pid not in open_txns:
                open_txns[pid] = base
    return producers, open_txns, ended, end


@pytest.mark.parametrize("upto", [60, 66, 87, 1089, 1092, None])
def test_transactional_corpus_replay_follows_kafkas_dump(upto):
    got = PartitionLog(TRANSACTIONAL).producers(upto)
    producers, open_txns, ended, end = expected_by_kafkas_rules(10**9 if upto is None else upto)
    assert got.end_offset == end
    assert {pid: {"epoch": e.epoch, "coordinator_epoch": e.coordinator_epoch, "last_offset": e.last_offset,
                  "timestamp": e.timestamp} for pid, e in got.state.producers.items()} == producers
    assert {o.producer_id: o.first_offset for o in got.state.open_transactions()} == open_txns
    aborted = [(t.producer_id, t.first_offset, t.marker_offset) for t in got.all_aborted()]
    assert aborted == [(pid, first, marker) for pid, first, marker, kind in ended if kind == "ABORT"]
    assert got.committed_count == sum(kind == "COMMIT" for *_, kind in ended)
    assert got.last_stable_offset() == (min(open_txns.values()) if open_txns else end)


def test_abort_entries_carry_kafkas_last_stable_offset():
    """ProducerStateManager.lastStableOffset(completedTxn): the first offset of the earliest transaction of another
    producer still open at the marker, else the marker + 1. At 86 (2002 aborts) nothing else is open; at 1089
    (2001 aborts) 2003's transaction from 87 is."""
    got = PartitionLog(TRANSACTIONAL).producers()
    assert [(t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset) for t in
            (a.aborted_txn() for a in got.all_aborted())] == [(2002, 5, 86, 87), (2001, 1087, 1089, 87)]


def test_txn_report_and_read_committed_are_views_of_the_one_replay():
    state = PartitionLog(TRANSACTIONAL).producers()
    groups = scan([str(TRANSACTIONAL)]).segment_groups()
    report = partition_transactions(groups[0])
    committed = ReadCommittedTxns()
    committed.scan([(0, str(TRANSACTIONAL / "00000000000000000000.log"))])
    aborted = sorted((t.producer_id, t.first_offset, t.marker_offset) for t in state.all_aborted())
    assert sorted((t.producer_id, t.first_offset, t.marker_offset) for t in report.transactions
                  if t.outcome == "ABORT") == aborted
    assert sorted(committed.aborted) == aborted
    assert report.last_stable_offset == state.last_stable_offset() == 1092
    assert committed.filter().last_stable_offset is None  # nothing open: no bound below the high watermark


# --- snapshots: Kafka's choice, and falling back -------------------------------------------------------------
def _partition_with_snapshots(tmp_path, **snapshots):
    d = tmp_path / "t-0"
    d.mkdir()
    shutil.copy(TRANSACTIONAL / "00000000000000000000.log", d)
    for name, data in snapshots.items():
        (d / f"{int(name[1:]):020d}.snapshot").write_bytes(data)
    return d


# At offset 66, by Kafka's dump: 2001 committed at 65 (coordinator epoch 11), 2002 (epoch 3) is in a transaction.
# The snapshot below says 2002's transaction began at 6, not 5: a replay that starts from it shows 6.
AT_66 = encode_snapshot([ProducerEntry(2001, 0, 11, 64, 6, 1700000000010, 11, -1),
                         ProducerEntry(2002, 3, 49, 54, 49, 1700000000345, -1, 6)])


def test_the_newest_usable_snapshot_at_or_below_is_replayed_from(tmp_path):
    d = _partition_with_snapshots(tmp_path, s66=AT_66)
    got = PartitionLog(d).producers(1092)
    assert got.start_offset == 66 and got.snapshot is not None
    assert [(t.producer_id, t.first_offset, t.marker_offset) for t in got.all_aborted()] == \
        [(2002, 6, 86), (2001, 1087, 1089)]
    full = PartitionLog(d).producers(1092, from_snapshot=False)
    assert full.snapshot is None and full.all_aborted()[0].first_offset == 5
    # the state at 60 lies below the snapshot: replayed from the log start
    assert PartitionLog(d).producers(60).snapshot is None


def test_a_damaged_snapshot_is_passed_over_for_an_older_one_or_a_full_replay(tmp_path):
    damaged = bytearray(AT_66)
    damaged[-1] ^= 0xFF  # the CRC no longer matches
    d = _partition_with_snapshots(tmp_path, s66=AT_66, s1087=bytes(damaged))
    notes: list = []
    got = PartitionLog(d).producers(1092, snapshot_notes=notes)
    assert got.start_offset == 66
    assert len(notes) == 1 and "00000000000000001087.snapshot" in notes[0] and "CRC" in notes[0]
    (d / f"{66:020d}.snapshot").write_bytes(bytes(damaged))
    notes = []
    got = PartitionLog(d).producers(1092, snapshot_notes=notes)
    assert got.snapshot is None and got.start_offset == 0 and len(notes) == 2
    assert got.all_aborted()[0].first_offset == 5


# --- the incremental scan --------------------------------------------------------------------------------------
def test_a_scan_goes_on_where_it_stopped_and_starts_again_when_its_segment_is_gone(tmp_path):
    log = TRANSACTIONAL / "00000000000000000000.log"
    data = log.read_bytes()
    d = tmp_path / "t-0"
    d.mkdir()
    live = d / "00000000000000000000.log"
    live.write_bytes(data[:5000])  # ends inside the batch at 4558 (offsets 66-85)
    scan = PartitionProducers()
    scan.scan([(0, str(live))])
    assert (scan.end_offset, scan.position) == (66, 4558)
    live.write_bytes(data)
    scan.scan([(0, str(live))])
    once = PartitionLog(TRANSACTIONAL).producers(from_snapshot=False)
    assert scan.end_offset == once.end_offset == 1092
    assert [vars(a) for a in scan.all_aborted()] == [vars(a) for a in once.all_aborted()]
    # retention deleted the segment the scan was in: it starts again from what is there
    (d / "00000000000000002000.log").write_bytes(b"")
    live.unlink()
    scan.scan([(2000, str(d / "00000000000000002000.log"))])
    assert scan.all_aborted() == [] and scan.state.producers == {}


# --- sequence arithmetic: Kafka's, on the corpus and against Java ints ---------------------------------------
def test_sequences_of_the_corpus_as_kafka_printed_them():
    """DumpLogSegments prints lastSequence = incrementSequence(baseSequence, lastOffsetDelta); the idempotent corpus
    holds a batch whose sequences wrap past INT32_MAX (2147483645 .. 2)."""
    batches, _ = kafka_batches(IDEMPOTENT / "00000000000000000000.log")
    wrapped = 0
    for base, last, base_seq, last_seq, *_ in batches:
        if base_seq < 0:
            continue
        assert increment_sequence(base_seq, last - base) == last_seq
        assert decrement_sequence(last_seq, last - base) == base_seq
        wrapped += last_seq < base_seq
    assert wrapped == 1


def _java(op):
    with np.errstate(over="ignore"):
        return int(op())


def java_increment(sequence: int, increment: int) -> int:
    s, i, m = np.int32(sequence), np.int32(increment), np.int32(INT32_MAX)
    return _java(lambda: i - (m - s) - np.int32(1) if s > m - i else s + i)


def java_decrement(sequence: int, decrement: int) -> int:
    s, d, m = np.int32(sequence), np.int32(decrement), np.int32(INT32_MAX)
    return _java(lambda: m - (d - s) + np.int32(1) if s < d else s - d)


def test_sequence_helpers_are_javas_int_arithmetic():
    rng = np.random.default_rng(19)
    edges = [0, 1, 2, 5, INT32_MAX - 1, INT32_MAX, -1, -2, -(2**31), -(2**31) + 1, 2**30]
    pairs = [(a, b) for a in edges for b in edges]
    pairs += [tuple(int(x) for x in rng.integers(-(2**31), 2**31, 2)) for _ in range(2000)]
    pairs += [(int(rng.integers(0, 2**31)), int(rng.integers(0, 70000))) for _ in range(2000)]
    for a, b in pairs:
        assert increment_sequence(a, b) == java_increment(a, b), (a, b)
        assert decrement_sequence(a, b) == java_decrement(a, b), (a, b)
