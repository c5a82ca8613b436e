"""Issue 31: every write survives faults -- a full disk, a read-only file system, no permission, a kill, a second
run at once. For each writer the invariants are the same: the input is intact (its hash before and after), the
output is absent or complete and verified, the exit code is the README's (2: an output that cannot be written),
and nothing is left behind (no temporary, no journal, no staging directory).

Faults are injected by failing the system calls a writer makes (``os.write``/``os.rename``/``os.fsync``/``open``
monkeypatched to raise ENOSPC, EROFS, EACCES, EDQUOT) and by the test-only kill hook of :mod:`kdump.write.atomic`
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

from kdump.read.logdir import kdump_temporary
from kdump.write.atomic import KILL_AT_ENV

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
    import kdump.write.group
    part = partition_copy(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    second = []
    real_point = kdump.write.group.crash_point

    def start_the_second(name):
        if name == "group-journal" and not second:
            second.append(subprocess.run([sys.executable, "-m", "kdump", "index", "rebuild", "--force", str(part)],
                                         env=env, capture_output=True, text=True, timeout=120))
        real_point(name)
    monkeypatch.setattr(kdump.write.group, "crash_point", start_the_second)  # where the group calls it
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
    from kdump.write.group import AtomicGroup
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


# --- stats --spill-dir --------------------------------------------------------------------------------------------
def many_keys(tmp_path) -> Path:
    """A partition of 600 keyed records (300 keys twice): more digests than ``--memory 1`` holds (64), so the
    key table spills to disk."""
    from kdump.write.segment import RecordBatchBuilder, write_segment
    part = tmp_path / "keys-0"
    part.mkdir()
    entries = []
    for round_ in range(2):
        b = RecordBatchBuilder(round_ * 300)
        for i in range(300):
            b.append(round_ * 300 + i, 1_700_000_000_000, b"key-%d" % i, b"v")
        entries.append(b.build())
    write_segment(part / "00000000000000000000.log", entries)
    return part


@pytest.mark.parametrize("kind", ["missing"])
def test_stats_refuses_a_missing_spill_dir_up_front(tmp_path, kind):
    part = many_keys(tmp_path)
    spill = tmp_path / "spill"
    if kind == "file":
        spill.write_bytes(b"")
    result = run_cli("stats", "--memory", "1", "--spill-dir", spill, part)
    assert result.exit_code == 2, result.output
    assert str(spill) in result.stderr and "cannot read" not in result.stderr and "FAIL" not in result.output


def test_stats_refuses_a_read_only_spill_dir_up_front(tmp_path, monkeypatch):
    part = many_keys(tmp_path)
    spill = tmp_path / "spill"
    spill.mkdir()
    real_statvfs = os.statvfs

    class ReadOnly:
        f_flag = os.ST_RDONLY
    monkeypatch.setattr(os, "statvfs", lambda p: ReadOnly() if str(p) == str(spill) else real_statvfs(p))
    result = run_cli("stats", "--memory", "1", "--spill-dir", spill, part)
    assert result.exit_code == 2, result.output
    assert str(spill) in result.stderr and os.strerror(errno.EROFS) in result.stderr
    assert "cannot read" not in result.stderr


class FailingFile:
    """A spill bucket whose writes fail after ``budget`` calls (the disk fills up), as a buffered file reports it:
    at a write or at the flush of close()."""

    def __init__(self, real, number, budget):
        self.real, self.number, self.budget = real, number, budget
        self.name = real.name

    def write(self, data):
        self.budget[0] -= 1
        if self.budget[0] < 0:
            raise fault(self.number)
        return self.real.write(data)

    def close(self):
        self.real.close()
        if self.budget[0] < 0:
            raise fault(self.number)

    def __getattr__(self, name):  # flush, fileno, ...: the real file's
        return getattr(self.real, name)


@pytest.mark.parametrize("number", FAULTS)
@pytest.mark.parametrize("step", [0, 300])  # the first spill write, or one of the records after it
def test_stats_on_a_failing_spill_disk_exits_2_naming_the_spill_dir(tmp_path, monkeypatch, number, step):
    from kdump import _backend
    part = many_keys(tmp_path)
    spill = tmp_path / "spill"
    spill.mkdir()
    before = tree_hash(part)
    budget = [step]
    import builtins
    real_open = builtins.open

    def spill_open(path, mode="r", *args, **kwargs):
        f = real_open(path, mode, *args, **kwargs)
        return FailingFile(f, number, budget) if "w" in mode and str(spill) in str(path) else f
    previous = _backend.BACKEND
    _backend.use("python")  # the pure twin opens its buckets through the module's open (patched here)
    monkeypatch.setattr("kdump.stats.keytable.open", spill_open, raising=False)
    try:
        result = run_cli("stats", "--memory", "1", "--spill-dir", spill, part)
    finally:
        _backend.use(previous)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert f"{spill}: cannot write: {os.strerror(number)}" in result.stderr
    assert "nothing was left" in result.stderr
    assert "cannot read" not in result.stderr and "FAIL" not in result.output and "damaged" not in result.output
    assert os.listdir(spill) == [] and tree_hash(part) == before


def test_stats_spill_that_hits_a_file_size_limit_in_the_compiled_table(tmp_path):
    """The compiled key table (its own bucket files) meeting a real write error: the file size limit (EFBIG)."""
    import resource

    from kdump import _backend
    if not _backend.COMPILED_AVAILABLE:
        pytest.skip("the compiled extension is not built")
    part = many_keys(tmp_path)
    spill = tmp_path / "spill"
    spill.mkdir()

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (100, 100))
    proc = subprocess.run([sys.executable, "-m", "kdump", "stats", "--memory", "1", "--spill-dir", str(spill),
                           str(part)], env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
                          preexec_fn=limit, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert f"{spill}: cannot write: {os.strerror(errno.EFBIG)}" in proc.stderr and "cannot read" not in proc.stderr
    assert os.listdir(spill) == []


# --- salvage, convert, index rebuild: a failing output ------------------------------------------------------------
def failing_at(monkeypatch, call: str, number: int, where):
    """``os.<call>`` (or ``open`` for writing) failing with ``number`` when its path argument is under ``where``."""
    import builtins
    where = str(where)
    if call == "write":  # a file object's writes (kdump writes through os.fdopen's file, not os.write)
        real_fdopen = os.fdopen

        def fdopen(fd, mode="r", *args, **kwargs):
            f = real_fdopen(fd, mode, *args, **kwargs)
            return FailingFile(f, number, [1]) if "w" in mode and _fd_under(fd, where) else f
        monkeypatch.setattr(os, "fdopen", fdopen)
        return
    real = builtins.open if call == "open" else getattr(os, call)

    def failing(*args, **kwargs):
        paths = [str(a) for a in args if isinstance(a, (str, os.PathLike))]
        if call == "open" and "r" in str(args[1] if len(args) > 1 else kwargs.get("mode", "r")):
            return real(*args, **kwargs)
        if call == "fsync" or any(p.startswith(where) for p in paths):
            if call == "fsync" and not _fd_under(args[0], where):
                return real(*args, **kwargs)
            raise fault(number)
        return real(*args, **kwargs)
    monkeypatch.setattr(builtins if call == "open" else os, call, failing)


def _fd_under(fd, where: str) -> bool:
    try:
        return os.readlink(f"/proc/self/fd/{fd}").startswith(where)
    except OSError:
        return False


WRITERS = {
    "salvage": lambda src, out: ["salvage", src / "00000000000000000000.log", "-o", out / "00000000000000000000.log"],
    "salvage-directory": lambda src, out: ["salvage", src, "-o", out / "salvaged"],
    "convert": lambda src, out: ["convert", "--to-magic", "1", src / "00000000000000000000.log", "-o",
                                 out / "00000000000000000000.log"],
    "convert-directory": lambda src, out: ["convert", "--to-magic", "1", src, "-o", out / "converted"],
    "index-rebuild": lambda src, out: ["index", "rebuild", src / "00000000000000000000.log", "-o", out],
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
# (not os.replace nor os.link: no step fails through either alone -- a hard link that fails falls back to a rename)
@pytest.mark.parametrize("call", ["open", "write", "fsync", "rename", "mkdir"])
@pytest.mark.parametrize("number", [errno.ENOSPC, errno.EROFS, errno.EACCES])
def test_a_failing_output_exits_2_names_it_and_leaves_nothing(tmp_path, monkeypatch, writer, call, number):
    """Every step of each writer failing on the output side: exit 2, ``cannot write`` naming a path in the output
    (never the input, never "cannot read"), never 70, the input intact, no output and nothing left behind."""
    if call == "mkdir" and "directory" not in writer:
        pytest.skip("only a directory writer makes a directory")
    src = partition_copy(tmp_path, name="src-0")
    out = tmp_path / "out"
    out.mkdir()
    before = tree_hash(src)
    failing_at(monkeypatch, "open" if call == "open" else call, number, out)
    if call == "open":  # os.open too: mkstemp makes the temporaries with it
        real_os_open = os.open

        def os_open(path, flags, *args, **kwargs):
            if str(path).startswith(str(out)) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT):
                raise fault(number)
            return real_os_open(path, flags, *args, **kwargs)
        monkeypatch.setattr(os, "open", os_open)
    result = run_cli(*WRITERS[writer](src, out))
    monkeypatch.undo()
    if result.exit_code == 0:
        pytest.skip(f"{writer} takes no step through os.{call} on the output")
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "internal error" not in result.output
    assert "cannot write" in result.stderr and os.strerror(number) in result.stderr, result.stderr
    assert "cannot read" not in result.stderr
    said = result.stderr.split("cannot write")[0]
    assert str(out) in said and str(src) not in said and ".tmp" not in said
    assert tree_hash(src) == before
    assert os.listdir(out) == []


# --- what the messages name ---------------------------------------------------------------------------------------
def test_convert_refusal_names_the_flag_not_the_library_argument(tmp_path):
    log = SOUND / "00000000000000000000.log"
    out = tmp_path / log.name
    out.write_bytes(b"mine")
    result = run_cli("convert", "--to-magic", "1", log, "-o", out)
    assert result.exit_code == 2
    assert "overwrite=True" not in result.output and "--force" in result.stderr


def test_convert_with_force_beside_symlinked_index_files_writes_nothing(tmp_path):
    """``convert -o DIR/ --force`` where the segment's index files are symbolic links (never followed, never
    replaced): refused as a whole before converting -- no new .log beside the old indexes -- exit 2."""
    log = SOUND / "00000000000000000000.log"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    for kind in ("index", "timeindex"):
        (elsewhere / kind).write_bytes(b"theirs")
        (out / f"00000000000000000000.{kind}").symlink_to(elsewhere / kind)
    before = tree_hash(tmp_path)
    result = run_cli("convert", "--to-magic", "1", "--force", log, "-o", f"{out}/")
    assert result.exit_code == 2, result.output
    assert "symbolic link" in result.stderr and "use --force" not in result.stderr
    assert tree_hash(tmp_path) == before and left_behind(out) == []


# --- Spark's scratch ----------------------------------------------------------------------------------------------
class FakeSpark:
    def stop(self):
        pass


def test_a_killed_spark_runs_scratch_is_removed_by_the_next(tmp_path, monkeypatch):
    """A killed run's scratch directory (kdump's name, a pid no longer running) and the log beside it go; a live
    run's stay, and so does a log kept on purpose (no scratch directory beside it)."""
    from kdump.spark import session
    monkeypatch.setattr(session.tempfile, "gettempdir", lambda: str(tmp_path))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    uid = os.getuid()
    killed = tmp_path / f"kdump-spark-{uid}-{dead_pid}.run"
    (killed / "local" / "blockmgr-1").mkdir(parents=True)
    (tmp_path / f"kdump-spark-{uid}-{dead_pid}.log").write_text("started")
    live = tmp_path / f"kdump-spark-{uid}-{os.getppid()}.run"
    live.mkdir()
    kept = tmp_path / f"kdump-spark-{uid}-{dead_pid + 1}.log"
    kept.write_text("ERROR it broke")
    removed = session.remove_stale_scratch()
    assert sorted(os.listdir(tmp_path)) == sorted([live.name, kept.name]), removed


