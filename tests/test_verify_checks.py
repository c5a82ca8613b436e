"""Each check of ``kdump verify``, on small hand-built entries: the finding code, its position and offsets.

Entries are built byte by byte here (layouts from the spec §3), so that expectations follow from how a file
was made, not from verify's output. Sound entries come from kdump's writer, checked against Kafka's own
reader elsewhere (tests/test_writer.py).
"""
import os
import struct
import zlib

import crc32c
import pytest

from kdump import codec as C
from kdump.report.findings import ERROR, INFO, WARNING
from kdump.verify import VerifyOptions, verify_one, verify_paths
from kdump.format.v2_builder import encode_record as encode_record_v2
from kdump.write.segment import RecordBatchBuilder, control_batch, empty_batch, end_txn_marker_batch, legacy_wrapper

pytestmark = pytest.mark.usefixtures("backend")

SEG0 = "00000000000000000000.log"
TS = 1_700_000_000_000
AFTER_CRC = struct.Struct(">hiqqqhii")


# --- builders ------------------------------------------------------------------------------------------
def batch(base=0, n=3, **kw) -> bytes:
    b = RecordBatchBuilder(base_offset=base, **kw)
    for off in range(base, base + n):
        b.append(off, TS + off, b"k%d" % off, b"value %d" % off)
    return b.build()


def v2(base, records, *, count=None, lod=None, base_ts=None, max_ts=None, attrs=0, producer=(-1, -1, -1),
       payload=None, ple=0, magic=2, length_delta=0) -> bytes:
    """A magic 2 batch from encoded records, with a valid CRC (header fields as given)."""
    body = payload if payload is not None else b"".join(records)
    n = len(records) if count is None else count
    after = AFTER_CRC.pack(attrs, n - 1 if lod is None else lod, TS + base if base_ts is None else base_ts,
                           TS + base if max_ts is None else max_ts, *producer, n) + body
    return struct.pack(">qiibI", base, 49 + len(body) + length_delta, ple, magic, crc32c.crc32c(after)) + after


def rec(delta, ts_delta=0, key=b"k", value=b"v", headers=()) -> bytes:
    return encode_record_v2(delta, ts_delta, key, value, headers)


def legacy(offset, magic, attrs=0, key=b"k", value=b"v", ts=TS, *, trailing=b"", crc=None) -> bytes:
    def sized(x):
        return b"\xff\xff\xff\xff" if x is None else struct.pack(">i", len(x)) + x
    after = bytes([magic, attrs]) + (struct.pack(">q", ts) if magic == 1 else b"") + sized(key) + sized(value) + trailing
    msg = struct.pack(">I", zlib.crc32(after) if crc is None else crc) + after
    return struct.pack(">qi", offset, len(msg)) + msg


def wrapper(offset, magic, inner: bytes, codec=C.GZIP, ts=TS, attrs=None) -> bytes:
    value = C.compress(codec, inner, magic=magic)
    return legacy(offset, magic, codec if attrs is None else attrs, None, value, ts)


def check(tmp_path, data, *, deep=True, name=SEG0, **opts):
    path = tmp_path / name
    path.write_bytes(data)
    return verify_one(path, VerifyOptions(deep=deep, **opts))


def found(report, severities=(ERROR, WARNING)):
    return [(f.code, f.position) for f in report.findings if f.severity in severities]


def one(report, code):
    matches = [f for f in report.findings if f.code == code]
    assert len(matches) == 1, (code, [(f.code, f.position, f.message) for f in report.findings])
    return matches[0]


# --- the end of a file ------------------------------------------------------------------------------------
def test_a_few_zero_bytes_at_the_end_are_kafkas_trailing_bytes(tmp_path):
    # Kafka's walk reads no size field with 17 bytes or fewer left (spec §3.9): DumpLogSegments prints "Found 10
    # invalid bytes at the end" and exits 0, zero or not, so verify warns as for any crash-cut tail (issue 20)
    good = batch()
    report = check(tmp_path, good + bytes(10))
    assert found(report) == [("truncated-tail", len(good))]
    f = one(report, "truncated-tail")
    assert (f.length, f.severity) == (10, "warning")


