"""The registry's storage topic (``_schemas`` by default) replayed into a :class:`SchemaStore`.

Schema Registry keeps its whole state in one single-partition compacted topic, and every registry node
rebuilds its state by reading it from the start; kdump does the same, offline. Keys and values are JSON.
A key's ``keytype`` says what the record is:

* ``SCHEMA`` (key: ``subject``, ``version``): the value holds ``subject``, ``version``, ``id``, ``schema``
  (the text), ``schemaType`` (absent for Avro; ``PROTOBUF``, ``JSON``), ``references`` (``name``,
  ``subject``, ``version``) and ``deleted`` (a soft delete: the version is hidden from the subject but its id
  still serves readers). A null value is a hard delete: the version is gone.
* ``DELETE_SUBJECT`` (value: ``subject``, ``version``): every version up to ``version`` soft-deleted.
* ``CLEAR_SUBJECT``, ``CONFIG``, ``MODE``, ``NOOP``, ``CONTEXT`` and any later key type: nothing a reader of
  records needs (compatibility settings, modes, the registry's own bookkeeping); passed over.

Later records win, as in the registry. A record whose key or value is not the JSON the registry writes is
counted in :attr:`Replay.skipped` and passed over, as the registry's own reader logs and skips it.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kdump.decode.schema_registry.store import AVRO, Reference, SchemaStore, SubjectVersion
from kdump.format.limits import DEFAULT_MAX_DECOMPRESSED_BYTES
from kdump.read.logdir import Partition
from kdump.read.segment import SegmentReader

# The registry's storage topic: Confluent's default ``kafkastore.topic``, or the name a registry configured otherwise
# is given in KDUMP_SCHEMAS_TOPIC (read once, at start-up: every command's search beside the data uses it).
DEFAULT_TOPIC = os.environ.get("KDUMP_SCHEMAS_TOPIC") or "_schemas"


@dataclass
class Replay:
    """What a replay found besides the schemas: records passed over, by reason."""

    store: SchemaStore
    records: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def replay(records: Iterable[tuple[bytes | None, bytes | None]], source: str) -> Replay:
    """Replay (key, value) pairs of the storage topic, in offset order."""
    result = Replay(SchemaStore(source))
    store = result.store
    for key_bytes, value_bytes in records:
        result.records += 1
        key = _json_object(key_bytes)
        if key is None:
            result.skip("key not a JSON object")
            continue
        keytype = key.get("keytype")
        if keytype == "SCHEMA":
            _schema_record(result, key, value_bytes)
        elif keytype == "DELETE_SUBJECT":
            value = _json_object(value_bytes)
            if value is None or not isinstance(value.get("version"), int):
                result.skip("DELETE_SUBJECT value not understood")
                continue
            subject = value.get("subject", key.get("subject"))
            for (s, v), entry in store.versions.items():
                if s == subject and v <= value["version"]:
                    entry.deleted = True
    return result


def _schema_record(result: Replay, key: dict, value_bytes: bytes | None) -> None:
    store = result.store
    subject, version = key.get("subject"), key.get("version")
    if not isinstance(subject, str) or not isinstance(version, int):
        result.skip("SCHEMA key without subject and version")
        return
    if value_bytes is None:
        store.drop_version(subject, version)
        return
    value = _json_object(value_bytes)
    if value is None or not isinstance(value.get("id"), int) or not isinstance(value.get("schema"), str):
        result.skip("SCHEMA value not understood")
        return
    try:
        references = tuple(Reference(r["name"], r["subject"], int(r["version"]))
                           for r in value.get("references") or ())
    except (KeyError, TypeError, ValueError):
        result.skip("SCHEMA value with references not understood")
        return
    store.put_version(SubjectVersion(subject, version, value["id"], value.get("schemaType") or AVRO,
                                     value["schema"], references, bool(value.get("deleted", False))))


def _json_object(data: bytes | None) -> dict | None:
    if data is None:
        return None
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


def partition_records(directory: str) -> Iterator[tuple[bytes | None, bytes | None]]:
    """The (key, value) pairs of a partition directory's segments, in offset order."""
    for segment in Partition(directory).segments:
        with SegmentReader(segment.log) as reader:
            for batch in reader:
                if batch.is_control:
                    continue
                for record in batch.records(DEFAULT_MAX_DECOMPRESSED_BYTES):
                    yield record.key, record.value


def replay_partition(directory: str) -> Replay:
    """The storage topic's partition directory replayed."""
    return replay(partition_records(directory), os.fspath(directory))
