"""Remote paths through pyarrow.fs, against a real S3-compatible server (moto's server mode, started here)."""
from pathlib import Path

import pytest

from test_spark_read import cli_records

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "fixtures/generated/v2-lz4-createtime"


@pytest.fixture(scope="module")
def s3():
    pytest.importorskip("pyarrow")
    server_mod = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"{host}:{port}"
    client = boto3.client("s3", endpoint_url=f"http://{endpoint}", region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
    client.create_bucket(Bucket="tiered")
    for f in sorted(SRC.iterdir()):
        client.upload_file(str(f), "tiered", f"logs/orders-2/{f.name}")
    yield {"endpoint_override": endpoint, "scheme": "http", "access_key": "test", "secret_key": "test",
           "region": "us-east-1"}
    server.stop()


def expected():
    return sorted(((r[2], r[6]) for f in SRC.glob("*.log") for r in cli_records(str(f)) if not r[15]), key=repr)


def test_library_reads_segments_in_s3(s3):
    from kdump.spark.arrow import ReadOptions
    from kdump.spark.jobs import export_local  # plan + read + pyarrow, no Spark
    from kdump.spark.plan import find_segments
    segs = find_segments(["s3://tiered/logs"], s3)
    assert [(s.topic, s.partition) for s in segs] == [("orders", 2)]
    import tempfile
    import pyarrow.parquet as pq
    with tempfile.TemporaryDirectory() as out:
        export_local(["s3://tiered/logs"], out, options=ReadOptions(storage_options=s3))
        table = pq.read_table(out)
    assert sorted(zip(table.column("offset").to_pylist(), table.column("value").to_pylist()), key=repr) == expected()


def test_spark_reads_segments_in_s3(spark, s3):
    df = spark.read.format("kafka-log").options(**{f"fs.{k}": v for k, v in s3.items()}).load("s3://tiered/logs")
    rows = df.select("topic", "partition", "offset", "value").collect()
    assert {(r.topic, r.partition) for r in rows} == {("orders", 2)}
    assert sorted(((r.offset, None if r.value is None else bytes(r.value)) for r in rows), key=repr) == \
        sorted(expected(), key=repr)
