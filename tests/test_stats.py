"""kdump stats: the record-level numbers (compression, producers, transactions, control records, keys, what a
compaction would remove), exact in memory and when spilled to disk; the header numbers are those of
:func:`kdump.stats.counts.segment_stats` merged per partition. Expected values by hand."""
from __future__ import annotations

import json
import os

from kdump import codec
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.stats.keytable import KeyTable
from kdump.read.scan import scan
from kdump.stats.counts import Stats, segment_stats, stats_paths
from kdump.write.segment import end_txn_marker_batch, write_segment

from corpus import ROOT
from support.cli import run_cli

T0 = 1_700_000_000_000


def batch(base, records, *, codec_id=codec.NONE, pid=-1, txn=False):
    b = RecordBatchBuilder(base, codec_id, producer_id=pid, producer_epoch=0 if pid >= 0 else -1,
                           base_sequence=0 if pid >= 0 else -1, is_transactional=txn)
    for i, (key, value) in enumerate(records):
        b.append(base + i, T0, key, value)  # one timestamp: every timestamp delta is 0 (one varint byte)
    return b.build()


def _partition(tmp_path):
    """p-0. Segment 0: gzip batch A at 0-2 (a=1, b=22, no key=x), batch B at 3-4 (a=333, c=tombstone).
    Segment 5: batch C at 5-6 (b=tombstone, a=4444), producer 7's transaction d=5 at 7, its COMMIT at 8."""
    part = tmp_path / "p-0"
    part.mkdir()
    write_segment(part / "00000000000000000000.log", [
        batch(0, [(b"a", b"1"), (b"b", b"22"), (None, b"x")], codec_id=codec.GZIP),
        batch(3, [(b"a", b"333"), (b"c", None)])])
    write_segment(part / "00000000000000000005.log", [
        batch(5, [(b"b", None), (b"a", b"4444")]), batch(7, [(b"d", b"5")], pid=7, txn=True),
        end_txn_marker_batch(8, 7, 0, True, 1, T0)])
    return part


def _stats(paths, **kw):
    groups = scan([str(p) for p in paths]).segment_groups()
    return stats_paths(groups, **kw)


def _records(summary, name):
    """The record-level numbers of the partition called ``name`` (``<topic>-<n>``)."""
    (found,) = [p.records for p in summary.partitions if p.name == name]
    return found


def test_record_numbers_by_hand(tmp_path):
    summary = _stats([_partition(tmp_path)])
    r = _records(summary, "p-0")
    assert (r.keyed_records, r.keyless_records, r.distinct_keys) == (7, 1, 4)  # a a a b b c d; one without a key
    # the cleaner keeps the last record of each key: a@0 and a@3 (superseded by a@6) and b@1 (by the tombstone
    # b@5) go. Record sizes (varint length + attributes, timestamp delta, offset delta, key length, key, value
    # length, value, header count; one byte each but key and value): a=1 -> 9, b=22 -> 10, a=333 -> 11
    assert (r.superseded_records, r.superseded_bytes) == (3, 9 + 10 + 11)
    # tombstones c@4 and b@5, each the last record of its key
    assert (r.tombstones, r.live_tombstones) == (2, 2)
    assert (r.producers, r.committed, r.aborted, r.open_transactions, r.control_records) == (1, 1, 0, 0, 1)
    # batch A uncompressed: the 61-byte v2 header + records of 9, 10 and 8 bytes (no key: key length -1, no bytes)
    gzip = r.to_dict()["compression"]["gzip"]
    assert gzip["batches"] == 1 and gzip["uncompressedBytes"] == 61 + 9 + 10 + 8
    none = r.to_dict()["compression"]["none"]
    assert none["bytes"] == none["uncompressedBytes"]  # uncompressed batches take what they take
    assert summary.total_records.superseded_records == 3
    assert r.to_dict()["keys"]["method"] == "exact, key digests in memory"


def _many_keys(tmp_path):
    """300 keys written twice, then tombstones for the first 50: the first 300 records and 50 of the second round
    are superseded; 300 distinct keys, 50 live tombstones."""
    part = tmp_path / "big-0"
    part.mkdir()
    first = [(b"key-%d" % i, b"first") for i in range(300)]
    second = [(b"key-%d" % i, b"second") for i in range(300)]
    tombs = [(b"key-%d" % i, None) for i in range(50)]
    write_segment(part / "00000000000000000000.log", [batch(0, first), batch(300, second), batch(600, tombs)])
    return part


def test_keys_spilled_to_disk_give_the_same_exact_counts(tmp_path):
    part = _many_keys(tmp_path)
    in_memory = _records(_stats([part]), "big-0")
    spilled = _records(_stats([part], memory_bytes=1, spill_dir=str(tmp_path)), "big-0")  # 64 keys at most
    for r in (in_memory, spilled):
        assert (r.distinct_keys, r.superseded_records, r.tombstones, r.live_tombstones) == (300, 350, 50, 50)
    assert in_memory.superseded_bytes == spilled.superseded_bytes
    assert spilled.spilled_partitions == 1 and "spilled to disk" in spilled.to_dict()["keys"]["method"]
    assert [p for p in os.listdir(tmp_path) if p.startswith(".kdump-keys")] == []  # spill files removed


def test_key_table_splits_a_bucket_that_does_not_fit_either():
    table = KeyTable(1)  # 64 keys in memory; 5000 keys need a second level of buckets somewhere
    for round_ in range(2):
        for i in range(5000):
            table.add(i.to_bytes(16, "big"), 10, round_ == 1 and i % 2 == 0)  # digests sharing their first bytes
    table.finish()
    assert (table.keys, table.superseded, table.superseded_bytes, table.live_tombstones) == (5000, 5000, 50000, 2500)
    assert table.spilled_buckets > 256


def test_header_numbers_are_those_of_segment_stats_summed():
    """kdump stats gives the header numbers of :func:`segment_stats` summed per partition directory (the Spark
    test checks those against the reader, and ``kdump spark stats`` against ``kdump stats``)."""
    path = ROOT / "fixtures/generated"
    logs = sorted(str(p) for p in path.rglob("*.log"))
    summed: dict[str, Stats] = {}
    for f in logs:
        summed[os.path.dirname(f)] = summed.get(os.path.dirname(f), Stats()).merge(segment_stats(f))
    ours = _stats([path])
    assert {p.path: p.stats.to_dict() for p in ours.partitions} == {k: v.to_dict() for k, v in summed.items()}
    total = Stats()
    for st in summed.values():
        total = total.merge(st)
    total.first_offset = total.last_offset = None  # offsets of different partitions do not add up
    assert ours.total.to_dict() == total.to_dict()


def run(*args):
    return run_cli("stats", *args)


def test_cli_text_and_json(tmp_path):
    part = _partition(tmp_path)
    r = run(str(part))
    assert r.exit_code == 0
    assert "compaction would remove 3 superseded records (30 bytes)" in r.output
    doc = json.loads(run("--format", "json", "--memory", "1M", str(part)).output)
    assert doc["partitions"][0]["compaction"]["supersededRecords"] == 3 and doc["partitions"][0]["partition"] == 0
    assert doc["total"]["records"] == 9 and doc["total"]["keys"]["distinct"] == 4
    assert run("--memory", "lots", str(part)).exit_code == 2
    assert run(str(tmp_path / "missing")).exit_code == 2
    assert "Examples" in run("--help").output