def test_18_or_more_zero_bytes_at_the_end_are_zero_padding_an_error(tmp_path):
    good = batch()  # Kafka's DumpLogSegments dies on them (size field 0: CorruptRecordException)
    report = check(tmp_path, good + bytes(18))
    assert found(report) == [("zero-padding", len(good))]
    assert (one(report, "zero-padding").length, one(report, "zero-padding").severity) == (18, "error")


def test_fewer_than_18_other_bytes_at_the_end_are_a_truncated_tail(tmp_path):
    good = batch()
    report = check(tmp_path, good + b"\x01" * 17)
    f = one(report, "truncated-tail")
    assert (f.position, f.length, f.first_offset) == (len(good), 17, 3)


def test_an_empty_file_is_sound(tmp_path):
    report = check(tmp_path, b"")
    assert report.findings == [] and report.status == "ok"


# --- bad entries ---------------------------------------------------------------------------------------------
def test_a_magic_2_entry_smaller_than_its_header(tmp_path):
    good = batch()
    small = struct.pack(">qii", 3, 30, 0) + b"\x02" + bytes(25)
    report = check(tmp_path, good + small + batch(3))
    assert found(report) == [("batch-too-small", len(good))]
    assert report.batches == 2


def test_a_magic_1_message_smaller_than_its_header(tmp_path):
    good = legacy(0, 1)
    small = struct.pack(">qi", 1, 16) + struct.pack(">I", 0) + b"\x01\x00" + bytes(10)
    report = check(tmp_path, good + small + legacy(2, 1))
    assert found(report) == [("message-too-small", len(good))]


def test_a_legacy_key_length_past_the_message(tmp_path):
    good = legacy(0, 0)
    b = bytearray(legacy(1, 0, key=b"abc", value=b"d"))
    struct.pack_into(">i", b, 18, 1000)  # the key length (v0: message byte 6) runs past the message
    report = check(tmp_path, good + bytes(b) + legacy(2, 0))
    assert found(report) == [("message-truncated", len(good))]


def test_an_unknown_magic_with_a_sound_size_field(tmp_path):
    a, b, c = batch(0), batch(3), batch(6)
    bad = bytearray(b)
    bad[16] = 3
    report = check(tmp_path, a + bytes(bad) + c)
    assert found(report) == [("magic-unknown", len(a))]
    # the offsets of the unreadable batch are not reported as a compaction gap
    assert [f for f in report.findings if f.code == "offset-gap"] == []


def test_a_flipped_byte_in_the_first_batch_hides_nothing_after_it(tmp_path):
    bs = [batch(3 * i) for i in range(6)]
    bad = bytearray(bs[0])
    bad[70] ^= 0x01
    report = check(tmp_path, bytes(bad) + b"".join(bs[1:]))
    f = one(report, "crc-mismatch")
    assert (f.position, f.first_offset, f.last_offset, f.length) == (0, 0, 2, len(bs[0]))
    assert found(report) == [("crc-mismatch", 0)]
    assert report.batches == 6 and report.records == 15


def test_resynchronisation_after_a_damaged_size_field_names_the_offsets_lost(tmp_path):
    bs = [batch(0, 3), batch(3, 4), batch(7, 2), batch(9, 3)]
    bad = bytearray(bs[1])
    struct.pack_into(">i", bad, 8, 9)  # size 9: below the minimum
    data = bs[0] + bytes(bad) + bs[2] + bs[3]
    report = check(tmp_path, data)
    assert found(report) == [("size-below-minimum", len(bs[0])), ("damaged-range", len(bs[0]))]
    f = one(report, "damaged-range")
    assert (f.length, f.first_offset, f.last_offset) == (len(bs[1]), 3, 6)
    assert f"resumed at byte {len(bs[0]) + len(bs[1])}" in f.message and "hold no valid entry" in f.message
    assert report.records == 3 + 2 + 3


