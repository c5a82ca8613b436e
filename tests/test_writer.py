"""Tests of kdump's writer (kdump/write/segment.py) and of the generated fixtures (tests/support/fixtures.py).

kafka-python (``kafka.record``) is a test-only dependency, used as an independent reader: kdump's
reader and kafka-python must agree on every segment under fixtures/generated/.
"""
from __future__ import annotations

import json
import os
import random
import re
import struct
import uuid
import zlib
from pathlib import Path

import crc32c
import pytest
from kafka.record import MemoryRecords

from kdump import codec as kcodec
from kdump.format.names import CODEC_IDS, CODEC_NAMES
from tests.support.fixtures import ExpectedEntry, all_fixtures, generate
from kdump.decode.control import kraft_control_json
from kdump.format.control import parse_control_key, parse_end_txn_marker
from kdump.format.legacy import LegacyBatch
from kdump.format.types import ControlRecordType, TimestampType
from kdump.format.v2 import RecordBatch
from kdump.read.segment import SegmentReader
from kdump.write.segment import (
    KRaftEndpoint, KRaftVoter, LegacyMessageBuilder, RecordBatchBuilder, SegmentWriter, WriteVerificationError,
    control_batch, empty_batch, end_txn_marker_batch, kraft_version_value, kraft_voters_value, leader_change_value,
    legacy_message, legacy_wrapper, snapshot_footer_value, snapshot_header_value, write_segment,
)

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "fixtures" / "generated"
SEGMENTS = sorted(GENERATED.glob("*/*.log"))
LIMIT = 1 << 28
CT, LAT, NTT = TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME, TimestampType.NO_TIMESTAMP_TYPE
TS = 1700000000000


def read_segment(path):
    """All batches of a file with their records, via kdump; asserts the file ends cleanly."""
    with SegmentReader(path) as reader:
        batches = [(b, list(b.records(limit=LIMIT))) for b in reader]
        assert reader.tail.kind == "end", reader.tail
    return batches


def entries_of(data: bytes) -> list[bytes]:
    out, pos = [], 0
    while pos < len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        out.append(data[pos:pos + 12 + size])
        pos += 12 + size
    return out


# --- the seed figures (from the issue) ------------------------------------------------------------------
class TestSeedSizes:
    def test_key_value_sizes(self):
        assert len(legacy_message(0, 0, b"key", b"value")) == 34
        assert len(legacy_message(0, 1, b"key", b"value", TS)) == 42
        b = RecordBatchBuilder(0)
        b.append(0, TS, b"key", b"value")
        assert len(b.build()) == 76

    def test_null_key_sizes(self):
        assert len(legacy_message(0, 0, None, b"value")) == 31
        b = RecordBatchBuilder(0)
        b.append(0, TS, None, b"value")
        assert len(b.build()) == 73

    def test_ten_six_byte_values(self):
        values = [b"value%d" % i for i in range(10)]
        assert all(len(v) == 6 for v in values)
        b = RecordBatchBuilder(0)
        v0 = LegacyMessageBuilder(0)
        v1 = LegacyMessageBuilder(1)
        for i, v in enumerate(values):
            b.append(i, TS + i, None, v)
            v0.append(i, TS + i, None, v)
            v1.append(i, TS + i, None, v)
        assert len(b.build()) == 191
        assert len(v0.build()) == 320
        assert len(v1.build()) == 400


# --- spec §9 test vectors ---------------------------------------------------------------------------------
SPEC_V2_BATCH = (
    "0000000000000000 00000039 00000000 02 965a94b1 0000 00000000 0000018bcfe56800 0000018bcfe56800"
    "ffffffffffffffff ffff ffffffff 00000001 0e 00 00 00 01 02 61 00"
)
SPEC_V1_MESSAGE = "0000000000000005 00000018 39268c33 01 00 0000018bcfe56800 00000001 6b 00000001 76"
SPEC_V0_MESSAGE = "0000000000000007 00000013 87a77ab2 00 00 ffffffff 00000005 68656c6c6f"


