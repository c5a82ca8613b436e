"""`kdump index rebuild`: Kafka's recovery-time indexes, byte for byte, written atomically.

Sources of truth: the broker-written indexes of the corpus (bytes), Kafka's view of each log (the corpus
``.log.json``) run through the recovery rule of spec §5.6 restated in support.segments, and the
transaction-index rule of spec §5.4 worked out by hand for the transactional cases below.
"""
import os
import shutil
import struct

import pytest

from corpus import CORPUS, LOG_FILES, load_json
from support.cli import run_cli
from kdump.read.offset_index import OffsetIndex
from kdump.index.rebuild import RebuildError, rebuild_indexes, recover_segment
from kdump.read.snapshot import ProducerEntry, encode_snapshot
from kdump.read.time_index import TimeIndex
from kdump.read.txn_index import AbortedTxn, TxnIndexFile
from support.segments import (T0, batch_facts, cleaned_marker, data_batch, marker, recovery_rule,
                                write_log)

BROKER = CORPUS / "broker-written"
GENERATED = sorted((CORPUS.parent / "generated").glob("*/*.log"))
BROKER_INDEXED = ["consumer-offsets-v2", "kraft-metadata-log"]


def trimmed(path, entry_size: int) -> bytes:
    """A broker index without its preallocated zero tail (DumpLogSegments' rule)."""
    cls = OffsetIndex if entry_size == 8 else TimeIndex
    with cls(path) as idx:
        n = idx.dump_entry_count()
    return path.read_bytes()[:n * entry_size]


@pytest.mark.parametrize("case", BROKER_INDEXED)
def test_rebuilt_index_equals_the_brokers_bytes(case, tmp_path):
    src = BROKER / case / "00000000000000000000.log"
    written = rebuild_indexes(src, tmp_path)
    assert [os.path.basename(p) for p in written] == ["00000000000000000000.index", "00000000000000000000.timeindex"]
    assert (tmp_path / "00000000000000000000.index").read_bytes() == trimmed(src.with_suffix(".index"), 8)
    assert (tmp_path / "00000000000000000000.timeindex").read_bytes() == trimmed(src.with_suffix(".timeindex"), 12)
    assert not (tmp_path / "00000000000000000000.txnindex").exists()  # no aborted transactions: Kafka writes none


@pytest.mark.parametrize("log", [p for p in LOG_FILES if p.suffix == ".log"] + GENERATED,
                         ids=lambda p: str(p.relative_to(CORPUS.parent)))
def test_rebuild_follows_the_recovery_rule_on_every_log(log):
    """Recovery's entries computed from Kafka's view of the batches (or kdump's reader for generated logs),
    independently of kdump.index.rebuild, for a small and the default interval."""
    from kdump.read.segment import base_offset_from_name
    base = base_offset_from_name(log)
    json_path = log.parent / f"{log.name}.json"
    facts = load_json(log)["batches"] if json_path.exists() else batch_facts(log)
    facts = [b for b in facts if b.get("valid", True) and b.get("crcValid", True)]
    rec0 = recover_segment(log)
    if rec0.stop_code is not None:  # recovery stops at the first invalid batch: compare that prefix only
        facts = [b for b in facts if b["position"] < rec0.valid_bytes]
    for interval in (0, 100, 4096):
        rec = recover_segment(log, index_interval_bytes=interval)
        off, tim = recovery_rule(facts, base, interval)
        assert bytes(rec.offset_index) == off, interval
        assert bytes(rec.time_index) == tim, interval


