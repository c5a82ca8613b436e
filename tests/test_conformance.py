"""The conformance matrix (issue 20, item 5): every command x every class of input, with the exit code the one outcome
policy (:mod:`kdump.report.outcome`, README "Exit codes") gives, the label the command prints, and the same record and
batch counts from every command that counts them on the same damaged partition.

Data-driven: a command is one entry of :data:`COMMANDS` (how it is run, and the partition of Kafka's its inputs are
built from: a data topic, or the internal topic a replay reads), an input class one entry of :data:`INPUTS` (how
its input is built from that partition) and one row of :data:`EXPECTED_TABLE` (the exit code per command, ``w``
where a labelled command shows a warning that does not fail the run; ``-`` where the command does not apply: a
replay reads no indexes). ``index check`` judges the companion files only (damage in the log is ``verify``'s): its
label is WARN where a segment has no index, and so is ``verify``'s, which runs the same companion checks on a
partition directory (issue 29: the gate never passes what ``index check`` fails); a log that is no Kafka log at all
fails it as every command (the read layer's ``foreign_start``). Zero padding of 18 bytes or more holds no data, yet every command fails it
(the read layer's one policy, ``Damage.fails``; ``convert`` refuses it unless told to skip damage), as Kafka's
tool dies on it. Expected codes are the policy's,
read off the rules (0 read and sound, 1 damaged / not Kafka's / unreadable among readable, 2 nothing to read /
missing / refused), never off kdump's output. Kafka's own answers pin the two places where Kafka's text is the
contract: the tail DumpLogSegments reports as ``Found N invalid bytes at the end of F`` (exit 0, Kafka's walk in
the spec §3.9: 17 bytes or fewer left, or an entry declaring more bytes than remain) and the counts of the intact
batches (the corpus ``.log.json``, Kafka's own view of the file).
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import struct
from dataclasses import dataclass
from pathlib import Path

import crc32c
import pytest

from corpus import CORPUS
from support.cli import run_cli
from support.privileges import can_drop, without_read_anything
from support.segments import recovery_rule

# Each cell runs on the compiled and the pure path (the Spark jobs' cells once: their executors choose theirs).
on_both_backends = pytest.mark.usefixtures("backend")

SEGMENT = "00000000000000000000.log"
SNAPSHOT = CORPUS / "broker-written/producer-snapshot-3-producers/00000000000000094751.snapshot"


@dataclass(frozen=True)
class Base:
    """A segment of Kafka's own (the corpus) that inputs are built from, with Kafka's view of it (``.log.json``),
    and the partition directory it is copied into."""

    log: Path
    partition: str
    batch_count: int | None = None  # only the first batches (the rest of the file holds records kept bad on purpose)

    @property
    def batches(self) -> list[dict]:
        return json.loads(self.log.with_name(self.log.name + ".json").read_text())["batches"][:self.batch_count]

    @property
    def damaged(self) -> dict:
        return self.batches[1]  # the batch every mid-file damage hits

    def bytes(self) -> bytes:
        last = self.batches[-1]
        return self.log.read_bytes()[:last["position"] + last["size"]]

    def data(self) -> bytearray:
        return bytearray(self.bytes())


# Kafka's v2 gzip segment (8 batches, offsets 0-6116) for the data commands; the internal topics for the replays.
DATA = Base(CORPUS / "kafka-generated/v2-gzip" / SEGMENT, "orders-0")
INTERNAL = CORPUS / "kafka-generated/internal-topics"
OFFSETS = Base(CORPUS / "broker-written/consumer-offsets-v2" / SEGMENT, "__consumer_offsets-0")
TXN_STATE = Base(INTERNAL / "__transaction_state-0" / SEGMENT, "__transaction_state-0", batch_count=2)
METADATA = Base(CORPUS / "broker-written/kraft-metadata-log" / SEGMENT, "__cluster_metadata-0")
BATCHES = DATA.batches


# --- the inputs -------------------------------------------------------------------------------------------
def _partition(root: Path, data: bytes, base: Base, name: str | None = None) -> Path:
    part = root / (name or base.partition)
    part.mkdir(parents=True)
    (part / SEGMENT).write_bytes(data)
    return part


def _refresh_v2_crc(data: bytearray, batch: dict) -> None:
    start = batch["position"]
    end = start + batch["size"]
    struct.pack_into(">I", data, start + 17, crc32c.crc32c(bytes(data[start + 21:end])))


def clean(root, base):
    return [_partition(root, base.bytes(), base)]


def empty_directory(root, base):
    (root / "empty").mkdir()
    return [root / "empty"]


def empty_directory_among_readable(root, base):
    """An empty directory named beside a sound partition: nothing to read where the user pointed there (exit 2,
    as a missing path among readable ones)."""
    (root / "empty").mkdir()
    return [_partition(root, base.bytes(), base), root / "empty"]


def missing_path(root, base):
    return [root / "nonexistent"]


def fifo(root, base):
    os.mkfifo(root / SEGMENT)
    return [root / SEGMENT]


def symlink_loop(root, base):
    (root / SEGMENT).symlink_to(root / SEGMENT)
    return [root / SEGMENT]


def unreadable_among_readable(root, base):
    """A log directory of two partitions, with the indexes Kafka's recovery writes (so that index check reads each
    segment to check them), the second's segment of mode 000 (run as a user: tests/support/privileges.py)."""
    from kdump.index.rebuild import rebuild_directory
    logs = root / "logs"
    parts = [_partition(logs, base.bytes(), base, base.partition[:-1] + n) for n in "01"]
    for part in parts:
        rebuild_directory(str(part), None)
    (parts[1] / SEGMENT).chmod(0)
    return [logs]


