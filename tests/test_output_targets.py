"""``--force`` replaces only a regular file kdump would have written (issue 22, item 4): a FIFO or a symbolic link
given as the output is refused with exit 2 and left as it was, by every command that writes. (A directory given
as ``-o`` is where convert and salvage write their files, as documented.)"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEGMENT = ROOT / "fixtures/generated/v2-none-createtime/00000000000000000000.log"


def _kdump(*args, cwd):
    """A real process: the FIFO must never be opened for writing (a write would block forever)."""
    return subprocess.run([sys.executable, "-m", "kdump", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def _targets(tmp_path):
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    victim = tmp_path / "someone-elses.txt"
    victim.write_text("keep me")
    link = tmp_path / "link.log"
    link.symlink_to(victim)
    return {"FIFO": fifo, "symbolic link": link}, victim


COMMANDS = {
    "convert": lambda out: ["convert", "--to-magic", "1", "--force", str(SEGMENT), "-o", str(out)],
    "salvage": lambda out: ["salvage", "--force", str(SEGMENT), "-o", str(out)],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("kind", ["FIFO", "symbolic link"])
def test_force_refuses_what_is_not_a_regular_file(tmp_path, command, kind):
    targets, victim = _targets(tmp_path)
    target = targets[kind]
    before = os.lstat(target).st_mode
    result = _kdump(*COMMANDS[command](target), cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    assert os.lstat(target).st_mode == before  # still a FIFO, still a link
    assert victim.read_text() == "keep me"  # a link's target is never written
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # nothing half-written left


def test_force_still_replaces_a_regular_file(tmp_path):
    out = tmp_path / "out.log"
    shutil.copy(SEGMENT, out)
    result = _kdump(*COMMANDS["convert"](out), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() != SEGMENT.read_bytes() and out.read_bytes()[16] == 1  # now magic 1


def test_index_rebuild_force_refuses_a_fifo_where_an_index_goes(tmp_path):
    out = tmp_path / "idx"
    out.mkdir()
    fifo = out / "00000000000000000000.index"
    os.mkfifo(fifo)
    result = _kdump("index", "rebuild", "--force", "-o", str(out), str(SEGMENT), cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "FIFO" in result.stderr and "Traceback" not in result.stderr
    assert os.path.exists(fifo) and not os.path.isfile(fifo)
