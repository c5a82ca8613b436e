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


def test_an_append_continues_each_partitions_offsets(spark, tmp_path):
    """Issue 32, item 7: a recurring job appends to the same topic; each run goes on after the log end offset in
    new segments (indexes built), where a second append was refused."""
    first = spark.createDataFrame([(b"a%d" % i,) for i in range(5)], "value binary")
    first.coalesce(1).write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    old = {p.name: p.read_bytes() for p in (tmp_path / "t-0").iterdir()}
    second = spark.createDataFrame([(b"b%d" % i,) for i in range(3)], "value binary").repartition(2)
    second.write.format("kafka-log").mode("append").options(topic="t", partition="0").save(str(tmp_path))
    got = _kafka_python_records(tmp_path / "t-0")
    assert [o for o, *_ in got] == list(range(8))
    assert [v for _, _, v, _ in got[:5]] == [b"a%d" % i for i in range(5)]
    assert sorted(v for _, _, v, _ in got[5:]) == [b"b%d" % i for i in range(3)]
    assert all((tmp_path / "t-0" / n).read_bytes() == data for n, data in old.items())  # old segments untouched
    assert (tmp_path / "t-0" / "00000000000000000005.index").exists()
    verified = run_cli("verify", "--deep", tmp_path)
    assert verified.exit_code == 0, verified.output
    assert not [p for p in tmp_path.parent.iterdir() if p.name.startswith(f".{tmp_path.name}.")]  # no staging left


def test_an_offset_column_below_the_log_end_is_refused_and_nothing_moves(spark, tmp_path):
    df = spark.createDataFrame([(0, b"v0"), (1, b"v1")], "offset long, value binary")
    df.coalesce(1).write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    before = sorted(p.name for p in (tmp_path / "t-0").iterdir())
    with pytest.raises(Exception, match="already holds offsets up to 1"):
        df.coalesce(1).write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    assert sorted(p.name for p in (tmp_path / "t-0").iterdir()) == before


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


def test_write_options_are_checked_like_the_readers(spark, tmp_path):
    """Issue 32, item 6: .option("codc", "zstd") wrote uncompressed. A typo is refused naming the option meant; the
    Kafka producer settings a job for format("kafka") gives are not (they are ignored) and the codec is honoured."""
    df = spark.createDataFrame([(b"v",)], "VALUE binary")  # Spark's sink finds its columns whatever their case
    kafka = {"topic": "t", "kafka.bootstrap.servers": "broker:9092", "kafka.acks": "all"}
    with pytest.raises(Exception, match=r"no write option 'codc' \(did you mean codec\?\)"):
        df.write.format("kafka-log").mode("append").options(codc="zstd", **kafka).save(str(tmp_path / "out"))
    assert list(tmp_path.iterdir()) == []
    df.write.format("kafka-log").mode("append").options(codec="zstd", **kafka).save(str(tmp_path / "out"))
    back = spark.read.format("kafka-log").option("includeMetadata", "true").load(str(tmp_path / "out")).collect()
    assert [(bytes(r.value), r.codec) for r in back] == [(b"v", "zstd")]


@pytest.mark.parametrize("columns, message", [
    (["CAST(raise_error('a task ran') AS BINARY) AS key"], "it has no value column"),
    (["CAST(raise_error('a task ran') AS INT) AS value"], "column value is int, not binary or string"),
    (["CAST(raise_error('a task ran') AS STRING) AS value", "1L AS partition"], "column partition is bigint, not int"),
    (["CAST(raise_error('a task ran') AS STRING) AS value", "1.5 AS key"], "column key is decimal"),
    (["CAST(raise_error('a task ran') AS STRING) AS value", "array(named_struct('key', 1, 'value', 'x')) AS headers"],
     "column headers is array"),
])
def test_columns_are_checked_before_any_task_runs(spark, tmp_path, columns, message):
    """Spark's Kafka sink checks the columns when the query is planned; every task here would fail with 'a task
    ran' (raise_error), so the refusal must come first."""
    df = spark.range(1).selectExpr(*columns)
    with pytest.raises(Exception, match=message) as caught:
        df.write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path / "out"))
    assert "a task ran" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


