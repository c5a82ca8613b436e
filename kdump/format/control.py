"""Control records: the records of control batches (attribute bit 5), spec §3.6.

The key of every control record is ``int16 version, int16 type``. Transaction markers (ABORT/COMMIT)
carry ``int16 version, int32 coordinatorEpoch``; KRaft control records carry a flexible generated
message (schemas below as data, read by :mod:`kdump.format.schema`). The decoded objects every
renderer receives are made in :mod:`kdump.decode.control`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from kdump.errors import FormatError
from kdump.format import layout as L
from kdump.format.names import KRAFT_CONTROL_LABELS
from kdump.format.types import ControlRecordType

if TYPE_CHECKING:
    from kdump.format.schema import Struct

_KEY = L.CONTROL_RECORD_KEY
_END_TXN = L.END_TXN_MARKER
CURRENT_CONTROL_KEY_VERSION = 0


def parse_control_key(key: bytes | None) -> tuple[ControlRecordType, int]:
    """(type, raw type id) of a control record key, with Kafka's ``ControlRecordType.parse`` checks."""
    n = 0 if key is None else len(key)
    if key is None or n < 4:
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
    if value is None or n < 6:
        raise FormatError("end-txn-marker-invalid",
                          f"invalid value size found for end transaction marker: must have at least 6 bytes, "
                          f"but found only {n}")
    version, epoch = _END_TXN.unpack_from(value, 0)
    if version < 0:
        raise FormatError("end-txn-marker-invalid",
                          f"invalid version found for end transaction marker: {version}. May indicate data corruption")
    return EndTxnMarker(ctype, version, epoch)


# KRaft control record schemas (clients/src/main/resources/common/message/*.json, as generated tables), read
# at version 0 as Kafka's ControlRecordUtils does. Every one starts with its own int16 "Version" field. They
# are compiled on first use: most runs (every data topic) never meet one, and start-up should not pay for it.
_KRAFT_MESSAGES = {
    ControlRecordType.LEADER_CHANGE: "LeaderChangeMessage",
    ControlRecordType.SNAPSHOT_HEADER: "SnapshotHeaderRecord",
    ControlRecordType.SNAPSHOT_FOOTER: "SnapshotFooterRecord",
    ControlRecordType.KRAFT_VERSION: "KRaftVersionRecord",
    ControlRecordType.KRAFT_VOTERS: "VotersRecord",
}
_BY_NAME = {ctype.name: ctype for ctype in _KRAFT_MESSAGES}


@cache
def kraft_schema(ctype: ControlRecordType) -> tuple[str, Struct]:
    """(Kafka's label, compiled schema) of a KRaft control record type; KeyError for other types."""
    from kdump.format.schema import compile_message
    from kdump.format.schemas import raft_control
    message = _KRAFT_MESSAGES[ctype]
    return KRAFT_CONTROL_LABELS[ctype], compile_message(raft_control.MESSAGES[message])


def __getattr__(name: str):
    """``LEADER_CHANGE``, ``SNAPSHOT_HEADER``, ...: the compiled schemas, by the names the writer uses."""
    if name in _BY_NAME:
        return kraft_schema(_BY_NAME[name])[1]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
