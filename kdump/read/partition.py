"""The partition as one model: :class:`PartitionLog`, what every command and the Spark source read a
partition through.

A partition is more than its files: offsets run across segments, the indexes say where batches are (when they
can be trusted), producer state accumulates from the first batch or from a snapshot, and damage in one segment
costs offsets that the next segment's base offset tells. Each of those questions has one answer here:

* **segments**: the partition's segments and companion files (:class:`kdump.read.logdir.Partition`);
* **scan** (:mod:`kdump.read.scan`): paths, local or remote, to partitions, segments and balanced work units;
* **locate** (:mod:`kdump.read.locate`): the batch at an offset or a time;
* **producers** (:mod:`kdump.read.producers`): producer and transaction state up to an offset;
* **damage** (:mod:`kdump.read.damage`): one :class:`~kdump.read.damage.Damage` per damaged region, with its
  byte range, cause and the offsets it costs.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kdump.read.logdir import LogSegment, Partition

if TYPE_CHECKING:
    from kdump.read.locate import Located
    from kdump.read.producers import PartitionProducers

if TYPE_CHECKING:
    from kdump.read.damage import Damage


class PartitionLog:
    """One topic-partition directory's log: ``topic``/``partition`` (None when the directory is not named
    ``<topic>-<n>``), ``segments`` in offset order, ``snapshots`` ((offset, path) of producer snapshots), and the
    :class:`~kdump.read.logdir.Partition` listing they come from (``files``: every file by kind, ``refused``,
    ``orphans``)."""

    def __init__(self, directory: str | os.PathLike | Partition):
        self.files = directory if isinstance(directory, Partition) else Partition(directory)
        self.directory = self.files.directory
        self.topic = self.files.topic
        self.partition = self.files.partition

    @property
    def segments(self) -> list[LogSegment]:
        return self.files.segments

    @property
    def snapshots(self) -> list[tuple[int, str]]:
        return self.files.snapshots

    @property
    def key(self) -> str:
        """``<topic>-<partition>`` when the directory is named so, else the directory."""
        return f"{self.topic}-{self.partition}" if self.topic is not None else self.directory

    def rescan(self) -> PartitionLog:
        """Read the directory again (after a segment roll)."""
        self.files.rescan()
        return self

    def __repr__(self) -> str:
        return f"PartitionLog({self.directory!r}, segments={[s.base_offset for s in self.segments]})"

    # --- scan: kdump.read.scan --------------------------------------------------------------------------------
    @property
    def is_partition(self) -> bool:
        """The directory holds a partition's files (segments, indexes, snapshots, a leader epoch checkpoint)."""
        return self.files.is_partition

    # --- locate: kdump.read.locate ----------------------------------------------------------------------------
    def locate_offset(self, offset: int, *, use_index: bool = True) -> Located | None:
        """The batch holding ``offset`` or the first one after it (:func:`kdump.read.locate.locate_offset_in`):
        its segment, byte position and first offset; None for a partition without segments."""
        from kdump.read.locate import locate_offset_in
        return locate_offset_in(self.segments, offset, use_index=use_index)

    def locate_time(self, time_ms: int, *, use_index: bool = True) -> Located | None:
        """The first batch whose max timestamp is at or after ``time_ms`` (Kafka's ``findOffsetByTimestamp``)."""
        from kdump.read.locate import locate_time_in
        return locate_time_in(self.segments, time_ms, use_index=use_index)

    def log_end_offset(self) -> int | None:
        """The offset after the partition's last batch (None without segments or when the last is unreadable)."""
        from kdump.read.locate import log_end_offset_of
        return log_end_offset_of(self.segments)


    # --- producers: kdump.read.producers ----------------------------------------------------------------------
    def producers(self, upto_offset: int | None = None, *, from_snapshot: bool = True,
                  snapshot_notes: list | None = None) -> PartitionProducers:
        """Producer and transaction state after the batches below ``upto_offset`` (all when None), replayed from
        the newest usable producer snapshot at or below it (Kafka's ``loadProducerState``) unless not
        ``from_snapshot``; ``snapshot_notes`` gets the snapshots passed over (:func:`kdump.read.producers.replay`)."""
        from kdump.read.producers import replay  # on first use: shallow verify and dump start without it
        return replay(self.files, upto_offset, from_snapshot=from_snapshot, snapshot_notes=snapshot_notes)

    # --- damage: kdump.read.damage ----------------------------------------------------------------------------
    def damage(self, *, max_batch_bytes: int | None = None) -> Iterator[Damage]:
        """Every damaged area of the partition's segments, in offset order (:func:`kdump.read.damage.readable`).
        Damage that no good batch follows in its segment costs the offsets up to the next segment's base offset:
        its :meth:`~kdump.read.damage.Damage.lost_offsets` end there (only the last segment's run open-ended)."""
        from kdump.read.damage import Damage, readable  # the walk is only needed when damage is asked for
        from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES, SegmentReader

        segments = self.segments
        for i, segment in enumerate(segments):
            next_base = segments[i + 1].base_offset if i + 1 < len(segments) else None
            with SegmentReader(segment.log, max_batch_bytes=max_batch_bytes or DEFAULT_MAX_BATCH_BYTES) as reader:
                for item in readable(reader, show_invalid=False, next_base=next_base):
                    if isinstance(item, Damage):
                        yield item
