"""``spark.read.format("kafka-log").option("report", "damage").load(PATHS)``: the damage a read of the same
paths (and options) passes over, one row per damaged region, so that a Spark user can query what PERMISSIVE
skipped instead of finding it in an executor's log.

Rows: ``file``, ``topic``, ``partition``, ``startByte``, ``endByte`` (exclusive; null: to the end of the file),
``code`` (the finding code ``kdump verify`` reports), ``description`` (the sentence every kdump command says for
it, :meth:`kdump.read.damage.Damage.describe`), ``firstLostOffset`` and ``lastLostOffset`` (null where the bytes
do not tell; ``lastLostOffset`` null with a first one: open-ended).
"""
from __future__ import annotations

from dataclasses import replace

import pyarrow as pa

from kdump.read.damage import Damage

COLUMNS = [
    ("file", pa.string()), ("topic", pa.string()), ("partition", pa.int32()), ("startByte", pa.int64()),
    ("endByte", pa.int64()), ("code", pa.string()), ("description", pa.string()),
    ("firstLostOffset", pa.int64()), ("lastLostOffset", pa.int64()),
]
ARROW_SCHEMA = pa.schema(COLUMNS)


def spark_schema():
    from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType
    spark_type = {pa.string(): StringType(), pa.int32(): IntegerType(), pa.int64(): LongType()}
    return StructType([StructField(name, spark_type[t], True) for name, t in COLUMNS])


def damage_rows(slices, options):
    """The damage of ``slices`` read with ``options`` (PERMISSIVE whatever the read's mode: the report is the
    list of what was skipped), as one Arrow batch."""
    from kdump.spark.arrow import read_slices
    found: list[tuple] = []

    def collect(sl, error) -> None:
        d = error if isinstance(error, Damage) else Damage.of_error(error)
        lost = d.lost_offsets()
        found.append((sl.location, sl.topic, sl.partition, d.start, d.end, d.code, d.describe(), lost.first,
                      lost.last))

    for _ in read_slices(slices, replace(options, failfast=False, columns=("offset",)), on_damage=collect):
        pass  # the records are read (their damage is found by decoding them) and dropped
    arrays = [pa.array([row[i] for row in found], t) for i, (_, t) in enumerate(COLUMNS)]
    return pa.RecordBatch.from_arrays(arrays, schema=ARROW_SCHEMA)
