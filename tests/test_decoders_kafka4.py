"""Records of Kafka 4.1+ internal topics, encoded here byte by byte from Kafka's definitions (struct.pack, not
kdump's writer), decoded as DumpLogSegments prints them; what the definitions do not explain is shown, and
``verify --deep`` reports it."""
import base64
import json
import struct
import uuid
from pathlib import Path

import pytest

from support.cli import run_cli
from support.coordinator_bytes import carray, cstr, s16, tags, uvarint
from kdump.decode.internal import make_decoder
from kdump.write.segment import RecordBatchBuilder, write_segment

ROOT = Path(__file__).resolve().parent.parent


def offsets(key: bytes, value: bytes | None):
    return make_decoder("offsets").decode(5, key, value)


TOPIC = uuid.UUID("0123456789abcdef0123456789abcdef")
TOPIC_TEXT = base64.urlsafe_b64encode(TOPIC.bytes).rstrip(b"=").decode()


def test_consumer_group_metadata_tagged_fields_of_4_1_and_later():
    """MetadataHash (tag 0, KIP-1101) and CreationTimeMs (tag 1, KIP-1282) are printed, as Kafka's converter
    prints tagged fields that differ from their default."""
    key = struct.pack(">h", 3) + s16("g")
    value = struct.pack(">hi", 0, 7) + tags((0, struct.pack(">q", 123)), (1, struct.pack(">q", 1700000000000)))
    d = offsets(key, value)
    assert d.key == '{"type":"3","data":{"groupId":"g"}}'
    assert d.value == '{"version":"0","data":{"epoch":7,"metadataHash":123,"creationTimeMs":1700000000000}}'
    assert d.leftover is None
    d = offsets(key, struct.pack(">hi", 0, 7) + tags())  # both at their defaults: not printed
    assert d.value == '{"version":"0","data":{"epoch":7}}'


def test_target_assignment_timestamp():
    key = struct.pack(">h", 6) + s16("g")
    value = struct.pack(">hi", 0, 4) + tags((0, struct.pack(">q", 99)))
    assert offsets(key, value).value == '{"version":"0","data":{"assignmentEpoch":4,"assignmentTimestamp":99}}'


def test_regular_expression_record_type_16():
    key = struct.pack(">h", 16) + s16("g") + s16("t.*")
    value = struct.pack(">h", 0) + carray([cstr("t1"), cstr("t2")]) + struct.pack(">qq", 5, 1700) + tags()
    d = offsets(key, value)
    assert d.key == '{"type":"16","data":{"groupId":"g","regularExpression":"t.*"}}'
    assert d.value == '{"version":"0","data":{"topics":["t1","t2"],"version":5,"timestamp":1700}}'
    assert offsets(key, None).value == "<DELETE>"


