"""Avro values: fastavro's reader (its compiled one) over the bytes after the registry's header.

Printed as JSON with Avro's data as it is, not Avro's own JSON encoding: a union's value without its branch
name; ``bytes`` and ``fixed`` as standard base64; logical types in their readable forms (``date``:
``2024-05-01``; ``timestamp-*`` and ``local-timestamp-*``: ISO-8601 with microseconds; ``time-*``:
``12:30:00.250000``; ``decimal``: the exact decimal as a JSON string, ``"12.34"``; ``uuid``: its text).
"""
from __future__ import annotations

import base64
import datetime
import decimal
import io
import json
import uuid
from typing import Any

from kdump import _backend
from kdump.decode.errors import DecoderError
from kdump.decode.schema_registry.json_schema import compact_encoder
from kdump.decode.schema_registry.store import AVRO, RegisteredSchema, SchemaStore


class AvroReader:
    """Reads the values written with one Avro schema."""

    __slots__ = ("_schema", "_read", "program")

    def __init__(self, schema: RegisteredSchema, store: SchemaStore):
        from fastavro import parse_schema, schemaless_reader

        named: dict[str, Any] = {}
        _add_references(schema, store, named, set())
        self._schema = parse_schema(_schema_json(schema.text, schema.id), named_schemas=named)
        self._read = schemaless_reader
        # the compiled Avro-to-JSON-text program of the schema (kdump/format/_avro.pyx), None on the pure path
        # or for a schema it leaves to fastavro; it gives the same text or None (then fastavro decides)
        self.program = avro_program(self._schema, named)

    def read(self, framed, start: int) -> Any:
        """The value in ``framed`` from ``start`` (the bytes after the header) as Python data; DecoderError when
        they do not hold one value of the schema, exactly."""
        stream = io.BytesIO(framed)  # shares the bytes (no copy until written); seeking is cheaper than slicing
        stream.seek(start)
        try:
            value = self._read(stream, self._schema, None)
        except (EOFError, StopIteration, IndexError):
            raise DecoderError("Avro data ends before the value does") from None
        except (ValueError, TypeError, UnicodeDecodeError, OverflowError) as e:
            raise DecoderError(f"Avro data does not match the schema: {e}") from None
        if stream.tell() != len(framed):
            raise DecoderError(f"Avro value ends at byte {stream.tell() - start} of {len(framed) - start}: the "
                               f"bytes do not match the schema")
        return value

    def text(self, framed, start: int) -> str:
        if self.program is not None and isinstance(framed, bytes):
            text = self.program.text(framed, start)
            if text is not None:
                return text
        return to_json_text(self.read(framed, start))

    def json(self, framed, start: int) -> Any:
        return plain(self.read(framed, start))


def avro_program_py(schema: Any, named: dict) -> Any:
    """No program: on the pure path fastavro reads every value (the compiled twin, kdump/format/_avro.pyx,
    compiles the schema into one that writes the JSON text straight from the Avro bytes)."""
    return None


avro_program = _backend.pick("avro_program", avro_program_py)


def _schema_json(text: str, schema_id: int) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        raise DecoderError(f"schema {schema_id} is not JSON: {e}") from None


def _add_references(schema: RegisteredSchema, store: SchemaStore, named: dict, seen: set) -> None:
    """Parse the named types ``schema`` references into ``named``, theirs first (depth first)."""
    from fastavro import parse_schema

    for ref in schema.references:
        if (ref.subject, ref.version) in seen:
            continue
        seen.add((ref.subject, ref.version))
        target = store.version(ref.subject, ref.version)
        if target is None:
            raise DecoderError(f"schema {schema.id} references {ref.name} ({ref.subject} version {ref.version}), "
                               f"which {store.source} does not hold")
        if target.schema_type != AVRO:
            raise DecoderError(f"schema {schema.id} references {ref.subject} version {ref.version}, "
                               f"a {target.schema_type} schema")
        _add_references(RegisteredSchema(target.id, AVRO, target.text, target.references), store, named, seen)
        parse_schema(_schema_json(target.text, target.id), named_schemas=named)


def _readable(obj: Any) -> Any:
    """What JSON cannot hold as it is, in the form the module doc names."""
    if isinstance(obj, (bytes, bytearray)):
        return base64.b64encode(obj).decode("ascii")
    if isinstance(obj, (datetime.datetime, datetime.date, datetime.time)):
        return obj.isoformat()
    if isinstance(obj, (decimal.Decimal, uuid.UUID)):
        return str(obj)
    raise TypeError(f"{type(obj).__name__} is not a JSON value")


# One encoder for every value (json.dumps builds a new one per call when given options). ``_readable`` is
# called only for what is not JSON, so plain records pay nothing for it.
to_json_text = compact_encoder(_readable)


def plain(value: Any) -> Any:
    """A decoded Avro value as JSON data (what ``json.loads`` of :func:`to_json_text` would give)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float)):
        return value
    return _readable(value)
