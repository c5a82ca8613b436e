"""Issue 22, item 5: ``index rebuild`` of a partition directory places its segments' index files in batches
(:func:`kdump.write.group.commit_groups`: one file-system sync and a few directory fsyncs per batch, the directory's
leftovers listed once), still atomic per segment and crash-safe. bench/bench_index_rebuild.py measures it."""
import os
import shutil
from pathlib import Path

import pytest

from corpus import CORPUS
from support.cli import run_cli
from test_crash import codes, kill_at, temporaries
from test_index_rebuild import trimmed
from support.segments import T0, data_batch, write_log

from kdump.index import rebuild as rebuild_module
from kdump.index.rebuild import recover_segment, write_recovery

SEGMENTS = [0, 400, 800]  # three segments of 40 batches of 10 records


def partition(directory: Path) -> list[Path]:
    return [Path(write_log(directory, base, [data_batch(base + i * 10, 10, ts=T0 + base + i * 100)
                                             for i in range(40)])) for base in SEGMENTS]


def index_files(directory: Path, interval: int) -> dict[str, bytes]:
    """What one-by-one rebuilds (write_recovery per segment, the path of a single .log) write."""
    out = {}
    for base in SEGMENTS:
        log = directory / f"{base:020d}.log"
        write_recovery(recover_segment(str(log), index_interval_bytes=interval), str(directory), force=True)
        for k in ("index", "timeindex"):
            out[f"{base:020d}.{k}"] = (directory / f"{base:020d}.{k}").read_bytes()
    return out


@pytest.fixture(scope="module")
def old_new(tmp_path_factory):
    """(old, new): every segment's index files at index.interval.bytes 0 (there before) and 4096 (recovery's)."""
    found = []
    for interval in (0, 4096):
        d = tmp_path_factory.mktemp(f"ref{interval}")
        partition(d)
        found.append(index_files(d, interval))
    assert all(found[0][k] != found[1][k] for k in found[0])
    return found[0], found[1]


@pytest.mark.parametrize("batch", [1, 2, 256])
def test_batched_rebuild_writes_what_one_by_one_rebuilds_write(tmp_path, monkeypatch, old_new, batch):
    monkeypatch.setattr(rebuild_module, "REBUILD_BATCH_SEGMENTS", batch)
    partition(tmp_path)
    result = run_cli("index", "rebuild", tmp_path)
    assert result.exit_code == 0, result.output
    assert {k: (tmp_path / k).read_bytes() for k in old_new[1]} == old_new[1]
    assert temporaries(tmp_path) == []


def test_batched_rebuild_of_a_broker_partition_gives_the_brokers_bytes(tmp_path):
    src = CORPUS / "broker-written" / "consumer-offsets-v2" / "00000000000000000000.log"
    d = tmp_path / "__consumer_offsets-0"
    d.mkdir()
    shutil.copy(src, d)
    out = tmp_path / "out"
    assert run_cli("index", "rebuild", "-o", out, d).exit_code == 0
    assert (out / "00000000000000000000.index").read_bytes() == trimmed(src.with_suffix(".index"), 8)
    assert (out / "00000000000000000000.timeindex").read_bytes() == trimmed(src.with_suffix(".timeindex"), 12)


# group-placed:1 = every segment's old .index moved to .bak; :2..:4 = the .timeindex files placed one by one;
# :5..:7 = the .index files placed (journal left at :7)
@pytest.mark.parametrize("point", ["group-written", "group-journal", "group-placed:1", "group-placed:3",
                                   "group-placed:4", "group-placed:6", "group-placed:7"])
def test_kill_during_batched_rebuild_force(point, tmp_path, old_new):
    old, new = old_new
    partition(tmp_path)
    for name, data in old.items():
        (tmp_path / name).write_bytes(data)
    kill_at(point, "index", "rebuild", "--force", tmp_path)

    for base in SEGMENTS:
        index, timeindex = tmp_path / f"{base:020d}.index", tmp_path / f"{base:020d}.timeindex"
        # per segment, recognisably incomplete: never a new .index beside an old .timeindex
        if index.exists() and index.read_bytes() == new[index.name]:
            assert timeindex.read_bytes() == new[timeindex.name]
        if point in ("group-placed:1", "group-placed:3", "group-placed:4"):
            assert not index.exists()  # the window is marked by the missing .index, for every segment of the batch
    assert temporaries(tmp_path)
    check = run_cli("index", "check", "--format", "json", tmp_path)
    expected = "kdump-temporary-left" if point == "group-written" else "kdump-write-interrupted"
    assert expected in codes(check)

    again = run_cli("index", "rebuild", "--force", tmp_path)  # the next run cleans up and succeeds
    assert again.exit_code == 0, again.output
    assert "left by an interrupted kdump run" in again.output
    assert {k: (tmp_path / k).read_bytes() for k in new} == new
    for name, data in old.items():  # the backups are the files from before the interrupted run
        assert (tmp_path / f"{name}.bak").read_bytes() == data
    assert temporaries(tmp_path) == []
    assert run_cli("index", "check", tmp_path).exit_code == 0


def test_a_segment_that_fails_stops_the_rebuild_after_the_ones_before_it(tmp_path):
    logs = partition(tmp_path)
    (tmp_path / f"{SEGMENTS[2]:020d}.index").write_bytes(b"x")  # exists: refused without --force
    result = run_cli("index", "rebuild", tmp_path)
    assert result.exit_code != 0
    for log in logs[:2]:  # written before the refusal, as one by one
        assert os.path.getsize(log.with_suffix(".timeindex")) > 0
    assert temporaries(tmp_path) == []
