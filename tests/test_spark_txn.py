"""``isolationLevel=read_committed``: what a Kafka consumer reading committed data sees, on partitions written
by kdump's writer (committed, aborted and open transactions of interleaved producers, a transaction that
spans a segment roll).

The expected offsets are worked out by hand from Kafka's rules (broker: data only below the last stable
offset, the first offset of the earliest open transaction; consumer, ``CompletedFetch``: a transactional
data batch of producer P is skipped when an aborted transaction of P began at or before it and its ABORT
marker follows it; control batches are not data), and written down in the comments of :func:`partition`.
"""
import os

import pytest

from kdump import RecordBatchBuilder
from kdump.write.segment import end_txn_marker_batch, write_segment

T0 = 1_700_000_000_000


def data(first, values, pid=-1, epoch=-1, seq=-1):
    b = RecordBatchBuilder(first, producer_id=pid, producer_epoch=epoch, base_sequence=seq,
                           is_transactional=pid >= 0)
    for i, v in enumerate(values):
        b.append(first + i, T0 + first + i, None, v.encode())
    return b.build()


def marker(offset, pid, commit):
    return end_txn_marker_batch(offset, pid, 0, commit, 1, T0 + offset)


# Producer 10 (A), 20 (B), 30 (C) transactional; -1 plain.
SEGMENTS = {
    0: [data(0, ["plain-0"]),                 # 0      kept
        data(1, ["a1", "a2"], 10, 0, 0),      # 1-2    A's first transaction: committed at 5, kept
        data(3, ["b1", "b2"], 20, 0, 0),      # 3-4    B's transaction, aborted at 9 (after the roll): dropped
        marker(5, 10, commit=True),           # 5      COMMIT A
        data(6, ["b3", "b4"], 20, 0, 2),      # 6-7    B, aborted: dropped
        data(8, ["plain-1"])],                # 8      kept
    9: [marker(9, 20, commit=False),          # 9      ABORT B (its transaction began at 3, in segment 0)
        data(10, ["a3", "a4"], 10, 0, 2),     # 10-11  A's second transaction, aborted at 12: dropped
        marker(12, 10, commit=False)],        # 12     ABORT A
    13: [data(13, ["c1"], 30, 0, 0),          # 13     C's transaction, never ended: the last stable offset
         data(14, ["plain-2"]),               # 14     beyond the LSO: not returned
         data(15, ["b5", "b6"], 20, 0, 4)],   # 15-16  beyond the LSO
}
COMMITTED = [0, 1, 2, 8]
EVERY_DATA_RECORD = [0, 1, 2, 3, 4, 6, 7, 8, 10, 11, 13, 14, 15, 16]


def partition(directory, with_txnindex=False):
    os.makedirs(directory, exist_ok=True)
    for base, entries in SEGMENTS.items():
        write_segment(os.path.join(directory, f"{base:020d}.log"), entries)
    if with_txnindex:
        from kdump.index.rebuild import rebuild_directory
        rebuild_directory(directory)
    return directory


def library_offsets(directory, isolation):
    from kdump.spark.arrow import ReadOptions, read_slices
    from kdump.spark.plan import find_segments, plan_tasks, txn_filters
    options = ReadOptions(columns=("offset",), isolation=isolation)
    segs = find_segments([str(directory)])
    filters = txn_filters(segs) if isolation == "read_committed" else None
    out = []
    for task in plan_tasks(segs, parallelism=1, txn_filters=filters):
        for rb in read_slices(task.slices, options):
            out += rb.column("offset").to_pylist()
    return out


@pytest.mark.parametrize("with_txnindex", [False, True], ids=["markers", "txnindex"])
def test_read_committed_drops_aborted_and_stops_at_the_last_stable_offset(tmp_path, with_txnindex):
    d = partition(tmp_path / "t-0", with_txnindex)
    if with_txnindex:  # Kafka's recovery wrote the aborts of segment 9 into its .txnindex
        assert os.path.getsize(tmp_path / "t-0" / f"{9:020d}.txnindex") == 2 * 34
    assert library_offsets(d, "read_uncommitted") == EVERY_DATA_RECORD
    assert library_offsets(d, "read_committed") == COMMITTED


def test_a_complete_segment_s_txnindex_is_what_counts(tmp_path):
    """The broker serves the aborted transactions its .txnindex lists; kdump reads them as Kafka does."""
    from kdump.read.txn_index import AbortedTxn
    from kdump.spark.txn import PartitionTxns
    d = partition(tmp_path / "t-0")
    # a .txnindex for segment 0 that says A's first transaction (1..5) was aborted
    with open(d / f"{0:020d}.txnindex", "wb") as f:
        f.write(AbortedTxn(10, 1, 5, 3).encode())
    segs = [(b, str(d / f"{b:020d}.log")) for b in SEGMENTS]
    txns = PartitionTxns()
    txns.scan(segs)
    assert sorted(txns.aborted) == [(10, 1, 5), (10, 10, 12), (20, 3, 9)]
    assert txns.filter().last_stable_offset == 13
    assert library_offsets(d, "read_committed") == [0, 8]


def test_spark_read_committed_batch_and_default(spark, tmp_path):
    partition(tmp_path / "t-0")
    df = spark.read.format("kafka-log").option("isolationLevel", "read_committed").load(str(tmp_path))
    assert sorted(r.offset for r in df.select("offset").collect()) == COMMITTED
    default = spark.read.format("kafka-log").load(str(tmp_path))  # read_uncommitted, as Spark's Kafka source
    assert sorted(r.offset for r in default.select("offset").collect()) == EVERY_DATA_RECORD
    with pytest.raises(Exception, match="isolationLevel"):
        spark.read.format("kafka-log").option("isolationLevel", "serializable").load(str(tmp_path)).count()


def test_spark_stream_read_committed_waits_for_markers(spark, tmp_path):
    part = tmp_path / "s-0"
    part.mkdir()
    seg0 = part / f"{0:020d}.log"
    seg0.write_bytes(b"".join(SEGMENTS[0]))
    q = (spark.readStream.format("kafka-log").option("isolationLevel", "read_committed").load(str(tmp_path))
         .writeStream.format("memory").queryName("txn1").start())

    def seen():
        return sorted(r.offset for r in spark.sql("select offset from txn1").collect())
    try:
        q.processAllAvailable()
        assert seen() == [0, 1, 2]  # B's transaction is open from offset 3: the last stable offset
        (part / f"{9:020d}.log").write_bytes(b"".join(SEGMENTS[9]))  # the segment rolls; B and A abort
        q.processAllAvailable()
        assert seen() == COMMITTED
        (part / f"{13:020d}.log").write_bytes(b"".join(SEGMENTS[13]))  # C opens at 13, B again at 15
        q.processAllAvailable()
        assert seen() == COMMITTED
        with open(part / f"{13:020d}.log", "ab") as f:
            f.write(marker(17, 30, commit=True))  # C commits; B's second transaction is still open
        q.processAllAvailable()
        assert seen() == COMMITTED + [13, 14]
    finally:
        q.stop()
