"""``kdump groups`` on the group records of Kafka 4.1+ (Streams groups, regular-expression subscriptions, share
groups) and ``kdump metadata`` on ClearElrRecord, their keys and values encoded byte by byte from Kafka's
definitions (tests/support/coordinator_bytes.py), kdump's writer used only to frame them in batches."""
import base64
import json
import struct
import uuid
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from support.cli import run_cli
from support.coordinator_bytes import carray, cstr, group_key, int32s, tags, task_ids, uvarint
from kdump.replay.groups import replay_groups
from kdump.replay.metadata import replay_metadata
from kdump.write.segment import RecordBatchBuilder, write_segment

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"

T0 = 1_700_000_000_000
TOPIC = uuid.UUID("0123456789abcdef0123456789abcdef")
TOPIC_TEXT = base64.urlsafe_b64encode(TOPIC.bytes).rstrip(b"=").decode()


def v0(body: bytes) -> bytes:
    """A value at version 0 with no tagged fields."""
    return struct.pack(">h", 0) + body + tags()


def streams_records() -> list:
    """A Streams group ``app``: one subtopology reading ``in`` with a changelog, member m1 with 2 active tasks."""
    config = cstr("num.standby.replicas") + cstr("0") + tags()
    changelog = cstr("app-store-changelog") + struct.pack(">ih", 0, 3) + carray([]) + tags()
    copartition = carray([]) + carray([]) + carray([]) + tags()
    sub = (cstr("0") + carray([cstr("in")]) + carray([cstr("in-.*")]) + carray([changelog]) + carray([])
           + carray([]) + carray([copartition]) + tags())
    endpoint = struct.pack(">b", 1) + cstr("host-1") + struct.pack(">H", 8080) + tags()
    member = (uvarint_null() + cstr("rack-a") + cstr("client-1") + cstr("/10.0.0.1") + struct.pack(">ii", 30000, 4)
              + cstr("process-1") + endpoint + carray([]))
    tasks = carray([task_ids("0", [0, 1])])
    return [
        (group_key(23, "app"), v0(struct.pack(">i", 4) + carray([sub]))),                        # topology
        # group metadata: ValidatedTopologyEpoch (tag 0) and LastAssignmentConfigs (tag 1) tagged, as Kafka 4.4
        # defines them (apache/kafka@449e528b60d1)
        (group_key(17, "app"), struct.pack(">hiq", 0, 9, 1234)
         + tags((0, struct.pack(">i", 4)), (1, carray([config])))),
        (group_key(19, "app", "m1"), v0(member)),                                                  # member metadata
        (group_key(21, "app", "m1"), v0(tasks + carray([]) + carray([]))),                         # target tasks
        (group_key(20, "app"), v0(struct.pack(">i", 9))),                                          # target epoch
        (group_key(22, "app", "m1"), v0(struct.pack(">iib", 9, 8, 2) + tasks + carray([]) * 5)),  # current
    ]


def uvarint_null() -> bytes:
    return b"\x00"  # a null compact string


def regex_and_share_records() -> list:
    return [
        (group_key(3, "cg"), v0(struct.pack(">i", 2))),                                            # consumer group
        (group_key(16, "cg", "orders-.*"), v0(carray([cstr("orders-eu"), cstr("orders-us")])
                                              + struct.pack(">qq", 2, T0))),                       # regex
        (group_key(8, "cg", "c1"), v0(struct.pack(">iib", 2, 1, 1) + carray([]) + carray([]))),  # current
        (group_key(11, "sg"), v0(struct.pack(">iq", 5, 77))),                                      # share group
        # initializing, initialized (a TopicPartitionsInfo: id, name, partitions; no CreateTimestamp in 4.4), deleting
        (group_key(15, "sg"), v0(carray([]) + carray([TOPIC.bytes + cstr("shared") + int32s([0, 1]) + tags()])
                                 + carray([]))),
        (group_key(10, "sg", "s1"), v0(uvarint_null() + cstr("client-s") + cstr("/10.0.0.2")
                                       + carray([cstr("shared")]))),
        (group_key(14, "sg", "s1"), v0(struct.pack(">iib", 5, 4, 0)
                                       + carray([TOPIC.bytes + int32s([1]) + tags()]))),
    ]


