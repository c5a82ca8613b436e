"""Hostile input for ``verify --deep``: mutated corpus and fixture files (bit flips, truncation, huge and
tiny size fields, zero fill, spliced and deleted bytes, header and record changes with the CRC recomputed,
decompression bombs). For every case: no exception escapes, nothing hangs, memory stays bounded, and a
file whose CRC-protected bytes changed (or that was cut or spliced off an entry boundary) gets a finding.

A short deterministic run (fixed seeds); the large campaign is ``bench/fuzz_verify.py`` (bench/RESULTS.md).
"""
import random
import signal
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import pytest

from corpus import CORPUS, FIXTURES
from kdump.report.findings import ERROR, WARNING
from kdump.verify import VerifyOptions, verify_one
from tests.support.mutate import Mutator, entries

pytestmark = pytest.mark.usefixtures("backend")  # the compiled and the pure record decoder

MAX_BATCH = 1 << 20  # bombs decompress to 4 MiB: above it
BOMB = 4 << 20
OPTIONS = VerifyOptions(deep=True, max_batch_bytes=MAX_BATCH)

# Sound inputs of every kind (magic 0/1/2, every codec, control/transactional/idempotent, compacted),
# kept small so that the run stays short.
SOURCES = [
    CORPUS / "kafka-generated/v0-gzip/00000000000000000000.log",
    CORPUS / "kafka-generated/v1-snappy-createtime/00000000000000000000.log",
    CORPUS / "kafka-generated/v2-transactional/00000000000000000000.log",
    CORPUS / "kafka-generated/v2-compacted/00000000000000000000.log",
    CORPUS / "broker-written/fetch-v0-gzip-0.8.2.1/00000000000000000041.log",
    CORPUS / "broker-written/fetch-v1-gzip-none-gzip/00000000000000000001.log",
    CORPUS / "broker-written/kraft-bootstrap-checkpoint/bootstrap.checkpoint",
    FIXTURES / "generated/mixed-magic/00000000000000001000.log",
    FIXTURES / "generated/v2-control-all-types/00000000000000000000.log",
    FIXTURES / "generated/v2-idempotent/00000000000000000000.log",
    FIXTURES / "generated/v2-lz4-logappendtime/00000000000000000000.log",
    FIXTURES / "generated/v1-lz4-createtime/00000000000000000000.log",
    FIXTURES / "corrupt/v2-zero-hole/00000000000000000000.log",
]


@contextmanager
def deadline(seconds: int, what: str):
    """Fail instead of hanging (SIGALRM; the suite runs on Linux)."""
    def on_alarm(signum, frame):
        raise TimeoutError(f"verify did not finish within {seconds} s on {what}")
    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run(tmp_path: Path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    report = verify_one(path, OPTIONS)
    assert report.io_error is None
    return report


def problems(report):
    return [f for f in report.findings if f.severity in (ERROR, WARNING)]


def test_sources_are_sound_to_start_with(tmp_path):
    for src in SOURCES:
        if "corrupt" in src.parts:
            continue
        report = verify_one(src, OPTIONS)
        assert problems(report) == [], src


@pytest.mark.parametrize("src", SOURCES, ids=lambda p: f"{p.parent.name}")
def test_mutations(tmp_path, src):
    data = src.read_bytes()
    sound = "corrupt" not in src.parts
    mutator = Mutator(data, bomb_bytes=BOMB)
    rnd = random.Random(f"kdump-fuzz-{src.parent.name}")
    cases = 0
    for kind in Mutator.KINDS:
        for _ in range(6 if kind != "bomb" else 1):
            m = mutator.mutate(rnd, kind)
            with deadline(20, f"{src.parent.name} {m.kind} {m.detail}"):
                report = run(tmp_path, src.name, m.data)
            cases += 1
            found = problems(report)
            if sound and m.mandatory:
                assert found, f"{m.kind} {m.detail}: bytes under a CRC changed but verify found nothing"
            if m.expect_code:
                assert m.expect_code in {f.code for f in found}, (m.kind, m.detail, found)
    assert cases == 6 * (len(Mutator.KINDS) - 1) + 1


def test_one_flipped_byte_in_the_first_batch_leaves_every_later_batch_verified(tmp_path):
    """Issue: a file with one flipped byte in its first batch must still have every later batch verified."""
    src = FIXTURES / "generated/v2-gzip-createtime/00000000000000000000.log"
    data = src.read_bytes()
    ents = entries(data)
    assert len(ents) >= 3
    rnd = random.Random(7)
    first = ents[0]
    for _ in range(40):
        # any byte of the first batch from its size field on (the size field included)
        i = rnd.randrange(first.position + 8, first.position + first.size)
        buf = bytearray(data)
        buf[i] ^= 1 << rnd.randrange(8)
        report = run(tmp_path, src.name, bytes(buf))
        # the other batches all verify: the batch count covers them and no finding lies beyond the first
        assert report.batches >= len(ents) - 1, i
        beyond = [f for f in problems(report) if f.position is not None and f.position >= ents[1].position]
        assert beyond == [], (i, beyond)
        assert problems(report), i


def test_bombs_stay_within_the_memory_limit(tmp_path):
    """A 64 MiB decompression bomb with a 1 MiB limit: refused without allocating its size."""
    src = FIXTURES / "generated/v2-none-createtime/00000000000000000000.log"
    mutator = Mutator(src.read_bytes(), bomb_bytes=64 << 20)
    rnd = random.Random(3)
    for _ in range(4):
        m = mutator.mutate(rnd, "bomb")
        path = tmp_path / src.name
        path.write_bytes(m.data)
        tracemalloc.start()
        try:
            report = verify_one(path, OPTIONS)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert "batch-too-large" in {f.code for f in report.findings}, m.detail
        assert peak < 24 << 20, f"{m.detail}: peak {peak} bytes traced"


def test_huge_declared_sizes_do_not_allocate(tmp_path):
    """Entries declaring up to 2 GiB in a small file, and a whole file of random bytes: quick, small."""
    rnd = random.Random(11)
    blobs = [rnd.randbytes(300_000), bytes(12) + b"\x7f\xff\xff\xff" + rnd.randbytes(5000)]
    for blob in blobs:
        tracemalloc.start()
        start = time.perf_counter()
        try:
            report = run(tmp_path, "00000000000000000000.log", blob)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert problems(report)
        assert time.perf_counter() - start < 30
        assert peak < 16 << 20
