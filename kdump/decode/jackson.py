"""JSON text as Kafka's generated ``*JsonConverter`` builds it from a decoded message (a dict of
:func:`kdump.format.schema.read_struct`) and Jackson prints it: :func:`to_tree` the tree, :func:`jackson` the
text of a tree (``JsonNode.toString()``), :func:`to_json` both. Text for the internal-topic decoders and the
replays, kept out of format/, which reads and writes bytes only."""
from __future__ import annotations

import base64
import uuid as _uuid
from decimal import Decimal

from kdump.format.schema import NONE, Field, Struct, is_default, member


# --- JSON as Kafka's generated converters build it, printed as Jackson prints it --------------------------
def uuid_text(u: _uuid.UUID) -> str:
    """Kafka's ``Uuid.toString()``: URL-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(u.bytes).rstrip(b"=").decode("ascii")


def _tree_value(v, f: Field, kind: str, version: int | None):
    if v is None:
        return None
    if kind == "uuid":
        return uuid_text(v)
    if kind == "bytes":
        return base64.b64encode(v).decode("ascii")
    if kind == "records":
        return ""  # Kafka's converter writes an empty BinaryNode for records
    if kind == "struct":
        return to_tree(v, f.sub, version)
    if kind.startswith("[]"):
        return [_tree_value(x, f, kind[2:], version) for x in v]
    if kind == "float64":
        return JavaDouble(v)
    return v


def to_tree(obj: dict, schema: Struct, version: int | None = None) -> dict:
    """The JSON tree (dicts, lists, str, int, bool, None, :class:`JavaDouble`) Kafka's converter builds:
    declaration order, tagged fields only when they differ from their default. Without ``version``, a
    field counts as tagged where it has no untagged versions at all."""
    out = {}
    for f in schema.fields:
        if f.json_name not in obj:
            continue
        v = obj[f.json_name]
        if f.tag is not None:
            tagged_here = f.mandatory == NONE if version is None else not member(f.mandatory, schema.cur, version)
            if tagged_here and is_default(f, v, -1 if version is None else version):
                continue
        out[f.json_name] = _tree_value(v, f, f.type, version)
    return out


class JavaDouble(float):
    """A float printed as Java's ``Double.toString`` (Jackson's DoubleNode)."""


def java_double(d: float) -> str:
    if d != d:
        return '"NaN"'
    if d in (float("inf"), float("-inf")):
        return '"Infinity"' if d > 0 else '"-Infinity"'
    if d == 0:
        return "-0.0" if str(d).startswith("-") else "0.0"
    sign = "-" if d < 0 else ""
    digits_t = Decimal(repr(abs(d))).normalize().as_tuple()
    digits = "".join(map(str, digits_t.digits))
    assert isinstance(digits_t.exponent, int)  # a finite number: NaN and the infinities returned above
    exp10 = len(digits) - 1 + digits_t.exponent  # scientific exponent
    if 1e-3 <= abs(d) < 1e7:
        if exp10 >= 0:
            whole = digits[:exp10 + 1].ljust(exp10 + 1, "0")
            frac = digits[exp10 + 1:] or "0"
        else:
            whole = "0"
            frac = "0" * (-exp10 - 1) + digits
        return f"{sign}{whole}.{frac}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp10}"


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}


def json_string(s: str) -> str:
    """A JSON string as Jackson writes it: ``"`` ``\\`` and control characters escaped, nothing else."""
    if s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    out = ['"']
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def jackson(tree) -> str:
    """``tree`` printed compactly as Jackson's ``JsonNode.toString()``."""
    if tree is None:
        return "null"
    if tree is True:
        return "true"
    if tree is False:
        return "false"
    if isinstance(tree, str):
        return json_string(tree)
    if isinstance(tree, JavaDouble):
        return java_double(tree)
    if isinstance(tree, float):
        return java_double(tree)
    if isinstance(tree, int):
        return str(tree)
    if isinstance(tree, dict):
        return "{" + ",".join(f"{json_string(k)}:{jackson(v)}" for k, v in tree.items()) + "}"
    return "[" + ",".join(jackson(x) for x in tree) + "]"


def to_json(obj: dict, schema: Struct, version: int | None = None) -> str:
    """Compact JSON as Kafka's generated ``*JsonConverter.write`` + Jackson print it."""
    return jackson(to_tree(obj, schema, version))