def test_a_zero_filled_hole_is_named_as_such(tmp_path):
    a, b, c = batch(0, 3), batch(3, 3), batch(6, 3)
    report = check(tmp_path, a + bytes(len(b)) + c)
    assert found(report) == [("size-below-minimum", len(a)), ("damaged-range", len(a))]
    f = one(report, "damaged-range")
    assert f.message.startswith(f"{len(b)} bytes (to byte {len(a) + len(b)}) are all zero")
    assert (f.first_offset, f.last_offset) == (3, 5)


def test_a_damaged_range_that_runs_to_the_end(tmp_path):
    good = batch(0, 3)
    junk = struct.pack(">qi", 3, 50) + b"\x00\x00\x00\x00\x07" + bytes(range(200))
    report = check(tmp_path, good + junk)
    assert found(report) == [("magic-unknown", len(good)), ("damaged-range", len(good))]
    f = one(report, "damaged-range")
    assert (f.length, f.first_offset, f.last_offset) == (len(junk), 3, None)


# --- batch headers ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("attrs, producer, code", [
    (5, (-1, -1, -1), "codec-invalid"),
    (0x80, (-1, -1, -1), "attributes-invalid"),
    (0x10, (-1, -1, -1), "producer-fields-invalid"),  # transactional, no producer id
    (0, (-2, -1, -1), "producer-fields-invalid"),
    (0, (5, -1, 0), "producer-fields-invalid"),  # a producer id without an epoch
    (0, (5, 0, -1), "producer-sequence-missing"),  # a data batch of an idempotent producer without sequence
])
def test_header_fields_that_contradict_each_other(tmp_path, attrs, producer, code):
    bad = v2(0, [rec(0)], attrs=attrs, producer=producer)
    report = check(tmp_path, bad, deep=False)
    assert found(report) == [(code, 0)]


def test_producer_fields_without_a_producer_id_are_not_judged(tmp_path):
    """The group coordinator and pre-idempotence Java producers write epoch/sequence values with producer
    id -1 (the broker-written corpus has them); they mean nothing and are not findings."""
    report = check(tmp_path, v2(0, [rec(0)], producer=(-1, 0, 0)))
    assert found(report) == []


def test_negative_offset_delta_and_count_above_the_range(tmp_path):
    a = v2(0, [rec(0)], lod=-1)
    b = v2(1, [rec(0), rec(1)], count=2, lod=0)
    report = check(tmp_path, a + b, deep=False)
    assert found(report) == [("last-offset-delta-invalid", 0), ("record-count-invalid", len(a))]


@pytest.mark.parametrize("kw, code", [
    (dict(max_ts=-5), "timestamp-invalid"),
    (dict(max_ts=-1, attrs=0x08), "timestamp-invalid"),  # LogAppendTime without an append time
])
def test_batch_timestamps(tmp_path, kw, code):
    report = check(tmp_path, v2(0, [rec(0)], **kw), deep=False)
    assert found(report) == [(code, 0)]


def test_legacy_header_checks(tmp_path):
    parts = [legacy(0, 0, attrs=0x08), legacy(1, 1, ts=-7), legacy(2, 0, attrs=0x20), legacy(3, 1, attrs=0x08, ts=-1),
             legacy(4, 1, attrs=4, key=None, value=b"x")]
    pos = [sum(len(p) for p in parts[:i]) for i in range(len(parts))]
    report = check(tmp_path, b"".join(parts), deep=False)
    assert found(report) == [("timestamp-type-invalid", pos[0]), ("timestamp-invalid", pos[1]),
                             ("attributes-invalid", pos[2]), ("timestamp-invalid", pos[3]), ("codec-invalid", pos[4])]


# --- offsets and producers ---------------------------------------------------------------------------------
def test_offset_overflow_past_int32_of_the_segment_base(tmp_path):
    far = 2**31 + 5
    report = check(tmp_path, batch(0, 2) + batch(far, 1))
    f = one(report, "offset-overflow")
    assert (f.first_offset, f.last_offset) == (far, far)


def test_a_file_name_without_a_base_offset_is_info(tmp_path):
    report = check(tmp_path, batch(5, 2), name="copied.log")
    assert [(f.code, f.severity) for f in report.findings] == [("base-offset-unknown", INFO)]
    assert report.status == "ok"