def test_streams_group_metadata_type_17_last_assignment_configs_tagged():
    """Kafka 4.3's StreamsGroupMetadataValue (apache/kafka@36f17cfee558): ValidatedTopologyEpoch (tag 0) and
    LastAssignmentConfigs (tag 1, a nullable array whose definition's default is a JSON null, which Kafka's
    generator (FieldSpec) reads as no default: an empty list), both written only when not at their default."""
    key = struct.pack(">h", 17) + s16("app")
    config = cstr("num.standby.replicas") + cstr("0") + tags()
    value = struct.pack(">hiq", 0, 7, 0x0102030405060708) + tags((0, struct.pack(">i", 0)), (1, carray([config])))
    d = offsets(key, value)
    assert d.value == ('{"version":"0","data":{"epoch":7,"metadataHash":72623859790382856,"validatedTopologyEpoch":0,'
                       '"lastAssignmentConfigs":[{"key":"num.standby.replicas","value":"0"}]}}')
    assert d.leftover is None
    d = offsets(key, struct.pack(">hiq", 0, 7, 1) + tags())  # both at their defaults (-1, empty): not printed
    assert d.value == '{"version":"0","data":{"epoch":7,"metadataHash":1}}' and d.leftover is None
    # the converter's check for a nullable array with a non-null default is "null or not empty"
    d = offsets(key, struct.pack(">hiq", 0, 7, 1) + tags((1, carray([]))))
    assert d.value == '{"version":"0","data":{"epoch":7,"metadataHash":1}}' and d.leftover is None
    d = offsets(key, struct.pack(">hiq", 0, 7, 1) + tags((1, uvarint(0))))  # a null array
    assert json.loads(d.value)["data"] == {"epoch": 7, "metadataHash": 1, "lastAssignmentConfigs": None}
    # KIP-1331 (Kafka 4.4, apache/kafka@5111ad253a7a): the stored and failed topology description epochs,
    # tags 2 and 3, -1 by default
    d = offsets(key, struct.pack(">hiq", 0, 7, 1) + tags((0, struct.pack(">i", 4)), (2, struct.pack(">i", 4)),
                                                       (3, struct.pack(">i", 3))))
    assert d.value == ('{"version":"0","data":{"epoch":7,"metadataHash":1,"validatedTopologyEpoch":4,'
                       '"storedDescriptionTopologyEpoch":4,"failedDescriptionTopologyEpoch":3}}')
    assert d.leftover is None


def test_streams_target_assignment_timestamp_type_20_and_revocation_epoch_type_22():
    """AssignmentTimestamp (KIP-1263, tag 0, default 0) and a member's RevocationEpoch (tag 0, default -1)."""
    timestamp = tags((0, struct.pack(">q", 1791331200000)))
    d = offsets(struct.pack(">h", 20) + s16("app"), struct.pack(">hi", 0, 12) + timestamp)
    assert d.value == '{"version":"0","data":{"assignmentEpoch":12,"assignmentTimestamp":1791331200000}}'
    assert offsets(struct.pack(">h", 20) + s16("app"), struct.pack(">hi", 0, 12) + tags()).value == (
        '{"version":"0","data":{"assignmentEpoch":12}}')
    current = struct.pack(">h", 22) + s16("app") + s16("m1")
    d = offsets(current, struct.pack(">hiib", 0, 5, 4, 0) + carray([]) * 6 + tags((0, struct.pack(">i", 3))))
    assert json.loads(d.value)["data"]["revocationEpoch"] == 3 and d.leftover is None
    d = offsets(current, struct.pack(">hiib", 0, 5, 4, 0) + carray([]) * 6 + tags())
    assert "revocationEpoch" not in json.loads(d.value)["data"]


def test_streams_group_metadata_type_17_development_form():
    """The form the index's newest apache/kafka definition has (a plain AssignmentConfigs array; kept as the
    superseded definition): such records still decode whole, printed with that definition's names."""
    key = struct.pack(">h", 17) + s16("app")
    config = cstr("num.standby.replicas") + cstr("1") + tags()
    value = struct.pack(">hiq", 0, 3, 99) + carray([config]) + tags((0, struct.pack(">i", 2)))
    d = offsets(key, value)
    assert d.key == '{"type":"17","data":{"groupId":"app"}}'
    assert json.loads(d.value) == {"version": "0", "data": {
        "epoch": 3, "metadataHash": 99, "validatedTopologyEpoch": 2,
        "assignmentConfigs": [{"key": "num.standby.replicas", "value": "1"}]}}
    assert list(json.loads(d.value)["data"]) == ["epoch", "metadataHash", "validatedTopologyEpoch",
                                                 "assignmentConfigs"]  # declaration order


