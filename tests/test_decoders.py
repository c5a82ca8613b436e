"""Internal-topic decoders and the schema interpreter: tables cover Kafka's record types, every version of
every type round-trips through kdump's writer and reader, the transaction log decodes field by field,
and bad bytes give Kafka's error texts (or better) instead of a traceback."""
import base64
import json
import struct
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus import CORPUS
from support.cli import run_cli
from kdump.decode.internal import make_decoder, tables
from kdump.decode.internal.coordinator import TRANSACTION_STATES
from kdump.decode.jackson import JavaDouble, jackson, java_double, to_tree
from kdump.format.schema import SchemaError, member, read_struct, write_struct
from kdump.read.segment import SegmentReader
from kdump.write.segment import RecordBatchBuilder, write_segment

TXN = CORPUS / "kafka-generated/internal-topics/__transaction_state-0/00000000000000000000.log"


def all_messages():
    for group in tables.GROUPS:
        for name in tables.module(group).MESSAGES:
            yield group, name


def versions_of(schema):
    return range(schema.versions[0], schema.versions[1] + 1)


# --- the tables ---------------------------------------------------------------------------------------
def test_every_record_type_kafka_defines_has_a_table():
    """The generator recorded each group's record types from Kafka's definitions; each names messages
    that compile, and the known apiKeys are there (spec §7.3-7.5)."""
    for group in ("group_coordinator", "transaction_coordinator", "share_coordinator", "metadata",
                  "remote_log_metadata"):
        for rtype, names in tables.record_types(group).items():
            for name in names:
                if name in tables.module(group).MESSAGES:
                    assert tables.schema(group, name).name == name
    # Kafka 4.4 defines 0-23 but 9 (share groups' partition metadata, 4.0 only) and 18 (Streams partition metadata,
    # a development form never released), type 0 as LegacyOffsetCommit (value v0 only); 4.0's forms of 0 and 9 are
    # kept as superseded record types
    assert set(tables.record_types("group_coordinator")) == set(range(24)) - {9, 18}
    assert tables.record_types("group_coordinator")[0] == ("LegacyOffsetCommitKey", "LegacyOffsetCommitValue")
    assert tables.superseded_record_types("group_coordinator") == {
        0: ("OffsetCommitKey", "OffsetCommitValue"),
        9: ("ShareGroupPartitionMetadataKey", "ShareGroupPartitionMetadataValue")}
    assert set(tables.record_types("share_coordinator")) == {0, 1}
    assert set(tables.record_types("transaction_coordinator")) == {0}
    assert set(tables.record_types("metadata")) == {0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 14, 15, 17, 18, 19, 20, 21,
                                                    22, 23, 24, 25, 26, 27, 28, 29}
    assert tables.record_types("metadata")[21] == ("ZkMigrationStateRecord", "ZK_MIGRATION_STATE_RECORD")
    assert set(tables.record_types("remote_log_metadata")) == {0, 1, 2, 3}
    every = list(all_messages())
    assert tables.record_types("metadata")[28] == ("ClearElrRecord", "CLEAR_ELR_RECORD")
    assert tables.record_types("metadata")[29] == ("UnregisterControllerRecord", "UNREGISTER_CONTROLLER_RECORD")
    assert tables.record_types("group_coordinator")[16] == ("ConsumerGroupRegularExpressionKey",
                                                            "ConsumerGroupRegularExpressionValue")
    assert len(every) == 44 + 2 + 4 + 27 + 4 + 7  # the definitions in the directories read
    for group, name in every:
        assert tables.schema(group, name).fields is not None