def test_producer_epoch_going_back(tmp_path):
    kw = dict(producer_id=42)
    a = batch(0, 2, producer_epoch=3, base_sequence=0, **kw)
    b = batch(2, 2, producer_epoch=2, base_sequence=0, **kw)
    report = check(tmp_path, a + b)
    assert found(report) == [("producer-epoch-decreasing", len(a))]


def test_sequences_may_wrap_and_jump_but_not_repeat(tmp_path):
    kw = dict(producer_id=42, producer_epoch=0)
    a = batch(0, 3, base_sequence=2**31 - 2, **kw)  # sequences 2147483646, 2147483647, 0
    b = batch(3, 2, base_sequence=1, **kw)
    c = batch(5, 2, base_sequence=50, **kw)  # a gap: compaction may have removed batches
    d = batch(7, 2, base_sequence=50, **kw)  # the same sequences again
    e = batch(9, 2, base_sequence=50, producer_id=42, producer_epoch=1)  # a new epoch may start anywhere
    report = check(tmp_path, a + b + c + d + e)
    assert found(report) == [("sequence-duplicate", len(a + b + c))]


def test_leader_epoch_going_back(tmp_path):
    a = batch(0, 2, partition_leader_epoch=5)
    b = batch(2, 2, partition_leader_epoch=4)
    report = check(tmp_path, a + b)
    assert found(report) == [("leader-epoch-decreasing", len(a))]


def test_empty_batches_and_compaction_gaps_are_info(tmp_path):
    a = batch(0, 3)
    b = empty_batch(3, 5, producer_id=7, producer_epoch=0, base_sequence=0)
    c = batch(10, 2)
    report = check(tmp_path, a + b + c)
    assert found(report) == []
    f = one(report, "offset-gap")
    assert f.severity == INFO and f.message.startswith("7 offsets missing in 2 places")


# --- records (--deep) ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("records, kw, code", [
    ([rec(0), rec(1), rec(1)], {}, "record-offset-invalid"),  # not increasing
    ([rec(0), rec(2)], dict(lod=1), "record-offset-invalid"),  # above lastOffsetDelta
    ([rec(-1), rec(0)], dict(lod=1), "record-offset-invalid"),  # negative first delta
    ([rec(0, 0), rec(1, 5)], dict(max_ts=TS + 4), "max-timestamp-mismatch"),
    ([rec(0, 0), rec(1, -TS - 10)], dict(max_ts=TS), "timestamp-invalid"),
    ([rec(0), rec(1)], dict(count=3, lod=2), "record-truncated"),
    ([rec(0), rec(1)], dict(count=1, lod=1), "records-remaining"),
    ([b"\x0c\x00\x00\x00\x02k\x02v\x01\x02a\x02"], dict(count=1, lod=0), "record-size-invalid"),
    # (the record length is a zig-zag varint: 0x1a = 13 bytes follow, 0x10 = 8)
    ([b"\x1a\x00\x00\x00\x02k\x02v\xff\xff\xff\xff\xff\x01"], dict(count=1, lod=0), "varint-too-long"),
    ([b"\x10\x00\x00\x00\x02k\x02v\x01"], dict(count=1, lod=0), "record-headers-invalid"),  # -1 headers
])
def test_record_level_problems(tmp_path, records, kw, code):
    bad = v2(0, records, **kw)
    report = check(tmp_path, bad + batch(10, 1))
    assert found(report) == [(code, 0)]
    shallow = check(tmp_path, bad + batch(10, 1), deep=False)
    assert code not in {c for c, _ in found(shallow)}  # a record-level check: only with --deep


def test_compaction_gaps_inside_batches_are_allowed(tmp_path):
    b = RecordBatchBuilder(base_offset=100)
    for off in (102, 105, 106):
        b.append(off, TS + off, b"k", b"v")
    b.override_last_offset(110)
    report = check(tmp_path, b.build())
    assert found(report) == []
    assert one(report, "offset-gap").message.startswith("8 offsets missing in 1 places, the first missing one is 100")


