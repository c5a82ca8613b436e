"""A KRaft snapshot plus the ``__cluster_metadata`` log after it, replayed into the cluster image that Kafka's
metadata shell shows (``MetadataImage``), with the rules of Kafka's ``metadata/image/*Delta.java``.

The snapshot is the newest ``<end offset>-<epoch>.checkpoint`` of the partition directory (or the one named);
its records are applied first, then the log's records at offsets from the snapshot's end offset on. The image
is valid at the last offset read (the snapshot's end offset - 1 when no log record follows). Control records
(leader changes, snapshot headers and footers, KRaft voters) are not part of the image.

Kafka's rules kept here, record by record:

* RegisterBrokerRecord replaces the broker's registration; UnregisterBrokerRecord removes it, as
  UnregisterControllerRecord (Kafka 4.4+) removes a controller's. Fence,
  Unfence and BrokerRegistrationChange need the broker registered with the record's epoch (else Kafka's
  ``IllegalStateException``: the record is skipped); BrokerRegistrationChange ``fenced`` is 1 fence, 0 no
  change, -1 unfence, ``inControlledShutdown`` 1 yes, 0 no change; non-empty ``logDirs`` replace the broker's.
  ``cordonedLogDirs`` (KIP-1066, Kafka 4.3+; ``BrokerRegistration``/``ClusterDelta`` since KAFKA-20441):
  null (absent) in a RegisterBrokerRecord means not yet known (the broker has not sent it); in a
  BrokerRegistrationChange null (absent) changes nothing and any list, an empty one too, replaces it.
* TopicRecord adds a topic; PartitionRecord sets a partition of a known topic; PartitionChangeRecord merges
  into one (``PartitionRegistration.merge``): null lists and leader -2 / recovery state -1 mean "no change",
  leader -1 means no leader, and a leader change bumps the leader epoch; every change bumps the partition
  epoch. RemoveTopicRecord removes the topic and its configs. ClearElrRecord (Kafka 4.1+) empties the ELR and
  last known ELR of each partition of the named topic (every topic when the name is empty) that has any, as a
  PartitionChangeRecord with both lists empty would (so its partition epoch is bumped).
* ConfigRecord sets a key of a resource; a null value deletes it (a resource without keys is dropped).
* FeatureLevelRecord sets a feature's level, level 0 removes it (``metadata.version`` is kept apart).
* AccessControlEntryRecord adds an ACL by id; RemoveAccessControlEntryRecord needs it to exist.
* ProducerIdsRecord sets the next producer id; ClientQuotaRecord sets or (``remove``) deletes a quota key;
  UserScramCredential/Remove*, DelegationToken/Remove* add and remove by user+mechanism / token id.
* Begin/End/AbortTransactionRecord: the records of an aborted metadata transaction are undone; a transaction
  still open at the end is left out and the image is valid at the offset before it began.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from kdump.decode.internal import tables
from kdump.decode.internal.base import RecordError
from kdump.decode.internal.metadata import METADATA, read_metadata_record
from kdump.decode.jackson import uuid_text
from kdump.read.logdir import kraft_snapshot_id
from kdump.replay.source import MAX_METADATA_FIELD_BYTES, Record, SkipList, Skipped, read_records, sources

TOPIC = "__cluster_metadata"
NO_LEADER = -1
NO_LEADER_CHANGE = -2
NO_RECOVERY_STATE_CHANGE = -1
LEADER_RECOVERY_STATES = {0: "RECOVERED", 1: "RECOVERING"}
FENCING_CHANGE = {1: True, 0: None, -1: False}  # BrokerRegistrationFencingChange
CONTROLLED_SHUTDOWN_CHANGE = {0: None, 1: True}  # BrokerRegistrationInControlledShutdownChange
CONFIG_RESOURCE_TYPES = {2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
ZK_MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION", 4: "ZK"}
RESOURCE_TYPES = ("UNKNOWN", "ANY", "TOPIC", "GROUP", "CLUSTER", "TRANSACTIONAL_ID", "DELEGATION_TOKEN", "USER")
PATTERN_TYPES = ("UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED")
OPERATIONS = ("UNKNOWN", "ANY", "ALL", "READ", "WRITE", "CREATE", "DELETE", "ALTER", "DESCRIBE", "CLUSTER_ACTION",
              "DESCRIBE_CONFIGS", "ALTER_CONFIGS", "IDEMPOTENT_WRITE", "CREATE_TOKENS", "DESCRIBE_TOKENS")
PERMISSION_TYPES = ("UNKNOWN", "ANY", "DENY", "ALLOW")
METADATA_VERSION = "metadata.version"


class NotApplied(Exception):
    """A record Kafka would refuse to apply to the image; ``str()`` is Kafka's exception text."""


