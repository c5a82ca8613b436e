"""One JSON dialect in every command (issue 20, item 3): each command's JSON on the corpus -- sound, damaged,
internal topics, written copies -- validates against its schema in docs/schemas/, every key is camelCase, a file
is named by ``path`` (``...Path`` for another file: ``outputPath``, ``snapshotPath``), a byte count is ``bytes``,
a byte position ``position``, and an error is one object shape wherever it appears.

The outputs are made once per module (``outputs``) and shared by the schema and the dialect tests; adding a
command is one entry in :func:`_runs` (named as its schema, docs/schemas/NAME.schema.json) and in ``COMMANDS``."""
from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource

from corpus import CORPUS, ROOT
from support.cli import run_cli
from test_json_schemas import with_renamed

SCHEMAS = ROOT / "docs" / "schemas"
KAFKA = CORPUS / "kafka-generated"
BROKER = CORPUS / "broker-written"
INTERNAL = KAFKA / "internal-topics"
CORRUPT = KAFKA / "corrupt"
SEGMENT = "00000000000000000000.log"


def _registry() -> Registry:
    """Every schema in docs/schemas, by its ``$id`` (they refer to each other: the one error object is
    ``urn:kdump:schema:dump#/$defs/error``)."""
    docs = [json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.schema.json"))]
    return Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs)


REGISTRY = _registry()


def validator(name: str) -> Draft202012Validator:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=REGISTRY)


ERROR = Draft202012Validator({"$ref": "urn:kdump:schema:dump#/$defs/error"}, registry=REGISTRY)


def _parse(stdout: str) -> list:
    """One JSON document, or JSON Lines (dump, index dump)."""
    try:
        return [json.loads(stdout)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in stdout.splitlines() if line]


def _damaged_consumer_offsets(tmp: Path) -> Path:
    """A copy of the broker-written __consumer_offsets segment with one byte of its first batch's records
    changed: its CRC fails, so the replay skips that batch (a skipped error object with a position)."""
    part = tmp / "__consumer_offsets-7"
    part.mkdir()
    log = part / "00000000000000000000.log"
    shutil.copyfile(BROKER / "consumer-offsets-v2" / "00000000000000000000.log", log)
    data = bytearray(log.read_bytes())
    data[70] ^= 0xFF  # inside the first batch's records (its header is 61 bytes), under its CRC
    log.write_bytes(bytes(data))
    return part


