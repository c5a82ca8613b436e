"""``__consumer_offsets`` replayed into each group's state, as Kafka's group coordinator loads it.

Records are keyed as compaction keys them: the latest record of a key is its state, a tombstone (null value)
deletes the key. Offset commits of record type 0 and 1 are one key (group, topic, partition): Kafka's
coordinator applies both to the same offset. Records in transactional batches (offsets committed by
``sendOffsetsToTransaction``) wait for their producer's marker: COMMIT applies them (unless a commit for the
key was written later in the log, which stays), ABORT drops them, no marker yet leaves them pending.

What is modelled: classic groups (``GroupMetadataValue``: protocol type, protocol, generation, leader,
members with their subscription and assignment decoded as the embedded consumer protocol when the protocol
type is ``consumer``), consumer-protocol groups of KIP-848 (group epoch, target assignment epoch, members
with their metadata, current and target assignment; topic ids named where the group's subscription metadata
names them; their regular-expression subscriptions, type 16), Streams groups of KIP-1071 (types 17-24:
group epoch and metadata hash, the topology and its epoch, members with their metadata and current and
target task assignment, the target assignment epoch and its resolved topic ids), share groups of KIP-932
(types 9-15: epochs, members with their subscription and assignments, the state of each topic's share
partitions: initializing, initialized, deleting) and committed offsets. Each record type belongs to one kind
of group (Kafka's coordinator keeps one group per id): its latest record says which.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kdump.decode.control import TxnMarker, decode_control
from kdump.decode.internal.base import RecordError
from kdump.decode.internal.coordinator import OFFSETS, UnknownRecordType, definition, group_metadata_tree, read_record
from kdump.decode.jackson import to_tree
from kdump.format.types import ControlRecordType
from kdump.replay.source import Record, SkipList, Skipped, read_records, sources

TOPIC = "__consumer_offsets"
OFFSET_COMMIT_TYPES = (0, 1)
GROUP_METADATA = 2
CONSUMER_GROUP_METADATA = 3
CONSUMER_GROUP_PARTITION_METADATA = 4
CONSUMER_GROUP_MEMBER_METADATA = 5
CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = 6
CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = 7
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = 8
SHARE_GROUP_PARTITION_METADATA = 9
SHARE_GROUP_MEMBER_METADATA = 10
SHARE_GROUP_METADATA = 11
SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = 12
SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = 13
SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = 14
SHARE_GROUP_STATE_PARTITION_METADATA = 15
CONSUMER_GROUP_REGULAR_EXPRESSION = 16
STREAMS_GROUP_METADATA = 17
STREAMS_GROUP_MEMBER_METADATA = 19
STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA = 20
STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER = 21
STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT = 22
STREAMS_GROUP_TOPOLOGY = 23
# member states by the byte the current-assignment records carry, as Kafka names them (``fromValue``: a byte it
# does not know is UNKNOWN): org.apache.kafka.coordinator.group.modern.MemberState for consumer (type 8) and
# share (type 14) members, org.apache.kafka.coordinator.group.streams.MemberState for Streams members (type 22)
MODERN_MEMBER_STATES = {0: "STABLE", 1: "UNREVOKED_PARTITIONS", 2: "UNRELEASED_PARTITIONS", 127: "UNKNOWN"}
STREAMS_MEMBER_STATES = {1: "STABLE", 2: "UNREVOKED_TASKS", 3: "UNRELEASED_TASKS", 127: "UNKNOWN"}
MEMBER_STATES = {CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: MODERN_MEMBER_STATES,
                 SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT: MODERN_MEMBER_STATES,
                 STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT: STREAMS_MEMBER_STATES}
# the kind of group each record type (other than offset commits and classic metadata) belongs to
KINDS = {**dict.fromkeys((3, 4, 5, 6, 7, 8, 16), "consumer"), **dict.fromkeys(range(9, 16), "share"),
         **dict.fromkeys(range(17, 24), "streams")}
MODELLED = {0, 1, 2, *KINDS}
# the records that name the topics a group's assignments give by id: type -> the fields listing them
# (Kafka 4.4 defines neither 18, StreamsGroupPartitionMetadata, nor 24: a record of either is an unknown type)
TOPIC_NAMING = {CONSUMER_GROUP_PARTITION_METADATA: ("topics",), SHARE_GROUP_PARTITION_METADATA: ("topics",),
                SHARE_GROUP_STATE_PARTITION_METADATA: ("initializingTopics", "initializedTopics", "deletingTopics")}


@dataclass(frozen=True)
class Entry:
    """The latest record of one key: where it is and what it says (``value`` None: a tombstone)."""
    offset: int
    record_type: int
    version: int | None
    key: dict
    value: dict | None
    # the value's message (a record type an older release defined otherwise is read with that one's)
    value_name: str = ""


@dataclass
class GroupState:
    """One group as the records leave it. ``kind``: ``classic``, ``consumer`` (KIP-848), ``streams``
    (KIP-1071), ``share`` (KIP-932) or None (the group's metadata is gone, only committed offsets are left)."""
    name: str
    kind: str | None = None
    classic: dict | None = None  # protocolType, protocol, generation, leader, currentStateTimestamp
    group_epoch: int | None = None
    metadata_hash: int | None = None
    target_assignment_epoch: int | None = None
    members: dict = field(default_factory=dict)  # member id -> JSON-able dict
    regular_expressions: dict = field(default_factory=dict)  # consumer: regular expression -> JSON-able dict
    streams: dict = field(default_factory=dict)  # streams: the group-level records' fields (see to_json)
    topic_states: dict | None = None  # share: initializingTopics, initializedTopics, deletingTopics
    offsets: dict = field(default_factory=dict)  # (topic, partition) -> JSON-able dict
    last_offset: int = -1  # log offset of the latest record that makes up this state

    def to_json(self) -> dict:
        out: dict[str, Any] = {"group": self.name, "type": self.kind}
        if self.kind == "classic":
            assert self.classic is not None  # set with the kind
            out.update(self.classic)
        elif self.kind is not None:
            out["groupEpoch"] = self.group_epoch
            out["metadataHash"] = self.metadata_hash
            out["targetAssignmentEpoch"] = self.target_assignment_epoch
        if self.kind == "consumer":
            out["regularExpressions"] = [self.regular_expressions[r] for r in sorted(self.regular_expressions)]
        elif self.kind == "streams":
            out["validatedTopologyEpoch"] = self.streams.get("validatedTopologyEpoch")
            out["assignmentConfigs"] = self.streams.get("assignmentConfigs", [])
            out["topology"] = self.streams.get("topology")
        elif self.kind == "share":
            out["topicStates"] = self.topic_states
        out["members"] = [self.members[m] for m in sorted(self.members)]
        out["offsets"] = [self.offsets[tp] for tp in sorted(self.offsets)]
        out["lastRecordOffset"] = self.last_offset
        return out


@dataclass
class GroupsReplay:
    """The replay's result: ``groups`` by name, ``skipped`` records, ``ignored`` (record types not modelled),
    ``pending`` (transactional commits without their producer's marker yet), ``records`` read."""
    groups: dict[str, GroupState]
    skipped: SkipList
    ignored: int
    pending: int
    records: int

    def to_json(self, names=None) -> dict:
        chosen = [g for n, g in sorted(self.groups.items()) if not names or n in names]
        return {"groups": [g.to_json() for g in chosen], "records": self.records, "ignoredRecords": self.ignored,
                "pendingTransactionalRecords": self.pending, **self.skipped.to_json()}


class _Log:
    """The compacted view of the topic: latest entry per key, and per producer its open transaction."""

    def __init__(self):
        self.latest: dict[tuple, Entry] = {}
        self.pending: dict[int, list[tuple[tuple, Entry]]] = {}
        self.skipped = SkipList()
        self.ignored = 0
        self.records = 0

    def apply(self, rec: Record) -> None:
        self.records += 1
        if rec.control:
            self._marker(rec)
            return
        try:
            if rec.key is None:
                raise RecordError("the record has no key")
            rtype, _key_name, key_obj, value_name, version, value_obj = read_record(OFFSETS, rec.key, rec.value)
        except UnknownRecordType as e:
            self.skipped.append(Skipped(rec.file, rec.offset, f"unknown record type {e.record_type}",
                                        "record-type-unknown", rec.position))
            return
        except RecordError as e:
            self.skipped.append(Skipped(rec.file, rec.offset, str(e), position=rec.position))
            return
        if rtype not in MODELLED:
            self.ignored += 1
            return
        entry = Entry(rec.offset, rtype, version, key_obj, value_obj, value_name)
        key = _compaction_key(rtype, key_obj)
        if rec.transactional and rec.producer_id >= 0:
            self.pending.setdefault(rec.producer_id, []).append((key, entry))
        else:
            self._put(key, entry)

    def _put(self, key: tuple, entry: Entry) -> None:
        if entry.value is None:
            self.latest.pop(key, None)
        else:
            self.latest[key] = entry

    def _marker(self, rec: Record) -> None:
        marker = decode_control(rec.key, rec.value)
        if not isinstance(marker, TxnMarker):
            return
        waiting = self.pending.pop(rec.producer_id, [])
        if marker.type is ControlRecordType.COMMIT:
            for key, entry in waiting:
                current = self.latest.get(key)
                if current is None or current.offset < entry.offset:
                    self._put(key, entry)


def _compaction_key(rtype: int, key: dict) -> tuple:
    if rtype in OFFSET_COMMIT_TYPES:
        return ("offset", key["group"], key["topic"], key["partition"])
    return (rtype, *key.values())


def replay_groups(paths, progress=None) -> GroupsReplay:
    """Replay the ``__consumer_offsets`` partitions ``paths`` name (see :func:`kdump.replay.source.sources`);
    ``progress(bytes)`` as each batch is read."""
    log = _Log()
    for src in sources(paths, TOPIC):
        for path in src.logs:
            for rec in read_records(path, log.skipped, progress=progress):
                log.apply(rec)
    groups: dict[str, GroupState] = {}
    topic_names: dict[str, dict] = {}  # group -> topic id -> name, from the subscription metadata
    for entry in sorted(log.latest.values(), key=lambda e: e.offset):
        if entry.record_type in TOPIC_NAMING:
            tree = _tree(entry)
            names = topic_names.setdefault(entry.key["groupId"], {})
            for k in TOPIC_NAMING[entry.record_type]:
                names.update({t["topicId"]: t["topicName"] for t in tree.get(k) or ()})
    for entry in sorted(log.latest.values(), key=lambda e: e.offset):
        _apply_entry(groups, entry, topic_names)
    pending = sum(len(v) for v in log.pending.values())
    return GroupsReplay(groups, log.skipped, log.ignored, pending, log.records)


def _tree(entry: Entry) -> dict:
    assert entry.value is not None  # log.latest holds no tombstones
    return to_tree(entry.value, definition(OFFSETS, entry.value_name, entry.value), entry.version)


def _group(groups: dict, name: str) -> GroupState:
    g = groups.get(name)
    if g is None:
        g = groups[name] = GroupState(name)
    return g


def _apply_entry(groups: dict, entry: Entry, topic_names: dict) -> None:
    rtype, key, value = entry.record_type, entry.key, entry.value
    assert value is not None and entry.version is not None  # log.latest holds no tombstones
    g = _group(groups, key["group"] if "group" in key else key["groupId"])  # offset and classic keys: group
    g.last_offset = max(g.last_offset, entry.offset)
    if rtype in OFFSET_COMMIT_TYPES:
        g.offsets[key["topic"], key["partition"]] = {
            "topic": key["topic"], "partition": key["partition"], "offset": value["offset"],
            # leader epoch: written from v3 on, -1 = none; expire timestamp: only v1 has it
            "leaderEpoch": value.get("leaderEpoch", -1) if value.get("leaderEpoch", -1) >= 0 else None,
            "metadata": value["metadata"], "commitTimestamp": value["commitTimestamp"],
            "expireTimestamp": value["expireTimestamp"] if entry.version == 1 else None,
            "recordOffset": entry.offset}
        return
    if rtype == GROUP_METADATA:
        tree = group_metadata_tree(value, entry.version)
        g.kind = "classic"
        g.classic = {"protocolType": tree["protocolType"], "protocol": tree["protocol"],
                     "generation": tree["generation"], "leader": tree["leader"],
                     "currentStateTimestamp": tree.get("currentStateTimestamp")}
        g.members = {m["memberId"]: _classic_member(m) for m in tree["members"]}
        return
    g.kind = KINDS[rtype]
    if rtype in TOPIC_NAMING and rtype != SHARE_GROUP_STATE_PARTITION_METADATA:
        return  # subscription metadata: its topic names are in topic_names
    tree = _tree(entry)
    names = topic_names.get(key["groupId"], {})
    if rtype in (CONSUMER_GROUP_METADATA, SHARE_GROUP_METADATA, STREAMS_GROUP_METADATA):
        g.group_epoch = value["epoch"]
        g.metadata_hash = tree.get("metadataHash")
        if rtype == STREAMS_GROUP_METADATA:
            g.streams["validatedTopologyEpoch"] = tree.get("validatedTopologyEpoch")
            # LastAssignmentConfigs: tagged, printed only when not empty (its definition's JSON-null default)
            g.streams["assignmentConfigs"] = tree.get("lastAssignmentConfigs") or []
    elif rtype in (CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, SHARE_GROUP_TARGET_ASSIGNMENT_METADATA,
                   STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA):
        g.target_assignment_epoch = value["assignmentEpoch"]
    elif rtype == CONSUMER_GROUP_REGULAR_EXPRESSION:
        g.regular_expressions[key["regularExpression"]] = {"regularExpression": key["regularExpression"], **tree}
    elif rtype == SHARE_GROUP_STATE_PARTITION_METADATA:
        g.topic_states = tree
    elif rtype == STREAMS_GROUP_TOPOLOGY:
        g.streams["topology"] = tree
    else:  # a member's metadata, current assignment or target assignment
        member = g.members.setdefault(key["memberId"], {"memberId": key["memberId"]})
        if rtype in (CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER, SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER):
            member["targetAssignment"] = _named(tree["topicPartitions"], names)
        elif rtype == STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER:
            member["targetAssignment"] = tree
        else:
            for k in ("assignedPartitions", "partitionsPendingRevocation"):
                if k in tree:
                    tree[k] = _named(tree[k], names)
            if rtype in MEMBER_STATES and "state" in tree:
                # the name Kafka gives the byte, the byte beside it (an UNKNOWN one keeps what it was)
                tree["stateId"] = tree["state"]
                tree["state"] = MEMBER_STATES[rtype].get(tree["state"], "UNKNOWN")
            member.update(tree)


def _classic_member(m: dict) -> dict:
    return {"memberId": m["memberId"], "groupInstanceId": m.get("groupInstanceId"), "clientId": m["clientId"],
            "clientHost": m["clientHost"], "sessionTimeout": m["sessionTimeout"],
            "rebalanceTimeout": m.get("rebalanceTimeout"), "subscription": m["subscription"],
            "assignment": m["assignment"]}


def _named(topic_partitions: list, names: dict) -> list:
    """Topic-id assignments with the topic's name beside its id, where the group's metadata names it."""
    return [{"topicId": t["topicId"], "topic": names.get(t["topicId"]), "partitions": t["partitions"],
             **({"assignmentEpochs": t["assignmentEpochs"]} if "assignmentEpochs" in t else {})}
            for t in topic_partitions]