def _name(names, code: int) -> str:
    return names[code] if 0 <= code < len(names) else "UNKNOWN"


def _uuids(values) -> list[str] | None:
    return None if values is None else [uuid_text(u) for u in values]


@dataclass
class ClusterImage:
    """The cluster as the records leave it, every part JSON-able (ids as Kafka prints them)."""
    brokers: dict = field(default_factory=dict)  # id -> registration
    controllers: dict = field(default_factory=dict)
    topics: dict = field(default_factory=dict)  # topic id -> {"name", "topicId", "partitions": {id: ...}}
    configs: dict = field(default_factory=dict)  # (resource type name, resource name) -> {key: value}
    features: dict = field(default_factory=dict)
    metadata_version: int | None = None
    zk_migration_state: str | None = None
    acls: dict = field(default_factory=dict)  # id -> ACL
    next_producer_id: int | None = None
    client_quotas: dict = field(default_factory=dict)  # ((type, name), ...) -> {key: value}
    scram: dict = field(default_factory=dict)  # (mechanism, user) -> {"iterations"}
    delegation_tokens: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "features": {"metadata.version": self.metadata_version, **dict(sorted(self.features.items()))},
            "zkMigrationState": self.zk_migration_state,
            "brokers": [self.brokers[b] for b in sorted(self.brokers)],
            "controllers": [self.controllers[c] for c in sorted(self.controllers)],
            "topics": [{**t, "partitions": [t["partitions"][p] for p in sorted(t["partitions"])]}
                       for t in sorted(self.topics.values(), key=lambda t: t["name"])],
            "configs": [{"resourceType": rt, "resourceName": rn, "configs": dict(sorted(kv.items()))}
                        for (rt, rn), kv in sorted(self.configs.items())],
            "acls": sorted(self.acls.values(), key=lambda a: (a["resourceType"], a["resourceName"], a["id"])),
            "producerIds": {"nextProducerId": self.next_producer_id},
            "clientQuotas": [{"entity": [{"entityType": t, "entityName": n} for t, n in entity],
                              "quotas": dict(sorted(q.items()))} for entity, q in sorted(self.client_quotas.items(),
                                                                                          key=lambda e: str(e[0]))],
            "scramCredentials": [{"user": u, "mechanism": m, **v} for (m, u), v in sorted(self.scram.items())],
            "delegationTokens": [self.delegation_tokens[t] for t in sorted(self.delegation_tokens)],
        }


@dataclass
class MetadataReplay:
    image: ClusterImage
    offset: int | None  # the offset the image is valid at (None: nothing was read)
    snapshot: str | None
    snapshot_end_offset: int | None
    log_records: int
    snapshot_records: int
    skipped: SkipList
    notes: list[str]

    def to_json(self) -> dict:
        # a file read is a path ("snapshotPath"), as in every JSON of kdump
        return {"validAtOffset": self.offset, "snapshotPath": self.snapshot,
                "snapshotEndOffset": self.snapshot_end_offset,
                "snapshotRecords": self.snapshot_records, "logRecords": self.log_records, **self.image.to_json(),
                "notes": self.notes, **self.skipped.to_json()}


