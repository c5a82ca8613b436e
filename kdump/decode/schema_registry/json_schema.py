"""JSON Schema values: the payload after the header is JSON text, printed as it is (compact).

The schema is parsed (a schema that is not JSON makes every value written with it undecodable, as for the
other types) and its references are checked to be there, but values are not validated against it: a reader
needs the data, and the registry's serializers validate before they write.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from kdump.decode.errors import DecoderError
from kdump.decode.schema_registry.store import RegisteredSchema, SchemaStore


class JsonSchemaReader:
    """Reads the values written with one JSON Schema."""

    __slots__ = ()

    def __init__(self, schema: RegisteredSchema, store: SchemaStore):
        _check(schema.id, schema.text)
        for ref in schema.references:
            target = store.version(ref.subject, ref.version)
            if target is None:
                raise DecoderError(f"schema {schema.id} references {ref.name} ({ref.subject} version "
                                   f"{ref.version}), which {store.source} does not hold")
            _check(target.id, target.text)

    def json(self, framed, start: int) -> Any:
        try:
            return json.loads(bytes(framed[start:]).decode("utf-8"), parse_constant=_not_json)
        except UnicodeDecodeError as e:
            raise DecoderError(f"JSON value is not UTF-8: {e}") from None
        except (ValueError, RecursionError) as e:
            raise DecoderError(f"value is not JSON: {e}") from None

    def text(self, framed, start: int) -> str:
        return compact_json(self.json(framed, start))


def compact_encoder(default: Callable[[Any], Any] | None = None) -> Callable[[Any], str]:
    """What ``json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=default)`` gives, made once:
    json's C encoder called straight (``JSONEncoder.encode`` builds a new one per call, which cost as much as
    encoding a small record), without the check for circular data (decoded values are trees)."""
    from json import encoder

    default = default or json.JSONEncoder().default  # TypeError for what is not JSON, as json.dumps
    make = getattr(encoder, "c_make_encoder", None)
    if make is None:  # a Python without json's C accelerator
        return json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=default).encode
    chunks = make(None, default, encoder.encode_basestring, None, ":", ",", False, False, True)
    return lambda value: "".join(chunks(value, 0))


compact_json = compact_encoder()  # one encoder for all values


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")  # Python's json takes NaN and Infinity; JSON does not


def _check(schema_id: int, text: str) -> None:
    try:
        json.loads(text)
    except (ValueError, RecursionError) as e:
        raise DecoderError(f"schema {schema_id} is not JSON: {e}") from None