def test_spark_scratch_goes_at_the_end_also_after_ctrl_c(tmp_path, monkeypatch):
    from kdump.spark import jobs, session
    monkeypatch.setattr(session.tempfile, "gettempdir", lambda: str(tmp_path))
    monkeypatch.setattr("kdump.commands.spark._start", lambda ui, master: (FakeSpark(), True))

    def interrupted(*args, **kwargs):
        (Path(session.scratch_directory()) / "local" / "blockmgr-1").mkdir(parents=True)
        raise KeyboardInterrupt
    monkeypatch.setattr(jobs, "export", interrupted)
    result = run_cli("spark", "scan", SOUND, "-o", tmp_path / "out")
    assert result.exit_code == 130, result.output
    assert os.listdir(tmp_path) == []


# --- the Spark writer (df.write.format("kafka-log")), driven without a session -------------------------------------
def arrow_records(n=50):
    import pyarrow as pa
    return pa.RecordBatch.from_pydict({"key": [b"k%d" % i for i in range(n)], "value": [b"v" * 100] * n})


def spark_writer(out, overwrite=False, **options):
    pytest.importorskip("pyspark")
    from pyspark.sql.types import BinaryType, StructField, StructType

    from kdump.spark.write import KafkaLogWriter
    schema = StructType([StructField("key", BinaryType()), StructField("value", BinaryType())])  # arrow_records'
    return KafkaLogWriter({"path": str(out), "topic": "t", "segmentBytes": "2048", **options}, schema, overwrite)