class _Replayer:
    def __init__(self):
        self.image = ClusterImage()
        self.skipped = SkipList()
        self.notes: list[str] = []
        self.txn: tuple[int, ClusterImage] | None = None  # (offset of BeginTransactionRecord, image before it)
        self.offset: int | None = None
        self.handlers = {name: getattr(self, "_" + name) for name in (
            "RegisterBrokerRecord", "UnregisterBrokerRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
            "BrokerRegistrationChangeRecord", "RegisterControllerRecord", "TopicRecord", "PartitionRecord",
            "PartitionChangeRecord", "RemoveTopicRecord", "ConfigRecord", "FeatureLevelRecord",
            "ZkMigrationStateRecord", "AccessControlEntryRecord", "RemoveAccessControlEntryRecord",
            "ProducerIdsRecord", "ClientQuotaRecord", "UserScramCredentialRecord",
            "RemoveUserScramCredentialRecord", "DelegationTokenRecord", "RemoveDelegationTokenRecord",
            "BeginTransactionRecord", "EndTransactionRecord", "AbortTransactionRecord", "NoOpRecord",
            "ClearElrRecord", "UnregisterControllerRecord")}

    def apply(self, rec: Record) -> None:
        self.offset = rec.offset
        if rec.control:
            return
        try:
            api_key, _version, obj = read_metadata_record(METADATA, rec.value)
            name = tables.record_types(METADATA)[api_key][0]
            self.handlers[name](obj, rec.offset)
        except RecordError as e:
            self.skipped.append(Skipped(rec.file, rec.offset, str(e), position=rec.position))
        except NotApplied as e:  # a record that decodes, which Kafka's replay refuses
            self.skipped.append(Skipped(rec.file, rec.offset, str(e), "record-not-applied", rec.position))

    def finish(self) -> None:
        if self.txn is not None:
            begin, before = self.txn
            self.image, self.txn = before, None
            self.offset = begin - 1
            self.notes.append(f"the metadata transaction begun at offset {begin} has not ended: its records are "
                              "not in the image")

    # --- brokers and controllers (ClusterDelta) ------------------------------------------------------
    def _RegisterBrokerRecord(self, r, _):
        self.image.brokers[r["brokerId"]] = {
            "id": r["brokerId"], "epoch": r["brokerEpoch"], "incarnationId": uuid_text(r["incarnationId"]),
            "listeners": [dict(e) for e in r["endPoints"]], "rack": r["rack"], "fenced": r["fenced"],
            "inControlledShutdown": r.get("inControlledShutdown", False),
            "isMigratingZkBroker": r.get("isMigratingZkBroker", False),
            "supportedFeatures": {f["name"]: [f["minSupportedVersion"], f["maxSupportedVersion"]]
                                  for f in r["features"]},
            "logDirs": _uuids(r.get("logDirs", [])), "cordonedLogDirs": _uuids(r.get("cordonedLogDirs"))}

    def _UnregisterBrokerRecord(self, r, _):
        self.image.brokers.pop(r["brokerId"], None)

    def _broker(self, broker_id: int, epoch: int, action: str) -> dict:
        broker = self.image.brokers.get(broker_id)
        if broker is None:
            raise NotApplied(f"Tried to {action} broker {broker_id}, but that broker was not registered.")
        if broker["epoch"] != epoch:
            raise NotApplied(f"Tried to {action} broker {broker_id}, but the given epoch, {epoch}, did not match "
                             f"the current broker epoch, {broker['epoch']}")
        return broker

    def _FenceBrokerRecord(self, r, _):
        self._broker(r["id"], r["epoch"], "fence")["fenced"] = True

    def _UnfenceBrokerRecord(self, r, _):
        self._broker(r["id"], r["epoch"], "unfence")["fenced"] = False

    def _BrokerRegistrationChangeRecord(self, r, _):
        broker = self._broker(r["brokerId"], r["brokerEpoch"], "change")
        if r["fenced"] not in FENCING_CHANGE:
            raise NotApplied(f"Unable to replay BrokerRegistrationChangeRecord: unknown value for fenced field: "
                             f"{r['fenced']}")
        shutdown = r.get("inControlledShutdown", 0)
        if shutdown not in CONTROLLED_SHUTDOWN_CHANGE:
            raise NotApplied("Unable to replay BrokerRegistrationChangeRecord: unknown value for "
                             f"inControlledShutdown field: {shutdown}")
        if FENCING_CHANGE[r["fenced"]] is not None:
            broker["fenced"] = FENCING_CHANGE[r["fenced"]]
        if CONTROLLED_SHUTDOWN_CHANGE[shutdown] is not None:
            broker["inControlledShutdown"] = True
        if r.get("logDirs"):
            broker["logDirs"] = _uuids(r["logDirs"])
        if r.get("cordonedLogDirs") is not None:  # an empty list uncordons every directory
            broker["cordonedLogDirs"] = _uuids(r["cordonedLogDirs"])

    def _UnregisterControllerRecord(self, r, _):
        self.image.controllers.pop(r["controllerId"], None)

    def _RegisterControllerRecord(self, r, _):
        self.image.controllers[r["controllerId"]] = {
            "id": r["controllerId"], "incarnationId": uuid_text(r["incarnationId"]),
            "zkMigrationReady": r["zkMigrationReady"], "listeners": [dict(e) for e in r["endPoints"]],
            "supportedFeatures": {f["name"]: [f["minSupportedVersion"], f["maxSupportedVersion"]]
                                  for f in r["features"]}}

    # --- topics and partitions (TopicsDelta, TopicDelta, PartitionRegistration) -------------------------
    def _TopicRecord(self, r, _):
        tid = uuid_text(r["topicId"])
        self.image.topics[tid] = {"name": r["name"], "topicId": tid, "partitions": {}}

    def _topic(self, topic_id) -> dict:
        topic = self.image.topics.get(uuid_text(topic_id))
        if topic is None:
            raise NotApplied(f"Unable to find topic with id {uuid_text(topic_id)}")
        return topic

    def _PartitionRecord(self, r, _):
        topic = self._topic(r["topicId"])
        replicas = list(r["replicas"])
        directories = _uuids(r.get("directories") or [])
        if directories and len(directories) != len(replicas):
            raise NotApplied(f"The lengths for replicas and directories do not match: {r}")
        topic["partitions"][r["partitionId"]] = {
            "partition": r["partitionId"], "leader": r["leader"], "leaderEpoch": r["leaderEpoch"],
            "partitionEpoch": r["partitionEpoch"], "isr": list(r["isr"]), "replicas": replicas,
            "removingReplicas": list(r["removingReplicas"]), "addingReplicas": list(r["addingReplicas"]),
            "eligibleLeaderReplicas": list(r.get("eligibleLeaderReplicas") or []),
            "lastKnownElr": list(r.get("lastKnownElr") or []),
            "leaderRecoveryState": _recovery_state(r["leaderRecoveryState"]), "directories": directories}

    def _PartitionChangeRecord(self, r, _):
        topic = self._topic(r["topicId"])
        old = topic["partitions"].get(r["partitionId"])
        if old is None:
            raise NotApplied(f"Unable to find partition {uuid_text(r['topicId'])}:{r['partitionId']}")
        new = dict(old)
        for k in ("isr", "replicas", "removingReplicas", "addingReplicas", "eligibleLeaderReplicas", "lastKnownElr"):
            if r.get(k) is not None:  # null = no change
                new[k] = list(r[k])
        if r.get("directories"):
            new["directories"] = _uuids(r["directories"])
        if r["leader"] != NO_LEADER_CHANGE:
            new["leader"] = r["leader"]
            new["leaderEpoch"] = old["leaderEpoch"] + 1
        if r["leaderRecoveryState"] != NO_RECOVERY_STATE_CHANGE:
            new["leaderRecoveryState"] = _recovery_state(r["leaderRecoveryState"])
        new["partitionEpoch"] = old["partitionEpoch"] + 1
        topic["partitions"][r["partitionId"]] = new

    def _ClearElrRecord(self, r, _):
        if r["topicName"]:
            topics = [t for t in self.image.topics.values() if t["name"] == r["topicName"]]
            if not topics:
                raise NotApplied(f"Unable to clear elr for topic with name {r['topicName']}: no such topic found.")
        else:
            topics = list(self.image.topics.values())
        for topic in topics:
            for pid, old in topic["partitions"].items():
                if old["eligibleLeaderReplicas"] or old["lastKnownElr"]:
                    topic["partitions"][pid] = {**old, "eligibleLeaderReplicas": [], "lastKnownElr": [],
                                                "partitionEpoch": old["partitionEpoch"] + 1}

    def _RemoveTopicRecord(self, r, _):
        topic = self.image.topics.pop(uuid_text(r["topicId"]), None)
        if topic is None:
            raise NotApplied(f"Unable to delete topic with id {uuid_text(r['topicId'])}: no such topic found.")
        self.image.configs.pop(("TOPIC", topic["name"]), None)

    # --- configs, features ---------------------------------------------------------------------------
    def _ConfigRecord(self, r, _):
        resource = (CONFIG_RESOURCE_TYPES.get(r["resourceType"], "UNKNOWN"), r["resourceName"])
        _set_key(self.image.configs, resource, r["name"], r["value"])

    def _FeatureLevelRecord(self, r, _):
        if r["name"] == METADATA_VERSION:
            self.image.metadata_version = r["featureLevel"]
        elif r["featureLevel"] == 0:
            self.image.features.pop(r["name"], None)
        else:
            self.image.features[r["name"]] = r["featureLevel"]

    def _ZkMigrationStateRecord(self, r, _):
        state = r["zkMigrationState"]
        if state not in ZK_MIGRATION_STATES:
            raise NotApplied(f"Value {state} is not a valid Zk migration state")
        self.image.zk_migration_state = ZK_MIGRATION_STATES[state]

    # --- ACLs, producer ids, quotas, SCRAM, delegation tokens --------------------------------------------
    def _AccessControlEntryRecord(self, r, _):
        aid = uuid_text(r["id"])
        self.image.acls[aid] = {
            "id": aid, "resourceType": _name(RESOURCE_TYPES, r["resourceType"]), "resourceName": r["resourceName"],
            "patternType": _name(PATTERN_TYPES, r["patternType"]), "principal": r["principal"], "host": r["host"],
            "operation": _name(OPERATIONS, r["operation"]),
            "permissionType": _name(PERMISSION_TYPES, r["permissionType"])}

    def _RemoveAccessControlEntryRecord(self, r, _):
        if self.image.acls.pop(uuid_text(r["id"]), None) is None:
            raise NotApplied(f"Failed to find existing ACL with ID {uuid_text(r['id'])} in either image or changes")

    def _ProducerIdsRecord(self, r, _):
        self.image.next_producer_id = r["nextProducerId"]

    def _ClientQuotaRecord(self, r, _):
        entity = tuple(sorted((e["entityType"], e["entityName"]) for e in r["entity"]))
        _set_key(self.image.client_quotas, entity, r["key"], None if r["remove"] else r["value"])

    def _UserScramCredentialRecord(self, r, _):
        # the salt and keys are secrets: the image keeps them, kdump shows only that they exist
        self.image.scram[SCRAM_MECHANISMS.get(r["mechanism"], "UNKNOWN"), r["name"]] = {"iterations": r["iterations"]}

    def _RemoveUserScramCredentialRecord(self, r, _):
        self.image.scram.pop((SCRAM_MECHANISMS.get(r["mechanism"], "UNKNOWN"), r["name"]), None)

    def _DelegationTokenRecord(self, r, _):
        self.image.delegation_tokens[r["tokenId"]] = {
            "tokenId": r["tokenId"], "owner": r["owner"], "requester": r["requester"], "renewers": list(r["renewers"]),
            "issueTimestamp": r["issueTimestamp"], "maxTimestamp": r["maxTimestamp"],
            "expirationTimestamp": r["expirationTimestamp"]}

    def _RemoveDelegationTokenRecord(self, r, _):
        self.image.delegation_tokens.pop(r["tokenId"], None)

    # --- metadata transactions (MetadataBatchLoader) ----------------------------------------------------
    def _BeginTransactionRecord(self, _r, offset):
        if self.txn is not None:
            raise NotApplied("Encountered BeginTransactionRecord while already in a transaction")
        self.txn = (offset, copy.deepcopy(self.image))

    def _EndTransactionRecord(self, _r, _):
        if self.txn is None:
            raise NotApplied("Encountered EndTransactionRecord without having seen a BeginTransactionRecord")
        self.txn = None

    def _AbortTransactionRecord(self, _r, _):
        if self.txn is None:
            raise NotApplied("Encountered AbortTransactionRecord without having seen a BeginTransactionRecord")
        self.image, self.txn = self.txn[1], None

    def _NoOpRecord(self, _r, _):
        pass


