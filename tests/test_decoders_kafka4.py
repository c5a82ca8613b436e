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
    """MetadataHash (tag 0, KIP-1101) is printed, as Kafka's converter prints tagged fields that differ from their
    default. Kafka 4.4's ConsumerGroupMetadataValue has no tag 1 (the CreationTimeMs the earlier tables took from
    266ed846e560 is in no apache/kafka branch): a tag 1 is an unknown tagged field, shown and reported."""
    key = struct.pack(">h", 3) + s16("g")
    d = offsets(key, struct.pack(">hi", 0, 7) + tags((0, struct.pack(">q", 123))))
    assert d.key == '{"type":"3","data":{"groupId":"g"}}'
    assert d.value == '{"version":"0","data":{"epoch":7,"metadataHash":123}}'
    assert d.leftover is None
    d = offsets(key, struct.pack(">hi", 0, 7) + tags((0, struct.pack(">q", 123)),
                                                    (1, struct.pack(">q", 1700000000000))))
    assert d.value == ('{"version":"0","data":{"epoch":7,"metadataHash":123},'
                       '"unknownTaggedFields":[{"field":"","tag":1,"data":"0000018bcfe56800"}]}')
    assert "unknown tagged field" in d.leftover
    d = offsets(key, struct.pack(">hi", 0, 7) + tags())  # at its default: not printed
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


def test_streams_target_assignment_timestamp_type_20_and_no_revocation_epoch_type_22():
    """AssignmentTimestamp (KIP-1263, tag 0, default 0). Kafka 4.4's StreamsGroupCurrentMemberAssignmentValue has
    no tagged field (the RevocationEpoch, tag 0, of the earlier tables is in no apache/kafka branch): a tag 0 there
    is shown as an unknown tagged field."""
    timestamp = tags((0, struct.pack(">q", 1791331200000)))
    d = offsets(struct.pack(">h", 20) + s16("app"), struct.pack(">hi", 0, 12) + timestamp)
    assert d.value == '{"version":"0","data":{"assignmentEpoch":12,"assignmentTimestamp":1791331200000}}'
    assert offsets(struct.pack(">h", 20) + s16("app"), struct.pack(">hi", 0, 12) + tags()).value == (
        '{"version":"0","data":{"assignmentEpoch":12}}')
    current = struct.pack(">h", 22) + s16("app") + s16("m1")
    d = offsets(current, struct.pack(">hiib", 0, 5, 4, 0) + carray([]) * 6 + tags((0, struct.pack(">i", 3))))
    assert "revocationEpoch" not in json.loads(d.value)["data"]
    assert json.loads(d.value)["unknownTaggedFields"] == [{"field": "", "tag": 0, "data": "00000003"}]
    assert "unknown tagged field" in d.leftover
    d = offsets(current, struct.pack(">hiib", 0, 5, 4, 0) + carray([]) * 6 + tags())
    assert "revocationEpoch" not in json.loads(d.value)["data"] and d.leftover is None


def test_streams_group_metadata_type_17_development_form_is_not_decoded_silently():
    """A development form of StreamsGroupMetadataValue (a plain AssignmentConfigs array, seen only at a commit in
    no apache/kafka branch, never released) is no superseded definition any more: read with Kafka 4.4's, what it
    cannot explain is shown and reported, never decoded under other names."""
    key = struct.pack(">h", 17) + s16("app")
    config = cstr("num.standby.replicas") + cstr("1") + tags()
    d = offsets(key, struct.pack(">hiq", 0, 3, 99) + carray([config]) + tags((0, struct.pack(">i", 2))))
    assert "assignmentConfigs" not in (d.value or "")
    assert d.error is not None or d.leftover is not None


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


def test_streams_topology_type_23_and_no_record_type_24():
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
    # Kafka 4.4 defines no record type 24 (StreamsGroupTargetAssignmentResolvedTopicIds was only at a commit in
    # no apache/kafka branch) nor 18 (StreamsGroupPartitionMetadata, removed before 4.1 by 425f028556): named as
    # DumpLogSegments names a type its serde does not know
    resolved = cstr("0") + carray([TOPIC.bytes]) + tags()
    d = offsets(struct.pack(">h", 24) + s16("app"), struct.pack(">hi", 0, 7) + carray([resolved]) + tags())
    assert d.key == "Unknown record type 24 at offset 5, skipping." and d.value is None
    d = offsets(struct.pack(">h", 18) + s16("app"), struct.pack(">h", 0) + carray([]) + tags())
    assert d.key == "Unknown record type 18 at offset 5, skipping." and d.value is None