def text_named_log(root, base):
    return [_partition(root, b"operator notes: this is no segment\n" * 20, base)]


def size_field_damage(root, base):
    data = base.data()
    struct.pack_into(">i", data, base.damaged["position"] + 8, 5)
    return [_partition(root, bytes(data), base)]


def unknown_magic(root, base):
    data = base.data()
    data[base.damaged["position"] + 16] = 7
    return [_partition(root, bytes(data), base)]


def undecompressable(root, base):
    data = base.data()
    damaged = base.damaged
    end = damaged["position"] + damaged["size"]
    data[end - 20:end] = b"\xff" * 20  # the gzip stream's end, under a CRC that matches again
    _refresh_v2_crc(data, damaged)
    return [_partition(root, bytes(data), base)]


def crc_mismatch(root, base):
    data = base.data()
    data[base.damaged["position"] + base.damaged["size"] - 1] ^= 0xFF
    return [_partition(root, bytes(data), base)]


_BOMB: list[bytes] = []


def decompression_bomb(root, base):
    """The intact segment, then a CRC-valid batch (offset 6117) whose one record decompresses past the default
    --max-batch-bytes (256 MiB)."""
    from support.hostile import v2_batch

    from kdump import codec
    if not _BOMB:
        payload = codec.compress(codec.ZSTD, bytes(300 << 20), magic=2)
        bomb = bytearray(v2_batch(payload, codec=codec.ZSTD, count=1, base_offset=6117))
        struct.pack_into(">i", bomb, 12, BATCHES[-1]["partitionLeaderEpoch"])  # (not under the CRC) as before it
        _BOMB.append(bytes(bomb))
    return [_partition(root, base.bytes() + _BOMB[0], base)]


def truncated_tail(root, base):
    return [_partition(root, base.bytes()[:-100], base)]


def short_zero_tail(root, base):
    return [_partition(root, base.bytes() + bytes(9), base)]


def long_zero_tail(root, base):
    return [_partition(root, base.bytes() + bytes(4096), base)]


def _with_indexes(root, base) -> Path:
    """The clean partition with the .index and .timeindex Kafka's recovery writes (the spec's rule restated in
    tests/support/segments.py, from Kafka's view of the log)."""
    part = _partition(root, base.bytes(), base)
    offset_index, time_index = recovery_rule(base.batches, 0)
    (part / "00000000000000000000.index").write_bytes(offset_index)
    (part / "00000000000000000000.timeindex").write_bytes(time_index)
    return part


