"""The ``schema-registry`` key/value decoder: a framed payload's schema found by its id, its data read with
the reader of the schema's type, printed as compact JSON (text) or given as JSON data (JSON Lines, Spark).

A payload that cannot be decoded (not framed, unknown id, a schema that does not compile, data that does not
match) raises :class:`~kdump.decode.errors.DecoderError` with the reason; a reader that failed to build is
remembered, so a bad schema costs one attempt, not one per record.
"""
from __future__ import annotations

from typing import Any

from kdump import _backend
from kdump.decode.errors import DecoderError
from kdump.decode.schema_registry.store import AVRO, JSON, PROTOBUF, SchemaStore
from kdump.format.schema_registry import HEADER_SIZE, NotFramed, is_framed, schema_id

NAME = "schema-registry"


def _reader_class(schema_type: str):
    if schema_type == AVRO:
        from kdump.decode.schema_registry.avro import AvroReader
        return AvroReader
    if schema_type == PROTOBUF:
        from kdump.decode.schema_registry.protobuf import ProtobufReader
        return ProtobufReader
    if schema_type == JSON:
        from kdump.decode.schema_registry.json_schema import JsonSchemaReader
        return JsonSchemaReader
    raise DecoderError(f"schema type {schema_type!r} is not one kdump reads (AVRO, PROTOBUF, JSON)")


class SchemaRegistryDecoder:
    """Decodes Schema Registry framed payloads with the schemas of ``store``."""

    name = NAME

    def __init__(self, store: SchemaStore):
        self.store = store
        self._readers: dict[int, Any] = {}  # schema id -> reader, or the DecoderError building it raised
        self._programs: dict[int, Any] = {}  # schema id -> the compiled program of its reader, where it has one

    def reader(self, sid: int):
        """The reader of schema ``sid`` and its type; DecoderError if it is unknown or does not build."""
        reader = self._readers.get(sid)
        if reader is None:
            schema = self.store.schema(sid)
            if schema is None:
                reader = DecoderError(f"schema id {sid} is not in {self.store.source}")
            else:
                try:
                    reader = _reader_class(schema.schema_type)(schema, self.store)
                except DecoderError as e:
                    reader = e
                except ImportError as e:
                    reader = DecoderError(f"decoding {schema.schema_type} needs {e.name or e} "
                                          "(pip install 'kdump[schema-registry]')")
                except Exception as e:  # the schema library refused the schema
                    reader = DecoderError(f"schema {sid} does not parse: {type(e).__name__}: {e}")
            self._readers[sid] = reader
            program = getattr(reader, "program", None)
            if program is not None:
                self._programs[sid] = program
        if isinstance(reader, DecoderError):
            raise reader
        return reader

    def decode(self, data) -> str:
        """Compact JSON text of the value (what the text dump prints)."""
        return self._decode(data, text=True)[0]

    def texts(self, buf, positions: list[int], lengths: list[int]) -> list[str | DecoderError | None]:
        """The text of each payload of a column of records (``buf[positions[i]:positions[i] + lengths[i]]``, a
        length of -1 for a null: None), or the DecoderError saying why it does not decode: what the text dump
        prints, a batch's keys or values at once (schemas with a compiled program are read without a Python
        object per value)."""
        return framed_texts(buf, positions, lengths, self._programs, self._text_or_error)

    def _text_or_error(self, data) -> str | DecoderError:
        try:
            return self._decode(data, text=True)[0]
        except DecoderError as e:
            return e

    def decode_with_id(self, data) -> tuple[str, int]:
        """Compact JSON text of the value and its schema id (what Spark's columns hold)."""
        return self._decode(data, text=True)

    def decode_json(self, data) -> tuple[Any, int]:
        """The value as JSON data and its schema id (what JSON Lines and Spark carry)."""
        return self._decode(data, text=False)

    def _decode(self, data, text: bool) -> tuple[Any, int]:
        try:
            sid = schema_id(data)
        except NotFramed as e:
            raise DecoderError(f"not Schema Registry framed: {e}") from None
        reader = self._readers.get(sid)
        if reader is None or isinstance(reader, DecoderError):
            reader = self.reader(sid)
        # each reader takes the framed bytes and where its part starts (Protobuf's message indexes are its own)
        return (reader.text(data, HEADER_SIZE) if text else reader.json(data, HEADER_SIZE)), sid

    def schema_id(self, data) -> int | None:
        """The id a payload names, None if it is not framed (for stats)."""
        if data is None or not is_framed(data):
            return None
        return schema_id(data)

    def __repr__(self) -> str:
        return f"SchemaRegistryDecoder({self.store!r})"


def framed_texts_py(buf, positions: list[int], lengths: list[int], programs: dict, fallback) -> list:
    """Each payload's ``fallback(payload)`` (None for a null): on the pure path every value is read by its
    reader. The compiled twin (kdump/format/_avro.pyx) gives the same list, reading the values of the schemas in
    ``programs`` (schema id -> compiled program) itself."""
    return [None if n < 0 else fallback(bytes(buf[p:p + n])) for p, n in zip(positions, lengths, strict=True)]


framed_texts = _backend.pick("framed_texts", framed_texts_py)
