"""Issue 24's remaining "What to build" lines, checked: a reference the schemas do not hold makes that schema's
values undecodable with the reason (Avro named type, Protobuf import, JSON Schema ``$ref``) while the others
decode; the registry's storage topic under another name (``kafkastore.topic``) is read when ``--schemas`` names
its partition; JSON Lines carries decoded keys with their schema ids as it does values."""
import json
import os
import shutil
import subprocess
import sys

import pytest
import schema_registry_stack as stack  # skips the module without fastavro, protobuf, grpcio-tools
from support.cli import run_cli

from kdump.decode.errors import DecoderError
from kdump.decode.schema_registry.decoder import SchemaRegistryDecoder
from kdump.decode.schema_registry.storage import replay


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    return stack.built_log_dir(tmp_path_factory)


def _schema_id(key, value):
    """The id a SCHEMA record of the storage topic registers, else None."""
    try:
        return json.loads(value)["id"] if value is not None and json.loads(key)["keytype"] == "SCHEMA" else None
    except (ValueError, KeyError):
        return None


def _store_without(*dropped_ids):
    """The stack's registry as its storage topic says, less the SCHEMA records of ``dropped_ids`` (as if those
    subjects had never been registered)."""
    records = [(k, v) for k, v in stack.schemas_records() if _schema_id(k, v) not in dropped_ids]
    return replay(records, "test").store


@pytest.mark.parametrize(("dropped", "user", "reason"), [
    (1, 2, "schema 2 references shop.Address (address version 1), which test does not hold"),
    (4, 5, "schema 5 imports common.proto (common.proto version 1), which test does not hold"),
    (6, 7, "schema 7 references customer.json (customer.json version 1), which test does not hold"),
])
def test_a_missing_reference_is_the_reason_and_the_others_decode(dropped, user, reason):
    decoder = SchemaRegistryDecoder(_store_without(dropped))
    with pytest.raises(DecoderError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        decoder.decode(stack.frame(user, b"\x00", [0] if user == 5 else None))
    assert decoder.decode(stack.frame(10, b"\x04k1")) == '"k1"'  # a schema without references still decodes


def test_a_json_schema_reference_that_is_not_json_is_the_reason():
    records = []
    for key, value in stack.schemas_records():
        if _schema_id(key, value) == 6:
            value = json.dumps(dict(json.loads(value), schema="{not json")).encode()
        records.append((key, value))
    decoder = SchemaRegistryDecoder(replay(records, "test").store)
    with pytest.raises(DecoderError, match="schema 6 is not JSON"):
        decoder.decode(stack.frame(7, b'{"id": 1}'))


def test_the_storage_topic_under_another_name(tmp_path, log_dir):
    root, expected = log_dir
    renamed = tmp_path / "registry-prod-0"  # kafkastore.topic=registry-prod
    shutil.copytree(os.path.join(root, "_schemas-0"), renamed)
    data = tmp_path / "orders-json-0"
    shutil.copytree(os.path.join(root, "orders-json-0"), data)
    result = run_cli("dump", "--value-decoder", "schema-registry", "--schemas", renamed, data)
    assert result.exit_code == 0, result.output
    first = next(line for line in result.output.splitlines() if line.startswith("| offset: 0 "))
    assert json.loads(first.split(" payload: ", 1)[1]) == expected["orders-json"][0][1]


def test_json_lines_carry_decoded_keys_and_their_schema_ids(log_dir):
    root, expected = log_dir
    result = run_cli("dump", "--format", "json", "--key-decoder", "schema-registry", "--value-decoder",
                     "schema-registry", os.path.join(root, "orders-avro-0"))
    assert result.exit_code == 0, result.output
    records = [r for line in result.output.splitlines() for r in json.loads(line).get("records", [])]
    keyed = [r for r in records if r["key"] is not None]
    assert [(r["key"], r["keyEncoding"], r["keySchemaId"]) for r in keyed] == [("k1", "decoded", 10),
                                                                              ("k2", "decoded", 10)]
    assert [k for k, _ in expected["orders-avro"] if k is not None] == ["k1", "k2"]


def test_the_storage_topic_under_another_name_is_found_beside_the_data(tmp_path, log_dir):
    """A registry whose kafkastore.topic is not _schemas: KDUMP_SCHEMAS_TOPIC names it, and the search beside the
    data finds it (without it, the usage error names the topic it looked for)."""
    root, expected = log_dir
    shutil.copytree(os.path.join(root, "_schemas-0"), tmp_path / "registry-prod-0")
    data = tmp_path / "orders-json-0"
    shutil.copytree(os.path.join(root, "orders-json-0"), data)
    argv = [sys.executable, "-m", "kdump", "dump", "--value-decoder", "schema-registry", str(data)]
    found = subprocess.run(argv, capture_output=True, text=True,
                           env={**os.environ, "KDUMP_SCHEMAS_TOPIC": "registry-prod"})
    assert found.returncode == 0, found.stderr
    first = next(line for line in found.stdout.splitlines() if line.startswith("| offset: 0 "))
    assert json.loads(first.split(" payload: ", 1)[1]) == expected["orders-json"][0][1]
    missing = subprocess.run(argv, capture_output=True, text=True,
                             env={k: v for k, v in os.environ.items() if k != "KDUMP_SCHEMAS_TOPIC"})
    assert missing.returncode == 2 and "_schemas" in missing.stderr