def damaged_index(root, base):
    """An .index entry naming offset 2147483647 (relative), far past the segment's last offset."""
    part = _with_indexes(root, base)
    index = bytearray((part / "00000000000000000000.index").read_bytes())
    struct.pack_into(">i", index, len(index) - 8, 2**31 - 1)
    (part / "00000000000000000000.index").write_bytes(bytes(index))
    return [part]


def damaged_timeindex(root, base):
    """A .timeindex whose last entry's offset lies past the segment's last offset."""
    part = _with_indexes(root, base)
    index = bytearray((part / "00000000000000000000.timeindex").read_bytes())
    struct.pack_into(">i", index, len(index) - 4, 100_000)
    (part / "00000000000000000000.timeindex").write_bytes(bytes(index))
    return [part]


def damaged_snapshot(root, base):
    """A producer snapshot (Kafka's own, renamed to this partition's log end offset) with one byte flipped: its
    CRC-32C no longer matches."""
    part = _partition(root, base.bytes(), base)
    data = bytearray(SNAPSHOT.read_bytes())
    data[-1] ^= 0xFF
    (part / f"{base.batches[-1]['lastOffset'] + 1:020d}.snapshot").write_bytes(bytes(data))
    return [part]


def _split(root, base) -> Path:
    """The base segment cut into three segments at batch boundaries (batches 0-2, 3-4, 5-), as a broker rolls
    them."""
    part = root / base.partition
    part.mkdir(parents=True)
    data = base.bytes()
    batches = base.batches
    for lo, hi in [(0, 3), (3, 5), (5, len(batches))]:
        start = batches[lo]["position"]
        end = batches[hi - 1]["position"] + batches[hi - 1]["size"]
        (part / f"{batches[lo]['baseOffset']:020d}.log").write_bytes(data[start:end])
    return part


def missing_segment(root, base):
    part = _split(root, base)
    (part / f"{base.batches[3]['baseOffset']:020d}.log").unlink()
    return [part]


INPUTS = {f.__name__: f for f in (
    clean, empty_directory, empty_directory_among_readable, missing_path, fifo, symlink_loop, unreadable_among_readable, text_named_log,
    size_field_damage, unknown_magic, undecompressable, crc_mismatch, decompression_bomb, truncated_tail,
    short_zero_tail, long_zero_tail, damaged_index, damaged_timeindex, damaged_snapshot, missing_segment)}


# --- the commands -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    argv: tuple  # the words before the paths
    output: str | None = None  # an option naming a new output directory, if the command writes
    one_path: bool = False  # takes one path (the first)
    base: Base = DATA  # the partition its inputs are built from
    brokers: int = 1  # the input built this many times, each in a broker's directory of its own (replicas)
    segment: bool = False  # takes one segment file: a partition directory's first .log (else the path as given)


COMMANDS = {
    "dump": Command(("dump",)),
    "dump-deep": Command(("dump", "--deep-iteration")),
    "verify": Command(("verify", "-j", "1")),
    "verify-deep": Command(("verify", "--deep", "-j", "1")),
    "index-dump": Command(("index", "dump")),
    "index-check": Command(("index", "check", "-j", "1")),
    "index-check-deep": Command(("index", "check", "--deep", "-j", "1")),
    "index-rebuild": Command(("index", "rebuild", "-j", "1"), output="-o"),
    "convert": Command(("convert", "--to-magic", "2"), output="-o", one_path=True),
    "salvage": Command(("salvage",), output="-o", one_path=True),
    # one process, as verify and index check above: --jobs workers started by a fork server (when the test process
    # runs a thread) would not share the unreadable row's dropped capabilities
    "stats": Command(("stats", "--jobs", "1")),
    "txn": Command(("txn", "--jobs", "1")),
    "groups": Command(("groups",), base=OFFSETS),
    "txn-state": Command(("txn-state",), base=TXN_STATE),
    "metadata": Command(("metadata",), base=METADATA),
    # two brokers holding the same copy: in sync, so the copies' soundness alone decides (headers and CRCs, as txn)
    "replicas": Command(("replicas", "--jobs", "1"), brokers=2),
    # every batch of the segment, records expanded (a deep reader: a payload that does not decompress is damage)
    "explain": Command(("explain", "--records", "--to-offset", str(2**63 - 1)), one_path=True, segment=True),
}

