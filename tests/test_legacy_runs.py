"""Plain magic 0/1 messages read as runs by the read layer (issue 23 item 1): the resynchronising walk
(``SegmentReader.events`` / ``kdump.read.damage.readable``) hands consecutive intact plain messages on as one
``LegacyRun``; verify, dump and salvage must say exactly what they said message by message.

The files are written by kafka-python's ``LegacyRecordBatchBuilder`` (an independent encoder), and the byte
positions expected in findings and dump lines are the sums of the sizes of its messages. Both backends.
"""
from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kdump.format.legacy import LegacyBatch, LegacyRun, checked_run
from kdump.read.damage import RANGE, Damage, readable
from kdump.read.segment import SegmentReader
from kdump.render import kafka_text
from kdump.verify import VerifyOptions, verify_one
from tests.support.cli import run_cli

pytestmark = pytest.mark.usefixtures("backend")

LOG = "00000000000000000000.log"


def message(offset: int, timestamp: int, key: bytes | None, value: bytes | None, *, magic: int = 1,
            append_time: bool = False) -> bytes:
    """One plain message as kafka-python writes it (LogAppendTime: the attribute bit set and the CRC redone,
    kafka-python only writes CreateTime)."""
    builder = LegacyRecordBatchBuilder(magic, 0, 1 << 30)
    builder.append(offset, timestamp, key, value)
    data = bytearray(builder.build())
    if append_time:
        data[17] |= 0x08
        data[12:16] = zlib.crc32(bytes(data[16:])).to_bytes(4, "big")
    return bytes(data)


def v2_batch(base: int, count: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, 1 << 20)
    for i in range(count):
        builder.append(i, 1_700_000_000_000 + base + i, b"k", b"v" * 10, [])
    data = bytearray(builder.build())
    data[0:8] = base.to_bytes(8, "big")
    return bytes(data)


def plain(n: int, first: int = 0, **kw) -> list[bytes]:
    return [message(first + i, 1_700_000_000_000 + i, b"key-%d" % i, b"value %d" % i, **kw) for i in range(n)]


def write(tmp_path: Path, entries: list[bytes]) -> tuple[str, list[int]]:
    """The file of ``entries`` and where each starts."""
    path = tmp_path / LOG
    path.write_bytes(b"".join(entries))
    starts, at = [], 0
    for e in entries:
        starts.append(at)
        at += len(e)
    return str(path), starts


def items(path: str, **kw) -> list:
    with SegmentReader(path) as reader:
        return list(readable(reader, **kw))


def flip_crc(entry: bytes) -> bytes:
    """The message with its stored CRC wrong (its bytes otherwise intact)."""
    data = bytearray(entry)
    data[12] ^= 0xFF
    return bytes(data)


# --- the read layer -----------------------------------------------------------------------------------------
def test_plain_messages_come_as_one_run_between_batches(tmp_path):
    entries = [*plain(40), v2_batch(40, 5), *plain(30, 45, magic=0)]
    path, starts = write(tmp_path, entries)
    got = items(path)
    runs = [i for i in got if isinstance(i, LegacyRun)]
    assert [(r.position, r.count, r.base_offset, r.last_offset) for r in runs] == [
        (0, 40, 0, 39), (starts[41], 30, 45, 74)]
    assert runs[0].size == starts[40] and runs[1].end == starts[-1] + len(entries[-1])
    assert [type(i).__name__ for i in got] == ["LegacyRun", "RecordBatch", "LegacyRun", "Stop"]
    # a run's messages are the batches the entry-by-entry walk reads
    with SegmentReader(path) as reader:
        walked = [(b.position, b.last_offset, b.message.body) for b in reader.batches() if isinstance(b, LegacyBatch)]
    assert [(m.position, m.last_offset, m.message.body) for r in runs for m in r.messages()] == walked


