"""``--jobs`` on the other commands that take a log directory (issue 23 item 4): stats, txn and dump give the same
output, byte for byte, and the same exit code with one worker or several, run as a user runs them."""
from __future__ import annotations

from pathlib import Path

import pytest

from kdump.format.v2_builder import RecordBatchBuilder
from kdump.writer import end_txn_marker_batch, write_segment

from test_jobs import _log_dir, _run


def _transactions(logs: Path) -> None:
    """payments-0 and payments-1: producer 7 commits one transaction, producer 8 leaves one open; keys repeat."""
    for p in range(2):
        part = logs / f"payments-{p}"
        part.mkdir()
        batches = []
        for i, pid in enumerate((7, 8, 7)):
            b = RecordBatchBuilder(i * 3, 0, producer_id=pid, producer_epoch=0, base_sequence=i,
                                   is_transactional=True)
            for j in range(3):
                b.append(i * 3 + j, 1_700_000_000_000 + i, b"key-%d" % j, None if j == 2 else b"v")
            batches.append(b.build())
        batches.insert(2, end_txn_marker_batch(6 + p, 7, 0, True, 1, 1_700_000_000_000)) if p else None
        write_segment(part / "00000000000000000000.log", batches)


@pytest.mark.parametrize("command", [["stats"], ["stats", "--format", "json", "--memory", "1k"], ["txn"],
                                     ["txn", "--format", "json"], ["dump"], ["dump", "--deep-iteration"],
                                     ["dump", "--deep-iteration", "--print-data-log", "--format", "json"]])
def test_same_output_with_any_number_of_jobs(tmp_path, command):
    logs = _log_dir(tmp_path)
    _transactions(logs)
    one = _run(tmp_path, *command, "--jobs", "1", "logs")
    assert b"payments-1" in one.stdout and b"orders-4" in one.stdout
    for jobs in ("2", "3"):
        many = _run(tmp_path, *command, "--jobs", jobs, "logs")
        assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr)
