"""The columns of the ``kafka-log`` data source, as Arrow types (library side) and Spark types.

The default columns are exactly those of Spark's own Kafka source (``KafkaRecordToRowConverter``:
every field nullable, ``headers`` an array of ``struct<key: string, value: binary>`` that is null for a
record without headers), so a job written for ``format("kafka")`` runs unchanged on segments.
``includeMetadata`` adds the batch-level columns. One table below defines every column once; the Arrow
schema is what Spark's ``to_arrow_schema(schema, timezone="UTC")`` gives for the Spark schema (Spark
checks the first Arrow batch against it exactly).
"""
from __future__ import annotations

import pyarrow as pa

HEADERS_TYPE = pa.list_(pa.field("element", pa.struct([pa.field("key", pa.string()),
                                                          pa.field("value", pa.binary())])))

# name -> Arrow type; Spark type names are derived in spark_schema().
KAFKA_COLUMNS = {
    "key": pa.binary(), "value": pa.binary(), "topic": pa.string(), "partition": pa.int32(),
    "offset": pa.int64(), "timestamp": pa.timestamp("us", tz="UTC"), "timestampType": pa.int32(),
}
HEADERS_COLUMN = {"headers": HEADERS_TYPE}
METADATA_COLUMNS = {
    "magic": pa.int32(), "codec": pa.string(), "baseOffset": pa.int64(), "producerId": pa.int64(),
    "producerEpoch": pa.int32(), "baseSequence": pa.int32(), "isTransactional": pa.bool_(),
    "isControl": pa.bool_(), "partitionLeaderEpoch": pa.int32(), "segment": pa.string(),
    "position": pa.int64(), "crcValid": pa.bool_(),
}
# With keyDecoder/valueDecoder schema-registry (kdump.spark.decoded): the key or value decoded, as JSON text
# ready for from_json, and the schema id its framing names; each made from the key or value column
DECODED_COLUMNS = {"keyJson": pa.string(), "keySchemaId": pa.int32(), "valueJson": pa.string(),
                   "valueSchemaId": pa.int32()}
DECODED_FROM = {"keyJson": "key", "keySchemaId": "key", "valueJson": "value", "valueSchemaId": "value"}
ALL_COLUMNS = {**KAFKA_COLUMNS, **HEADERS_COLUMN, **METADATA_COLUMNS}
BUILDABLE_COLUMNS = {**ALL_COLUMNS, **DECODED_COLUMNS}  # what a read can be asked for (the decoded ones need schemas)

# Columns that vary per record (built from the record buffers); the others are constant per batch.
RECORD_COLUMNS = ("key", "value", "offset", "timestamp", "headers")


def default_columns(include_headers: bool = False, include_metadata: bool = False) -> list[str]:
    names = list(KAFKA_COLUMNS)
    if include_headers:
        names += list(HEADERS_COLUMN)
    if include_metadata:
        names += list(METADATA_COLUMNS)
    return names


def arrow_schema(columns) -> pa.Schema:
    """The Arrow schema of the given column names (all nullable, like Spark's)."""
    unknown = [c for c in columns if c not in BUILDABLE_COLUMNS]
    if unknown:
        raise ValueError(f"unknown kafka-log column(s) {', '.join(unknown)}; known: {', '.join(BUILDABLE_COLUMNS)}")
    return pa.schema([pa.field(c, BUILDABLE_COLUMNS[c]) for c in columns])


def _spark_type(arrow_type):
    from pyspark.sql import types as T
    simple = {pa.binary(): T.BinaryType(), pa.string(): T.StringType(), pa.int32(): T.IntegerType(),
              pa.int64(): T.LongType(), pa.bool_(): T.BooleanType(),
              pa.timestamp("us", tz="UTC"): T.TimestampType()}
    if arrow_type in simple:
        return simple[arrow_type]
    if arrow_type == HEADERS_TYPE:
        return T.ArrayType(T.StructType([T.StructField("key", T.StringType()),
                                         T.StructField("value", T.BinaryType())]))
    raise TypeError(arrow_type)  # pragma: no cover - every column above is mapped


def spark_schema(columns):
    """The Spark ``StructType`` of the given column names."""
    from pyspark.sql import types as T
    return T.StructType([T.StructField(c, _spark_type(BUILDABLE_COLUMNS[c])) for c in columns])


def columns_of(spark_struct) -> list[str]:
    """Column names of a user-given Spark schema, refusing names or types this source cannot build."""
    names = []
    for f in spark_struct.fields:
        if f.name not in BUILDABLE_COLUMNS:
            raise ValueError(f"kafka-log cannot build column {f.name!r}; it knows {', '.join(BUILDABLE_COLUMNS)}")
        want = _spark_type(BUILDABLE_COLUMNS[f.name])
        if f.dataType != want:
            raise ValueError(f"kafka-log column {f.name!r} is {want.simpleString()}, "
                             f"not {f.dataType.simpleString()}")
        names.append(f.name)
    return names
