"""The fast paths of ``kdump convert`` against what they replace, on both backends.

* :meth:`kdump.read.segment.SegmentReader.runs` (plain magic 0/1 messages as runs of columns) gives exactly what
  :meth:`~kdump.read.segment.SegmentReader.batches` gives, message for message, with the same stop, on every legacy file
  of the corpus, the generated fixtures and the convert references, and on truncated and bit-flipped copies;
* ``canonical_records``, ``encode_messages`` and ``encode_run_records`` (compiled twins in
  ``kdump/format/_encode.pyx``) against their pure twins and against independent answers: the canonical form of
  each :class:`~kdump.format.columns.Record`, and kafka-python's legacy and default record builders;
* :class:`kdump.convert.proof.PlainMessages` (what the read-back proves of a plain-message output) against the
  real thing: where it vouches for a file, ``kdump verify --deep`` finds it clean and Kafka's recovery
  (:func:`kdump.index.rebuild.recover_segment`) builds the same indexes; where it does not, the writer runs them.
"""
from __future__ import annotations

import random
import zlib
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kdump.convert import ConvertOptions, convert_segment
from kdump.convert.proof import PlainMessages
from kdump.report.findings import ERROR, WARNING
from kdump.format import canonical, legacy_builder, v2_builder
from kdump.format.canonical import canonical_record
from kdump.format.columns import iter_records
from kdump.format.legacy import LegacyBatch, LegacyRun, legacy_run
from kdump.format.types import TimestampType
from kdump.index.rebuild import recover_segment
from kdump.read.segment import SegmentReader
from kdump.verify import VerifyOptions, verify_one

pytestmark = pytest.mark.usefixtures("backend")

ROOT = Path(__file__).resolve().parent.parent
LOGS = sorted(p for tree in ("corpus", "generated", "convert") for p in (ROOT / "fixtures" / tree).rglob("*.log")
              if p.is_file())
LEGACY_LOGS = []
for _p in LOGS:
    with SegmentReader(_p) as _r:
        if any(b.magic < 2 for b in _r):
            LEGACY_LOGS.append(_p)
FIELDS = ("offsets", "timestamps", "attributes", "key_len", "value_len", "sizes", "crcs", "magics", "valid")
LIMIT = 1 << 24


def walk(reader: SegmentReader, use_runs: bool, max_count: int = 16384):
    """Every entry as ("message", position, fields, key, value) or ("batch", position, size), the stop, bytes read."""
    out = []
    for b in (reader.runs(max_count) if use_runs else reader.batches()):
        if isinstance(b, LegacyRun):
            assert 0 < b.count <= max_count
            cols, at = b.columns, b.position
            for i in range(cols.count):
                out.append(("message", at, tuple(getattr(cols, f)[i] for f in FIELDS), cols.key(i), cols.value(i)))
                at += cols.sizes[i]
            assert at == b.end
            assert [m.position for m in b.messages()] == [e[1] for e in out[-cols.count:]]
        elif isinstance(b, LegacyBatch) and not b.is_compressed:
            cols = b.columns(LIMIT)
            out.append(("message", b.position, tuple(getattr(cols, f)[0] for f in FIELDS), cols.key(0), cols.value(0)))
        else:
            out.append(("batch", b.position, b.size))
    t = reader.tail
    return out, (t.kind, t.position, t.length, t.code, t.message), reader.bytes_read


def same_walk(path, **reader_args):
    for max_count in (1, 3, 16384):
        with SegmentReader(path, **reader_args) as r:
            entries = walk(r, False)
        with SegmentReader(path, **reader_args) as r:
            assert walk(r, True, max_count) == entries, (path, max_count)


