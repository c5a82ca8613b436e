"""What the check of one companion file knows of its partition: its segment (:class:`Segment`), and what the
partition's checker (:class:`kdump.index.check.partition.PartitionChecker`) tells every file kind's check
(:class:`Context`, the checker's declared interface to them: each kind's module sees nothing else of it)."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from kdump.read.logdir import FileKind, sibling

if TYPE_CHECKING:
    from kdump.index.rebuild import Recovery
    from kdump.read.damage import LogDamage


@dataclass
class Segment:
    base: int
    log_path: str
    next_base: int | None
    is_last: bool
    log_size: int | None = None
    recovery: Recovery | None = None  # deep mode
    recovery_error: str | None = None


@dataclass
class PartitionFacts:
    """What the deep walk learned about the whole partition."""

    leader_epochs: list = field(default_factory=list)  # (epoch, start offset) as recovery assigns them
    producer_batches: dict = field(default_factory=dict)  # producer id -> set of batch last offsets
    log_start: int | None = None
    log_end: int | None = None


class Context(Protocol):
    """The partition a companion file is checked in."""

    deep: bool  # walk every segment, as Kafka's recovery would (the module docstring of kdump.index.check)
    segments: dict[int, Segment]  # base offset -> segment
    when: Callable[[int], str]  # how findings quote a time (kdump.text.times)

    def log_end_offset(self) -> int | None:
        """Last offset + 1 of the last segment, or None when unknown."""

    def log_size(self, seg: Segment | None) -> int | None:
        """The size of ``seg``'s log (read once), or None when it cannot be read."""

    def offset_bound(self, seg: Segment | None) -> float:
        """The first offset past ``seg`` (infinite when unknown)."""

    def log_damage(self, seg: Segment) -> LogDamage | None:
        """The failing damage of ``seg``'s log, read once, or None when the log cannot be read."""

    def partition_damage(self):
        """The failing damage of every log of the partition, asked as one (offsets only)."""

    def recover(self, seg: Segment) -> PartitionFacts:
        """Recovery of every segment (deep mode), once per checker: fills each segment's ``recovery``."""


def log_name(companion_path: str) -> str:
    """The name of the segment a companion file belongs to."""
    return os.path.basename(sibling(companion_path, FileKind.LOG))
