"""``kdump stats --value-decoder schema-registry``: how a partition's values use the registry's schemas --
records per schema id (and per subject), values that are not framed, framed values that do not decode (each
value is decoded to know), and null values."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from kdump.decode.errors import DecoderError
from kdump.decode.records import data_records
from kdump.decode.schema_registry.decoder import SchemaRegistryDecoder


@dataclass
class SchemaCensus:
    by_id: dict[int, int] = field(default_factory=dict)  # schema id -> records (decoded or not)
    undecodable: int = 0  # framed values that do not decode (unknown id included)
    not_framed: int = 0
    null_values: int = 0

    def add(self, decoder: SchemaRegistryDecoder, value: bytes | None) -> None:
        if value is None:
            self.null_values += 1
            return
        sid = decoder.schema_id(value)
        if sid is None:
            self.not_framed += 1
            return
        self.by_id[sid] = self.by_id.get(sid, 0) + 1
        try:
            decoder.decode(value)
        except DecoderError:
            self.undecodable += 1

    def merge(self, other: SchemaCensus) -> SchemaCensus:
        out = SchemaCensus(dict(self.by_id), self.undecodable + other.undecodable,
                           self.not_framed + other.not_framed, self.null_values + other.null_values)
        for sid, n in other.by_id.items():
            out.by_id[sid] = out.by_id.get(sid, 0) + n
        return out

    def to_dict(self, decoder: SchemaRegistryDecoder) -> dict:
        by_subject: dict[str, int] = {}
        ids = {}
        for sid, n in sorted(self.by_id.items()):
            schema = decoder.store.schema(sid)
            subject = schema.subject if schema is not None else None
            ids[str(sid)] = {"subject": subject, "records": n}
            if subject is not None:
                by_subject[subject] = by_subject.get(subject, 0) + n
        return {"bySchemaId": ids, "bySubject": dict(sorted(by_subject.items())), "undecodable": self.undecodable,
                "notFramed": self.not_framed, "nullValues": self.null_values}

    def text(self, decoder: SchemaRegistryDecoder) -> str:
        d = self.to_dict(decoder)
        ids = ", ".join(f"{sid} ({e['subject'] or 'unknown'}) {e['records']}" for sid, e in d["bySchemaId"].items())
        return (f"schema registry values: {ids or 'none framed'}; {self.undecodable} undecodable, "
                f"{self.not_framed} not framed, {self.null_values} null")


@dataclass
class Undecodable:
    """The values of one segment that do not decode: how many of how many, and the first (its offset, the
    position of its batch, the reason)."""

    count: int = 0
    values: int = 0
    first: tuple[int, int, str] | None = None


def data_values(log: str) -> Iterator[tuple[int, int, bytes | None]]:
    """(offset, batch position, value) of the data records of one segment
    (:func:`kdump.decode.records.data_records`)."""
    for offset, position, _key, value in data_records(log):
        yield offset, position, value


def undecodable_values(decoder: SchemaRegistryDecoder, log: str) -> Undecodable:
    """What ``verify --deep --value-decoder schema-registry`` checks in one segment: every non-null value of
    its data records decodes."""
    out = Undecodable()
    for offset, position, value in data_values(log):
        if value is None:
            continue
        out.values += 1
        try:
            decoder.decode(value)
        except DecoderError as e:
            out.count += 1
            if out.first is None:
                out.first = (offset, position, str(e))
    return out


def census(decoder: SchemaRegistryDecoder, logs: Iterable[str]) -> SchemaCensus:
    """The census of the data records of ``logs`` (one partition's segments)."""
    out = SchemaCensus()
    for log in logs:
        for _, _, value in data_values(log):
            out.add(decoder, value)
    return out
