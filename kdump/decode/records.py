"""What the decode layer hands every renderer beside a batch's :class:`~kdump.format.columns.RecordColumns`.

:func:`decode_records` gives, per record, a decoded object or None: today the decoded control record of
a control batch (:mod:`kdump.decode.control`). Decoders of record keys and values (the internal-topic
decoders) plug in here too, so that what they decode reaches the Kafka text, JSON Lines and rich
renderers alike. A decoded object has ``to_json()`` (a JSON-able dict, carried in a JSON Lines record under
its ``json_field``), ``kafka_text(scala)`` (DumpLogSegments' words for it) and ``error`` (None, or the
FormatError that made it undecodable).
"""
from __future__ import annotations

from kdump.decode.control import decode_control


def decode_records(batch, cols) -> list | None:
    """Per record of ``cols``, its decoded object; None when there is nothing to decode (data batches)."""
    if batch.is_control:
        return [decode_control(cols.key(i), cols.value(i)) for i in range(cols.count)]
    return None