def test_where_append_time_indexing_differs_the_brokers_time_index(tmp_path):
    """java-producer-headers-idempotent: the broker's .timeindex has 8 entries, recovery writes 4. Each broker
    entry is still a true 'max timestamp so far' checkpoint of the log; the extra ones come from segment
    closes at broker restarts (LogSegment.close appends the max so far), and entry 70 names the record with
    the max timestamp inside batch 69-72 (KAFKA-16342-era brokers), not the batch's last offset."""
    case = BROKER / "java-producer-headers-idempotent"
    log = case / "00000000000000000000.log"
    rebuild_indexes(log, tmp_path)
    with TimeIndex(case / "00000000000000000000.timeindex") as t:
        broker = [t.entry(i) for i in range(t.entries)]
    with TimeIndex(tmp_path / "00000000000000000000.timeindex") as t:
        rebuilt = [t.entry(i) for i in range(t.entries)]
    assert len(broker) == 8 and len(rebuilt) == 4 and broker != rebuilt
    assert broker[-1] == rebuilt[-1]  # the close-time entry: the segment's max timestamp, same in both
    batches = load_json(log)["batches"]
    for e in broker:
        i = next(k for k, b in enumerate(batches) if b["lastOffset"] >= e.offset)
        b = batches[i]
        assert b["maxTimestamp"] == e.timestamp  # the batch holding the entry's offset has its timestamp
        assert all(p["maxTimestamp"] < e.timestamp for p in batches[:i])  # and is the first to reach it
        if e.offset != b["lastOffset"]:  # the record-level offset: the first record with the max timestamp
            rec = next(r for r in b["records"] if r["timestamp"] == e.timestamp)
            assert rec["offset"] == e.offset == 70
    # where they differ: recovery has an entry at 40 that the broker's history did not produce, and the broker
    # has entries recovery never writes (closes at restarts, and the record-level 70)
    assert {e.offset for e in rebuilt} - {e.offset for e in broker} == {40}
    assert sorted({e.offset for e in broker} - {e.offset for e in rebuilt}) == [18, 21, 32, 50, 70]


def test_append_time_multi_batch_appends_differ_from_recovery(tmp_path):
    """Before KAFKA-806 (Kafka 4.0) a follower indexed a whole append of several batches with one entry:
    (last offset of the last batch, position of the first). Recovery indexes batch by batch. Simulated here
    per spec §5.2 on appends of 3 batches; `index check` reports such entries as offset mismatches (what
    DumpLogSegments calls Mismatches), not as damage."""
    batches = [data_batch(i * 10, 10, ts=T0 + i) for i in range(60)]
    log = write_log(tmp_path, 0, batches)
    appends = [batches[i:i + 3] for i in range(0, 60, 3)]
    entries, pos, since = [], 0, 0
    for k, app in enumerate(appends):
        if since > 4096:
            last = (k * 3 + len(app)) * 10 - 1  # last offset of the append's last batch
            entries.append(struct.pack(">ii", last, pos))
            since = 0
        size = sum(len(b) for b in app)
        since += size
        pos += size
    append_time = b"".join(entries)
    rec = recover_segment(log)
    assert append_time != bytes(rec.offset_index)
    with open(tmp_path / "00000000000000000000.index", "wb") as f:
        f.write(append_time)
    from kdump.index.check import check_segment_companions
    report = next(r for r in check_segment_companions(log, deep=False) if r.kind == "index")
    assert {f.code for f in report.findings} == {"index-offset-mismatch"}
    assert all(f.severity == "warning" for f in report.findings)


def test_txnindex_by_the_rules_of_spec_5_4(tmp_path):
    """Hand-worked: P1's transaction (0-1) is aborted at 3 while P2's (from 2) is still open, so its last
    stable offset is 2; P2's is aborted at 5 with nothing else open: 6. P3 commits (no entry); a marker of
    P1 with no open transaction and a cleaned (empty) control batch change nothing."""
    log = write_log(tmp_path, 0, [
        data_batch(0, 2, pid=1, epoch=0, seq=0, txn=True),
        data_batch(2, 1, pid=2, epoch=0, seq=0, txn=True),
        marker(3, 1, commit=False),
        data_batch(4, 1, pid=2, epoch=0, seq=1, txn=True),
        marker(5, 2, commit=False),
        data_batch(6, 1, pid=3, epoch=0, seq=0, txn=True),
        marker(7, 3, commit=True),
        marker(8, 1, commit=False),
        cleaned_marker(9, 2),
        data_batch(10, 2),
    ])
    rebuild_indexes(log)
    with TxnIndexFile(tmp_path / "00000000000000000000.txnindex") as f:
        got = [t for _, t in f.entries()]
    assert got == [AbortedTxn(1, 0, 3, 2), AbortedTxn(2, 2, 5, 6)]
    out = run_cli("dump", tmp_path / "00000000000000000000.txnindex").stdout
    assert out.splitlines()[1:] == ["version: 0 producerId: 1 firstOffset: 0 lastOffset: 3 lastStableOffset: 2",
                                    "version: 0 producerId: 2 firstOffset: 2 lastOffset: 5 lastStableOffset: 6"]