def _runs(tmp: Path) -> dict[str, list[tuple]]:
    """Per command, the command lines whose JSON is checked (without ``--format json``, added to each)."""
    sound = [KAFKA / "v2-transactional", KAFKA / "mixed-magic", BROKER / "kraft-metadata-log",
             BROKER / "producer-snapshot-3-producers"]
    return {
        "dump": [("dump", "--deep-iteration", "--print-data-log", "--companions", "--time-format", "iso", *sound),
                 ("dump", "--deep-iteration", CORRUPT, ROOT / "fixtures" / "corrupt" / "v2-zero-hole"),
                 ("dump", "--decoder", "auto", *INTERNAL.iterdir())],
        "index-dump": [("index", "dump", "--time-format", "iso", BROKER / "kraft-metadata-log",
                        BROKER / "producer-snapshot-3-producers")],
        "verify": [("verify", "--deep", KAFKA / "v2-idempotent", CORRUPT, tmp / "missing-0")],
        "index-check": [("index", "check", "--deep", BROKER / "consumer-offsets-v2")],
        "index-rebuild": [("index", "rebuild", "-o", tmp / "idx", KAFKA / "v2-transactional",
                           CORRUPT / "v2-truncated-tail" / "00000000000000000000.log"),
                          ("index", "rebuild", "-o", tmp / "idx", KAFKA / "v2-transactional")],  # exists: errors
        "convert": [("convert", KAFKA / "v2-idempotent", "--to-magic", "1", "--recompress", "zstd=lz4", "-o",
                     tmp / "converted"),
                    ("convert", KAFKA / "v2-none" / "00000000000000000000.log", "--dry-run")],
        "salvage": [("salvage", CORRUPT / name / "00000000000000000000.log", "-o", tmp / "salvaged" / name / "")
                    for name in ("v2-bad-length-field", "v2-crc-mismatch", "v2-truncated-tail")]
                   + [("salvage", KAFKA / "v2-transactional", "-o", tmp / "salvaged-dir"),
                      ("salvage", CORRUPT / "v2-crc-mismatch" / "00000000000000000000.log", "-o",
                       tmp / "salvaged" / "v2-crc-mismatch" / "")],  # exists: an error
        "groups": [("groups", "--time-format", "iso", BROKER / "consumer-offsets-v2"),
                   ("groups", INTERNAL / "__consumer_offsets-0", _damaged_consumer_offsets(tmp))],
        "txn-state": [("txn-state", "--time-format", "iso", INTERNAL / "__transaction_state-0")],
        "explain": [("explain", "--records", "--count", "3", KAFKA / "v2-transactional" / SEGMENT),
                    ("explain", "--records", "--to-offset", "5", KAFKA / "mixed-magic" / SEGMENT),
                    ("explain", "--position", "509", CORRUPT / "v2-crc-mismatch" / SEGMENT),
                    ("explain", "--records", "--count", "3",
                     BROKER / "kraft-bootstrap-checkpoint" / "bootstrap.checkpoint"),
                    ("explain", "--count", "2", BROKER / "kraft-metadata-log" / f"{SEGMENT[:-4]}.index"),
                    ("explain", BROKER / "producer-snapshot-3-producers" / "00000000000000094751.snapshot")],
        "metadata": [("metadata", "--time-format", "iso", BROKER / "kraft-metadata-log"),
                     ("metadata", INTERNAL / "__cluster_metadata-0"),
                     ("metadata", BROKER / "kraft-bootstrap-checkpoint" / "bootstrap.checkpoint")],
    }


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, list]:
    tmp = tmp_path_factory.mktemp("dialect")
    out: dict[str, list] = {}
    for name, lines in _runs(tmp).items():
        out[name] = []
        for args in lines:
            result = run_cli(*args, "--format", "json")
            assert result.exit_code in (0, 1, 2), (args, result.output)
            assert "Traceback" not in result.stderr, args
            out[name] += _parse(result.stdout)
    out["tmp"] = [str(tmp)]
    return out


COMMANDS = [  # the keys of _runs
    "dump", "index-dump", "verify", "index-check", "index-rebuild", "convert", "salvage", "groups", "txn-state",
    "explain", "metadata"]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_output_validates_against_its_schema(outputs, name):
    v = validator(name)
    assert outputs[name], name
    for obj in outputs[name]:
        errors = sorted(v.iter_errors(obj), key=lambda e: list(e.path))
        assert not errors, (name, [f"{list(e.path)}: {e.message}" for e in errors[:3]])


def test_the_runs_reach_what_the_schemas_describe(outputs):
    """The inputs above exercise the parts of each schema that only damage or options bring out."""
    errors_in = {name: [e for o in outputs[name] for e in _error_objects(o)] for name in COMMANDS}
    assert {o["type"] for o in outputs["dump"]} == {"batch", "entry", "tail", "error"}
    assert errors_in["dump"] and errors_in["verify"] and errors_in["convert"] == []
    assert any(f.get("error") for d in outputs["verify"] for f in d["files"])  # the missing path
    assert errors_in["index-rebuild"] and any(d["results"] for d in outputs["index-rebuild"])
    assert any(f["dropped"] for d in outputs["salvage"] for f in d["files"])
    assert [e["code"] for d in outputs["salvage"] for e in d["errors"]] == ["output-exists"]
    skipped = [s for d in outputs["groups"] for s in d["skipped"]]
    assert any(s["code"] == "crc-mismatch" and s["position"] == 0 for s in skipped), skipped
    # (the corpus' CONTENTS.txt: offset 18 is a key of version 1, which Kafka's coordinator does not read)
    skipped = [s for d in outputs["txn-state"] for s in d["skipped"]]
    assert [(s["code"], s["offset"]) for s in skipped] == [("record-type-unknown", 18)]
    # its position is that of its batch, as Kafka's reader gives it (the corpus' .log.json)
    kafka = json.loads((INTERNAL / "__transaction_state-0" / "00000000000000000000.log.json").read_text())
    (batch,) = [b for b in kafka["batches"] if b["baseOffset"] <= 18 <= b["lastOffset"]]
    assert [s["position"] for s in skipped] == [batch["position"]]
    assert any("commitTimestampIso" in o for d in outputs["groups"] for g in d["groups"] for o in g["offsets"])
    assert any(d["snapshotPath"] for d in outputs["metadata"])


