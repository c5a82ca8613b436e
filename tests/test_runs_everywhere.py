"""Plain legacy messages read as runs by stats, txn and salvage (issue 23 item 1): a ``LegacyRun`` of the
resynchronising walk is counted, replayed and copied whole, with what each said when it took the run message by
message (the reference: the same command with every run expanded by ``kdump.read.damage.by_batch``, as before).

The files are written by kafka-python's ``LegacyRecordBatchBuilder`` and ``DefaultRecordBatchBuilder`` (an
independent encoder); hand-counted numbers where they are simple. Both backends.
"""
from __future__ import annotations

import json

import pytest

from kdump.format import legacy
from kdump.format.columns import RecordKeys
from kdump.format.legacy import LegacyBatch, checked_run
from kdump.read import damage
from kdump.read.snapshot import ProducerEntry, encode_snapshot
from tests.support.cli import run_cli
from tests.test_legacy_runs import flip_crc, message, plain, v2_batch

pytestmark = pytest.mark.usefixtures("backend")


def _varied(first: int) -> list[bytes]:
    """Plain messages of both magics with what stats counts apart: keys repeated (superseded), no key, tombstones,
    timestamps -1 and below, LogAppendTime, keys of 300 bytes (the compiled digest's long path)."""
    out = []
    for i in range(120):
        key = None if i % 7 == 3 else (b"x" * 300 + b"%d" % (i % 5) if i % 11 == 0 else b"key-%d" % (i % 40))
        value = None if i % 9 == 4 else b"value %d" % i
        ts = -1 if i % 13 == 5 else (-7 if i % 29 == 6 else 1_700_000_000_000 + (i * 7919) % 1000)
        out.append(message(first + i, ts, key, value, magic=0 if 30 <= i < 45 else 1,
                           append_time=i % 17 == 2 and not 30 <= i < 45))
    return out


def _partition(tmp_path, name: str = "legacy-0"):
    """A partition of two segments: runs of varied plain messages around v2 batches, a message failing its CRC,
    and the second segment's keys repeating the first's."""
    part = tmp_path / name
    part.mkdir()
    first = _varied(0)
    first[70] = flip_crc(first[70])
    entries = [*first[:50], v2_batch(120, 4), *[message(o, 1_700_000_000_000, b"key-1", b"v") for o in (124, 125)],
               *first[50:]]
    # (the v2 batch and the messages after it take offsets 120-125; the varied messages after them go on at 50:
    # offsets decreasing, which the reader reports and the runs must not change)
    (part / "00000000000000000000.log").write_bytes(b"".join(entries))
    (part / "00000000000000001000.log").write_bytes(b"".join(_varied(1000)))
    return part


def _message_by_message(monkeypatch, module) -> None:
    """``module`` reads every run message by message, as before runs were taken whole (the reference)."""
    def expanded(*args, **kwargs):
        return damage.by_batch(damage.readable(*args, **kwargs))
    monkeypatch.setattr(module, "readable", expanded)


def _message_objects(monkeypatch) -> list:
    """Where each plain message read as its own Python object starts (a run expanded makes one per message; the
    reader reads the first plain message after a batch as one, and the run from the next)."""
    made: list = []
    original = LegacyBatch.__init__

    def counted(self, position, *args, **kwargs):
        made.append(position)
        original(self, position, *args, **kwargs)
    monkeypatch.setattr(LegacyBatch, "__init__", counted)
    return made


# --- the compiled walk of a run's keys -----------------------------------------------------------------------
def test_run_keys_twins_and_the_messages_one_by_one():
    data = b"".join(_varied(5))
    run = checked_run(data, 4096, 1000)
    assert run is not None and run.count == 120
    got = legacy.run_keys(data, 4096, run.count)
    assert got == legacy.run_keys_py(data, 4096, run.count)
    # each message's RecordKeys as stats took them before (a batch of one record each)
    one_by_one = [RecordKeys.of(m.columns(1 << 20)) for m in run.messages()]
    assert got.entries == b"".join(k.entries for k in one_by_one)
    assert (got.count, got.keyless, got.tombstones, got.record_bytes) == (
        120, sum(k.keyless for k in one_by_one), sum(k.tombstones for k in one_by_one), len(data))
    assert got.keyless == sum(1 for i in range(120) if i % 7 == 3) and got.magic0 == 15
    stated = [m.max_timestamp for m in run.messages() if m.max_timestamp >= 0]
    assert (got.min_timestamp, got.max_timestamp) == (min(stated), max(stated))
    # a part of the run, and no timestamp stated
    assert legacy.run_keys(data, 0, 3) == legacy.run_keys_py(data, 0, 3)
    bare = message(0, -1, None, b"v", magic=0)
    assert (legacy.run_keys(bare, 0, 1).min_timestamp, legacy.run_keys(bare, 0, 1).keyless) == (None, 1)