def test_record_attributes_are_info(tmp_path):
    r = bytearray(rec(0))
    r[1] = 4
    report = check(tmp_path, v2(0, [bytes(r)]))
    assert [(f.code, f.severity) for f in report.findings] == [("record-attributes-nonzero", INFO)]


def test_control_records(tmp_path):
    marker = end_txn_marker_batch(0, 9, 0, True, 5, TS)
    short_key = v2(1, [rec(0, key=b"\x00\x00", value=b"\x00\x00\x00\x00\x00\x01")], attrs=0x30, producer=(9, 0, -1))
    short_value = v2(2, [rec(0, key=b"\x00\x00\x00\x00", value=b"\x00\x00")], attrs=0x30, producer=(9, 0, -1))
    not_txn = v2(3, [rec(0, key=b"\x00\x00\x00\x01", value=b"\x00\x00\x00\x00\x00\x01")], attrs=0x20,
                 producer=(9, 0, -1))
    bad_kraft = control_batch(4, 3, b"\x00\x00\x01", timestamp=TS + 4)  # SnapshotHeader too short
    unknown = control_batch(5, 99, b"", timestamp=TS + 5)
    parts = [marker, short_key, short_value, not_txn, bad_kraft, unknown]
    pos = [sum(len(p) for p in parts[:i]) for i in range(len(parts))]
    report = check(tmp_path, b"".join(parts))
    assert found(report) == [("control-key-invalid", pos[1]), ("end-txn-marker-invalid", pos[2]),
                             ("control-batch-invalid", pos[3]), ("control-value-invalid", pos[4])]
    assert one(report, "control-type-unknown").position == pos[5]


def test_a_kraft_snapshot_header_batch_may_hold_several_control_records(tmp_path):
    from kdump.write.segment import kraft_version_value, snapshot_header_value
    b = RecordBatchBuilder(0, is_control=True)
    b.append_control_record(0, TS, 3, snapshot_header_value(TS))
    b.append_control_record(1, TS, 5, kraft_version_value(1))
    report = check(tmp_path, b.build(), name="00000000000000000010-0000000001.checkpoint")
    assert found(report) == []


def test_legacy_wrapper_checks(tmp_path):
    def inner(*msgs):
        return b"".join(msgs)
    parts = [
        legacy(0, 1, attrs=C.GZIP, key=None, value=None),  # compressed, null value
        wrapper(1, 1, b""),  # no inner messages
        wrapper(2, 1, inner(legacy(0, 1, attrs=C.GZIP))),  # an inner message compressed itself
        wrapper(4, 1, inner(legacy(0, 1), legacy(0, 1))),  # inner offsets not increasing
        wrapper(6, 1, inner(legacy(0, 1), legacy(1, 1)) + b"\x00\x01\x02"),  # bytes after the last inner message
        wrapper(8, 1, inner(legacy(0, 1, ts=TS), legacy(1, 1, ts=TS + 9)), ts=TS),  # wrapper ts is not the max
        wrapper(10, 0, inner(legacy(9, 0), struct.pack(">qi", 10, 3) + bytes(3))),  # inner size below 14
        wrapper(12, 0, inner(legacy(11, 0), struct.pack(">qi", 12, 14) + bytes(4) + b"\x05" + bytes(9))),
    ]
    pos = [sum(len(p) for p in parts[:i]) for i in range(len(parts))]
    report = check(tmp_path, b"".join(parts))
    assert found(report) == [("wrapper-invalid", pos[0]), ("wrapper-empty", pos[1]), ("inner-compressed", pos[2]),
                             ("inner-offset-invalid", pos[3]), ("inner-trailing-bytes", pos[4]),
                             ("max-timestamp-mismatch", pos[5]), ("inner-message-too-small", pos[6]),
                             ("inner-message-invalid", pos[7])]


def test_a_legacy_wrapper_offset_of_zero_is_info_and_its_inner_offsets_count(tmp_path):
    w = legacy_wrapper(1, C.SNAPPY, [(0, TS, b"a", b"x"), (1, TS, b"b", b"y")], wrapper_offset=0)
    report = check(tmp_path, w + legacy(2, 1))
    assert found(report) == []
    assert one(report, "wrapper-offset-zero").severity == INFO
    assert report.records == 3