# --- one dialect ------------------------------------------------------------------------------------------------
CAMEL = re.compile(r"^[a-z][A-Za-z0-9]*$")
# Objects whose keys are data, not field names: Kafka's names of features and configs, finding codes, loss kinds,
# decoded keys and values (a record's own field names), as "path.to.object" with [] for list items.
DATA_MAPS = {
    "metadata": ("features", "brokers[].supportedFeatures", "controllers[].supportedFeatures", "configs[].configs",
                 "clientQuotas[].quotas"),
    "verify": ("files[].codes",),
    "index-check": ("files[].codes",),
    "convert": ("results[].dropped", "dryRun[].estimates[].dropped"),
    "dump": ("records[].key", "records[].value"),
    "stats": ("magics", "codecs", "compression", "total.magics", "total.codecs", "total.compression",
              "partitions[].magics", "partitions[].codecs", "partitions[].compression", "partitions[].bySchemaId",
              "partitions[].bySubject", "total.bySchemaId", "total.bySubject"),
}
# The one documented exception (docs/json.md): explain's field tree names a field's byte range start/length, as
# issue 34's tree form does, and other ranges start/end (a CRC's cover, a damaged area): places in a file, not files
RETIRED_ALLOWED = {"explain": {"start", "length", "end"}}
# Names kdump's JSON used for a concept it now names otherwise (docs/json.md lists them): never again.
RETIRED = {"file": "path", "source": "path", "sourcePath": "path", "log": "path", "snapshot": "snapshotPath",
           "start": "position", "end": "position + bytes", "length": "bytes", "trailingBytes": "bytes",
           "inputBytes": "bytes", "reason": "message", "ioError": "error", "damage": "errors"}