def test_a_message_failing_its_crc_splits_the_run_where_it_is(tmp_path):
    entries = plain(50)
    entries[20] = flip_crc(entries[20])
    path, starts = write(tmp_path, entries)
    got = items(path)
    assert [(type(i).__name__, i.position) for i in got[:3]] == [
        ("LegacyRun", 0), ("LegacyBatch", starts[20]), ("LegacyRun", starts[21])]
    assert got[0].count == 20 and got[2].count == 29 and not got[1].is_valid()
    damage = items(path, show_invalid=False)[1]
    assert isinstance(damage, Damage) and (damage.code, damage.start, damage.end) == (
        "crc-mismatch", starts[20], starts[21])


def test_checked_run_ends_before_what_it_does_not_take():
    entries = plain(5)
    data = b"".join(entries)
    assert checked_run(data, 100, 3).count == 3
    assert checked_run(data[:-1], 0, 99).count == 4  # the last message does not end in the bytes read
    assert checked_run(flip_crc(entries[0]) + data, 0, 99) is None
    assert checked_run(v2_batch(0, 2) + data, 0, 99) is None
    run = checked_run(data, 7, 99)
    assert (run.position, run.size, run.summary.last_start) == (7, len(data), len(data) - len(entries[-1]))


# --- verify: the same findings, at the same byte positions ---------------------------------------------------
def findings(path: str, deep: bool = True) -> list[tuple]:
    report = verify_one(path, VerifyOptions(deep=deep))
    return sorted((f.code, f.position, f.first_offset) for f in report.findings), report.batches, report.records


@pytest.mark.parametrize("deep", [False, True])
def test_verify_damage_in_the_middle_of_a_run(tmp_path, deep):
    entries = plain(60)
    entries[25] = flip_crc(entries[25])
    size_damaged = bytearray(entries[40])
    size_damaged[8:12] = (3).to_bytes(4, "big")  # below the minimum entry size: bytes that hold no entry
    entries[40] = bytes(size_damaged)
    path, starts = write(tmp_path, entries)
    got, batches, records = findings(path, deep)
    codes = [(code, pos) for code, pos, _ in got]
    assert ("crc-mismatch", starts[25]) in codes
    assert ("size-below-minimum", starts[40]) in codes and ("damaged-range", starts[40]) in codes
    damaged = next(i for i in items(path, show_invalid=False) if isinstance(i, Damage) and i.kind == RANGE)
    assert (damaged.start, damaged.end, tuple(damaged.lost_offsets())) == (starts[40], starts[41], (40, 40))
    assert (batches, records) == (59, 58)  # the message failing its CRC is a batch, not a record


def test_verify_offsets_and_headers_in_runs(tmp_path):
    gap = plain(10) + plain(5, 13)  # offsets 10-12 missing
    path, starts = write(tmp_path, gap)
    got, batches, records = findings(path)
    assert got == [("offset-gap", starts[10], 10)] and (batches, records) == (15, 15)
    report = verify_one(path, VerifyOptions(deep=True))
    assert report.findings[0].message.startswith("3 offsets missing in 1 places, the first missing one is 10")

    back = plain(10) + plain(5, 3)  # offsets going back: each message below the last one is a finding
    path, starts = write(tmp_path, back)
    got, _, _ = findings(path)
    assert [(c, p) for c, p, _ in got] == [("offset-not-increasing", starts[i]) for i in range(10, 15)]

    bad_time = [*plain(3), message(3, -5, b"k", b"v"), *plain(3, 4)]
    path, starts = write(tmp_path, bad_time)
    got, _, _ = findings(path)
    assert got == [("timestamp-invalid", starts[3], 3)]

    append_time = plain(4, append_time=True)  # LogAppendTime with a time: nothing to say
    path, _ = write(tmp_path, append_time)
    assert findings(path) == ([], 4, 4)


def test_verify_offsets_below_the_segment_base(tmp_path):
    path = tmp_path / "00000000000000000010.log"
    entries = plain(15, 5)
    path.write_bytes(b"".join(entries))
    report = verify_one(str(path), VerifyOptions(deep=True))
    below = [f for f in report.findings if f.code == "offset-below-segment-base"]
    assert [f.first_offset for f in below] == [5, 6, 7, 8, 9]