class TestSpecVectors:
    def test_v2_batch(self):
        b = RecordBatchBuilder(0, partition_leader_epoch=0)
        b.append(0, TS, None, b"a")
        data = b.build()
        assert data == bytes.fromhex(SPEC_V2_BATCH)
        assert len(data) == 69 and struct.unpack_from(">I", data, 17)[0] == 2522518705

    def test_v1_message(self):
        data = legacy_message(5, 1, b"k", b"v", TS, CT)
        assert data == bytes.fromhex(SPEC_V1_MESSAGE)
        assert len(data) == 36

    def test_v0_message(self):
        data = legacy_message(7, 0, None, b"hello")
        assert data == bytes.fromhex(SPEC_V0_MESSAGE)
        assert len(data) == 31

    @pytest.mark.parametrize("magic, header", [(0, "04224d1860401a"), (1, "04224d18604082")])
    def test_lz4_wrapper_frame_header(self, magic, header):
        # §9.4: magic-0 wrappers carry Kafka's broken frame-descriptor checksum, magic 1 the correct one.
        data = legacy_wrapper(magic, kcodec.LZ4, [(0, TS, None, b"hello hello hello")], CT)
        batch = LegacyBatch(0, 0, data[12:])
        assert batch.message.value[:7] == bytes.fromhex(header)


# --- kafka-python as an independent oracle over every generated segment --------------------------------
def _kafka_batches(data: bytes):
    """kafka-python's view: (batch, crc_ok, [records])."""
    records = MemoryRecords(data)
    out = []
    while True:
        batch = records.next_batch()
        if batch is None:
            break
        crc_ok = batch.validate_crc()  # must come before iteration (it checks the raw buffer)
        out.append((batch, crc_ok, list(batch)))
    return out


@pytest.mark.parametrize("path", SEGMENTS, ids=lambda p: p.parent.name)
def test_kafka_python_agrees(path):
    """kdump and kafka-python read the same batches and records from every generated segment.

    kafka-python (3.0.x) reads all of them, control batches included (as ``ControlRecord`` with
    ``version``/``type``), so no batch is skipped. Its known differences are mapped, not skipped: a
    legacy entry's own offset is its ``base_offset``; magic-0 timestamps and timestamp types are None
    (Kafka: -1 / NoTimestampType); the delete-horizon bit has no accessor (checked on raw attributes).
    """
    data = path.read_bytes()
    ours = read_segment(path)
    theirs = _kafka_batches(data)
    assert len(ours) == len(theirs)
    for (batch, records), (kb, k_crc_ok, krecords) in zip(ours, theirs):
        where = f"{path.parent.name} batch at byte {batch.position}"
        assert batch.magic == kb.magic, where
        assert batch.codec_id == kb.compression_type, where
        assert batch.size == kb.size_in_bytes, where
        assert batch.is_valid() is True and k_crc_ok is True, where
        if isinstance(batch, RecordBatch):
            assert batch.base_offset == kb.base_offset, where
            assert batch.last_offset == kb.last_offset, where
            assert batch.partition_leader_epoch == kb.leader_epoch, where
            assert int(batch.timestamp_type) == kb.timestamp_type, where
            assert batch.base_timestamp == kb.first_timestamp, where
            assert batch.max_timestamp == kb.max_timestamp, where
            assert batch.producer_id == kb.producer_id, where
            assert batch.producer_epoch == kb.producer_epoch, where
            assert batch.base_sequence == kb.base_sequence, where
            assert batch.last_sequence == kb.last_sequence, where
            assert batch.is_transactional == kb.is_transactional, where
            assert batch.is_control == kb.is_control_batch, where
            assert batch.records_count == kb.records_count, where
            # kafka-python has no accessor for the delete-horizon bit (6); it reads the attributes raw.
            assert batch.has_delete_horizon == bool(kb.attributes & 0x40), where
        else:
            # kafka-python calls the legacy wrapper's own offset "base_offset"; Kafka and kdump call it the
            # last offset (for a wrapper it is the last inner offset, or 0 as librdkafka wrote it).
            assert batch.last_offset == kb.base_offset, where
            expected_type = None if batch.magic == 0 else int(batch.timestamp_type)
            assert kb.timestamp_type == expected_type, where
        assert len(records) == len(krecords), where
        for rec, krec in zip(records, krecords):
            at = f"{where}, offset {rec.offset}"
            assert rec.offset == krec.offset, at
            # kafka-python reports a magic-0 timestamp as None where Kafka (and kdump) say -1.
            assert rec.timestamp == (-1 if krec.timestamp is None else krec.timestamp), at
            assert rec.key == krec.key, at
            assert rec.value == krec.value, at
            assert list(rec.headers) == [tuple(h) for h in krec.headers], at
            if isinstance(batch, LegacyBatch):
                assert rec.is_valid() and krec.validate_crc(), at
            if batch.is_control:
                ctype, type_id = parse_control_key(rec.key)
                assert (krec.version, krec.type) == (0, type_id), at
                if ctype in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
                    assert krec.commit == (ctype is ControlRecordType.COMMIT), at


