"""Control records (spec §3.6) decoded into plain objects, for every renderer alike.

:func:`decode_control` turns a control record's key and value into one of:

* :class:`TxnMarker` (ABORT/COMMIT, Kafka's ``EndTransactionMarker``);
* :class:`KRaftControl` (LEADER_CHANGE, SNAPSHOT_HEADER, SNAPSHOT_FOOTER, KRAFT_VERSION, KRAFT_VOTERS:
  the generated message read with its schema from :mod:`kdump.format.control`);
* :class:`UnknownControl` (a type id this kdump does not know);
* :class:`InvalidControl` (key or value that Kafka's reader refuses; the error says why).

Every one has ``to_json()`` (a JSON-able dict: ``{"type": "COMMIT", "version": 0, "coordinatorEpoch": 5}``,
or ``{"type": "LEADER_CHANGE", ...}`` with the fields of Kafka's JSON for the KRaft message) and
``kafka_text()`` (what the newest DumpLogSegments prints after a control record's metadata) and ``error`` (the
FormatError of an :class:`InvalidControl`, None for the others). ``json_field`` (``"control"``) is
the name under which JSON Lines carries the object in a record.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from kdump.errors import FormatError
from kdump.format.control import kraft_schema, parse_control_key, parse_end_txn_marker
from kdump.format.types import ControlRecordType

JSON_FIELD = "control"
_MARKERS = (ControlRecordType.ABORT, ControlRecordType.COMMIT)


class DecodedControl:
    """What every decoded control record has beside its own fields."""
    json_field = JSON_FIELD
    error: FormatError | None = None  # (an InvalidControl's says why it is invalid)


@dataclass(frozen=True)
class TxnMarker(DecodedControl):
    """An ABORT or COMMIT transaction marker."""
    type: ControlRecordType
    version: int
    coordinator_epoch: int

    def to_json(self) -> dict:
        return {"type": self.type.display_name, "version": self.version, "coordinatorEpoch": self.coordinator_epoch}

    def kafka_text(self) -> str:
        return f" endTxnMarker: {self.type.display_name} coordinatorEpoch: {self.coordinator_epoch}"


@dataclass(frozen=True)
class KRaftControl(DecodedControl):
    """A KRaft control record: ``label`` is Kafka's name of the message, ``json`` Kafka's compact JSON of it."""
    type: ControlRecordType
    type_id: int
    label: str
    json: str

    def to_json(self) -> dict:
        return {"type": self.type.display_name, **json.loads(self.json)}

    def kafka_text(self) -> str:
        if self.type is ControlRecordType.LEADER_CHANGE:
            return f" {self.label}: {self.json}"
        return f" {self.label} {self.json}"


@dataclass(frozen=True)
class UnknownControl(DecodedControl):
    """A control record of a type id this kdump does not know (a newer Kafka's); its value is left alone."""
    type = ControlRecordType.UNKNOWN
    type_id: int

    def to_json(self) -> dict:
        return {"type": self.type.display_name, "typeId": self.type_id}

    def kafka_text(self) -> str:
        return f" controlType: {self.type.display_name}({self.type_id})"


@dataclass(frozen=True)
class InvalidControl(DecodedControl):
    """A control record Kafka's reader refuses; ``type`` is None when the key itself is invalid."""
    type: ControlRecordType | None
    error: FormatError

    def to_json(self) -> dict:
        return {"type": None if self.type is None else self.type.display_name, "error": self.error.message}

    def kafka_text(self) -> str:
        return f" controlType: <invalid: {self.error.message}>"


# Kafka reads every KRaft control record at schema version 0 (ControlRecordUtils). LeaderChangeMessage
# v1 (KIP-853) adds a directory id per voter, which a v0 read cannot parse; kdump then tries v1 rather
# than failing as Kafka's tool does.
_VERSIONS_TO_TRY = {ControlRecordType.LEADER_CHANGE: (0, 1)}


def kraft_control_json(ctype: ControlRecordType, value: bytes | None) -> str:
    """The JSON Kafka prints for a KRaft control record's value."""
    # KRaft records only: not on every run's start-up
    from kdump.decode.jackson import to_json
    from kdump.format.schema import read_struct
    label, schema = kraft_schema(ctype)
    if value is None:
        raise FormatError("control-value-invalid", f"{label} control record has a null value")
    versions = _VERSIONS_TO_TRY.get(ctype, (0,))
    for version in versions:
        try:
            # with a second version to try, bytes left over mean "not this version"
            obj = read_struct(value, schema, version, exact=len(versions) > 1)
        except FormatError as e:
            error = e
            continue
        return to_json(obj, schema)
    raise FormatError("control-value-invalid", f"{label} control record value: {error.message}")


def decode_control(key: bytes | None, value: bytes | None):
    """The decoded control record (never raises: a refused one is an :class:`InvalidControl`)."""
    try:
        ctype, type_id = parse_control_key(key)
    except FormatError as e:
        return InvalidControl(None, e)
    try:
        if ctype in _MARKERS:
            marker = parse_end_txn_marker(ctype, value)
            return TxnMarker(ctype, marker.version, marker.coordinator_epoch)
        if ctype is ControlRecordType.UNKNOWN:
            return UnknownControl(type_id)
        return KRaftControl(ctype, type_id, kraft_schema(ctype)[0], kraft_control_json(ctype, value))
    except FormatError as e:
        return InvalidControl(ctype, e)