@pytest.mark.parametrize("number", FAULTS)
def test_spark_writer_task_on_a_failing_disk_leaves_nothing(tmp_path, monkeypatch, number):
    from kdump.errors import WriteError
    out = tmp_path / "out"
    writer = spark_writer(out)
    failing_at(monkeypatch, "write", number, tmp_path)
    with pytest.raises(WriteError) as failed:
        writer.write(iter([arrow_records()]))
    monkeypatch.undo()
    assert failed.value.errno == number and str(tmp_path) in failed.value.filename
    writer.abort([])
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("overwrite", [False, True])
def test_spark_writer_commit_that_fails_midway_moves_nothing(tmp_path, monkeypatch, overwrite):
    """The commit's moves into DIR failing after the first (a full or read-only disk): the files already moved go
    back, DIR is as before (append: its other partitions; overwrite: the old DIR), nothing staged is left."""
    from kdump.errors import WriteError
    out = tmp_path / "out"
    (out / "other-0").mkdir(parents=True)
    (out / "other-0" / "keep").write_bytes(b"old")
    before = tree_hash(out)
    writer = spark_writer(out, overwrite=overwrite, batchRecords="5")
    message = writer.write(iter([arrow_records()]))
    assert len(message.written[0].segments) > 1  # several segments: several moves
    calls = []

    def failing(real):
        def move(src, dst, *args, **kwargs):
            if str(dst).startswith(str(out)) and kdump_temporary(dst) is None:  # a file (or DIR) put in its place
                calls.append(dst)
                # overwrite: DIR replaced in one rename (and put back); append: the disk full from the second file on
                if (len(calls) == 1) if overwrite else (len(calls) >= 2):
                    raise fault(errno.ENOSPC)
            return real(src, dst, *args, **kwargs)
        return move
    for name in ("rename", "replace", "link"):  # however a file is moved into place
        monkeypatch.setattr(os, name, failing(getattr(os, name)))
    with pytest.raises(WriteError) as failed:
        writer.commit([message])
    monkeypatch.undo()
    assert "nothing was written" in str(failed.value) and str(out) in failed.value.filename
    writer.abort([message])
    assert tree_hash(out) == before and os.listdir(tmp_path) == ["out"]


