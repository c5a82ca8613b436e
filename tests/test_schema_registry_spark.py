"""The kafka-log source with ``valueDecoder``/``keyDecoder`` schema-registry: ``valueJson``/``keyJson`` and
``valueSchemaId``/``keySchemaId`` beside Spark's Kafka columns, on the producer stack of
tests/schema_registry_stack.py; every value is what the producer encoded."""
import json
import os

import pytest
import schema_registry_stack as stack  # skips the module without fastavro, protobuf, grpcio-tools

TOPICS = ("orders-avro", "orders-proto", "orders-json")


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    return stack.built_log_dir(tmp_path_factory)


def test_decoded_columns_hold_what_was_encoded(spark, log_dir):
    root, expected = log_dir
    for topic in TOPICS:
        df = (spark.read.format("kafka-log").option("valueDecoder", "schema-registry")
              .option("keyDecoder", "schema-registry").load(os.path.join(root, f"{topic}-0")))
        assert df.columns[-4:] == ["keyJson", "keySchemaId", "valueJson", "valueSchemaId"]
        rows = sorted(df.select("offset", "keyJson", "valueJson", "valueSchemaId").collect(), key=lambda r: r.offset)
        assert len(rows) == len(expected[topic])
        for row, (want_key, want_value) in zip(rows, expected[topic], strict=True):
            if isinstance(want_value, (dict, list)):
                assert json.loads(row.valueJson) == want_value
                assert isinstance(row.valueSchemaId, int)
            else:  # null, or a value that does not decode: no JSON
                assert row.valueJson is None
            if isinstance(want_key, str) and want_key.startswith("k"):
                assert json.loads(row.keyJson) == want_key


def test_value_json_is_ready_for_from_json(spark, log_dir):
    root, _ = log_dir
    df = (spark.read.format("kafka-log").option("valueDecoder", "schema-registry")
          .load(os.path.join(root, "orders-json-0")))
    parsed = df.selectExpr("from_json(valueJson, 'id long, customer struct<name: string>') AS v").collect()
    assert [(r.v.id, r.v.customer.name if r.v.customer else None) for r in parsed if r.v is not None] == \
        [(1, "ada"), (2, None)]


def test_schema_ids_without_the_json(spark, log_dir):
    root, _ = log_dir
    df = (spark.read.format("kafka-log").option("schemas", os.path.join(root, "_schemas-0"))
          .schema("offset long, valueSchemaId int").load(os.path.join(root, "orders-avro-0")))
    assert [r.valueSchemaId for r in sorted(df.collect(), key=lambda r: r.offset)] == [2, 2, 3, None, None, 99, 8,
                                                                                       9, 3, 2]


def test_scan_export_carries_the_decoded_columns(log_dir, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    from kdump.spark.arrow import ReadOptions
    from kdump.spark.jobs import export_local
    from kdump.spark.schema import default_columns
    root, expected = log_dir
    options = ReadOptions(columns=(*default_columns(), "valueJson", "valueSchemaId"),
                          schemas=os.path.join(root, "_schemas-0"))
    export_local([os.path.join(root, "orders-proto-0")], str(tmp_path / "out"), "parquet", options)
    table = pq.read_table(str(tmp_path / "out"))
    values = [json.loads(v) if v else None for v in table.column("valueJson").to_pylist()]
    assert values[:4] == [want for _, want in expected["orders-proto"][:4]]
    assert table.column("valueSchemaId").to_pylist() == [5] * 6
