"""What each process (one job's, or each ``--jobs`` worker's) no longer pays again (issue 23 item 4): the page faults
of glibc's start-up malloc thresholds, and imports of modules a run does not use."""
from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The allocation pattern of a compressed batch's decompression: a few buffers above 128 KiB (glibc's mmap threshold
# at start), freed together, again and again. Prints the page faults it took.
CHURN = """
import resource, sys
if sys.argv[1] == "raised":
    from kdump.jobs import raise_malloc_thresholds
    raise_malloc_thresholds()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(50):
    buffers = [bytearray(150_000) for _ in range(8)]
    del buffers
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _python(code: str, *args: str) -> str:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout


@pytest.mark.skipif(sys.platform != "linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
def test_raised_malloc_thresholds_keep_freed_buffers_mapped():
    """Without it the heap's top is trimmed and regrown (or each buffer mapped afresh) every round: a fault per
    4 KiB, 1.2 MB a round; with it the buffers of the first round are reused."""
    one_round = 8 * 150_000 // 4096  # the pages of the buffers of one round
    faults = int(_python(CHURN, "start"))
    raised = int(_python(CHURN, "raised"))
    assert faults > 5 * one_round  # the churn this guards against is there to be seen (10 rounds' worth here)
    assert raised < 1.2 * one_round  # the first round's pages, kept


def test_the_cli_raises_the_thresholds_before_any_command(monkeypatch):
    from kdump import cli, jobs as parallel
    calls = []
    monkeypatch.setattr(parallel, "raise_malloc_thresholds", lambda: calls.append(True))
    with pytest.raises(SystemExit):
        cli.main(["--version"])
    assert calls == [True]


# the writer's modules (all of kdump.write but the findings for leftovers, the segment writer and the digests)
WRITER_IMPORTED = ("any(f'kdump.write.{m}' in sys.modules for m in "
                   "('atomic', 'group', 'killed', 'tempdir', 'lock', 'guards'))")
IMPORTS = f"""
import sys
from kdump.write.leftovers import leftover_reports
reports = leftover_reports(sys.argv[1])
print(len(reports), {WRITER_IMPORTED})
"""


def test_a_directory_without_kdump_temporaries_does_not_import_the_writer(tmp_path):
    """verify and index check list each directory's leftovers; without any, the writer's modules (hashlib, tempfile,
    threads: 0.013 s) stay unimported, in one job and in each worker."""
    (tmp_path / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / "00000000000000000000.index").write_bytes(b"")
    assert _python(IMPORTS, str(tmp_path)).split() == ["0", "False"]
    assert _python(IMPORTS, str(tmp_path / "missing")).split() == ["0", "False"]


def test_a_stale_temporary_is_still_reported(tmp_path):
    """The shortcut does not hide a leftover: a kdump temporary no process holds is reported, as before."""
    (tmp_path / "00000000000000000000.log").write_bytes(b"")
    (tmp_path / ".00000000000000000000.log.abcd1234.tmp").write_bytes(b"partial")
    count, imported = _python(IMPORTS, str(tmp_path)).split()
    assert (count, imported) == ("1", "True")


CHECK_IMPORTS = f"""
import sys
from kdump.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print({WRITER_IMPORTED}, file=sys.stderr)
"""


@pytest.mark.parametrize("command", [["index", "check", "--deep"], ["verify", "--deep"]])
def test_checking_a_log_directory_imports_no_writer(tmp_path, command):
    """index check --deep recovers every segment (kdump.index.rebuild) and writes nothing: the writer's module is
    not imported, in one job (each worker would import it again)."""
    from test_jobs import _log_dir
    logs = _log_dir(tmp_path)
    got = subprocess.run([sys.executable, "-c", CHECK_IMPORTS, *command, "--jobs", "1", str(logs)], cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), capture_output=True, text=True)
    assert got.returncode == 0 and got.stderr.splitlines()[-1] == "False", got.stderr[-2000:]


def _wait_for(path: str, i: int) -> bool:
    """Unit 0 at once; unit 1 waits (10 s at most) for the file the caller makes when it has unit 0's result."""
    import time
    if i == 0:
        return True
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if os.path.exists(path):
            return True
        time.sleep(0.01)
    return False


def test_ordered_results_gives_each_result_while_the_others_run(tmp_path, monkeypatch):
    """dump writes out a partition while the workers dump the next: unit 1 is still running when unit 0's result
    is used (ordered_map would give nothing before every unit is done)."""
    from kdump import jobs as parallel
    monkeypatch.setattr(parallel, "can_fork", lambda: True)  # (the suite may have left a thread running)
    marker = str(tmp_path / "unit-0-taken")
    results = parallel.ordered_results(_wait_for, [(marker, 0), (marker, 1)], 2)
    try:
        assert next(results) is True
        open(marker, "w").close()
        assert next(results) is True  # it saw the file: made while it ran
        assert list(results) == []
    finally:
        results.close()


def _forever(i: int) -> int:
    import time
    if i:
        time.sleep(60)
    return i


def test_closing_ordered_results_early_ends_the_workers(monkeypatch):
    """A caller that stops (an error writing out a partition) does not wait for the units still running."""
    import time

    from kdump import jobs as parallel
    monkeypatch.setattr(parallel, "can_fork", lambda: True)
    results = parallel.ordered_results(_forever, [(0,), (1,), (1,)], 2)
    assert next(results) == 0
    start = time.monotonic()
    results.close()
    assert time.monotonic() - start < 10
