"""``spark.read.format("kafka-log")``: Spark's Kafka schema, and exactly the records ``kdump dump`` reads.

The reference is the CLI's own output (``kdump dump --format json --deep-iteration --print-data-log``),
run file by file over the whole corpus, the generated fixtures and the corrupt fixtures; the Spark side
is one query over all of them.
"""
import base64
import json
import os
from pathlib import Path

import pytest
from support.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
FIXTURE_DIRS = [ROOT / "fixtures" / d for d in ("corpus", "generated", "corrupt")]
TS_TYPES = {"NO_TIMESTAMP_TYPE": -1, "CREATE_TIME": 0, "LOG_APPEND_TIME": 1}


def segment_files():
    out = []
    for d in FIXTURE_DIRS:
        for root, _, files in os.walk(d):
            out += [os.path.join(root, f) for f in files if f.endswith(".log") and f[:-4].isdigit()]
    return sorted(out)


def _bytes(text, encoding):
    if encoding is None:
        return None
    return text.encode("utf-8") if encoding == "utf8" else base64.b64decode(text)


def cli_records(path):
    """(offset, record tuple) of every record ``kdump dump`` prints for one file."""
    result = run_cli("dump", "--format", "json", "--deep-iteration", "--print-data-log", path)
    assert result.exit_code in (0, 1), result.output
    out = []
    for line in result.stdout.splitlines():
        batch = json.loads(line)
        for r in batch.get("records", ()):
            headers = None
            if r.get("headers"):
                headers = tuple((h["key"], _bytes(h["value"], h["valueEncoding"])) for h in r["headers"])
            out.append((path, batch["position"], r["offset"], r["timestamp"] * 1000, TS_TYPES[r["timestampType"]],
                        _bytes(r["key"], r["keyEncoding"]), _bytes(r["value"], r["valueEncoding"]), headers,
                        batch["magic"], batch["codec"], batch["baseOffset"], batch["producerId"],
                        batch["producerEpoch"], batch["baseSequence"], batch["isTransactional"],
                        batch["isControl"], batch["partitionLeaderEpoch"], batch["crcValid"]))
    return out


def spark_row(row):
    headers = None if row.headers is None else tuple((h.key, None if h.value is None else bytes(h.value))
                                                     for h in row.headers)
    return (row.segment, row.position, row.offset, row.ts_us, row.timestampType,
            None if row.key is None else bytes(row.key), None if row.value is None else bytes(row.value), headers,
            row.magic, row.codec, row.baseOffset, row.producerId, row.producerEpoch, row.baseSequence,
            row.isTransactional, row.isControl, row.partitionLeaderEpoch, row.crcValid)


def test_default_schema_is_sparks_kafka_schema(spark):
    from pyspark.sql import types as T
    df = spark.read.format("kafka-log").load(str(ROOT / "fixtures/generated/v2-none-createtime"))
    # KafkaRecordToRowConverter.kafkaSchema(includeHeaders): every field nullable
    expected = T.StructType([
        T.StructField("key", T.BinaryType()), T.StructField("value", T.BinaryType()),
        T.StructField("topic", T.StringType()), T.StructField("partition", T.IntegerType()),
        T.StructField("offset", T.LongType()), T.StructField("timestamp", T.TimestampType()),
        T.StructField("timestampType", T.IntegerType())])
    assert df.schema == expected
    with_headers = spark.read.format("kafka-log").option("includeHeaders", "true").load(
        str(ROOT / "fixtures/generated/v2-none-createtime"))
    assert with_headers.schema == T.StructType(expected.fields + [T.StructField("headers", T.ArrayType(
        T.StructType([T.StructField("key", T.StringType()), T.StructField("value", T.BinaryType())])))])


def test_scan_equals_cli_reader_on_every_fixture(spark):
    files = segment_files()
    assert len(files) > 100
    expected = sorted((r for f in files for r in cli_records(f)), key=repr)
    df = (spark.read.format("kafka-log").option("includeHeaders", "true").option("includeMetadata", "true")
          .option("includeControl", "true").option("checkCrcs", "false").option("failOnDataLoss", "false").load(files)
          .selectExpr("*", "unix_micros(timestamp) AS ts_us"))
    got = sorted((spark_row(r) for r in df.collect()), key=repr)
    assert len(got) == len(expected) > 60000
    assert got == expected


