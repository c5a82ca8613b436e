"""Control records: the records of control batches (attribute bit 5), spec §3.6.

The key of every control record is ``int16 version, int16 type``. Transaction markers (ABORT/COMMIT)
carry ``int16 version, int32 coordinatorEpoch``; KRaft control records carry a flexible generated
message (schemas below as data, read by :mod:`kdump.format.message`). The decoded objects every
renderer receives are made in :mod:`kdump.decode.control`.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from kdump.errors import FormatError
from kdump.format.message import Field, Struct
from kdump.format.types import ControlRecordType

_KEY = struct.Struct(">hh")
_END_TXN = struct.Struct(">hi")
CURRENT_CONTROL_KEY_VERSION = 0


def parse_control_key(key: bytes | None) -> tuple[ControlRecordType, int]:
    """(type, raw type id) of a control record key, with Kafka's ``ControlRecordType.parse`` checks."""
    n = 0 if key is None else len(key)
    if n < 4:
        raise FormatError("control-key-invalid",
                          f"invalid control record key: must have at least 4 bytes, but found only {n}")
    version, type_id = _KEY.unpack_from(key, 0)
    if version < 0:
        raise FormatError("control-key-invalid",
                          f"invalid version found for control record: {version}. May indicate data corruption")
    return ControlRecordType.from_id(type_id), type_id


@dataclass(frozen=True)
class EndTxnMarker:
    type: ControlRecordType  # ABORT or COMMIT
    version: int
    coordinator_epoch: int


def parse_end_txn_marker(ctype: ControlRecordType, value: bytes | None) -> EndTxnMarker:
    n = 0 if value is None else len(value)
    if n < 6:
        raise FormatError("end-txn-marker-invalid",
                          f"invalid value size found for end transaction marker: must have at least 6 bytes, "
                          f"but found only {n}")
    version, epoch = _END_TXN.unpack_from(value, 0)
    if version < 0:
        raise FormatError("end-txn-marker-invalid",
                          f"invalid version found for end transaction marker: {version}. May indicate data corruption")
    return EndTxnMarker(ctype, version, epoch)


# KRaft control record schemas (clients/src/main/resources/common/message/*.json), read at version 0
# as Kafka's ControlRecordUtils does. Every one starts with its own int16 "Version" field.
_VERSION = Field("Version", "int16")
_LEADER_CHANGE_VOTER = Struct("Voter", (Field("VoterId", "int32"), Field("VoterDirectoryId", "uuid", versions=(1, 1 << 30))),
                              flexible_from=0)
LEADER_CHANGE = Struct("LeaderChangeMessage", (
    _VERSION,
    Field("LeaderId", "int32"),
    Field("Voters", "[]struct", struct=_LEADER_CHANGE_VOTER),
    Field("GrantingVoters", "[]struct", struct=_LEADER_CHANGE_VOTER),
), flexible_from=0)
SNAPSHOT_HEADER = Struct("SnapshotHeaderRecord", (_VERSION, Field("LastContainedLogTimestamp", "int64")),
                         flexible_from=0)
SNAPSHOT_FOOTER = Struct("SnapshotFooterRecord", (_VERSION,), flexible_from=0)
KRAFT_VERSION = Struct("KRaftVersionRecord", (_VERSION, Field("KRaftVersion", "int16")), flexible_from=0)
_ENDPOINT = Struct("Endpoint", (Field("Name", "string"), Field("Host", "string"), Field("Port", "uint16")),
                   flexible_from=0)
_FEATURE = Struct("KRaftVersionFeature", (Field("MinSupportedVersion", "int16"),
                                          Field("MaxSupportedVersion", "int16")), flexible_from=0)
_VOTER = Struct("Voter", (
    Field("VoterId", "int32"),
    Field("VoterDirectoryId", "uuid"),
    Field("Endpoints", "[]struct", struct=_ENDPOINT),
    Field("KRaftVersionFeature", "struct", struct=_FEATURE),
), flexible_from=0)
KRAFT_VOTERS = Struct("VotersRecord", (_VERSION, Field("Voters", "[]struct", struct=_VOTER)), flexible_from=0)

KRAFT_SCHEMAS = {
    ControlRecordType.LEADER_CHANGE: ("LeaderChange", LEADER_CHANGE),
    ControlRecordType.SNAPSHOT_HEADER: ("SnapshotHeader", SNAPSHOT_HEADER),
    ControlRecordType.SNAPSHOT_FOOTER: ("SnapshotFooter", SNAPSHOT_FOOTER),
    ControlRecordType.KRAFT_VERSION: ("KRaftVersion", KRAFT_VERSION),
    ControlRecordType.KRAFT_VOTERS: ("KRaftVoters", KRAFT_VOTERS),
}