# Exit code per input class (rows) and command (columns, in COMMANDS' order); "-": the command does not apply.
# A new input class is one row; a new command one column. Shallow readers (dump and verify without their deep
# flags, index rebuild, txn: batch headers and CRCs, as Kafka's recovery reads) never decompress a data batch, so
# a batch that does not decompress is no damage to them; the deep readers and every record reader fail it. index
# rebuild and convert take segments and partition directories, not a log directory (two partitions' files would
# meet in one output directory). explain reads one segment (a partition's first), as a deep reader: it fails what
# the deep readers fail, passes the crash-cut tail they pass, and reads no companion file nor a second segment.
COLUMNS = list(COMMANDS)
EXPECTED_TABLE = """
                             dump dump-deep verify verify-deep index-dump index-check index-check-deep index-rebuild convert salvage stats txn groups txn-state metadata replicas explain
clean                        0    0         0w     0w          2          0w          0w               0             0       0       0     0   0      0         0        0        0
empty_directory              2    2         2      2           2          2           2                2             2       2       2     2   2      2         2        2        2
empty_directory_among_readable 2    2         2      2           2          2           2                2             -       -       2     2   2      2         2        2        -
missing_path                 2    2         2      2           2          2           2                2             2       2       2     2   2      2         2        2        2
fifo                         2    2         2      2           2          2           2                2             2       2       2     2   2      2         2        2        2
symlink_loop                 2    2         2      2           2          2           2                2             2       2       2     2   2      2         2        2        2
unreadable_among_readable    1    1         1      1           1          1           1                -             -       -       1     1   1      1         1        1        -
text_named_log               1    1         1      1           2          1           1                1             1       1       1     1   1      1         1        1        1
size_field_damage            1    1         1      1           2          0w          0w               1             1       1       1     1   1      1         1        1        1
unknown_magic                1    1         1      1           2          0w          0w               1             1       1       1     1   1      1         1        1        1
undecompressable             0    1         0w     1           2          0w          0w               0             1       1       1     0   1      1         1        0        1
crc_mismatch                 1    1         1      1           2          0w          0w               1             1       1       1     1   1      1         1        1        1
decompression_bomb           0    1         0w     1           2          0w          0w               0             1       1       1     0   1      1         1        0        1
truncated_tail               0    0         0w     0w          2          0w          0w               0             0       0       0     0   0      0         0        0        0
short_zero_tail              0    0         0w     0w          2          0w          0w               0             0       0       0     0   0      0         0        0        0
long_zero_tail               1    1         1      1           2          0w          0w               1             1       1       1     1   1      1         1        1        1
damaged_index                0    0         1      1           0          1           1                0             0       0       0     0   -      -         -        0        0
damaged_timeindex            0    0         1      1           0          1           1                0             0       0       0     0   -      -         -        0        0
damaged_snapshot             0    0         1      1           1          1           1                0             0       0       0     0   -      -         -        0        0
missing_segment              0    0         0w     0w          2          0w          0w               0             0       0       0     0   0      -         1        0        0
"""


def _table(text: str) -> dict[str, dict[str, str]]:
    header, *rows = [line.split() for line in text.strip().splitlines()]
    assert header == COLUMNS, "the table's columns are COMMANDS, in order"
    table = {row[0]: dict(zip(header, row[1:], strict=True)) for row in rows}
    assert list(table) == list(INPUTS), "one row per input class, in INPUTS' order"
    return table


EXPECTED = _table(EXPECTED_TABLE)


# Commands that label each line they print (OK, WARN, FAIL; UNREADABLE) in text, and the run in JSON ("label").
LABELLED = {"verify", "verify-deep", "index-check", "index-check-deep"}
REPORTS = LABELLED | {"salvage"}  # commands whose report (standard output) says what failed, file by file


