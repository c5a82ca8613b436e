"""``df.write.format("kafka-log")``: read -> write -> read gives the same records; the segments are sound
for kdump's verifier (indexes included) and its dump."""
import json
import shutil
from pathlib import Path

import pytest
from support.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
COLS = ["topic", "partition", "offset", "key", "value", "headers", "unix_micros(timestamp) AS ts"]


def records(df):
    return sorted(df.selectExpr(*COLS).collect(), key=lambda r: (r.topic, r.partition, r.offset))


@pytest.mark.parametrize("codec", ["none", "lz4"])
def test_read_write_read_gives_the_same_records(spark, tmp_path, codec):
    src = tmp_path / "src"
    shutil.copytree(ROOT / "fixtures/corpus/broker-written/java-producer-snappy-headers", src / "orders-0")
    shutil.copytree(ROOT / "fixtures/generated/v2-none-createtime", src / "orders-1")
    shutil.copytree(ROOT / "fixtures/generated/v1-gzip-createtime", src / "audit-7")
    before = spark.read.format("kafka-log").option("includeHeaders", "true").load(str(src))
    out = tmp_path / "out"
    (before.write.format("kafka-log").mode("append").options(codec=codec, batchRecords="3", segmentBytes="4096")
     .save(str(out)))
    after = spark.read.format("kafka-log").option("includeHeaders", "true").load(str(out))
    assert records(after) == records(before) and len(records(before)) > 10
    assert sorted(p.name for p in out.iterdir()) == ["audit-7", "orders-0", "orders-1"]
    assert len(list((out / "orders-1").glob("*.log"))) > 1  # segments rolled at 4096 bytes
    verified = run_cli("verify", "--deep", "--format", "json", out)
    assert verified.exit_code == 0, verified.output
    kinds = {f["kind"] for f in json.loads(verified.stdout)["files"]}
    assert {"log", "index", "timeindex"} <= kinds
    dumped = run_cli("dump", "--deep-iteration", out)
    assert dumped.exit_code == 0 and "baseOffset" in dumped.stdout


def test_offsets_are_assigned_without_an_offset_column(spark, tmp_path):
    df = spark.createDataFrame([(b"k%d" % i, b"v%d" % i) for i in range(10)], "key binary, value binary")
    df.coalesce(1).write.format("kafka-log").mode("append").option("topic", "new").save(str(tmp_path))
    back = spark.read.format("kafka-log").load(str(tmp_path)).orderBy("offset").collect()
    assert [(r.topic, r.partition, r.offset, bytes(r.value)) for r in back] == [
        ("new", 0, i, b"v%d" % i) for i in range(10)]


def test_append_never_adds_to_a_partition_that_holds_segments(spark, tmp_path):
    df = spark.createDataFrame([(b"v",)], "value binary")
    df.write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    before = sorted(p.name for p in (tmp_path / "t-0").iterdir())
    with pytest.raises(Exception, match="already holds segments"):
        df.write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    assert sorted(p.name for p in (tmp_path / "t-0").iterdir()) == before
    assert not [p for p in tmp_path.parent.iterdir() if p.name.startswith(f".{tmp_path.name}.")]  # no staging left


def _kafka_python_records(directory):
    """(offset, key, value, timestamp) of every record under ``directory``, read by kafka-python (an independent
    reader), in file order."""
    from kafka.record import MemoryRecords
    out = []
    for log in sorted(directory.glob("*.log")):
        records = MemoryRecords(log.read_bytes())
        while records.has_next():
            batch = records.next_batch()
            out.extend((r.offset, r.key, r.value, r.timestamp) for r in batch)
    return out


def test_offsets_are_numbered_per_partition_whatever_the_dataframes_partitioning(spark, tmp_path):
    """Issue 21, item 8: four tasks each holding records of both topics, no offset column: every
    topic-partition gets offsets 0..n-1 (Kafka's sink has no rule about partitioning)."""
    rows = [("a" if i % 2 else "b", b"k%d" % i, b"v%d" % i) for i in range(40)]
    df = spark.createDataFrame(rows, "topic string, key binary, value binary").repartition(4)
    df.write.format("kafka-log").mode("append").option("batchRecords", "3").save(str(tmp_path))
    for topic in ("a", "b"):
        got = _kafka_python_records(tmp_path / f"{topic}-0")
        assert [o for o, *_ in got] == list(range(20))
        assert sorted(v for _, _, v, _ in got) == sorted(v for t, _, v in rows if t == topic)
    verified = run_cli("verify", "--deep", tmp_path)
    assert verified.exit_code == 0, verified.output


def test_string_keys_values_and_null_timestamps_are_written_as_kafkas_sink_would(spark, tmp_path):
    import time
    df = spark.createDataFrame([("t", "ключ", "value ✓", None), ("t", None, "second", None)],
                               "topic string, key string, value string, timestamp timestamp")
    before = int(time.time() * 1000)
    df.coalesce(1).write.format("kafka-log").mode("append").save(str(tmp_path))
    after = int(time.time() * 1000)
    got = _kafka_python_records(tmp_path / "t-0")
    assert [(k, v) for _, k, v, _ in got] == [("ключ".encode(), "value ✓".encode()), (None, b"second")]
    assert all(before <= ts <= after for *_, ts in got)


def test_overwrite_replaces_the_directory_whole(spark, tmp_path):
    out = tmp_path / "out"
    first = spark.createDataFrame([("old", b"1"), ("gone", b"2")], "topic string, value binary")
    first.coalesce(1).write.format("kafka-log").mode("append").save(str(out))
    second = spark.createDataFrame([("old", b"new-1"), ("old", b"new-2")], "topic string, value binary")
    second.coalesce(1).write.format("kafka-log").mode("overwrite").save(str(out))
    assert sorted(p.name for p in out.iterdir()) == ["old-0"]
    assert [v for _, _, v, _ in _kafka_python_records(out / "old-0")] == [b"new-1", b"new-2"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # nothing staged or set aside is left


def test_a_failed_write_leaves_nothing_behind(spark, tmp_path):
    out = tmp_path / "never"
    bad = spark.createDataFrame([(b"v",)], "value binary")  # no topic column and no topic option
    with pytest.raises(Exception, match="no topic"):
        bad.write.format("kafka-log").mode("append").save(str(out))
    assert list(tmp_path.iterdir()) == []