def test_streams_group_member_and_assignment_types_19_21_22():
    member = struct.pack(">h", 19) + s16("app") + s16("m1")
    endpoint = struct.pack(">b", 1) + cstr("h") + struct.pack(">H", 8080) + tags()
    value = (struct.pack(">h", 0) + uvarint(0) + cstr("r1") + cstr("c") + cstr("/1.2.3.4")
             + struct.pack(">ii", 30000, 2) + cstr("p") + endpoint + carray([cstr("k") + cstr("v") + tags()])
             + tags())
    d = offsets(member, value)
    assert d.key == '{"type":"19","data":{"groupId":"app","memberId":"m1"}}'
    assert d.value == ('{"version":"0","data":{"instanceId":null,"rackId":"r1","clientId":"c","clientHost":"/1.2.3.4",'
                       '"rebalanceTimeoutMs":30000,"topologyEpoch":2,"processId":"p",'
                       '"userEndpoint":{"host":"h","port":8080},"clientTags":[{"key":"k","value":"v"}]}}')
    task = cstr("0") + carray([struct.pack(">i", 0), struct.pack(">i", 1)]) + tags()
    target = struct.pack(">h", 21) + s16("app") + s16("m1")
    d = offsets(target, struct.pack(">h", 0) + carray([task]) + carray([]) + carray([]) + tags())
    assert d.value == ('{"version":"0","data":{"activeTasks":[{"subtopologyId":"0","partitions":[0,1]}],'
                       '"standbyTasks":[],"warmupTasks":[]}}')
    current = struct.pack(">h", 22) + s16("app") + s16("m1")
    d = offsets(current, struct.pack(">hiib", 0, 5, 4, 0) + carray([task]) + carray([]) * 5 + tags())
    assert json.loads(d.value)["data"]["memberEpoch"] == 5
    assert json.loads(d.value)["data"]["activeTasks"] == [{"subtopologyId": "0", "partitions": [0, 1]}]


def test_streams_topology_type_23_and_resolved_topic_ids_type_24():
    info = cstr("app-store-changelog") + struct.pack(">ih", 0, 3) + carray([cstr("k") + cstr("v") + tags()]) + tags()
    group = carray([struct.pack(">h", 0)]) + carray([]) + carray([]) + tags()
    sub = (cstr("0") + carray([cstr("in")]) + carray([]) + carray([info]) + carray([]) + carray([]) + carray([group])
           + tags())
    d = offsets(struct.pack(">h", 23) + s16("app"), struct.pack(">hi", 0, 1) + carray([sub]) + tags())
    assert d.key == '{"type":"23","data":{"groupId":"app"}}'
    assert json.loads(d.value)["data"] == {"epoch": 1, "subtopologies": [{
        "subtopologyId": "0", "sourceTopics": ["in"], "sourceTopicRegex": [],
        "stateChangelogTopics": [{"name": "app-store-changelog", "partitions": 0, "replicationFactor": 3,
                                  "topicConfigs": [{"key": "k", "value": "v"}]}],
        "repartitionSinkTopics": [], "repartitionSourceTopics": [],
        "copartitionGroups": [{"sourceTopics": [0], "sourceTopicRegex": [], "repartitionSourceTopics": []}]}]}
    resolved = cstr("0") + carray([TOPIC.bytes]) + tags()
    d = offsets(struct.pack(">h", 24) + s16("app"), struct.pack(">hi", 0, 7) + carray([resolved]) + tags())
    assert d.value == ('{"version":"0","data":{"assignmentEpoch":7,"resolvedTopicIdsBySubtopology":'
                       f'[{{"subtopologyId":"0","topicIds":["{TOPIC_TEXT}"]}}]}}}}')


