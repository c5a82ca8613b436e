"""Issue 11, points 7 and 10: kills during `index rebuild` and `convert` leave a recognisable state that the next
run cleans up; a segment and its indexes appear together; a partition is converted all or nothing.

The kills are deterministic: the command runs in a subprocess with the test-only hook KDUMP_TEST_KILL_AT, which
SIGKILLs it at a named point (kdump.write.atomic.crash_point; kdump.write.group's docstring gives the steps)."""
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kdump import codec as kcodec
from kdump.write.atomic import KILL_AT_ENV, AtomicFile
from kdump.write.group import AtomicGroup
from kdump.write.killed import clean_leftovers, leftovers
from support.cli import run_cli
from kdump.read.logdir import FileKind, classify
from kdump.write.segment import RecordBatchBuilder
from support.segments import T0, data_batch, write_log

ROOT = Path(__file__).resolve().parent.parent
SEG = "00000000000000000000"


def kill_at(point: str, *args) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{KILL_AT_ENV: point})
    proc = subprocess.run([sys.executable, "-m", "kdump", *map(str, args)], env=env, capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, (point, proc.returncode, proc.stderr.decode())



def temporaries(directory) -> list[str]:
    return sorted(n for n in os.listdir(directory) if classify(n) is FileKind.KDUMP_TEMP)


def codes(result) -> set:
    return {f["code"] for r in json.loads(result.output)["files"] for f in r["findings"]}


def segment(directory) -> Path:
    """40 batches: the offset and time indexes differ between index.interval.bytes 0 and 4096."""
    return Path(write_log(directory, 0, [data_batch(i * 10, 10, ts=T0 + i * 100) for i in range(40)]))


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory):
    """(old, new) bytes of .index and .timeindex: old = interval 0 (what is there before), new = recovery's."""
    out = {}
    for interval in (0, 4096):
        d = tmp_path_factory.mktemp(f"ref{interval}")
        segment(d)
        assert run_cli("index", "rebuild", "--index-interval-bytes", interval, d).exit_code == 0
        out[interval] = {k: (d / f"{SEG}.{k}").read_bytes() for k in ("index", "timeindex")}
    assert out[0]["index"] != out[4096]["index"] and out[0]["timeindex"] != out[4096]["timeindex"]
    return out[0], out[4096]


# --- index rebuild --force -----------------------------------------------------------------------------------
# group-placed:1 = the old .index moved to .bak; :2 = the .timeindex placed; :3 = the .index placed (journal left)
@pytest.mark.parametrize("point", ["group-written", "group-journal", "group-placed:1", "group-placed:2",
                                   "group-placed:3"])
def test_kill_during_index_rebuild_force(point, tmp_path, rebuilt):
    old, new = rebuilt
    log = segment(tmp_path)
    for k in ("index", "timeindex"):
        (tmp_path / f"{SEG}.{k}").write_bytes(old[k])
    kill_at(point, "index", "rebuild", "--force", log)

    index, timeindex = tmp_path / f"{SEG}.index", tmp_path / f"{SEG}.timeindex"
    # recognisably incomplete: never a new .index beside an old .timeindex
    if index.exists() and index.read_bytes() == new["index"]:
        assert timeindex.read_bytes() == new["timeindex"]
    if point in ("group-placed:1", "group-placed:2"):
        assert not index.exists()  # the window is marked by the missing .index (Kafka then rebuilds them all)
    assert temporaries(tmp_path)
    check = run_cli("index", "check", "--format", "json", tmp_path)
    expected = "kdump-temporary-left" if point == "group-written" else "kdump-write-interrupted"
    assert expected in codes(check)
    # a leftover temporary beside intact files is a warning (exit 1 only with --fail-on warning); files that are
    # part old, part new are an error
    failing = ["--fail-on", "warning"] if point == "group-written" else []
    assert check.exit_code == (0 if failing else 1)
    assert run_cli("index", "check", *failing, tmp_path).exit_code == 1
    verify = run_cli("verify", "--format", "json", *failing, tmp_path)
    assert verify.exit_code == 1 and expected in codes(verify)

    again = run_cli("index", "rebuild", "--force", log)  # the next run cleans up and succeeds
    assert again.exit_code == 0, again.output
    assert "left by an interrupted kdump run" in again.output
    assert index.read_bytes() == new["index"] and timeindex.read_bytes() == new["timeindex"]
    # the backups are the files from before the interrupted run, not its half-written output
    assert (tmp_path / f"{SEG}.index.bak").read_bytes() == old["index"]
    assert (tmp_path / f"{SEG}.timeindex.bak").read_bytes() == old["timeindex"]
    assert temporaries(tmp_path) == []
    assert run_cli("index", "check", tmp_path).exit_code == 0


