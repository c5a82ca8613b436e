"""Issue 22 item 2: a record near the batch limit is held once, not copied to be encoded, digested or replayed.

The builders encode a record above LARGE_RECORD_BYTES as its pieces (kdump/format/pieces.py), the digest and the
sha256 worker take it a piece at a time, and the replays refuse a key or value no internal-topic record can hold
before copying it. The bytes are what they were: kafka-python's record builders and hashlib are the references.
The memory itself is measured in subprocesses by tests/test_memory_bound.py.
"""
from __future__ import annotations

import hashlib
import json

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords
from support import hostile as H
from support.cli import run_cli

from kdump import codec as kcodec
from kdump.write.digests import BackgroundSha256
from kdump.format import layout as L
from kdump.format.canonical import canonical_records, update_canonical
from kdump.format.legacy_builder import LegacyMessageBuilder, encode_messages_py
from kdump.format.pieces import LARGE_RECORD_BYTES, Pieces
from kdump.format.types import TimestampType
from kdump.format.v2 import RecordBatch
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.replay.groups import replay_groups
from kdump.replay.metadata import replay_metadata
from kdump.replay.source import MAX_METADATA_FIELD_BYTES, SkipList, read_records

TS = 1_700_000_000_000
LARGE = b"\xfe\x00" * (LARGE_RECORD_BYTES // 2 + 7)  # just above the threshold
# (offset, timestamp, key, value, headers): small records around a large value, key, and header value
RECORDS = [(0, TS, b"k", b"small", [("h", b"x")]), (1, TS + 1, None, LARGE, []), (3, TS + 2, LARGE[:-9], b"v", []),
           (4, TS + 3, b"k", None, [("big", LARGE)]), (5, TS + 4, b"", b"", [])]


def test_a_large_v2_record_is_byte_for_byte_kafka_pythons():
    theirs = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                       producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    ours = RecordBatchBuilder(0)
    for offset, ts, key, value, headers in RECORDS:
        theirs.append(offset, ts, key, value, headers)
        ours.append(offset, ts, key, value, headers)
    expected = bytes(theirs.build())
    assert ours.build() == expected
    assert bytes(ours.build_pieces()) == expected and len(ours.build_pieces()) == len(expected)


def test_a_large_record_is_encoded_as_views_of_what_was_given():
    builder = RecordBatchBuilder(0, kcodec.GZIP)
    view = memoryview(bytearray(LARGE))
    encoded = builder.encode(0, TS, None, view)
    assert isinstance(encoded, Pieces) and any(p is view for p in encoded.parts)  # not a copy of the value
    small = builder.encode(0, TS, None, b"v")
    assert isinstance(small, bytes)
    builder.take(0, TS, encoded)
    builder.take(1, TS, builder.encode(1, TS, None, b"v"))
    assert [(r.offset, r.value) for r in MemoryRecords(builder.build()).next_batch()] == [(0, LARGE), (1, b"v")]


@pytest.mark.parametrize("magic", [0, 1])
def test_large_legacy_messages_are_byte_for_byte_kafka_pythons(magic):
    theirs = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 30)
    ours = LegacyMessageBuilder(magic)
    for offset, ts, key, value, _ in RECORDS:
        theirs.append(offset, ts, key, value)
        ours.append(offset, ts, key, value)
    assert ours.build() == bytes(theirs.build())


@pytest.mark.parametrize("magic", [0, 1])
def test_a_large_value_in_a_wrapper_reads_back_through_kafka_python(magic):
    ours = LegacyMessageBuilder(magic, kcodec.GZIP, base_offset=0)
    view = memoryview(LARGE)
    encoded = ours.encode(0, TS, None, view)
    assert isinstance(encoded, Pieces) and any(p is view for p in encoded.parts)
    ours.take(0, TS, encoded)
    ours.append(1, TS, b"k", b"v")
    records = list(MemoryRecords(ours.build()).next_batch())
    assert [(r.offset, r.key, r.value) for r in records] == [(0, None, LARGE), (1, b"k", b"v")]