def test_there_are_generated_segments():
    names = {p.parent.name for p in SEGMENTS}
    assert len(SEGMENTS) == 30
    assert {"v2-lz4-logappendtime", "v0-lz4-notimestamptype", "v1-wrapper-offset-zero", "mixed-magic"} <= names
    # Kafka names a segment after its first offset; one fixture starts above zero.
    assert (GENERATED / "mixed-magic" / "00000000000000001000.log").exists()


# --- round trips: what the builders were told is what kdump reads back ----------------------------------
FIXTURES = all_fixtures()


def _compare(batches, expected: list[ExpectedEntry], name):
    assert len(batches) == len(expected), name
    for (batch, records), exp in zip(batches, expected):
        where = f"{name} batch at byte {batch.position}"
        assert (batch.magic, batch.codec_id, batch.timestamp_type) == (exp.magic, exp.codec, exp.timestamp_type), where
        assert batch.last_offset == exp.last_offset, where
        assert batch.max_timestamp == exp.max_timestamp, where
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == \
            (exp.producer_id, exp.producer_epoch, exp.base_sequence), where
        assert (batch.is_transactional, batch.is_control) == (exp.is_transactional, exp.is_control), where
        assert batch.partition_leader_epoch == exp.partition_leader_epoch, where
        assert batch.delete_horizon_ms == exp.delete_horizon_ms, where
        if exp.base_offset is not None:
            assert batch.base_offset == exp.base_offset, where
            assert batch.records_count == exp.records_count, where
        got = [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for r in records]
        want = [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in exp.records]
        assert got == want, where


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda f: f.name)
def test_fixture_round_trip(fixture, tmp_path):
    path = write_segment(tmp_path / fixture.file_name, fixture.entries)
    _compare(read_segment(path), fixture.expected, fixture.name)


CODECS = {0: (0, 1, 2, 3), 1: (0, 1, 2, 3), 2: (0, 1, 2, 3, 4)}
MATRIX = [(m, c, t) for m, cs in CODECS.items() for c in cs for t in ((NTT,) if m == 0 else (CT, LAT))]


@pytest.mark.parametrize("magic, codec, ts_type", MATRIX,
                         ids=[f"v{m}-{CODEC_NAMES[c]}-{t.display_name}" for m, c, t in MATRIX])
def test_builder_round_trip(magic, codec, ts_type, tmp_path):
    rng = random.Random(magic * 100 + codec * 10 + int(ts_type))
    append_time = TS + 99_999 if ts_type is LAT else None
    records = []
    for i in range(20):
        key = None if i % 7 == 3 else rng.randbytes(rng.randint(0, 12))
        value = None if i % 5 == 4 else rng.randbytes(rng.randint(0, 400))
        headers = (("h", rng.randbytes(3)), ("n", None)) if magic == 2 and i % 3 == 0 else ()
        records.append((100 + 2 * i, TS + rng.randint(0, 1000), key, value, headers))  # gaps and jumbled times
    if magic == 2:
        b = RecordBatchBuilder(100, codec, ts_type, log_append_time=append_time, producer_id=9, producer_epoch=1,
                               base_sequence=40, partition_leader_epoch=2)
    else:
        b = LegacyMessageBuilder(magic, codec, ts_type, append_time)
    for rec in records:
        b.append(*rec)
    path = write_segment(tmp_path / f"{100:020d}.log", [b.build()])
    batches = read_segment(path)
    got = [(r.offset, r.timestamp, r.key, r.value, tuple(r.headers)) for _, recs in batches for r in recs]
    want_ts = [(-1 if magic == 0 else append_time if ts_type is LAT else t) for _, t, *_ in records]
    assert got == [(o, ts, k, v, tuple(h)) for (o, _, k, v, h), ts in zip(records, want_ts)]
    assert batches[-1][0].last_offset == records[-1][0]
    if magic == 2:
        (batch, _), = batches
        assert batch.max_timestamp == (append_time if ts_type is LAT else max(r[1] for r in records))
        assert batch.base_timestamp == records[0][1]
        assert (batch.base_offset, batch.producer_id, batch.producer_epoch, batch.base_sequence) == (100, 9, 1, 40)
    elif codec != 0:
        (batch, _), = batches
        wrapper = batch.message
        assert wrapper.key is None and wrapper.offset == records[-1][0]
        if magic == 1:
            assert wrapper.timestamp == (append_time if ts_type is LAT else max(r[1] for r in records))
            # Inner messages: relative offsets, the wrapper's timestamp-type bit, uncompressed, same magic.
            inner = batch.inner_messages(LIMIT)[0]
            assert [m.offset for m in inner] == [r[0] - 100 for r in records]
            assert all(m.magic == 1 and m.codec_id == 0 and m.timestamp_type is ts_type for m in inner)
            # Stored inner timestamps: the append time itself under LogAppendTime (appendLegacyRecord).
            assert [m.timestamp for m in inner] == [append_time if ts_type is LAT else r[1] for r in records]
        else:
            inner = batch.inner_messages(LIMIT)[0]
            assert [m.offset for m in inner] == [r[0] for r in records]


