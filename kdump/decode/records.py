"""What the decode layer hands every renderer beside a batch's :class:`~kdump.format.columns.RecordColumns`.

:func:`decode_records` gives, per record, a decoded object or None: the decoded control record of
a control batch (:mod:`kdump.decode.control`), or a data record decoded by an internal-topic decoder
(:mod:`kdump.decode.internal`), which plugs in here so that what they decode reaches the Kafka text, JSON Lines and rich
renderers alike. A decoded object has ``to_json()`` (a JSON-able dict, carried in a JSON Lines record under
its ``json_field``), ``kafka_text(scala)`` (DumpLogSegments' words for it) and ``error`` (None, or the
FormatError that made it undecodable).
"""
from __future__ import annotations

from collections.abc import Iterator

from kdump.decode.control import decode_control
from kdump.errors import KdumpError
from kdump.format.limits import DEFAULT_MAX_DECOMPRESSED_BYTES
from kdump.read.segment import SegmentReader


def decode_records(batch, cols, record_decoder=None) -> list | None:
    """Per record of ``cols``, its decoded object; None when there is nothing to decode (data batches
    without a ``record_decoder``). ``record_decoder`` is an internal-topic decoder (:mod:`kdump.decode.internal`,
    ``decode(offset, key, value)``), applied to data records only: control records keep their own meaning."""
    if batch.is_control:
        return [decode_control(cols.key(i), cols.value(i)) for i in range(cols.count)]
    if record_decoder is not None:
        return [record_decoder.decode(cols.offsets[i], cols.key(i), cols.value(i)) for i in range(cols.count)]
    return None


def data_records(log: str) -> Iterator[tuple[int, int, bytes | None, bytes | None]]:
    """(offset, batch position, key, value) of the data records of one segment, for the checks that decode
    every record of a segment (``verify --deep``'s value and internal-topic checks, ``stats``' schema census).
    Control batches are passed over, and so are batches whose records cannot be read: verify has its own
    findings for them, stats counts them as unreadable."""
    with SegmentReader(log) as reader:
        for batch in reader:
            if batch.is_control:
                continue
            try:
                for cols in batch.column_chunks(DEFAULT_MAX_DECOMPRESSED_BYTES):
                    for i in range(cols.count):
                        yield cols.offsets[i], batch.position, cols.key(i), cols.value(i)
            except KdumpError:
                continue