@pytest.mark.parametrize("seed", range(5))
def test_run_keys_twins_on_random_messages(seed):
    """Empty and null keys and values, keys of every length around the compiled digest's 256-byte buffer, both
    magics, timestamps around 0."""
    import random
    rnd = random.Random(seed)

    def blob():
        return None if rnd.random() < 0.2 else rnd.randbytes(rnd.choice([0, 1, 7, 255, 256, 257, 1000]))
    data = b"".join(message(i, rnd.choice([-2, -1, 0, 1, 2**40]), blob(), blob(), magic=rnd.choice([0, 1]))
                    for i in range(200))
    run = checked_run(data, 0, 1000)
    assert run is not None and run.count == 200
    for count in (1, 57, 200):
        assert legacy.run_keys(data, 0, count) == legacy.run_keys_py(data, 0, count)


# --- stats ---------------------------------------------------------------------------------------------------
def test_stats_counts_runs_whole_as_it_counted_their_messages(tmp_path, monkeypatch):
    part = _partition(tmp_path)
    with monkeypatch.context() as m:
        _message_by_message(m, __import__("kdump.stats.counts", fromlist=["readable"]))
        before = run_cli("stats", "--format", "json", str(part))
    now = run_cli("stats", "--format", "json", str(part))
    assert (now.exit_code, now.stdout, now.stderr) == (before.exit_code, before.stdout, before.stderr)
    (p,) = json.loads(now.stdout)["partitions"]
    # hand-counted: 240 varied messages, one failing its CRC (a batch counted, no records), 2 more plain ones, a v2
    # batch of 4 records (uncompressed too)
    assert (p["batches"], p["records"], p["magics"], p["codecs"]) == (
        243, 245, {"0": 30, "1": 212, "2": 1}, {"none": 243})
    assert p["keys"]["keylessRecords"] == 2 * sum(1 for i in range(120) if i % 7 == 3) - (70 % 7 == 3)
    assert len(p["errors"]) == 1 and p["errors"][0]["code"] == "crc-mismatch"


def test_stats_of_a_plain_file_by_hand(tmp_path, monkeypatch):
    part = tmp_path / "p-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(b"".join(plain(30) + plain(10, 30, magic=0)))
    made = _message_objects(monkeypatch)
    result = run_cli("stats", "--format", "json", str(part))
    assert result.exit_code == 0
    (p,) = json.loads(result.stdout)["partitions"]
    assert (p["batches"], p["records"], p["firstOffset"], p["lastOffset"], p["magics"]) == (
        40, 40, 0, 39, {"0": 10, "1": 30})
    assert (p["minTimestamp"], p["maxTimestamp"]) == (1_700_000_000_000, 1_700_000_000_029)
    assert p["keys"]["distinct"] == 30  # plain() names keys key-0.. from each call's 0: key-0..key-9 come twice
    assert p["compaction"]["supersededRecords"] == 10
    assert made == []


# --- txn -----------------------------------------------------------------------------------------------------
def _txn_partition(tmp_path):
    part = _partition(tmp_path, "txn-0")
    # snapshots inside runs (between two messages), at a run's first offset and beyond the log; one names a producer
    # with a transaction open that the log does not have (a disagreement)
    open_txn = ProducerEntry(producer_id=77, epoch=0, current_txn_first_offset=3)
    for offset, entries in ((10, []), (20, [open_txn]), (1000, []), (1050, []), (5000, [])):
        (part / f"{offset:020d}.snapshot").write_bytes(encode_snapshot(entries))
    return part


def test_txn_replays_runs_whole_as_it_replayed_their_messages(tmp_path, monkeypatch):
    from kdump.read import producers
    part = _txn_partition(tmp_path)
    with monkeypatch.context() as m:
        _message_by_message(m, producers)
        before = run_cli("txn", "--format", "json", str(part))
    now = run_cli("txn", "--format", "json", str(part))
    assert (now.exit_code, now.stdout, now.stderr) == (before.exit_code, before.stdout, before.stderr)
    (p,) = json.loads(now.stdout)["partitions"]
    said = [d["message"] for d in p["disagreements"]]
    assert len(said) == 1 and "producer 77" in said[0]