def test_share_group_state_partition_metadata_4_1_and_4_0_forms():
    key = struct.pack(">h", 15) + s16("sg")
    initializing = TOPIC.bytes + cstr("t") + carray([struct.pack(">i", 0)]) + struct.pack(">q", 1234) + tags()
    d = offsets(key, struct.pack(">h", 0) + carray([initializing]) + carray([]) + carray([]) + tags())
    assert d.value == ('{"version":"0","data":{"initializingTopics":[{"topicId":"' + TOPIC_TEXT + '","topicName":"t",'
                       '"partitions":[0],"createTimestamp":1234}],"initializedTopics":[],"deletingTopics":[]}}')
    # as Kafka 4.0 wrote it (no InitializingTopics, no CreateTimestamp): read with 4.0's definition
    initialized = TOPIC.bytes + cstr("t") + carray([struct.pack(">i", 0)]) + tags()
    d = offsets(key, struct.pack(">h", 0) + carray([initialized]) + carray([]) + tags())
    assert d.value == ('{"version":"0","data":{"initializedTopics":[{"topicId":"' + TOPIC_TEXT + '","topicName":"t",'
                       '"partitions":[0]}],"deletingTopics":[]}}')
    assert d.leftover is None


def test_share_group_metadata_hash():
    key = struct.pack(">h", 11) + s16("sg")
    assert offsets(key, struct.pack(">hiq", 0, 2, 77) + tags()).value == \
        '{"version":"0","data":{"epoch":2,"metadataHash":77}}'


def test_clear_elr_record_28():
    value = uvarint(1) + uvarint(28) + uvarint(0) + cstr("orders") + tags()
    d = make_decoder("cluster-metadata").decode(3, None, value)
    assert d.value == '{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"orders"}}'


def test_unknown_tagged_fields_and_trailing_bytes_are_shown():
    key = struct.pack(">h", 3) + s16("g")
    d = offsets(key, struct.pack(">hi", 0, 7) + tags((9, b"\xab\xcd")))
    assert d.value == ('{"version":"0","data":{"epoch":7},'
                       '"unknownTaggedFields":[{"field":"","tag":9,"data":"abcd"}]}')
    assert "unknown tagged field" in d.leftover
    d = offsets(key, struct.pack(">hi", 0, 7) + tags() + b"\x01\x02\x03")
    assert d.value == '{"version":"0","data":{"epoch":7},"trailingBytes":"010203"}'
    assert "3 byte(s) after the ConsumerGroupMetadataValue" in d.leftover
    value = uvarint(1) + uvarint(28) + uvarint(0) + cstr("t") + tags((4, b"\x00"))
    d = make_decoder("cluster-metadata").decode(3, None, value)
    assert json.loads(d.value)["unknownTaggedFields"] == [{"field": "", "tag": 4, "data": "00"}]


def test_verify_deep_reports_partly_decoded_internal_records(tmp_path):
    key = struct.pack(">h", 3) + s16("g")
    b = RecordBatchBuilder(base_offset=0)
    b.append(0, 1700000000000, key, struct.pack(">hi", 0, 7) + tags())
    b.append(1, 1700000000001, key, struct.pack(">hi", 0, 7) + tags() + b"\xff")
    d = tmp_path / "__consumer_offsets-0"
    d.mkdir()
    path = write_segment(d / "00000000000000000000.log", [b.build()])
    result = run_cli("verify", "--deep", "--format", "json", str(path))
    found = [f for f in json.loads(result.stdout)["files"][0]["findings"]
             if f["code"] == "internal-record-partly-decoded"]
    assert len(found) == 1 and "1 of 2 records" in found[0]["message"] and "offset 1" in found[0]["message"]
    shallow = run_cli("verify", "--format", "json", str(path))
    assert "internal-record-partly-decoded" not in shallow.stdout
    dumped = run_cli("dump", "--decoder", "auto", str(path))
    assert '"trailingBytes":"ff"' in dumped.stdout


