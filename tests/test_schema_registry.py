"""Schema Registry values decoded offline (issue 24): a log directory written by a real producer stack
(tests/schema_registry_stack.py: the registry's _schemas topic, Avro, Protobuf and JSON Schema topics, built
with fastavro, the protobuf runtime and kafka-python's record builder) dumped as text and JSON Lines; every
value decodes to what the producer encoded, and the ones that cannot say why while the dump goes on."""
import json
import os
import re
import shutil

import pytest
import schema_registry_stack as stack  # skips the module without fastavro, protobuf, grpcio-tools

from support.cli import run_cli
from kdump.decode.payload import DecoderError, DecoderLoadError, load_decoder
from kdump.format.schema_registry import message_indexes
from kdump.decode.schema_registry import load_schemas
from kdump.decode.schema_registry.storage import replay_partition

TOPICS = ("orders-avro", "orders-proto", "orders-json")


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    return stack.built_log_dir(tmp_path_factory)


def run(*args):
    return run_cli(*args)


_PAYLOAD = re.compile(r"^\| offset: (\d+) .*?(?: key: (.*?))?(?: payload: (.*))?$")


def _text_records(out: str):
    for line in out.splitlines():
        m = _PAYLOAD.match(line)
        if m:
            yield int(m.group(1)), m.group(2), m.group(3)


def _check(decoded, expected):
    """``decoded``: the JSON text printed (or the reason in <>); ``expected``: the producer's data, or the
    start of the reason for a record that must not decode; None for null."""
    if expected is None:
        assert decoded is None
    elif isinstance(expected, str) and expected.startswith(("not ", "schema ", "Avro ", "Protobuf ", "message ",
                                                            "value is not")):
        assert decoded.startswith(f"<{expected}"), decoded
    else:
        assert json.loads(decoded) == expected


@pytest.mark.parametrize("topic", TOPICS)
def test_text_dump_decodes_every_value_to_what_was_encoded(log_dir, topic):
    root, expected = log_dir
    result = run("dump", "--key-decoder", "schema-registry", "--value-decoder", "schema-registry",
                 os.path.join(root, f"{topic}-0"))
    assert result.exit_code == 0, result.output
    got = list(_text_records(result.output))
    assert [o for o, _, _ in got] == list(range(len(expected[topic])))  # the dump went on past every failure
    for (_, key, value), (want_key, want_value) in zip(got, expected[topic], strict=True):
        _check(key, want_key)
        _check(value, want_value)


@pytest.mark.parametrize("topic", TOPICS)
def test_json_dump_carries_decoded_values_and_schema_ids(log_dir, topic):
    root, expected = log_dir
    result = run("dump", "--format", "json", "--value-decoder", "schema-registry", os.path.join(root, f"{topic}-0"))
    assert result.exit_code == 0, result.output
    records = [r for line in result.output.splitlines() for r in json.loads(line).get("records", [])]
    assert len(records) == len(expected[topic])
    for record, (_, want) in zip(records, expected[topic], strict=True):
        if want is None:
            assert record["value"] is None and "valueSchemaId" not in record
        elif isinstance(want, str):
            assert record["valueDecodeError"].startswith(want)
            assert record["valueEncoding"] in ("utf8", "base64")  # the bytes are still there
        else:
            assert record["valueEncoding"] == "decoded"
            assert record["value"] == want
            assert isinstance(record["valueSchemaId"], int)


def test_json_dump_output_follows_its_json_schema(log_dir):
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(os.path.dirname(__file__), "..", "docs", "schemas", "dump.schema.json")) as f:
        schema = json.load(f)
    root, _ = log_dir
    result = run("dump", "--format", "json", "--key-decoder", "schema-registry", "--value-decoder",
                 "schema-registry", *(os.path.join(root, f"{t}-0") for t in TOPICS))
    for line in result.output.splitlines():
        jsonschema.validate(json.loads(line), schema)


def test_value_ids_name_the_schemas_the_producer_used(log_dir):
    root, _ = log_dir
    result = run("dump", "--format", "json", "--value-decoder", "schema-registry", os.path.join(root, "orders-avro-0"))
    ids = [r.get("valueSchemaId") for line in result.output.splitlines() for r in json.loads(line)["records"]]
    assert ids == [2, 2, 3, None, None, 99, 8, 9, 3, 2]


