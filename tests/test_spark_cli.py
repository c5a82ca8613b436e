"""``kdump spark scan|verify|stats`` against the single-process commands and the CLI reader."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from test_spark_read import cli_records
from support.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
# the whole corpus and every fixture of segments
VERIFY_PATHS = [str(ROOT / "fixtures" / d) for d in ("corpus", "generated", "corrupt")]



def test_spark_verify_gives_the_findings_of_verify_deep(spark):
    local = run_cli("verify", "--deep", "--format", "json", *VERIFY_PATHS)
    distributed = run_cli("spark", "verify", "--format", "json", *VERIFY_PATHS)
    assert local.exit_code == distributed.exit_code == 1
    assert json.loads(distributed.stdout) == json.loads(local.stdout)
    assert len(json.loads(local.stdout)["files"]) > 100


def test_spark_verify_exit_codes(spark, tmp_path):
    sound = str(ROOT / "fixtures/generated/v2-none-createtime")
    assert run_cli("spark", "verify", sound).exit_code == run_cli("verify", "--deep", sound).exit_code == 0
    missing = str(tmp_path / "nope")
    assert run_cli("spark", "verify", missing).exit_code == run_cli("verify", "--deep", missing).exit_code == 2


CODECS = ("none", "gzip", "snappy", "lz4", "zstd")


def reader_stats(path):
    """The numbers ``kdump stats`` gives for one segment, worked out from what the CLI reader prints
    (``kdump dump --format json``: batch headers, the tail; deep iteration for legacy record counts)."""
    result = run_cli("dump", "--format", "json", path)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    batches = [b for b in lines if "magic" in b]
    deep: dict = {}
    records = cli_records(path)
    for r in records:
        deep.setdefault(r[1], []).append(r[2])  # position -> record offsets
    # the time range is of the records' timestamps (those of intact batches; -1, none, left out)
    ts = [r[3] // 1000 for r in records if r[3] >= 0 and r[17]]
    first = None
    if batches:
        b = batches[0]
        first = b["baseOffset"] if b["baseOffset"] is not None else (deep.get(b["position"]) or [b["lastOffset"]])[0]
    codecs, magics = {}, {}
    for b in batches:
        codecs[b["codec"]] = codecs.get(b["codec"], 0) + 1
        magics[str(b["magic"])] = magics.get(str(b["magic"]), 0) + 1
    # (damage in the records too: stats reads them, as a deep dump does)
    damaged = any(x.get("type") == "tail" for x in lines) or f"kdump: {path}:" in result.stderr or \
        any(not b["crcValid"] for b in batches) or run_cli("dump", "--deep-iteration", path).exit_code != 0
    return {"segments": 1, "batches": len(batches),
            "records": sum(b["recordCount"] if b["recordCount"] is not None else len(deep.get(b["position"], ()))
                           for b in batches),
            "bytes": os.path.getsize(path), "firstOffset": first,
            "lastOffset": batches[-1]["lastOffset"] if batches else None,
            "minTimestamp": min(ts) if ts else None, "maxTimestamp": max(ts) if ts else None,
            "codecs": codecs, "magics": magics, "damagedSegments": int(damaged)}


def merged(stats):
    out = dict(stats[0])
    for s in stats[1:]:
        for k in ("segments", "batches", "records", "bytes", "damagedSegments"):
            out[k] += s[k]
        for k, pick in (("firstOffset", min), ("minTimestamp", min), ("lastOffset", max), ("maxTimestamp", max)):
            values = [v for v in (out[k], s[k]) if v is not None]
            out[k] = pick(values) if values else None
        for k in ("codecs", "magics"):
            out[k] = {n: out[k].get(n, 0) + s[k].get(n, 0) for n in set(out[k]) | set(s[k])}
    return {**out, "codecs": dict(sorted(out["codecs"].items())), "magics": dict(sorted(out["magics"].items()))}


def test_spark_stats_gives_the_numbers_of_the_cli_reader(spark):
    """Every segment of the corpus and the fixtures: per directory and in total, the numbers of the reader."""
    from test_spark_read import segment_files
    result = run_cli("spark", "stats", "--format", "json", *VERIFY_PATHS)
    assert result.exit_code == 1, result.output  # the corpus holds damaged segments: exit 1, as `kdump stats`
    doc = json.loads(result.stdout)
    logs = segment_files()
    per_file = {f: reader_stats(f) for f in logs}
    from kdump.read.logdir import topic_partition
    by_dir: dict = {}
    for f, st in per_file.items():  # a partition directory's name gives topic-N; other directories their path
        named = topic_partition(os.path.dirname(f))
        by_dir.setdefault(os.path.dirname(f) if named is None else "%s-%d" % named, []).append(st)
    # where nothing is damaged (past damage the records of a batch failing its CRC, which `kdump dump` shows, are
    # not counted; compared with `kdump stats` below)
    sound = {d: merged(v) for d, v in by_dir.items() if not any(st["damagedSegments"] for st in v)}
    header = set(reader_stats(logs[0]))  # the header numbers; the record-level ones are compared below
    partitions = {p["path"] if p["topic"] is None else f"{p['topic']}-{p['partition']}": p for p in doc["partitions"]}
    assert {d: {f: partitions[d][f] for f in header} for d in sound} == sound and len(sound) > 80
    assert doc["total"]["segments"] == len(logs) > 100
    assert set(doc["total"]["magics"]) == {"0", "1", "2"} and set(CODECS) <= set(doc["total"]["codecs"])
    assert 0 < doc["total"]["damagedSegments"] < len(logs)
    # and exactly what `kdump stats` gives for the same paths, record-level numbers included, JSON and text (exit
    # 1: the corpus's damaged segments)
    local = run_cli("stats", "--format", "json", *VERIFY_PATHS)
    assert local.exit_code == 1, local.output
    local_doc = json.loads(local.stdout)
    assert doc == local_doc
    assert local_doc["total"]["producers"] > 0 and local_doc["total"]["keys"]["distinct"] > 0
    assert local_doc["total"]["transactions"]["committed"] > 0 and local_doc["total"]["controlRecords"] > 0
    text = run_cli("spark", "stats", *VERIFY_PATHS)
    assert text.exit_code == 1 and text.stdout == run_cli("stats", *VERIFY_PATHS).stdout


def test_spark_scan_exports_every_record_to_parquet(spark, tmp_path):
    import pyarrow.parquet as pq
    path = ROOT / "fixtures/generated"
    out = tmp_path / "out"
    result = run_cli("spark", "scan", str(path), "-o", str(out))
    assert result.exit_code == 0, result.output
    table = pq.read_table(out)
    got = sorted(((r["offset"], r["key"], r["value"]) for r in table.select(["offset", "key", "value"]).to_pylist()),
                 key=repr)
    # control records are not exported (as Spark's Kafka source)
    expected = sorted(((r[2], r[5], r[6]) for f in sorted(map(str, path.rglob("*.log"))) for r in cli_records(f)
                       if not r[15]), key=repr)
    assert got == expected
    again = run_cli("spark", "scan", str(path), "-o", str(out))
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


CORRUPT = ROOT / "fixtures/corpus/kafka-generated/corrupt"


def _kafka_check(path):
    """Kafka's own reading of a corpus file (the ``.check.txt`` beside it): ``{position: fields}``."""
    out = {}
    for line in open(str(path) + ".check.txt"):
        if line.startswith("batch "):
            fields = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
            out[int(fields["pos"])] = fields
    return out