def test_generated_transactional_fixture(tmp_path):
    src = CORPUS.parent / "generated" / "v2-transactional" / "00000000000000000000.log"
    shutil.copy(src, tmp_path / src.name)
    rebuild_indexes(tmp_path / src.name)
    # producer 4002 opened at 3 (gzip batch 3-4), aborted at 9; 4001 committed at 7 before it: LSO = 10
    assert (tmp_path / "00000000000000000000.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 4002, 3, 9, 10)


def test_transaction_opened_in_an_earlier_segment(tmp_path):
    """Recovery of the second segment needs the producer state left by the first (Kafka replays it)."""
    write_log(tmp_path, 0, [data_batch(0, 3, pid=9, epoch=0, seq=0, txn=True), data_batch(3, 2)])
    seg2 = write_log(tmp_path, 5, [data_batch(5, 2), marker(7, 9, commit=False)])
    out = tmp_path / "out"
    out.mkdir()
    written = rebuild_indexes(seg2, out)  # the state comes from the segment's own directory
    assert [os.path.basename(p) for p in written] == ["00000000000000000005.index", "00000000000000000005.timeindex",
                                                      "00000000000000000005.txnindex"]
    assert (out / "00000000000000000005.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 9, 0, 7, 8)


def test_producer_snapshot_seeds_the_state(tmp_path):
    """Only the second segment is left (retention) and a snapshot at its base records the open
    transaction: Kafka's loadProducerState starts from it."""
    snap = ProducerEntry(9, 0, 2, 4, 0, T0, 3, 1)  # producer 9, open transaction from offset 1
    other = ProducerEntry(11, 0, 0, 3, 0, T0, 3, 3)  # producer 11, open transaction from offset 3
    (tmp_path / "00000000000000000005.snapshot").write_bytes(encode_snapshot([snap, other]))
    seg = write_log(tmp_path, 5, [data_batch(5, 1, pid=9, epoch=0, seq=3, txn=True), marker(6, 9, commit=False)])
    rebuild_indexes(seg)
    assert (tmp_path / "00000000000000000005.txnindex").read_bytes() == struct.pack(">hqqqq", 0, 9, 1, 6, 3)


def test_existing_files_are_refused_then_kept_as_bak(tmp_path):
    src = BROKER / "kraft-metadata-log" / "00000000000000000000.log"
    log = tmp_path / src.name
    shutil.copy(src, log)
    (tmp_path / "00000000000000000000.index").write_bytes(b"old index")
    before = log.read_bytes()
    with pytest.raises(FileExistsError):
        rebuild_indexes(log)
    assert (tmp_path / "00000000000000000000.index").read_bytes() == b"old index"
    assert not (tmp_path / "00000000000000000000.timeindex").exists()  # nothing written at all
    result = run_cli("index", "rebuild", log)
    assert result.exit_code == 2 and "--force" in result.stderr
    result = run_cli("index", "rebuild", "--force", log)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "00000000000000000000.index.bak").read_bytes() == b"old index"
    assert (tmp_path / "00000000000000000000.index").read_bytes() == (src.parent / "00000000000000000000.index").read_bytes()
    result = run_cli("index", "rebuild", "--force", log)  # nothing differs: nothing rewritten
    assert result.exit_code == 0 and "unchanged" in result.output
    assert not (tmp_path / "00000000000000000000.index.bak.1").exists()  # issue 11: one .bak per file
    assert (tmp_path / "00000000000000000000.index.bak").read_bytes() == b"old index"
    assert log.read_bytes() == before  # the .log is never touched
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".tmp")]