def test_storage_replay_follows_the_registry(log_dir):
    root, _ = log_dir
    replay = replay_partition(os.path.join(root, "_schemas-0"))
    store = replay.store
    assert replay.skipped == {"key not a JSON object": 1}
    assert store.version("orders-avro-value", 1).deleted  # DELETE_SUBJECT up to version 1: soft
    assert not store.version("orders-avro-value", 2).deleted
    assert store.schema(2).versions == [("orders-avro-value", 1)]  # a soft-deleted version still serves its id
    assert store.version("gone-value", 1) is None and store.schema(8) is None  # the tombstone: a hard delete
    assert store.schema(5).schema_type == "PROTOBUF" and store.schema(7).schema_type == "JSON"
    assert store.schema(1).schema_type == "AVRO"  # schemaType absent: Avro
    assert store.schema(5).references[0].name == "common.proto"


def test_first_schema_under_an_id_wins():
    from kdump.decode.schema_registry.storage import replay
    key = stack._key("SCHEMA", subject="s", version=1)
    key2 = stack._key("SCHEMA", subject="t", version=1)
    first = json.dumps({"subject": "s", "version": 1, "id": 5, "schema": '"string"'}).encode()
    clash = json.dumps({"subject": "t", "version": 1, "id": 5, "schema": '"long"'}).encode()
    store = replay([(key, first), (key2, clash)], "test").store
    assert store.schema(5).text == '"string"' and store.schema(5).versions == [("s", 1)]


def test_schema_files_and_a_saved_get_schemas_answer(tmp_path, log_dir):
    root, _ = log_dir
    files = tmp_path / "files"
    files.mkdir()
    (files / "3.avsc").write_text(json.dumps(stack.ORDER_V2_AVSC))
    (files / "7.json").write_text(json.dumps(stack.ORDER_JSON_SCHEMA))
    (files / "README").write_text("not a schema")
    store = load_schemas(str(files))
    assert sorted(store.by_id) == [3, 7] and store.schema(3).schema_type == "AVRO"
    answer = tmp_path / "schemas.json"
    answer.write_text(json.dumps([{"subject": s, "version": v, "id": i, "schema": t,
                                   **({"schemaType": st} if st else {}), "references": r}
                                  for i, (s, v, st, t, r) in stack.REGISTERED.items()]))
    # the data topic copied away from its _schemas partition: --schemas names the schemas
    alone = tmp_path / "alone" / "orders-avro-0"
    shutil.copytree(os.path.join(root, "orders-avro-0"), alone)
    for source in (answer, files, os.path.join(root, "_schemas-0"), root):
        result = run("dump", "--value-decoder", "schema-registry", "--schemas", source, alone)
        assert result.exit_code == 0, result.output
        assert '| offset: 2 ' in result.output and 'payload: {"id":3,"note":"v2"}' in result.output


def test_no_schemas_is_a_usage_error(tmp_path, log_dir):
    root, _ = log_dir
    alone = tmp_path / "orders-avro-0"
    shutil.copytree(os.path.join(root, "orders-avro-0"), alone)
    result = run("dump", "--value-decoder", "schema-registry", alone)
    assert result.exit_code == 2 and "--schemas" in result.output
    with pytest.raises(DecoderLoadError):
        load_decoder("schema-registry", data_paths=[str(alone)])


def test_decoder_auto_picks_schema_registry_for_framed_values(log_dir):
    root, expected = log_dir
    result = run("dump", "--decoder", "auto", os.path.join(root, "orders-json-0"))
    assert result.exit_code == 0, result.output
    values = [v for _, _, v in _text_records(result.output)]
    assert json.loads(values[0]) == expected["orders-json"][0][1]
    # keys too, each side by its own first payload
    result = run("dump", "--decoder", "auto", os.path.join(root, "orders-avro-0"))
    first = next(_text_records(result.output))
    assert (first[1], json.loads(first[2])) == ('"k1"', expected["orders-avro"][0][1])
    # the _schemas partition itself holds JSON, not framed data: printed as text
    result = run("dump", "--decoder", "auto", os.path.join(root, "_schemas-0"))
    assert 'payload: {"subject": "address"' in result.output