def _set_key(table: dict, owner, key: str, value) -> None:
    """Set ``key`` of ``owner``'s entries (a config resource, a quota entity), or delete it when ``value`` is
    None; an owner left without entries is dropped, as Kafka's images drop empty ones."""
    entries = table.setdefault(owner, {})
    if value is None:
        entries.pop(key, None)
        if not entries:
            del table[owner]
    else:
        entries[key] = value


def _recovery_state(value: int) -> str:
    if value not in LEADER_RECOVERY_STATES:
        raise NotApplied(f"Value {value} is not a valid leader recovery state")
    return LEADER_RECOVERY_STATES[value]


def _snapshot_order(path: str) -> tuple:
    found = kraft_snapshot_id(path)
    return (0, 0, path) if found is None else (found[0], found[1], path)


def replay_metadata(paths, progress=None) -> MetadataReplay:
    """Replay the newest snapshot and the log after it, from the ``__cluster_metadata`` partition (directory,
    log directory or files) that ``paths`` name; ``progress(bytes)`` as each batch is read."""
    rp = _Replayer()
    snapshot = end = None
    snapshot_records = log_records = 0
    for src in sources(paths, TOPIC):
        if src.snapshots:
            snapshot = max(src.snapshots, key=_snapshot_order)
            found = kraft_snapshot_id(snapshot)
            end = found[0] if found is not None else 0  # bootstrap.checkpoint: Kafka's snapshot id (0, 0)
            for rec in read_records(snapshot, rp.skipped, max_field_bytes=MAX_METADATA_FIELD_BYTES,
                                    progress=progress):
                snapshot_records += not rec.control
                rp.apply(rec)
            rp.finish()
            rp.offset = end - 1
        for path in src.logs:
            for rec in read_records(path, rp.skipped, max_field_bytes=MAX_METADATA_FIELD_BYTES,
                                    progress=progress):
                if end is not None and rec.offset < end:
                    continue  # in the snapshot already
                log_records += not rec.control
                rp.apply(rec)
    rp.finish()
    return MetadataReplay(rp.image, rp.offset, snapshot, end, log_records, snapshot_records, rp.skipped, rp.notes)
