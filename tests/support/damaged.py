"""Small segments with damage that only the record-level (``--deep``) checks can see, built with kdump's writer."""
from __future__ import annotations

from kdump.write.segment import RecordBatchBuilder
from support.mutate import Entry, _refresh_crc


def sound_then_corrupt_gzip() -> tuple[bytes, int]:
    """A sound uncompressed batch of producer 7 (offset 0), then a gzip batch of producer 9 (offsets 1-3) whose
    compressed bytes are damaged under a correct CRC: reading its records fails. Returns (the segment's bytes,
    the gzip batch's position). (kdump's writer would refuse to write it: it reads back what it wrote.)"""
    sound = RecordBatchBuilder(0, producer_id=7, producer_epoch=0, base_sequence=0)
    sound.append(0, 1_700_000_000_000, b"k0", b"v0")
    bad = RecordBatchBuilder(1, codec=1, producer_id=9, producer_epoch=0, base_sequence=0)
    for off in range(1, 4):
        bad.append(off, 1_700_000_000_000 + off, b"k%d" % off, b"value %d" % off)
    first = sound.build()
    data = bytearray(first + bad.build())
    data[-10:] = b"\xff" * 10
    _refresh_crc(data, Entry(len(first), len(data) - len(first), 2))
    return bytes(data), len(first)
