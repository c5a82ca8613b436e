"""kdump.read.scan: paths -> partitions -> segments -> work units, once, for every command and the Spark source.

Reference answers come from an independent walk (``os.walk`` and Kafka's naming rule spelled here as a regex), from
the trees the tests build, and from the corpus directories as they are on disk; never from kdump's own walk."""
from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import pytest

from kdump.jobs import WorkUnit, largest_first, work_units
from kdump.read.logdir import FileKind
from kdump.read.scan import Scan, scan

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SEGMENT = re.compile(r"([0-9]+)\.log")  # LogFileUtils: <digits>.log is a segment, its digits the base offset
PARTITION_FILE = re.compile(r"[0-9]+\.(log|index|timeindex|txnindex|snapshot)|[0-9]{20}-[0-9]{10}\.checkpoint"
                            r"|bootstrap\.checkpoint|leader-epoch-checkpoint")


def _segment(path: Path, base: int, n: int) -> None:
    from kdump.format.v2_builder import RecordBatchBuilder
    b = RecordBatchBuilder(base_offset=base)
    for off in range(base, base + n):
        b.append(off, 1_700_000_000_000 + off, b"k%d" % off, b"v%d" % off)
    path.write_bytes(b.build())


def _independent_partitions(top: Path) -> dict[str, list[str]]:
    """directory -> its segment names in offset order, for every directory at or below ``top`` holding a
    partition's files (os.walk in name order; the corpus has no symlinks)."""
    out = {}
    for directory, dirs, files in os.walk(top):
        dirs.sort()
        if any(PARTITION_FILE.fullmatch(f) for f in files):
            segments = [f for f in files if SEGMENT.fullmatch(f)]
            out[directory] = sorted(segments, key=lambda f: int(SEGMENT.fullmatch(f).group(1)))
    return out


# --- the corpus: every partition, in Kafka's order --------------------------------------------------------------
def test_the_corpus_partitions_and_segments_as_an_independent_walk_finds_them():
    found = scan([FIXTURES / "corpus"])
    expected = _independent_partitions(FIXTURES / "corpus")
    assert len(expected) > 20
    assert {p.directory: [os.path.basename(s.log) for s in p.segments] for p in found.partitions} == expected
    # depth first, subdirectories in name order: the order os.walk gives with sorted subdirectories
    assert [p.directory for p in found.partitions] == list(expected)
    logs = [e for e in found.entries if e.kind is FileKind.LOG]
    assert sorted(e.path for e in logs) == sorted(os.path.join(d, s) for d, segs in expected.items() for s in segs)
    assert [e.size for e in logs] == [os.path.getsize(e.path) for e in logs]
    assert found.refused == [] and found.named_files == []


def test_topic_and_partition_from_the_corpus_directory_names():
    found = scan([FIXTURES / "corpus/kafka-generated/internal-topics"])
    assert sorted((p.topic, p.partition, p.key) for p in found.partitions) == [
        ("__cluster_metadata", 0, "__cluster_metadata-0"), ("__consumer_offsets", 0, "__consumer_offsets-0"),
        ("__transaction_state", 0, "__transaction_state-0")]


def test_a_directory_files_in_offset_order_then_subdirectories(tmp_path):
    for name in ("00000000000000000100.log", "5.log", "00000000000000000005.index", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "b-0").mkdir()
    (tmp_path / "a-0").mkdir()
    (tmp_path / "a-0" / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "b-0" / "00000000000000000000.log").write_bytes(b"")
    found = scan([tmp_path])
    assert [os.path.relpath(e.path, tmp_path) for e in found.entries] == [
        "5.log", "00000000000000000005.index", "00000000000000000100.log", "notes.txt",
        "a-0/00000000000000000000.log", "b-0/00000000000000000000.log"]
    assert [os.path.relpath(d.directory, tmp_path) for d in found.directories] == [".", "a-0", "b-0"]


# --- links, loops, FIFOs ----------------------------------------------------------------------------------------
def test_a_file_is_visited_once_per_directory_that_names_it(tmp_path):
    """A segment hard-linked into another partition is that partition's too (issue 21, item 5: linked partitions
    were read once in all); a directory reached twice (a symlink to it, a loop, named again) is visited once."""
    a, b = tmp_path / "t-0", tmp_path / "t-1"
    a.mkdir()
    b.mkdir()
    _segment(a / "00000000000000000000.log", 0, 3)
    os.link(a / "00000000000000000000.log", b / "00000000000000000000.log")  # a hard link in another partition
    (tmp_path / "z-again").symlink_to(a)  # the same directory reached twice (after t-0, in name order)
    (tmp_path / "loop").symlink_to(tmp_path)
    found = scan([tmp_path, a])
    assert [e.path for e in found.entries] == [str(a / "00000000000000000000.log"),
                                               str(b / "00000000000000000000.log")]
    assert [p.directory for p in found.partitions] == [str(a), str(b)]
    assert [s.log for s in found.partitions[1].segments] == [str(b / "00000000000000000000.log")]
    assert found.refused == []


