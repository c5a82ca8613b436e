"""Counted nouns in kdump's own text agree with their number ("1 file checked", "kept 1 batch"): one helper,
kdump.render.words, used by every report (Kafka's DumpLogSegments text keeps its own words)."""
from __future__ import annotations

import pytest
from support.cli import run_cli
from support.segments import data_batch, marker, write_log

from kdump.render.words import count, plural


@pytest.mark.parametrize(("n", "noun", "expected"), [
    (0, "batch", "0 batches"), (1, "batch", "1 batch"), (2, "batch", "2 batches"), (1, "file", "1 file"),
    (3, "file", "3 files"), (1, "offset index entry", "1 offset index entry"),
    (2, "offset index entry", "2 offset index entries"), (2, "source batch", "2 source batches"),
    (1, "byte", "1 byte"), (1024, "record", "1024 records")])
def test_count_agrees_with_the_number(n, noun, expected):
    assert count(n, noun) == expected


def test_grouped_numbers_and_plural_alone():
    assert count(1_024, "byte", grouped=True) == "1,024 bytes"
    assert plural("transaction", 1) == "transaction" and plural("key", 2) == "keys"


def _partition(tmp_path, entries) -> str:
    directory = tmp_path / "orders-0"
    directory.mkdir()
    return write_log(directory, 0, entries)


@pytest.fixture
def one_batch(tmp_path):
    """A segment holding one batch of one record."""
    return _partition(tmp_path, [data_batch(0, 1)])


def test_verify_says_one_file_checked(one_batch):
    result = run_cli("verify", one_batch)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-1] == "1 file checked, 0 with findings: 0 errors, 0 warnings"


def test_salvage_says_one_batch_kept(one_batch, tmp_path):
    result = run_cli("salvage", one_batch, "-o", str(tmp_path / "out") + "/")
    assert result.exit_code == 0, result.output
    assert ": kept 1 batch, 1 record, " in result.stdout


def test_index_rebuild_says_one_batch(one_batch, tmp_path):
    rebuilt = run_cli("index", "rebuild", "-o", str(tmp_path / "ix"), one_batch)
    assert rebuilt.exit_code == 0, rebuilt.output
    assert rebuilt.stdout.splitlines()[0].endswith(": 1 batch, 0 offset index entries, 1 time index entry, "
                                                   "0 aborted transactions")


def test_txn_says_one_transaction_of_one_record(tmp_path):
    log = _partition(tmp_path, [data_batch(0, 1, pid=7, epoch=0, seq=0, txn=True), marker(1, 7, commit=True)])
    result = run_cli("txn", log)
    first, _, txn = result.stdout.splitlines()[:3]
    assert "1 segment, " in first and "; 1 transaction: 1 committed" in first
    assert txn.endswith("COMMIT (marker at 1), 1 record, first timestamp 1700000000000, age 0 ms")