def test_share_group_state_partition_metadata_4_4_and_4_0_forms():
    """Kafka 4.4's TopicPartitionsInfo is TopicId, TopicName, Partitions (no CreateTimestamp: the earlier tables'
    was in no apache/kafka branch)."""
    key = struct.pack(">h", 15) + s16("sg")
    initializing = TOPIC.bytes + cstr("t") + carray([struct.pack(">i", 0)]) + tags()
    d = offsets(key, struct.pack(">h", 0) + carray([initializing]) + carray([]) + carray([]) + tags())
    assert d.value == ('{"version":"0","data":{"initializingTopics":[{"topicId":"' + TOPIC_TEXT + '","topicName":"t",'
                       '"partitions":[0]}],"initializedTopics":[],"deletingTopics":[]}}')
    assert d.leftover is None
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
        # a baseline type 4.4 dropped (9) is kept as a superseded record type
        assert coordinator.KNOWN_IN_4_0[group] == table.BASELINE_RECORD_TYPES <= set(table.RECORD_TYPES) | set(
            tables.superseded_record_types(group))
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


APACHE_4_4 = "449e528b60d1199197125be43a275880bc9f38c3"  # apache/kafka, branch 4.4, 2026-08-10
BASELINE = "1eb7644349cb07139d6a3c1ad1986979647cac99"  # apache/kafka trunk, 2024-10-25: the 4.0 tables' commit


def test_every_generated_definition_says_where_it_was_read_and_why_it_is_the_newest():
    """Every table is read at one apache/kafka commit of branch 4.4 (KAFKA_COMMIT; HOW says in which copy of the
    repository): each definition names that commit and its path (SOURCES) and, in PROVENANCE, the commit that
    last changed its file; the superseded ones name the baseline's commit."""
    from kdump.decode.internal import tables
    for group in tables.GROUPS:
        table = tables.module(group)
        assert table.KAFKA_COMMIT == APACHE_4_4, group
        assert "confluentinc/kafka" in table.HOW and "branch 4.4, 2026-08-10" in table.HOW
        assert set(table.SOURCES) == set(table.PROVENANCE), group
        for name, (commit, path) in table.SOURCES.items():
            if name.endswith(" (superseded)"):
                assert commit == BASELINE and table.PROVENANCE[name].startswith("apache/kafka@1eb7644349cb"), name
                assert name[:-len(" (superseded)")] in table.SUPERSEDED
            else:
                assert commit == APACHE_4_4 and path.endswith(".json"), name
                assert table.PROVENANCE[name].startswith("apache/kafka@449e528b60d1 (branch 4.4, 2026-08-10); "
                                                         "the file last changed at "), name
    metadata = tables.module("metadata")
    for name in ("RegisterBrokerRecord", "BrokerRegistrationChangeRecord"):  # KAFKA-20441
        assert "last changed at 6be48c6e54" in metadata.PROVENANCE[name]
    streams = tables.module("group_coordinator")
    assert "last changed at f8c9566af1" in streams.PROVENANCE["StreamsGroupMetadataValue"]
    assert set(streams.SUPERSEDED) == {"ShareGroupMetadataValue", "ShareGroupPartitionMetadataKey",
                                       "ShareGroupPartitionMetadataValue", "ShareGroupStatePartitionMetadataValue"}
    assert set(tables.module("share_coordinator").SUPERSEDED) == {"ShareSnapshotValue", "ShareUpdateValue"}


# --- the fields Kafka 4.4's definitions (apache/kafka@449e528b60d1) have otherwise than the earlier tables -----
def test_offset_commit_value_v4_tagged_topic_id_type_1():
    """OffsetCommitValue v4 (flexible) carries the topic id as tag 0 (KAFKA-19141, #19683), printed when set."""
    key = struct.pack(">h", 1) + s16("g") + s16("t") + struct.pack(">i", 3)
    body = struct.pack(">hqi", 4, 10, 2) + cstr("md") + struct.pack(">q", 99)
    d = offsets(key, body + tags((0, TOPIC.bytes)))
    assert d.key == '{"type":"1","data":{"group":"g","topic":"t","partition":3}}'
    assert d.value == ('{"version":"4","data":{"offset":10,"leaderEpoch":2,"metadata":"md","commitTimestamp":99,'
                       f'"topicId":"{TOPIC_TEXT}"}}}}')
    assert d.leftover is None
    assert offsets(key, body + tags()).value == ('{"version":"4","data":{"offset":10,"leaderEpoch":2,"metadata":"md",'
                                                 '"commitTimestamp":99}}')


def test_record_type_0_legacy_offset_commit_and_older_values():
    """Kafka 4.4 reads type 0 as LegacyOffsetCommitKey/Value (value v0 only); a type-0 key with a v1-v3 value, as
    older brokers wrote, decodes with the offset-commit definitions the baseline paired with type 0."""
    key = struct.pack(">h", 0) + s16("g") + s16("t") + struct.pack(">i", 3)
    d = offsets(key, struct.pack(">hq", 0, 10) + s16("md") + struct.pack(">q", 99))
    assert d.value == '{"version":"0","data":{"offset":10,"metadata":"md","commitTimestamp":99}}'
    d = offsets(key, struct.pack(">hqi", 3, 10, 5) + s16("md") + struct.pack(">q", 99))
    assert d.key == '{"type":"0","data":{"group":"g","topic":"t","partition":3}}'
    assert d.value == '{"version":"3","data":{"offset":10,"leaderEpoch":5,"metadata":"md","commitTimestamp":99}}'
    assert d.leftover is None