def test_permissive_export_lists_the_damaged_regions():
    """The regions PERMISSIVE skips, against Kafka's own reading (the corpus) and the fixtures' expected
    findings: the batch whose CRC Kafka finds invalid, and where the framing breaks."""
    import tempfile
    from kdump.spark.jobs import export_local
    log = CORRUPT / "v2-crc-mismatch/00000000000000000000.log"
    bad = [(int(b["pos"]), int(b["pos"]) + int(b["size"]), int(b["base"]), int(b["last"]))
           for b in _kafka_check(log).values() if b["valid"] == "false"]
    result = export_local([str(log.parent)], tempfile.mkdtemp())
    assert [(d["position"], d["position"] + d["bytes"], d["firstOffset"], d["lastOffset"])
            for d in result.damage] == bad
    for name in ("v2-zero-hole", "v2-garbage-at-end"):
        expected = json.load(open(ROOT / "fixtures/corrupt" / name / "expected.json"))["findings"]
        damaged_range = next(f for f in expected if f["code"] == "damaged-range")
        result = export_local([str(ROOT / "fixtures/corrupt" / name)], tempfile.mkdtemp())
        (d,) = result.damage
        # the walk goes on after the damaged range, as `kdump dump` and `kdump verify` do
        assert (d["position"], d["firstOffset"], d["lastOffset"]) == (
            damaged_range["position"], damaged_range["first_offset"], damaged_range["last_offset"])
        assert d["code"] == expected[0]["code"] and d["bytes"] > 0


