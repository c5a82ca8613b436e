"""The JSON of ``kdump stats`` and ``kdump txn`` (issue 20): their JSON Schemas (docs/schemas/stats.schema.json,
txn.schema.json) hold for real output on the corpus, sound and damaged, are strict enough that a renamed field fails,
and every key is camelCase."""
from __future__ import annotations

import copy
import functools
import json
import operator
import re

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

from corpus import CORPUS, ROOT
from support.cli import run_cli

SCHEMAS = ROOT / "docs" / "schemas"
NAMES = ("stats", "txn")
KAFKA = CORPUS / "kafka-generated"
BROKER = CORPUS / "broker-written"
SOUND = sorted(d for d in [*KAFKA.iterdir(), *BROKER.iterdir()] if d.is_dir() and d.name not in ("corrupt",
                                                                                                  "internal-topics"))
DAMAGED = [KAFKA / "corrupt", ROOT / "fixtures" / "corrupt"]


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


REGISTRY = Registry().with_resources((_schema(n)["$id"], Resource.from_contents(_schema(n))) for n in NAMES)


def validator(name: str) -> Draft202012Validator:
    schema = _schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=REGISTRY)


def document(*args) -> dict:
    result = run_cli(*args)
    assert result.exit_code in (0, 1, 2), (args, result.output)
    return json.loads(result.stdout)


def _valid(name: str, docs: list[dict]) -> None:
    v = validator(name)
    for doc in docs:
        errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
        assert not errors, (name, [f"{list(e.path)}: {e.message}" for e in errors[:3]])


# map keys that are values (codec names, magics, schema ids and subjects) are left out
VALUE_KEYED = {"codecs", "magics", "compression", "bySchemaId", "bySubject"}


def _field_names(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            if k not in VALUE_KEYED:
                yield from _field_names(v)
    elif isinstance(value, list):
        for v in value:
            yield from _field_names(v)


def _documents(command: str, time_format: str) -> list[dict]:
    """The command's JSON for the sound corpus, the damaged one, a transactional partition with ``time_format``,
    and a missing path."""
    return [document(command, "--format", "json", *paths) for paths in (
        SOUND, DAMAGED, ("--time-format", time_format, KAFKA / "v2-transactional"), ("/nonexistent",))]


@pytest.fixture(scope="module")
def stats_docs():
    return _documents("stats", "iso")


@pytest.fixture(scope="module")
def txn_docs():
    return _documents("txn", "local")


def test_stats_documents_validate(stats_docs):
    sound, damaged = stats_docs[0], stats_docs[1]
    failed = [p["path"] for p in sound["partitions"] if p["errors"]]
    assert len(sound["partitions"]) > 30 and [f.rsplit("/", 1)[1] for f in failed] == ["fetch-v0-invalid-crc-0.9.0.0"]
    assert any(p["errors"] for p in damaged["partitions"]) and stats_docs[3]["total"] is None
    assert "minTimestampIso" in stats_docs[2]["total"]
    _valid("stats", stats_docs)


def test_txn_documents_validate(txn_docs):
    assert any(p["transactions"] for p in txn_docs[0]["partitions"])
    assert any(p["notes"] for p in txn_docs[0]["partitions"]) and any(p["errors"] for p in txn_docs[1]["partitions"])
    assert "startTimeIso" in txn_docs[2]["partitions"][0]["transactions"][0]
    _valid("txn", txn_docs)


def test_every_key_is_camel_case(stats_docs, txn_docs):
    names = set(_field_names(stats_docs)) | set(_field_names(txn_docs))
    assert names and not [n for n in names if not re.fullmatch(r"[a-z][A-Za-z0-9]*", n)]
    # one name per thing, as the other commands name it: a path is `path`, a byte position `position`
    assert not names & {"file", "directory", "start", "first_offset", "min_timestamp", "damaged_segments"}


@pytest.mark.parametrize("name, path, renamed", [
    ("stats", ("partitions", 0), ("firstOffset", "first_offset")),
    ("stats", ("partitions", 0), ("path", "directory")),
    ("stats", ("total",), ("damagedSegments", "damaged_segments")),
    ("stats", ("partitions", 0, "keys"), ("keyedRecords", "keyed_records")),
    ("txn", ("partitions", 0), ("path", "directory")),
    ("txn", ("partitions", 0, "transactions", 0), ("producerId", "producer_id")),
])
def test_a_renamed_field_fails_the_schema(name, path, renamed):
    doc = document(name, "--format", "json", KAFKA / "v2-transactional")
    _valid(name, [doc])
    bad = copy.deepcopy(doc)
    old, new = renamed
    target = functools.reduce(operator.getitem, path, bad)
    target[new] = target.pop(old)
    with pytest.raises(ValidationError):
        validator(name).validate(bad)


@pytest.mark.parametrize("name", ["stats", "txn"])
def test_an_error_object_is_the_one_error_object(name, tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"operator notes\n" * 20)
    doc = document(name, "--format", "json", part)
    (error,) = doc["partitions"][0]["errors"]
    assert list(error) == ["type", "path", "position", "code", "message"] and error["type"] == "error"
    bad = copy.deepcopy(doc)
    bad["partitions"][0]["errors"][0]["file"] = bad["partitions"][0]["errors"][0].pop("path")
    with pytest.raises(ValidationError):
        validator(name).validate(bad)


def test_the_schemas_are_listed_in_the_docs():
    docs = (ROOT / "docs" / "json.md").read_text()
    for name in NAMES:
        assert f"schemas/{name}.schema.json" in docs, name