def test_legacy_wrapper_function_matches_builder():
    msgs = [(10, TS + 2, b"a", b"x"), (11, TS + 1, None, b"y"), (13, TS, b"c", None)]
    b = LegacyMessageBuilder(1, kcodec.GZIP, LAT, TS + 50)
    for m in msgs:
        b.append(*m)
    assert legacy_wrapper(1, kcodec.GZIP, msgs, LAT, TS + 50) == b.build()
    batch = LegacyBatch(0, 13, legacy_wrapper(1, kcodec.GZIP, msgs, LAT, TS + 50)[12:])
    assert [(r.offset, r.timestamp) for r in batch.records(LIMIT)] == [(10, TS + 50), (11, TS + 50), (13, TS + 50)]
    assert batch.max_timestamp == TS + 50 and batch.timestamp_type is LAT


def test_wrapper_offset_zero_reads_as_librdkafka_wrote_it():
    data = legacy_wrapper(1, kcodec.SNAPPY, [(0, TS, None, b"a"), (1, TS, None, b"b")], CT, wrapper_offset=0)
    assert struct.unpack_from(">q", data)[0] == 0
    assert [r.offset for r in LegacyBatch(0, 0, data[12:]).records(LIMIT)] == [0, 1]


def test_v2_delete_horizon_and_overridden_last_offset():
    b = RecordBatchBuilder(0, delete_horizon_ms=TS + 1000)
    b.append(2, TS, b"k", None)
    b.override_last_offset(5)
    data = b.build()
    batch = RecordBatch(0, 0, len(data) - 12, data[12:])
    assert batch.attributes & 0x40 and batch.delete_horizon_ms == TS + 1000 == batch.base_timestamp
    assert batch.last_offset == 5 and batch.max_timestamp == TS
    assert [(r.offset, r.timestamp) for r in batch.records(LIMIT)] == [(2, TS)]  # delta -1000 from the horizon


def test_empty_batch_layout():
    data = empty_batch(2, 4, max_timestamp=TS, producer_id=7, producer_epoch=0, base_sequence=2)
    batch = RecordBatch(0, 2, len(data) - 12, data[12:])
    assert len(data) == 61 and batch.records_count == 0 and batch.base_timestamp == -1
    assert (batch.last_offset, batch.last_sequence, batch.max_timestamp) == (4, 4, TS)
    assert batch.is_valid() and list(batch.records(LIMIT)) == []


# --- control batches ---------------------------------------------------------------------------------------
def test_end_txn_marker_batch():
    for commit in (True, False):
        data = end_txn_marker_batch(15, 98323, 99, commit, 100, TS + 123, partition_leader_epoch=5)
        batch = RecordBatch(0, 15, len(data) - 12, data[12:])
        assert batch.attributes == 0x30 and batch.is_valid()
        assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.partition_leader_epoch) == \
            (98323, 99, -1, 5)
        (rec,) = batch.records(LIMIT)
        assert rec.key == bytes.fromhex("0000000" + ("1" if commit else "0"))
        assert rec.value == bytes.fromhex("0000") + struct.pack(">i", 100)
        marker = parse_end_txn_marker(parse_control_key(rec.key)[0], rec.value)
        assert marker.coordinator_epoch == 100
        assert (rec.offset, rec.timestamp) == (15, TS + 123)


