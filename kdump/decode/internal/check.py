"""What ``verify --deep`` checks in a segment of an internal topic: every record decodes whole with Kafka's
definitions (no unknown tagged field, no byte after a message, a known record type and value version)."""
from __future__ import annotations

from dataclasses import dataclass

from kdump.decode.records import data_records


@dataclass
class PartlyDecoded:
    """The records of one segment that decode only in part: how many of how many, and the first (its
    offset, the position of its batch, what is wrong)."""

    count: int = 0
    records: int = 0
    first: tuple[int, int, str] | None = None


def partly_decoded(decoder, log: str) -> PartlyDecoded:
    out = PartlyDecoded()
    for offset, position, key, value in data_records(log):
        out.records += 1
        decoded = decoder.decode(offset, key, value)
        problem = decoded.error or decoded.leftover
        if problem is not None:
            out.count += 1
            if out.first is None:
                out.first = (offset, position, problem)
    return out