def test_a_file_named_twice_is_visited_twice(tmp_path):
    f = tmp_path / "00000000000000000000.log"
    _segment(f, 0, 2)
    found = scan([f, f])
    assert [(e.path, e.from_dir, e.size) for e in found.named_files] == [(str(f), False, f.stat().st_size)] * 2
    assert found.partitions == []


def test_refused_fifo_loop_dangling_and_missing_without_blocking(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    _segment(part / "00000000000000000000.log", 0, 2)
    os.mkfifo(part / "00000000000000000005.log")
    (part / "x").symlink_to(part / "y")
    (part / "y").symlink_to(part / "x")
    (part / "dangling").symlink_to(part / "nowhere")
    result: dict = {}
    worker = threading.Thread(target=lambda: result.update(found=scan([tmp_path, tmp_path / "missing"])),
                              daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the scan blocked on a FIFO"
    found: Scan = result["found"]
    reasons = {os.path.basename(r.path): r.reason for r in found.refused}
    assert set(reasons) == {"00000000000000000005.log", "x", "y", "dangling", "missing"}
    assert "FIFO" in reasons["00000000000000000005.log"]
    assert "symlink loop" in reasons["x"] and "symbolic link to nothing" in reasons["dangling"]
    assert reasons["missing"] == "No such file or directory"
    (partition,) = found.partitions
    assert [os.path.basename(s.log) for s in partition.segments] == ["00000000000000000000.log"]


def test_depth_one_lists_the_subdirectories_and_no_further(tmp_path):
    for d in ("a-0", "a-1", "a-1/deeper-0"):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "00000000000000000000.log").write_bytes(b"")
    assert [os.path.basename(p.directory) for p in scan([tmp_path], depth=1).partitions] == ["a-0", "a-1"]
    assert [os.path.basename(p.directory) for p in scan([tmp_path]).partitions] == ["a-0", "a-1", "deeper-0"]


# --- kdump's staging directories are never data -------------------------------------------------------------------
def _log_dir_with_staging(root: Path) -> tuple[Path, Path]:
    logs = root / "logs"
    (logs / "orders-0").mkdir(parents=True)
    _segment(logs / "orders-0" / "00000000000000000000.log", 0, 3)
    staged = logs / ".kdump-staging-0123abcd" / "0-0" / "orders-1"  # as kdump.spark.write lays a task's output
    staged.mkdir(parents=True)
    _segment(staged / "00000000000000000000.log", 0, 5)
    return logs, staged


def test_staging_directories_are_passed_over_and_refused_when_named(tmp_path):
    logs, staged = _log_dir_with_staging(tmp_path)
    found = scan([logs])
    assert [os.path.basename(p.directory) for p in found.partitions] == ["orders-0"]
    assert [e.path for e in found.entries] == [str(logs / "orders-0" / "00000000000000000000.log")]
    assert found.staging == [str(logs / ".kdump-staging-0123abcd")]
    for named in (staged.parent.parent, staged, staged / "00000000000000000000.log"):
        (entry,) = scan([named]).entries
        assert entry.refused is not None and "staging" in entry.refused.reason


def test_no_command_reads_a_staging_directory(tmp_path):
    from kdump.dump import entries_to_dump
    from kdump.index.check import check_paths
    from kdump.spark.plan import find_segments
    from kdump.verify import collect
    logs, staged = _log_dir_with_staging(tmp_path)
    assert str(staged) not in {e.path.rsplit(os.sep, 1)[0] for e in entries_to_dump([logs], companions=True)}
    assert [item[0] for kind, item in collect([logs]) if kind == "partition"] == [str(logs / "orders-0")]
    assert not [r for r in check_paths([logs], deep=True) if "staging" in r.path]
    assert [s.location for s in find_segments([str(logs)])] == [str(logs / "orders-0" / "00000000000000000000.log")]


def test_the_remote_lister_passes_over_staging_too(monkeypatch):
    from kdump.spark import plan, remote
    tree = {"mem://b/logs": ["orders-0", ".kdump-staging-1"], "mem://b/logs/orders-0": ["00000000000000000000.log"],
            "mem://b/logs/.kdump-staging-1": ["0-0"], "mem://b/logs/.kdump-staging-1/0-0": ["orders-1"],
            "mem://b/logs/.kdump-staging-1/0-0/orders-1": ["00000000000000000000.log"]}
    monkeypatch.setattr(remote, "is_remote", lambda location: location.startswith("mem://"))
    monkeypatch.setattr(remote, "stat", lambda location, options=None: (
        location in tree or location.endswith(".log"), location in tree, 0 if location in tree else 10))
    monkeypatch.setattr(remote, "listdir", lambda location, options=None: [
        (name, f"{location}/{name}" in tree, 10) for name in tree[location]])
    assert [s.location for s in plan.find_segments(["mem://b/logs"])] == ["mem://b/logs/orders-0/00000000000000000000.log"]
    found = scan(["mem://b/logs"], files=plan.RemoteFiles())  # the same model as a local scan
    assert [(p.key, [s.log for s in p.segments]) for p in found.partitions] == [
        ("orders-0", ["mem://b/logs/orders-0/00000000000000000000.log"])]
    assert found.staging == ["mem://b/logs/.kdump-staging-1"]
    (entry,) = scan(["mem://b/logs/.kdump-staging-1/0-0"], files=plan.RemoteFiles()).entries
    assert "staging" in entry.refused.reason
    with pytest.raises(plan.PathError, match="mem://b/nothing: no such file or directory"):
        plan.find_segments(["mem://b/nothing"])


# --- work units and their order -----------------------------------------------------------------------------------
def test_work_units_by_partition_and_by_segment(tmp_path):
    for p, bases in (("t-0", (0, 10)), ("t-1", (0,))):
        (tmp_path / p).mkdir()
        for i, base in enumerate(bases):
            _segment(tmp_path / p / f"{base:020d}.log", base, 3 + 5 * i)
    size = {str(f): f.stat().st_size for f in tmp_path.rglob("*.log")}
    t0 = [str(tmp_path / "t-0" / f"{b:020d}.log") for b in (0, 10)]
    t1 = [str(tmp_path / "t-1" / f"{0:020d}.log")]
    found = scan([tmp_path])
    assert work_units(found) == [WorkUnit("t-0", str(tmp_path / "t-0"), tuple(t0), size[t0[0]] + size[t0[1]]),
                                 WorkUnit("t-1", str(tmp_path / "t-1"), tuple(t1), size[t1[0]])]
    assert work_units(found.partitions[1:], by="segment") == [WorkUnit("t-1", str(tmp_path / "t-1"), (t1[0],),
                                                                       size[t1[0]])]
    assert [u.segments for u in work_units(found, by="segment")] == [(t0[0],), (t0[1],), (t1[0],)]
    with pytest.raises(ValueError):
        work_units(found, by="file")


def test_largest_first_keeps_ties_in_order():
    assert largest_first([3, 10, 3, 7, 10]) == [1, 4, 3, 0, 2]
    assert largest_first([]) == []


class _Inline:
    """A stand-in for ProcessPoolExecutor that runs each call when submitted and records the order."""

    started: list = []

    def __init__(self, **kwargs):
        pass

    def submit(self, fn, *args):
        _Inline.started.append(args[0])
        from concurrent.futures import Future
        future: Future = Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, **kwargs):
        pass