def test_share_group_target_assignment_timestamp_type_12():
    """ShareGroupTargetAssignmentMetadataValue: AssignmentTimestamp, tag 0, int64, default 0."""
    key = struct.pack(">h", 12) + s16("sg")
    d = offsets(key, struct.pack(">hi", 0, 4) + tags((0, struct.pack(">q", 99))))
    assert d.value == '{"version":"0","data":{"assignmentEpoch":4,"assignmentTimestamp":99}}' and d.leftover is None
    assert offsets(key, struct.pack(">hi", 0, 4) + tags()).value == '{"version":"0","data":{"assignmentEpoch":4}}'


def test_record_type_9_of_kafka_4_0_decodes_with_its_definition():
    """ShareGroupPartitionMetadata (type 9) is in Kafka 4.0 only (removed by 2977cb17d0, KAFKA-17747): a record
    4.0 wrote is read with 4.0's definition, as 4.0's DumpLogSegments printed it (the corpus has such records)."""
    key = struct.pack(">h", 9) + s16("sg")
    partition = struct.pack(">i", 0) + carray([]) + tags()  # partition 0, no racks
    topic = TOPIC.bytes + cstr("t") + struct.pack(">i", 2) + carray([partition]) + tags()
    d = offsets(key, struct.pack(">h", 0) + carray([topic]) + tags())
    assert d.key == '{"type":"9","data":{"groupId":"sg"}}'
    assert d.value == ('{"version":"0","data":{"topics":[{"topicId":"' + TOPIC_TEXT + '","topicName":"t",'
                       '"numPartitions":2,"partitionMetadata":[{"partition":0,"racks":[]}]}]}}')
    assert d.leftover is None
    # what 4.0's definition does not read whole either is named as Kafka 4.4's tool names type 9
    d = offsets(key, struct.pack(">h", 0) + carray([topic])[:-3])
    assert d.key == "Unknown record type 9 at offset 5, skipping." and d.value is None


def test_assignment_epochs_json_null_default_types_8_and_22():
    """AssignmentEpochs' definition has a JSON null default, which Kafka's generator takes as an empty list: an
    empty list is at its default (not printed), a null one is printed."""
    key = struct.pack(">h", 8) + s16("g") + s16("m")

    def member(epochs: bytes) -> str:
        assigned = TOPIC.bytes + carray([struct.pack(">i", 0)]) + tags((0, epochs))
        value = struct.pack(">hiib", 0, 5, 4, 0) + carray([assigned]) + carray([]) + tags()
        return json.loads(offsets(key, value).value)["data"]["assignedPartitions"][0]

    assert member(carray([])) == {"topicId": TOPIC_TEXT, "partitions": [0]}
    assert member(uvarint(0)) == {"topicId": TOPIC_TEXT, "partitions": [0], "assignmentEpochs": None}
    # the same in a Streams member's TaskIds (type 22)
    key = struct.pack(">h", 22) + s16("app") + s16("m1")

    def tasks(epochs: bytes) -> dict:
        task = cstr("0") + carray([struct.pack(">i", 3)]) + tags((0, epochs))
        value = struct.pack(">hiib", 0, 5, 4, 2) + carray([task]) + carray([]) * 5 + tags()
        return json.loads(offsets(key, value).value)["data"]["activeTasks"][0]

    assert tasks(carray([])) == {"subtopologyId": "0", "partitions": [3]}
    assert tasks(uvarint(0)) == {"subtopologyId": "0", "partitions": [3], "assignmentEpochs": None}


def share_state(rtype: int, value: bytes):
    key = struct.pack(">h", rtype) + s16("gs") + TOPIC.bytes + struct.pack(">i", 0)
    return make_decoder("share-group-state").decode(5, key, value)


BATCH = struct.pack(">qqbh", 0, 9, 2, 1) + tags()
BATCH_TEXT = '"stateBatches":[{"firstOffset":0,"lastOffset":9,"deliveryState":2,"deliveryCount":1}]'


