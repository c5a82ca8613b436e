"""The :class:`Batch` protocol: what every batch of a log gives, whatever its magic.

:class:`kdump.format.v2.RecordBatch` (magic 2) and :class:`kdump.format.legacy.LegacyBatch` (a top-level
magic 0/1 entry, as Kafka's ``AbstractLegacyRecordBatch``) both implement it. Header fields a legacy entry
does not have take Kafka's "none" values (producer id -1, sequence -1, leader epoch -1) and
``records_count`` is None (a legacy entry declares no count). Records come as
:class:`~kdump.format.columns.RecordColumns` from :meth:`Batch.columns`, or one
:class:`~kdump.format.columns.Record` at a time from :meth:`Batch.records`.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from kdump.format.columns import Record, RecordColumns, RecordKeys
from kdump.format.types import TimestampType


@runtime_checkable
class Batch(Protocol):
    position: int  # byte position of the entry in its file
    size: int  # bytes the entry takes in the file, offset and size fields included
    magic: int
    base_offset: int  # first record's offset (a legacy wrapper is decompressed to know it)
    last_offset: int
    max_timestamp: int
    timestamp_type: TimestampType
    codec_id: int
    crc: int  # as stored
    producer_id: int
    producer_epoch: int
    base_sequence: int
    is_transactional: bool
    is_control: bool
    partition_leader_epoch: int
    records_count: int | None

    def is_valid(self) -> bool:
        """The stored CRC matches the bytes it covers."""
        ...

    def columns(self, limit: int) -> RecordColumns:
        """The records, column-wise; ``limit`` bounds the decompressed size."""
        ...

    def records(self, limit: int) -> Iterator[Record]:
        """The records one object each (built from :meth:`columns`)."""
        ...

    def key_chunks(self, limit: int, chunk: int) -> Iterator[RecordKeys]:
        """The records' keys as digests (:class:`RecordKeys`), in chunks of at most ``chunk`` records."""
        ...