def test_txn_builds_no_object_per_plain_message(tmp_path, monkeypatch):
    part = tmp_path / "plain-0"
    part.mkdir()
    entries = plain(200) + [v2_batch(200, 3)] + plain(50, 203)
    (part / "00000000000000000000.log").write_bytes(b"".join(entries))
    made = _message_objects(monkeypatch)
    result = run_cli("txn", "--format", "json", str(part))
    assert result.exit_code == 0, result.stderr
    (p,) = json.loads(result.stdout)["partitions"]
    assert p["logEndOffset"] == 253
    assert made == [sum(len(e) for e in entries[:201])]  # the first plain message after the batch


@pytest.mark.parametrize("upto", [None, 0, 10, 49, 50, 121, 125, 1000, 1050, 1119])
def test_the_producer_replay_stops_inside_a_run_as_it_did(tmp_path, monkeypatch, upto):
    """A bound inside a run (``upto_offset``: index rebuild's state before a segment) applies the messages below it."""
    from kdump.read import producers
    from kdump.read.producer_state import ProducerStates
    part = _partition(tmp_path, "upto-0")
    segments = [(0, str(part / "00000000000000000000.log")), (1000, str(part / "00000000000000001000.log"))]

    def replay():
        p = producers.PartitionProducers(ProducerStates(track_sequences=True))
        p.scan(segments, upto_offset=upto)
        return p.state.end_offset, p.position, p.newest_timestamp, p.segment, p.notes
    with monkeypatch.context() as m:
        _message_by_message(m, producers)
        want = replay()
    assert replay() == want


# --- salvage -------------------------------------------------------------------------------------------------
def test_salvage_copies_runs_whole_as_it_copied_their_messages(tmp_path, monkeypatch):
    from kdump.convert import salvage
    from kdump.convert.salvage import salvage_segment
    source = _partition(tmp_path) / "00000000000000000000.log"
    with monkeypatch.context() as m:
        _message_by_message(m, salvage)
        before = salvage_segment(source, tmp_path / "before" / source.name)
    now = salvage_segment(source, tmp_path / "now" / source.name)
    assert (tmp_path / "now" / source.name).read_bytes() == (tmp_path / "before" / source.name).read_bytes()
    assert {**now.to_dict(), "outputPath": None, "indexes": None} == {**before.to_dict(), "outputPath": None,
                                                                     "indexes": None}
    assert [p.rsplit("/", 1)[1] for p in now.indexes] == [p.rsplit("/", 1)[1] for p in before.indexes]
    assert now.kept_positions == before.kept_positions
    for index in ("00000000000000000000.index", "00000000000000000000.timeindex"):
        assert (tmp_path / "now" / index).read_bytes() == (tmp_path / "before" / index).read_bytes()


def test_salvage_keeps_a_clean_run_without_an_object_per_message(tmp_path, monkeypatch):
    from kdump.convert.salvage import plan
    entries = [*plain(300), v2_batch(300, 2), *plain(100, 302)]
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join(entries))
    kept: list = []
    made = _message_objects(monkeypatch)
    result = plan(str(path), on_batch=lambda b: kept.append(b.entry_bytes()))
    assert (result.kept_batches, result.kept_records, result.first_offset, result.last_offset) == (401, 402, 0, 401)
    assert b"".join(kept) == path.read_bytes() and not result.dropped
    starts = [sum(len(e) for e in entries[:i]) for i in range(len(entries))]
    assert result.kept_positions == starts
    assert made == [starts[301]]  # the first plain message after the batch


# --- the Spark source and its Arrow builder -------------------------------------------------------------------
def _spark_file(tmp_path) -> str:
    """Runs of varied plain messages (magics and timestamp types changing inside them), a v2 batch between them,
    a message failing its CRC (damage), and messages whose timestamps have no microsecond value."""
    entries = _varied(0)
    entries[60] = flip_crc(entries[60])
    entries[90] = message(90, 2**62, b"far", b"future")
    entries[91] = message(91, -(2**62), b"far", b"past")
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b"".join([*entries[:40], v2_batch(200, 3), *entries[40:], *plain(30, 300, magic=0)]))
    return str(path)


def _arrow(path: str, monkeypatch, *, by_message: bool, offsets=None, lso=None, **options) -> tuple[list, list]:
    from kdump.spark import _source
    from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
    from kdump.spark.txn import TxnFilter
    said: list = []
    sl = SegmentSlice(path, "t", 0, offsets=offsets, txns=None if lso is None else TxnFilter((), lso))
    with monkeypatch.context() as m:
        if by_message:
            _message_by_message(m, _source)
        got = list(read_slices([sl], ReadOptions(**options), on_damage=lambda s, e: said.append(str(e))))
    return got, said


ALL_COLUMNS = ["key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers", "magic",
               "codec", "baseOffset", "producerId", "producerEpoch", "baseSequence", "isTransactional", "isControl",
               "partitionLeaderEpoch", "segment", "position", "crcValid"]