def test_share_snapshot_and_update_4_4_and_4_0_forms():
    """ShareSnapshotValue/ShareUpdateValue: SnapshotEpoch int32 (cb809e2574), DeliveryCompleteCount tagged (tag 0,
    default -1, b900f2fe5a), the snapshot's Create/WriteTimestamp; as Kafka 4.0 wrote them (SnapshotEpoch uint16,
    no timestamps) they decode with 4.0's definitions."""
    d = share_state(0, struct.pack(">hiiiq", 0, 70000, 3, 2, 5) + struct.pack(">qq", 100, 200) + carray([BATCH])
                    + tags((0, struct.pack(">i", 4))))
    assert d.key == '{"type":"0","data":{"groupId":"gs","topicId":"' + TOPIC_TEXT + '","partition":0}}'
    assert d.value == ('{"version":"0","data":{"snapshotEpoch":70000,"stateEpoch":3,"leaderEpoch":2,"startOffset":5,'
                       '"deliveryCompleteCount":4,"createTimestamp":100,"writeTimestamp":200,' + BATCH_TEXT + '}}')
    assert d.leftover is None
    d = share_state(1, struct.pack(">hiiq", 0, 70000, 2, 5) + carray([BATCH]) + tags((0, struct.pack(">i", 4))))
    assert d.value == ('{"version":"0","data":{"snapshotEpoch":70000,"leaderEpoch":2,"startOffset":5,'
                       '"deliveryCompleteCount":4,' + BATCH_TEXT + '}}')
    d = share_state(1, struct.pack(">hiiq", 0, 7, 2, 5) + carray([BATCH]) + tags())  # at its default: not printed
    assert '"deliveryCompleteCount"' not in d.value
    # Kafka 4.0's forms
    d = share_state(0, struct.pack(">hHiiq", 0, 7, 3, 2, 5) + carray([BATCH]) + tags())
    assert d.value == ('{"version":"0","data":{"snapshotEpoch":7,"stateEpoch":3,"leaderEpoch":2,"startOffset":5,'
                       + BATCH_TEXT + '}}') and d.leftover is None
    d = share_state(1, struct.pack(">hHiq", 0, 7, 2, 5) + carray([BATCH]) + tags())
    assert d.value == '{"version":"0","data":{"snapshotEpoch":7,"leaderEpoch":2,"startOffset":5,' + BATCH_TEXT + '}}'


def test_transaction_log_value_next_producer_epoch_tag_3():
    """TransactionLogValue v1: NextProducerEpoch, int16, tag 3, default -1, printed after ProducerEpoch (its place
    in the definition) when set."""
    key = struct.pack(">h", 0) + s16("txn")
    body = (struct.pack(">hqhib", 1, 7, 1, 60000, 1) + carray([cstr("t") + carray([struct.pack(">i", 0)]) + tags()])
            + struct.pack(">qq", 1700, 1600))
    d = make_decoder("transaction-log").decode(0, key, body + tags((3, struct.pack(">h", 2))))
    assert d.value == ('{"version":"1","data":{"producerId":7,"producerEpoch":1,"nextProducerEpoch":2,'
                       '"transactionTimeoutMs":60000,"transactionStatus":1,"transactionPartitions":[{"topic":"t",'
                       '"partitionIds":[0]}],"transactionLastUpdateTimestampMs":1700,"transactionStartTimestampMs":1600}}')
    assert d.leftover is None
    assert '"nextProducerEpoch"' not in make_decoder("transaction-log").decode(0, key, body + tags()).value


def test_remote_log_segment_metadata_txn_index_empty():
    """RemoteLogSegmentMetadataRecord's tagged TxnIndexEmpty (tag 0, bool): Kafka 4.4's toString ends with
    txnIdxEmpty=true|false (false when the tag is absent)."""
    segment = uuid.UUID(int=0x0203)
    body = (cstr("foo") + TOPIC.bytes + struct.pack(">i", 0) + tags() + segment.bytes + tags()  # RemoteLogSegmentId
            + struct.pack(">qqiqq", 0, 99, 1, 1700, 1800)
            + carray([struct.pack(">iq", 0, 0) + tags()]) + struct.pack(">i", 1024) + uvarint(0)
            + struct.pack(">b", 1))
    seg_text = base64.urlsafe_b64encode(segment.bytes).rstrip(b"=").decode()
    expected = (f"RemoteLogSegmentMetadata{{remoteLogSegmentId=RemoteLogSegmentId{{"
                f"topicIdPartition={TOPIC_TEXT}:foo-0, id={seg_text}}}, startOffset=0, endOffset=99, brokerId=1, "
                "maxTimestampMs=1700, eventTimestampMs=1800, segmentLeaderEpochs={0=0}, segmentSizeInBytes=1024, "
                "customMetadata=Optional.empty, state=COPY_SEGMENT_FINISHED, txnIdxEmpty=")
    decoder = make_decoder("remote-log-metadata")
    d = decoder.decode(0, None, bytes([1, 0, 0]) + body + tags((0, b"\x01")))
    assert d.value == expected + "true}" and d.leftover is None
    assert decoder.decode(0, None, bytes([1, 0, 0]) + body + tags()).value == expected + "false}"
