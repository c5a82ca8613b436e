"""Issue 20 item 2: resumable writes. `kdump index rebuild` killed, then run again, finishes the job without
--force (its own leftovers cleaned, the indexes it already wrote recognised); a rerun on a finished partition exits
0 saying there was nothing to do; an index Kafka wrote that checks clean against its segment is kept, one that
does not is refused unless --force. Output folders kdump creates get the umask's mode.

The kills are real SIGKILLs at a named point (test_crash.py's hook); every index is compared with one built fresh
from a copy of the same partition."""
import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from support.cli import run_cli
from test_crash import kill_at, temporaries
from support.segments import T0, data_batch, write_log

from kdump.index.rebuild import REBUILD_BATCH_SEGMENTS

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "corpus"
INDEXES = (".index", ".timeindex", ".txnindex")
# more segments than one commit of rebuild_directory holds: a kill in the second commit leaves the first in place
SEGMENTS = REBUILD_BATCH_SEGMENTS + 44


@pytest.fixture(scope="module")
def partition(tmp_path_factory) -> Path:
    """SEGMENTS segments of 1 to 3 batches (so some have index entries and some do not)."""
    d = tmp_path_factory.mktemp("source") / "t-0"
    for s in range(SEGMENTS):
        base = s * 30
        write_log(d, base, [data_batch(base + b * 10, 10, ts=T0 + base + b, value=b"v" * 300)
                            for b in range(1 + s % 3)])
    return d


@pytest.fixture(scope="module")
def fresh(partition, tmp_path_factory) -> dict[str, bytes]:
    """Every index file a rebuild of an untouched copy writes, by name."""
    d = tmp_path_factory.mktemp("fresh") / "t-0"
    shutil.copytree(partition, d)
    assert run_cli("index", "rebuild", d).exit_code == 0
    return index_files(d)


def index_files(directory: Path) -> dict[str, bytes]:
    return {n: (directory / n).read_bytes() for n in sorted(os.listdir(directory)) if n.endswith(INDEXES)}


# first commit: 1 pass of group-placed after moving the .index files aside (none here), one per member placed
FIRST_COMMIT_PLACED = 1 + 2 * REBUILD_BATCH_SEGMENTS


@pytest.mark.parametrize("point", ["group-written:2", f"group-placed:{FIRST_COMMIT_PLACED + 3}"])
def test_a_killed_rebuild_is_finished_by_the_next_run(point, partition, fresh, tmp_path):
    d = tmp_path / "t-0"
    shutil.copytree(partition, d)
    kill_at(point, "index", "rebuild", d)
    indexed = [n for n in os.listdir(d) if n.endswith(".index")]
    assert len(indexed) == REBUILD_BATCH_SEGMENTS  # the first commit in place, the rest not
    assert temporaries(d)

    again = run_cli("index", "rebuild", d)  # no --force: what is there is the killed run's own, or sound
    assert again.exit_code == 0, again.stderr
    assert (f"{d}: {REBUILD_BATCH_SEGMENTS} segments already indexed, {SEGMENTS - REBUILD_BATCH_SEGMENTS} segments "
            "rebuilt") in again.stdout
    assert index_files(d) == fresh
    assert temporaries(d) == [] and not [n for n in os.listdir(d) if n.endswith(".bak")]

    done = run_cli("index", "rebuild", d)
    assert done.exit_code == 0, done.stderr
    assert f"{d}: nothing to do: the indexes of {SEGMENTS} segments are already in place" in done.stdout
    assert done.stderr == ""
    assert index_files(d) == fresh
    assert run_cli("index", "check", d).exit_code == 0


def test_a_rerun_of_one_segment_has_nothing_to_do(tmp_path):
    log = write_log(tmp_path, 0, [data_batch(i * 10, 10, ts=T0 + i) for i in range(40)])
    assert run_cli("index", "rebuild", log).exit_code == 0
    before = index_files(tmp_path)
    again = run_cli("index", "rebuild", "--format", "json", log)
    assert again.exit_code == 0, again.stderr
    (result,) = json.loads(again.stdout)["results"]
    assert result["written"] == [] and result["kept"] == [] and len(result["unchanged"]) == 2
    assert index_files(tmp_path) == before


def test_indexes_kafka_wrote_that_check_clean_are_kept(tmp_path):
    """Kafka's append path indexed this segment differently from recovery (docs/index.md): they are sound, so a
    rebuild without --force keeps them (before: exit 2, "exists (use --force)")."""
    d = tmp_path / "p-0"
    shutil.copytree(CORPUS / "broker-written" / "java-producer-headers-idempotent", d)
    kafka = index_files(d)
    result = run_cli("index", "rebuild", d)
    assert result.exit_code == 0, result.stderr
    for name in ("00000000000000000000.index", "00000000000000000000.timeindex"):
        assert f"  kept {d / name} (differs from what recovery writes, but checks clean against the log)" \
            in result.stdout
    assert "nothing to do" in result.stdout
    assert index_files(d) == kafka

    forced = run_cli("index", "rebuild", "--force", d)  # --force still writes what recovery writes
    assert forced.exit_code == 0, forced.stderr
    assert (d / "00000000000000000000.timeindex.bak").read_bytes() == kafka["00000000000000000000.timeindex"]
    assert index_files(d) != kafka


def test_an_existing_index_that_does_not_check_clean_is_refused(tmp_path):
    log = write_log(tmp_path, 0, [data_batch(i * 10, 10, ts=T0 + i) for i in range(40)])
    index = tmp_path / "00000000000000000000.index"
    index.write_bytes(bytes.fromhex("00000005 00000000 00000003 00000000"))  # offsets 5, 3: not increasing
    result = run_cli("index", "rebuild", log)
    assert result.exit_code == 2
    assert f"{index} exists and does not check clean against the log (" in result.stderr
    assert "--force" in result.stderr
    assert not (tmp_path / "00000000000000000000.timeindex").exists()  # nothing written
    assert run_cli("index", "rebuild", "--force", log).exit_code == 0


# --- output folders get the umask's mode -------------------------------------------------------------------------
@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("command", [
    ["convert", "{part}", "--to-magic", "1", "-o", "{out}"],
    ["salvage", "{part}", "-o", "{out}"],
    ["index", "rebuild", "-o", "{out}", "{part}"],
    ["convert", "{part}/00000000000000000000.log", "--to-magic", "1", "-o", "{out}/"],
], ids=["convert-partition", "salvage-partition", "index-rebuild", "convert-segment"])
def test_output_folders_get_the_umask_mode(command, tmp_path, umask_022):
    part = tmp_path / "t-0"
    write_log(part, 0, [data_batch(i * 10, 10, ts=T0 + i) for i in range(5)])
    out = tmp_path / "made" / "out"
    result = run_cli(*(a.format(part=part, out=out) for a in command))
    assert result.exit_code == 0, result.stderr
    assert mode(out) == 0o755 and mode(out.parent) == 0o755
    assert all(mode(out / n) == 0o644 for n in os.listdir(out))