def test_spark_scan_reports_damage_on_stderr_and_exits_1(spark, tmp_path):
    log = CORRUPT / "v2-crc-mismatch/00000000000000000000.log"
    (bad,) = [b for b in _kafka_check(log).values() if b["valid"] == "false"]
    start, end = int(bad["pos"]), int(bad["pos"]) + int(bad["size"])
    result = run_cli("spark", "scan", str(CORRUPT), "-o", str(tmp_path / "p"))
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith("kdump: ")]
    assert f"kdump: {log}: at byte {start}: stored CRC-32C" in "\n".join(lines)
    assert f"skipped this batch of {end - start} bytes (to byte {end}); offsets {bad['base']}-{bad['last']} are lost" \
        in "\n".join(lines)
    # v0 CRC, v2 CRC, two damaged size fields, and the truncated tail (a batch read reports a cut last batch, as
    # the CLI does and as Kafka's reader does: its .check.txt says "trailing partial batch")
    assert len(lines) == 5
    assert any("an incomplete last batch" in line for line in lines)
    failfast = run_cli("spark", "scan", str(log.parent), "--mode", "FAILFAST", "-o", str(tmp_path / "f"))
    assert failfast.exit_code == 1
    assert f"kdump: {log}: at byte {start}: stored CRC-32C" in failfast.stderr
    assert "Traceback" not in failfast.stderr


class _FakeSession:
    stopped = False

    def stop(self):
        self.stopped = True


@pytest.mark.parametrize("keep, written, left", [(False, b"INFO start\n", False), (True, b"ERROR it broke\n", True),
                                                 (True, b"", False)])
def test_a_quiet_session_leaves_its_log_only_when_the_run_failed(tmp_path, monkeypatch, keep, written, left):
    """Issue 21, item 9: each CLI run left a $TMPDIR/kdump-spark-<uid>-<pid>.log behind."""
    from kdump.spark import session
    monkeypatch.setattr(session.tempfile, "gettempdir", lambda: str(tmp_path))
    log = session.log_file()
    with open(log, "wb") as f:
        f.write(written)
    fake = _FakeSession()
    kept = session.stop_session(fake, keep_log=keep)
    assert fake.stopped
    assert os.path.exists(log) is left and (kept == log) is left


def test_relative_paths_are_opened_where_the_driver_meant(tmp_path, monkeypatch):
    """Issue 21, item 6: an executor's working directory is not the driver's; kdump's jobs read relative paths
    from the driver's directory, and the DataFrame API resolves them on the driver."""
    pytest.importorskip("pyspark")
    from kdump.spark import options
    from kdump.spark.jobs import _in_driver_directory
    driver, executor = tmp_path / "driver", tmp_path / "work-app-1"
    driver.mkdir()
    executor.mkdir()
    (driver / "logs").mkdir()
    (driver / "logs" / "marker").write_text("here")
    monkeypatch.chdir(driver)
    task = _in_driver_directory(lambda name: open(name).read())
    assert options.paths({"path": "logs"}) == [str(driver / "logs")]
    assert options.paths({"path": "s3://bucket/logs"}) == ["s3://bucket/logs"]
    os.chdir(executor)  # what a cluster executor's worker sees
    assert task("logs/marker") == "here"
    assert os.getcwd() == str(executor)


def test_the_verify_progress_line_counts_segments(tmp_path):
    """Issue 21, item 9: ``verify: 9/9 segments`` for five: leftovers and companion units were counted."""
    pytest.importorskip("pyspark")
    import shutil

    from kdump.spark.jobs import _segments_in
    from kdump.verify import collect
    shutil.copytree(ROOT / "fixtures/corpus/broker-written/kraft-metadata-log", tmp_path / "__cluster_metadata-0")
    shutil.copytree(ROOT / "fixtures/generated/v2-none-createtime", tmp_path / "a-0")
    segments = len(list(tmp_path.rglob("*.log")))
    units = collect([str(tmp_path)])
    assert len(units) > 2 and sum(_segments_in(kind, item) for kind, item in units) == segments
