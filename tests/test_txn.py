"""kdump txn: transactions per partition and producer, hanging ones, the LSO, and the cross-checks with .txnindex
and producer .snapshot files. Expected values follow Kafka's rules by hand (comments say which)."""
from __future__ import annotations

import json

from support.cli import run_cli
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.read.scan import scan
from kdump.read.snapshot import ProducerEntry, encode_snapshot
from kdump.read.txn_index import AbortedTxn
from kdump.txn import partition_transactions
from kdump.write.segment import end_txn_marker_batch, write_segment

from corpus import CORPUS

T0 = 1_700_000_000_000
MINUTE = 60_000


def data(base, n, pid=-1, *, epoch=0, seq=0, txn=False, ts=T0):
    b = RecordBatchBuilder(base, producer_id=pid, producer_epoch=epoch if pid >= 0 else -1,
                           base_sequence=seq if pid >= 0 else -1, is_transactional=txn)
    for o in range(base, base + n):
        b.append(o, ts, b"k%d" % o, b"v")
    return b.build()


def marker(offset, pid, commit, *, epoch=0, ts=T0):
    return end_txn_marker_batch(offset, pid, epoch, commit, 5, ts)


def _two_segments(tmp_path):
    """orders-0, segment 0: producer 1 writes offsets 0-1 in a transaction, producer 2 offset 2 in one, producer 1
    commits at 3. Segment 4: producer 3 writes 4-5 and aborts at 6; a plain batch at 7, 2 minutes after the rest.
    Producer 2's transaction is still open at the end, begun in segment 0: open across a segment roll."""
    part = tmp_path / "orders-0"
    part.mkdir()
    write_segment(part / "00000000000000000000.log",
                  [data(0, 2, 1, txn=True), data(2, 1, 2, txn=True), marker(3, 1, True)])
    write_segment(part / "00000000000000000004.log",
                  [data(4, 2, 3, txn=True, ts=T0 + MINUTE), marker(6, 3, False, ts=T0 + MINUTE),
                   data(7, 1, ts=T0 + 2 * MINUTE)])
    return part


def _result(path, **kw):
    found = scan([str(path)])
    groups, refused = found.segment_groups(), found.refused
    assert not refused
    return partition_transactions(groups[0], **kw)


def test_transactions_outcomes_lso_and_a_hanging_one_across_a_segment_roll(tmp_path):
    r = _result(_two_segments(tmp_path))
    got = [(t.producer_id, t.first_offset, t.last_offset, t.outcome, t.records) for t in r.transactions]
    assert got == [(1, 0, 3, "COMMIT", 2), (2, 2, 2, "OPEN", 1), (3, 4, 6, "ABORT", 2)]
    # the LSO: the first offset of the earliest open transaction (producer 2's, at 2); the log ends at 8
    assert (r.last_stable_offset, r.log_end_offset) == (2, 8)
    hanging = r.hanging
    assert [t.producer_id for t in hanging] == [2]
    assert "segment roll" in hanging[0].hanging[0]  # 2 minutes old: below the 15-minute timeout
    assert hanging[0].age_ms == 2 * MINUTE  # the newest timestamp (offset 7) minus its first timestamp