def test_the_scheduler_starts_the_largest_first_and_answers_in_order(monkeypatch):
    import concurrent.futures

    from kdump import jobs as parallel
    from kdump.jobs import ordered_map
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", _Inline)
    monkeypatch.setattr(parallel, "can_fork", lambda: False)  # the executor's path (the forked pool: test_jobs_commands)
    _Inline.started = []
    done = []
    calls = [("a",), ("b",), ("c",)]
    assert ordered_map(os.path.basename, calls, 2, done=done.append, sizes=[1, 5, 3]) == ["a", "b", "c"]
    assert _Inline.started == ["b", "c", "a"] and done == [0, 1, 2]


def test_the_scheduler_in_worker_processes_gives_what_one_job_gives(tmp_path):
    from kdump.jobs import ordered_map
    calls = [(str(p),) for p in sorted((FIXTURES / "corpus" / "broker-written").iterdir()) if p.is_dir()][:6]
    sizes = [sum(f.stat().st_size for f in Path(c[0]).iterdir()) for c in calls]
    assert ordered_map(os.path.basename, calls, 3, sizes=sizes) == [os.path.basename(c[0]) for c in calls]


def test_a_subdirectory_that_cannot_be_listed_is_refused_and_the_others_are_read(tmp_path, monkeypatch):
    from kdump.index.check import check_paths
    from kdump.verify import collect
    for p in ("a-0", "b-0"):
        (tmp_path / p).mkdir()
        _segment(tmp_path / p / "00000000000000000000.log", 0, 2)
    listdir = os.listdir
    locked = str(tmp_path / "a-0")

    def refusing(path="."):
        if os.fspath(path) == locked:
            raise PermissionError(13, "Permission denied", locked)
        return listdir(path)
    monkeypatch.setattr(os, "listdir", refusing)  # (root reads everything: chmod would not do)
    found = scan([tmp_path])
    assert [r.path for r in found.unlistable] == [locked] and [r.path for r in found.refused] == [locked]
    assert found.refused[0].reason == "cannot list the directory: Permission denied"
    assert [os.path.basename(p.directory) for p in found.partitions] == ["b-0"]
    assert ("error", (locked, "cannot list the directory: Permission denied")) in collect([tmp_path])
    reports = check_paths([tmp_path], deep=False)
    assert [(r.path, r.io_error) for r in reports if r.io_error] == [
        (locked, "cannot read: cannot list the directory: Permission denied")]
    assert any(r.path.startswith(str(tmp_path / "b-0")) for r in reports)
    from kdump.spark.plan import PathError, find_segments
    with pytest.raises(PathError, match="cannot list the directory"):  # a Spark read drops no records unsaid
        find_segments([str(tmp_path)])
