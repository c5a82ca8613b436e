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


def test_existing_segments_are_never_replaced(spark, tmp_path):
    df = spark.createDataFrame([(b"v",)], "value binary")
    df.write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    with pytest.raises(Exception, match="already holds segments"):
        df.write.format("kafka-log").mode("append").option("topic", "t").save(str(tmp_path))
    with pytest.raises(Exception, match="never replaces"):
        df.write.format("kafka-log").mode("overwrite").option("topic", "t").save(str(tmp_path))
