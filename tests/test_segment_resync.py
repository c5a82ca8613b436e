"""Resynchronisation: finding the next whole, CRC-valid entry at any byte position, in bounded memory."""
import os
import random
import struct
import tracemalloc
import zlib

import crc32c
import pytest

from kdump.read import segment
from kdump.read.segment import Prober
from kdump.write.segment import RecordBatchBuilder, legacy_message

TS = 1_700_000_000_000


def batch(base=0, n=3) -> bytes:
    b = RecordBatchBuilder(base_offset=base)
    for off in range(base, base + n):
        b.append(off, TS + off, b"k", b"value %d" % off)
    return b.build()


@pytest.fixture
def probe(tmp_path):
    opened = []

    def make(data: bytes, max_batch_bytes: int = 1 << 20) -> Prober:
        path = tmp_path / "x.log"
        path.write_bytes(data)
        f = open(path, "rb")
        opened.append(f)
        return Prober(f.fileno(), len(data), max_batch_bytes)
    yield make
    for f in opened:
        f.close()


def test_the_first_valid_entry_after_garbage(probe):
    junk = random.Random(1).randbytes(5000)
    b = batch()
    p = probe(junk + b + batch(3))
    assert p.find_next(0) == len(junk)
    assert p.find_next(len(junk) + 1) == len(junk) + len(b)
    assert p.find_next(len(junk) + len(b) + 1) is None


@pytest.mark.parametrize("shift", [-70, -61, -17, -16, -1, 0, 1, 5])
def test_entries_across_window_boundaries(probe, monkeypatch, shift):
    monkeypatch.setattr(segment, "WINDOW", 4096)
    junk = b"\xee" * (4096 + shift)
    p = probe(junk + batch())
    assert p.find_next(0) == len(junk)


def test_legacy_entries_are_found_and_the_earliest_wins(probe):
    junk = b"\xee" * 300
    v0 = legacy_message(7, 0, b"k", b"v")
    v1 = legacy_message(8, 1, b"k", b"v", TS)
    p = probe(junk + v0 + v1 + batch(9))
    assert p.find_next(0) == len(junk)
    assert p.find_next(len(junk) + 1) == len(junk) + len(v0)
    assert p.find_next(len(junk) + len(v0) + 1) == len(junk) + len(v0) + len(v1)


def test_entries_with_a_bad_crc_are_passed_over(probe):
    bad = bytearray(batch(0))
    bad[-1] ^= 1
    good = batch(3)
    p = probe(b"\xee" * 100 + bytes(bad) + good)
    assert p.find_next(0) == 100 + len(bad)


def test_zero_filled_stretches_are_crossed(probe):
    zeros = bytes(5 << 20)
    p = probe(zeros + batch())
    assert p.find_next(0) == len(zeros)
    assert p.zeros_to_end(0) is False and p.zeros_to_end(len(zeros) + len(batch())) is True


def test_a_candidate_above_the_batch_limit_is_not_taken(probe):
    big = batch(0, 300)
    p = probe(b"\xee" * 10 + big + batch(300), max_batch_bytes=1024)
    assert p.find_next(0) == 10 + len(big)


def test_plausible_framing(probe):
    b = batch()
    cut = bytearray(batch(3))
    p = probe(b + b"\xee" * 100 + b + bytes(cut[:40]) + bytes(64))
    assert p.plausible(0)  # a sane header
    assert not p.plausible(len(b))  # garbage
    assert p.plausible(len(b) + 100 + len(b) + 40)  # zeros to the end
    assert p.plausible(len(b) + 100 + len(b) + 40 + 50)  # too short for an entry
    # a sane header cut off by the end of the file is a truncated tail, i.e. still framing
    p2 = probe(b + bytes(cut[:61]))
    assert p2.plausible(len(b))


def test_crc_of_a_large_entry_is_computed_in_chunks(probe, monkeypatch):
    monkeypatch.setattr(segment, "CHUNK", 1000)
    b = batch(0, 500)
    p = probe(b)
    head = b[:61]
    assert p.crc_ok(0, head)
    assert p.crc_range(21, len(b), crc32c.crc32c) == crc32c.crc32c(b[21:])
    legacy = legacy_message(0, 1, b"k", os.urandom(5000), TS)
    p = probe(legacy)
    assert p.crc_ok(0, legacy[:61])
    assert p.crc_range(16, len(legacy), zlib.crc32) == zlib.crc32(legacy[16:])


def test_scanning_stays_small_in_memory(probe):
    """1 MiB of noise holding a candidate that claims 16 MiB (sane header, wrong CRC), then zeros: the
    candidate's CRC is computed over 16 MiB without holding them, and the scan holds a window at a time."""
    rnd = random.Random(5)
    noise = bytearray(rnd.randbytes(1 << 20))
    fake = bytearray(batch(0, 1))
    struct.pack_into(">i", fake, 8, (16 << 20) - 12)
    struct.pack_into(">i", fake, 57, 0)  # count 0: no minimum size for its records
    noise[1000:1000 + len(fake)] = fake
    data = bytes(noise) + bytes(17 << 20)
    p = probe(data + batch(), max_batch_bytes=64 << 20)
    tracemalloc.start()
    try:
        assert p.find_next(0) == len(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20