def _walk(obj, where: str = ""):
    """(where, key, value) for every member of every object in ``obj``."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            yield where, key, value
            yield from _walk(value, f"{where}.{key}" if where else key)
    elif isinstance(obj, list):
        for item in obj:
            yield from _walk(item, f"{where}[]")


def _error_objects(obj):
    """Every object in ``obj`` that says it is an error, and every item of an ``errors`` or ``skipped`` list."""
    for _, key, value in _walk({"": obj}):
        if isinstance(value, dict) and value.get("type") == "error":
            yield value
        elif key in ("errors", "skipped", "error") and isinstance(value, list):
            yield from value


def _dialect_problems(name: str, objects: list, paths: tuple[str, ...]) -> list[str]:
    problems = []
    data = DATA_MAPS.get(name, ())
    for obj in objects:
        for where, key, value in _walk(obj):
            if where in data or any(where.startswith(d + ".") or where.startswith(d + "[]") for d in data):
                continue
            if not CAMEL.match(key):
                problems.append(f"{where}.{key}: not camelCase")
            if key in RETIRED and key not in RETIRED_ALLOWED.get(name, ()):
                problems.append(f"{where}.{key}: now {RETIRED[key]}")
            # a file's name is a path: under "path", or "...Path" for another file than the one reported on
            if isinstance(value, str) and value.startswith(paths) and key != "path" and not key.endswith("Path"):
                problems.append(f"{where}.{key}: a file named by another key than path/...Path ({value})")
        for error in _error_objects(obj):
            problems += [f"error object: {e.message}" for e in ERROR.iter_errors(error)]
    return problems


@pytest.mark.parametrize("name", COMMANDS)
def test_one_name_per_concept_and_errors_of_one_shape(outputs, name):
    paths = (str(ROOT), outputs["tmp"][0], "fixtures/")
    assert _dialect_problems(name, outputs[name], paths) == []


@pytest.mark.parametrize("name, args", [
    ("stats", ("stats", KAFKA / "v2-transactional", CORRUPT)),
    ("txn", ("txn", KAFKA / "v2-transactional", CORRUPT)),
])
def test_stats_and_txn_speak_the_dialect(name, args):
    result = run_cli(*args, "--format", "json")
    objects = _parse(result.stdout)
    assert _dialect_problems(name, objects, (str(ROOT), "fixtures/")) == []


def test_the_dialect_check_finds_a_retired_or_snake_case_name(outputs):
    """The check above is not vacuous: the old names and a snake_case key fail it."""
    paths = (str(ROOT), outputs["tmp"][0], "fixtures/")
    salvaged = copy.deepcopy(outputs["salvage"][0])
    salvaged["files"][0]["source"] = salvaged["files"][0].pop("path")
    assert any("now path" in p for p in _dialect_problems("salvage", [salvaged], paths))
    dumped = copy.deepcopy(outputs["dump"][0])
    dumped["first_offset"] = 0
    assert any("not camelCase" in p for p in _dialect_problems("dump", [dumped], paths))
    rebuilt = copy.deepcopy(next(d for d in outputs["index-rebuild"] if d["errors"]))
    rebuilt["errors"][0]["file"] = rebuilt["errors"][0].pop("path")
    assert any(p.startswith("error object") for p in _dialect_problems("index-rebuild", [rebuilt], paths))


# --- the schemas are strict enough that a renamed field fails ------------------------------------------------------
@pytest.mark.parametrize("name, path, renamed", [
    ("salvage", ("files", 0), ("outputPath", "output")),
    ("salvage", ("files", 0, "dropped", 0), ("position", "start")),
    ("index-rebuild", ("results", 0), ("path", "log")),
    ("groups", ("groups", 0, "offsets", 0), ("commitTimestamp", "commit_timestamp")),
    ("txn-state", ("transactions", 0), ("transactionalId", "transactional_id")),
    ("metadata", (), ("snapshotPath", "snapshot")),
    ("dump", (), ("path", "file")),
])
def test_a_renamed_field_fails_the_schema(outputs, name, path, renamed):
    obj = next(o for o in outputs[name] if _reaches(o, path))
    validator(name).validate(obj)
    with pytest.raises(ValidationError):
        validator(name).validate(with_renamed(obj, path, *renamed))


def _reaches(obj, path) -> bool:
    try:
        for step in path:
            obj = obj[step]
    except (IndexError, KeyError, TypeError):
        return False
    return True


# --- the Spark jobs: the same documents ---------------------------------------------------------------------------
def test_spark_scan_and_verify_documents_validate(spark, tmp_path):
    scanned = run_cli("spark", "scan", CORRUPT, "-o", tmp_path / "records", "--format", "json")
    assert scanned.exit_code == 1, scanned.output
    (doc,) = _parse(scanned.stdout)
    validator("spark-scan").validate(doc)
    assert doc["outputPath"] == str(tmp_path / "records") and len(doc["errors"]) == 5
    assert _dialect_problems("spark-scan", [doc], (str(ROOT), str(tmp_path))) == []
    verified = run_cli("spark", "verify", CORRUPT, "--format", "json")
    validator("verify").validate(json.loads(verified.stdout))


def test_every_schema_is_listed_in_the_docs():
    text = (ROOT / "docs" / "json.md").read_text()
    for p in SCHEMAS.glob("*.schema.json"):
        assert f"schemas/{p.name}" in text, p.name


def test_a_commands_error_list_is_bounded(capsys):
    """A command's ``errors`` keep the first 1,000 problems and count the rest: a dump of a hostile file may say
    millions, each also on stderr."""
    from kdump.commands.options import ERRORS_LISTED, Ui
    ui = Ui("json")
    for i in range(ERRORS_LISTED + 5):
        ui.problem("f.log", "bad", position=i, error="crc-mismatch")
    fields = ui.error_fields()
    assert len(fields["errors"]) == ERRORS_LISTED and fields["errorsNotListed"] == 5
    assert fields["errors"][1] == {"type": "error", "path": "f.log", "position": 1, "code": "crc-mismatch",
                                   "message": "bad"}
    assert capsys.readouterr().err.count("kdump: f.log: at byte") == ERRORS_LISTED + 5
    assert Ui("json").error_fields() == {"errors": []}