def test_topic_and_partition_from_directory_name(spark, tmp_path):
    import shutil
    src = ROOT / "fixtures/generated/v2-none-createtime"
    for name in ("orders-3", "orders.eu-12"):
        shutil.copytree(src, tmp_path / name)
    rows = spark.read.format("kafka-log").load(str(tmp_path)).groupBy("topic", "partition").count().collect()
    n = spark.read.format("kafka-log").load(str(src)).count()
    assert sorted((r.topic, r.partition, r["count"]) for r in rows) == [("orders", 3, n), ("orders.eu", 12, n)]


def test_control_records_only_with_include_control(spark):
    path = str(ROOT / "fixtures/generated/v2-transactional")
    # (a DataFrameReader's option() changes the reader itself: one reader per setting)
    with_control = spark.read.format("kafka-log").options(includeMetadata="true", includeControl="true").load(path)
    without = spark.read.format("kafka-log").options(includeMetadata="true").load(path)
    assert with_control.where("isControl").count() > 0
    assert without.where("isControl").count() == 0
    assert without.count() == with_control.where("not isControl").count()


def test_user_schema_builds_only_its_columns(spark):
    path = str(ROOT / "fixtures/generated/v2-none-createtime")
    full = spark.read.format("kafka-log").load(path).select("offset", "value").collect()
    pruned = spark.read.format("kafka-log").schema("offset long, value binary").load(path)
    assert pruned.columns == ["offset", "value"]
    assert pruned.collect() == full
    with pytest.raises(Exception, match="cannot build column"):
        spark.read.format("kafka-log").schema("offset long, nosuch string").load(path).collect()


def test_damage_is_data_loss_that_fails_the_read_unless_failondataloss_is_false(spark):
    """Issue 32, item 2: with failOnDataLoss=true (Spark's default) a read that meets damage fails naming the file,
    the byte and the offsets lost (Kafka's own reading of the file: its .log.check.txt); false (or kdump's mode
    PERMISSIVE) reads past it; mode FAILFAST is failOnDataLoss=true."""
    import re
    path = ROOT / "fixtures/corpus/kafka-generated/corrupt/v2-crc-mismatch"
    check = (path / "00000000000000000000.log.check.txt").read_text()
    first_invalid = int(re.findall(r"^INVALID pos=(\d+)", check, re.M)[0])
    base, last = map(int, re.search(rf"^batch pos={first_invalid} size=\d+ magic=2 base=(\d+) last=(\d+)", check,
                                    re.M).groups())
    everything = spark.read.format("kafka-log").option("checkCrcs", "false").load(str(path)).count()
    for lenient in ({"failOnDataLoss": "false"}, {"mode": "PERMISSIVE"}):
        assert 0 < spark.read.format("kafka-log").options(**lenient).load(str(path)).count() < everything
    for strict in ({}, {"failOnDataLoss": "true"}, {"mode": "FAILFAST"}):
        with pytest.raises(Exception) as failed:
            spark.read.format("kafka-log").options(**strict).load(str(path)).count()
        message = str(failed.value)
        assert f"00000000000000000000.log: at byte {first_invalid}: stored CRC-32C" in message
        assert f"offsets {base}-{last} are lost" in message and "failOnDataLoss=false reads past it" in message


def test_a_truncated_tail_is_damage_a_batch_read_reports(spark, tmp_path):
    """A batch read reports a cut last batch as the CLI does: a crash-cut tail (where Kafka's readers stop too)
    fails no read (the read layer's one policy, Damage.fails: verify exits 0 on it) even with FAILFAST, the whole
    batches are read and the damage report names it; a stream waits for the rest instead (test_spark_stream.py)."""
    import shutil
    src = ROOT / "fixtures/generated/v2-none-createtime"
    shutil.copytree(src, tmp_path / "t-0")
    log = next((tmp_path / "t-0").glob("*.log"))
    whole = spark.read.format("kafka-log").load(str(tmp_path)).count()
    with open(log, "r+b") as f:
        f.truncate(log.stat().st_size - 5)
    read = spark.read.format("kafka-log").option("failOnDataLoss", "false").load(str(tmp_path)).count()
    assert 0 < read < whole
    assert spark.read.format("kafka-log").option("mode", "FAILFAST").load(str(tmp_path)).count() == read
    report = spark.read.format("kafka-log").option("report", "damage").load(str(tmp_path)).collect()
    assert len(report) == 1 and report[0].file == str(log) and report[0].partition == 0
    assert report[0].startByte < log.stat().st_size and report[0].description


