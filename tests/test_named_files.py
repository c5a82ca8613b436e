"""A file named on the command line is read by what its bytes are, whatever its name: a segment Kafka set aside
(``.deleted``, ``.cleaned``, ``.swap``), kdump's ``.bak`` or a copy under any name (``segment.bin``) is dumped,
counted and replayed as the same segment under its own name is; a directory walk keeps Kafka's naming rules and
says which set-aside segment it passed over."""
import json
import shutil
from pathlib import Path

import pytest
from support.cli import run_cli

from kdump.read.logdir import FileKind, named_base_offset, named_kind, read_kind

pytestmark = pytest.mark.usefixtures("backend")

ROOT = Path(__file__).resolve().parent.parent
# a segment of 18 records in 4 batches (one of them above 64 KiB)
SEGMENT = ROOT / "fixtures/generated/v2-none-createtime/00000000000000000000.log"
NAMES = ["00000000000000000000.log.deleted", "00000000000000000000.log.swap", "00000000000000000000.log.cleaned",
         "00000000000000000000.log.bak", "segment.bin", "partition-3-copy"]


@pytest.fixture(params=NAMES)
def renamed(request, tmp_path):
    target = tmp_path / request.param
    shutil.copy(SEGMENT, target)
    return target


def _batches(out: str) -> list[str]:
    return [line for line in out.splitlines() if not line.startswith(("Dumping ", "Log starting offset"))]


def test_dump_reads_a_named_file_by_its_bytes(renamed):
    original = run_cli("dump", "--deep-iteration", "--print-data-log", SEGMENT)
    got = run_cli("dump", "--deep-iteration", "--print-data-log", renamed)
    assert got.exit_code == 0, got.stderr
    assert "Ignoring unknown file" not in got.stderr
    assert _batches(got.stdout) == _batches(original.stdout) and len(_batches(got.stdout)) > 10
    # the base offset comes from the name where the name gives it, through a set-aside suffix too
    assert ("Log starting offset: 0" in got.stdout) == renamed.name.startswith("0000")


def test_json_dump_of_a_named_file(renamed):
    original = [json.loads(line) for line in run_cli("dump", "--format", "json", SEGMENT).stdout.splitlines()]
    got = [json.loads(line) for line in run_cli("dump", "--format", "json", renamed).stdout.splitlines()]
    assert [{k: v for k, v in o.items() if k != "path"} for o in got] == \
        [{k: v for k, v in o.items() if k != "path"} for o in original]


def test_stats_and_txn_of_a_named_file(renamed):
    for command in ("stats", "txn"):
        original = json.loads(run_cli(command, "--format", "json", SEGMENT).stdout)
        got = run_cli(command, "--format", "json", renamed)
        assert got.exit_code == 0, got.stderr
        doc = json.loads(got.stdout)
        assert json.dumps(doc).replace(str(renamed.parent), "DIR") == \
            json.dumps(original).replace(str(SEGMENT.parent), "DIR")


def test_verify_and_salvage_of_a_named_file(renamed, tmp_path):
    assert run_cli("verify", "--deep", renamed).exit_code == 0
    out = tmp_path / "out" / "00000000000000000000.log"
    out.parent.mkdir()
    assert run_cli("salvage", renamed, "-o", out).exit_code == 0
    assert out.read_bytes() == SEGMENT.read_bytes()


def test_a_named_text_file_is_said_to_be_no_segment(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("operator notes: the broker died at 03:12, disk full\n")
    result = run_cli("dump", notes)
    assert result.exit_code == 1 and "not a Kafka log segment" in result.stderr


def test_names():
    assert named_kind("00000000000000000005.index.deleted") is FileKind.INDEX
    assert named_kind("00000000000000000005.log.swap") is FileKind.LOG
    assert named_kind("00000000000000000005.log.bak.2") is FileKind.LOG
    assert named_base_offset("00000000000000000005.log.cleaned") == 5
    assert named_base_offset("segment.bin") is None
    assert named_kind("segment.bin") is FileKind.UNKNOWN and read_kind("segment.bin") is FileKind.LOG


def test_a_directory_walk_says_which_set_aside_segment_it_passed_over(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    shutil.copy(SEGMENT, part / "00000000000000000000.log")
    shutil.copy(SEGMENT, part / "00000000000000000018.log.deleted")
    result = run_cli("dump", part)
    assert result.exit_code == 0
    assert [line for line in result.stdout.splitlines() if line.startswith("Dumping")] == [
        f"Dumping {part / '00000000000000000000.log'}"]  # Kafka's naming rules: the deleted one is no segment
    assert f"{part / '00000000000000000018.log.deleted'}: note: passed over" in result.stderr
    assert "name it to read it" in result.stderr
    assert "passed over" not in run_cli("-q", "dump", part).stderr

