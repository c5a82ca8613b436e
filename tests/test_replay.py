"""kdump groups / metadata / txn-state: the state the records of Kafka's internal topics add up to.

Every expected state below is written out by hand from Kafka's own decoder output of the corpus segments
(``*.dumplog-offsets-decoder.txt``, ``*.dumplog-cluster-metadata-decoder.txt``) and from ``CONTENTS.txt`` of
``kafka-generated/internal-topics``, with the reasoning beside it; segments built here with kdump's writer
test the rules the corpus does not exercise (transactions, snapshot + log, supersession).
"""
import json
import shutil
import struct
import uuid

import pytest
from corpus import CORPUS
from support.cli import run_cli

from kdump.decode.internal import tables
from kdump.decode.jackson import uuid_text
from kdump.format.schema import write_struct
from kdump.render.replay import printable
from kdump.replay.groups import replay_groups
from kdump.replay.metadata import replay_metadata
from kdump.replay.source import ReplayInputError
from kdump.replay.txn_state import replay_transactions
from kdump.write.segment import RecordBatchBuilder, end_txn_marker_batch, write_segment

GENERATED = CORPUS / "kafka-generated/internal-topics"
OFFSETS_V2 = CORPUS / "broker-written/consumer-offsets-v2"
KRAFT_LOG = CORPUS / "broker-written/kraft-metadata-log"
BOOTSTRAP = CORPUS / "broker-written/kraft-bootstrap-checkpoint/bootstrap.checkpoint"
T0 = 1700000000000


# --- __consumer_offsets -----------------------------------------------------------------------------------
def test_groups_broker_written_consumer_offsets():
    r = replay_groups([OFFSETS_V2])
    assert r.skipped == [] and r.records == 256 and r.pending == 0
    assert list(r.groups) == ["demo-group"]
    g = r.groups["demo-group"].to_json()
    # GroupMetadata of demo-group: offset 0 (empty, generation 0), offset 1 (generation 1, one member
    # ...e7eb8c0a), offset 158 (generation 2, no members, protocol null), offset 159 (generation 3, member
    # consumer-demo-group-1-d33083a6-..., leader the same, protocol range). The last one is the state.
    assert g["type"] == "classic"
    assert (g["protocolType"], g["protocol"], g["generation"]) == ("consumer", "range", 3)
    member_id = "consumer-demo-group-1-d33083a6-85c9-4dac-bd3a-ee987bc01b66"
    assert g["leader"] == member_id and g["currentStateTimestamp"] == 1779276404707
    [m] = g["members"]
    assert (m["memberId"], m["clientId"], m["clientHost"]) == (member_id, "consumer-demo-group-1", "/192.168.65.1")
    assert (m["sessionTimeout"], m["rebalanceTimeout"], m["groupInstanceId"]) == (45000, 300000, None)
    # offset 159's assignment bytes decode as ConsumerProtocolAssignment: demo-topic partitions 0,1,2
    assert m["assignment"]["assignedPartitions"] == [{"topic": "demo-topic", "partitions": [0, 1, 2]}]
    assert m["subscription"]["topics"] == ["demo-topic"]
    # 84 commits per partition (offsets 2..255, three per round); the last round is offsets 253 (p2),
    # 254 (p1), 255 (p0): offset 0, leaderEpoch -1 (none), metadata "", commitTimestamp 1779276564803.
    assert [(o["partition"], o["offset"], o["leaderEpoch"], o["metadata"], o["commitTimestamp"], o["recordOffset"])
            for o in g["offsets"]] == [(0, 0, None, "", 1779276564803, 255), (1, 0, None, "", 1779276564803, 254),
                                       (2, 0, None, "", 1779276564803, 253)]
    assert g["lastRecordOffset"] == 255


def test_groups_generated_every_key_ends_in_a_tombstone():
    r = replay_groups([GENERATED / "__consumer_offsets-0"])
    # CONTENTS.txt: offsets 0-4 commit group-1/topic-3/102 (type 0), 5 is that key's tombstone; 6-10 commit
    # group-29/topic-31/130 (type 1), 11 its tombstone; 12-36 group metadata of group-57, 37 its tombstone;
    # 38-49 consumer-group types 3-8 and 50-63 share-group types 9-15, each followed by its tombstone. No group
    # is left, and no record is of a type the replay does not model.
    assert r.groups == {}
    assert r.ignored == 0
    # 64-68 do not decode: unknown type 16, a cut GroupMetadataKey, a 1-byte key, value version 99, empty value
    assert [s.offset for s in r.skipped] == [64, 65, 66, 67, 68]
    assert r.skipped[0].reason == "unknown record type 16"
    assert r.skipped[2].reason == "Could not read version from key's buffer."
    assert r.skipped[4].reason == "Could not read version from value's buffer."
    assert r.records == 69