def test_a_filter_that_excludes_every_partition_counts_zero(spark):
    df = spark.read.format("kafka-log").load(str(ROOT / "fixtures/generated/v2-none-createtime"))
    assert df.where("partition = 99").count() == 0
    assert df.count() > 0


def test_missing_path_is_a_clear_error(spark, tmp_path):
    with pytest.raises(Exception, match="no such file or directory"):
        spark.read.format("kafka-log").load(str(tmp_path / "nope")).count()


def _kafka_offsets(case: str) -> list[int]:
    """The offsets of every record of a corpus case, as Kafka's own reader lists them (its ``.log.json``)."""
    from tests.corpus import load_json
    view = load_json(ROOT / "fixtures/corpus/kafka-generated" / case / "00000000000000000000.log")
    return [r["offset"] for b in view["batches"] if not b["isControl"] for r in b["records"]]


@pytest.fixture
def filter_pushdown_on(spark):
    """Spark's Python filter pushdown switched on, as a user may have it (it is off by default)."""
    key = "spark.sql.python.filterPushdown.enabled"
    before = spark.conf.get(key, "false")
    spark.conf.set(key, "true")
    yield spark
    spark.conf.set(key, before)


def test_one_dataframe_under_many_filters_counts_right_every_time(filter_pushdown_on, tmp_path):
    """Issue 21, item 1: with filter pushdown on, the plan of one query must not leak into the next query of
    the same DataFrame (Spark 4.3 keeps a pushed read plan on the DataFrame's data source). The counts come from
    Kafka's own view of the files, not from kdump."""
    import shutil
    spark = filter_pushdown_on
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v2-none", tmp_path / "a-0")
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v1-gzip-createtime", tmp_path / "b-1")
    offsets = {"a": _kafka_offsets("v2-none"), "b": _kafka_offsets("v1-gzip-createtime")}
    every = [(t, o) for t, os_ in offsets.items() for o in os_]
    assert len(offsets["a"]) == 6117
    df = spark.read.format("kafka-log").load(str(tmp_path))
    df.createOrReplaceTempView("kafka_log_pushdown")
    queries = [
        ("offset between 1000 and 2000", lambda t, o: 1000 <= o <= 2000),
        ("offset < 100", lambda t, o: o < 100),
        (None, lambda t, o: True),
        ("topic = 'a' AND offset > 6000", lambda t, o: t == "a" and o > 6000),
        ("partition IN (1)", lambda t, o: t == "b"),
        (None, lambda t, o: True),
        ("offset = 5", lambda t, o: o == 5),
        ("topic = 'b'", lambda t, o: t == "b"),
        (None, lambda t, o: True),
    ]
    for condition, keep in queries:
        expected = sum(1 for t, o in every if keep(t, o))
        got = df.count() if condition is None else df.where(condition).count()
        assert got == expected, (condition, got, expected)
        view = spark.sql("SELECT count(*) FROM kafka_log_pushdown" + (f" WHERE {condition}" if condition else ""))
        assert view.first()[0] == expected, (condition, "view")


