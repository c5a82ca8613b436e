"""Producer state snapshots ``<offset>.snapshot`` (``ProducerStateManager.readSnapshot``/``writeSnapshot``,
spec §5.5).

Layout: ``int16 version (1), uint32 crc, int32 count, count x 46-byte entry``; the CRC-32C covers every
byte from offset 6 to the end of the file. Entry: ``int64 producerId, int16 epoch, int32 lastSequence,
int64 lastOffset, int32 offsetDelta, int64 timestamp, int32 coordinatorEpoch, int64 currentTxnFirstOffset``.

Kafka reads the whole struct first (a short file or a bad count is "Snapshot failed schema validation"),
then checks the version, then the CRC, in that order; :func:`read_snapshot` does the same and says which.
Bytes after the last entry are ignored by Kafka's reader (the CRC still covers them).

An entry is a :class:`kdump.read.producer_state.ProducerEntry`: the same class the producer-state replay keeps, so
a snapshot read and a state replayed compare field by field.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.format import index_layout as IL
from kdump.format.crc import crc32c
from kdump.read.producer_state import ProducerEntry

SNAPSHOT_VERSION = 1
HEADER = IL.SNAPSHOT_HEADER  # version, crc, entry count
ENTRY = IL.SNAPSHOT_ENTRY
ENTRY_SIZE = ENTRY.size  # 46
CRC_START = IL.SNAPSHOT_CRC_START
_ENTRY_FIELDS = ("producer_id", "epoch", "last_sequence", "last_offset", "offset_delta", "timestamp",
                 "coordinator_epoch", "current_txn_first_offset")
MAX_SNAPSHOT_BYTES = 256 << 20  # refuse to load anything larger (46 bytes per producer: 5.8 million)

__all__ = ["ProducerEntry", "ProducerSnapshot", "read_snapshot", "parse_snapshot", "encode_snapshot"]


@dataclass
class ProducerSnapshot:
    """What :func:`read_snapshot` found. ``error`` is Kafka's ``CorruptSnapshotException`` message (None
    when Kafka would accept the file); ``entries`` holds what could be decoded even then."""

    path: str
    size: int
    version: int | None = None
    stored_crc: int | None = None
    computed_crc: int | None = None
    declared_count: int | None = None
    entries: list[ProducerEntry] = field(default_factory=list)
    trailing_bytes: int = 0
    error: str | None = None
    error_code: str | None = None
    error_position: int | None = None


def read_snapshot(path) -> ProducerSnapshot:
    """Read and check a snapshot as Kafka does; raises only OSError (unreadable file)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_SNAPSHOT_BYTES:
            return ProducerSnapshot(path, size, error=f"Snapshot failed schema validation: file of {size} bytes is "
                                    f"larger than kdump reads ({MAX_SNAPSHOT_BYTES}); not a producer snapshot",
                                    error_code="snapshot-schema", error_position=0)
        data = f.read()
    return parse_snapshot(data, path)


def parse_snapshot(data: bytes, path: str = "<bytes>") -> ProducerSnapshot:
    snap = ProducerSnapshot(path, len(data))

    def schema(msg: str, pos: int) -> ProducerSnapshot:
        snap.error = f"Snapshot failed schema validation: {msg}"
        snap.error_code = "snapshot-schema"
        snap.error_position = pos
        return snap

    underflow = "java.nio.BufferUnderflowException"
    n = len(data)
    if n < IL.SNAPSHOT_CRC_AT:
        return schema(f"Error reading field 'version': {underflow}", IL.SNAPSHOT_VERSION_AT)
    (snap.version,) = IL.SNAPSHOT_VERSION_FIELD.unpack_from(data, IL.SNAPSHOT_VERSION_AT)
    if n < IL.SNAPSHOT_COUNT_AT:
        return schema(f"Error reading field 'crc': {underflow}", IL.SNAPSHOT_CRC_AT)
    (snap.stored_crc,) = IL.SNAPSHOT_CRC_FIELD.unpack_from(data, IL.SNAPSHOT_CRC_AT)
    if n < IL.SNAPSHOT_ENTRIES_AT:
        return schema(f"Error reading field 'producer_entries': {underflow}", IL.SNAPSHOT_COUNT_AT)
    (count,) = IL.SNAPSHOT_COUNT_FIELD.unpack_from(data, IL.SNAPSHOT_COUNT_AT)
    snap.declared_count = count
    if count < 0:
        return schema(f"Error reading field 'producer_entries': Array size {count} cannot be negative",
                      IL.SNAPSHOT_COUNT_AT)
    remaining = n - IL.SNAPSHOT_ENTRIES_AT
    if count > remaining:
        return schema(f"Error reading field 'producer_entries': Error reading array of size {count}, only "
                      f"{remaining} bytes available", IL.SNAPSHOT_COUNT_AT)
    pos = IL.SNAPSHOT_ENTRIES_AT
    for _ in range(count):
        if pos + ENTRY_SIZE > n:
            # the field that runs out first, as Kafka's per-field read would name it
            field_sizes = IL.SNAPSHOT_ENTRY_FIELD_SIZES
            p = pos
            name = _ENTRY_FIELDS[0]
            for fname, fsize in zip(_ENTRY_FIELDS, field_sizes, strict=True):
                if p + fsize > n:
                    name = fname
                    break
                p += fsize
            return schema(f"Error reading field 'producer_entries': Error reading field '{name}': "
                          f"{underflow}", pos)
        # mypy cannot count a Struct's fields: the 8 of ENTRY are ProducerEntry's first 8
        snap.entries.append(ProducerEntry(*ENTRY.unpack_from(data, pos), position=pos))  # type: ignore[misc]
        pos += ENTRY_SIZE
    snap.trailing_bytes = n - pos
    if snap.version != SNAPSHOT_VERSION:
        snap.error = f"Snapshot contained an unknown file version {snap.version}"
        snap.error_code = "snapshot-version"
        snap.error_position = 0
        return snap
    snap.computed_crc = crc32c(memoryview(data)[CRC_START:])
    if snap.computed_crc != snap.stored_crc:
        snap.error = (f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {snap.stored_crc}. "
                      f"Computed crc: {snap.computed_crc}")
        snap.error_code = "snapshot-crc"
        snap.error_position = 2
    return snap


def encode_snapshot(entries) -> bytes:
    """A version-1 snapshot holding ``entries`` (ProducerEntry), with its CRC (as ``writeSnapshot`` lays it out)."""
    body = IL.SNAPSHOT_COUNT_FIELD.pack(len(entries)) + b"".join(e.encode() for e in entries)
    return IL.SNAPSHOT_VERSION_CRC.pack(SNAPSHOT_VERSION, crc32c(body)) + body