# --- dump: the same lines ----------------------------------------------------------------------------------
def test_dump_of_runs_is_the_message_by_message_text(tmp_path):
    values = [b"plain", None, "caf\u00e9".encode(), b"\xff\xfe bad utf-8", b""]
    entries = [message(i, 1_700_000_000_000 + i, None if i % 3 == 0 else b"k%d" % i, values[i % 5],
                       magic=0 if i < 4 else 1, append_time=i % 7 == 6) for i in range(30)]
    entries[12] = flip_crc(entries[12])
    path, starts = write(tmp_path, entries)
    for args in ([], ["--deep-iteration"], ["--deep-iteration", "--print-data-log"],
                 ["--deep-iteration", "--print-data-log", "--skip-record-metadata"]):
        out = run_cli("dump", *args, path).stdout
        lines = out.splitlines()[2:]
        batch_lines = [line for line in lines if line.startswith("offset: ")]
        assert [int(line.split(" position: ")[1].split()[0]) for line in batch_lines] == starts
        assert ("isvalid: false" in batch_lines[12]) and all("isvalid: true" in b for i, b in enumerate(batch_lines)
                                                              if i != 12)
        expected = [kafka_text.batch_line(b) for b in _entry_walk(path)]
        assert batch_lines == expected
        if args:
            assert len(lines) == 60


def _entry_walk(path: str) -> list:
    with SegmentReader(path) as reader:
        return list(reader.batches())


@pytest.mark.parametrize("deep", [False, True])
@pytest.mark.parametrize("print_data", [False, True])
@pytest.mark.parametrize("skip_metadata", [False, True])
@pytest.mark.parametrize("brace", ["", "}"])
def test_render_legacy_run_twins(tmp_path, deep, print_data, skip_metadata, brace):
    """The compiled renderer of runs against its pure twin (the messages rendered one by one as batches)."""
    entries = [message(2 ** 40 + i, (-1 if i == 3 else 1_700_000_000_000 + i), None if i == 2 else b"key",
                       None if i == 5 else f"\u00e9t\u00e9 {i}".encode() if i % 2 else b"\x80\x81" * i,
                       magic=i % 2, append_time=i % 4 == 1 and i % 2 == 1)
               for i in range(12)]
    data = b"".join(entries)
    run = checked_run(data, 4096, 99)
    assert run is not None and run.count == 12
    labels = kafka_text.RUN_LINE_LABELS
    want = kafka_text.render_legacy_run_py(run, labels, brace, deep, print_data, skip_metadata)
    assert kafka_text.render_legacy_run(run, labels, brace, deep, print_data, skip_metadata) == want
    lines = want.decode("utf-8", "surrogateescape").splitlines()
    assert lines[0].startswith(f"offset: {2 ** 40} position: 4096 NoTimestampType: -1 size: {len(entries[0])} "
                               "magic: 0 compresscodec: none crc: ")
    assert len(lines) == (24 if deep else 12)


# --- salvage: every message of a run judged as the batch it is ------------------------------------------------
def test_salvage_keeps_the_intact_messages_of_runs(tmp_path):
    from kdump.convert.salvage import plan
    entries = plain(30)
    entries[10] = flip_crc(entries[10])
    path, starts = write(tmp_path, entries)
    result = plan(path)
    assert result.kept_batches == 29 and result.kept_records == 29
    assert result.kept_positions == [s for i, s in enumerate(starts) if i != 10]
    assert [(d.start, d.code) for d in result.dropped] == [(starts[10], "crc-mismatch")]