def test_wrapper_offsets_are_compared_with_the_segment_base_as_kafka_does(tmp_path):
    """A segment may be named after a wrapper's own offset (its last inner offset); Kafka compares that."""
    w = legacy_wrapper(0, C.GZIP, [(i, -1, b"k", b"v") for i in range(10)])
    for deep in (False, True):
        report = check(tmp_path, w, name="00000000000000000009.log", deep=deep)
        assert found(report) == []
    report = check(tmp_path, w, name="00000000000000000010.log")
    assert found(report) == [("offset-below-segment-base", 0)]


# --- limits ----------------------------------------------------------------------------------------------------
def test_a_batch_above_the_limit_is_crc_checked_in_chunks(tmp_path):
    big = batch(0, 200)
    assert len(big) > 4096
    report = check(tmp_path, big + batch(200, 1), deep=False, max_batch_bytes=1024)
    assert found(report) == [] and report.batches == 2 and report.records == 201
    report = check(tmp_path, big + batch(200, 1), deep=True, max_batch_bytes=1024)
    assert found(report) == [("batch-too-large", 0)]
    bad = bytearray(big)
    bad[3000] ^= 0xFF
    report = check(tmp_path, bytes(bad) + batch(200, 1), deep=False, max_batch_bytes=1024)
    assert found(report) == [("crc-mismatch", 0)]


def test_findings_are_capped_per_code(tmp_path):
    bs = []
    for i in range(130):
        b = bytearray(batch(i, 1))
        b[-1] ^= 0xFF
        bs.append(bytes(b))
    report = check(tmp_path, b"".join(bs), deep=False)
    assert sum(f.code == "crc-mismatch" for f in report.findings) == 100
    assert one(report, "findings-capped").message.startswith("30 more crc-mismatch findings not listed (130 in all")


def test_a_segment_above_2_gib_is_reported(tmp_path):
    path = tmp_path / SEG0
    with open(path, "wb") as f:
        f.write(batch())
        f.truncate(2**31 + 100)  # sparse: no disk used
    report = verify_one(path)
    assert found(report) == [("segment-too-large", None), ("zero-padding", len(batch()))]


# --- files, directories, I/O ------------------------------------------------------------------------------------
def test_files_are_only_read(tmp_path, monkeypatch):
    import builtins
    modes = []
    real_open = builtins.open

    def spy(file, mode="r", *a, **kw):
        modes.append(mode)
        return real_open(file, mode, *a, **kw)
    bad = bytearray(batch(0, 3) + batch(3, 3))
    struct.pack_into(">i", bad, 8, 5)
    path = tmp_path / SEG0
    path.write_bytes(bytes(bad))
    os.chmod(path, 0o444)
    before = (path.read_bytes(), os.stat(path).st_mtime_ns)
    monkeypatch.setattr(builtins, "open", spy)
    report = verify_one(path, VerifyOptions(deep=True))
    monkeypatch.undo()
    assert found(report)  # it did read (and resynchronise)
    assert modes and all(m == "rb" for m in modes)
    assert (path.read_bytes(), os.stat(path).st_mtime_ns) == before


def test_an_unreadable_file_is_an_io_error(tmp_path, monkeypatch):
    path = tmp_path / SEG0
    path.write_bytes(batch())
    import builtins
    real_open = builtins.open

    def deny(file, mode="r", *a, **kw):
        if os.fspath(file) == str(path):
            raise PermissionError(13, "Permission denied")
        return real_open(file, mode, *a, **kw)
    monkeypatch.setattr(builtins, "open", deny)
    (report,) = verify_paths([path])
    assert report.status == "unreadable" and "Permission denied" in report.io_error


def test_missing_paths_and_directories_without_segments(tmp_path):
    (tmp_path / "empty").mkdir()
    reports = verify_paths([tmp_path / "nope", tmp_path / "empty"])
    assert [r.status for r in reports] == ["unreadable", "unreadable"]
    assert "no such file" in reports[0].io_error and "no log segments" in reports[1].io_error