def _cells():
    for name in INPUTS:
        for command in COMMANDS:
            cell = EXPECTED[name][command]
            if cell == "-":
                continue
            yield pytest.param(name, command, cell, id=f"{name}-{command}")


def run(command: str, paths: list[Path], root: Path, *extra):
    cmd = COMMANDS[command]
    args = list(cmd.argv) + list(extra)
    if cmd.output is not None:
        args += [cmd.output, root / "out"]
    if cmd.segment and paths[0].is_dir() and not paths[0].is_symlink():
        paths = sorted(paths[0].glob("*.log"))[:1] or paths
    args += [paths[0]] if cmd.one_path else paths
    return run_cli(*args)


def _inputs(name: str, root: Path, base: Base = DATA) -> list[Path]:
    if name == "unreadable_among_readable" and not can_drop():
        pytest.skip("root reads a file of mode 000, and cannot drop that power here")
    return INPUTS[name](root, base)


def _as_a_user(name: str):
    """The run of an input class: the unreadable file unreadable even to root (tests/support/privileges.py)."""
    return without_read_anything() if name == "unreadable_among_readable" else contextlib.nullcontext()


@pytest.fixture
def root(tmp_path):
    yield tmp_path
    for p in tmp_path.rglob("*"):  # (a file of mode 000 left behind would stop pytest's clean-up)
        if not p.is_symlink() and p.is_file():
            p.chmod(0o644)


@on_both_backends
@pytest.mark.parametrize("name, command, cell", list(_cells()))
def test_exit_code_and_label(root, name, command, cell):
    """The cell's exit code; a failing run says why on stderr; a labelled command's labels agree with it: FAIL
    (or UNREADABLE) on a line exactly when the run exits 1, WARN where the cell says ``w`` (warnings that do not
    fail the run), and the JSON document's label the same."""
    code, warned = int(cell.rstrip("w")), cell.endswith("w")
    paths = _inputs(name, root, COMMANDS[command].base)
    for n in range(2, COMMANDS[command].brokers + 1):  # the same input on another broker
        (root / f"broker{n}").mkdir()
        paths += _inputs(name, root / f"broker{n}", COMMANDS[command].base)
    with _as_a_user(name):
        result = run(command, paths, root)
    assert "Traceback" not in result.output
    assert result.exit_code == code, result.output[-3000:]
    if code and command not in REPORTS:
        assert result.stderr.strip(), "a failing run says why on stderr"
    if command not in LABELLED:
        return
    shown = set(re.findall(r"^(OK|WARN|FAIL|UNREADABLE) ", result.stdout, re.M))
    if code != 2:
        assert bool(shown & {"FAIL", "UNREADABLE"}) == (code == 1), result.stdout
    if code == 0:
        assert ("WARN" in shown) == warned, result.stdout
    shutil.rmtree(root / "out", ignore_errors=True)
    with _as_a_user(name):
        doc = json.loads(run(command, paths, root, "--format", "json").stdout)
    assert doc["label"] == ("FAIL" if code else "WARN" if warned else "OK")
    assert doc["summary"]["exitCode"] == code


# --- the same counts from every command that counts -------------------------------------------------------
def _kafka_counts(lost: set[int]) -> tuple[int, int]:
    """(batches, records) of Kafka's own view of the base segment without the batches at index ``lost``."""
    kept = [b for i, b in enumerate(BATCHES) if i not in lost]
    return len(kept), sum(b["recordCount"] for b in kept)


def _dump_counts(paths):
    out = run_cli("dump", "--deep-iteration", *paths).stdout
    return out.count("\nbaseOffset: ") + out.startswith("baseOffset: "), out.count("\n| offset: ")


def _verify_counts(paths):
    summary = json.loads(run_cli("verify", "--deep", "-j", "1", "--format", "json", *paths).stdout)["summary"]
    return summary["batches"], summary["records"]


