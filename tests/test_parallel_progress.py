"""Progress advances under --jobs: what the workers report reaches the parent's bar as they go (a few MiB at a
time), not once per unit when it ends (a log directory of a few large partitions stood at 0 until the end)."""
import multiprocessing
import os
import shutil
from pathlib import Path

import pytest

from kdump import jobs as parallel
from kdump.read.scan import scan
from kdump.stats.counts import stats_paths
from kdump.verify import VerifyOptions, verify_paths

ROOT = Path(__file__).resolve().parent.parent


def in_a_forked_child(body) -> None:
    """Run ``body`` in a forked child and raise what it raised: a child has one thread whatever this test process
    has (the suite's Spark session starts a JVM gateway's threads, and a process with threads does not fork its
    workers: then progress comes a unit at a time), so the forked workers' path is the one tested."""
    ctx = multiprocessing.get_context("fork")
    failures = ctx.Queue()

    def run():
        try:
            body()
            failures.put(None)
        except BaseException as e:  # (a failed assert included: sent to the parent as text)
            failures.put(f"{type(e).__name__}: {e}")

    child = ctx.Process(target=run)
    child.start()
    failure = failures.get(timeout=300)
    child.join(60)
    assert failure is None, failure


def _reporting(unit, *, progress):
    for n in (10, 20, 30):
        progress(n * unit)
    return unit


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers report through their pipes")
def test_workers_report_as_they_go(monkeypatch):
    monkeypatch.setattr(parallel, "_PROGRESS_BYTES", 1)  # every report sent (the workers are forked: they see it)

    def body():
        assert parallel.can_fork()
        seen = []
        assert parallel.ordered_map(_reporting, [(1,), (2,), (3,)], 3, progress=seen.append) == [1, 2, 3]
        assert sorted(seen) == sorted(n * unit for unit in (1, 2, 3) for n in (10, 20, 30))
        seen.clear()
        assert parallel.ordered_map(_reporting, [(1,), (2,)], 1, progress=seen.append) == [1, 2]
        assert seen == [10, 20, 30, 20, 40, 60]
    in_a_forked_child(body)


def _alone_and_pooled(run) -> tuple[list[int], list[int]]:
    """What ``run(report, jobs)`` reports to its progress callback in one process, and with two workers."""
    alone: list[int] = []
    pooled: list[int] = []
    run(alone.append, 1)
    run(pooled.append, 2)
    return alone, pooled


@pytest.fixture
def log_dir(tmp_path):
    for name in ("v2-none-createtime", "v2-gzip-createtime", "v1-lz4-createtime"):
        shutil.copytree(ROOT / "fixtures/generated" / name, tmp_path / f"{name}-0")
    return tmp_path


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers report through their pipes")
def test_stats_and_verify_progress_under_jobs(log_dir, monkeypatch):
    monkeypatch.setattr(parallel, "_PROGRESS_BYTES", 1)

    def body():
        assert parallel.can_fork()
        total = sum(os.path.getsize(p) for p in log_dir.rglob("*.log"))
        groups = scan([log_dir]).segment_groups()
        alone, pooled = _alone_and_pooled(lambda report, jobs: stats_paths(groups, progress=report, jobs=jobs))
        assert sum(pooled) == sum(alone) == total
        assert len(pooled) == len(alone) > len(groups)  # each batch's bytes, not one report per partition
        alone, pooled = _alone_and_pooled(
            lambda report, jobs: verify_paths([log_dir], VerifyOptions(deep=True), progress=report, jobs=jobs))
        assert sum(pooled) == sum(alone) > 0
    in_a_forked_child(body)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers report through their pipes")
def test_txn_and_index_check_progress_under_jobs(log_dir, monkeypatch):
    """txn and index check --deep, the other commands with --jobs and a bar, report from their workers as they go:
    txn each batch's bytes (adding up to the segments' sizes, as in one process), index check each log it walks."""
    from kdump.index.check import check_paths
    from kdump.txn import transactions
    monkeypatch.setattr(parallel, "_PROGRESS_BYTES", 1)

    def body():
        assert parallel.can_fork()
        total = sum(os.path.getsize(p) for p in log_dir.rglob("*.log"))
        groups = scan([log_dir]).segment_groups()
        alone, pooled = _alone_and_pooled(lambda report, jobs: transactions(groups, progress=report, jobs=jobs))
        assert sum(pooled) == sum(alone) == total
        assert len(pooled) == len(alone) > len(groups)  # each batch's bytes, not one report per partition
        alone, pooled = _alone_and_pooled(
            lambda report, jobs: check_paths([log_dir], deep=True, progress=report, jobs=jobs))
        assert sum(pooled) == sum(alone) > 0
        assert len(pooled) == len(alone)  # as in one process (each segment's walk), not once per partition at its end
    in_a_forked_child(body)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers report through their pipes")