def _key(rtype, name, obj):
    schema = tables.schema("group_coordinator", name)
    # a coordinator-key definition (Kafka 4.1+) has its fields at version 0 whatever its record type
    return struct.pack(">h", rtype) + write_struct(obj, schema, 0 if schema.extra.get("type") == "coordinator-key"
                                                   else rtype)


def _value(name, version, obj):
    return struct.pack(">h", version) + write_struct(obj, tables.schema("group_coordinator", name), version)


def _commit(group, topic, partition, offset, *, version=3, rtype=1, **extra):
    value = {"offset": offset, "leaderEpoch": 5, "metadata": f"m{offset}", "commitTimestamp": T0 + offset,
             "expireTimestamp": -1, **extra}
    return (_key(rtype, "OffsetCommitKey", {"group": group, "topic": topic, "partition": partition}),
            _value("OffsetCommitValue", version, value))


def _batch(offset, records, **kw):
    b = RecordBatchBuilder(base_offset=offset, **kw)
    for i, (k, v) in enumerate(records):
        b.append(offset + i, T0 + offset + i, k, v)
    return b.build()


def _txn_batch(offset, pid, records):
    return _batch(offset, records, producer_id=pid, producer_epoch=0, base_sequence=0, is_transactional=True)


@pytest.fixture
def offsets_dir(tmp_path):
    d = tmp_path / "__consumer_offsets-3"
    d.mkdir()
    write_segment(d / "00000000000000000000.log", [
        _batch(0, [_commit("g", "t", 0, 10)]),                     # 0: g t-0 at 10
        _txn_batch(1, 7, [_commit("g", "t", 0, 20)]),              # 1: producer 7 commits t-0 at 20 in a txn
        end_txn_marker_batch(2, 7, 0, True, 1, T0),                # 2: COMMIT for 7 -> t-0 is 20
        _txn_batch(3, 8, [_commit("g", "t", 0, 30)]),              # 3: producer 8: t-0 at 30 in a txn
        end_txn_marker_batch(4, 8, 0, False, 1, T0),               # 4: ABORT for 8 -> t-0 stays 20
        _txn_batch(5, 9, [_commit("g", "t", 1, 40)]),              # 5: producer 9: t-1 at 40, no marker yet
        _batch(6, [_commit("g", "t", 2, 50, rtype=0, version=1, expireTimestamp=T0 + 99)]),  # 6: v1, expires
        _batch(7, [_commit("g", "u", 0, 60), (_commit("g", "u", 0, 0)[0], None)]),  # 7: u-0 at 60, 8: tombstone
        _batch(9, [_commit("h", "t", 0, 70, rtype=0), _commit("h", "t", 0, 71, rtype=1)]),  # 9, 10: type 1 supersedes type 0
    ])
    return d


def test_groups_transactions_tombstones_and_supersession(offsets_dir):
    r = replay_groups([offsets_dir])
    assert r.skipped == [] and r.pending == 1  # producer 9's commit waits for its marker
    g = r.groups["g"].to_json()
    assert g["type"] is None  # no group metadata: committed offsets only
    by_tp = {(o["topic"], o["partition"]): o for o in g["offsets"]}
    assert set(by_tp) == {("t", 0), ("t", 2)}  # t-1 pending, u-0 deleted by the tombstone at 8
    assert (by_tp["t", 0]["offset"], by_tp["t", 0]["metadata"], by_tp["t", 0]["leaderEpoch"]) == (20, "m20", 5)
    # value version 1 is the only one with an expire timestamp (and no leader epoch)
    assert (by_tp["t", 2]["expireTimestamp"], by_tp["t", 2]["leaderEpoch"]) == (T0 + 99, None)
    assert by_tp["t", 0]["expireTimestamp"] is None
    # offsets 9 (record type 0) and 10 (type 1) commit the same topic-partition: the later one counts
    assert r.groups["h"].to_json()["offsets"][0]["offset"] == 71