def test_generated_tables_are_what_the_generator_writes(tmp_path):
    """The committed tables equal a fresh run of tools/gen_schemas.py on the generator's own input format
    (a work tree made from the tables' definitions), i.e. nobody edited them by hand."""
    import importlib.util
    import os
    spec = importlib.util.spec_from_file_location("gen_schemas", CORPUS.parent.parent / "tools/gen_schemas.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    os.makedirs(tmp_path / "checkout" / "clients")
    files = {}
    superseded_types: dict = {}
    for module, (_, dirs, _, _) in gen.GROUPS.items():
        table = tables.module(module)
        # the modules with SOURCES were read from one commit of a git repository or a directory of definitions
        # with a manifest (the manifest made here stands for either), the others from a checkout
        root = tmp_path / ("defs" if hasattr(table, "SOURCES") else "checkout")
        for name, m in table.MESSAGES.items():
            os.makedirs(root / dirs[0], exist_ok=True)
            path = f"{dirs[0]}/{name}.json"
            if hasattr(table, "SOURCES"):
                commit, path = table.SOURCES[name]
                assert path.startswith(dirs[0] + "/")  # a file's name may differ from its message's
                files[path] = {"commit": commit, "note": table.PROVENANCE.get(name)}
            (root / path).write_text("// comment\n" + json.dumps(m))
        for name, (m,) in getattr(table, "SUPERSEDED", {}).items():
            # read at an older commit at its path in Kafka's tree: the manifest keeps it under superseded/
            commit, path = table.SOURCES[name + " (superseded)"]
            assert path == f"{dirs[0]}/{name}.json"
            os.makedirs(root / "superseded" / dirs[0], exist_ok=True)
            (root / "superseded" / path).write_text(json.dumps(m))
            files["superseded/" + path] = {"commit": commit, "path": path,
                                           "note": table.PROVENANCE.get(name + " (superseded)")}
        if getattr(table, "SUPERSEDED_RECORD_TYPES", None):
            superseded_types[module] = table.SUPERSEDED_RECORD_TYPES
    metadata = tables.module("metadata")
    (tmp_path / "defs" / "SOURCES.json").write_text(json.dumps({"kafka_commit": metadata.KAFKA_COMMIT,
                                                                "how": metadata.HOW, "files": files,
                                                                "superseded_record_types": superseded_types}))
    checkout = gen.Source(str(tmp_path / "checkout"), "HEAD")
    checkout.commit = lambda: tables.module("raft_control").KAFKA_COMMIT
    defs = gen.Source(str(tmp_path / "defs"), "HEAD")
    for module in gen.GROUPS:
        text = (CORPUS.parent.parent / "kdump/format/schemas" / f"{module}.py").read_text()
        table = tables.module(module)
        src = defs if hasattr(table, "SOURCES") else checkout
        baseline = (table.BASELINE_COMMIT, sorted(table.BASELINE_RECORD_TYPES)) if hasattr(
            table, "BASELINE_COMMIT") else None
        assert gen.generate(src, module, baseline) == text


# --- round trips --------------------------------------------------------------------------------------
INT_RANGES = {"int8": (-2**7, 2**7 - 1), "int16": (-2**15, 2**15 - 1), "uint16": (0, 2**16 - 1),
              "int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1), "int64": (-2**63, 2**63 - 1)}


def value_strategy(kind, f, version, present, nullable):
    if kind in INT_RANGES:
        return st.integers(*INT_RANGES[kind])
    if kind == "float64":
        return st.floats(allow_nan=False)
    if kind == "bool":
        return st.booleans()
    if kind == "uuid":
        return st.uuids()
    base = None
    if kind == "string":
        base = st.text(max_size=8)
    elif kind == "bytes":
        base = st.binary(max_size=8)
    elif kind == "struct":
        base = struct_strategy(f.struct, version)
    elif kind.startswith("[]"):
        base = st.lists(value_strategy(kind[2:], f, version, present, False), max_size=3)
    else:
        raise AssertionError(kind)
    return st.one_of(st.none(), base) if nullable else base


def struct_strategy(schema, version):
    fields = {}
    for f in schema.present(version):
        tagged = not member(f.mandatory, schema.cur, version)
        nullable = member(f.nullable, f.valid_tagged if tagged else schema.cur, version)
        fields[f.json_name] = value_strategy(f.type, f, version, schema.cur, nullable)
    return st.fixed_dictionaries(fields)


CASES = [(g, n, v) for g, n in all_messages() for v in versions_of(tables.schema(g, n))]


@pytest.mark.parametrize("group,name,version", CASES, ids=[f"{n}-v{v}" for g, n, v in CASES])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_write_then_read_gives_the_same_object(group, name, version, data):
    schema = tables.schema(group, name)
    obj = data.draw(struct_strategy(schema, version))
    assert read_struct(write_struct(obj, schema, version), schema, version) == obj


def filler(schema, version, seed=[0]):
    """A deterministic, non-default value for every field of ``schema`` at ``version``."""
    out = {}
    for f in schema.present(version):
        seed[0] += 1
        out[f.json_name] = _fill(f.type, f, version, seed[0])
    return out


def _fill(kind, f, version, n):
    if kind in INT_RANGES:
        return n % INT_RANGES[kind][1] + 1
    return {"float64": n + 0.5, "bool": True, "uuid": uuid.UUID(int=n), "string": f"s-{n}",
            "bytes": bytes([1, 2, n % 256])}.get(kind) if kind in ("float64", "bool", "uuid", "string", "bytes") else (
        filler(f.struct, version) if kind == "struct" else [_fill(kind[2:], f, version, n + i) for i in range(2)])


COORDINATOR_CASES = [(g, t, v) for g in ("group_coordinator", "transaction_coordinator", "share_coordinator")
                     for t, (k, val) in tables.record_types(g).items()
                     for v in versions_of(tables.schema(g, val))]
DECODER = {"group_coordinator": "offsets", "transaction_coordinator": "transaction-log",
           "share_coordinator": "share-group-state"}


@pytest.mark.parametrize("group,rtype,version", COORDINATOR_CASES,
                         ids=[f"{g}-{t}-v{v}" for g, t, v in COORDINATOR_CASES])
def test_records_written_by_kdump_decode_at_every_version(group, rtype, version, tmp_path):
    """A segment written by kdump's writer with one record of this type and value version, dumped with the
    topic's decoder as JSON: the decoded key and value are the written objects in Kafka's JSON form."""
    key_name, value_name = tables.record_types(group)[rtype]
    key_schema, value_schema = tables.schema(group, key_name), tables.schema(group, value_name)
    kv = 0 if key_schema.extra.get("type") == "coordinator-key" else rtype  # Kafka 4.1+'s keys are version 0
    key_obj, value_obj = filler(key_schema, kv), filler(value_schema, version)
    key = struct.pack(">h", rtype) + write_struct(key_obj, key_schema, kv)
    value = struct.pack(">h", version) + write_struct(value_obj, value_schema, version)
    b = RecordBatchBuilder(base_offset=0)
    b.append(0, 1700000000000, key, value)
    b.append(1, 1700000000001, key, None)
    path = write_segment(tmp_path / "00000000000000000000.log", [b.build()])
    result = run_cli("dump", "--format", "json", f"--{DECODER[group]}-decoder", path)
    assert result.exit_code == 0, result.stderr
    records = json.loads(result.stdout)["records"]
    assert records[0]["key"] == {"type": str(rtype), "data": json.loads(jackson(to_tree(key_obj, key_schema)))}
    expected = json.loads(jackson(to_tree(value_obj, value_schema, version)))
    if value_name == "GroupMetadataValue":  # filler protocolType is not "consumer": bytes stay base64
        assert expected["protocolType"] != "consumer"
    assert records[0]["value"] == {"version": str(version), "data": expected}
    assert records[1]["key"] == records[0]["key"] and records[1]["value"] is None  # a tombstone


METADATA_CASES = [(g, k, v) for g in ("metadata", "remote_log_metadata") for k, (name, _) in
                  tables.record_types(g).items() for v in versions_of(tables.schema(g, name))]


@pytest.mark.parametrize("group,api_key,version", METADATA_CASES, ids=[f"{g}-{k}-v{v}" for g, k, v in METADATA_CASES])
def test_metadata_records_written_by_kdump_decode_at_every_version(group, api_key, version):
    name, type_name = tables.record_types(group)[api_key]
    schema = tables.schema(group, name)
    obj = filler(schema, version)
    value = bytes([1, api_key, version]) + write_struct(obj, schema, version)
    decoder = make_decoder("cluster-metadata" if group == "metadata" else "remote-log-metadata")
    d = decoder.decode(7, None, value)
    assert d.error is None and d.key is None
    if group == "metadata":
        assert d.value == '{"type":"%s","version":%d,"data":%s}' % (type_name, version, jackson(to_tree(obj, schema)))
    else:
        assert d.value.startswith(name.replace("Record", "").replace("MetadataSnapshot", "MetadataSnapshot") + "{")
    assert decoder.decode(7, None, value + b"\x00").value == \
        f"Error at {'offset ' if group != 'metadata' else ''}7, skipping. " + \
        ("" if group == "metadata" else "Could not deserialize metadata record: ") + \
        f"Found 1 byte(s) of garbage after {api_key}"


# --- the transaction log, field by field (no Kafka output exists for it; spec §7.4-7.5) ---------------------
def txn_records():
    for batch in SegmentReader(str(TXN)):
        cols = batch.columns(1 << 20)
        for i in range(cols.count):
            yield cols.offsets[i], cols.key(i), cols.value(i)


def test_transaction_log_decodes_every_record_of_the_corpus():
    """CONTENTS.txt: offsets 0-7 value v0 in states 0..7, 8-15 value v1 in states 0..7, 16-17 tombstones (the
    second with an empty transactional id), 18 a key of version 1."""
    decoder = make_decoder("transaction-log")
    seen = {}
    for offset, key, value in txn_records():
        d = decoder.decode(offset, key, value)
        seen[offset] = d
        if offset <= 15:
            assert d.error is None
            (pid,) = struct.unpack_from(">q", value, 2)  # the first field after the int16 version
            k = json.loads(d.key)
            (id_len,) = struct.unpack_from(">h", key, 2)
            assert k == {"type": "0", "data": {"transactionalId": key[4:4 + id_len].decode()}}
            v = json.loads(d.value)
            assert v["version"] == ("0" if offset < 8 else "1")
            data = v["data"]
            assert data["producerId"] == pid
            assert data["transactionStatus"] == offset % 8
            names = ["producerId", "producerEpoch", "transactionTimeoutMs", "transactionStatus",
                     "transactionPartitions", "transactionLastUpdateTimestampMs", "transactionStartTimestampMs"]
            assert [n for n in data if n in names] == names  # declaration order
            if offset < 8:
                assert list(data) == names  # v0 has no tagged fields
            for p in data["transactionPartitions"] or []:
                assert set(p) == {"topic", "partitionIds"}
    assert seen[16].value == "<DELETE>" and json.loads(seen[16].key)["type"] == "0"
    assert seen[17].value == "<DELETE>" and json.loads(seen[17].key) == {"type": "0", "data": {"transactionalId": ""}}
    assert seen[18].key == "Unknown record type 1 at offset 18, skipping." and seen[18].value is None


def test_transaction_log_scala_text():
    decoder = make_decoder("transaction-log", "scala")
    for offset, key, value in txn_records():
        d = decoder.decode(offset, key, value)
        if offset <= 15:
            state = TRANSACTION_STATES[offset % 8]
            java = json.loads(make_decoder("transaction-log").decode(offset, key, value).value)["data"]
            assert d.key == f"transaction_metadata::transactionalId={java and json.loads(make_decoder('transaction-log').decode(offset, key, value).key)['data']['transactionalId']}"
            parts = [] if state == "Empty" else [f"{p['topic']}-{i}" for p in java["transactionPartitions"] or []
                                                 for i in p["partitionIds"]]
            assert d.value == (f"producerId:{java['producerId']},producerEpoch:{java['producerEpoch']},state={state},"
                               f"partitions=[{','.join(parts)}],"
                               f"txnLastUpdateTimestamp={java['transactionLastUpdateTimestampMs']},"
                               f"txnTimeoutMs={java['transactionTimeoutMs']}")
        elif offset == 18:
            assert d.key == "unknown::version=1" and d.value is None
        else:
            assert d.value == "<DELETE>"


def test_transaction_log_value_v1_tagged_fields_follow_kafkas_example():
    """Spec §7.5's example: tagged previous/next producer ids shown, clientTransactionVersion 0 omitted."""
    schema = tables.schema("transaction_coordinator", "TransactionLogValue")
    obj = {"producerId": 12, "previousProducerId": 11, "nextProducerId": 10, "producerEpoch": 2,
           "transactionTimeoutMs": 14, "transactionStatus": 0,
           "transactionPartitions": [{"topic": "topic1", "partitionIds": [0, 1, 2]},
                                     {"topic": "topic2", "partitionIds": [3, 4, 5]}],
           "transactionLastUpdateTimestampMs": 123, "transactionStartTimestampMs": 13, "clientTransactionVersion": 0}
    value = struct.pack(">h", 1) + write_struct(obj, schema, 1)
    key = struct.pack(">h", 0) + write_struct({"transactionalId": "txnId"},
                                              tables.schema("transaction_coordinator", "TransactionLogKey"), 0)
    d = make_decoder("transaction-log").decode(0, key, value)
    assert d.key == '{"type":"0","data":{"transactionalId":"txnId"}}'
    assert d.value == ('{"version":"1","data":{"producerId":12,"previousProducerId":11,"nextProducerId":10,'
                       '"producerEpoch":2,"transactionTimeoutMs":14,"transactionStatus":0,"transactionPartitions":'
                       '[{"topic":"topic1","partitionIds":[0,1,2]},{"topic":"topic2","partitionIds":[3,4,5]}],'
                       '"transactionLastUpdateTimestampMs":123,"transactionStartTimestampMs":13}}')


# --- Kafka's own parser test vectors (spec §7.5) and error texts ----------------------------------------------
def _coordinator(group, rtype, key_obj, version, value_obj):
    key_name, value_name = tables.record_types(group)[rtype]
    key_schema = tables.schema(group, key_name)
    # a coordinator-key definition (Kafka 4.1+) has its fields at version 0 whatever its record type
    key = struct.pack(">h", rtype) + write_struct(key_obj, key_schema, 0 if key_schema.extra.get(
        "type") == "coordinator-key" else rtype)
    if value_obj is None:
        return key, None
    return key, struct.pack(">h", version) + write_struct(value_obj, tables.schema(group, value_name), version)


def _embedded(name, version, obj):
    return struct.pack(">h", version) + write_struct(obj, tables.schema("raft_control", name), version)


def test_offsets_decoder_group_metadata_with_consumer_protocol():
    sub = _embedded("ConsumerProtocolSubscription", 3, {"topics": ["foo"], "userData": None, "ownedPartitions": [
        {"topic": "foo", "partitions": [0]}], "generationId": 0, "rackId": "rack"})
    assignment = _embedded("ConsumerProtocolAssignment", 3, {"assignedPartitions": [{"topic": "foo", "partitions": [0]}],
                                                             "userData": None})
    member = {"memberId": "member", "groupInstanceId": "instance", "clientId": "client", "clientHost": "host",
              "rebalanceTimeout": 1000, "sessionTimeout": 100, "subscription": sub, "assignment": assignment}
    value = {"protocolType": "consumer", "generation": 10, "protocol": "range", "leader": "member",
             "currentStateTimestamp": -1, "members": [member]}
    d = make_decoder("offsets").decode(0, *_coordinator("group_coordinator", 2, {"group": "group"}, 4, value))
    assert d.key == '{"type":"2","data":{"group":"group"}}'
    assert d.value == (
        '{"version":"4","data":{"protocolType":"consumer","generation":10,"protocol":"range","leader":"member",'
        '"currentStateTimestamp":-1,"members":[{"memberId":"member","groupInstanceId":"instance","clientId":"client",'
        '"clientHost":"host","rebalanceTimeout":1000,"sessionTimeout":100,"subscription":{"topics":["foo"],'
        '"userData":null,"ownedPartitions":[{"topic":"foo","partitions":[0]}],"generationId":0,"rackId":"rack"},'
        '"assignment":{"assignedPartitions":[{"topic":"foo","partitions":[0]}],"userData":null}}]}}')
    member.update(subscription=b"Subscription", assignment=b"Assignment")
    d = make_decoder("offsets").decode(0, *_coordinator("group_coordinator", 2, {"group": "group"}, 4, value))
    assert '"subscription":"U3Vic2NyaXB0aW9u","assignment":"QXNzaWdubWVudA=="' in d.value


def test_offsets_decoder_error_texts():
    dec = make_decoder("offsets")
    key, _ = _coordinator("group_coordinator", 3, {"groupId": "group"}, 0, None)
    assert dec.decode(0, key, None).value == "<DELETE>"
    assert dec.decode(0, struct.pack(">h", 32767), b"").key == "Unknown record type 32767 at offset 0, skipping."
    # Kafka's test: a value whose bytes length claims 536870911 bytes
    value = struct.pack(">h", 0) + bytes([0x80, 0x80, 0x80, 0x80, 0x02])
    d = make_decoder("offsets").decode(0, key, value)
    assert d.key is not None and d.key.startswith("Error at offset 0, skipping. Could not read record with version 0 "
                                                  "from value's buffer due to: ")
    assert dec.decode(9, None, b"x").key == ("Error at offset 9, skipping. Failed to decode message at offset 9 using "
                                             "the specified decoder (message had a missing key)")
    assert make_decoder("offsets", "scala").decode(9, None, b"x").key.endswith(
        "using offset topic decoder (message had a missing key)")


def test_length_errors_are_kafkas_generated_texts():
    """A compact length of varint 536870912 (length 536870911) with 1 byte left: a string field gives the
    generated code's "invalid length" text, a bytes field ByteBufferAccessor's "Error reading byte array"."""
    key, _ = _coordinator("group_coordinator", 5, {"groupId": "g", "memberId": "m"}, 0, None)
    value = struct.pack(">h", 0) + bytes([0x80, 0x80, 0x80, 0x80, 0x02, 0x00])
    d = make_decoder("offsets").decode(0, key, value)
    assert d.key == ("Error at offset 0, skipping. Could not read record with version 0 from value's buffer due to: "
                     "string field instanceId had invalid length 536870911.")
    scram = tables.schema("metadata", "UserScramCredentialRecord")
    prefix = write_struct({"name": "n", "mechanism": 1}, scram, 0)[:3]  # name, mechanism
    with pytest.raises(SchemaError) as e:
        read_struct(prefix + bytes([0x80, 0x80, 0x80, 0x80, 0x02, 0x00]), scram, 0)
    assert e.value.kafka == "Error reading byte array of 536870911 byte(s): only 1 byte(s) available"


def test_share_group_state_decoder_value_label_and_null_error():
    group = "share_coordinator"
    key_obj = {"groupId": "gs1", "topicId": uuid.UUID(int=7), "partition": 0}
    # DeliveryCompleteCount (tagged, Kafka 4.2+) at its default: no tagged field follows stateBatches
    value_obj = {**filler(tables.schema(group, "ShareSnapshotValue"), 0), "deliveryCompleteCount": -1}
    key, value = _coordinator(group, 0, key_obj, 0, value_obj)
    java, scala = make_decoder("share-group-state").decode(0, key, value), \
        make_decoder("share-group-state", "scala").decode(0, key, value)
    assert java.value.startswith('{"version":"0","data":{') and scala.value.startswith('{"type":"0","data":{')
    assert java.value[len('{"version"'):] == scala.value[len('{"type"'):]
    # stateBatches serialized as null (compact array length 0)
    schema = tables.schema(group, "ShareSnapshotValue")
    raw = write_struct(value_obj, schema, 0)
    fields = [f.json_name for f in schema.fields]
    assert fields[-1] == "stateBatches"
    prefix = write_struct({**value_obj, "stateBatches": []}, schema, 0)[:-2]  # drop "empty array, no tags"
    d = make_decoder("share-group-state").decode(3, key, struct.pack(">h", 0) + prefix + b"\x00\x00")
    assert d.key.endswith("due to: non-nullable field stateBatches was serialized as null.")
    assert raw != prefix


def test_remote_log_metadata_partition_delete_to_string():
    schema = tables.schema("remote_log_metadata", "RemotePartitionDeleteMetadataRecord")
    topic_id = uuid.UUID(int=0x0102)
    obj = {"topicIdPartition": {"name": "foo", "id": topic_id, "partition": 0}, "brokerId": 0, "eventTimestampMs": 0,
           "remotePartitionDeleteState": 0}
    value = bytes([1, 2, 0]) + write_struct(obj, schema, 0)
    d = make_decoder("remote-log-metadata").decode(0, None, value)
    tid = base64.urlsafe_b64encode(topic_id.bytes).rstrip(b"=").decode()
    assert d.value == (f"RemotePartitionDeleteMetadata{{topicPartition={tid}:foo-0, state=DELETE_PARTITION_MARKED, "
                       "eventTimestampMs=0, brokerId=0}")
    bad = make_decoder("remote-log-metadata").decode(3, None, b"corrupted")
    assert "Could not deserialize metadata record" in bad.value and bad.value.startswith("Error at offset 3, skipping.")


def test_cluster_metadata_bogus_value_is_skipped():
    """Kafka's test appends a value of two unsigned varints 10000: the dump goes on and says skipping."""
    bogus = bytes([0x90, 0x4E, 0x90, 0x4E])
    d = make_decoder("cluster-metadata").decode(5, None, bogus)
    assert d.value == ("Error at 5, skipping. Could not deserialize metadata record due to unknown frame version "
                       "10000(only frame version 1 is supported)")


@given(st.binary(max_size=64), st.one_of(st.none(), st.binary(max_size=64)))
@settings(max_examples=300, deadline=None)
def test_bad_bytes_never_raise(key, value):
    for name in ("offsets", "transaction-log", "share-group-state", "cluster-metadata", "remote-log-metadata"):
        for compat in ("java", "scala"):
            d = make_decoder(name, compat).decode(1, key, value)
            assert d.key is not None or d.value is not None


def test_every_type_and_version_survives_truncation():
    """Every prefix of a valid value gives Kafka's error text, never an exception."""
    for group, api_key, version in METADATA_CASES:
        name = tables.record_types(group)[api_key][0]
        schema = tables.schema(group, name)
        value = bytes([1, api_key, version]) + write_struct(filler(schema, version), schema, version)
        dec = make_decoder("cluster-metadata" if group == "metadata" else "remote-log-metadata")
        for n in range(len(value)):
            assert dec.decode(0, None, value[:n]).error is not None


# --- JSON printing -------------------------------------------------------------------------------------
@pytest.mark.parametrize("d,text", [(327.5, "327.5"), (1.0, "1.0"), (1e7, "1.0E7"), (1.5e-4, "1.5E-4"),
                                    (0.001, "0.001"), (-2.25, "-2.25"), (123456.789, "123456.789"), (0.0, "0.0"),
                                    (1e21, "1.0E21"), (9999999.0, "9999999.0")])
def test_doubles_print_as_java(d, text):
    assert java_double(d) == text
    assert jackson({"v": JavaDouble(d)}) == '{"v":%s}' % text


def test_strings_escape_as_jackson():
    assert jackson("a\"b\\c\n\t\x01\u00e9/") == '"a\\"b\\\\c\\n\\t\\u0001\u00e9/"'


def test_unknown_tagged_fields_are_kept_and_left_out_of_json():
    schema = tables.schema("metadata", "TopicRecord")
    raw = write_struct({"name": "t", "topicId": uuid.UUID(int=1)}, schema, 0)
    with_tag = raw[:-1] + bytes([1, 9, 2, 0xAB, 0xCD])  # one tagged field: tag 9, 2 bytes
    obj = read_struct(with_tag, schema, 0)
    assert obj["_unknownTaggedFields"] == [(9, b"\xab\xcd")]
    assert jackson(to_tree(obj, schema)) == '{"name":"t","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}'
    assert write_struct(obj, schema, 0) == with_tag


def test_an_unknown_tagged_field_of_negative_size_is_a_schema_error():
    # found by fuzzing (fixtures/fuzz/schema/, fixtures/fuzz/decoders/): the size varint wraps to a negative Java
    # int; Kafka's readArray then throws NegativeArraySizeException (message: the size). kdump sliced back
    # and later raised IndexError (exit 70).
    schema = tables.schema("metadata", "TopicRecord")
    raw = write_struct({"name": "t", "topicId": uuid.UUID(int=1)}, schema, 0)
    negative = raw[:-1] + bytes([1, 9, 0xF8, 0xFF, 0xFF, 0xFF, 0x0F])  # tag 9, size 0xFFFFFFF8 = -8
    with pytest.raises(SchemaError) as e:
        read_struct(negative, schema, 0)
    assert e.value.code == "schema-invalid" and e.value.kafka == "-8"
    decoded = make_decoder("cluster-metadata").decode(5, None, bytes([1, 2, 0]) + negative)  # frame v0, type 2
    assert decoded.error is not None and decoded.error.endswith("-8)")


def test_reading_beyond_the_schema_versions_follows_kafkas_generated_code():
    """OffsetCommitValue has versions 0-4; Kafka's generated reader at version 99 reads the v4 fields (its version
    checks test only bounds the schema's own versions can cross), which the corpus record at offset 67 shows."""
    schema = tables.schema("group_coordinator", "OffsetCommitValue")
    v4 = write_struct({"offset": 1, "leaderEpoch": 2, "metadata": "m", "commitTimestamp": 3}, schema, 4)
    assert read_struct(v4, schema, 99) == read_struct(v4, schema, 4)
    nested = tables.schema("group_coordinator", "ConsumerGroupPartitionMetadataValue")
    with pytest.raises(SchemaError):
        read_struct(write_struct(filler(nested, 0), nested, 0), nested, 99)
