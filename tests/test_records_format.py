"""``kdump dump --format records``: one JSON object per record (kcat -J's shape). Its oracle is ``--format json``
(checked against Kafka's own JSON in the corpus): every record of every batch, in order, with the partition
from the directory's name and the batch members a record inherits, and nothing else."""
import json
import shutil
from pathlib import Path

import pytest

from corpus import CORPUS
from support.cli import run_cli

pytestmark = pytest.mark.usefixtures("backend")

ROOT = Path(__file__).resolve().parent.parent
INHERITED = ("magic", "codec", "producerId", "producerEpoch", "isTransactional", "isControl",
             "partitionLeaderEpoch", "crcValid")
DIRS = [ROOT / "fixtures/generated" / d for d in ("v2-none-createtime", "v2-zstd-logappendtime", "v1-gzip-createtime",
                                                  "v0-none-notimestamptype", "mixed-magic", "v2-control-all-types")]
DIRS += [CORPUS / "kafka-generated" / "corrupt"]


def _lines(text):
    return [json.loads(line) for line in text.splitlines()]


def expected_records(path, topic=None, partition=None):
    out = []
    for obj in _lines(run_cli("dump", "--format", "json", "--deep-iteration", "--print-data-log", path).stdout):
        if obj["type"] != "batch":
            out.append(obj)
            continue
        for record in obj["records"]:
            out.append({"topic": topic, "partition": partition, **record,
                        **{k: obj[k] for k in INHERITED}, "path": obj["path"], "position": obj["position"]})
    return out


@pytest.mark.parametrize("path", DIRS, ids=lambda p: p.name)
def test_one_object_per_record(path):
    result = run_cli("dump", "--format", "records", path)
    expected = expected_records(path)
    assert _lines(result.stdout) == expected
    assert sum("offset" in o for o in expected) > 3
    assert result.exit_code == run_cli("dump", "--format", "json", path).exit_code


def test_topic_and_partition_from_the_directory(tmp_path):
    part = tmp_path / "orders.eu-3"
    shutil.copytree(ROOT / "fixtures/generated/v2-gzip-createtime", part)
    got = _lines(run_cli("dump", "--format", "records", part).stdout)
    assert got and all(o["topic"] == "orders.eu" and o["partition"] == 3 for o in got)
    assert got == expected_records(part, "orders.eu", 3)


def test_records_with_decoders_and_time_forms():
    path = CORPUS / "kafka-generated/internal-topics"
    for d in sorted(p for p in path.iterdir() if p.is_dir())[:2]:
        got = _lines(run_cli("dump", "--format", "records", "--decoder", "auto", "--time-format", "iso", d).stdout)
        batches = _lines(run_cli("dump", "--format", "json", "--print-data-log", "--decoder", "auto",
                                 "--time-format", "iso", d).stdout)
        want = [r for b in batches if b["type"] == "batch" for r in b["records"]]
        assert [{k: o[k] for k in r} for o, r in zip(got, want, strict=True)] == want


def test_records_only_where_records_are_printed():
    assert run_cli("verify", "--format", "records", ROOT / "fixtures/generated").exit_code == 2