def segment_dir(parent, name: str, records: list):
    """``parent/name`` holding one segment: each (key, value) in a batch of its own."""
    d = parent / name
    d.mkdir()
    batches = []
    for n, (key, value) in enumerate(records):
        b = RecordBatchBuilder(base_offset=n)
        b.append(n, T0 + n, key, value)
        batches.append(b.build())
    write_segment(d / "00000000000000000000.log", batches)
    return d


@pytest.fixture
def offsets_dir(tmp_path):
    return segment_dir(tmp_path, "__consumer_offsets-7", streams_records() + regex_and_share_records())


def test_streams_group_replayed(offsets_dir):
    r = replay_groups([offsets_dir])
    assert not r.skipped and r.ignored == 0
    g = r.groups["app"].to_json()
    assert g["type"] == "streams"
    assert (g["groupEpoch"], g["metadataHash"], g["targetAssignmentEpoch"], g["validatedTopologyEpoch"]) == \
        (9, 1234, 9, 4)
    assert g["assignmentConfigs"] == [{"key": "num.standby.replicas", "value": "0"}]
    assert g["topology"]["epoch"] == 4
    [sub] = g["topology"]["subtopologies"]
    assert sub["sourceTopics"] == ["in"] and sub["stateChangelogTopics"][0]["name"] == "app-store-changelog"
    [m] = g["members"]
    assert m["memberId"] == "m1" and m["processId"] == "process-1" and m["clientId"] == "client-1"
    assert m["userEndpoint"] == {"host": "host-1", "port": 8080}
    assert (m["memberEpoch"], m["previousMemberEpoch"]) == (9, 8)
    assert m["activeTasks"] == [{"subtopologyId": "0", "partitions": [0, 1]}]
    assert m["targetAssignment"] == {"activeTasks": [{"subtopologyId": "0", "partitions": [0, 1]}],
                                     "standbyTasks": [], "warmupTasks": []}


def test_regex_subscription_and_share_group_replayed(offsets_dir):
    r = replay_groups([offsets_dir])
    cg = r.groups["cg"].to_json()
    assert cg["type"] == "consumer" and cg["groupEpoch"] == 2
    assert cg["regularExpressions"] == [{"regularExpression": "orders-.*", "topics": ["orders-eu", "orders-us"],
                                         "version": 2, "timestamp": T0}]
    sg = r.groups["sg"].to_json()
    assert sg["type"] == "share" and (sg["groupEpoch"], sg["metadataHash"]) == (5, 77)
    assert sg["topicStates"]["initializedTopics"] == [{"topicId": TOPIC_TEXT, "topicName": "shared",
                                                       "partitions": [0, 1]}]
    [m] = sg["members"]
    assert m["subscribedTopicNames"] == ["shared"] and m["memberEpoch"] == 5
    # the topic id of the assignment is named from the share partitions' state
    assert m["assignedPartitions"] == [{"topicId": TOPIC_TEXT, "topic": "shared", "partitions": [1]}]


def test_member_states_named_as_kafka_names_them(offsets_dir):
    """A member's state byte is named by Kafka's enum of its kind of group (modern.MemberState for consumer and
    share members: 0 STABLE, 1 UNREVOKED_PARTITIONS, 2 UNRELEASED_PARTITIONS; streams.MemberState: 1 STABLE,
    2 UNREVOKED_TASKS, 3 UNRELEASED_TASKS; any other byte UNKNOWN), the byte kept beside it; dump's JSON keeps
    the number, as DumpLogSegments prints it."""
    data = json.loads(run_cli("groups", "--format", "json", offsets_dir).stdout)
    members = {g["group"]: g["members"] for g in data["groups"]}
    assert [(m["state"], m["stateId"]) for m in members["app"]] == [("UNREVOKED_TASKS", 2)]
    assert [(m["state"], m["stateId"]) for m in members["cg"]] == [("UNREVOKED_PARTITIONS", 1)]
    assert [(m["state"], m["stateId"]) for m in members["sg"]] == [("STABLE", 0)]
    text = run_cli("groups", offsets_dir).stdout
    assert "UNREVOKED_TASKS" in text and "UNREVOKED_PARTITIONS" in text and "STABLE" in text
    dumped = run_cli("dump", "--decoder", "auto", offsets_dir).stdout
    assert '"previousMemberEpoch":8,"state":2,' in dumped and "UNREVOKED" not in dumped
    (offsets_dir.parent / "x").mkdir()
    unknown = segment_dir(offsets_dir.parent / "x", "__consumer_offsets-0", [
        (group_key(22, "app", "m1"), v0(struct.pack(">iib", 9, 8, 0) + carray([]) * 6))])
    [m] = replay_groups([unknown]).groups["app"].to_json()["members"]
    assert (m["state"], m["stateId"]) == ("UNKNOWN", 0)  # 0 is no Streams state: Kafka's fromValue says UNKNOWN