def test_kraft_values_decode_with_kdumps_reader():
    voters = [KRaftVoter(3, uuid.UUID(int=1), (KRaftEndpoint("CONTROLLER", "h", 9093),), 0, 1)]
    cases = [
        (ControlRecordType.SNAPSHOT_HEADER, snapshot_header_value(10000),
         '{"version":0,"lastContainedLogTimestamp":10000}'),
        (ControlRecordType.SNAPSHOT_FOOTER, snapshot_footer_value(), '{"version":0}'),
        (ControlRecordType.KRAFT_VERSION, kraft_version_value(1), '{"version":0,"kRaftVersion":1}'),
        (ControlRecordType.LEADER_CHANGE, leader_change_value(1, [1, 2], [1]),
         '{"version":0,"leaderId":1,"voters":[{"voterId":1},{"voterId":2}],"grantingVoters":[{"voterId":1}]}'),
    ]
    assert snapshot_header_value(10000) == bytes.fromhex("0000" "0000000000002710" "00")  # version, ts, no tags
    for ctype, value, text in cases:
        assert kraft_control_json(ctype, value) == text
    obj = json.loads(kraft_control_json(ControlRecordType.KRAFT_VOTERS, kraft_voters_value(voters)))
    assert obj["voters"][0]["voterId"] == 3
    assert obj["voters"][0]["endpoints"] == [{"name": "CONTROLLER", "host": "h", "port": 9093}]
    assert obj["voters"][0]["kRaftVersionFeature"] == {"minSupportedVersion": 0, "maxSupportedVersion": 1}


def test_control_batch_any_type():
    data = control_batch(7, 99, b"raw", timestamp=TS)
    batch = RecordBatch(0, 7, len(data) - 12, data[12:])
    assert batch.is_control and not batch.is_transactional and batch.producer_id == -1
    (rec,) = batch.records(LIMIT)
    assert parse_control_key(rec.key) == (ControlRecordType.UNKNOWN, 99) and rec.value == b"raw"


# --- Kafka's refusals -------------------------------------------------------------------------------------
def test_refusals():
    with pytest.raises(ValueError, match="zstd"):
        legacy_wrapper(1, kcodec.ZSTD, [(0, TS, None, b"x")], CT)
    with pytest.raises(ValueError, match="zstd"):
        LegacyMessageBuilder(0, kcodec.ZSTD)
    with pytest.raises(ValueError, match="headers"):
        LegacyMessageBuilder(1).append(0, TS, None, b"x", [("h", b"v")])
    with pytest.raises(ValueError, match="headers"):
        legacy_wrapper(0, kcodec.GZIP, [(0, TS, None, b"x", [("h", b"v")])], CT)
    b = RecordBatchBuilder(10)
    b.append(10, TS, None, b"x")
    with pytest.raises(ValueError, match="increase"):
        b.append(10, TS, None, b"x")
    with pytest.raises(ValueError, match="base offset"):
        RecordBatchBuilder(10).append(9, TS, None, b"x")
    with pytest.raises(ValueError, match="log_append_time"):
        RecordBatchBuilder(0, timestamp_type=LAT)
    with pytest.raises(ValueError, match="producer ID"):
        RecordBatchBuilder(0, is_transactional=True)
    with pytest.raises(ValueError, match="sequence"):
        RecordBatchBuilder(0, producer_id=1, producer_epoch=0)
    with pytest.raises(ValueError, match="negative timestamp"):
        RecordBatchBuilder(0).append(0, -5, None, b"x")
    with pytest.raises(ValueError, match="Unknown compression type id: 5"):
        RecordBatchBuilder(0, codec=5)
    with pytest.raises(ValueError, match="at least one record"):
        RecordBatchBuilder(0).build()
    with pytest.raises(TypeError):
        RecordBatchBuilder(0).append(0, TS, "str key", b"x")
    with pytest.raises(ValueError, match="null header key"):
        RecordBatchBuilder(0).append(0, TS, None, b"x", [(None, b"v")])
    with pytest.raises(ValueError, match="control batches"):
        RecordBatchBuilder(0).append_control_record(0, TS, 1, b"")


