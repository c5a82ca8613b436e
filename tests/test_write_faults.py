"""Issue 31: every write survives faults -- a full disk, a read-only file system, no permission, a kill, a second
run at once. For each writer the invariants are the same: the input is intact (its hash before and after), the
output is absent or complete and verified, the exit code is the README's (2: an output that cannot be written),
and nothing is left behind (no temporary, no journal, no staging directory).

Faults are injected by failing the system calls a writer makes (``os.write``/``os.rename``/``os.fsync``/``open``
monkeypatched to raise ENOSPC, EROFS, EACCES, EDQUOT) and by the test-only kill hook of :mod:`kdump.atomic`
(``KDUMP_TEST_KILL_AT``), which SIGKILLs a subprocess at a named step. The tests run as any user: a permission
error is injected, never made with chmod (root would pass it)."""
from __future__ import annotations

import errno
import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.cli import run_cli

from kdump.atomic import KILL_AT_ENV

ROOT = Path(__file__).resolve().parent.parent
SOUND = ROOT / "fixtures/generated/v2-none-createtime"
CRC_BAD = ROOT / "fixtures/corpus/kafka-generated/corrupt/v2-crc-mismatch"
FAULTS = [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT]


def tree_hash(path) -> str:
    """sha256 over the names and bytes of every file under ``path`` (the input before and after a run)."""
    h = hashlib.sha256()
    for p in sorted(Path(path).rglob("*")):
        h.update(str(p.relative_to(path)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def left_behind(directory) -> list[str]:
    """What a failed or killed run left in ``directory``: kdump's temporaries and staging directories (names
    starting with a dot), the only things besides the output a writer creates."""
    return sorted(n for n in os.listdir(directory) if n.startswith("."))


def fault(number: int) -> OSError:
    return OSError(number, os.strerror(number))


# --- spark scan -o: the export ----------------------------------------------------------------------------------
@pytest.fixture
def no_spark(monkeypatch):
    """``kdump spark scan`` with the job run in this process (:func:`kdump.spark.jobs.export_local`, the same
    tasks and commit) and a Spark that must not start: the checks and the error handling of the command are the
    subject, and a Spark session costs seconds."""
    from kdump.spark import jobs, session

    def no_session(*args, **kwargs):
        raise AssertionError("Spark was started")
    monkeypatch.setattr(session, "build_session", no_session)
    monkeypatch.setattr("kdump.commands.spark._start", lambda ui, master: (None, False))
    monkeypatch.setattr(jobs, "export", lambda spark, paths, out, fmt, options, progress=None:
                        jobs.export_local(paths, out, fmt, options))


@pytest.mark.parametrize("kind", ["file", "full-directory", "symlink"])
def test_scan_refuses_an_existing_output_before_spark_starts(tmp_path, monkeypatch, kind):
    from kdump.spark import session
    started = []
    monkeypatch.setattr(session, "build_session", lambda *a, **k: started.append(1))
    out = tmp_path / "out"
    if kind == "file":
        out.write_bytes(b"mine")
    elif kind == "full-directory":
        out.mkdir()
        (out / "mine").write_bytes(b"mine")
    else:
        out.symlink_to(tmp_path)
    before = tree_hash(tmp_path)
    result = run_cli("spark", "scan", SOUND, "-o", out)
    assert result.exit_code == 2, result.output
    assert str(out) in result.stderr and "Traceback" not in result.output
    assert started == []
    assert tree_hash(tmp_path) == before


@pytest.mark.parametrize("number", [errno.EROFS, errno.EACCES])
def test_scan_refuses_an_unwritable_parent_before_spark_starts(tmp_path, monkeypatch, number):
    from kdump.spark import session
    started = []
    monkeypatch.setattr(session, "build_session", lambda *a, **k: started.append(1))
    parent = tmp_path / "ro"
    parent.mkdir()
    real_access, real_statvfs = os.access, os.statvfs
    if number == errno.EACCES:
        monkeypatch.setattr(os, "access", lambda p, mode, **k: False if str(p) == str(parent)
                            else real_access(p, mode, **k))
    else:
        class ReadOnly:
            f_flag = os.ST_RDONLY
        monkeypatch.setattr(os, "statvfs", lambda p: ReadOnly() if str(p) == str(parent) else real_statvfs(p))
    result = run_cli("spark", "scan", SOUND, "-o", parent / "out")
    assert result.exit_code == 2, result.output
    assert str(parent / "out") in result.stderr and os.strerror(number) in result.stderr
    assert started == [] and os.listdir(parent) == []


@pytest.mark.parametrize("number", FAULTS)
def test_scan_on_a_failing_disk_exits_2_and_leaves_nothing(tmp_path, monkeypatch, no_spark, number):
    import pyarrow.parquet as pq

    def failing(self, *args, **kwargs):
        raise OSError(f"[errno {number}] Error writing bytes to file. Detail: [errno {number}] "
                      f"{os.strerror(number)}")  # as pyarrow says it: the errno in the text only
    monkeypatch.setattr(pq.ParquetWriter, "write_batch", failing)
    before = tree_hash(SOUND)
    result = run_cli("spark", "scan", SOUND, "-o", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "a bug in kdump" not in result.output
    assert "cannot write" in result.stderr and os.strerror(number) in result.stderr
    assert "nothing was left" in result.stderr and str(tmp_path) in result.stderr
    assert "cannot read" not in result.stderr
    assert os.listdir(tmp_path) == [] and tree_hash(SOUND) == before


@pytest.mark.parametrize("call", ["rename", "fsync", "open"])
def test_scan_commit_failing_leaves_nothing(tmp_path, monkeypatch, no_spark, call):
    """The driver's own steps (``_SUCCESS``, its fsync, the rename to OUT) failing: exit 2, no OUT, no staging."""
    import builtins
    real = {"rename": os.rename, "fsync": os.fsync, "open": builtins.open}[call]

    def failing(*args, **kwargs):
        spared = {"open": "_SUCCESS" not in str(args[0]), "rename": "out" not in str(args[-1]), "fsync": False}
        if spared[call]:
            return real(*args, **kwargs)
        raise fault(errno.ENOSPC)
    monkeypatch.setattr(builtins if call == "open" else os, call, failing)
    result = run_cli("spark", "scan", SOUND, "-o", tmp_path / "out")
    assert result.exit_code == 2, result.output
    assert "nothing was left" in result.stderr and "Traceback" not in result.output
    assert os.listdir(tmp_path) == []


def test_two_exports_into_one_new_directory_one_wins_whole(tmp_path, monkeypatch):
    """The other export commits between this one's check and its rename: this one refuses, naming the other,
    and the other's export is whole (every record, its _SUCCESS)."""
    from kdump.spark import jobs
    out = tmp_path / "out"
    raced = []

    def other_run_commits(name):
        if name == "export-staged" and not raced:
            raced.append(1)
            jobs.export_local([str(SOUND)], str(out))
    monkeypatch.setattr(jobs, "crash_point", other_run_commits)
    with pytest.raises(FileExistsError) as refused:
        jobs.export_local([str(SOUND)], str(out))
    assert "written meanwhile by another run" in str(refused.value) and f"pid {os.getpid()}" in str(refused.value)
    assert os.listdir(tmp_path) == ["out"]
    import pyarrow.parquet as pq
    assert sum(pq.read_table(p).num_rows for p in out.glob("*.parquet")) == json.loads(
        (out / "_SUCCESS").read_text())["records"] == records_in(SOUND)


def records_in(path) -> int:
    """Records of the segments under ``path`` as ``kdump dump --format json`` counts them (batch headers)."""
    total = 0
    for log in sorted(Path(path).glob("*.log")):
        lines = [json.loads(line) for line in run_cli("dump", "--format", "json", log).stdout.splitlines()]
        total += sum(b["recordCount"] for b in lines if "magic" in b and not b.get("isControl"))
    return total


def test_failfast_damage_leaves_nothing_and_a_rerun_works(tmp_path, no_spark):
    out = tmp_path / "out"
    result = run_cli("spark", "scan", "--mode", "FAILFAST", CRC_BAD, "-o", out)
    assert result.exit_code == 1, result.output
    assert os.listdir(tmp_path) == []  # no part file without _SUCCESS
    again = run_cli("spark", "scan", CRC_BAD, "-o", out)
    assert again.exit_code == 1 and (out / "_SUCCESS").exists()


def test_a_killed_export_is_cleaned_by_the_next(tmp_path):
    out = tmp_path / "out"
    code = "import sys; from kdump.spark.jobs import export_local; export_local([sys.argv[1]], sys.argv[2])"
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{KILL_AT_ENV: "export-staged"})
    proc = subprocess.run([sys.executable, "-c", code, str(SOUND), str(out)], env=env, capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert not out.exists() and len(left_behind(tmp_path)) == 1  # the staging directory, not an export
    from kdump.spark.jobs import export_local
    assert export_local([str(SOUND)], str(out)).records == records_in(SOUND)
    assert os.listdir(tmp_path) == ["out"]


# --- the partition lock -------------------------------------------------------------------------------------------
def partition_copy(tmp_path, source=SOUND, name="t-0") -> Path:
    import shutil
    target = tmp_path / name
    shutil.copytree(source, target)
    for p in list(target.glob("*.index")) + list(target.glob("*.timeindex")):
        p.unlink()  # indexes to rebuild
    return target


class HeldLock:
    """Another run's hold of a directory's lock: the file locked through its own open file (flock locks belong to
    an open file, so this process's own attempt is refused as another process's would be)."""

    def __init__(self, directory, pid="4242"):
        import fcntl
        self.path = Path(directory) / ".kdump.lock"
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(self.fd, f"{pid}\n".encode())

    def release(self):
        os.close(self.fd)


def test_a_rebuild_of_a_partition_another_run_writes_is_refused(tmp_path):
    part = partition_copy(tmp_path)
    held = HeldLock(part)
    before = tree_hash(part)
    result = run_cli("index", "rebuild", part)
    assert result.exit_code == 2, result.output
    assert "another kdump run (pid 4242)" in result.stderr and str(part) in result.stderr
    assert "nothing was written" in result.stderr
    held.release()
    assert tree_hash(part) == before  # not a file written (the lock file is the other run's)
    (part / ".kdump.lock").unlink()
    assert run_cli("index", "rebuild", part).exit_code == 0
    assert sorted(os.listdir(part)) == [f"00000000000000000000.{k}" for k in ("index", "log", "timeindex")]


@pytest.mark.parametrize("command", ["salvage", "convert"])
def test_writing_into_a_locked_directory_is_refused(tmp_path, command):
    out = tmp_path / "out"
    out.mkdir()
    held = HeldLock(out)
    log = SOUND / "00000000000000000000.log"
    args = ["salvage", log, "-o", out / log.name] if command == "salvage" else \
        ["convert", "--to-magic", "1", log, "-o", out / log.name]
    result = run_cli(*args)
    held.release()
    assert result.exit_code == 2, result.output
    assert "pid 4242" in result.stderr and "Traceback" not in result.output
    assert os.listdir(out) == [".kdump.lock"]


def test_a_second_rebuild_in_the_middle_of_the_first_is_refused(tmp_path, monkeypatch):
    """A second ``index rebuild --force`` of the partition started while the first is between its journal and
    its renames (the window where, unguarded, the two raced and one left its journal): refused with exit 2 naming
    the first; the first finishes, nothing is left behind and ``verify`` of the partition is clean."""
    import kdump.atomic
    part = partition_copy(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    second = []
    real_point = kdump.atomic.crash_point

    def start_the_second(name):
        if name == "group-journal" and not second:
            second.append(subprocess.run([sys.executable, "-m", "kdump", "index", "rebuild", "--force", str(part)],
                                         env=env, capture_output=True, text=True, timeout=120))
        real_point(name)
    monkeypatch.setattr(kdump.atomic, "crash_point", start_the_second)
    first = run_cli("index", "rebuild", "--force", part)
    assert first.exit_code == 0, first.output
    (other,) = second
    assert other.returncode == 2, other.stderr
    assert f"another kdump run (pid {os.getpid()})" in other.stderr
    assert left_behind(part) == []
    assert run_cli("verify", part).exit_code == 0


def test_a_killed_runs_lock_is_no_damage_and_the_next_run_removes_it(tmp_path):
    part = partition_copy(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{KILL_AT_ENV: "group-written"})
    proc = subprocess.run([sys.executable, "-m", "kdump", "index", "rebuild", str(part)], env=env,
                          capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()
    assert (part / ".kdump.lock").exists()
    for args in (["verify", part], ["index", "check", part], ["dump", part]):
        result = run_cli(*args)
        assert ".kdump.lock" not in result.output, (args, result.output)
    assert run_cli("verify", part).exit_code == 0
    assert run_cli("index", "rebuild", part).exit_code == 0
    assert left_behind(part) == []


def test_a_group_that_fails_before_touching_a_target_leaves_no_journal(tmp_path, monkeypatch):
    """The first rename of a group fails (EROFS): every file is as it was, so no journal says otherwise."""
    from kdump.atomic import AtomicGroup
    (tmp_path / "00000000000000000000.index").write_bytes(b"old")
    group = AtomicGroup(tmp_path, overwrite=True, backup=False)
    group.add(tmp_path / "00000000000000000000.timeindex").write(b"t")
    group.add(tmp_path / "00000000000000000000.index", last=True).write(b"i")
    real_unlink = os.unlink

    def failing_unlink(path, *args, **kwargs):
        if str(path).endswith("0.index"):
            raise fault(errno.EROFS)
        return real_unlink(path, *args, **kwargs)
    monkeypatch.setattr(os, "unlink", failing_unlink)
    with pytest.raises(OSError):
        group.commit()
    monkeypatch.undo()
    assert sorted(os.listdir(tmp_path)) == ["00000000000000000000.index"]
    assert (tmp_path / "00000000000000000000.index").read_bytes() == b"old"
