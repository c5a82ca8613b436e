"""What every internal-topic decoder gives for a record, and the error texts they share."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kdump.format.layout import INT16  # noqa: F401  (the decoders read it from here)
from kdump.format.schema import SchemaError


@dataclass
class Decoded:
    """One record, decoded. ``key``/``value`` are the texts DumpLogSegments prints after ``key:`` and
    ``payload:`` (None: that part is not printed); ``key_obj``/``value_obj`` the same as JSON-able objects
    (for ``--format json``); ``error`` says why the record could not be decoded (None when it could);
    ``leftover`` what of a decoded record its definitions do not explain (unknown tagged fields, bytes after
    the key or value, a value version newer than the definitions), None when nothing."""
    key: str | None
    value: str | None
    key_obj: Any = None
    value_obj: Any = None
    error: str | None = None
    leftover: str | None = None


class RecordError(Exception):
    """A record that cannot be decoded; ``str()`` is the text Kafka's exception carries (or better)."""


def reason(e: SchemaError) -> str:
    """The message of the exception Kafka would throw; where Java's would be ``null`` (a buffer underflow),
    kdump says what ran out instead."""
    return e.kafka if e.kafka is not None else e.message


def leftovers(tree: dict, obj: dict, what: str, trailing: bytes = b"") -> list[str]:
    """Put what the definitions do not explain of one decoded message beside its ``data`` in ``tree``
    (``unknownTaggedFields``: where, tag and hex bytes of each; ``trailingBytes``: hex of the bytes after the
    message), and say it in words (empty when nothing is left over)."""
    from kdump.format.schema import unknown_tags
    said = []
    tags = unknown_tags(obj)
    if tags:
        tree["unknownTaggedFields"] = [{"field": where, "tag": tag, "data": raw.hex()} for where, tag, raw in tags]
        said.append(f"{len(tags)} unknown tagged field(s) (tag {', '.join(str(t) for _, t, _ in tags)})")
    if trailing:
        tree["trailingBytes"] = trailing.hex()
        said.append(f"{len(trailing)} byte(s) after the {what}")
    return said