def test_broker_text_files_named_alone_are_not_read_as_segments(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_text("0\n1\norders 0 100\n")
    (report,) = verify_paths([path])
    assert report.status == "unreadable" and "kdump index check" in report.io_error


def test_progress_adds_up_to_the_bytes_verified(tmp_path):
    path = tmp_path / SEG0
    path.write_bytes(batch(0, 50) * 1 + batch(50, 50))
    seen = []
    verify_paths([path], VerifyOptions(), progress=seen.append)
    assert sum(seen) == path.stat().st_size


# --- partitions -----------------------------------------------------------------------------------------------
def segment(directory, base, *batches):
    directory.mkdir(exist_ok=True)
    (directory / f"{base:020d}.log").write_bytes(b"".join(batches))


def test_a_partition_is_verified_in_offset_order_with_state_across_segments(tmp_path):
    part = tmp_path / "orders-0"
    kw = dict(producer_id=3, producer_epoch=1)
    segment(part, 0, batch(0, 5, base_sequence=0, **kw))
    segment(part, 12, batch(12, 5, base_sequence=0, **kw))  # the first segment's sequences again
    segment(part, 5, batch(5, 5, base_sequence=5, **kw))
    # (then the companion checks, as index check runs them: segments without indexes, a warning each)
    reports = [r for r in verify_paths([part], VerifyOptions(deep=True)) if r.kind == "log"]
    assert [os.path.basename(r.path) for r in reports] == [f"{b:020d}.log" for b in (0, 5, 12)]
    # the producer state came from the other segments
    assert found(reports[2]) == [("sequence-duplicate", 0), ("segment-gap", 0)]
    alone = verify_one(part / f"{12:020d}.log", VerifyOptions(deep=True))
    assert found(alone) == []
    gap = one(reports[2], "segment-gap")  # offsets 10-11 are in no segment (issue 20: a warning, shown)
    assert (gap.first_offset, gap.last_offset, gap.severity) == (10, 11, WARNING)
    assert all(found(r) == [] for r in reports[:2])


def test_segments_overlapping_and_leader_epochs_across_segments(tmp_path):
    part = tmp_path / "t-1"
    segment(part, 0, batch(0, 5, partition_leader_epoch=3))
    segment(part, 3, batch(3, 5, partition_leader_epoch=2))
    reports = verify_paths([part])
    assert found(reports[1]) == [("leader-epoch-decreasing", 0), ("segment-overlap", 0)]
    f = one(reports[1], "segment-overlap")
    assert (f.first_offset, f.last_offset) == (3, 4)


def test_a_log_directory_verifies_every_partition_and_skips_other_files(tmp_path):
    segment(tmp_path / "a-0", 0, batch(0, 2))
    segment(tmp_path / "b-0", 0, batch(0, 2))
    (tmp_path / "recovery-point-offset-checkpoint").write_text("0\n2\na 0 2\nb 0 2\n")
    (tmp_path / "meta.properties").write_text("version=1\n")
    reports = verify_paths([tmp_path])
    # the log directory's offset checkpoint and each partition's companion files are checked as `index check`
    # checks them (issue 29); meta.properties not
    assert sorted(os.path.relpath(r.path, tmp_path) for r in reports) == [
        f"a-0/{0:020d}.index", f"a-0/{0:020d}.log", f"b-0/{0:020d}.index", f"b-0/{0:020d}.log",
        "recovery-point-offset-checkpoint"]
    assert all(r.status == "ok" for r in reports if not r.path.endswith(".index"))
    assert all([f.code for f in r.findings] == ["index-missing"] for r in reports if r.path.endswith(".index"))


def test_a_partition_with_companions_gets_their_checks(tmp_path):
    part = tmp_path / "p-0"
    segment(part, 0, batch(0, 2))
    (part / f"{0:020d}.index").write_bytes(b"")
    (part / f"{0:020d}.timeindex").write_bytes(b"")
    reports = verify_paths([part])
    kinds = sorted(r.kind for r in reports)
    assert "log" in kinds and "index" in kinds and "timeindex" in kinds
