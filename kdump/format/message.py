"""Kafka's generated-message encoding (the ``*.json`` message schemas), as data tables plus one reader.

Used for KRaft control records now and, later, for the internal-topic decoders: a schema is a
:class:`Struct` of :class:`Field` rows; :func:`read_struct` decodes bytes at a given version, and
:func:`to_json` prints the result the way Kafka's generated ``*JsonConverter`` + Jackson do (compact,
declaration order, names with the first letter lower-cased, uuid as URL-safe base64 without padding,
bytes as standard base64).

Encoding rules (spec §7.1): non-flexible versions use int16 lengths for strings, int32 for bytes and
arrays; flexible versions use unsigned varint (length + 1) and end every struct with a tagged-field
section (unsigned varint count, then tag/size/data triples), which kdump skips unless a field is
declared with a tag.
"""
from __future__ import annotations

import base64
import struct
from dataclasses import dataclass, field
from typing import Any

from kdump.errors import FormatError
from kdump.format.varint import read_uvarint

NO_MAX = 1 << 30


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # int8 int16 int32 int64 uint16 bool string bytes uuid float64, "[]<type>", "struct", "[]struct"
    versions: tuple[int, int] = (0, NO_MAX)
    nullable: tuple[int, int] | None = None
    struct: "Struct | None" = None
    tag: int | None = None
    default: Any = None

    def present(self, version: int) -> bool:
        return self.versions[0] <= version <= self.versions[1]

    def nullable_in(self, version: int) -> bool:
        return self.nullable is not None and self.nullable[0] <= version <= self.nullable[1]

    @property
    def json_name(self) -> str:
        return self.name[:1].lower() + self.name[1:]


@dataclass(frozen=True)
class Struct:
    name: str
    fields: tuple[Field, ...]
    flexible_from: int | None = None  # first flexible version, None if never flexible
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    def flexible(self, version: int) -> bool:
        return self.flexible_from is not None and version >= self.flexible_from


_INTS = {
    "int8": struct.Struct(">b"), "int16": struct.Struct(">h"), "uint16": struct.Struct(">H"),
    "int32": struct.Struct(">i"), "uint32": struct.Struct(">I"), "int64": struct.Struct(">q"),
    "float64": struct.Struct(">d"),
}


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf, pos=0):
        self.buf = buf
        self.pos = pos

    def need(self, n: int, what: str) -> None:
        left = len(self.buf) - self.pos
        if n > left:
            raise FormatError("message-truncated", f"error reading {what}: {n} byte(s) needed, only {left} available")

    def fixed(self, kind: str, what: str):
        s = _INTS[kind]
        self.need(s.size, what)
        (v,) = s.unpack_from(self.buf, self.pos)
        self.pos += s.size
        return v

    def uvarint(self, what: str) -> int:
        try:
            v, self.pos = read_uvarint(self.buf, self.pos, 5)
        except FormatError as e:
            raise FormatError(e.code, f"error reading {what}: {e.message}") from None
        return v

    def take(self, n: int, what: str) -> bytes:
        self.need(n, what)
        b = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return b


def _length(r: _Reader, flexible: bool, size_kind: str, what: str) -> int:
    """Length of a string/bytes/array: -1 for null."""
    if flexible:
        return r.uvarint(what) - 1
    return r.fixed(size_kind, what)


def _read_value(r: _Reader, f: Field, version: int, flexible: bool):
    t = f.type
    if t in _INTS:
        return r.fixed(t, f.name)
    if t == "bool":
        return r.fixed("int8", f.name) != 0
    if t == "uuid":
        return r.take(16, f.name)
    if t == "string":
        n = _length(r, flexible, "int16", f.name)
        if n < 0:
            if not f.nullable_in(version):
                raise FormatError("message-invalid", f"non-nullable field {f.json_name} was serialized as null")
            return None
        return r.take(n, f.name).decode("utf-8", "replace")
    if t == "bytes":
        n = _length(r, flexible, "int32", f.name)
        if n < 0:
            if not f.nullable_in(version):
                raise FormatError("message-invalid", f"non-nullable field {f.json_name} was serialized as null")
            return None
        return r.take(n, f.name)
    if t == "struct":
        return _read_struct(r, f.struct, version)
    if t.startswith("[]"):
        n = _length(r, flexible, "int32", f.name)
        if n < 0:
            if not f.nullable_in(version):
                raise FormatError("message-invalid", f"non-nullable field {f.json_name} was serialized as null")
            return None
        if n > len(r.buf) - r.pos:  # every element takes at least one byte: refuse absurd counts early
            raise FormatError("message-truncated", f"error reading {f.name}: {n} elements declared, "
                              f"only {len(r.buf) - r.pos} byte(s) available")
        elem = Field(f.name, t[2:], struct=f.struct)
        return [_read_value(r, elem, version, flexible) for _ in range(n)]
    raise ValueError(f"unknown schema type {t}")


def _read_struct(r: _Reader, schema: Struct, version: int) -> dict:
    flexible = schema.flexible(version)
    out: dict[str, Any] = {}
    tagged = {}
    for f in schema.fields:
        if not f.present(version):
            continue
        if f.tag is not None:
            tagged[f.tag] = f
            if f.default is not None:
                out[f.name] = f.default
            continue
        out[f.name] = _read_value(r, f, version, flexible)
    if flexible:
        count = r.uvarint("tagged field count")
        for _ in range(count):
            tag = r.uvarint("tag")
            size = r.uvarint("tagged field size")
            if tag in tagged:
                sub = _Reader(r.take(size, tagged[tag].name))
                out[tagged[tag].name] = _read_value(sub, tagged[tag], version, True)
            else:
                r.take(size, f"unknown tagged field {tag}")
    return out


def read_struct(buf, schema: Struct, version: int, *, exact: bool = True) -> dict:
    """Decode ``buf`` as ``schema`` at ``version``; with ``exact``, trailing bytes are an error."""
    r = _Reader(buf)
    out = _read_struct(r, schema, version)
    if exact and r.pos != len(buf):
        raise FormatError("message-trailing", f"{len(buf) - r.pos} unexpected byte(s) after the {schema.name}")
    return out


# --- JSON as Kafka's generated converters print it --------------------------------------------------
def _json_string(s: str) -> str:
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif o < 0x20:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}.get(ch) or f"\\u{o:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _json_value(v, f: Field) -> str:
    if v is None:
        return "null"
    t = f.type
    if t == "bool":
        return "true" if v else "false"
    if t == "uuid":
        return _json_string(base64.urlsafe_b64encode(v).rstrip(b"=").decode())
    if t == "bytes":
        return _json_string(base64.b64encode(v).decode())
    if t == "string":
        return _json_string(v)
    if t == "struct":
        return to_json(v, f.struct)
    if t.startswith("[]"):
        elem = Field(f.name, t[2:], struct=f.struct)
        return "[" + ",".join(_json_value(x, elem) for x in v) + "]"
    return str(v)


def to_json(obj: dict, schema: Struct) -> str:
    """Compact JSON in declaration order; tagged fields only when they differ from their default."""
    parts = []
    for f in schema.fields:
        if f.name not in obj:
            continue
        v = obj[f.name]
        if f.tag is not None and v == f.default:
            continue
        parts.append(f'"{f.json_name}":{_json_value(v, f)}')
    return "{" + ",".join(parts) + "}"
