"""Brokers' log directories for ``kdump replicas`` tests, built without kdump's writer: each batch by kafka-python's
``DefaultRecordBatchBuilder`` (the producer's encoder), its base offset and partition leader epoch then set as a
broker sets them (both lie before the CRC'd part of the header, so the producer's CRC stays valid), the control
flag set and the CRC recomputed with the ``crc32c`` package where a control batch is wanted; segments, the
``leader-epoch-checkpoint`` and the log directory's offset checkpoints written as Kafka writes them."""
from __future__ import annotations

import struct
from pathlib import Path

import crc32c
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

CONTROL = 0x20  # attributes bit 5: a control batch
ABORT, COMMIT = 0, 1


def batch(base: int, epoch: int, count: int, *, tag: str = "v", producer_id: int = -1, producer_epoch: int = -1,
          transactional: bool = False) -> bytes:
    """A magic 2 batch of ``count`` records at offsets ``base``.. in leader epoch ``epoch``; values
    ``<tag>-<offset>`` (a different ``tag`` gives the same offsets other bytes, so another CRC)."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=transactional,
                                  producer_id=producer_id, producer_epoch=producer_epoch,
                                  base_sequence=0 if producer_id >= 0 else -1, batch_size=1 << 20)
    for i in range(count):
        b.append(i, timestamp=1_700_000_000_000 + base + i, key=f"k{base + i}".encode(),
                 value=f"{tag}-{base + i}".encode(), headers=[])
    return _placed(bytearray(b.build()), base, epoch)


def marker(offset: int, epoch: int, kind: int, producer_id: int, producer_epoch: int) -> bytes:
    """A transaction marker (a control batch of one record: key version 0 + type, value version 0 + coordinator
    epoch 0)."""
    b = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
                                  producer_epoch=producer_epoch, base_sequence=-1, batch_size=1 << 20)
    b.append(0, timestamp=1_700_000_000_000 + offset, key=struct.pack(">hh", 0, kind),
             value=struct.pack(">hi", 0, 0), headers=[])
    data = bytearray(b.build())
    attributes_at, crc_at = 21, 17
    struct.pack_into(">h", data, attributes_at, struct.unpack_from(">h", data, attributes_at)[0] | CONTROL)
    struct.pack_into(">I", data, crc_at, crc32c.crc32c(bytes(data[attributes_at:])))
    return _placed(data, offset, epoch)


def messages(base: int, count: int, *, tag: str = "v") -> bytes:
    """``count`` uncompressed magic 1 messages at offsets ``base``.. (no leader epoch: the format has none)."""
    b = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    for i in range(count):
        b.append(base + i, timestamp=1_700_000_000_000 + base + i, key=f"k{base + i}".encode(),
                 value=f"{tag}-{base + i}".encode())
    return bytes(b.build())


def _placed(data: bytearray, base: int, epoch: int) -> bytes:
    struct.pack_into(">q", data, 0, base)  # baseOffset: set by the broker
    struct.pack_into(">i", data, 12, epoch)  # partitionLeaderEpoch: set by the broker
    return bytes(data)


def _end_offset(entries: bytes) -> int:
    """The offset after the last entry of ``entries`` (a v2 batch: base + lastOffsetDelta; magic 0/1 messages:
    the last message's offset)."""
    pos, last = 0, -1
    while pos < len(entries):
        offset, size = struct.unpack_from(">qi", entries, pos)
        last = offset + struct.unpack_from(">i", entries, pos + 23)[0] if entries[pos + 16] == 2 else offset
        pos += 12 + size
    return last + 1


class Broker:
    """A log directory: partitions written with :meth:`partition`, checkpoints with :meth:`close`."""

    def __init__(self, root: Path, name: str):
        self.dir = root / name
        self.dir.mkdir(parents=True)
        self.hw: list[tuple[str, int, int]] = []
        self.recovery: list[tuple[str, int, int]] = []

    def partition(self, topic: str, partition: int, segments: list[list[bytes]], *,
                  epochs: list[tuple[int, int]] | None, hw: int | None) -> Path:
        """Segments (each a list of batches, named by its first batch's base offset), the leader epoch checkpoint
        (None: none), the high watermark (None: no entry)."""
        part = self.dir / f"{topic}-{partition}"
        part.mkdir()
        end = 0
        for seg in segments:
            base = struct.unpack_from(">q", seg[0])[0]
            (part / f"{base:020d}.log").write_bytes(b"".join(seg))
            end = _end_offset(seg[-1])
        if epochs is not None:
            lines = ["0", str(len(epochs)), *(f"{e} {s}" for e, s in epochs)]
            (part / "leader-epoch-checkpoint").write_text("\n".join(lines) + "\n")
        if hw is not None:
            self.hw.append((topic, partition, hw))
        self.recovery.append((topic, partition, end))
        return part

    def close(self) -> Path:
        for name, entries in (("replication-offset-checkpoint", self.hw),
                              ("recovery-point-offset-checkpoint", self.recovery)):
            lines = ["0", str(len(entries)), *(f"{t} {p} {o}" for t, p, o in entries)]
            (self.dir / name).write_text("\n".join(lines) + "\n")
        return self.dir
