"""kdump.format's encoders (v2_builder, legacy_builder) against an independent implementation.

kafka-python's record builders (``kafka.record.default_records`` / ``legacy_records``) are the oracle:
uncompressed output must be byte for byte theirs (same client-side fields: base offset 0, leader epoch 0,
CreateTime); compressed output (whose bytes depend on the codec library) must read back through kafka-python's
reader as the records appended. The fast path convert uses (``encode`` + ``take``) must give what the
checked ``append`` gives. Kafka's own converted outputs (fixtures/convert/) are compared byte for byte in
tests/test_convert_corpus.py, which runs these encoders.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from kdump import codec as kcodec
from kdump.format.legacy_builder import LegacyMessageBuilder, convert_message, legacy_message
from kdump.format.types import TimestampType
from kdump.format.v2_builder import RecordBatchBuilder

TS = 1_700_000_000_000
_value = st.one_of(st.none(), st.binary(max_size=40))
_header = st.tuples(st.text(max_size=8), _value)
_record = st.tuples(st.integers(1, 3), st.integers(0, 10**6), _value, _value, st.lists(_header, max_size=3))


def _absolute(records, first: int = 0):
    offset = first - 1
    for gap, ts, key, value, headers in records:
        offset += gap
        yield offset, TS + ts, key, value, headers


@settings(max_examples=80, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12))
def test_v2_batch_is_byte_for_byte_kafka_pythons(records):
    theirs = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                       producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
    ours = RecordBatchBuilder(0)
    for offset, ts, key, value, headers in _absolute(records):
        theirs.append(offset, ts, key, value, [(k, v) for k, v in headers])
        ours.append(offset, ts, key, value, headers)
    assert ours.build() == bytes(theirs.build())


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12), st.sampled_from([kcodec.GZIP, kcodec.SNAPPY, kcodec.LZ4,
                                                                    kcodec.ZSTD]))
def test_compressed_v2_batch_reads_back_through_kafka_python(records, codec):
    ours = RecordBatchBuilder(0, codec)
    expected = []
    for offset, ts, key, value, headers in _absolute(records):
        ours.append(offset, ts, key, value, headers)
        expected.append((offset, ts, key, value, [(k, v) for k, v in headers]))
    batch = MemoryRecords(ours.build()).next_batch()
    assert batch.compression_type == codec
    assert [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in batch] == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12), st.sampled_from([0, 1]))
def test_legacy_messages_are_byte_for_byte_kafka_pythons(records, magic):
    theirs = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 30)
    ours = LegacyMessageBuilder(magic)
    for offset, ts, key, value, _ in _absolute(records):
        theirs.append(offset, ts, key, value)
        ours.append(offset, ts, key, value)
    assert ours.build() == bytes(theirs.build())


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12), st.sampled_from([0, 1]),
       st.sampled_from([kcodec.GZIP, kcodec.SNAPPY, kcodec.LZ4]), st.integers(0, 1000))
def test_legacy_wrapper_reads_back_through_kafka_python(records, magic, codec, first):
    ours = LegacyMessageBuilder(magic, codec)
    expected = []
    for offset, ts, key, value, _ in _absolute(records, first):
        ours.append(offset, ts, key, value)
        expected.append((offset, ts if magic else None, key, value))
    batches = list(MemoryRecords(ours.build()).next_batch())
    assert [(r.offset, r.timestamp, r.key, r.value) for r in batches] == expected


@settings(max_examples=60, deadline=None)
@given(st.lists(_record, min_size=1, max_size=12), st.sampled_from([0, 1, 2]),
       st.sampled_from([kcodec.NONE, kcodec.GZIP, kcodec.LZ4]), st.booleans())
def test_fast_path_equals_append(records, magic, codec, log_append_time):
    """``encode`` + ``take`` (what convert calls, with memoryview slices) build what ``append`` builds,
    and ``size`` is the size before compression."""
    ts_type = TimestampType.LOG_APPEND_TIME if log_append_time and magic else TimestampType.CREATE_TIME
    append_time = TS + 5 if log_append_time and magic else None

    def builder():
        if magic == 2:
            return RecordBatchBuilder(10, codec, ts_type, log_append_time=append_time)
        return LegacyMessageBuilder(magic, codec, ts_type, append_time)

    checked, fast = builder(), builder()
    for offset, ts, key, value, _ in _absolute(records, 10):
        checked.append(offset, ts, key, value)
        view = lambda b: None if b is None else memoryview(b"." + b)[1:]  # noqa: E731 - a slice, as convert gives
        fast.take(offset, ts, fast.encode(offset, ts, view(key), view(value)))
    assert fast.build() == checked.build()
    assert (fast.size, fast.record_count, fast.last_record_offset) == \
        (checked.size, checked.record_count, checked.last_record_offset)
    plain = RecordBatchBuilder(10) if magic == 2 else LegacyMessageBuilder(magic)
    for offset, ts, key, value, _ in _absolute(records, 10):
        plain.append(offset, ts if append_time is None or magic == 2 else append_time, key, value)
    overhead = 0 if magic == 2 or codec == kcodec.NONE else 12 + (14 if magic == 0 else 22)
    assert fast.size == overhead + len(plain.build())


@pytest.mark.parametrize("taken, offset, timestamp, message", [
    (True, 5, TS, "Illegal offset 5 following previous offset 5"),
    (False, 3, TS, "offset 3 is below the batch's base offset 4"),
    (True, 6, -2, "Invalid negative timestamp -2"),
])
@pytest.mark.parametrize("magic", [1, 2])
def test_fast_path_refuses_what_kafka_refuses(taken, offset, timestamp, message, magic):
    b = RecordBatchBuilder(4) if magic == 2 else LegacyMessageBuilder(1, kcodec.GZIP, base_offset=4)
    if taken:
        b.take(5, TS, b.encode(5, TS, None, b"v"))
    with pytest.raises(ValueError, match=message):
        b.encode(offset, timestamp, None, b"v")


def test_convert_message_equals_a_message_written_in_the_target_magic():
    v0 = legacy_message(7, 0, b"k", b"v")
    assert convert_message(7, v0[12:], 1) == legacy_message(7, 1, b"k", b"v", -1)
    assert convert_message(7, legacy_message(7, 1, b"k", None, TS)[12:], 0) == legacy_message(7, 0, b"k", None)
    lat = legacy_message(7, 1, None, b"v", TS, TimestampType.LOG_APPEND_TIME)
    assert convert_message(7, lat[12:], 1) == lat