def test_groups_bad_batch_is_reported_and_the_rest_replayed(offsets_dir, tmp_path):
    seg = offsets_dir / "00000000000000000000.log"
    data = bytearray(seg.read_bytes())
    data[-3] ^= 0xFF  # inside the last batch (offsets 9-10): its CRC no longer matches
    seg.write_bytes(bytes(data))
    r = replay_groups([seg])
    [s] = r.skipped
    assert s.offset == 9 and "fails its CRC check" in s.reason
    assert "h" not in r.groups and r.groups["g"].to_json()["offsets"][0]["offset"] == 20


# --- __transaction_state ----------------------------------------------------------------------------------
def test_txn_state_generated():
    r = replay_transactions([GENERATED / "__transaction_state-0"])
    # CONTENTS.txt: offsets 0-7 value v0 for txn-<State> of each of the 8 states, 8-15 value v1 for the same
    # ids (so v1 wins), 16 tombstone of txn-Dead, 17 tombstone of "" (never written), 18 a key of version 1.
    assert sorted(r.transactions) == ["txn-CompleteAbort", "txn-CompleteCommit", "txn-Empty", "txn-Ongoing",
                                      "txn-PrepareAbort", "txn-PrepareCommit", "txn-PrepareEpochFence"]
    [s] = r.skipped
    assert s.offset == 18 and s.reason == "unknown key version 1"
    t = {k: v.to_json() for k, v in r.transactions.items()}
    # offset 10 (v1): producer 4002 epoch 3, previous 3002, next 5000, client transaction version 2
    pc = t["txn-PrepareCommit"]
    assert (pc["producerId"], pc["producerEpoch"], pc["previousProducerId"], pc["nextProducerId"]) == (4002, 3, 3002, 5000)
    assert (pc["clientTransactionVersion"], pc["state"], pc["transactionTimeoutMs"]) == (2, "PrepareCommit", 60000)
    assert pc["partitions"] == [{"topic": "topic-a", "partitions": [0, 2]}, {"topic": "topic-b", "partitions": [1]}]
    assert (pc["transactionStartTimestampMs"], pc["transactionLastUpdateTimestampMs"]) == (T0 + 2, T0 + 102)
    assert pc["valueVersion"] == 1 and pc["recordOffset"] == 10
    # offset 8: Empty, no partitions (null in the value), never started
    e = t["txn-Empty"]
    assert (e["state"], e["partitions"], e["transactionStartTimestampMs"], e["nextProducerId"]) == ("Empty", [], -1, -1)
    assert t["txn-PrepareEpochFence"]["producerEpoch"] == 8 and t["txn-PrepareEpochFence"]["state"] == "PrepareEpochFence"


