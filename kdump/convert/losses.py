"""What a conversion could not carry over, counted per kind, with the first byte position of each.

Nothing is dropped silently: every conversion returns a :class:`Losses` and the command prints it
(``3 headers (on 2 records), 1 control batch (1 record) dropped``); ``--strict`` turns any count above
zero into a refusal. The kinds are the things magic 0/1 cannot hold (spec §3.8, §6.2) plus what a
reader of the source could see and the output no longer has.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class LossKind:
    name: str  # stable machine-readable name (JSON reports, tests)
    unit: str  # what ``count`` counts, singular
    description: str  # what was lost, for people; ``{n}``/``{units}`` filled in by :meth:`Losses.lines`


# Ordered as printed: user data first, then metadata. docs/convert.md says why each is lost.
KINDS = {k.name: k for k in (
    LossKind("headers", "header", "{n} {units}"),  # magic 0/1 have no headers
    LossKind("control-batches", "control batch", "{n} {units}"),  # COMMIT/ABORT markers, KRaft control records
    LossKind("timestamps", "timestamp", "{n} {units}"),  # magic 0 stores none
    LossKind("log-append-time", "record", "the LogAppendTime type of {n} {units}"),  # magic 0 has no type
    # readers of a LogAppendTime batch see the append time, not the create time stored beside it
    LossKind("hidden-timestamps", "record", "the stored create time of {n} {units} under LogAppendTime"),
    LossKind("empty-batches", "empty batch", "{n} {units}"),  # count-0 batches kept by compaction
    LossKind("producer-state", "batch", "producer id/epoch/sequence of {n} {units}"),
    LossKind("transactional", "batch", "the transactional flag of {n} {units}"),
    LossKind("leader-epoch", "batch", "the partition leader epoch of {n} {units}"),
    LossKind("delete-horizon", "batch", "the delete horizon of {n} {units}"),
    # compaction may remove a batch's last records but keeps its last offset (for producer sequences)
    LossKind("last-offsets", "batch", "the last offset of {n} {units} (beyond the last record)"),
    LossKind("message-padding", "byte", "{n} {units} after the value inside legacy messages"),
    LossKind("trailing-bytes", "byte", "{n} {units} of an incomplete last batch"),
    # damaged areas (a damaged size field, a batch failing its CRC, ...): what `kdump verify` reports as errors
    LossKind("damaged-bytes", "byte", "{n} damaged {units}"),
)}

_PLURAL = {"batch": "batches", "control batch": "control batches", "empty batch": "empty batches"}


def _units(unit: str, n: int) -> str:
    if n == 1:
        return unit
    return _PLURAL.get(unit, unit + "s")


@dataclass
class Losses:
    """Counts per loss kind (see :data:`KINDS`), the first byte position of each, and side counts
    (records holding the dropped headers, records of the dropped control batches)."""

    counts: dict[str, int] = field(default_factory=dict)
    first_position: dict[str, int] = field(default_factory=dict)
    header_records: int = 0
    control_records: int = 0

    def add(self, kind: str, n: int, position: int) -> None:
        if n <= 0:
            return
        if kind not in KINDS:
            raise KeyError(kind)
        self.counts[kind] = self.counts.get(kind, 0) + n
        self.first_position.setdefault(kind, position)

    def __bool__(self) -> bool:
        return any(self.counts.values())

    def count(self, kind: str) -> int:
        return self.counts.get(kind, 0)

    def lines(self) -> list[str]:
        """One phrase per kind with a count, in :data:`KINDS` order."""
        out = []
        for name, kind in KINDS.items():
            n = self.counts.get(name, 0)
            if not n:
                continue
            text = kind.description.format(n=f"{n:,}", units=_units(kind.unit, n))
            if name == "headers":
                text += f" (on {self.header_records:,} {_units('record', self.header_records)})"
            elif name == "control-batches":
                text += f" ({self.control_records:,} {_units('record', self.control_records)})"
            out.append(text)
        return out

    def summary(self) -> str:
        """``3 headers (on 2 records), 1 control batch (...) dropped``, or ``nothing dropped``."""
        lines = self.lines()
        return (", ".join(lines) + " dropped") if lines else "nothing dropped"

    def to_dict(self) -> dict:
        d = {name: {"count": n, "firstPosition": self.first_position[name]}
             for name, n in self.counts.items() if n}
        if "headers" in d:
            d["headers"]["records"] = self.header_records
        if "control-batches" in d:
            d["control-batches"]["records"] = self.control_records
        return d