def test_rows_without_a_partition_go_where_kafkas_default_partitioner_puts_them(spark, tmp_path):
    """Keyed rows: toPositive(murmur2(key)) % partitions, kafka-python's partitioner being the oracle; the topic's
    four partitions all exist afterwards, so the next append (no numPartitions) spreads over four too."""
    from kafka.partitioner.default import murmur2
    keys = [b"key-%d" % i for i in range(60)]
    df = spark.createDataFrame([(k, b"v") for k in keys], "key binary, value binary").repartition(3)
    df.write.format("kafka-log").mode("append").options(topic="t", numPartitions="4").save(str(tmp_path))
    again = spark.createDataFrame([(k, b"w") for k in keys[:20]], "key binary, value binary")
    again.write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t-0", "t-1", "t-2", "t-3"]
    placed = {}
    for part in range(4):
        for _, key, _, _ in _kafka_python_records(tmp_path / f"t-{part}"):
            placed.setdefault(part, []).append(key)
    for part, found in placed.items():
        assert all((murmur2(bytearray(k)) & 0x7FFFFFFF) % 4 == part for k in found)
    assert sorted(k for ks in placed.values() for k in ks) == sorted(keys + keys[:20])
    assert len(placed) == 4


def test_null_keys_spread_over_the_partitions_in_sticky_runs(spark, tmp_path):
    """Kafka's sticky partitioner: null-keyed records stay on one partition for about batch.size (16 KiB), then
    move; one task's rows are placed the same way every time it runs."""
    df = spark.createDataFrame([(b"%04d" % i + b"x" * 1020,) for i in range(200)], "value binary").coalesce(1)
    placements = []
    for run in ("a", "b"):
        df.write.format("kafka-log").mode("append").options(topic="t", numPartitions="4").save(str(tmp_path / run))
        placements.append({p: sorted(v[:4] for _, _, v, _ in _kafka_python_records(tmp_path / run / f"t-{p}"))
                           for p in range(4)})
    assert placements[0] == placements[1]
    counts = [len(v) for v in placements[0].values()]
    assert sum(counts) == 200 and sum(1 for c in counts if c) >= 2
    assert sorted(c % 16 for c in counts) == [0, 0, 0, 8]  # runs of 16 records of 1 KiB; the last run 200 - 192


def _stream_into(spark, source, out, checkpoint):
    """One run of a stream from JSON files in ``source`` into ``out``: everything available, then stop."""
    q = (spark.readStream.format("json").schema("key string, value string").load(str(source))
         .writeStream.format("kafka-log").option("topic", "s").option("numPartitions", "2")
         .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start(str(out)))
    q.awaitTermination(120)
    assert q.exception() is None


def _stream_values(out):
    got = {p: _kafka_python_records(out / f"s-{p}") for p in (0, 1)}
    for records in got.values():
        assert [o for o, *_ in records] == list(range(len(records)))  # offsets go on, no gap, no repeat
    return sorted(v for records in got.values() for _, _, v, _ in records)


