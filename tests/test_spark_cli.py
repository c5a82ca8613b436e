"""``kdump spark scan|verify|stats`` against the single-process commands and the CLI reader."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from test_spark_read import cli_records

ROOT = Path(__file__).resolve().parent.parent
VERIFY_PATHS = [str(ROOT / "fixtures" / d) for d in ("generated", "corrupt")] + [
    str(ROOT / "fixtures/corpus/kafka-generated/corrupt"), str(ROOT / "fixtures/corpus/broker-written")]


def run(*args):
    from kdump.cli import cli
    return CliRunner().invoke(cli, list(args))


def test_spark_verify_gives_the_findings_of_verify_deep(spark):
    local = run("verify", "--deep", "--format", "json", *VERIFY_PATHS)
    distributed = run("spark", "verify", "--format", "json", *VERIFY_PATHS)
    assert local.exit_code == distributed.exit_code == 1
    assert json.loads(distributed.stdout) == json.loads(local.stdout)
    assert len(json.loads(local.stdout)["files"]) > 50


def test_spark_verify_exit_codes(spark, tmp_path):
    sound = str(ROOT / "fixtures/generated/v2-none-createtime")
    assert run("spark", "verify", sound).exit_code == run("verify", "--deep", sound).exit_code == 0
    missing = str(tmp_path / "nope")
    assert run("spark", "verify", missing).exit_code == run("verify", "--deep", missing).exit_code == 2


def test_spark_stats_counts_what_the_reader_reads(spark):
    path = ROOT / "fixtures/generated"
    result = run("spark", "stats", "--format", "json", str(path))
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    logs = sorted(str(p) for p in path.rglob("*.log"))
    records = [r for f in logs for r in cli_records(f)]
    total = doc["total"]
    assert total["segments"] == len(logs)
    assert total["records"] == len(records)
    assert total["bytes"] == sum(os.path.getsize(f) for f in logs)
    assert set(doc["partitions"]) == {os.path.dirname(f) for f in logs}
    assert sum(p["records"] for p in doc["partitions"].values()) == total["records"]
    assert set(total["magics"]) == {"0", "1", "2"}
    assert {"none", "gzip", "snappy", "lz4", "zstd"} <= set(total["codecs"])


def test_spark_scan_exports_every_record_to_parquet(spark, tmp_path):
    import pyarrow.parquet as pq
    path = ROOT / "fixtures/generated"
    out = tmp_path / "out"
    result = run("spark", "scan", str(path), "-o", str(out))
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    got = sorted(((r["offset"], r["key"], r["value"]) for r in table.select(["offset", "key", "value"]).to_pylist()),
                 key=repr)
    # control records are not exported (as Spark's Kafka source)
    expected = sorted(((r[2], r[5], r[6]) for f in sorted(map(str, path.rglob("*.log"))) for r in cli_records(f)
                       if not r[15]), key=repr)
    assert got == expected
    again = run("spark", "scan", str(path), "-o", str(out))
    assert again.exit_code == 2 and "not empty" in again.output


def test_missing_java_is_a_clear_message_and_exit_2(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java anywhere
    env["PYTHONPATH"] = str(ROOT)
    proc = subprocess.run([sys.executable, "-m", "kdump", "spark", "stats", str(ROOT / "fixtures/generated")],
                          env=env, capture_output=True, text=True, timeout=120)
    if "pyspark is not installed" in proc.stderr:
        pytest.skip("pyspark is not installed")
    assert proc.returncode == 2
    assert "Java 17" in proc.stderr and "Traceback" not in proc.stderr