def test_kill_during_first_index_rebuild_next_run_needs_no_force(tmp_path, rebuilt):
    """Files the interrupted run itself placed are its own: the next run replaces them without --force."""
    log = segment(tmp_path)
    kill_at("group-placed:2", "index", "rebuild", log)  # .timeindex placed, .index not yet
    assert (tmp_path / f"{SEG}.timeindex").exists() and not (tmp_path / f"{SEG}.index").exists()
    again = run_cli("index", "rebuild", log)
    assert again.exit_code == 0, again.output
    assert (tmp_path / f"{SEG}.index").read_bytes() == rebuilt[1]["index"]
    assert not [n for n in os.listdir(tmp_path) if n.endswith(".bak")] and temporaries(tmp_path) == []


def test_force_rewrites_only_what_differs_and_keeps_one_bak(tmp_path, rebuilt):
    old, new = rebuilt
    log = segment(tmp_path)
    index, timeindex = tmp_path / f"{SEG}.index", tmp_path / f"{SEG}.timeindex"
    index.write_bytes(new["index"])
    timeindex.write_bytes(old["timeindex"])
    inode = index.stat().st_ino
    result = run_cli("index", "rebuild", "--force", log)
    assert result.exit_code == 0 and f"unchanged {index}" in result.output
    assert index.stat().st_ino == inode and not (tmp_path / f"{SEG}.index.bak").exists()  # not rewritten
    assert timeindex.read_bytes() == new["timeindex"]
    assert (tmp_path / f"{SEG}.timeindex.bak").read_bytes() == old["timeindex"]
    timeindex.write_bytes(b"\0" * 12)  # damaged again: a second --force replaces the .bak
    assert run_cli("index", "rebuild", "--force", log).exit_code == 0
    assert (tmp_path / f"{SEG}.timeindex.bak").read_bytes() == b"\0" * 12
    assert sorted(n for n in os.listdir(tmp_path) if ".bak" in n) == [f"{SEG}.timeindex.bak"]


# --- convert ---------------------------------------------------------------------------------------------------
# members: .log, .timeindex, .index (last); group-placed:1 = nothing to move aside, :2 = .log, :3 = .timeindex
@pytest.mark.parametrize("point", ["group-written", "group-journal", "group-placed:2", "group-placed:3"])
def test_kill_during_convert(point, tmp_path):
    src = segment(tmp_path / "in")
    ref = tmp_path / "ref"
    assert run_cli("convert", src, "--to-magic", 1, "-o", f"{ref}/").exit_code == 0
    out = tmp_path / "out"
    out.mkdir()
    kill_at(point, "convert", src, "--to-magic", 1, "-o", f"{out}/")
    present = set(os.listdir(out)) - set(temporaries(out))
    assert f"{SEG}.index" not in present  # the segment is not complete: recognisable
    if f"{SEG}.log" in present:
        assert (out / f"{SEG}.log").read_bytes() == (ref / f"{SEG}.log").read_bytes()  # whole, never partial
    assert temporaries(out)
    again = run_cli("convert", src, "--to-magic", 1, "-o", f"{out}/")  # no --force needed: its own leftovers
    assert again.exit_code == 0, again.output
    assert sorted(os.listdir(out)) == sorted(os.listdir(ref))
    for name in os.listdir(ref):
        assert (out / name).read_bytes() == (ref / name).read_bytes(), name