def test_dump_json_of_leftovers_validates_against_the_dump_schema(tmp_path):
    """unknownTaggedFields, trailingBytes and unknownVersion are in docs/schemas/dump.schema.json, strictly."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import ValidationError
    schema = json.loads((ROOT / "docs" / "schemas" / "dump.schema.json").read_text())
    key = struct.pack(">h", 3) + s16("g")
    b = RecordBatchBuilder(base_offset=0)
    b.append(0, 1700000000000, key, struct.pack(">hi", 0, 7) + tags((9, b"\xab")) + b"\x01")
    b.append(1, 1700000000001, key, struct.pack(">hi", 1, 7) + tags())  # a version the definitions do not have
    d = tmp_path / "__consumer_offsets-0"
    d.mkdir()
    write_segment(d / "00000000000000000000.log", [b.build()])
    res = run_cli("dump", "--decoder", "auto", "--format", "json", str(d))
    [batch] = [json.loads(line) for line in res.stdout.splitlines() if json.loads(line)["type"] == "batch"]
    first, second = (r["value"] for r in batch["records"])
    assert first["unknownTaggedFields"] == [{"field": "", "tag": 9, "data": "ab"}] and first["trailingBytes"] == "01"
    assert second["unknownVersion"] is True
    validator = Draft202012Validator(schema)
    validator.validate(batch)
    first["trailingBytes"] = "not hex"
    with pytest.raises(ValidationError):
        validator.validate(batch)


def test_scala_transaction_log_text_shows_bytes_after_the_key_and_value():
    """The Scala tool's text (--compat scala) ignored what followed the key's and value's fields; kdump shows it
    after the text and reports it as the Java text does (never silent)."""
    decoder = make_decoder("transaction-log", "scala")
    key = struct.pack(">h", 0) + s16("txn") + b"\x01\x02"
    # TransactionLogValue v0 (not flexible): producerId, producerEpoch, timeoutMs, status (1 = Ongoing),
    # partitions [topic "t", [0]], lastUpdate, start; then one byte more
    value = (struct.pack(">hqhib", 0, 7, 1, 60000, 1) + struct.pack(">i", 1) + s16("t") + struct.pack(">ii", 1, 0)
             + struct.pack(">qq", 1700, 1600))
    d = decoder.decode(4, key, value + b"\xee")
    assert d.key == "transaction_metadata::transactionalId=txn [trailingBytes=0102]"
    assert d.value == ("producerId:7,producerEpoch:1,state=Ongoing,partitions=[t-0],txnLastUpdateTimestamp=1700,"
                       "txnTimeoutMs=60000 [trailingBytes=ee]")
    assert d.key_obj == {"transactionalId": "txn", "trailingBytes": "0102"}
    assert d.value_obj["trailingBytes"] == "ee"
    assert "2 byte(s) after the TransactionLogKey" in d.leftover
    assert "1 byte(s) after the TransactionLogValue" in d.leftover
    tomb = decoder.decode(5, key, None)
    assert tomb.value == "<DELETE>" and "2 byte(s) after the TransactionLogKey" in tomb.leftover
    whole = decoder.decode(6, key[:-2], value)
    assert whole.key == "transaction_metadata::transactionalId=txn" and whole.leftover is None
    assert whole.value.endswith("txnTimeoutMs=60000")


def test_record_types_known_in_4_0_are_read_from_the_baseline_definitions(tmp_path):
    """KNOWN_IN_4_0 is no hand-written table: tools/gen_schemas.py reads the record types of the baseline
    release's definitions (--baseline) into each coordinator table, and the decoders take them from there."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_schemas", ROOT / "tools" / "gen_schemas.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    from kdump.decode.internal import coordinator, tables
    for group in (coordinator.OFFSETS, coordinator.TRANSACTIONS, coordinator.SHARE_STATE):
        table = tables.module(group)
        assert table.BASELINE_COMMIT.startswith("1eb7644349cb")  # the 4.0 tables' commit
        assert coordinator.KNOWN_IN_4_0[group] == table.BASELINE_RECORD_TYPES <= set(table.RECORD_TYPES)
    assert coordinator.KNOWN_IN_4_0[coordinator.OFFSETS] == frozenset(range(16))  # 4.0: up to ShareGroupStatePartition
    # a baseline of one old-style key (record types = its validVersions) and one coordinator-key (its apiKey)
    d = tmp_path / "base" / "group-coordinator/src/main/resources/common/message"
    d.mkdir(parents=True)
    (tmp_path / "base" / "clients").mkdir()
    for name, extra in (("OffsetCommit", {"validVersions": "0-1"}),
                        ("Regex", {"validVersions": "0", "type": "coordinator-key", "apiKey": 16})):
        (d / f"{name}Key.json").write_text(json.dumps({"name": f"{name}Key", "fields": [], **extra}))
        (d / f"{name}Value.json").write_text(json.dumps({"name": f"{name}Value", "validVersions": "0",
                                                         "fields": []}))
    commit, types = gen.baseline_types(gen.Source(str(tmp_path / "base"), "HEAD"), "group_coordinator")
    assert types == [0, 1, 16]
    text = gen.generate(gen.Source(str(tmp_path / "base"), "HEAD"), "group_coordinator", (commit, types))
    assert "BASELINE_RECORD_TYPES: frozenset[int] = frozenset([0, 1, 16])" in text