@pytest.mark.parametrize("path", LEGACY_LOGS, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_runs_give_what_batches_give(path):
    same_walk(path)
    same_walk(path, max_batch_bytes=200)  # entries above the limit: the walk stops where batches() stops
    with SegmentReader(path) as r:
        size = r.file_size
    same_walk(path, max_bytes=size // 2)


@pytest.mark.parametrize("path", LEGACY_LOGS[:12], ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_runs_on_damaged_copies(path, tmp_path):
    data = path.read_bytes()
    rnd = random.Random(str(path))
    copies = [data[:n] for n in sorted({rnd.randrange(len(data)) for _ in range(6)})]
    for _ in range(10):
        flipped = bytearray(data)
        flipped[rnd.randrange(len(data))] ^= 1 << rnd.randrange(8)
        copies.append(bytes(flipped))
    for k, copy in enumerate(copies):
        target = tmp_path / f"{k}.log"
        target.write_bytes(copy)
        same_walk(target)


def test_a_run_starts_only_at_a_plain_message():
    v2 = v2_builder.RecordBatchBuilder(0)
    v2.append(0, 5, b"k", b"v")
    wrapper = legacy_builder.legacy_wrapper(1, 1, [(0, 5, b"k", b"v")])
    plain = legacy_builder.legacy_message(7, 1, b"k", b"v", timestamp=5)
    for data in (v2.build(), wrapper, plain[:-1], b""):
        assert legacy_run(data, 0, 10) is None
    run = legacy_run(plain + wrapper + plain, 100, 10)
    assert (run.position, run.count, run.size, run.columns.offsets) == (100, 1, len(plain), [7])


# --- the encoders -----------------------------------------------------------------------------------------
def all_columns():
    """(columns, timestamp type, magic-2?) of every batch and run of the fixtures, in chunks of 7."""
    for path in LOGS:
        with SegmentReader(path) as r:
            for b in r.runs():
                if isinstance(b, LegacyRun):
                    yield b.columns, None, False
                    continue
                if not b.is_valid():
                    continue
                try:
                    for cols in b.column_chunks(LIMIT, 7):
                        if cols.error is None:
                            yield cols, int(b.timestamp_type), b.magic == 2
                except Exception:
                    continue


def test_canonical_records_against_records_one_by_one():
    seen = 0
    for cols, ts_type, _ in all_columns():
        types = [ts_type] if ts_type is not None else [None, 0, 1]
        for t in types:
            for stamp in (None, -1, 1234):
                for headers in (True, False):
                    got = canonical.canonical_records(cols, t, stamp, headers)
                    assert got == canonical.canonical_records_py(cols, t, stamp, headers)
                    expected = b"".join(
                        canonical_record(r.offset, r.timestamp if stamp is None else stamp,
                                         t if t is not None else int(r.timestamp_type), r.key, r.value,
                                         tuple((k.encode(), v) for k, v in r.headers) if headers else ())
                        for r in _records(cols, t))
                    assert got == expected
                    seen += 1
    assert seen > 500


def _records(cols, ts_type):
    if ts_type is not None:
        return iter_records(cols, TimestampType(ts_type), lambda o: -1)
    out = []
    for i, r in enumerate(iter_records(cols, TimestampType.CREATE_TIME, lambda o: -1)):
        r.timestamp_type = TimestampType(canonical.message_timestamp_type(cols.magics[i], cols.attributes[i]))
        out.append(r)
    return out


def test_encode_messages_against_kafka_python():
    seen = 0
    for cols, _, _ in all_columns():
        if min(cols.timestamps, default=0) < -1:
            continue
        for magic in (0, 1):
            for ts_type, stamp in ((TimestampType.CREATE_TIME, None), (TimestampType.LOG_APPEND_TIME, 77)):
                got = legacy_builder.encode_messages(cols, magic, ts_type, stamp)
                assert got == legacy_builder.encode_messages_py(cols, magic, ts_type, stamp)
                expected = b""
                for i in range(cols.count):
                    kp = LegacyRecordBatchBuilder(magic, 0, 1 << 30)
                    kp.append(cols.offsets[i], cols.timestamps[i] if stamp is None else stamp, cols.key(i),
                              cols.value(i))
                    message = bytearray(kp.build())
                    if magic == 1 and ts_type == TimestampType.LOG_APPEND_TIME:  # kafka-python writes CreateTime:
                        message[17] |= 0x08  # the attributes' LogAppendTime bit, and the CRC over magic..end again
                        message[12:16] = zlib.crc32(message[16:]).to_bytes(4, "big")
                    expected += bytes(message)
                assert got == expected
                seen += 1
    assert seen > 100


def test_encode_messages_refuses_what_kafka_refuses():
    cols = _columns([(5, -7, b"k", b"v")])
    for fn in (legacy_builder.encode_messages, legacy_builder.encode_messages_py):
        with pytest.raises(ValueError, match="Invalid negative timestamp -7"):
            fn(cols, 1, TimestampType.CREATE_TIME)


def _columns(records, magic=1, attributes=0):
    """Columns of plain messages ``(offset, timestamp, key, value)`` read back the way a run reads them."""
    data = b"".join(legacy_builder.encode_message(o, magic, TimestampType.LOG_APPEND_TIME if attributes else
                                                  TimestampType.CREATE_TIME, t, k, v) for o, t, k, v in records)
    run = legacy_run(data, 0, 1 << 20)
    assert run is not None and run.count == len(records)
    return run.columns


def test_encode_run_records_against_kafka_python():
    rnd = random.Random(7)
    for n in (1, 2, 50, 400):
        records = []
        offset, ts = rnd.randrange(1 << 40), (1 << 40) + rnd.randrange(1 << 40)
        for _ in range(n):
            key = None if rnd.random() < 0.2 else rnd.randbytes(rnd.choice((0, 3, 200)))
            value = None if rnd.random() < 0.1 else rnd.randbytes(rnd.choice((0, 10, 70000)))
            records.append((offset, ts, key, value))
            offset += rnd.choice((1, 1, 2, 300, 1 << 20))
            ts += rnd.randrange(-(1 << 20), 1 << 20)
        cols = _columns(records)
        base, base_ts = records[0][0], records[0][1]
        kp = DefaultRecordBatchBuilder(2, 0, 0, -1, -1, -1, 1 << 30)
        for o, t, k, v in records:
            kp.append(o - base, t, k, v, [])
        expected = bytes(kp.build())[61:]
        args = (cols, 0, base, base_ts, base - 1, -1, -1, 1, None)
        got = v2_builder.encode_run_records(*args)
        assert got == v2_builder.encode_run_records_py(*args)
        assert got == (expected, n, records[-1][0], max(r[1] for r in records))


def test_encode_run_records_stops_where_the_unit_ends():
    recs = [(10 + i, 1000 + i, b"k", b"v%d" % i) for i in range(10)]
    cols = _columns(recs)
    lat = _columns([(10 + i, 55, b"k", b"v") for i in range(4)], attributes=1)
    padded = _columns(recs[:2])
    padded.sizes[1] += 1  # bytes after the value
    cases = [
        ((cols, 0, 10, 1000, 9, -1, -1, 1, None), 10),
        ((cols, 3, 10, 1000, 12, -1, -1, 1, None), 7),
        ((cols, 0, 10, 1000, 9, -1, 4, 1, None), 4),  # records limit
        ((cols, 0, 10, 1000, 9, 0, -1, 1, None), 0),  # no room
        ((cols, 0, 10, 1000, 9, 25, -1, 1, None), 2),  # room for two (10 bytes each)
        ((cols, 0, 10, 1000, 12, -1, -1, 1, None), 0),  # offsets not above the last
        ((cols, 0, 10, 1000, 9, -1, -1, 0, None), 0),  # another magic
        ((cols, 0, 10, 1000, 9, -1, -1, 1, 1003), 0),  # the unit is LogAppendTime, the message not
        ((lat, 0, 10, 55, 9, -1, -1, 1, 55), 4),
        ((lat, 0, 10, 55, 9, -1, -1, 1, 56), 0),  # another append time
        ((lat, 0, 10, 55, 9, -1, -1, 1, None), 0),
        ((cols, 0, 10 - (1 << 31), 1000, 9, -1, -1, 1, None), 0),  # offset delta above INT32_MAX
        ((padded, 0, 10, 1000, 9, -1, -1, 1, None), 1),
        # magic None: a wrapper's inner messages, whose wrapper is the unit: only offsets, timestamps and limits
        ((cols, 0, 10, 1000, 9, -1, -1, None, None), 10),
        ((lat, 0, 10, 55, 9, -1, -1, None, None), 4),
        ((padded, 0, 10, 1000, 9, -1, -1, None, None), 2),
        ((cols, 0, 10, 1000, 12, -1, 5, None, None), 0),
        ((cols, 0, 10, 1000, 9, -1, 5, None, None), 5),
    ]
    for args, taken in cases:
        got = v2_builder.encode_run_records(*args)
        assert got == v2_builder.encode_run_records_py(*args)
        assert got[1] == taken, args[1:]
    negative = _columns([(1, 5, b"k", b"v"), (2, -3, b"k", b"v")])
    assert v2_builder.encode_run_records(negative, 0, 1, 5, 0, -1, -1, 1, None)[1] == 1


# --- the proof of a plain-message output --------------------------------------------------------------------
def proved(path, interval=4096):
    plain = PlainMessages(0, interval)
    entries = 0
    with SegmentReader(path) as r:
        for b in r.runs():
            if isinstance(b, LegacyRun):
                assert all(b.valid)
                plain.run(b)
                entries += b.count
            else:
                plain.other()
                entries += 1
    return plain, entries


def check_against_verify_and_recovery(path):
    if not proved(path)[0].finished(proved(path)[1]):
        return False
    report = verify_one(path, VerifyOptions(deep=True))
    assert not [f for f in report.findings if f.severity in (ERROR, WARNING)], path
    for interval in (0, 100, 4096):
        plain, entries = proved(path, interval)
        assert plain.finished(entries)
        rec = recover_segment(path, index_interval_bytes=interval, base_offset=0)
        assert plain.indexes() == (bytes(rec.offset_index), bytes(rec.time_index))
    return True


def test_plain_message_outputs_of_the_fixtures_are_what_verify_and_recovery_say(tmp_path):
    vouched = 0
    for k, path in enumerate(LOGS):
        with SegmentReader(path) as r:
            if r.base_offset != 0:
                continue
        for magic in (0, 1):
            out = tmp_path / f"{k}-{magic}" / "00000000000000000000.log"
            out.parent.mkdir()
            try:
                convert_segment(path, out, ConvertOptions(magic, 0, all_in_target_magic=True))
            except Exception:
                continue
            vouched += check_against_verify_and_recovery(out)
    assert vouched > 10


def _plain_file(tmp_path, name, messages):
    path = tmp_path / name
    path.write_bytes(b"".join(legacy_builder.encode_message(o, m, TimestampType.LOG_APPEND_TIME if a else
                                                            TimestampType.CREATE_TIME, t, b"k", b"v" * 300)
                              for o, m, a, t in messages))
    return path


def test_what_the_proof_leaves_to_verify(tmp_path):
    rnd = random.Random(3)
    good = [(i, 1, 0, 1000 + rnd.randrange(-50, 50)) for i in range(300)]
    assert check_against_verify_and_recovery(_plain_file(tmp_path, "good.log", good))
    mixed = [(i, rnd.choice((0, 1)), 0, -1) for i in range(50)]
    assert check_against_verify_and_recovery(_plain_file(tmp_path, "mixed.log", mixed))
    lat = [(i, 1, 1, 5000) for i in range(50)]
    assert check_against_verify_and_recovery(_plain_file(tmp_path, "lat.log", lat))
    gaps = [(i * 3, 1, 0, 2000 - i) for i in range(100)]  # a compacted log: gaps are information only
    assert check_against_verify_and_recovery(_plain_file(tmp_path, "gaps.log", gaps))
    for name, messages in (("back", [*good[:10], good[3]]),
                           ("lat-1", [(0, 1, 1, -1)]), ("ts", [(0, 1, 0, -5)])):
        plain, entries = proved(_plain_file(tmp_path, name + ".log", messages))
        assert not plain.finished(entries), name
        report = verify_one(tmp_path / (name + ".log"), VerifyOptions(deep=True))
        assert [f for f in report.findings if f.severity in (ERROR, WARNING)], name  # verify does find something
    wrapper = tmp_path / "wrapper.log"
    wrapper.write_bytes(legacy_builder.legacy_wrapper(1, 1, [(0, 5, b"k", b"v")]))
    plain, entries = proved(wrapper)
    assert not plain.finished(entries)
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    assert not proved(empty)[0].finished(0)


