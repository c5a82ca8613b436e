"""Issue 21, item 5: the damage a PERMISSIVE read skips, counted by Spark accumulators the driver reads
(``kdump.spark.register`` returns the counter). The expected regions and bytes are Kafka's own reading of the
corrupt corpus file (its ``.log.check.txt``: each invalid batch's position and size)."""
import re
import shutil
from pathlib import Path

from tests.spark_session import spark  # noqa: F401  (the session fixture)

ROOT = Path(__file__).resolve().parent.parent
CASE = ROOT / "fixtures/corpus/kafka-generated/corrupt/v2-crc-mismatch"


def _kafka_invalid_batches() -> list[int]:
    check = (CASE / "00000000000000000000.log.check.txt").read_text()
    sizes = {int(m[0]): int(m[1]) for m in re.findall(r"^batch pos=(\d+) size=(\d+)", check, re.M)}
    return [sizes[int(p)] for p in re.findall(r"^INVALID pos=(\d+)", check, re.M)]


def test_register_counts_the_regions_a_permissive_read_skips(spark, tmp_path):  # noqa: F811
    import kdump.spark
    counter = kdump.spark.damage_counter(spark)
    assert counter is not None  # build_session registers through kdump.spark.register
    invalid = _kafka_invalid_batches()
    assert invalid  # the case has damage to count
    shutil.copytree(CASE, tmp_path / "t-0")
    shutil.copytree(ROOT / "fixtures/generated/v2-none-createtime", tmp_path / "clean-0")
    counter.reset()
    spark.read.format("kafka-log").load(str(tmp_path / "clean-0")).count()
    assert tuple(counter.value) == (0, 0)
    lenient = spark.read.format("kafka-log").option("failOnDataLoss", "false")
    lenient.load(str(tmp_path)).count()
    assert tuple(counter.value) == (len(invalid), sum(invalid))
    # each action counts what it read: a second one adds the same again
    lenient.load(str(tmp_path / "t-0")).selectExpr("sum(length(value))").collect()
    assert tuple(counter.value) == (2 * len(invalid), 2 * sum(invalid))
    # checkCrcs=false: a CRC mismatch is not damage, nothing is skipped or counted
    counter.reset()
    lenient.option("checkCrcs", "false").load(str(tmp_path)).count()
    assert tuple(counter.value) == (0, 0)
