"""``--jobs``: verify, index check and index rebuild of a log directory give the same report, byte for byte,
and the same exit code, with one worker or several (partitions sound and damaged, a log-directory checkpoint,
a stray file), run as a user runs them (a separate process, so the worker pool is the real one)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kdump.format.v2_builder import RecordBatchBuilder

ROOT = Path(__file__).resolve().parent.parent


def _segment(path: Path, base: int, n: int, per_batch: int = 50) -> None:
    out = bytearray()
    for first in range(base, base + n, per_batch):
        b = RecordBatchBuilder(base_offset=first)
        for off in range(first, min(first + per_batch, base + n)):
            b.append(off, 1_700_000_000_000 + off, b"k%d" % off, b"value %d" % off)
        out += b.build()
    path.write_bytes(bytes(out))


def _log_dir(root: Path) -> Path:
    logs = root / "logs"
    for p in range(5):
        part = logs / f"orders-{p}"
        part.mkdir(parents=True)
        _segment(part / "00000000000000000000.log", 0, 300)
        _segment(part / "00000000000000000300.log", 300, 200)
    data = bytearray((logs / "orders-1" / "00000000000000000000.log").read_bytes())
    data[5000] ^= 0xFF  # a damaged batch in the middle
    (logs / "orders-1" / "00000000000000000000.log").write_bytes(bytes(data))
    with open(logs / "orders-3" / "00000000000000000300.log", "ab") as f:
        f.write(b"\x00\x00\x00\x00\x00\x00\x01\x2c\x00\x00")  # a torn tail
    (logs / "recovery-point-offset-checkpoint").write_text("0\n2\norders 0 500\norders 9 7\n")
    return logs


def _run(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "kdump", *args], cwd=cwd, env=env, capture_output=True)


@pytest.mark.parametrize("command", [["verify"], ["verify", "--deep"], ["verify", "--format", "json", "-v"],
                                     ["index", "check"], ["index", "check", "--deep", "--format", "json", "-v"]])
def test_same_report_with_any_number_of_jobs(tmp_path, command):
    _log_dir(tmp_path)
    one = _run(tmp_path, *command, "--jobs", "1", "logs")
    assert b"orders-1" in one.stdout + one.stderr  # the damage (or the missing indexes) reported
    if command[0] == "verify":
        assert one.returncode == 1
    for jobs in ("2", "3"):
        many = _run(tmp_path, *command, "--jobs", jobs, "logs")
        assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_rebuild_same_files_and_report(tmp_path, fmt):
    """Two copies of the log directory, rebuilt with 1 and 2 jobs: the same report and the same index files."""
    results = {}
    for jobs in ("1", "2"):
        here = tmp_path / jobs
        _log_dir(here)
        parts = sorted(p.name for p in (here / "logs").iterdir() if p.is_dir())
        proc = _run(here / "logs", "index", "rebuild", "--format", fmt, "--jobs", jobs, *parts, "missing-9")
        files = {str(p.relative_to(here)): p.read_bytes() for p in sorted((here / "logs").rglob("*index"))}
        own = str(here).encode()  # written files are named by absolute path: the copies' own part left out
        results[jobs] = (proc.returncode, proc.stdout.replace(own, b"HERE"), proc.stderr.replace(own, b"HERE"), files)
        assert len(files) == 5 * 2 * 2  # .index and .timeindex of every segment
    assert results["1"] == results["2"]
    assert results["1"][0] == 2  # the missing directory


def test_workers_end_with_ctrl_c(tmp_path):
    """SIGINT to kdump (what Ctrl-C sends) ends it and its workers."""
    import signal
    import time
    logs = tmp_path / "logs"
    _segment(tmp_path / "one.log", 0, 1000, per_batch=1000)
    batch = (tmp_path / "one.log").read_bytes()
    for p in range(4):  # 2,000,000 records each (the same batch again and again): seconds of --deep work
        (logs / f"big-{p}").mkdir(parents=True)
        (logs / f"big-{p}" / "00000000000000000000.log").write_bytes(batch * 2000)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "kdump", "verify", "--deep", "--jobs", "2", str(logs)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    children: list[int] = []
    deadline = time.time() + 60
    while time.time() < deadline and len(children) < 2:  # two workers (forked, or children of a forkserver)
        time.sleep(0.05)
        children = _children(proc.pid)
        children += [g for c in children for g in _children(c)]
    assert proc.poll() is None, "the work ended before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode != 0
    deadline = time.time() + 30
    while time.time() < deadline and any(_alive(c) for c in children):
        time.sleep(0.1)
    assert not [c for c in children if _alive(c)]


def _children(pid: int) -> list[int]:
    out = []
    for task in Path("/proc").glob("[0-9]*"):
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            out.append(int(task.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"
