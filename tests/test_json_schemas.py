"""The JSON of every command is one dialect, documented by a JSON Schema per command (docs/schemas/): every
object kdump emits for the corpus (sound and damaged files, companions, internal topics, conversions) validates,
and the schemas are strict enough that a renamed field fails."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

from corpus import CORPUS, ROOT
from support.cli import run_cli

SCHEMAS = ROOT / "docs" / "schemas"
NAMES = ("dump", "records", "index-dump", "verify", "index-check", "convert")
KAFKA = CORPUS / "kafka-generated"
BROKER = CORPUS / "broker-written"


def _registry() -> Registry:
    resources = []
    for name in NAMES:
        doc = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
        resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


REGISTRY = _registry()


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=REGISTRY)


def run(*args) -> str:
    result = run_cli(*args)
    assert result.exit_code in (0, 1, 2), (args, result.output)  # 2: nothing to dump in that directory
    return result.stdout


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line]


def _all_valid(name: str, objects: list[dict]) -> None:
    v = validator(name)
    assert objects
    for obj in objects:
        errors = sorted(v.iter_errors(obj), key=lambda e: e.path)
        assert not errors, (name, obj.get("type"), [e.message for e in errors[:3]])


SOUND_DIRS = sorted(d for d in list(KAFKA.iterdir()) + list(BROKER.iterdir()) + list((KAFKA / "internal-topics").iterdir())
                    if d.is_dir() and d.name not in ("corrupt", "internal-topics"))


def test_dump_stream_validates():
    objs = []
    for d in SOUND_DIRS:
        objs += lines(run("dump", "--format", "json", "--deep-iteration", "--print-data-log", "--companions", d))
        objs += lines(run("dump", "--format", "json", d))
    for d in (KAFKA / "internal-topics").iterdir():
        if d.is_dir():
            objs += lines(run("dump", "--format", "json", "--decoder", "auto", d))
    objs += lines(run("dump", "--format", "json", "--deep-iteration", "--print-data-log", KAFKA / "corrupt"))
    kinds = {o["type"] for o in objs}
    assert kinds == {"batch", "entry", "tail", "error"}, kinds
    assert any("control" in r for o in objs if o["type"] == "batch" for r in o.get("records", []))
    assert any(r.get("valueEncoding") == "decoded" for o in objs if o["type"] == "batch" for r in o.get("records", []))
    _all_valid("dump", objs)


def test_records_stream_validates():
    objs = []
    for d in SOUND_DIRS:
        objs += lines(run("dump", "--format", "records", d))
    for d in (KAFKA / "internal-topics").iterdir():
        if d.is_dir():
            objs += lines(run("dump", "--format", "records", "--decoder", "auto", d))
    objs += lines(run("dump", "--format", "records", KAFKA / "corrupt"))
    assert {o.get("type", "record") for o in objs} == {"record", "tail", "error"}
    assert any("control" in o for o in objs) and any(o.get("valueEncoding") == "decoded" for o in objs)
    _all_valid("records", objs)
    record = next(o for o in objs if "type" not in o and o["magic"] == 2)
    for renamed in ("topic", "offset", "producerId", "position"):
        broken = dict(record)
        broken[renamed + "X"] = broken.pop(renamed)
        assert list(validator("records").iter_errors(broken)), renamed


def test_dump_errors_are_in_the_stream():
    bad = KAFKA / "corrupt" / "v2-bad-length-field" / "00000000000000000000.log"
    result = run_cli("dump", "--format", "json", "--deep-iteration", bad)
    assert result.exit_code == 1
    errors = [o for o in lines(result.stdout) if o["type"] == "error"]
    assert errors and all(o["path"] == str(bad) for o in errors)
    for e in errors:  # the same error as on stderr, for people
        where = f"at byte {e['position']}: " if e["position"] is not None else ""
        assert f"kdump: {bad}: {where}{e['message']}" in result.stderr
    _all_valid("dump", errors)


def test_index_dump_validates():
    objs = []
    for d in BROKER.iterdir():
        if d.is_dir():
            objs += lines(run("index", "dump", "--format", "json", d))
    assert {o["kind"] for o in objs} >= {"index", "timeindex", "snapshot"}
    _all_valid("index-dump", objs)


def test_verify_and_index_check_documents_validate():
    docs = [json.loads(run("verify", "--deep", "--format", "json", *SOUND_DIRS)),
            json.loads(run("verify", "--format", "json", KAFKA / "corrupt", ROOT / "fixtures" / "corrupt")),
            json.loads(run("verify", "--deep", "--format", "json", "--fail-on", "warning", ROOT / "fixtures" / "corrupt"))]
    assert any(f["findings"] for d in docs for f in d["files"])
    _all_valid("verify", docs)
    checks = [json.loads(run("index", "check", "--format", "json", *(d for d in BROKER.iterdir() if d.is_dir()))),
              json.loads(run("index", "check", "--deep", "--format", "json", BROKER / "consumer-offsets-v2"))]
    _all_valid("index-check", checks)


def test_convert_documents_validate(tmp_path):
    src = KAFKA / "v2-idempotent"
    docs = [json.loads(run("convert", src, "--to-magic", "2", "--compression", "gzip", "-o", tmp_path / "a",
                           "--format", "json")),
            json.loads(run("convert", src, "--to-magic", "1", "--recompress", "zstd=lz4", "-o", tmp_path / "b",
                           "--format", "json")),
            json.loads(run("convert", src / "00000000000000000000.log", "--dry-run", "--format", "json"))]
    failed = run_cli("convert", src, "--to-magic", "1", "-o", tmp_path / "c", "--format", "json")
    docs.append(json.loads(failed.stdout))
    assert failed.exit_code == 2 and docs[-1]["errors"][0]["code"] == "zstd-below-v2"  # (a usage refusal: docs/cli.md)
    damaged = run_cli("convert", KAFKA / "corrupt" / "v2-length-beyond-eof", "--to-magic", "1", "--skip-damaged",
                      "-o", tmp_path / "d", "--format", "json")
    docs.append(json.loads(damaged.stdout))
    assert damaged.exit_code == 1 and docs[-1]["results"][0]["errors"][0]["code"] == "size-beyond-end"
    assert docs[0]["results"][0]["path"].endswith(".log") and docs[1]["results"][0]["dropped"]
    _all_valid("convert", docs)


@pytest.mark.parametrize("name, make, path, renamed", [
    ("dump", lambda: lines(run("dump", "--format", "json", "--deep-iteration", KAFKA / "v2-none"))[0],
     (), ("baseOffset", "base_offset")),
    ("dump", lambda: lines(run("dump", "--format", "json", "--deep-iteration", KAFKA / "v2-none"))[0],
     ("records", 0), ("sizeInBytes", "size_in_bytes")),
    ("index-dump", lambda: lines(run("index", "dump", "--format", "json", BROKER / "consumer-offsets-v2"))[0],
     (), ("offset", "Offset")),
    ("verify", lambda: json.loads(run("verify", "--format", "json", ROOT / "fixtures" / "corrupt" / "v2-offsets-overlap")),
     ("files", 0, "findings", 0), ("firstOffset", "first_offset")),
    ("verify", lambda: json.loads(run("verify", "--format", "json", KAFKA / "v2-none")),
     ("summary",), ("errors", "errorCount")),
    ("convert", lambda: json.loads(run("convert", KAFKA / "v2-none" / "00000000000000000000.log", "--dry-run",
                                       "--format", "json")),
     ("dryRun", 0), ("path", "sourcePath")),
])
def test_a_renamed_field_fails_the_schema(name, make, path, renamed):
    obj = make()
    _all_valid(name, [obj])
    with pytest.raises(ValidationError):
        validator(name).validate(with_renamed(obj, path, *renamed))


def with_renamed(obj, path, old: str, new: str):
    """A copy of ``obj`` whose member ``old`` of the object at ``path`` (keys and indexes) is called ``new``."""
    bad = copy.deepcopy(obj)
    target = bad
    for step in path:
        target = target[step]
    target[new] = target.pop(old)
    return bad


def test_the_test_extra_names_jsonschema():
    import tomllib
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["test"]
    assert any(req.startswith("jsonschema") for req in extra)


def test_every_schema_is_listed_in_the_docs():
    docs = "".join(p.read_text() for p in Path(ROOT / "docs").glob("*.md"))
    for name in NAMES:
        assert f"schemas/{name}.schema.json" in docs, name