def test_groups_cli_shows_a_streams_group(offsets_dir):
    res = run_cli("groups", offsets_dir)
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "Group app" in out and "streams group (KIP-1071): group epoch 9, target assignment epoch 9" in out
    assert "topology epoch 4 (validated 4)" in out and "num.standby.replicas=0" in out
    assert "in /in-.*/" in out and "app-store-changelog" in out
    assert "process-1" in out and "0[0,1]" in out
    assert "orders-.*" in out and "orders-eu orders-us" in out
    assert "share group (KIP-932): group epoch 5" in out and "initialized" in out and "shared[1]" in out
    res = run_cli("groups", "--format", "json", "--group", "app", offsets_dir)
    assert res.exit_code == 0
    assert [g["type"] for g in json.loads(res.stdout)["groups"]] == ["streams"]


def test_groups_json_of_every_kind_validates_against_its_schema(offsets_dir):
    docs = [json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.schema.json"))]
    registry = Registry().with_resources((d["$id"], Resource.from_contents(d)) for d in docs)
    schema = json.loads((SCHEMAS / "groups.schema.json").read_text())
    for args in ((), ("--time-format", "iso")):
        res = run_cli("groups", "--format", "json", *args, offsets_dir)
        doc = json.loads(res.stdout)
        assert {g["type"] for g in doc["groups"]} == {"streams", "consumer", "share"}
        Draft202012Validator(schema, registry=registry).validate(doc)
    assert doc["groups"][1]["regularExpressions"][0]["timestampIso"] == "2023-11-14T22:13:20.000Z"


# --- kdump metadata: ClearElrRecord ---------------------------------------------------------------------------

def metadata_record(api_key: int, version: int, body: bytes) -> tuple[None, bytes]:
    """A __cluster_metadata record: frame version 1, apiKey and version as unsigned varints, the message."""
    return None, uvarint(1) + uvarint(api_key) + uvarint(version) + body


def topic_record(name: str, topic_id: uuid.UUID):
    return metadata_record(2, 0, cstr(name) + topic_id.bytes + tags())


def partition_record(topic_id: uuid.UUID, partition: int, elr: list, last_known_elr: list):
    """A PartitionRecord v2: replicas and ISR 1,2,3, leader 1, leader epoch 5, partition epoch 7; ELR (tag 1)
    and last known ELR (tag 2) as tagged fields."""
    body = (struct.pack(">i", partition) + topic_id.bytes + int32s([1, 2, 3]) + int32s([1, 2, 3]) + int32s([])
            + int32s([]) + struct.pack(">iii", 1, 5, 7) + carray([]))
    return metadata_record(3, 2, body + tags((1, int32s(elr)), (2, int32s(last_known_elr))))


def clear_elr(topic: str):
    return metadata_record(28, 0, cstr(topic) + tags())


ORDERS = uuid.UUID(int=0x0A)
OTHER = uuid.UUID(int=0x0B)


def test_metadata_clear_elr_record(tmp_path):
    d = segment_dir(tmp_path, "__cluster_metadata-0", [
        topic_record("orders", ORDERS), partition_record(ORDERS, 0, [2], [3]), partition_record(ORDERS, 1, [], []),
        topic_record("other", OTHER), partition_record(OTHER, 0, [], [3]),
        clear_elr("orders"),   # 5: orders-0 loses its ELR, orders-1 has none: unchanged
        clear_elr("missing"),  # 6: Kafka's replay refuses it
    ])
    r = replay_metadata([d])
    assert [(s.offset, s.reason) for s in r.skipped] == [
        (6, "Unable to clear elr for topic with name missing: no such topic found.")]
    parts = {(t["name"], p["partition"]): p for t in r.image.to_json()["topics"] for p in t["partitions"]}
    assert parts["orders", 0]["eligibleLeaderReplicas"] == [] and parts["orders", 0]["lastKnownElr"] == []
    assert parts["orders", 0]["partitionEpoch"] == 8
    assert parts["orders", 1]["partitionEpoch"] == 7
    assert parts["other", 0]["lastKnownElr"] == [3] and parts["other", 0]["partitionEpoch"] == 7


def test_metadata_clear_elr_record_of_every_topic(tmp_path):
    d = segment_dir(tmp_path, "__cluster_metadata-0", [
        topic_record("orders", ORDERS), partition_record(ORDERS, 0, [2], [3]),
        topic_record("other", OTHER), partition_record(OTHER, 0, [], [3]), clear_elr("")])
    res = run_cli("metadata", "--format", "json", d)
    assert res.exit_code == 0, res.output
    parts = [p for t in json.loads(res.stdout)["topics"] for p in t["partitions"]]
    assert [(p["eligibleLeaderReplicas"], p["lastKnownElr"], p["partitionEpoch"]) for p in parts] == \
        [([], [], 8), ([], [], 8)]


def register_controller(controller_id: int):
    """A RegisterControllerRecord v0 with one endpoint and no features."""
    endpoint = cstr("CONTROLLER") + cstr("c1") + struct.pack(">Hh", 9093, 0) + tags()
    body = struct.pack(">i", controller_id) + uuid.UUID(int=controller_id).bytes + b"\x00" + carray([endpoint])
    return metadata_record(27, 0, body + carray([]) + tags())


def test_metadata_unregister_controller_record(tmp_path):
    """UnregisterControllerRecord (apiKey 29, KIP-1312) removes the controller's registration from the image."""
    d = segment_dir(tmp_path, "__cluster_metadata-0", [
        register_controller(3000), register_controller(3001),
        metadata_record(29, 0, struct.pack(">i", 3000) + tags())])
    r = replay_metadata([d])
    assert not r.skipped
    assert [c["id"] for c in r.image.to_json()["controllers"]] == [3001]
    dumped = run_cli("dump", "--cluster-metadata-decoder", str(d))
    assert 'payload: {"type":"UNREGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3000}}' in dumped.stdout


def test_every_metadata_record_type_is_replayed():
    """A record type the tables gain without a replay rule would stop ``kdump metadata`` (a KeyError)."""
    from kdump.decode.internal import tables
    from kdump.replay.metadata import _Replayer
    assert {name for name, _ in tables.record_types("metadata").values()} <= set(_Replayer().handlers)


def _uuid_text(u: uuid.UUID) -> str:
    return base64.urlsafe_b64encode(u.bytes).rstrip(b"=").decode()  # Kafka's Uuid.toString


def test_register_broker_record_v4_and_registration_change_v3_cordoned_log_dirs(tmp_path):
    """RegisterBrokerRecord v4 and BrokerRegistrationChangeRecord v3 (KIP-1066, Kafka 4.3: a tagged
    CordonedLogDirs, tag 1 and tag 3) decode whole, printed as Kafka's converter prints them; a version newer
    still is marked unknownVersion, its unknown tag kept; verify --deep reports that one only."""
    dirs = [uuid.UUID(int=8), uuid.UUID(int=9)]
    body = (struct.pack(">i?", 1, False) + uuid.UUID(int=5).bytes + struct.pack(">q", 7) + carray([]) + carray([])
            + b"\x00" + struct.pack(">??", True, False))
    register = metadata_record(0, 4, body + tags((0, carray([d.bytes for d in dirs])), (1, carray([dirs[1].bytes]))))
    change = metadata_record(17, 3, struct.pack(">iq", 1, 7) + tags((3, carray([dirs[0].bytes]))))
    d = segment_dir(tmp_path, "__cluster_metadata-0", [register, change])
    res = run_cli("dump", "--decoder", "auto", "--format", "json", str(d))
    values = [r["value"] for line in res.stdout.splitlines() if json.loads(line)["type"] == "batch"
              for r in json.loads(line)["records"]]
    assert values[0]["type"] == "REGISTER_BROKER_RECORD" and values[0]["version"] == 4
    assert values[0]["data"]["logDirs"] == [_uuid_text(x) for x in dirs]
    assert values[0]["data"]["cordonedLogDirs"] == [_uuid_text(dirs[1])]
    assert list(values[0]["data"])[-2:] == ["logDirs", "cordonedLogDirs"]
    assert values[1] == {"type": "BROKER_REGISTRATION_CHANGE_RECORD", "version": 3,
                         "data": {"brokerId": 1, "brokerEpoch": 7, "cordonedLogDirs": [_uuid_text(dirs[0])]}}
    assert not any("unknownVersion" in v or "unknownTaggedFields" in v for v in values)
    text = run_cli("dump", "--decoder", "auto", str(d)).stdout  # DumpLogSegments' payload line
    assert ('payload: {"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,"data":{"brokerId":1,"brokerEpoch":7,'
            f'"cordonedLogDirs":["{_uuid_text(dirs[0])}"]}}}}') in text
    found = json.loads(run_cli("verify", "--deep", "--format", "json", str(d)).stdout)["files"][0]["findings"]
    assert "internal-record-partly-decoded" not in [f["code"] for f in found]
    assert [b["id"] for b in replay_metadata([d]).image.to_json()["brokers"]] == [1]
    newer = metadata_record(0, 5, body + tags((0, carray([])), (2, b"\x01")))
    (tmp_path / "v5").mkdir()
    d5 = segment_dir(tmp_path / "v5", "__cluster_metadata-0", [newer])
    res = run_cli("dump", "--decoder", "auto", "--format", "json", str(d5))
    [value] = [r["value"] for line in res.stdout.splitlines() if json.loads(line)["type"] == "batch"
               for r in json.loads(line)["records"]]
    assert value["unknownVersion"] is True and value["data"]["brokerId"] == 1
    assert value["unknownTaggedFields"] == [{"field": "", "tag": 2, "data": "01"}]
    found = json.loads(run_cli("verify", "--deep", "--format", "json", str(d5)).stdout)["files"][0]["findings"]
    assert [f["code"] for f in found] == ["internal-record-partly-decoded"]


def test_cordoned_log_dirs_nullable_and_replayed_as_kafka_image_does(tmp_path):
    """apache/kafka@6be48c6e54f2 (KAFKA-20441, in 4.3.0): CordonedLogDirs is nullable with a null default in
    RegisterBrokerRecord v4 (tag 1) and BrokerRegistrationChangeRecord v3 (tag 3), so an empty list is printed
    and a null one is not; ClusterDelta/BrokerRegistration keep null as "not known yet", a change record without
    the tag changes nothing, and any list, an empty one too, replaces the broker's."""
    dirs = [uuid.UUID(int=8), uuid.UUID(int=9)]
    body = (struct.pack(">i?", 1, False) + uuid.UUID(int=5).bytes + struct.pack(">q", 7) + carray([]) + carray([])
            + b"\x00" + struct.pack(">??", True, False))
    register = metadata_record(0, 4, body + tags((0, carray([d.bytes for d in dirs])), (1, uvarint(0))))

    def change(*fields):
        return metadata_record(17, 3, struct.pack(">iq", 1, 7) + tags(*fields))

    cordon = change((3, carray([dirs[0].bytes])))
    unfence = change((0, struct.pack(">b", -1)))  # no CordonedLogDirs: no change to them
    uncordon = change((3, carray([])))
    d = segment_dir(tmp_path, "__cluster_metadata-0", [register, cordon, unfence, uncordon])
    res = run_cli("dump", "--decoder", "auto", "--format", "json", str(d))
    values = [r["value"] for line in res.stdout.splitlines() if json.loads(line)["type"] == "batch"
              for r in json.loads(line)["records"]]
    assert "cordonedLogDirs" not in values[0]["data"] and "unknownTaggedFields" not in values[0]
    assert values[3] == {"type": "BROKER_REGISTRATION_CHANGE_RECORD", "version": 3,
                         "data": {"brokerId": 1, "brokerEpoch": 7, "cordonedLogDirs": []}}
    found = json.loads(run_cli("verify", "--deep", "--format", "json", str(d)).stdout)["files"][0]["findings"]
    assert "internal-record-partly-decoded" not in [f["code"] for f in found]

    def broker_after(records):
        sub = tmp_path / f"n{len(records)}"
        sub.mkdir()
        [broker] = replay_metadata([segment_dir(sub, "__cluster_metadata-0", records)]).image.to_json()["brokers"]
        return broker

    assert broker_after([register])["cordonedLogDirs"] is None
    assert broker_after([register, cordon])["cordonedLogDirs"] == [_uuid_text(dirs[0])]
    after = broker_after([register, cordon, unfence])
    assert after["cordonedLogDirs"] == [_uuid_text(dirs[0])] and after["fenced"] is False
    assert broker_after([register, cordon, unfence, uncordon])["cordonedLogDirs"] == []
    image = json.loads(run_cli("metadata", "--format", "json", str(d)).stdout)
    docs = [json.loads(p.read_text()) for p in sorted(SCHEMAS.glob("*.schema.json"))]
    registry = Registry().with_resources((doc["$id"], Resource.from_contents(doc)) for doc in docs)
    schema = json.loads((SCHEMAS / "metadata.schema.json").read_text())
    Draft202012Validator(schema, registry=registry).validate(image)
    assert image["brokers"][0]["cordonedLogDirs"] == []
    # the text view shows them too, in the Brokers table: "-" not known yet, "none" after the empty list
    def brokers_row(records):
        sub = tmp_path / f"t{len(records)}"
        sub.mkdir()
        text = run_cli("metadata", str(segment_dir(sub, "__cluster_metadata-0", records))).stdout
        assert "cordoned log dirs" in text
        return next(line for line in text.splitlines() if _uuid_text(uuid.UUID(int=5)) in line)

    assert brokers_row([register]).rstrip().endswith("-")
    assert brokers_row([register, cordon]).rstrip().endswith(_uuid_text(dirs[0]))
    assert brokers_row([register, cordon, unfence, uncordon]).rstrip().endswith("none")


def test_consumer_member_assignment_epochs_kept_by_the_replay(tmp_path):
    """KIP-1251's AssignmentEpochs of a consumer member's partitions stay beside the named partitions."""
    epochs = tags((0, carray([struct.pack(">i", 3), struct.pack(">i", 4)])))
    assigned = carray([TOPIC.bytes + int32s([0, 1]) + epochs])
    d = segment_dir(tmp_path, "__consumer_offsets-0", [
        (group_key(8, "cg", "c1"), v0(struct.pack(">iib", 2, 1, 0) + assigned + carray([])))])
    [m] = replay_groups([d]).groups["cg"].to_json()["members"]
    assert m["assignedPartitions"] == [{"topicId": TOPIC_TEXT, "topic": None, "partitions": [0, 1],
                                        "assignmentEpochs": [3, 4]}]
    assert (m["state"], m["stateId"]) == ("STABLE", 0)


def test_records_of_types_kafka_4_4_defines_otherwise_replayed(tmp_path):
    """Type 0 with a v3 value (Kafka 4.4 reads type 0 as LegacyOffsetCommit, v0 only) and a Kafka 4.0 share group's
    partition metadata (type 9, which 4.4 no longer defines) are replayed with the definitions that read them:
    the commit with its leader epoch, type 9's topic naming a member's assignment."""
    commit = (struct.pack(">h", 0) + struct.pack(">h", 2) + b"cg" + struct.pack(">h", 1) + b"t"
              + struct.pack(">i", 3))
    partition = struct.pack(">i", 1) + carray([]) + tags()
    d = segment_dir(tmp_path, "__consumer_offsets-0", [
        (commit, struct.pack(">hqi", 3, 42, 7) + struct.pack(">h", 2) + b"md" + struct.pack(">q", T0)),
        (group_key(11, "sg"), struct.pack(">hi", 0, 5) + tags()),                   # 4.0's share group metadata
        (group_key(9, "sg"), v0(carray([TOPIC.bytes + cstr("shared") + struct.pack(">i", 2) + carray([partition])
                                        + tags()]))),
        (group_key(14, "sg", "s1"), v0(struct.pack(">iib", 5, 4, 0) + carray([TOPIC.bytes + int32s([1]) + tags()]))),
    ])
    r = replay_groups([d])
    assert not r.skipped and r.ignored == 0
    [offset] = r.groups["cg"].to_json()["offsets"]
    assert (offset["topic"], offset["partition"], offset["offset"], offset["leaderEpoch"], offset["metadata"]) == \
        ("t", 3, 42, 7, "md")
    [m] = r.groups["sg"].to_json()["members"]
    assert m["assignedPartitions"] == [{"topicId": TOPIC_TEXT, "topic": "shared", "partitions": [1]}]