def test_a_slice_bounded_to_offsets_gives_exactly_those_records():
    """Bounds cut at record level (a batch that straddles a bound gives only its records inside) and skip whole
    batches outside them by header, never decompressing them."""
    from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
    path = str(ROOT / "fixtures/corpus/kafka-generated/v2-lz4/00000000000000000000.log")
    everything = _kafka_offsets("v2-lz4")
    lo, hi = everything[len(everything) // 3] + 1, everything[2 * len(everything) // 3] + 1
    read = [o for rb in read_slices([SegmentSlice(path, "t", 0, offsets=(lo, hi))], ReadOptions(columns=("offset",)))
            for o in rb.column("offset").to_pylist()]
    assert read == [o for o in everything if lo <= o < hi]


def _two_topics(tmp_path):
    import shutil
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v2-none", tmp_path / "a-0")
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v1-gzip-createtime", tmp_path / "b-1")
    return {"a": _kafka_offsets("v2-none"), "b": _kafka_offsets("v1-gzip-createtime")}


@pytest.mark.parametrize("option, value, topics", [
    ("subscribe", "a", ["a"]), ("subscribe", "a,b", ["a", "b"]), ("subscribePattern", "b.*", ["b"]),
    ("assign", '{"b": [1]}', ["b"]), ("assign", '{"b": [0]}', []),
])
def test_kafka_topic_selection_options_are_honoured(spark, tmp_path, option, value, topics):
    """Issue 21, item 2: a format("kafka") job's topic selection reads those topic-partitions only."""
    offsets = _two_topics(tmp_path)
    df = spark.read.format("kafka-log").option(option, value).load(str(tmp_path))
    assert df.count() == sum(len(offsets[t]) for t in topics)
    assert {r.topic for r in df.select("topic").distinct().collect()} == set(topics)


@pytest.mark.parametrize("option, value, message", [
    ("incldueHeaders", "true", "did you mean includeHeaders"),
    ("kafka.auto.offset.reset", "earliest", "set startingOffsets to earliest or latest instead"),
    ("includeHeaders", "yes", "includeHeaders='yes': expected true or false"),
    ("startingOffsets", '{"a": {"0": 5, "9": 1}}', "names a-9, which is not among the partitions read"),
    ("startingOffsets", "latest", "can't be latest for batch queries"),
])
def test_kafka_options_it_cannot_honour_fail_naming_the_option(spark, tmp_path, option, value, message):
    _two_topics(tmp_path)
    with pytest.raises(Exception, match=message):
        spark.read.format("kafka-log").option(option, value).load(str(tmp_path)).count()


def test_a_kafka_source_job_runs_with_only_the_format_and_path_changed(spark, tmp_path):
    """Issue 32, item 1: the options of a format("kafka") job (kafka.bootstrap.servers, which Spark's source
    requires, security settings, consumer tuning) are accepted and ignored with one note in the log, and the job
    reads what Kafka's own view of the files holds."""
    from kdump.spark.session import log_file
    offsets = _two_topics(tmp_path)
    log = Path(log_file())
    before = log.read_text(errors="replace") if log.exists() else ""
    df = (spark.read.format("kafka-log").option("kafka.bootstrap.servers", "broker1:9092,broker2:9092")
          .option("kafka.security.protocol", "SASL_SSL").option("kafkaConsumer.pollTimeoutMs", "10000")
          .option("subscribe", "a").option("startingOffsets", "earliest").option("endingOffsets", "latest")
          .load(str(tmp_path)))
    assert df.count() == len(offsets["a"])
    said = log.read_text(errors="replace")[len(before):]
    notes = [line for line in said.splitlines() if "ignoring kafka.bootstrap.servers" in line]
    assert len(notes) == 1 and "kafka.security.protocol" in notes[0] and "kafkaConsumer.pollTimeoutMs" in notes[0]


def test_a_refusal_reaches_the_user_as_its_sentence_on_the_first_line(spark, tmp_path):
    """Issue 32, item 5: the first line of the error a user sees is kdump's sentence, not a Python traceback's
    header with the sentence at its end (register() asks Spark for the error without kdump's frames). Spark hands
    a Python data source its option names lower-cased: the typo is quoted that way, the option meant as spelt."""
    _two_topics(tmp_path)
    with pytest.raises(Exception) as refused:
        spark.read.format("kafka-log").option("incldueHeaders", "true").load(str(tmp_path)).count()
    first = str(refused.value).splitlines()[0]
    assert "kafka-log has no option 'incldueheaders' (did you mean includeHeaders?)" in first
    assert "Traceback" not in str(refused.value)


def test_file_uris_are_local_paths(spark, tmp_path):
    """Issue 32, item 1: file:///abs/path reads the local path (it was taken for a relative path)."""
    offsets = _two_topics(tmp_path)
    assert spark.read.format("kafka-log").load(tmp_path.as_uri()).count() == len(offsets["a"]) + len(offsets["b"])
    assert spark.read.format("kafka-log").load("file://" + str(tmp_path / "a-0")).count() == len(offsets["a"])


def test_min_partitions_and_max_records_per_partition_shape_the_tasks(spark, tmp_path):
    """Issue 32, items 1 and 3: minPartitions cuts a segment that has no .index (at batch starts the header walk
    finds); maxRecordsPerPartition gives tasks of at most that many offsets; both read every record once, as
    Kafka's own view of the files lists them."""
    from pyspark.sql.functions import spark_partition_id
    import shutil
    offsets = _two_topics(tmp_path)
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v1-none-createtime", tmp_path / "c-2")
    assert not list((tmp_path / "c-2").glob("*.index"))  # 1,116 messages, one segment
    split = spark.read.format("kafka-log").options(minPartitions="6", openCostInBytes="0", subscribe="c")
    df = split.load(str(tmp_path))
    assert df.rdd.getNumPartitions() >= 6
    offsets["c"] = _kafka_offsets("v1-none-createtime")
    assert sorted(r.offset for r in df.select("offset").collect()) == offsets["c"]
    capped = spark.read.format("kafka-log").option("maxRecordsPerPartition", "1000").load(str(tmp_path))
    per_task = capped.groupBy(spark_partition_id().alias("task")).count().collect()
    spans = {t: -(-(o[-1] - o[0] + 1) // 1000) for t, o in offsets.items()}
    assert capped.rdd.getNumPartitions() == len(per_task) == sum(spans.values())
    assert max(r["count"] for r in per_task) <= 1000
    assert sorted((r.topic, r.offset) for r in capped.select("topic", "offset").collect()) == \
        sorted((t, o) for t, os_ in offsets.items() for o in os_)
    # both: the ranges maxRecordsPerPartition leaves are cut again toward minPartitions, by the arithmetic of Spark's
    # KafkaOffsetRangeCalculator (a range whose share rounds to one task stays whole, the others share what is left
    # in proportion, rounded half up): here every range gets two or three tasks
    sizes = [min(1000, o[-1] + 1 - a) for o in offsets.values() for a in range(o[0], o[-1] + 1, 1000)]
    wanted = 2 * len(sizes) + 1
    total = sum(sizes)
    whole = [max(int(s / total * wanted + 0.5), 1) == 1 for s in sizes]
    rest, rest_parts = total - sum(s for s, w in zip(sizes, whole, strict=True) if w), max(wanted - sum(whole), 1)
    spark_tasks = sum(1 if w else max(int(s / rest * rest_parts + 0.5), 1) for s, w in zip(sizes, whole, strict=True))
    assert spark_tasks > len(sizes)
    both = (spark.read.format("kafka-log").options(maxRecordsPerPartition="1000", minPartitions=str(wanted))
            .load(str(tmp_path)))
    per_task = both.groupBy(spark_partition_id().alias("task")).count().collect()
    assert both.rdd.getNumPartitions() == len(per_task) == spark_tasks
    assert max(r["count"] for r in per_task) <= 1000
    assert sorted((r.topic, r.offset) for r in both.select("topic", "offset").collect()) == \
        sorted((t, o) for t, os_ in offsets.items() for o in os_)


def test_kafka_isolation_level_is_the_isolation_level(spark):
    path = str(ROOT / "fixtures/corpus/kafka-generated/v2-transactional")
    committed = spark.read.format("kafka-log").option("isolationLevel", "read_committed").load(path).count()
    kafka_spelling = spark.read.format("kafka-log").option("kafka.isolation.level", "read_committed").load(path)
    uncommitted = spark.read.format("kafka-log").load(path).count()
    assert kafka_spelling.count() == committed < uncommitted


def _kafka_records(case: str) -> list[tuple[int, int]]:
    """(offset, timestamp) of every data record of a corpus case, as Kafka's own reader lists them."""
    from tests.corpus import load_json
    view = load_json(ROOT / "fixtures/corpus/kafka-generated" / case / "00000000000000000000.log")
    return [(r["offset"], r["timestamp"]) for b in view["batches"] if not b["isControl"] for r in b["records"]]


def _offsets_read(spark, path, **options):
    df = spark.read.format("kafka-log").options(**options).load(str(path))
    return sorted((r.topic, r.offset) for r in df.select("topic", "offset").collect())


def test_kafka_offset_bounds_read_exactly_that_range(spark, tmp_path):
    """Issue 21, item 2: startingOffsets/endingOffsets as Spark's Kafka source reads them (end exclusive, -2
    earliest, -1 latest), checked against Kafka's own view of the files."""
    offsets = _two_topics(tmp_path)
    a, b = offsets["a"], offsets["b"]
    got = _offsets_read(spark, tmp_path, startingOffsets=json.dumps({"a": {"0": a[100]}, "b": {"1": -2}}),
                        endingOffsets=json.dumps({"a": {"0": a[2000]}, "b": {"1": -1}}))
    assert got == sorted([("a", o) for o in a if a[100] <= o < a[2000]] + [("b", o) for o in b])


def test_kafka_timestamp_bounds_start_and_end_where_kafka_would(spark, tmp_path):
    import shutil
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v2-lz4", tmp_path / "a-0")
    records = _kafka_records("v2-lz4")
    times = sorted({t for _, t in records})
    start, end = times[len(times) // 4], times[3 * len(times) // 4]
    first = min(o for o, t in records if t >= start)  # Kafka's offsetsForTimes
    stop = min(o for o, t in records if t >= end)
    got = _offsets_read(spark, tmp_path, startingTimestamp=str(start), endingTimestamp=str(end))
    assert got == [("a", o) for o, _ in records if first <= o < stop] and got


def test_batch_reads_stop_at_the_high_watermark_unless_asked(spark, tmp_path):
    offsets = _two_topics(tmp_path)
    hw = offsets["a"][500]
    (tmp_path / "replication-offset-checkpoint").write_text(f"0\n1\na 0 {hw}\n")
    got = _offsets_read(spark, tmp_path)
    assert got == sorted([("a", o) for o in offsets["a"] if o < hw] + [("b", o) for o in offsets["b"]])
    everything = _offsets_read(spark, tmp_path, stopAtHighWatermark="false")
    assert len(everything) == len(offsets["a"]) + len(offsets["b"])


def test_a_start_before_the_log_is_data_loss(spark, tmp_path):
    import shutil
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v2-none", tmp_path / "a-0")
    src = tmp_path / "a-0" / "00000000000000000000.log"
    src.rename(tmp_path / "a-0" / "00000000000000000100.log")  # as if retention removed offsets 0..99
    bounds = {"startingOffsets": '{"a": {"0": 10}}', "endingOffsets": '{"a": {"0": -1}}'}
    with pytest.raises(Exception, match="before the first offset on disk, 100"):
        _offsets_read(spark, tmp_path, **bounds)
    assert _offsets_read(spark, tmp_path, failOnDataLoss="false", **bounds)


def test_staging_and_hidden_directories_are_not_data(spark, tmp_path):
    """Issue 21, item 4: what a killed write leaves (kdump's staging and temporary directories) and any hidden
    directory is passed over, by the Spark source and by dump, as Spark's file sources pass over such paths."""
    import shutil
    offsets = _two_topics(tmp_path)
    for hidden in (".out.abcd1234.tmp/task-0", ".kdump-staging-0f1e", ".snapshot"):
        shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v2-none", tmp_path / hidden / "a-0")
    assert spark.read.format("kafka-log").load(str(tmp_path)).count() == len(offsets["a"]) + len(offsets["b"])
    from support.cli import run_cli
    dumped = run_cli("dump", tmp_path)
    assert dumped.exit_code == 0 and ".snapshot" not in dumped.stdout and ".tmp" not in dumped.stdout


def test_linked_segments_are_read_in_every_partition_that_names_them(spark, tmp_path):
    """Issue 21, item 5: eight partitions whose segments are hard links or symlinks to two files read as eight."""
    import shutil
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v2-none", tmp_path / "src-0")
    source = tmp_path / "src-0" / "00000000000000000000.log"
    logs = tmp_path / "logs"
    for p in range(8):
        (logs / f"t-{p}").mkdir(parents=True)
        target = logs / f"t-{p}" / source.name
        if p % 2:
            os.link(source, target)
        else:
            target.symlink_to(source)
    per = len(_kafka_offsets("v2-none"))
    df = spark.read.format("kafka-log").load(str(logs))
    assert df.count() == 8 * per
    assert sorted(r.partition for r in df.select("partition").distinct().collect()) == list(range(8))


def test_the_damage_report_lists_what_permissive_skipped(spark):
    """One row per damaged region, with the byte range and the offsets lost that Kafka's own reading of the file
    gives (its .log.check.txt: the invalid batch's position, size and offsets)."""
    import re
    path = ROOT / "fixtures/corpus/kafka-generated/corrupt/v2-crc-mismatch"
    report = spark.read.format("kafka-log").option("report", "damage").load(str(path)).collect()
    check = (path / "00000000000000000000.log.check.txt").read_text()
    invalid = [int(p) for p in re.findall(r"^INVALID pos=(\d+)", check, re.M)]
    batches = {int(m[0]): (int(m[1]), int(m[2]), int(m[3]))
               for m in re.findall(r"^batch pos=(\d+) size=(\d+) magic=2 base=(\d+) last=(\d+)", check, re.M)}
    expected = [(pos, pos + batches[pos][0], batches[pos][1], batches[pos][2]) for pos in invalid]
    assert [(r.startByte, r.endByte, r.firstLostOffset, r.lastLostOffset) for r in report] == expected
    assert all(r.code == "crc-mismatch" and r.topic is None for r in report)