def test_a_spark_append_while_another_run_writes_the_directory_is_refused_and_moves_nothing(tmp_path):
    """Two writers of one directory at once: the Spark writer's append (and a stream's micro-batch) commits under
    the directory's lock (``.kdump.lock``), so while another kdump run holds it the commit is refused naming that
    run, nothing is moved, and the next commit goes through."""
    from kdump.write.lock import PartitionBusy
    out = tmp_path / "out"
    (out / "other-0").mkdir(parents=True)
    (out / "other-0" / "keep").write_bytes(b"old")
    before = tree_hash(out)
    writer = spark_writer(out, overwrite=False, batchRecords="5")
    message = writer.write(iter([arrow_records()]))
    import multiprocessing  # another run: a child process holds the lock (in this process the lock would nest)
    ready, release = multiprocessing.Event(), multiprocessing.Event()
    holder = multiprocessing.get_context("fork").Process(target=_hold_lock, args=(str(out), ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        with pytest.raises(PartitionBusy) as busy:
            writer.commit([message])
        assert str(holder.pid) in str(busy.value)
    finally:
        release.set()
        holder.join(30)
    assert tree_hash(out) == before  # nothing moved
    writer = spark_writer(out, overwrite=False, batchRecords="5")
    writer.commit([writer.write(iter([arrow_records()]))])
    assert tree_hash(out) != before and not (out / ".kdump.lock").exists()


def _hold_lock(directory, ready, release) -> None:
    from kdump.write.lock import partition_lock
    with partition_lock(directory):
        ready.set()
        release.wait(30)


# --- the Spark writer's commit: one group, resolved by the next commit ---------------------------------------------
def spark_commit(out, values, checkpoint=None, batch_id=0, kill_at=None):
    """One Spark write of ``values`` (topic t, one partition, several segments) into ``out``, driven without a
    session: a batch append, or (``checkpoint``) micro-batch ``batch_id`` of a stream. ``kill_at``: the commit
    (not the tasks, whose segments are groups too) is SIGKILLed at that point of the write layer."""
    import pyarrow as pa
    from pyspark.sql.types import BinaryType, StructField, StructType

    from kdump.spark.write import KafkaLogStreamWriter, KafkaLogWriter
    schema = StructType([StructField("key", BinaryType()), StructField("value", BinaryType())])
    options = {"path": str(out), "topic": "t", "segmentBytes": "2048", "batchRecords": "5"}
    rows = pa.RecordBatch.from_pydict({"key": [b"k"] * len(values), "value": [v * WIDTH for v in values]})
    if checkpoint is None:
        writer = KafkaLogWriter(options, schema, False)
    else:
        writer = KafkaLogStreamWriter({**options, "checkpointLocation": str(checkpoint)}, schema, False)
    message = writer.write(iter([rows]))
    if kill_at is not None:
        os.environ[KILL_AT_ENV] = kill_at
    try:
        if checkpoint is None:
            writer.commit([message])
        else:
            writer.commit([message], batch_id)
    except BaseException:  # as Spark does when a commit fails
        writer.abort([message]) if checkpoint is None else writer.abort([message], batch_id)
        raise


def _killed_spark_commit(out, values, point, **kwargs) -> None:
    code = ("import sys; sys.path[:0] = [sys.argv[1]]; import test_write_faults as t; "
            "t.spark_commit(sys.argv[2], [v.encode() for v in sys.argv[3].split()], **eval(sys.argv[4]))")
    args = [sys.executable, "-c", code, str(ROOT / "tests"), str(out), " ".join(v.decode() for v in values),
            repr({**{k: str(v) for k, v in kwargs.items() if k == "checkpoint"},
                  **{k: v for k, v in kwargs.items() if k != "checkpoint"}, "kill_at": point})]
    proc = subprocess.run(args, env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, timeout=180)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()


def _values(partition) -> list[bytes]:
    """The values under ``partition``, read by kafka-python (an independent reader), offsets checked to go
    0, 1, 2, ... with no gap and no repeat."""
    from kafka.record import MemoryRecords
    records = []
    for log in sorted(partition.glob("*.log")):
        batches = MemoryRecords(log.read_bytes())
        while batches.has_next():
            records.extend((r.offset, r.value) for r in batches.next_batch())
    assert [o for o, _ in records] == list(range(len(records)))
    return [v[:len(v) // WIDTH] for _, v in records]


def _interrupted(out) -> list[str]:
    """The journals of groups interrupted between renames under ``out``, as ``kdump verify`` finds them."""
    from kdump.write.killed import leftovers
    return [left.path for d in (out, out / "t-0") for left in leftovers(d) if left.role == "journal"]


WIDTH = 100  # each value repeated so: a batch of 5 rows is about half a 2048-byte segment, 30 rows are 3 segments
FIRST = [b"a%d" % i for i in range(10)]
SECOND = [b"b%d" % i for i in range(30)]


@pytest.mark.parametrize("point", ["group-placed:3", "group-placed:8"])
def test_a_spark_append_killed_between_renames_is_taken_back_by_the_next(tmp_path, point):
    """A batch append (all or nothing) SIGKILLed while its commit moves files into DIR: DIR holds part of it and
    the group's journal (kdump-write-interrupted); the next append takes the killed one back first (its files
    removed, the checkpoint restored), then appends: the killed rows are not there, offsets go on from the first
    append, nothing is left behind."""
    pytest.importorskip("pyspark")
    out = tmp_path / "out"
    spark_commit(out, FIRST)
    (out / "replication-offset-checkpoint").write_text("0\n1\nt 0 10\n")
    before = tree_hash(out)
    _killed_spark_commit(out, SECOND, point)
    assert tree_hash(out) != before and _interrupted(out)
    verified = run_cli("verify", out)
    assert verified.exit_code == 1 and "kdump-write-interrupted" in verified.output
    spark_commit(out, [b"c%d" % i for i in range(5)])
    assert _values(out / "t-0") == FIRST + [b"c%d" % i for i in range(5)]
    assert (out / "replication-offset-checkpoint").read_text() == "0\n1\nt 0 15\n"
    assert run_cli("verify", "--deep", out).exit_code == 0
    assert left_behind(out) == [] and left_behind(out / "t-0") == []


@pytest.mark.parametrize("point", ["group-placed:3", "group-placed:8"])
def test_a_stream_micro_batch_killed_between_renames_is_finished_on_restart(tmp_path, point):
    """A stream's micro-batch SIGKILLed while its commit moves files into DIR (before its batch record is placed,
    the group's last file): Spark runs the batch id again on restart with the same rows; the commit finishes the
    killed one from its journal and drops the rows of the second run. Every row once, offsets without a gap,
    nothing left behind but the sink's records."""
    pytest.importorskip("pyspark")
    out, checkpoint = tmp_path / "out", tmp_path / "cp"
    spark_commit(out, FIRST, checkpoint, 0)
    _killed_spark_commit(out, SECOND, point, checkpoint=checkpoint, batch_id=1)
    assert _interrupted(out) and not (out / ".kdump-sink" / "batch-1.json").exists()
    spark_commit(out, SECOND, checkpoint, 1)  # Spark's run of batch 1 again
    assert _values(out / "t-0") == FIRST + SECOND
    assert (out / ".kdump-sink" / "batch-1.json").exists()
    spark_commit(out, [b"c0"], checkpoint, 2)
    assert _values(out / "t-0") == FIRST + SECOND + [b"c0"]
    assert run_cli("verify", "--deep", out).exit_code == 0
    assert left_behind(out) == [".kdump-sink"] and left_behind(out / "t-0") == []


def test_a_stream_micro_batch_whose_commit_fails_midway_writes_nothing_and_its_rerun_once(tmp_path, monkeypatch):
    """A micro-batch's commit failing after its first file was placed (a full disk): the files placed are taken
    back, no record of the batch id is left (nothing was written), and Spark's next run of the batch writes it
    once."""
    pytest.importorskip("pyspark")
    from kdump.errors import WriteError
    out, checkpoint = tmp_path / "out", tmp_path / "cp"
    spark_commit(out, FIRST, checkpoint, 0)
    before = tree_hash(out)
    calls = []

    def failing(real):
        def move(src, dst, *args, **kwargs):
            if str(dst).startswith(str(out / "t-0")) and kdump_temporary(dst) is None:  # a file put in its place
                calls.append(dst)
                if len(calls) >= 3:  # the disk full from the third file on
                    raise fault(errno.ENOSPC)
            return real(src, dst, *args, **kwargs)
        return move
    for name in ("rename", "replace", "link"):  # however a file is moved into place
        monkeypatch.setattr(os, name, failing(getattr(os, name)))
    with pytest.raises(WriteError, match="nothing was written"):
        spark_commit(out, SECOND, checkpoint, 1)
    monkeypatch.undo()
    assert len(calls) >= 3 and tree_hash(out) == before  # no record of batch 1, no journal, no temporary
    spark_commit(out, SECOND, checkpoint, 1)  # Spark's run of batch 1 again
    assert _values(out / "t-0") == FIRST + SECOND


# --- kills at every step ------------------------------------------------------------------------------------------
KILLS = ["group-written", "group-journal", "group-placed", "group-placed:2"]


@pytest.mark.parametrize("writer", sorted(WRITERS))
@pytest.mark.parametrize("point", KILLS)
def test_a_kill_at_any_step_leaves_the_input_intact_and_the_rerun_whole(tmp_path, writer, point):
    """SIGKILL at each step of a writer's commit (:func:`kdump.write.atomic.crash_point`): the input is intact; the
    output is absent, or whole and verified, or recognisably interrupted (a journal ``verify`` reports); the same
    command run again finishes the job (exit 0), verifies clean and leaves nothing behind -- the lock included."""
    src = partition_copy(tmp_path, name="src-0")
    out = tmp_path / "out"
    out.mkdir()
    before = tree_hash(src)
    args = [str(a) for a in WRITERS[writer](src, out)]
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{KILL_AT_ENV: point})
    proc = subprocess.run([sys.executable, "-m", "kdump", *args], env=env, capture_output=True, timeout=120)
    assert proc.returncode in (-signal.SIGKILL, 0), proc.stderr.decode()
    assert tree_hash(src) == before
    again = run_cli(*args)
    assert again.exit_code == 0, again.output
    assert tree_hash(src) == before
    written = out / "salvaged" if writer == "salvage-directory" else out / "converted" \
        if writer == "convert-directory" else out
    if writer == "index-rebuild":  # indexes without their segment: the same bytes as an uninterrupted run's
        fresh = tmp_path / "fresh"
        fresh.mkdir()
        assert run_cli(*WRITERS[writer](src, fresh)).exit_code == 0
        assert tree_hash(out) == tree_hash(fresh)
    else:
        assert run_cli("verify", "--deep", written).exit_code == 0
    assert left_behind(out) == [] and left_behind(written) == []


def test_a_task_write_failure_is_read_back_from_sparks_wrapping():
    """What the driver receives when an export task fails to write: Spark's error text with the task's Python
    traceback inside; :func:`kdump.spark.jobs.write_failure` finds the file, the errno and the reason in it."""
    pytest.importorskip("pyarrow")
    from kdump.spark.jobs import ExportWriteFailed, write_failure
    inner = ExportWriteFailed("[errno 28] No space left on device [path /data/.out.x1y2z3w4.tmp/part-00003.parquet]")
    wrapped = Exception("An error occurred while calling o85.collectToPython.\n: org.apache.spark.SparkException: "
                        "Job aborted due to stage failure: Task 3 in stage 1.0 failed 1 times\n"
                        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
                        '  File "/kdump/spark/jobs.py", line 170, in _export_task\n'
                        f"kdump.spark.jobs.ExportWriteFailed: {inner}\n\n\tat org.apache.spark.api.python...")
    for error in (inner, wrapped):
        found = write_failure(error)
        assert (found.errno, found.strerror, found.filename) == (
            errno.ENOSPC, "No space left on device", "/data/.out.x1y2z3w4.tmp/part-00003.parquet")
    assert write_failure(Exception("kdump.spark.arrow.DamagedData: x.log: at byte 0: crc")) is None


# --- on Spark (the one test session; few and small) ---------------------------------------------------------------
def test_spark_export_commits_whole_or_leaves_nothing(spark, tmp_path):
    """Through Spark: a JSON export (Spark's own writer, into the staging directory) committed whole, with kdump's
    _SUCCESS; a FAILFAST export that meets damage leaves nothing; the session's scratch is this run's own."""
    from kdump.spark import jobs, session
    from kdump.spark.arrow import ReadOptions
    from kdump.spark.schema import default_columns
    out = tmp_path / "json"
    assert jobs.export(spark, [str(SOUND)], str(out), "json").records == records_in(SOUND)
    assert json.loads((out / "_SUCCESS").read_text())["writer"] == "kdump spark scan"
    assert any(n.startswith("part-") for n in os.listdir(out)) and "json" not in os.listdir(out)
    failfast = ReadOptions(columns=tuple(default_columns(True, False)), failfast=True)
    with pytest.raises(Exception, match="DamagedData"):
        jobs.export(spark, [str(CRC_BAD)], str(tmp_path / "ff"), "parquet", failfast)
    assert os.listdir(tmp_path) == ["json"]
    local = spark.sparkContext.getConf().get("spark.local.dir", "")
    assert local.startswith(session.scratch_directory()), local


def test_a_leftover_temporary_is_reported_with_its_size(tmp_path):
    """A 50,000-byte temporary of a killed run was reported as "0 bytes"."""
    part = partition_copy(tmp_path)
    (part / ".00000000000000000000.log.abcdefgh.tmp").write_bytes(b"\0" * 50_000)
    result = run_cli("verify", "--format", "json", part)
    (left,) = [f for f in json.loads(result.stdout)["files"] if f["path"].endswith(".tmp")]
    assert left["bytes"] == 50_000


def test_spark_stats_whose_task_cannot_spill_exits_2(tmp_path, monkeypatch):
    """A ``kdump spark stats`` task whose key digests cannot be spilled fails with kdump's WriteError inside
    Spark's error: exit 2 naming the directory, never 70."""
    from kdump.errors import WriteError
    from kdump.spark import jobs
    spill = WriteError(errno.ENOSPC, "No space left on device (spilling key digests); the spill files were "
                       "removed and nothing was left", str(tmp_path))
    wrapped = Exception("org.apache.spark.SparkException: Job aborted due to stage failure\n"
                        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n"
                        f"kdump.errors.WriteError: {spill}\n\n\tat org.apache.spark...")

    def failing(*args, **kwargs):
        raise wrapped
    monkeypatch.setattr("kdump.commands.spark._start", lambda ui, master: (FakeSpark(), False))
    monkeypatch.setattr(jobs, "stats", failing)
    result = run_cli("spark", "stats", SOUND)
    assert result.exit_code == 2, result.output
    assert f"{tmp_path}: cannot write: No space left on device" in result.stderr
    assert "internal error" not in result.output
