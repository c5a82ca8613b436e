"""kafka-log on a real standalone cluster (a master and a worker started by the test with ``spark-class``, a
driver in its own process): executors have their own working directory, so relative paths, pickling and the
Python workers a worker daemon starts are exercised as a user's cluster job exercises them (issue 21, items 6-7).
The expected records come from Kafka's own view of the corpus files."""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.spark_session import require_runtime
from tests.support.spark_cluster import daemon_env, run_driver, standalone_cluster

ROOT = Path(__file__).resolve().parent.parent
CASES = {"a-0": "v2-none", "b-1": "v1-gzip-createtime"}

pytestmark = pytest.mark.slow

DRIVER = r'''
import json, sys
from kdump.spark.session import build_session
spark = build_session(sys.argv[1], app_name="kdump-cluster-test",
                      conf={"spark.executor.memory": "512m", "spark.cores.max": "2"})
df = spark.read.format("kafka-log").load("logs")                      # a relative path
rows = df.select("topic", "partition", "offset").collect()
df.write.format("kafka-log").mode("append").save("copied")           # relative too
copied = spark.read.format("kafka-log").load("copied").select("topic", "offset").collect()
executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
print(json.dumps({"rows": [[r.topic, r.partition, r.offset] for r in rows],
                  "copied": [[r.topic, r.offset] for r in copied], "executors": executors}))
spark.stop()
'''


def _kafka_offsets(case):
    from tests.corpus import load_json
    view = load_json(ROOT / "fixtures/corpus/kafka-generated" / case / "00000000000000000000.log")
    return [r["offset"] for b in view["batches"] if not b["isControl"] for r in b["records"]]


def test_a_cluster_job_with_relative_paths_reads_and_writes_every_record(tmp_path):
    require_runtime()
    job = tmp_path / "job"
    for name, case in CASES.items():
        shutil.copytree(ROOT / "fixtures/corpus/kafka-generated" / case, job / "logs" / name)
    expected = sorted((name.split("-")[0], int(name.split("-")[1]), o) for name, case in CASES.items()
                      for o in _kafka_offsets(case))
    with standalone_cluster(tmp_path) as master:
        driver = run_driver(DRIVER, job, master)
        assert driver.returncode == 0, driver.stderr[-3000:]
        result = json.loads(driver.stdout.strip().splitlines()[-1])
        cli = [sys.executable, "-m", "kdump", "spark"]
        verify = subprocess.run([*cli, "verify", "--master", master, "logs"], cwd=job, env=daemon_env(),
                                capture_output=True, text=True, timeout=600)
        scan = subprocess.run([*cli, "scan", "--master", master, "logs", "-o", "exported"], cwd=job,
                              env=daemon_env(), capture_output=True, text=True, timeout=600)
    assert sorted(map(tuple, result["rows"])) == expected
    assert sorted(map(tuple, result["copied"])) == sorted((t, o) for t, _, o in expected)
    assert result["executors"] >= 2  # the driver and at least one executor of the worker
    assert list((tmp_path / "work").glob("app-*/*")), "no executor ran in the worker's work directory"
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "unreadable" not in verify.stdout + verify.stderr
    assert scan.returncode == 0, scan.stdout + scan.stderr
    import pyarrow.parquet as pq
    assert sum(pq.read_table(p).num_rows for p in (job / "exported").glob("*.parquet")) == len(expected)


CONNECT_CLIENT = r'''
import json, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
from kdump.spark.datasource import KafkaLogDataSource
spark.dataSource.register(KafkaLogDataSource)
df = spark.read.format("kafka-log").load(sys.argv[2])
rows = df.select("topic", "partition", "offset").collect()
df.write.format("kafka-log").mode("append").save(sys.argv[3])
copied = spark.read.format("kafka-log").load(sys.argv[3]).count()
try:
    spark.read.format("kafka-log").option("incldueHeaders", "true").load(sys.argv[2]).count()
    refused = ""
except Exception as e:
    refused = str(e)
try:  # a relative path: the client's directory is not the server's
    spark.read.format("kafka-log").load("logs").count()
    relative = ""
except Exception as e:
    relative = str(e)
print(json.dumps({"rows": [[r.topic, r.partition, r.offset] for r in rows], "copied": copied,
                  "refused": refused, "relative": relative}))
'''


def test_a_spark_connect_client_reads_and_writes(tmp_path):
    """A Spark Connect server started by the test; the client registers kafka-log and reads, writes and gets a
    refused option's message back."""
    require_runtime()
    pytest.importorskip("grpc", reason="Spark Connect clients need pyspark[connect] (the test extra has it)")
    logs = tmp_path / "logs"
    for name, case in CASES.items():
        shutil.copytree(ROOT / "fixtures/corpus/kafka-generated" / case, logs / name)
    expected = sorted((name.split("-")[0], int(name.split("-")[1]), o) for name, case in CASES.items()
                      for o in _kafka_offsets(case))
    from tests.support.spark_cluster import connect_server
    with connect_server(tmp_path) as url:
        client = run_driver(CONNECT_CLIENT, tmp_path, url, str(logs), str(tmp_path / "copied"))
    assert client.returncode == 0, client.stderr[-3000:]
    result = json.loads(client.stdout.strip().splitlines()[-1])
    assert sorted(map(tuple, result["rows"])) == expected
    assert result["copied"] == len(expected)
    # Spark hands a data source its options with lower-cased names: the typo comes back as Spark spelled it
    assert "no option 'incldueheaders' (did you mean includeHeaders?)" in result["refused"]
    # issue 32, item 1: the server cannot know the client's directory; a relative path is refused saying why
    assert "logs: a relative path would be read from the Spark Connect server's session folder" in result["relative"]


UNACTIVATED_VENV_JOB = r'''
import json, sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
import kdump.spark
kdump.spark.register(spark)
count = spark.read.format("kafka-log").load(sys.argv[1]).count()
print(json.dumps({"count": count}))
spark.stop()
'''


def test_python_job_py_runs_with_a_venv_that_is_not_activated(tmp_path):
    """Issue 32, item 5: `python job.py` with the interpreter that has kdump, while `python3` on PATH is another
    one (a venv not activated): register() points the Python workers at this interpreter (Spark's default is
    python3 from PATH, which has neither pyspark nor kdump)."""
    import os
    require_runtime()
    other = shutil.which("python3", path="/usr/bin")
    if other is None or subprocess.run([other, "-c", "import pyspark"], capture_output=True).returncode == 0:
        pytest.skip("needs a python3 on PATH without pyspark (the one a venv that is not activated leaves)")
    shutil.copytree(ROOT / "fixtures/corpus/kafka-generated/v2-none", tmp_path / "a-0")
    (tmp_path / "job.py").write_text(UNACTIVATED_VENV_JOB)
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"/usr/bin:{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(ROOT)  # this checkout's kdump, as an installed one would be found
    job = subprocess.run([sys.executable, str(tmp_path / "job.py"), str(tmp_path / "a-0")], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=600)
    assert job.returncode == 0, job.stderr[-3000:]
    assert json.loads(job.stdout.strip().splitlines()[-1])["count"] == len(_kafka_offsets("v2-none"))
