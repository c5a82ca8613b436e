"""One judgement of the bytes (issue 29): every command reads a damaged segment's bytes the same way, through the
read layer's one policy (:attr:`kdump.read.damage.Damage.fails`), so that ``dump``, ``verify``, ``stats``, ``txn``
and ``salvage`` exit alike on the same file and none of them loses data without failing.

The inputs are copies of the corpus's Kafka-written segments with the damage a crash or a disk leaves: a torn write
(a batch cut part-way, then the batch written again whole with the ones after it, as a producer's retry after a
broker crash mid-write leaves it), a run of zeros, and Kafka's own crash-cut tail. What each must give is Kafka's
judgement: DumpLogSegments reports a tail of 17 bytes or fewer as ``Found N invalid bytes at the end`` and exits 0
(spec §2.4); anything else it cannot read in the middle of a file is damage."""
from __future__ import annotations

import pytest
from corpus import CORPUS
from support.cli import run_cli

from kdump.read.segment import SegmentReader

pytestmark = pytest.mark.usefixtures("backend")

GEN = CORPUS / "kafka-generated"
NAME = "00000000000000000000.log"


def _segment(case: str) -> tuple[bytes, list[tuple[int, int]]]:
    path = GEN / case / NAME
    with SegmentReader(path) as reader:
        batches = [(b.position, b.size) for b in reader.batches()]
    return path.read_bytes(), batches


def _torn(case: str, batch: int, cut: int | None) -> bytes:
    """The batch ``batch`` of ``case`` cut after ``cut`` bytes (None: half way), then it and every batch after it
    whole."""
    data, batches = _segment(case)
    position, size = batches[batch]
    return data[:position + (size // 2 if cut is None else cut)] + data[position:]


def _zeros_before(case: str, batch: int, n: int) -> bytes:
    data, batches = _segment(case)
    position = batches[batch][0]
    return data[:position] + bytes(n) + data[position:]


def _exits(tmp_path, data: bytes) -> dict[str, int]:
    part = tmp_path / "t-0"
    part.mkdir()
    log = part / NAME
    log.write_bytes(data)
    codes = {name: run_cli(*args, log).exit_code for name, args in
             (("dump", ("dump",)), ("verify", ("verify", "--deep")), ("stats", ("stats",)), ("txn", ("txn",)))}
    codes["salvage"] = run_cli("salvage", log, "-o", tmp_path / "out" / NAME).exit_code
    return codes


CASES = {
    # a magic 0 message cut after 1 or 5 bytes: they are the high bytes of its offset field, all zero
    "torn-v0-after-1-zero-byte": (lambda: _torn("v0-none", 1, 1), 1),
    "torn-v0-after-5-zero-bytes": (lambda: _torn("v0-none", 3, 5), 1),
    "torn-v2-half-way": (lambda: _torn("v2-none", 3, None), 1),
    "torn-v2-after-17-bytes": (lambda: _torn("v2-none", 2, 17), 1),
    # 18 zero bytes at the end: Kafka's tool dies on a size field of 0 (not its "invalid bytes at the end")
    "zero-tail-of-18": (lambda: _segment("v2-none")[0] + bytes(18), 1),
    "zeros-between-batches": (lambda: _zeros_before("v1-gzip-createtime", 2, 40), 1),
    # Kafka's crash-cut tail: 17 bytes or fewer, or a last entry declaring more than remain
    "kafka-tail-of-17-zeros": (lambda: _segment("v2-none")[0] + bytes(17), 0),
    "kafka-tail-cut-last-batch": (lambda: _segment("v2-none")[0][:-30], 0),
}


@pytest.mark.parametrize("case", CASES)
def test_every_command_exits_alike_on_the_same_bytes(case, tmp_path):
    make, expected = CASES[case]
    assert _exits(tmp_path, make()) == dict.fromkeys(("dump", "verify", "stats", "txn", "salvage"), expected)