@pytest.mark.parametrize("builder", ["python", "auto"])
@pytest.mark.parametrize("case", [
    {},  # the default columns: the batch-level ones the same for a stretch of one magic and timestamp type
    {"columns": tuple(ALL_COLUMNS)},  # position and baseOffset: one message at a time
    {"columns": ("offset", "key", "magic", "timestampType", "crcValid"), "max_rows": 7},  # cut inside runs
    {"columns": ("value", "headers", "codec"), "max_bytes": 100},
    {"offsets": (15, 75)},  # the read's bounds inside runs
    {"lso": 50, "columns": ("offset", "timestamp", "segment")},  # read_committed: nothing from the LSO on
    {"offsets": (35, 310), "lso": 305, "check_crcs": False},
])
def test_spark_reads_runs_whole_as_it_read_their_messages(tmp_path, monkeypatch, builder, case):
    path = _spark_file(tmp_path)
    before, said_before = _arrow(path, monkeypatch, by_message=True, backend=builder, **case)
    now, said_now = _arrow(path, monkeypatch, by_message=False, backend=builder, **case)
    assert said_now == said_before and len(said_now) == (0 if case.get("check_crcs") is False else 1)
    assert [rb.num_rows for rb in now] == [rb.num_rows for rb in before]
    assert all(a.equals(b) for a, b in zip(now, before, strict=True))
    assert sum(rb.num_rows for rb in now) > 0


def test_arrow_builders_take_plain_messages_alike():
    """The compiled builder's add_plain against its pure twin, on one run, its stops included."""
    from kdump import _backend
    from kdump.spark.builder import PyColumnBuilder
    if not _backend.COMPILED_AVAILABLE:
        pytest.skip("the compiled extension is not built")
    data = b"".join(_varied(0))
    run = checked_run(data, 0, 1000)
    assert run is not None and run.count == 120
    compiled = _backend.compiled("ColumnBuilder")
    for lo, hi, max_rows, one_each in ((None, None, 1000, False), (10, 100, 1000, False), (None, 50, 9, False),
                                       (5, None, 1000, True)):
        builders = [cls(want_headers=True) for cls in (compiled, PyColumnBuilder)]
        walks = []
        for b in builders:
            at, left, stops = 0, run.count, []
            while left:
                walked = b.add_plain(data, at, left, lo, hi, max_rows, 1 << 20, one_each)
                stops.append((walked, b.resume_at, b.first_at, b.rows))
                at, left = b.resume_at, left - walked
            walks.append(stops)
        assert walks[0] == walks[1]
        arrays = [b.finish() for b in builders]
        assert all(arrays[0][c].equals(arrays[1][c]) for c in arrays[0])


def test_the_pure_builder_reads_no_more_of_a_run_than_each_call_takes(monkeypatch):
    """One message a call (``one_each``: the position or baseOffset column read) walks each message about once,
    not the whole rest of the run at every call (which made a run of n messages cost n * n / 2)."""
    from kdump.format import legacy
    from kdump.spark.builder import PyColumnBuilder
    data = b"".join(_varied(0))
    run = checked_run(data, 0, 1000)
    assert run is not None and run.count == 120
    walked = []
    real = legacy.inner_columns
    monkeypatch.setattr(legacy, "inner_columns", lambda *a: walked.append(real(*a)[0].count) or real(*a))
    b, at, left = PyColumnBuilder(), 0, run.count
    while left:
        n = b.add_plain(data, at, left, None, None, 1000, 1 << 20, True)
        at, left = b.resume_at, left - n
    assert b.rows == run.count
    assert sum(walked) == run.count


# --- the writer's read-back (salvage's and convert's output) ----------------------------------------------------
def test_the_written_file_is_read_back_in_runs(tmp_path, monkeypatch):
    from kdump.write.segment import SegmentWriter, WriteVerificationError
    entries = [*plain(50), v2_batch(50, 2), *plain(20, 52, magic=0)]
    made = _message_objects(monkeypatch)
    writer = SegmentWriter(str(tmp_path / "00000000000000000000.log"))
    writer.write(b"".join(entries), len(entries))
    writer.commit()
    assert len(made) <= 1  # (the first plain message after the batch, which the walk reads as an entry)
    bad = list(entries)
    bad[30] = flip_crc(bad[30])
    writer = SegmentWriter(str(tmp_path / "00000000000000000100.log"))
    writer.write(b"".join(bad), len(bad))
    with pytest.raises(WriteVerificationError) as e:
        writer.commit()
    at = sum(len(x) for x in bad[:30])
    assert f"entry 30 at byte {at}: CRC does not match its contents" in str(e.value)
