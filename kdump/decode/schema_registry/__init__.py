"""Confluent Schema Registry values, decoded offline (docs/schema-registry.md).

* :mod:`~kdump.decode.schema_registry.store`: schemas by id and by subject version;
* :mod:`~kdump.decode.schema_registry.storage`: the registry's storage topic (``_schemas``) replayed into a store;
* :mod:`~kdump.decode.schema_registry.sources`: where schemas come from (that topic beside the data, a named one,
  schema files, a saved ``GET /schemas`` answer);
* :mod:`~kdump.decode.schema_registry.avro`, :mod:`~kdump.decode.schema_registry.protobuf`,
  :mod:`~kdump.decode.schema_registry.json_schema`: one reader per schema type;
* :mod:`~kdump.decode.schema_registry.decoder`: the ``schema-registry`` key/value decoder over them.

The wire format itself (magic byte, schema id, Protobuf message indexes) is in
:mod:`kdump.format.schema_registry`.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

from kdump.decode.errors import DecoderLoadError
from kdump.decode.schema_registry.decoder import NAME, SchemaRegistryDecoder
from kdump.decode.schema_registry.sources import NoSchemas, find_storage, first_payloads, load_schemas
from kdump.decode.schema_registry.storage import DEFAULT_TOPIC
from kdump.decode.schema_registry.store import AVRO, PROTOBUF, SchemaStore
from kdump.errors import require_extra

__all__ = ["NAME", "SchemaRegistryDecoder", "SchemaStore", "auto_decoders", "first_payloads", "load_schemas",
           "registry_decoder"]

# The optional modules the readers of a schema type import (the schema-registry extra)
_TYPE_MODULES = {AVRO: ("fastavro",), PROTOBUF: ("google.protobuf", "grpc_tools")}

# One store (and one decoder, so that keys and values share compiled readers) per source in a process.
_DECODERS: dict[tuple[str, float], SchemaRegistryDecoder] = {}


def _decoder_for(path: str, topic: str) -> SchemaRegistryDecoder:
    path = os.path.abspath(path)
    try:
        stamp = os.stat(path).st_mtime
    except OSError:
        stamp = 0.0
    key = (f"{topic}\0{path}", stamp)
    decoder = _DECODERS.get(key)
    if decoder is None:
        decoder = _DECODERS[key] = SchemaRegistryDecoder(load_schemas(path, topic))
    return decoder


def registry_decoder(schemas: str | None = None, data_paths: Sequence[str] = (),
                     topic: str = DEFAULT_TOPIC) -> SchemaRegistryDecoder:
    """The decoder over ``schemas`` (a path, see :func:`load_schemas`) or, without one, over the storage
    topic's partition found beside ``data_paths``. DecoderLoadError (a usage error) when there is none."""
    if schemas is None:
        schemas = find_storage(data_paths, topic)
        if schemas is None:
            raise DecoderLoadError(f"invalid decoder {NAME!r}: no {topic} partition beside "
                                   f"{', '.join(data_paths) or 'the data'}", code="schemas-not-found")
    try:
        decoder = _decoder_for(schemas, topic)
    except (NoSchemas, OSError) as e:
        raise DecoderLoadError(f"invalid decoder {NAME!r}: {e}") from None
    # said once, before anything is decoded (kdump.errors.MissingExtra, exit 2), not as a failure of every value
    for schema_type in sorted({s.schema_type for s in decoder.store.by_id.values()}):
        require_extra(f"decoding {schema_type} values (the {NAME} decoder)", *_TYPE_MODULES.get(schema_type, ()))
    return decoder


def auto_decoders(data_paths: Sequence[str], schemas: str | None = None, topic: str = DEFAULT_TOPIC
                  ) -> tuple[SchemaRegistryDecoder | None, SchemaRegistryDecoder | None]:
    """What ``--decoder auto`` picks for keys and for values: the registry decoder when schemas are there
    (named, or a storage partition beside the data) and the first non-null key (value) of the data (see
    :func:`~kdump.decode.schema_registry.sources.first_payloads`) is framed with an id they hold; else None. The data
    is looked at only when there are schemas."""
    try:
        decoder = registry_decoder(schemas, data_paths, topic)
    except DecoderLoadError:
        return None, None

    def framed_with_known_id(first: bytes | None) -> SchemaRegistryDecoder | None:
        sid = None if first is None else decoder.schema_id(first)
        return decoder if sid is not None and decoder.store.schema(sid) is not None else None
    first_key, first_value = first_payloads(data_paths, topic)
    return framed_with_known_id(first_key), framed_with_known_id(first_value)