def _stats_counts(paths):
    total = json.loads(run_cli("stats", "--format", "json", *paths).stdout)["total"]
    return total["batches"], total["records"]


COUNTERS = {"dump": _dump_counts, "verify": _verify_counts, "stats": _stats_counts}
# input class -> the batches (indexes into Kafka's view) no reader can show
LOST = {"clean": set(), "size_field_damage": {1}, "unknown_magic": {1}, "missing_segment": {3, 4}}


def _count_cells():
    for name in LOST:
        for counter in COUNTERS:
            yield pytest.param(name, counter, id=f"{name}-{counter}")


@on_both_backends
@pytest.mark.parametrize("name, counter", list(_count_cells()))
def test_the_same_counts_from_every_command(root, name, counter):
    """dump, verify and stats read the same batches and records of a damaged partition: Kafka's view of the
    intact segment without the batches the damage took."""
    paths = INPUTS[name](root, DATA)
    assert COUNTERS[counter](paths) == _kafka_counts(LOST[name])


def test_the_same_counts_from_the_spark_source(spark, tmp_path):
    """The Spark source reads the records dump and verify read, on the partition with a damaged size field, when
    told to read past data loss (failOnDataLoss=false, as dump and verify go on); by default it fails, as Spark's
    Kafka source fails on data loss."""
    paths = size_field_damage(tmp_path, DATA)
    df = spark.read.format("kafka-log").option("failOnDataLoss", "false").load(str(paths[0]))
    assert df.count() == _kafka_counts(LOST["size_field_damage"])[1]
    with pytest.raises(Exception, match="failOnDataLoss=false reads past it"):
        spark.read.format("kafka-log").load(str(paths[0])).count()


# --- the Spark jobs: a few cells (a Spark session is slow to start; one serves them all) -------------------
SPARK_COMMANDS = {
    "spark-verify": Command(("spark", "verify")),
    "spark-scan": Command(("spark", "scan"), output="-o"),
    "spark-stats": Command(("spark", "stats")),
}
SPARK_EXPECTED = {  # input class -> exit code per Spark job, in SPARK_COMMANDS' order
    "clean": "0w 0 0",  # (spark verify runs the companion checks as verify does: no .index was copied)
    "missing_path": "2 2 2",
    "size_field_damage": "1 1 1",
    "truncated_tail": "0w 0 0",
}


def _spark_cells():
    for name, row in SPARK_EXPECTED.items():
        for command, cell in zip(SPARK_COMMANDS, row.split(), strict=True):
            yield pytest.param(name, command, cell, id=f"{name}-{command}")


@pytest.mark.parametrize("name, command, cell", list(_spark_cells()))
def test_spark_job_exit_code(spark, tmp_path, name, command, cell):
    code, warned = int(cell.rstrip("w")), cell.endswith("w")
    paths = INPUTS[name](tmp_path, DATA)
    cmd = SPARK_COMMANDS[command]
    args = [*cmd.argv, *([cmd.output, tmp_path / "out"] if cmd.output else []), *paths]
    result = run_cli(*args)
    assert "Traceback" not in result.output
    assert result.exit_code == code, result.output[-3000:]
    if command == "spark-verify" and code == 0:
        assert ("WARN" in set(re.findall(r"^(OK|WARN|FAIL) ", result.stdout, re.M))) == warned


def test_a_replay_reads_past_damage_inside_a_segment(tmp_path):
    """groups (as txn-state and metadata: one reader, kdump.replay.source) reads past a damaged size field, as every
    command does: every record of Kafka's view of the segment but those of the batch the damage took, and the
    damage said as one error object (exit 1)."""
    paths = size_field_damage(tmp_path, OFFSETS)
    result = run_cli("groups", "--format", "json", *paths)
    assert result.exit_code == 1, result.stderr
    doc = json.loads(result.stdout)
    kept = [b for i, b in enumerate(OFFSETS.batches) if i != 1]
    assert doc["records"] + doc["ignoredRecords"] == sum(b["recordCount"] for b in kept)
    assert [e["position"] for e in doc["skipped"]] == [OFFSETS.damaged["position"]]
