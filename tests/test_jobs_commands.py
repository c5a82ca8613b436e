"""``--jobs`` on the other commands that take a log directory (issue 23 item 4): stats and txn give the same output,
byte for byte, and the same exit code with one worker or several, run as a user runs them; the forked pool of
:func:`kdump.jobs.ordered_map` answers in order, raises a worker's exception in its turn, and outlives a
worker that dies."""
from __future__ import annotations

from pathlib import Path

import pytest

from kdump.format.v2_builder import RecordBatchBuilder
from kdump.write.segment import end_txn_marker_batch, write_segment

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
                                     ["txn", "--format", "json"]])
def test_same_output_with_any_number_of_jobs(tmp_path, command):
    logs = _log_dir(tmp_path)
    _transactions(logs)
    one = _run(tmp_path, *command, "--jobs", "1", "logs")
    assert b"payments-1" in one.stdout and b"orders-4" in one.stdout
    for jobs in ("2", "3"):
        many = _run(tmp_path, *command, "--jobs", jobs, "logs")
        assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr)


def _square_or_fail(i):
    if i == 5:
        raise ValueError(f"unit {i} failed")
    return [i * i] * i  # results of several sizes


def test_the_forked_pool_answers_in_order_and_raises_in_turn(monkeypatch):
    from kdump import jobs as parallel
    monkeypatch.setattr(parallel, "can_fork", lambda: True)  # (the suite may have left a thread running)
    calls = [(i,) for i in range(12) if i != 5]
    done: list[int] = []
    sizes = [i % 4 for i in range(len(calls))]
    assert parallel.ordered_map(_square_or_fail, calls, 3, done=done.append, sizes=sizes) == \
        [_square_or_fail(*c) for c in calls]
    assert done == list(range(len(calls)))
    done.clear()
    with pytest.raises(ValueError, match="unit 5 failed"):
        parallel.ordered_map(_square_or_fail, [(i,) for i in range(12)], 2, done=done.append)
    assert done == [0, 1, 2, 3, 4]  # the results before it were given, none after


def _die(i):
    import os
    if i == 1:
        os._exit(3)  # a worker killed mid-unit (the OOM killer, kill -9)
    return i


def test_a_worker_that_dies_is_an_error_not_a_hang(monkeypatch):
    from kdump import jobs as parallel
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    with pytest.raises(RuntimeError, match="ended before its result"):
        parallel.ordered_map(_die, [(0,), (1,)], 2)


def _note(path, name):
    with open(path, "a") as f:
        f.write(name + "\n")
    return name


def test_the_forked_pool_starts_the_largest_first(tmp_path):
    from kdump import jobs as parallel
    log = str(tmp_path / "started")
    calls = [(log, "a"), (log, "b"), (log, "c")]
    assert list(parallel._forked_results(_note, calls, 1, parallel.largest_first([1, 5, 3]))) == ["a", "b", "c"]
    assert open(log).read().split() == ["b", "c", "a"]


@pytest.mark.parametrize("command", [["dump"], ["dump", "--deep-iteration", "--print-data-log", "-v"],
                                     ["dump", "--deep-iteration", "--format", "json"],
                                     ["dump", "--from-offset", "120", "--to-offset", "320", "--deep-iteration"]])
def test_dump_gives_the_same_output_with_any_number_of_jobs(tmp_path, command):
    """Damaged and torn partitions (errors on stderr, and in the JSON stream), a checkpoint passed over (-v), a seek."""
    _log_dir(tmp_path)
    (tmp_path / "logs" / "orders-2" / "00000000000000000999.log").write_bytes(b"not a segment at all")
    one = _run(tmp_path, *command, "--jobs", "1", "logs")
    assert b"orders-4" in one.stdout and b"orders-1" in one.stdout
    if "--from-offset" not in command:  # (a seek passes over the segment at 999)
        assert one.returncode == 1 and b"999.log: at byte 0: not a Kafka log segment" in one.stderr
    for jobs in ("2", "3"):
        many = _run(tmp_path, *command, "--jobs", jobs, "logs")
        assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr)
    assert not [p for p in Path("/tmp").glob(".kdump-dump.*") if str(tmp_path) in p.read_text(errors="replace")]


def test_format_errors_come_back_whole_from_a_worker():
    """A worker's results carry FormatErrors (dump's FileResult, a Damage): through pickle with their fields."""
    import pickle

    from kdump.errors import FormatError
    from kdump.read.damage import Damage
    for error in (FormatError("crc-mismatch", "CRC differs", position=12),
                  Damage("range", "entry-size-invalid", "a size of -1", 40, 90, file="x.log", resumed=True)):
        back = pickle.loads(pickle.dumps(error))
        assert type(back) is type(error) and vars(back) == vars(error) and str(back) == str(error)
