"""KRaft ``__cluster_metadata`` records (also in ``.checkpoint`` snapshots) and ``__remote_log_metadata``.

A value is ``unsigned varint frameVersion (1)``, ``unsigned varint apiKey``, ``unsigned varint version``,
then the message (Kafka's ``AbstractApiMessageSerde``); bytes after the message are an error. The
cluster-metadata decoder prints ``{"type":"<RECORD_TYPE>","version":<v>,"data":{...}}`` and no key;
failures ``Error at <offset>, skipping. <reason>`` (no word "offset", as Kafka prints it). Where Kafka
says only ``Failed to deserialize record with type <k>``, kdump adds why.
"""
from __future__ import annotations

from kdump.decode.internal import tables
from kdump.decode.internal.base import Decoded, RecordError, leftovers, reason
from kdump.decode.jackson import jackson, to_tree
from kdump.format.schema import Reader, SchemaError, read_struct_from

METADATA = "metadata"
REMOTE_LOG = "remote_log_metadata"


def _short(r: Reader, entity: str) -> int:
    try:
        v = r.uvarint(entity)
    except SchemaError:
        raise RecordError(f"Error while reading {entity}") from None
    if v > 0x7FFF or v < 0:
        raise RecordError(f"Value for {entity} was too large.")
    return v


def read_metadata_record(group: str, value) -> tuple[int, int, dict]:
    """(apiKey, version, message) of one framed metadata record, with Kafka's error texts."""
    r = Reader(b"" if value is None else value)
    frame = _short(r, "frame version")
    if frame == 0:
        raise RecordError("Could not deserialize metadata record with frame version 0. Note that upgrades from the "
                          "preview release of KRaft in 2.8 to newer versions are not supported.")
    if frame != 1:
        raise RecordError(f"Could not deserialize metadata record due to unknown frame version {frame}"
                          "(only frame version 1 is supported)")
    api_key = _short(r, "type")
    version = _short(r, "version")
    types = tables.record_types(group)
    if api_key not in types:
        raise RecordError(f"org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}")
    name = types[api_key][0]
    try:
        obj = read_struct_from(r, tables.schema(group, name), version)
    except SchemaError as e:
        raise RecordError(f"Failed to deserialize record with type {api_key} ({name} version {version}: "
                          f"{reason(e)})") from None
    if r.remaining() > 0:
        raise RecordError(f"Found {r.remaining()} byte(s) of garbage after {api_key}")
    return api_key, version, obj


class ClusterMetadataDecoder:
    def decode(self, offset: int, key, value) -> Decoded:
        try:
            api_key, version, obj = read_metadata_record(METADATA, value)
        except RecordError as e:
            return Decoded(None, f"Error at {offset}, skipping. {e}", error=str(e))
        name, type_name = tables.record_types(METADATA)[api_key]
        schema = tables.schema(METADATA, name)
        tree = {"type": type_name, "version": version, "data": to_tree(obj, schema, version)}
        said = leftovers(tree, obj, name)
        lo, hi = schema.versions
        if not lo <= version <= hi:
            tree["unknownVersion"] = True
            said.append(f"{name} version {version} is not one of the definitions' ({lo}-{hi})")
        return Decoded(None, jackson(tree), None, tree, leftover="; ".join(said) or None)


class RemoteLogMetadataDecoder:
    """Printed with the Java ``toString()`` of the object Kafka's ``RemoteLogMetadataSerde`` builds."""

    def decode(self, offset: int, key, value) -> Decoded:
        try:
            api_key, version, obj = read_metadata_record(REMOTE_LOG, value)
        except RecordError as e:
            msg = f"Could not deserialize metadata record: {e}"
            return Decoded(None, f"Error at offset {offset}, skipping. {msg}", error=msg)
        from kdump.decode.internal.remote_log import to_string
        name = tables.record_types(REMOTE_LOG)[api_key][0]
        tree = {"type": name, "version": version, "data": to_tree(obj, tables.schema(REMOTE_LOG, name), version)}
        return Decoded(None, to_string(name, obj), None, tree)