def _partition(d: Path, third_zstd: bool) -> Path:
    d.mkdir(parents=True)
    write_log(d, 0, [data_batch(0, 5)])
    write_log(d, 5, [data_batch(5, 5)])
    b = RecordBatchBuilder(10, kcodec.ZSTD if third_zstd else kcodec.NONE)
    b.append(10, T0, b"k", b"v")
    write_log(d, 10, [b.build()])
    (d / "leader-epoch-checkpoint").write_text("0\n1\n0 0\n")
    (d / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ\n")
    return d


def test_partition_with_an_unconvertible_third_segment_leaves_nothing(tmp_path):
    part = _partition(tmp_path / "t-0", third_zstd=True)
    res = run_cli("convert", part, "--to-magic", 1, "-o", tmp_path / "t-0-v1")
    # exit 2: zstd batches to magic 1 without --recompress is a usage refusal (docs/cli.md)
    assert res.exit_code == 2 and "00000000000000000010.log" in res.output and "all or nothing" in res.output
    assert sorted(os.listdir(tmp_path)) == ["t-0"]  # no output partition, no temporary directory
    assert "converted /" not in res.output  # no segment is reported as converted


def test_partition_is_converted_with_its_checkpoint_files(tmp_path):
    part = _partition(tmp_path / "t-0", third_zstd=False)
    res = run_cli("convert", part, "--to-magic", 2, "-o", tmp_path / "t-0-v2")
    assert res.exit_code == 0, res.output
    names = os.listdir(tmp_path / "t-0-v2")
    assert {"leader-epoch-checkpoint", "partition.metadata", "00000000000000000010.index"} <= set(names)
    assert (tmp_path / "t-0-v2" / "partition.metadata").read_bytes() == (part / "partition.metadata").read_bytes()
    res = run_cli("convert", part, "--to-magic", 1, "-o", tmp_path / "t-0-v1")
    assert res.exit_code == 0, res.output
    names = os.listdir(tmp_path / "t-0-v1")
    assert "partition.metadata" in names and "leader-epoch-checkpoint" not in names  # magic 1 has no epochs
    assert sorted(os.listdir(tmp_path)) == ["t-0", "t-0-v1", "t-0-v2"]
    # into an existing, non-empty output: clashes refused before anything is converted
    res = run_cli("convert", part, "--to-magic", 2, "-o", tmp_path / "t-0-v1")
    assert res.exit_code == 2 and "--force" in res.output
    assert run_cli("convert", part, "--to-magic", 2, "--force", "-o", tmp_path / "t-0-v1").exit_code == 0
    for name in ("00000000000000000000.log", "00000000000000000010.timeindex", "leader-epoch-checkpoint"):
        assert (tmp_path / "t-0-v1" / name).read_bytes() == (tmp_path / "t-0-v2" / name).read_bytes(), name
    assert temporaries(tmp_path / "t-0-v1") == [] and sorted(os.listdir(tmp_path)) == ["t-0", "t-0-v1", "t-0-v2"]


@pytest.mark.parametrize("point", ["group-written:2", "directory-written"])
def test_kill_during_partition_convert(point, tmp_path):
    part = _partition(tmp_path / "t-0", third_zstd=False)
    out = tmp_path / "t-0-v2"
    kill_at(point, "convert", part, "--to-magic", 2, "-o", out)
    assert not out.exists()
    (work,) = temporaries(tmp_path)
    assert (tmp_path / work).is_dir()
    res = run_cli("verify", "--format", "json", tmp_path)
    assert "kdump-temporary-left" in codes(res) and res.exit_code == 0  # a warning: reported, not failing
    assert run_cli("verify", "--fail-on", "warning", tmp_path).exit_code == 1
    assert not [r for r in json.loads(res.output)["files"] if work in r["path"] and r["kind"] != "kdump-temporary"]
    again = run_cli("convert", part, "--to-magic", 2, "-o", out)
    assert again.exit_code == 0, again.output
    assert temporaries(tmp_path) == [] and len(os.listdir(out)) == 11  # 3 x (log, index, timeindex) + 2


# --- the pieces ------------------------------------------------------------------------------------------------
def test_a_temporary_held_by_a_running_writer_is_not_stale(tmp_path):
    target = tmp_path / "a.index"
    writing = AtomicFile(target)
    writing.write(b"12345678")
    assert leftovers(tmp_path) == []  # locked: another run's, not a leftover
    assert clean_leftovers(tmp_path, {"a.index"}) == ([], set())
    assert os.path.exists(writing.temporary_path)
    writing.commit()
    assert os.listdir(tmp_path) == ["a.index"]


def test_group_places_the_last_file_last_and_leaves_nothing(tmp_path):
    (tmp_path / "x.index").write_bytes(b"old-i")
    (tmp_path / "x.timeindex").write_bytes(b"old-t")
    group = AtomicGroup(tmp_path, overwrite=True)
    assert group.clean([tmp_path / "x.index", tmp_path / "x.timeindex"]) == []
    group.add(tmp_path / "x.timeindex").write(b"new-t")
    group.add(tmp_path / "x.index", last=True).write(b"new-i")
    seen = []
    real_replace, real_link = os.replace, os.link

    def spy(real):
        def call(a, b):
            if classify(b) is not FileKind.KDUMP_TEMP:
                seen.append(os.path.basename(b))
            real(a, b)
        return call

    os.replace, os.link = spy(real_replace), spy(real_link)
    try:
        group.commit()
    finally:
        os.replace, os.link = real_replace, real_link
    assert seen == ["x.index.bak", "x.timeindex.bak", "x.timeindex", "x.index"]  # .index out first, in last
    assert (tmp_path / "x.index").read_bytes() == b"new-i" and (tmp_path / "x.index.bak").read_bytes() == b"old-i"
    assert sorted(os.listdir(tmp_path)) == ["x.index", "x.index.bak", "x.timeindex", "x.timeindex.bak"]


def test_stale_leftovers_of_other_files_are_left_alone(tmp_path):
    """A run removes only the stale temporaries of the files it writes."""
    other = tmp_path / ".00000000000000000005.index.abcdefgh.tmp"
    mine = tmp_path / ".00000000000000000000.index.abcdefgh.tmp"
    other.write_bytes(b"x")
    mine.write_bytes(b"x")
    removed, _ = clean_leftovers(tmp_path, {"00000000000000000000.index"})
    assert removed == [str(mine)] and other.exists()
    shutil.rmtree(tmp_path)