def test_a_young_open_transaction_in_the_active_segment_is_not_hanging_until_the_timeout(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    write_segment(part / "00000000000000000000.log", [data(0, 1, 9, txn=True), data(1, 1, ts=T0 + 5 * MINUTE)])
    r = _result(part)
    assert [(t.outcome, t.age_ms, t.hanging) for t in r.transactions] == [("OPEN", 5 * MINUTE, [])]
    assert r.last_stable_offset == 0
    r = _result(part, timeout_ms=4 * MINUTE)  # older than the timeout
    assert len(r.hanging) == 1 and "longer than the timeout" in r.hanging[0].hanging[0]


def test_txnindex_cross_check(tmp_path):
    part = _two_segments(tmp_path)
    (part / "00000000000000000004.index").write_bytes(b"")
    r = _result(part)
    # with index files beside it, a missing .txnindex where the segment holds an abort is a disagreement
    (said,) = r.disagreements
    assert said.path.endswith("00000000000000000004.txnindex") and said.message.startswith("missing")
    # Kafka's entry: producer 3, first 4, last (the marker) 6, and as last stable offset the first offset of the
    # earliest transaction of another producer still open at the marker: producer 2's, at 2
    (part / "00000000000000000004.txnindex").write_bytes(AbortedTxn(3, 4, 6, 2).encode())
    assert _result(part).disagreements == []
    (part / "00000000000000000004.txnindex").write_bytes(AbortedTxn(3, 4, 6, 7).encode())
    assert len(_result(part).disagreements) == 2  # the log's entry is missing, the file's matches nothing


def test_snapshot_cross_check_and_seeding(tmp_path):
    part = _two_segments(tmp_path)
    # after offsets 0-3: producer 2 has a transaction open from 2, producer 1 none (committed at 3)
    good = [ProducerEntry(1, 0, 1, 1, 1, T0, 5, -1), ProducerEntry(2, 0, 0, 2, 0, T0, -1, 2)]
    (part / "00000000000000000004.snapshot").write_bytes(encode_snapshot(good))
    assert _result(part).disagreements == []
    bad = [ProducerEntry(1, 0, 1, 1, 1, T0, 5, 0), ProducerEntry(2, 0, 0, 2, 0, T0, -1, -1)]
    (part / "00000000000000000004.snapshot").write_bytes(encode_snapshot(bad))
    said = _result(part).disagreements
    assert len(said) == 2 and all(d.path.endswith("00000000000000000004.snapshot") for d in said)
    # a snapshot at the first segment's offset seeds the state (Kafka's loadProducerState): a transaction the log
    # begins before its start is known, and open across a roll
    (part / "00000000000000000004.snapshot").unlink()
    (part / "00000000000000000000.log").unlink()
    (part / "00000000000000000004.snapshot").write_bytes(encode_snapshot(good))
    r = _result(part)
    assert [(t.producer_id, t.first_offset, t.outcome) for t in r.transactions] == [(2, 2, "OPEN"), (3, 4, "ABORT")]
    assert r.last_stable_offset == 2 and len(r.hanging) == 1


def test_the_corpus_transactions_as_kafka_printed_them():
    """kafka-generated/v2-transactional, from Kafka's DumpLogSegments output: producer 2001 writes 0-4 and 58-64,
    COMMIT at 65; 2002 (epoch 3) 5-54 and 66-85, ABORT at 86; 2003 87-1086, COMMIT at 1090; 2001 again 1087-1088,
    ABORT at 1089; the ABORT at 1091 ends no transaction. Nothing is open: the LSO is the log end, 1092."""
    r = _result(CORPUS / "kafka-generated/v2-transactional")
    got = sorted((t.producer_id, t.producer_epoch, t.first_offset, t.last_offset, t.outcome) for t in r.transactions)
    assert got == [(2001, 0, 0, 65, "COMMIT"), (2001, 0, 1087, 1089, "ABORT"), (2002, 3, 5, 86, "ABORT"),
                   (2003, 0, 87, 1090, "COMMIT")]
    assert (r.last_stable_offset, r.hanging) == (1092, [])


def run(*args):
    return run_cli("txn", *args)


def test_cli_exit_1_exactly_when_a_transaction_hangs(tmp_path):
    part = _two_segments(tmp_path)
    r = run(str(part))
    assert r.exit_code == 1
    assert "last stable offset 2" in r.output and "HANGING" in r.output
    doc = json.loads(run("--format", "json", str(part)).output)
    assert doc["hanging"] == 1 and doc["partitions"][0]["lastStableOffset"] == 2
    assert (doc["partitions"][0]["topic"], doc["partitions"][0]["partition"]) == ("orders", 0)
    assert doc["partitions"][0]["path"] == str(part) and doc["partitions"][0]["label"] == "FAIL"
    assert [t["outcome"] for t in doc["partitions"][0]["transactions"]] == ["COMMIT", "OPEN", "ABORT"]
    only_open = json.loads(run("--format", "json", "--open-only", str(part)).output)
    assert [t["producerId"] for t in only_open["partitions"][0]["transactions"]] == [2]
    clean = run(str(CORPUS / "kafka-generated/v2-transactional"))
    assert clean.exit_code == 0 and "HANGING" not in clean.output
    assert run(str(tmp_path / "missing")).exit_code == 2
    assert run("--timeout", "soon", str(part)).exit_code == 2
    assert "Examples" in run("--help").output


def test_open_only_lists_only_partitions_with_an_open_transaction(tmp_path):
    """--open-only answers "what holds the LSO back?": orders-0 has producer 2's transaction open (see
    _two_segments); a partition whose one transaction committed is left out, in text and JSON alike."""
    part = _two_segments(tmp_path)
    done = tmp_path / "done-0"
    done.mkdir()
    write_segment(done / "00000000000000000000.log", [data(0, 2, 7, txn=True), marker(2, 7, True)])
    text = run("--open-only", str(part), str(done))
    assert "orders-0" in text.output and "done-0" not in text.output
    doc = json.loads(run("--format", "json", "--open-only", str(part), str(done)).output)
    assert [(p["topic"], p["partition"]) for p in doc["partitions"]] == [("orders", 0)]
    # without --open-only both are listed
    assert "done-0" in run(str(part), str(done)).output
    none_open = run("--open-only", str(done))
    assert none_open.exit_code == 0
    assert none_open.output.strip() == "no open transaction in the 1 partition read"