# --- __cluster_metadata -----------------------------------------------------------------------------------
def test_metadata_broker_written_log():
    r = replay_metadata([KRAFT_LOG])
    assert r.skipped == [] and r.notes == []
    # offsets 0..2066; offset 0 is the LeaderChange control record, the other 2066 are metadata records
    assert (r.offset, r.log_records, r.snapshot) == (2066, 2066, None)
    img = r.image.to_json()
    # offsets 2-7: feature levels (metadata.version 29 is kept apart from the others)
    assert img["features"] == {"metadata.version": 29, "eligible.leader.replicas.version": 1, "group.version": 1,
                               "share.version": 1, "streams.version": 1, "transaction.version": 2}
    # offset 12 registers broker 1 (epoch 12, fenced); 14 unfences it (fenced -1), 1622 fences, 1623 unfences,
    # 2011 puts it in controlled shutdown, 2065 fences it: fenced and in controlled shutdown at the end.
    [b] = img["brokers"]
    assert (b["id"], b["epoch"], b["incarnationId"], b["rack"]) == (1, 12, "16wlGcG8T8iH9qs3M5tUDg", None)
    assert (b["fenced"], b["inControlledShutdown"]) == (True, True)
    assert b["listeners"] == [{"name": "PLAINTEXT", "host": "localhost", "port": 9092, "securityProtocol": 0}]
    # offset 10 registers controller 1
    assert [(c["id"], c["incarnationId"]) for c in img["controllers"]] == [(1, "C6Tub142QAyWNTkGzIuNZA")]
    topics = {t["name"]: t for t in img["topics"]}
    assert topics["demo-topic"]["topicId"] == "S2kwl2mvSCasFtxUPkayPw"
    assert len(topics["__consumer_offsets"]["partitions"]) == 50
    # demo-topic-0: created at 970 (leader 1, epochs 0); changes at 1619 (leader -1), 1674 (leader 1, isr [1],
    # elr []), 2062 (leader -1, isr [], elr [1], lastKnownElr [1]): three leader changes -> leader epoch 3,
    # three changes -> partition epoch 3, no leader now.
    p0 = topics["demo-topic"]["partitions"][0]
    assert (p0["leader"], p0["leaderEpoch"], p0["partitionEpoch"]) == (-1, 3, 3)
    assert (p0["isr"], p0["replicas"], p0["eligibleLeaderReplicas"], p0["lastKnownElr"]) == ([], [1], [1], [1])
    # offset 8: cluster-wide broker config (resource type 4, name ""); 975-977 the __consumer_offsets configs
    assert img["configs"] == [
        {"resourceType": "BROKER", "resourceName": "", "configs": {"min.insync.replicas": "1"}},
        {"resourceType": "TOPIC", "resourceName": "__consumer_offsets",
         "configs": {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"}}]
    assert img["acls"] == [] and img["producerIds"] == {"nextProducerId": None}


def test_metadata_bootstrap_checkpoint():
    r = replay_metadata([BOOTSTRAP])
    # the snapshot holds one record: FEATURE_LEVEL_RECORD metadata.version 11; Kafka's bootstrap snapshot id
    # is (0, 0), so the image is valid at offset -1
    assert r.image.to_json()["features"] == {"metadata.version": 11}
    assert (r.offset, r.snapshot_records, r.skipped) == (-1, 1, [])


def test_metadata_generated_every_record_type():
    r = replay_metadata([GENERATED / "__cluster_metadata-0"])
    img = r.image.to_json()
    # CONTENTS.txt / Kafka's decoder output, record by record:
    # 5-8 register brokers 156, 175, 194, 213 (all fenced; v1+ in controlled shutdown; 213 has logDirs);
    # 9 unregisters 232, which is not registered: nothing changes (Kafka does not refuse it)
    assert [(b["id"], b["fenced"], b["inControlledShutdown"]) for b in img["brokers"]] == [
        (156, True, False), (175, True, True), (194, True, True), (213, True, True)]
    assert img["brokers"][3]["logDirs"] == ["AAAAAAAAEIAAAAAAAAAggA", "AAAAAAAAEIEAAAAAAAAggQ"]
    # 10 creates topic name-133; 11-13 and 15-17 name other topic ids: refused, the topic has no partitions
    assert img["topics"] == [{"name": "name-133", "topicId": "AAAAAAAAEIYAAAAAAAAghg", "partitions": []}]
    # 14: resource type 18 is no ConfigResource.Type: UNKNOWN
    assert img["configs"] == [{"resourceType": "UNKNOWN", "resourceName": "resourceName-217",
                               "configs": {"name-216": "value-219"}}]
    # 21 token, 22 SCRAM user (mechanism 10: UNKNOWN), 23 feature, 24 quota removal of a quota that is not
    # there (nothing left), 25 producer ids, 29 ACL, 37 removes token tokenId-365 (not there), 38 controller
    assert [d["tokenId"] for d in img["delegationTokens"]] == ["tokenId-308"]
    assert img["scramCredentials"] == [{"user": "name-311", "mechanism": "UNKNOWN", "iterations": 409}]
    assert img["features"] == {"metadata.version": None, "name-316": 325}
    assert img["clientQuotas"] == [] and img["producerIds"] == {"nextProducerId": 1000329}
    assert [a["id"] for a in img["acls"]] == ["AAAAAAAAEWAAAAAAAAAhYA"]
    assert [c["id"] for c in img["controllers"]] == [466]
    skipped = {s.offset: s.reason for s in r.skipped}
    # 18/19 fence/unfence unknown brokers, 20 removes an unknown topic, 26-28 change unknown brokers,
    # 30 removes an unknown ACL, 32 migration state 60 is invalid, 36 aborts without a begun transaction
    # (34/35 begin and end an empty one), 39-43 do not decode
    assert sorted(skipped) == [11, 12, 13, 15, 16, 17, 18, 19, 20, 26, 27, 28, 30, 32, 36, 39, 40, 41, 42, 43]
    assert skipped[18] == "Tried to fence broker 396, but that broker was not registered."
    assert skipped[36] == "Encountered AbortTransactionRecord without having seen a BeginTransactionRecord"
    assert skipped[39] == "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 200"
    # the last offset in the file is 44 (the SnapshotFooter control record)
    assert r.offset == 44


def _meta(name, obj, version=0):
    api_key = next(k for k, (n, _) in tables.record_types("metadata").items() if n == name)
    return bytes([1, api_key, version]) + write_struct(obj, tables.schema("metadata", name), version)


TOPIC_ID = uuid.UUID(int=0x1234)


def _broker(epoch):
    return _meta("RegisterBrokerRecord", {"brokerId": 1, "incarnationId": uuid.UUID(int=9), "brokerEpoch": epoch,
                                          "endPoints": [], "features": [], "rack": "r1", "fenced": True}, 0)


@pytest.fixture
def metadata_dir(tmp_path):
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    # the snapshot: everything up to offset 9 (end offset 10)
    write_segment(d / "00000000000000000010-0000000001.checkpoint", [_batch(0, [
        (None, _broker(5)),
        (None, _meta("TopicRecord", {"name": "t", "topicId": TOPIC_ID})),
        (None, _meta("PartitionRecord", {"partitionId": 0, "topicId": TOPIC_ID, "replicas": [1, 2], "isr": [1, 2],
                                         "leader": 1, "leaderEpoch": 4, "partitionEpoch": 6}))])])
    log = [(None, _meta("TopicRecord", {"name": f"old-{i}", "topicId": uuid.UUID(int=100 + i)})) for i in range(10)]
    log += [
        (None, _meta("PartitionChangeRecord", {"partitionId": 0, "topicId": TOPIC_ID, "isr": [1]})),  # 10
        (None, _meta("PartitionChangeRecord", {"partitionId": 0, "topicId": TOPIC_ID, "leader": 2})),  # 11
        (None, _meta("FenceBrokerRecord", {"id": 1, "epoch": 4})),  # 12
        (None, _meta("ConfigRecord", {"resourceType": 2, "resourceName": "t", "name": "a", "value": "1"})),  # 13
        (None, _meta("ConfigRecord", {"resourceType": 2, "resourceName": "t", "name": "b", "value": "2"})),  # 14
        (None, _meta("ConfigRecord", {"resourceType": 2, "resourceName": "t", "name": "a", "value": None})),  # 15
        (None, _meta("BeginTransactionRecord", {"name": "x"})),  # 16
        (None, _meta("TopicRecord", {"name": "aborted", "topicId": uuid.UUID(int=7)})),  # 17
        (None, _meta("AbortTransactionRecord", {"reason": "test"})),  # 18
        (None, _meta("BrokerRegistrationChangeRecord", {"brokerId": 1, "brokerEpoch": 5, "fenced": -1}, 0)),  # 19
        (None, _meta("BeginTransactionRecord", {"name": "open"})),  # 20
        (None, _meta("TopicRecord", {"name": "unfinished", "topicId": uuid.UUID(int=8)})),  # 21
    ]
    write_segment(d / "00000000000000000000.log", [_batch(0, log)])
    return d


def test_metadata_snapshot_then_log(metadata_dir):
    r = replay_metadata([metadata_dir])
    assert r.snapshot.endswith("00000000000000000010-0000000001.checkpoint") and r.snapshot_end_offset == 10
    img = r.image.to_json()
    # log offsets 0-9 are in the snapshot already: none of the old-N topics is replayed
    assert [t["name"] for t in img["topics"]] == ["t"]
    p = img["topics"][0]["partitions"][0]
    # 10: isr [1], leader -2 (no change): leader epoch stays 4, partition epoch 6 -> 7;
    # 11: leader 2: leader epoch 4 -> 5, partition epoch 8; isr and replicas (null) unchanged
    assert (p["leader"], p["leaderEpoch"], p["partitionEpoch"], p["isr"], p["replicas"]) == (2, 5, 8, [1], [1, 2])
    # 12: epoch 4 is not broker 1's (5): refused. 19 unfences it (fenced -1) with the right epoch.
    assert [s.offset for s in r.skipped] == [12]
    assert "did not match the current broker epoch, 5" in r.skipped[0].reason
    assert img["brokers"][0]["fenced"] is False
    # 13-15: a set, b set, a deleted (null value)
    assert img["configs"] == [{"resourceType": "TOPIC", "resourceName": "t", "configs": {"b": "2"}}]
    # 16-18: the aborted transaction's topic is gone; 20-21: an open transaction at the end is left out and
    # the image is valid at the offset before it began
    assert r.offset == 19 and "begun at offset 20" in r.notes[0]


def test_metadata_newest_snapshot_is_chosen(metadata_dir):
    shutil.copy(BOOTSTRAP, metadata_dir / "00000000000000000002-0000000001.checkpoint")
    assert replay_metadata([metadata_dir]).snapshot.endswith("00000000000000000010-0000000001.checkpoint")


# --- the commands -----------------------------------------------------------------------------------------

def test_groups_cli_text_and_json(offsets_dir):
    res = run_cli("groups", OFFSETS_V2)
    assert res.exit_code == 0, res.output
    assert "Group demo-group" in res.output and "generation 3" in res.output and "demo-topic[0,1,2]" in res.output
    res = run_cli("groups", "--format", "json", "--group", "h", offsets_dir)
    assert res.exit_code == 0
    data = json.loads(res.stdout)
    assert [g["group"] for g in data["groups"]] == ["h"] and data["pendingTransactionalRecords"] == 1


def test_groups_cli_skipped_records_exit_1():
    res = run_cli("groups", "--format", "json", GENERATED / "__consumer_offsets-0")
    assert res.exit_code == 1
    assert [s["offset"] for s in json.loads(res.stdout)["skipped"]] == [64, 65, 66, 67, 68]
    assert "offset 64: unknown record type 16" in res.stderr
    assert "5 record(s) or stretch(es) skipped" in res.stderr


def test_txn_state_cli():
    res = run_cli("txn-state", GENERATED / "__transaction_state-0")
    assert res.exit_code == 1  # offset 18 is skipped
    assert "txn-PrepareCommit" in res.stdout and "txn-Dead" not in res.stdout
    assert "offset 18: unknown key version 1" in res.stderr
    data = json.loads(run_cli("txn-state", "--format", "json", GENERATED / "__transaction_state-0").stdout)
    assert len(data["transactions"]) == 7


def test_metadata_cli(metadata_dir):
    res = run_cli("metadata", KRAFT_LOG)
    assert res.exit_code == 0, res.output
    assert "Cluster image valid at offset 2066" in res.stdout
    assert "demo-topic (id S2kwl2mvSCasFtxUPkayPw, 3 partition(s))" in res.stdout
    res = run_cli("metadata", "--format", "json", metadata_dir)
    assert res.exit_code == 1 and json.loads(res.stdout)["validAtOffset"] == 19


@pytest.mark.parametrize("command", ["groups", "metadata", "txn-state"])
def test_wrong_input_is_a_usage_error(command, tmp_path):
    other = tmp_path / "orders-0"
    other.mkdir()
    shutil.copy(OFFSETS_V2 / "00000000000000000000.log", other)
    res = run_cli(command, other)
    assert res.exit_code == 2 and "is in a partition of topic 'orders'" in res.stderr
    res = run_cli(command, tmp_path / "missing")
    assert res.exit_code == 2 and "cannot open" in res.stderr
    assert run_cli(command).exit_code == 2
    empty = tmp_path / "logs"
    empty.mkdir()
    res = run_cli(command, empty)
    assert res.exit_code == 2 and "holds no" in res.stderr


def test_log_directory_finds_the_topic_partitions(tmp_path):
    logs = tmp_path / "data"
    shutil.copytree(OFFSETS_V2, logs / "__consumer_offsets-15")
    shutil.copytree(GENERATED / "__transaction_state-0", logs / "__transaction_state-0")
    assert list(replay_groups([logs]).groups) == ["demo-group"]
    assert len(replay_transactions([logs]).transactions) == 7
    with pytest.raises(ReplayInputError):
        replay_metadata([logs])


def test_help_teaches_with_examples():
    for command in ("groups", "metadata", "txn-state"):
        res = run_cli(command, "--help")
        assert res.exit_code == 0 and "Examples:" in res.output and f"kdump {command}" in res.output


def test_untrusted_text_is_escaped():
    assert printable("a\x1b[31mb\x07") == "a\\x1b[31mb\\x07"
    assert uuid_text(TOPIC_ID) == "AAAAAAAAAAAAAAAAAAASNA"


def test_metadata_client_quotas_set_and_remove(tmp_path):
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    user = [{"entityType": "user", "entityName": "alice"}]

    def quota(key, value, remove=False):
        return None, _meta("ClientQuotaRecord", {"entity": user, "key": key, "value": value, "remove": remove})
    # 0 and 1 set two quotas of user alice, 2 removes the first: one is left
    write_segment(d / "00000000000000000000.log", [_batch(0, [quota("producer_byte_rate", 1024.0),
                                                               quota("consumer_byte_rate", 2048.0),
                                                               quota("producer_byte_rate", 0.0, remove=True)])])
    img = replay_metadata([d]).image.to_json()
    assert img["clientQuotas"] == [{"entity": user, "quotas": {"consumer_byte_rate": 2048.0}}]