def test_assignment_epochs_of_kip_1251_types_8_and_22():
    """A current assignment's partitions (consumer groups, type 8) and tasks (Streams groups, type 22) carry the
    epoch each was assigned at as a tagged field (tag 0 of the struct, a nullable []int32, null by default)."""
    key = struct.pack(">h", 8) + s16("g") + s16("m")
    assigned = TOPIC.bytes + carray([struct.pack(">i", 0), struct.pack(">i", 1)]) + tags(
        (0, carray([struct.pack(">i", 4), struct.pack(">i", 5)])))
    d = offsets(key, struct.pack(">hiib", 0, 5, 4, 0) + carray([assigned]) + carray([]) + tags())
    assert d.value == ('{"version":"0","data":{"memberEpoch":5,"previousMemberEpoch":4,"state":0,"assignedPartitions":'
                       f'[{{"topicId":"{TOPIC_TEXT}","partitions":[0,1],"assignmentEpochs":[4,5]}}],'
                       '"partitionsPendingRevocation":[]}}')
    assert d.leftover is None
    key = struct.pack(">h", 22) + s16("app") + s16("m1")
    task = cstr("0") + carray([struct.pack(">i", 3)]) + tags((0, carray([struct.pack(">i", 2)])))
    d = offsets(key, struct.pack(">hiib", 0, 5, 4, 2) + carray([task]) + carray([]) * 5 + tags())
    assert json.loads(d.value)["data"]["activeTasks"] == [{"subtopologyId": "0", "partitions": [3],
                                                           "assignmentEpochs": [2]}]
    assert d.leftover is None


def test_every_generated_definition_says_where_it_was_read_and_why_it_is_the_newest():
    """Each table gathered file by file names, per definition, the commit and path it was read at (SOURCES) and
    how it was established as the newest found (PROVENANCE), naming the repository it was read in."""
    from kdump.decode.internal import tables
    for group in ("group_coordinator", "transaction_coordinator", "share_coordinator", "metadata"):
        table = tables.module(group)
        assert set(table.SOURCES) == set(table.PROVENANCE), group
        assert all(len(commit) == 40 for commit, _ in table.SOURCES.values()), group
        assert all(note.strip() for note in table.PROVENANCE.values()), group
    metadata = tables.module("metadata")
    for name in ("RegisterBrokerRecord", "BrokerRegistrationChangeRecord"):  # KAFKA-20441, not the KIP author's fork
        assert metadata.SOURCES[name][0].startswith("6be48c6e54f2")
        assert metadata.PROVENANCE[name].startswith("apache/kafka@6be48c6e54f2")
    streams = tables.module("group_coordinator")
    assert streams.SOURCES["StreamsGroupMetadataValue"][0].startswith("f8c9566af1af")
    assert streams.PROVENANCE["StreamsGroupMetadataValue"].startswith("apache/kafka@f8c9566af1af")
