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
    (for ``--format json``); ``error`` says why the record could not be decoded (None when it could)."""
    key: str | None
    value: str | None
    key_obj: Any = None
    value_obj: Any = None
    error: str | None = None


class RecordError(Exception):
    """A record that cannot be decoded; ``str()`` is the text Kafka's exception carries (or better)."""


def reason(e: SchemaError) -> str:
    """The message of the exception Kafka would throw; where Java's would be ``null`` (a buffer underflow),
    kdump says what ran out instead."""
    return e.kafka if e.kafka is not None else e.message