# --- write_segment ----------------------------------------------------------------------------------------
def _one_batch(offset=0, value=b"value"):
    b = RecordBatchBuilder(offset)
    b.append(offset, TS, b"key", value)
    return b.build()


def _leftovers(directory: Path, keep: set[str]):
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


class TestWriteSegment:
    def test_writes_and_returns_path(self, tmp_path):
        target = tmp_path / "00000000000000000000.log"
        data = [_one_batch(0), legacy_message(1, 1, b"k", b"v", TS) + legacy_message(2, 0, None, b"w")]
        assert write_segment(target, data) == str(target)
        assert target.read_bytes() == b"".join(data)
        assert _leftovers(tmp_path, {target.name}) == []

    def test_refuses_to_overwrite(self, tmp_path):
        target = tmp_path / "00000000000000000000.log"
        target.write_bytes(b"precious")
        with pytest.raises(FileExistsError):
            write_segment(target, [_one_batch()])
        assert target.read_bytes() == b"precious"
        assert _leftovers(tmp_path, {target.name}) == []
        write_segment(target, [_one_batch()], overwrite=True)
        assert target.read_bytes() == _one_batch()

    def test_failure_midway_leaves_nothing(self, tmp_path):
        target = tmp_path / "00000000000000000000.log"

        def entries():
            yield _one_batch(0)
            raise RuntimeError("source died")

        with pytest.raises(RuntimeError, match="source died"):
            write_segment(target, entries())
        assert _leftovers(tmp_path, set()) == []

    def test_bytes_instead_of_iterable_refused(self, tmp_path):
        with pytest.raises(TypeError):
            write_segment(tmp_path / "00000000000000000000.log", _one_batch())
        assert _leftovers(tmp_path, set()) == []

    def test_partial_entry_refused(self, tmp_path):
        target = tmp_path / "00000000000000000000.log"
        with pytest.raises(ValueError):
            write_segment(target, [_one_batch()[:-1]])
        assert _leftovers(tmp_path, set()) == []

    @pytest.mark.parametrize("position, what", [(30, "inside the CRC-covered bytes"),
                                                (3, "in the base offset, outside the CRC")])
    def test_verification_catches_corruption(self, tmp_path, monkeypatch, position, what):
        # Flip one byte of the temporary file just before it would be renamed into place.
        target = tmp_path / "00000000000000000000.log"
        target_existing = tmp_path / "00000000000000000005.log"
        target_existing.write_bytes(b"old")
        real_fsync = os.fsync

        def corrupting_fsync(fd):
            byte = os.pread(fd, 1, position)
            os.pwrite(fd, bytes([byte[0] ^ 0x01]), position)
            real_fsync(fd)

        monkeypatch.setattr(os, "fsync", corrupting_fsync)
        with pytest.raises(WriteVerificationError):
            write_segment(target, [_one_batch()])
        with pytest.raises(WriteVerificationError):
            write_segment(target_existing, [_one_batch(5)], overwrite=True)
        monkeypatch.undo()
        assert not target.exists(), what
        assert target_existing.read_bytes() == b"old", what
        assert _leftovers(tmp_path, {target_existing.name}) == []

    def test_segment_writer_context_manager(self, tmp_path):
        target = tmp_path / "00000000000000000000.log"
        with pytest.raises(KeyError):
            with SegmentWriter(target) as w:
                w.write(_one_batch())
                raise KeyError("stop")
        assert _leftovers(tmp_path, set()) == []
        with SegmentWriter(target) as w:
            w.write(_one_batch())
            w.write(_one_batch(1))
            assert w.entry_count == 2
        assert len(read_segment(target)) == 2


# --- determinism --------------------------------------------------------------------------------------------
def test_committed_fixtures_equal_a_fresh_regeneration(tmp_path):
    generate(tmp_path)
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(GENERATED) for p in GENERATED.rglob("*") if p.is_file())
    assert fresh == committed
    for rel in fresh:
        if rel.suffix != ".log":
            assert (tmp_path / rel).read_bytes() == (GENERATED / rel).read_bytes(), str(rel)
            continue
        # Compressed bytes depend on the codec library's version (a fresh machine may install a newer
        # one), so those batches are compared by content; everything uncompressed byte for byte.
        fresh_batches, committed_batches = read_segment(tmp_path / rel), read_segment(GENERATED / rel)
        assert len(fresh_batches) == len(committed_batches), str(rel)
        for (a, a_records), (b, b_records) in zip(fresh_batches, committed_batches):
            if a.codec_id == 0:
                assert a.entry_bytes() == b.entry_bytes(), f"{rel} at {a.position}"
                continue
            assert (a.magic, a.base_offset, a.last_offset, a.codec_id, a.timestamp_type, a.max_timestamp) == \
                (b.magic, b.base_offset, b.last_offset, b.codec_id, b.timestamp_type, b.max_timestamp), str(rel)
            assert [_record_tuple(r) for r in a_records] == [_record_tuple(r) for r in b_records], str(rel)