def test_filters_match_the_decoded_text(log_dir):
    root, _ = log_dir
    result = run("dump", "--value-decoder", "schema-registry", "--value-match", '"customer":"bob"',
                 os.path.join(root, "orders-avro-0"))
    assert [o for o, _, _ in _text_records(result.output)] == [1]


def test_decoder_reasons(log_dir):
    root, _ = log_dir
    decoder = load_decoder("schema-registry", schemas=os.path.join(root, "_schemas-0"))
    with pytest.raises(DecoderError, match="shorter than the 5-byte"):
        decoder.decode(b"\x00\x00")
    with pytest.raises(DecoderError, match="magic byte"):
        decoder.decode(b"\x01\x00\x00\x00\x02")
    # a Protobuf schema that does not compile: protoc's own message, once, not a crash
    bad = load_schemas(os.path.join(root, "_schemas-0"))
    from kdump.decode.schema_registry.decoder import SchemaRegistryDecoder
    from kdump.decode.schema_registry.store import SubjectVersion
    bad.put_version(SubjectVersion("bad", 1, 50, "PROTOBUF", "syntax = \"proto3\"; message M { nosuch x = 1; }", ()))
    with pytest.raises(DecoderError, match=r"does not compile: .*nosuch"):
        SchemaRegistryDecoder(bad).decode(stack.frame(50, b"", [0]))


def test_message_indexes_as_the_serializer_writes_them():
    assert message_indexes(stack.frame(1, b"x", [0])) == ((0,), 6)
    assert message_indexes(stack.frame(1, b"x", [2, 0, 1])) == ((2, 0, 1), 9)
    assert message_indexes(stack.frame(1, b"x", [70])) == ((70,), 8)  # 70 zig-zags to two bytes


def test_stats_counts_values_per_schema_id_and_subject(log_dir):
    root, _ = log_dir
    result = run("stats", "--format", "json", "--value-decoder", "schema-registry", os.path.join(root, "orders-avro-0"))
    assert result.exit_code == 0, result.output
    (partition,) = json.loads(result.output)["partitions"]
    counted = partition["schemaRegistry"]
    # the producer wrote ids 2, 2, 3, -, plain text, 99, 8, 9, 3, 2 (see schema_registry_stack.avro_records)
    assert {k: v["records"] for k, v in counted["bySchemaId"].items()} == {"2": 3, "3": 2, "8": 1, "9": 1, "99": 1}
    assert counted["bySchemaId"]["2"]["subject"] == "orders-avro-value"
    assert counted["bySchemaId"]["8"]["subject"] is None
    assert counted["bySubject"] == {"broken-value": 1, "orders-avro-value": 5}
    assert (counted["undecodable"], counted["notFramed"], counted["nullValues"]) == (4, 1, 1)
    text = run("stats", "--value-decoder", "schema-registry", os.path.join(root, "orders-json-0")).output
    assert "orders-json-0: schema registry values: 7 (orders-json-value) 3; 1 undecodable" in text


def test_verify_deep_checks_that_every_value_decodes(log_dir):
    root, _ = log_dir
    result = run("verify", "--deep", "--format", "json", "--value-decoder", "schema-registry", root)
    files = {os.path.basename(os.path.dirname(f["path"])): f for f in json.loads(result.output)["files"]
             if f["kind"] == "log"}  # (the segments' reports; index check's of their companions follow them)
    found = [f for f in files["orders-avro-0"]["findings"] if f["code"] == "value-undecodable"]
    assert len(found) == 1 and found[0]["severity"] == "warning" and found[0]["firstOffset"] == 4
    assert found[0]["message"].startswith("5 of 9 values do not decode")  # offsets 4-8; 3 is a tombstone
    assert files["orders-json-0"]["findings"][0]["firstOffset"] == 2
    assert not files["_schemas-0"]["findings"]  # the registry's own JSON is not checked as framed values
    assert run("verify", "--value-decoder", "schema-registry", root).exit_code == 2  # needs --deep
