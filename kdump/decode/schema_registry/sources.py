"""Where the schemas come from, all offline, in kdump's order of preference:

1. the registry's storage topic: a ``_schemas-N`` partition directory (the topic name is configurable in the
   registry, ``kafkastore.topic``; here ``topic=``), found beside the partitions being read or named;
2. a directory of schema files, one per id: ``<id>.avsc`` (Avro), ``<id>.proto`` (Protobuf), ``<id>.json``
   (JSON Schema);
3. a saved answer of the registry's ``GET /schemas`` (a JSON list of objects with ``id``, ``schema``,
   ``schemaType``, ``references``, ``subject``, ``version``).

Schema files name no subject, so references between them cannot be resolved; the storage topic and a saved
``GET /schemas`` can.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable

from kdump.decode.schema_registry.storage import DEFAULT_TOPIC, replay_partition
from kdump.decode.schema_registry.store import AVRO, JSON, PROTOBUF, Reference, SchemaStore, SubjectVersion
from kdump.format.limits import DEFAULT_MAX_DECOMPRESSED_BYTES
from kdump.read.logdir import FileKind, Partition, topic_partition
from kdump.read.segment import SegmentReader

SCHEMA_FILE_TYPES = {".avsc": AVRO, ".proto": PROTOBUF, ".json": JSON}
_SCHEMA_FILE = re.compile(r"^(\d+)(\.avsc|\.proto|\.json)$")


class NoSchemas(ValueError):
    """A path named as a schema source holds none of the three kinds."""


def load_schemas(path: str, topic: str = DEFAULT_TOPIC) -> SchemaStore:
    """The schemas at ``path``: a storage-topic partition, a log directory holding one, a directory of schema
    files or a saved ``GET /schemas`` answer. Raises :class:`NoSchemas` (or ``OSError``) when it is none."""
    path = os.fspath(path)
    if os.path.isfile(path):
        return _saved_answer(path)
    if not os.path.isdir(path):
        raise NoSchemas(f"{path}: no such file or directory")
    named = topic_partition(path)
    if (named is not None and named[0] == topic) or Partition(path).segments:
        return replay_partition(path).store
    storage = storage_partition(path, topic)
    if storage is not None:
        return replay_partition(storage).store
    store = _schema_files(path)
    if len(store):
        return store
    raise NoSchemas(f"{path}: neither a {topic} partition, a log directory holding one, schema files "
                    f"(<id>.avsc, <id>.proto, <id>.json) nor a saved GET /schemas answer")


def storage_partition(log_dir: str, topic: str = DEFAULT_TOPIC) -> str | None:
    """The storage topic's partition directory in ``log_dir``, if there is one (the topic has one partition;
    the lowest-numbered is taken should there be more)."""
    try:
        names = os.listdir(log_dir)
    except OSError:
        return None
    found = sorted((named[1], name) for name in names
                   for named in [topic_partition(name)] if named is not None and named[0] == topic
                   and os.path.isdir(os.path.join(log_dir, name)))
    return os.path.join(log_dir, found[0][1]) if found else None


def find_storage(data_paths: Iterable[str], topic: str = DEFAULT_TOPIC) -> str | None:
    """The storage topic's partition beside the paths being read: in the log directory of a partition
    directory (or of a segment's), or in a named log directory itself."""
    for path in data_paths:
        path = os.path.abspath(path)
        candidates = [path] if os.path.isdir(path) else []
        directory = path if os.path.isdir(path) else os.path.dirname(path)
        candidates += [os.path.dirname(directory), os.path.dirname(os.path.dirname(directory))]
        for candidate in candidates:
            named = topic_partition(candidate)
            if named is not None and named[0] == topic:
                return candidate
            found = storage_partition(candidate, topic)
            if found is not None:
                return found
    return None


def _schema_files(directory: str) -> SchemaStore:
    store = SchemaStore(directory)
    for name in sorted(os.listdir(directory)):
        match = _SCHEMA_FILE.match(name)
        if match is None:
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            text = f.read()
        schema_id = int(match.group(1))
        store.put_version(SubjectVersion(f"{name}", 1, schema_id, SCHEMA_FILE_TYPES[match.group(2)], text, ()))
    return store


def _saved_answer(path: str) -> SchemaStore:
    try:
        with open(path, encoding="utf-8") as f:
            answer = json.load(f)
    except ValueError as e:
        raise NoSchemas(f"{path}: not JSON ({e}); a file of schemas is a saved GET /schemas answer") from None
    if isinstance(answer, dict):  # GET /schemas/ids/{id} or one subject version
        answer = [answer]
    if not isinstance(answer, list):
        raise NoSchemas(f"{path}: not a list of schemas (a saved GET /schemas answer)")
    store = SchemaStore(path)
    for n, item in enumerate(answer):
        try:
            references = tuple(Reference(r["name"], r["subject"], int(r["version"]))
                               for r in item.get("references") or ())
            store.put_version(SubjectVersion(item.get("subject") or f"{os.path.basename(path)}#{n}",
                                             int(item.get("version") or 1), int(item["id"]),
                                             item.get("schemaType") or AVRO, item["schema"], references))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise NoSchemas(f"{path}: item {n} is not a schema (id, schema, schemaType, ...)") from None
    return store


def first_payloads(data_paths: Iterable[str], topic: str = DEFAULT_TOPIC,
                   limit: int = 1000) -> tuple[bytes | None, bytes | None]:
    """The first non-null key and the first non-null value among the first ``limit`` data records of the
    segments ``data_paths`` stand for (the storage topic's own partition passed over): what ``--decoder auto``
    looks at."""
    key = value = None
    seen = 0
    from kdump.read.scan import scan
    for entry in scan(data_paths).entries:
        if entry.refused is not None or entry.kind is not FileKind.LOG:
            continue
        named = topic_partition(os.path.dirname(os.path.abspath(entry.path)))
        if named is not None and named[0] == topic:
            continue
        try:
            with SegmentReader(entry.path) as reader:
                for batch in reader:
                    if batch.is_control:
                        continue
                    for record in batch.records(DEFAULT_MAX_DECOMPRESSED_BYTES):
                        key = key if key is not None else record.key
                        value = value if value is not None else record.value
                        seen += 1
                        if (key is not None and value is not None) or seen >= limit:
                            return key, value
        except (OSError, ValueError):
            continue  # a file that cannot be read is dumped (and its problem said) by the dump itself
    return key, value