def test_a_stream_is_written_exactly_once_across_restarts(spark, tmp_path):
    """writeStream.format("kafka-log"): each micro-batch appended once. A run after more input goes on from the
    checkpoint; a micro-batch Spark runs again (its commit lost from the checkpoint after the sink committed, as
    a crash between the two leaves it) is not written twice; another checkpoint on the same output is refused."""
    source, out, checkpoint = tmp_path / "in", tmp_path / "out", tmp_path / "cp"
    source.mkdir()
    (source / "1.json").write_text("".join(f'{{"key": "k{i}", "value": "a{i}"}}\n' for i in range(10)))
    _stream_into(spark, source, out, checkpoint)
    assert _stream_values(out) == sorted(b"a%d" % i for i in range(10))
    # a broker's high-watermark checkpoint in the output: each micro-batch's commit keeps it at the log ends
    counts = {p: len(_kafka_python_records(out / f"s-{p}")) for p in (0, 1)}
    (out / "replication-offset-checkpoint").write_text(f"0\n2\ns 0 {counts[0]}\ns 1 {counts[1]}\n")
    (source / "2.json").write_text("".join(f'{{"key": null, "value": "b{i}"}}\n' for i in range(5)))
    _stream_into(spark, source, out, checkpoint)
    expected = sorted([b"a%d" % i for i in range(10)] + [b"b%d" % i for i in range(5)])
    assert _stream_values(out) == expected
    assert _offset_checkpoint(out / "replication-offset-checkpoint") == {
        ("s", p): len(_kafka_python_records(out / f"s-{p}")) for p in (0, 1)}
    commits = sorted((checkpoint / "commits").iterdir(), key=lambda p: p.name)
    last = [p for p in commits if p.name.isdigit()][-1]
    last.unlink()  # Spark never recorded the last micro-batch: it runs it again
    (checkpoint / "commits" / f".{last.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum of it
    _stream_into(spark, source, out, checkpoint)
    assert (checkpoint / "commits" / last.name).exists()  # it did run again
    assert _stream_values(out) == expected
    verified = run_cli("verify", "--deep", out)
    assert verified.exit_code == 0, verified.output
    with pytest.raises(Exception, match="another query or a new checkpoint writes here"):
        _stream_into(spark, source, out, tmp_path / "other-checkpoint")
    assert _stream_values(out) == expected


def test_a_partition_the_topic_does_not_have_is_refused_naming_the_value(spark, tmp_path):
    """Kafka's producer refuses a record for a partition its topic lacks ("Partition 5 of topic t with partition
    count 2 is not present in metadata"); the sink does too, naming the value, and nothing is written. The count is
    numPartitions, else the topic's partition directories in the target; a partition option is refused before any
    task runs."""
    first = spark.createDataFrame([(b"k%d" % i, b"a%d" % i) for i in range(8)], "key binary, value binary")
    first.coalesce(1).write.format("kafka-log").mode("append").options(topic="t", numPartitions="2").save(
        str(tmp_path))
    before = {p.name: sorted(f.name for f in p.iterdir()) for p in tmp_path.iterdir()}
    assert sorted(before) == ["t-0", "t-1"]
    bad = spark.createDataFrame([(1, b"ok"), (5, b"too far")], "partition int, value binary").coalesce(1)
    with pytest.raises(Exception, match="partition column is 5 for topic 't', which has 2 partitions"):
        bad.write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    with pytest.raises(Exception, match=r"partition column is 5 for topic 't', which has 2 partitions"):
        bad.write.format("kafka-log").mode("append").options(topic="t", numPartitions="2").save(str(tmp_path))
    with pytest.raises(Exception, match=r"option\('partition'\) is 3 for topic 't', which has 2 partitions") as e:
        first.write.format("kafka-log").mode("append").options(topic="t", partition="3").save(str(tmp_path))
    assert "Task" not in str(e.value) and "stage" not in str(e.value).lower()  # refused on the driver
    assert {p.name: sorted(f.name for f in p.iterdir()) for p in tmp_path.iterdir()} == before
    bad.write.format("kafka-log").mode("append").options(topic="t", numPartitions="6").save(str(tmp_path))
    assert [v for _, _, v, _ in _kafka_python_records(tmp_path / "t-5")] == [b"too far"]


def _offset_checkpoint(path):
    from kdump.read.checkpoints import parse_checkpoint
    cp = parse_checkpoint(str(path), kind="offset-checkpoint")
    assert not cp.problems, cp.problems
    return {(t, p): o for t, p, o in cp.entries}


def test_an_append_keeps_the_log_directorys_checkpoints_true(spark, tmp_path):
    """A broker's log directory names per-partition offsets in its checkpoints: an append moves the high watermark
    and the recovery point to the new log end and gives a new partition its log start, so that a consumer (and
    kdump's batch read, which stops at the high watermark as one does) sees the appended records; other entries
    are kept. A target without checkpoints gets none (as a new topic's write)."""
    first = spark.createDataFrame([(b"a%d" % i,) for i in range(5)], "value binary").coalesce(1)
    first.write.format("kafka-log").mode("append").options(topic="t", partition="0").save(str(tmp_path))
    assert not [p.name for p in tmp_path.iterdir() if "checkpoint" in p.name]
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        (tmp_path / name).write_text("0\n2\nt 0 5\nother 3 42\n")
    (tmp_path / "log-start-offset-checkpoint").write_text("0\n1\nt 0 0\n")
    second = spark.createDataFrame([(0, b"b0"), (0, b"b1"), (1, b"c0")], "partition int, value binary")
    second.coalesce(1).write.format("kafka-log").mode("append").options(topic="t", numPartitions="2").save(
        str(tmp_path))
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        assert _offset_checkpoint(tmp_path / name) == {("t", 0): 7, ("t", 1): 1, ("other", 3): 42}
    assert _offset_checkpoint(tmp_path / "log-start-offset-checkpoint") == {("t", 0): 0, ("t", 1): 0}
    back = spark.read.format("kafka-log").load(str(tmp_path)).orderBy("partition", "offset").collect()
    assert [(r.partition, r.offset, bytes(r.value)) for r in back] == [
        (0, i, b"a%d" % i) for i in range(5)] + [(0, 5, b"b0"), (0, 6, b"b1"), (1, 0, b"c0")]
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".") and "checkpoint" in p.name]
    (tmp_path / "replication-offset-checkpoint").write_text("0\n3\nt 0 7\n")  # Kafka cannot read it: refused
    with pytest.raises(Exception, match=r"replication-offset-checkpoint: .*an append must keep it true"):
        first.write.format("kafka-log").mode("append").options(topic="t", partition="0").save(str(tmp_path))
    assert sorted(f.name for f in (tmp_path / "t-0").iterdir() if f.suffix == ".log") == [
        "00000000000000000000.log", "00000000000000000005.log"]  # nothing moved