def test_index_rebuild_progress_under_jobs(tmp_path, monkeypatch):
    """index rebuild -j of partition directories: each worker reports each segment it recovers as it goes (two per
    partition here), adding up to the logs' sizes, as the rebuild in one process does."""
    from support.segments import T0, data_batch, write_log

    from kdump.index.rebuild_jobs import rebuild_directories
    monkeypatch.setattr(parallel, "_PROGRESS_BYTES", 1)
    parts = []
    for p in range(2):
        d = tmp_path / f"t-{p}"
        for base in (0, 50):
            write_log(d, base, [data_batch(base + i * 10, 10, ts=T0 + base + i) for i in range(5)])
        parts.append(str(d))

    def body():
        assert parallel.can_fork()
        total = sum(os.path.getsize(p) for p in tmp_path.rglob("*.log"))
        pooled: list[int] = []
        outcomes = rebuild_directories(parts, index_interval_bytes=4096, force=True, jobs=2, progress=pooled.append)
        assert all(isinstance(o, list) and len(o) == 2 for o in outcomes.values()), outcomes
        assert sum(pooled) == total and len(pooled) == 4  # a report per segment, not one per partition at its end
    in_a_forked_child(body)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers report through their pipes")
def test_dump_progress_under_jobs(log_dir, monkeypatch):
    """dump -j 2 to a file: the bar advances by each batch the workers write, as they go (more reports than
    partitions), by the same bytes as the dump in one process."""
    import kdump.commands.progress as progress
    from support.cli import run_cli
    monkeypatch.setattr(parallel, "_PROGRESS_BYTES", 1)
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    monkeypatch.setitem(progress.SPEEDS, "dumping", 1)  # a bar for any size
    done: list[int] = []

    class Bar:
        def __init__(self, total, label, color):
            pass

        def __enter__(self):
            return self

        def advance(self, n):
            done.append(n)

        def __exit__(self, *exc):
            pass
    monkeypatch.setattr(progress, "Bar", Bar)

    def body():
        assert parallel.can_fork()
        alone = run_cli("dump", "--deep-iteration", log_dir)
        one = list(done)
        done.clear()
        pooled = run_cli("dump", "--deep-iteration", "-j", "2", log_dir)
        assert pooled.exit_code == alone.exit_code == 0 and pooled.stdout == alone.stdout
        assert sum(done) == sum(one) > 0 and len(done) == len(one) > 3  # per batch, not per partition
    in_a_forked_child(body)


def _recording_console(real):
    """rich's Console, except the bar's (on stderr), which writes to a string as to a terminal: the real bar is
    drawn, where no terminal sees it."""
    def make(*args, **kwargs):
        if not kwargs.pop("stderr", False):
            return real(*args, **kwargs)
        import io
        return real(*args, file=io.StringIO(), force_terminal=True, **kwargs)
    return make


@pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers report through their pipes")
@pytest.mark.parametrize("label, command", [
    ("dumping", ("dump", "--deep-iteration", "-j", "2")),
    ("rebuilding", ("index", "rebuild", "--force", "-j", "2")),
])
def test_the_bar_ends_where_the_work_does_under_jobs(log_dir, monkeypatch, label, command):
    """Under -j 2 the bar's total is the sizes the --jobs map was given (the units' segments), and what the
    workers report advances it there, as they go: a total counted apart (every file of the directories, the
    indexes a dump passes over and a rebuild does not read among them) left the bar short of its end. The
    real bar (kdump.commands.progress.Bar, rich's Progress) drawn to a recording console: it must not start a
    refresh thread, with which the process no longer forks its workers (progress then came a unit at a time)."""
    import rich.console

    import kdump.commands.progress as progress
    from support.cli import run_cli
    monkeypatch.setattr(parallel, "_PROGRESS_BYTES", 1)
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    monkeypatch.setitem(progress.SPEEDS, label, 1)  # a bar for any size
    monkeypatch.setattr(rich.console, "Console", _recording_console(rich.console.Console))
    bars: list = []
    advances: list[int] = []
    forkable: list[bool] = []

    class Recorded(progress.Bar):
        def __enter__(self):
            bars.append(self)
            return super().__enter__()

        def advance(self, n):
            advances.append(n)
            forkable.append(parallel.can_fork())  # the bar starts no thread that would keep the workers unforked
            super().advance(n)
    monkeypatch.setattr(progress, "Bar", Recorded)
    partitions = [str(p) for p in sorted(log_dir.iterdir())]
    assert run_cli("index", "rebuild", *partitions).exit_code == 0  # each partition has its indexes beside its log
    logs = sum(os.path.getsize(p) for p in log_dir.rglob("*.log"))
    assert sum(os.path.getsize(p) for p in log_dir.rglob("*") if p.is_file()) > logs

    def body():
        assert parallel.can_fork()
        for seen in (bars, advances, forkable):
            seen.clear()  # (the rebuild above drew a bar too)
        result = run_cli(*command, *partitions)
        assert result.exit_code == 0, result.output
        (bar,) = bars
        (task,) = bar._bar.tasks
        assert task.total == logs
        assert sum(advances) == task.completed == logs
        assert len(advances) >= len(partitions)  # from the workers as they go, not one report at the end
        assert forkable and all(forkable)
    in_a_forked_child(body)
