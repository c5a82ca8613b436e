"""Every command sees a directory through kdump.read.logdir: the same segments, the same unknown files.

A directory holding ``5.log`` (a segment with base offset 5: Kafka's offsetFromFileName reads any digits) and
``notes.log`` (no segment: no base offset in its name) used to be read five ways (verify checked both, dump
failed on notes.log, convert took 5.log, index check checked nothing, index rebuild found no segments)."""
from __future__ import annotations

import os
import threading

from support.cli import run_cli
from kdump.convert import ConvertOptions, convert_directory, segments_in
from kdump.index.check import check_paths
from kdump.index.rebuild import rebuild_directory
from kdump.verify import verify_paths

from support.segments import data_batch, write_log


def _partition(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    with open(part / "5.log", "wb") as f:
        f.write(data_batch(5, 3) + data_batch(8, 2))
    (part / "notes.log").write_text("operator notes: this is no segment\n")
    return part



def test_five_commands_one_answer(tmp_path):
    part = _partition(tmp_path)
    seg, notes = str(part / "5.log"), str(part / "notes.log")

    dumped = run_cli("dump", part)
    assert dumped.stdout.splitlines()[:2] == [f"Dumping {seg}", "Log starting offset: 5"]
    assert dumped.stdout.count("baseOffset:") == 2
    assert f"Ignoring unknown file {notes}" in dumped.stderr  # named, not read as a segment
    assert dumped.exit_code == 0

    # (then index check's companion checks: the segment's .index is missing, a warning as in index check)
    reports = verify_paths([part])
    assert [r.path for r in reports] == [seg, seg[:-len(".log")] + ".index"]
    assert reports[0].batches == 2 and reports[0].status == "ok"
    assert [f.code for f in reports[1].findings] == ["index-missing"]
    assert run_cli("verify", part).exit_code == 0

    assert segments_in(part) == [seg]
    out = tmp_path / "converted"
    results = convert_directory(part, out, ConvertOptions(2))
    assert [os.path.basename(r.output) for r in results] == ["5.log"]
    assert sorted(os.listdir(out)) == ["5.index", "5.log", "5.timeindex"]  # indexes named after the segment

    reports = check_paths([part], deep=True)
    assert [(os.path.basename(r.path), [f.code for f in r.findings]) for r in reports] == [
        ("5.index", ["index-missing"])]

    (tmp_path / "idx").mkdir()
    (tmp_path / "idx2").mkdir()
    outcomes = rebuild_directory(part, tmp_path / "idx")
    assert [(o.recovery.base_offset, o.recovery.batches) for o in outcomes] == [(5, 2)]
    assert sorted(os.listdir(tmp_path / "idx")) == ["5.index", "5.timeindex"]
    rebuilt = run_cli("index", "rebuild", "--out", tmp_path / "idx2", part)
    assert rebuilt.exit_code == 0 and "5.log: 2 batches" in rebuilt.stdout
    assert run_cli("index", "rebuild", part).exit_code == 0  # beside the segment this time
    assert sorted(os.listdir(part)) == ["5.index", "5.log", "5.timeindex", "notes.log"]
    assert [(os.path.basename(r.path), r.status) for r in check_paths([part], deep=True)] == [
        ("5.index", "ok"), ("5.timeindex", "ok")]


def test_a_named_file_is_still_read_by_its_suffix(tmp_path):
    part = _partition(tmp_path)
    result = run_cli("dump", part / "notes.log")  # Kafka's tool dispatches on the suffix: it tries to read it
    assert result.exit_code == 1 and "is not <20-digit base offset>.log" in result.stderr


def _finishes(target, seconds=20):
    done = {}
    worker = threading.Thread(target=lambda: done.update(result=target()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "blocked"
    return done["result"]


def test_commands_refuse_a_fifo_named_like_a_segment(tmp_path):
    part = _partition(tmp_path)
    os.mkfifo(part / "00000000000000000100.log")
    fifo = str(part / "00000000000000000100.log")
    dumped = _finishes(lambda: run_cli("dump", part))
    assert dumped.exit_code == 2 and f"kdump: {fifo}: cannot read: a FIFO (named pipe)" in dumped.stderr
    assert dumped.stdout.count("baseOffset:") == 2
    reports = [r for r in _finishes(lambda: verify_paths([part])) if not r.path.endswith(".index")]  # (index check's)
    assert [(r.path, r.io_error is not None) for r in reports] == [(str(part / "5.log"), False), (fifo, True)]
    assert "FIFO" in reports[1].io_error
    named = _finishes(lambda: run_cli("dump", fifo))
    assert named.exit_code == 2 and "not a regular file" in named.stderr


def test_commands_survive_symlink_loops(tmp_path):
    part = _partition(tmp_path)
    (part / "self").symlink_to(".")
    (part / "parent").symlink_to(tmp_path)
    dumped = _finishes(lambda: run_cli("dump", tmp_path))
    assert dumped.stdout.count("Dumping") == 2  # 5.log once, notes.log once
    reports = _finishes(lambda: verify_paths([tmp_path]))
    assert [os.path.basename(r.path) for r in reports] == ["5.log", "5.index"]  # (the .index: index check's warning)