def _columns_of(batch: bytes):
    """The records of one v2 batch as the reader decodes them (one chunk)."""
    base_offset, length = L.PREFIX.unpack_from(batch)
    record_batch = RecordBatch(0, base_offset, length, batch[L.LOG_OVERHEAD:])
    return next(record_batch.column_chunks(1 << 30))


@pytest.mark.parametrize("magic", [0, 1])
def test_the_pure_message_encoder_takes_a_large_value_as_it_is(magic):
    # kafka-python's messages of the same records (headers are not written below magic 2)
    ref = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 30)
    builder = RecordBatchBuilder(0)
    for offset, ts, key, value, headers in RECORDS:
        ref.append(offset, ts, key, value)
        builder.append(offset, ts, key, value, headers)
    cols = _columns_of(builder.build())
    ts_type = TimestampType.NO_TIMESTAMP_TYPE if magic == 0 else TimestampType.CREATE_TIME
    assert encode_messages_py(cols, magic, ts_type) == bytes(ref.build())


@pytest.mark.parametrize("headers", [True, False])
def test_a_chunk_with_a_large_record_is_digested_as_its_joined_canonical_form(headers):
    builder = RecordBatchBuilder(0)
    for offset, ts, key, value, record_headers in RECORDS:
        builder.append(offset, ts, key, value, record_headers)
    cols = _columns_of(builder.build())
    pieces = hashlib.sha256()
    update_canonical(pieces.update, cols, 0, None, headers)
    assert pieces.hexdigest() == hashlib.sha256(canonical_records(cols, 0, None, headers)).hexdigest()


def test_the_sha256_worker_hashes_a_large_piece_at_once_in_order():
    digest = BackgroundSha256()
    large = bytearray(LARGE)
    pieces = [b"a" * 1000, memoryview(large), b"b" * (BackgroundSha256.GATHER + 5), large, b"c"]
    for piece in pieces:
        digest.update(piece)
    large[0] ^= 0xFF  # hashed when handed over: a later change of the buffer is not seen
    assert digest.hexdigest() == hashlib.sha256(b"".join(bytes(p) for p in pieces[:1]) + LARGE + pieces[2] + LARGE
                                                + b"c").hexdigest()


# --- the replays: a key or value above what a record of the topic can hold -------------------------------------

def test_a_replayed_value_above_the_limit_is_refused_before_it_is_copied(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(H.one_record_batch(b"\x00" * 1001, codec=kcodec.NONE) +
                     H.v2_batch(H.one_record_batch(b"\x00" * 1000, codec=kcodec.NONE)[61:], count=1, base_offset=1))
    skipped = SkipList()
    records = list(read_records(str(path), skipped, max_field_bytes=1000))
    assert [(r.offset, len(r.value)) for r in records] == [(1, 1000)]  # at the limit: read
    [s] = list(skipped)
    assert (s.offset, s.code, s.position) == (0, "record-too-large", 0)
    assert "1,001 bytes, above the 1,000 bytes" in s.reason


def test_a_metadata_record_above_kraft_s_batch_size_is_refused(tmp_path):
    # KRaft writes __cluster_metadata in batches of at most 8 MiB: no field of a metadata record is larger
    assert MAX_METADATA_FIELD_BYTES == 8 << 20
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(H.one_record_batch(b"\x00" * (MAX_METADATA_FIELD_BYTES + 1)))
    r = replay_metadata([path])
    assert [(s.offset, s.code) for s in r.skipped] == [(0, "record-too-large")]


def test_groups_say_a_record_too_large_for_the_topic_and_exit_1(tmp_path):
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(H.one_record_batch(b"\x00" * ((64 << 20) + 1)))  # above the coordinators' limit: 64 MiB
    assert [s.code for s in replay_groups([path]).skipped] == ["record-too-large"]
    res = run_cli("groups", "--format", "json", path)
    assert res.exit_code == 1
    [skipped] = json.loads(res.stdout)["skipped"]
    assert skipped["code"] == "record-too-large" and skipped["offset"] == 0
    assert "67,108,865 bytes" in skipped["message"]