def _record_tuple(r):
    return (r.offset, r.timestamp, r.key, r.value, tuple(r.headers))


BASIC_NAME = re.compile(r"^v([012])-(none|gzip|snappy|lz4|zstd)-(notimestamptype|createtime|logappendtime)$")


def test_fixture_contents_cover_the_brief():
    by_name = {f.name: f for f in FIXTURES}
    basic = [f for f in FIXTURES if BASIC_NAME.match(f.name)]
    assert len(basic) == 4 + 8 + 10
    for f in basic:
        values = [r.value for e in f.expected for r in e.records]
        keys = [r.key for e in f.expected for r in e.records]
        assert None in values and b"" in values and None in keys and b"" in keys, f.name
        assert any(v is not None and not _is_utf8(v) for v in values), f.name
        assert any(v is not None and _is_utf8(v) and not v.isascii() for v in values), f.name
        assert len(f.entries) >= 4, f.name
        # the >64 KiB value sits in a compressed batch/wrapper whenever the fixture's codec compresses
        (large_entry,) = [e for e in f.expected if any(len(r.value or b"") > 65536 for r in e.records)]
        assert large_entry.codec == CODEC_IDS[f.name.split("-")[1]], f.name
    control_types = {parse_control_key(r.key)[1] for e in by_name["v2-control-all-types"].expected for r in e.records}
    assert control_types == {0, 1, 2, 3, 4, 5, 6, 99}
    assert {e.magic for e in by_name["mixed-magic"].expected} == {0, 1, 2}
    idem = by_name["v2-idempotent"].expected
    assert any(e.base_sequence + len(e.records) - 1 > 2**31 - 1 for e in idem if e.base_sequence >= 0)
    assert any(e.delete_horizon_ms is not None for e in by_name["v2-delete-horizon"].expected)
    assert any(e.records_count == 0 for e in by_name["v2-empty-batch"].expected)


def _large_payload(fixture_name: str) -> bytes:
    path = next((GENERATED / fixture_name).glob("*.log"))
    for batch, records in read_segment(path):
        if any(len(r.value or b"") > 65536 for r in records):
            if isinstance(batch, RecordBatch):
                return batch.body[49:]
            return batch.message.value
    raise AssertionError("no large value")


@pytest.mark.parametrize("name", ["v2-lz4-createtime", "v1-lz4-logappendtime", "v0-lz4-notimestamptype"])
def test_large_lz4_value_spans_blocks(name):
    # Kafka's Lz4BlockOutputStream cuts the input into 64 KiB blocks and stores incompressible ones raw
    # (block size with the high bit set): the 64 KiB of random bytes become such a block.
    payload = _large_payload(name)
    first = struct.unpack_from("<I", payload, 7)[0]
    assert first & 0x80000000 and first & 0x7FFFFFFF == 65536
    second = struct.unpack_from("<I", payload, 11 + 65536)[0]
    assert 0 < second < 0x80000000


@pytest.mark.parametrize("name", ["v2-snappy-logappendtime", "v1-snappy-createtime", "v0-snappy-notimestamptype"])
def test_large_snappy_value_spans_blocks(name):
    payload = _large_payload(name)
    assert payload[:8] == b"\x82SNAPPY\x00"  # xerial stream framing, 32 KiB input per block
    pos, blocks = 16, 0
    while pos < len(payload):
        pos += 4 + struct.unpack_from(">i", payload, pos)[0]
        blocks += 1
    assert pos == len(payload) and blocks >= 3


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_crc_helpers_are_standard():
    assert crc32c.crc32c(b"123456789") == 0xE3069283
    assert zlib.crc32(b"123456789") == 0xCBF43926