def test_damaged_tail_indexes_cover_the_valid_prefix(tmp_path):
    """Recovery stops at the first invalid batch (Kafka truncates the log there; kdump only says so)."""
    batches = [data_batch(i * 10, 10, ts=T0 + i) for i in range(40)]
    log = write_log(tmp_path, 0, batches)
    data = bytearray(open(log, "rb").read())
    bad = sum(len(b) for b in batches[:30])
    data[bad + 70] ^= 0xFF  # a record byte of batch 30: CRC mismatch
    open(log, "wb").write(bytes(data))
    result = run_cli("index", "rebuild", log)
    assert result.exit_code == 1
    assert f"at byte {bad}: Record batch is corrupt (stored crc = " in result.stderr
    assert f"({len(data) - bad} bytes; kdump did not touch it)" in result.stderr
    with OffsetIndex(tmp_path / "00000000000000000000.index") as idx:
        assert all(idx.entry(i).position < bad for i in range(idx.entries))
    assert open(log, "rb").read() == bytes(data)


def test_offset_overflow_is_refused(tmp_path):
    log = write_log(tmp_path, 0, [data_batch(0, 1), data_batch(2**31, 1)])
    with pytest.raises(RebuildError, match="LogSegmentOffsetOverflowException"):
        rebuild_indexes(log)
    assert not (tmp_path / "00000000000000000000.index").exists()
    result = run_cli("index", "rebuild", log)
    assert result.exit_code == 1 and "not rebuilt" in result.stderr


def test_directory_rebuild_and_usage_errors(tmp_path):
    part = tmp_path / "t-0"
    write_log(part, 0, [data_batch(i * 5, 5, pid=1, epoch=0, seq=i * 5) for i in range(4)])
    write_log(part, 20, [data_batch(20, 5, pid=1, epoch=0, seq=20)])
    result = run_cli("index", "rebuild", "--index-interval-bytes", "100", part)
    assert result.exit_code == 0, result.output
    assert sorted(os.listdir(part)) == ["00000000000000000000.index", "00000000000000000000.log",
                                        "00000000000000000000.timeindex", "00000000000000000020.index",
                                        "00000000000000000020.log", "00000000000000000020.timeindex"]
    assert run_cli("index", "rebuild", part / "00000000000000000000.index").exit_code == 2
    assert run_cli("index", "rebuild", tmp_path / "missing.log").exit_code == 2
    # issue 11 point 5: -o/--output is created if missing (was: exit 2); --out still works, with a note
    made = run_cli("index", "rebuild", "--out", tmp_path / "nope", part)
    assert made.exit_code == 0 and "--out is deprecated here; use -o/--output" in made.stderr
    assert sorted(os.listdir(tmp_path / "nope"))[:2] == ["00000000000000000000.index", "00000000000000000000.timeindex"]
    (tmp_path / "afile").write_text("")
    assert run_cli("index", "rebuild", "-o", tmp_path / "afile", part).exit_code == 2
    assert run_cli("index", "rebuild").exit_code == 2


def test_rebuilt_files_pass_kafkas_checks_and_kdumps(tmp_path):
    for src in GENERATED + [BROKER / c / "00000000000000000000.log" for c in BROKER_INDEXED]:
        d = tmp_path / src.parent.name
        d.mkdir()
        shutil.copy(src, d / src.name)
        rebuild_indexes(d / src.name)
        from kdump.index.check import check_partition_companions
        for report in check_partition_companions(str(d), deep=True):
            assert report.status == "ok", (src, [(f.code, f.message) for f in report.findings])