# --- index rebuild: each message of a run is still the batch recovery indexes and stops at --------------------
def test_index_rebuild_over_runs(tmp_path):
    """Recovery's entries for plain messages (one per message crossing index.interval.bytes), against the
    read-back proof's own computation of them (kdump.convert.proof.PlainMessages, a bisection over whole columns),
    and its stop at the first message failing its CRC, with the CRCs zlib computes."""
    from kdump.convert.proof import PlainMessages
    from kdump.index.rebuild import recover_segment
    entries = [message(i, 1_700_000_000_000 + (i * 7919) % 1000, b"k%d" % i, b"v" * (i % 300)) for i in range(600)]
    path, starts = write(tmp_path, entries)
    proof = PlainMessages(0, 4096)
    with SegmentReader(path) as reader:
        for run in reader.runs(64):  # runs of another length than the rebuild's
            proof.run(run)
    assert proof.finished(600)
    rec = recover_segment(path, index_interval_bytes=4096)
    assert (bytes(rec.offset_index), bytes(rec.time_index)) == proof.indexes()
    assert (rec.batches, rec.valid_bytes, rec.stop_code) == (600, starts[-1] + len(entries[-1]), None)
    assert len(rec.offset_index) // 8 > 10

    entries[333] = flip_crc(entries[333])
    path, starts = write(tmp_path, entries)
    rec = recover_segment(path, index_interval_bytes=4096)
    stored = int.from_bytes(entries[333][12:16], "big")
    computed = zlib.crc32(entries[333][16:])
    assert (rec.batches, rec.valid_bytes, rec.stop_code) == (333, starts[333], "crc-mismatch")
    assert rec.stop_message == f"Record is corrupt (stored crc = {stored}, computed crc = {computed})"
    assert rec.offset_entries() and rec.offset_entries()[-1].position < starts[333]


def test_messages_larger_than_the_read_window_still_come_as_runs(tmp_path):
    entries = [message(i, 1_000 + i, b"k", b"x" * (100_000 + i)) for i in range(12)]
    path, starts = write(tmp_path, entries)
    got = items(path)
    runs = [i for i in got if isinstance(i, LegacyRun)]
    assert len(runs) == len(got) - 1 and sum(r.count for r in runs) == 12
    assert [m.position for r in runs for m in r.messages()] == starts
    with SegmentReader(path, max_batch_bytes=100_028) as reader:  # the first above the limit is damage
        limited = list(readable(reader))
    first_large = next(k for k, e in enumerate(entries) if len(e) - 12 > 100_028)
    damages = [i for i in limited if isinstance(i, Damage)]
    assert (damages[0].kind, damages[0].start) == ("large", starts[first_large])
    read = [i for i in limited if isinstance(i, (LegacyRun, LegacyBatch))]
    assert sum(i.count if isinstance(i, LegacyRun) else 1 for i in read) == first_large


def test_a_run_with_a_value_decoder_prints_the_decoded_values(tmp_path):
    """A run is rendered at once only with the default string decoders: with ``--value-decoder hex`` each
    payload is the hex of the value kafka-python wrote (the run renderer prints bytes as Java's StringDecoder)."""
    path, _ = write(tmp_path, plain(20))
    result = run_cli("dump", "--deep-iteration", "--print-data-log", "--value-decoder", "hex", path)
    assert result.exit_code == 0, result.stderr
    payloads = [line.split(" payload: ", 1)[1] for line in result.stdout.splitlines() if " payload: " in line]
    assert payloads == [(b"value %d" % i).hex() for i in range(20)]


def test_stats_and_txn_take_runs_message_by_message(tmp_path):
    """Every consumer of the read layer handles runs: stats counts each plain message as a batch of one record
    (as Kafka's log does), and txn's producer replay reads past them (a bug once gave exit 70 here)."""
    part = tmp_path / "t-0"
    part.mkdir()
    write(part, plain(20) + [v2_batch(20, 5)] + plain(10, first=25))
    result = run_cli("stats", "--format", "json", part)
    assert result.exit_code == 0, result.stderr
    total = json.loads(result.stdout)["total"]
    assert (total["batches"], total["records"], total["lastOffset"]) == (31, 35, 34)
    result = run_cli("txn", part)
    assert result.exit_code == 0, result.stderr
    assert "log end offset 35" in result.stdout
