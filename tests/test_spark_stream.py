"""``spark.readStream.format("kafka-log")``: batches appended (one half written) and a segment rolled while
the query runs; the high watermark; read limits; deleted segments."""
import json
import os

import pytest

from kdump import RecordBatchBuilder


def batch(first, n, tag=b"v"):
    b = RecordBatchBuilder(first)
    for o in range(first, first + n):
        b.append(o, 1_700_000_000_000 + o, None, tag + b"%d" % o)
    return b.build()


def seg(directory, base):
    return os.path.join(directory, f"{base:020d}.log")


def offsets(spark, name):
    return sorted(r.offset for r in spark.sql(f"select offset from {name}").collect())


def test_tailing_appends_partial_batches_and_a_roll(spark, tmp_path):
    part = tmp_path / "live-0"
    part.mkdir()
    with open(seg(part, 0), "wb") as f:
        f.write(batch(0, 5))
    q = (spark.readStream.format("kafka-log").load(str(tmp_path)).writeStream.format("memory")
         .queryName("tail1").start())
    try:
        q.processAllAvailable()
        assert offsets(spark, "tail1") == list(range(5))
        nxt = batch(5, 3)
        with open(seg(part, 0), "ab") as f:
            f.write(nxt[: len(nxt) // 2])  # a batch half written
        q.processAllAvailable()
        assert offsets(spark, "tail1") == list(range(5))  # the half batch is not read
        with open(seg(part, 0), "ab") as f:
            f.write(nxt[len(nxt) // 2:])
        with open(seg(part, 8), "wb") as f:  # the segment rolls
            f.write(batch(8, 4))
        q.processAllAvailable()
        assert offsets(spark, "tail1") == list(range(12))
        with open(seg(part, 8), "ab") as f:
            f.write(batch(12, 2))
        q.processAllAvailable()
        assert offsets(spark, "tail1") == list(range(14))
    finally:
        q.stop()


def test_high_watermark_and_read_limit(spark, tmp_path):
    part = tmp_path / "hw-0"
    part.mkdir()
    with open(seg(part, 0), "wb") as f:
        for first in range(0, 20, 2):
            f.write(batch(first, 2))
    (tmp_path / "replication-offset-checkpoint").write_text("0\n1\nhw 0 10\n")
    q = (spark.readStream.format("kafka-log").option("maxRecordsPerTrigger", "4").load(str(tmp_path))
         .writeStream.format("memory").queryName("hw1").start())
    try:
        q.processAllAvailable()
        assert offsets(spark, "hw1") == list(range(10))  # stops at the high watermark
        sizes = [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]
        assert max(sizes) <= 4 and sum(sizes) == 10 and len(sizes) >= 3
    finally:
        q.stop()
    # Trigger.AvailableNow: everything available (Spark hands Python sources no limit then), then stop
    now = (spark.readStream.format("kafka-log").option("maxRecordsPerTrigger", "4").load(str(tmp_path))
           .writeStream.format("memory").queryName("hw2").trigger(availableNow=True).start())
    assert now.awaitTermination(120)
    assert offsets(spark, "hw2") == list(range(10))


def test_deleted_segment_fails_unless_told_not_to(spark, tmp_path):
    part = tmp_path / "gone-0"
    part.mkdir()
    with open(seg(part, 0), "wb") as f:
        f.write(batch(0, 3))
    with open(seg(part, 3), "wb") as f:
        f.write(batch(3, 3))
    from kdump.spark.stream import DataLoss, KafkaLogStreamReader
    from pyspark.sql.datasource import CaseInsensitiveDict
    from pyspark.sql.streaming.datasource import ReadAllAvailable
    from kdump.spark.schema import default_columns, spark_schema
    schema = spark_schema(default_columns())
    reader = KafkaLogStreamReader(CaseInsensitiveDict({"path": str(tmp_path)}), schema)
    start = reader.initialOffset()
    os.unlink(seg(part, 0))  # retention deleted the segment before it was read
    with pytest.raises(DataLoss, match="deleted"):
        reader.latestOffset(start, ReadAllAvailable())
    lenient = KafkaLogStreamReader(CaseInsensitiveDict({"path": str(tmp_path), "failOnDataLoss": "false"}), schema)
    end = lenient.latestOffset(start, ReadAllAvailable())
    assert end["gone-0"]["offset"] == 6
    rows = [r for p in lenient.partitions(start, end) for rb in lenient.read(p) for r in rb.to_pylist()]
    assert [r["offset"] for r in rows] == [3, 4, 5]


@pytest.mark.parametrize("option, value, first", [
    ("startingOffsets", '{"start": {"0": 7}}', 7),  # mid-batch: the batch's earlier records are left out
    ("startingOffsetsByTimestamp", '{"start": {"0": 1700000000013}}', 13),
    ("startingTimestamp", "1700000000009", 9),
    ("maxOffsetsPerTrigger", "3", 0),  # Spark's Kafka name of the read limit
])
def test_kafka_starting_positions_of_a_stream(spark, tmp_path, option, value, first):
    """Issue 21, item 2: a stream starts where Spark's Kafka source would (offset JSON, per-partition times, one
    time; the first record at or after it), and maxOffsetsPerTrigger limits each micro-batch."""
    part = tmp_path / "start-0"
    part.mkdir()
    with open(seg(part, 0), "wb") as f:
        for base in range(0, 20, 4):
            f.write(batch(base, 4))  # record o has timestamp 1_700_000_000_000 + o
    name = f"start_{option.lower()}"
    q = (spark.readStream.format("kafka-log").option(option, value).load(str(tmp_path))
         .writeStream.format("memory").queryName(name).start())
    try:
        q.processAllAvailable()
        assert offsets(spark, name) == list(range(first, 20))
        if option == "maxOffsetsPerTrigger":
            sizes = [p["numInputRows"] for p in q.recentProgress if p["numInputRows"]]
            assert max(sizes) <= 4 and len(sizes) >= 5  # whole batches of 4, at most one a trigger
    finally:
        q.stop()


def _damaged_size_field(part):
    """An active segment: batches 0-4, a batch (offsets 5-7) whose size field is damaged (it runs past the end of
    the file) and batches 8-11 after it. The byte position of the damage is returned."""
    damaged = bytearray(batch(5, 3))
    damaged[8:12] = (0x7FFF0000).to_bytes(4, "big")
    first = batch(0, 5)
    with open(seg(part, 0), "wb") as f:
        f.write(first + bytes(damaged) + batch(8, 4))
    return len(first)


def test_damage_in_the_active_segment_fails_the_stream_naming_file_byte_and_offsets(spark, tmp_path):
    """Issue 32, item 2: a damaged size field with valid batches after it, in the active segment, is damage (as
    kdump verify tells it), not a batch being written: with failOnDataLoss=true (the default) the stream fails
    naming the file, the byte and the offsets lost, instead of stopping at it in silence."""
    from pyspark.errors import StreamingQueryException
    part = tmp_path / "dmg-0"
    part.mkdir()
    at = _damaged_size_field(part)
    q = (spark.readStream.format("kafka-log").load(str(tmp_path)).writeStream.format("memory")
         .queryName("dmg1").start())
    try:
        with pytest.raises(StreamingQueryException) as failed:
            q.processAllAvailable()
    finally:
        q.stop()
    message = str(failed.value)
    assert seg(part, 0) in message and f"at byte {at}" in message and "offsets 5-7 are lost" in message
    assert "failOnDataLoss" in message


def test_a_stream_reads_past_damage_as_a_batch_read_does_and_goes_on(spark, tmp_path):
    """Issue 32, item 2: with failOnDataLoss=false the stream reads past the damage and delivers exactly the rows a
    batch read of the same files gives, and goes on with what is appended later."""
    part = tmp_path / "past-0"
    part.mkdir()
    _damaged_size_field(part)
    lenient = {"failOnDataLoss": "false"}
    q = (spark.readStream.format("kafka-log").options(**lenient).load(str(tmp_path)).writeStream.format("memory")
         .queryName("past1").start())
    try:
        q.processAllAvailable()
        batch_rows = sorted((r.offset, bytes(r.value)) for r in
                            spark.read.format("kafka-log").options(**lenient).load(str(tmp_path)).collect())
        stream_rows = sorted((r.offset, bytes(r.value)) for r in spark.sql("select offset, value from past1").collect())
        assert stream_rows == batch_rows == [(o, b"v%d" % o) for o in [*range(5), *range(8, 12)]]
        with open(seg(part, 0), "ab") as f:
            f.write(batch(12, 2))
        q.processAllAvailable()
        assert offsets(spark, "past1") == [*range(5), *range(8, 14)]
    finally:
        q.stop()


def test_min_offsets_per_trigger_waits_for_enough_new_offsets_and_progress_reports_the_latest(spark, tmp_path):
    """Issue 32, items 1 and 5: minOffsetsPerTrigger, as Spark's Kafka source: the first trigger reads what is
    there, later ones wait until that many offsets are new (or maxTriggerDelay has passed); the query's progress
    reports the source's latest offsets, so that the lag is latestOffset - endOffset per partition."""
    part = tmp_path / "min-0"
    part.mkdir()
    with open(seg(part, 0), "wb") as f:
        f.write(batch(0, 4))
    q = (spark.readStream.format("kafka-log").options(minOffsetsPerTrigger="10", maxTriggerDelay="1h")
         .load(str(tmp_path)).writeStream.format("memory").queryName("min1").start())
    try:
        q.processAllAvailable()
        assert offsets(spark, "min1") == list(range(4))
        with open(seg(part, 0), "ab") as f:
            f.write(batch(4, 3))
        q.processAllAvailable()
        assert offsets(spark, "min1") == list(range(4))  # 3 new offsets: fewer than 10, the trigger waits
        with open(seg(part, 0), "ab") as f:
            f.write(batch(7, 8))
        q.processAllAvailable()
        assert offsets(spark, "min1") == list(range(15))
        source = q.lastProgress["sources"][0]
        latest, end = (json.loads(v) if isinstance(v, str) else v
                       for v in (source["latestOffset"], source["endOffset"]))
        assert latest["min-0"]["offset"] == end["min-0"]["offset"] == 15  # no lag: latest - end = 0
    finally:
        q.stop()
