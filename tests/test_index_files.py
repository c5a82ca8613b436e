"""File-format readers of kdump.index against the layouts of spec §5 and Kafka's rules, with values worked
out by hand (byte strings written out below), and the corpus files where they exist."""
from kdump.render.companions import checkpoint_lines
import struct

import pytest

from corpus import CORPUS
from kdump.read import checkpoints as cps
from kdump.read.offset_index import OffsetIndex
from kdump.format.layout import decrement_sequence
from kdump.read.snapshot import ProducerEntry, encode_snapshot, parse_snapshot
from kdump.read.time_index import TimeIndex
from kdump.read.txn_index import AbortedTxn, TxnIndexFile, decode_entry

BROKER = CORPUS / "broker-written"


def write_index(path, entries, fmt):
    path.write_bytes(b"".join(struct.pack(fmt, *e) for e in entries))
    return path


def test_offset_index_entries_and_kafkas_lookup(tmp_path):
    p = write_index(tmp_path / "00000000000000000100.index", [(5, 0), (10, 4200), (20, 8400)], ">ii")
    with OffsetIndex(p) as idx:
        assert idx.base_offset == 100 and idx.entries == 3
        assert idx.entry(1) == (110, 4200)
        assert idx.lookup(99) == (100, 0)  # below every entry: (base, 0)
        assert idx.lookup(105) == (105, 0)
        assert idx.lookup(119) == (110, 4200)
        assert idx.lookup(10**9) == (120, 8400)
        assert idx.sanity_problems() == []


def test_lookup_uses_the_warm_section_like_kafka(tmp_path):
    """3000 entries: the last 1024 (8192 bytes) are searched first; every target gives the largest entry
    not above it, with a zero tail of 500 slots ignored when the caller gives the valid count."""
    entries = [(i * 3 + 1, i * 1000) for i in range(3000)]
    p = write_index(tmp_path / "00000000000000000000.index", entries + [(0, 0)] * 500, ">ii")
    with OffsetIndex(p) as idx:
        n = idx.valid_entry_count_fast()
        assert n == idx.dump_entry_count() == 3000
        for target in (0, 1, 2, 3, 4, 5999, 6000, 6001, 8998, 8999, 9000, 10**6):
            want = max((e for e in entries if e[0] <= target), default=(0, 0))
            assert idx.lookup(target, entries=n) == want, target


def test_sanity_messages_are_kafkas(tmp_path):
    p = write_index(tmp_path / "00000000000000000100.index", [(5, 0), (-3, 100)], ">ii")
    with open(p, "ab") as f:
        f.write(b"\x00\x01")
    with OffsetIndex(p) as idx:
        assert idx.sanity_problems() == [
            f"Corrupt index found, index file {p} has non-zero size but the last offset is 97 which is less than the "
            "base offset 100",
            f"Index file {p} is corrupt, found 18 bytes which is neither positive nor a multiple of 8"]
    t = write_index(tmp_path / "00000000000000000100.timeindex", [(1000, 5), (0, 0)], ">qi")
    with TimeIndex(t) as tidx:
        assert tidx.sanity_problems() == [
            f"Corrupt time index found, time index file ({t}) has non-zero size but the last timestamp is 0 which is "
            "less than the first timestamp 1000"]
        assert tidx.lookup(999) == (-1, 100) and tidx.lookup(1000, entries=1) == (1000, 105)


def test_index_file_name_without_base_offset(tmp_path):
    from kdump.errors import FormatError
    (tmp_path / "x.index").write_bytes(b"")
    with pytest.raises(FormatError):
        OffsetIndex(tmp_path / "x.index")


def test_txn_entry_layout_and_version_byte():
    raw = bytes.fromhex("0000" "0000000000000007" "0000000000000190" "0000000000000195" "0000000000000196")
    assert decode_entry(raw) == AbortedTxn(7, 400, 405, 406, 0)
    assert AbortedTxn(7, 400, 405, 406).encode() == raw
    # Kafka's AbortedTxn.version() reads one signed byte: 0x0001 is version 0, 0x0100 version 1, 0xff.. -1
    assert decode_entry(b"\x00\x01" + raw[2:]).version == 0
    assert decode_entry(b"\x01\x00" + raw[2:]).version == 1
    assert decode_entry(b"\xff\x00" + raw[2:]).version == -1


def test_txn_file_ignores_a_partial_entry(tmp_path):
    p = tmp_path / "00000000000000000000.txnindex"
    p.write_bytes(AbortedTxn(1, 0, 3, 4).encode() + b"\x00" * 20)
    with TxnIndexFile(p) as f:
        assert (f.count, f.partial_bytes) == (1, 20)
        assert [t for _, t in f.entries()] == [AbortedTxn(1, 0, 3, 4)]


def test_snapshot_layout_on_the_corpus():
    path = BROKER / "producer-snapshot-3-producers" / "00000000000000094751.snapshot"
    snap = parse_snapshot(path.read_bytes(), str(path))
    assert snap.error is None and snap.version == 1 and snap.stored_crc == 0xB1C478F2
    assert [e.producer_id for e in snap.entries] == [0, 2000, 1000]  # file order, as Kafka prints them
    assert snap.entries[1].last_offset == 94750 and snap.entries[1].last_sequence == 83825
    empty = parse_snapshot((BROKER / "kraft-metadata-log" / "00000000000000002067.snapshot").read_bytes())
    assert empty.error is None and empty.entries == []


def test_snapshot_errors_in_kafkas_order():
    good = encode_snapshot([ProducerEntry(1, 0, 5, 10, 0, 1, -1, -1)])
    assert parse_snapshot(good).error is None
    assert parse_snapshot(b"\x00").error == ("Snapshot failed schema validation: Error reading field 'version': "
                                             "java.nio.BufferUnderflowException")
    short = parse_snapshot(good[:-1])
    assert short.error == ("Snapshot failed schema validation: Error reading field 'producer_entries': Error reading "
                           "field 'current_txn_first_offset': java.nio.BufferUnderflowException")
    neg = parse_snapshot(good[:6] + struct.pack(">i", -2) + good[10:])
    assert neg.error.endswith("Array size -2 cannot be negative")
    v2 = parse_snapshot(b"\x00\x02" + good[2:])
    assert v2.error == "Snapshot contained an unknown file version 2"  # version is checked before the CRC
    bad_crc = parse_snapshot(good[:-1] + bytes([good[-1] ^ 1]))
    assert bad_crc.error.startswith(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {bad_crc.stored_crc}. "
                                    "Computed crc: ")


def test_decrement_sequence_wraps_like_java():
    assert decrement_sequence(10, 3) == 7
    assert decrement_sequence(2, 5) == 2147483645
    assert decrement_sequence(-1, 0) == 2147483647


def test_checkpoint_parsing_follows_checkpointfile():
    cp = cps.parse_checkpoint("leader-epoch-checkpoint", "0\r\n2\r\n0 0\r\n2\t159  \r\n")
    assert cp.ok and cp.entries == [(0, 0), (2, 159)] and cp.entry_lines == [(3, 6), (4, 11)]
    assert cps.parse_checkpoint("leader-epoch-checkpoint", "").ok  # empty: no entries
    assert cps.parse_checkpoint("leader-epoch-checkpoint", "0\n").ok
    bad = cps.parse_checkpoint("leader-epoch-checkpoint", "0\n1\n1 2 3\n")
    assert [p.code for p in bad.problems] == ["checkpoint-malformed"] and bad.problems[0].line == 3
    off = cps.parse_checkpoint("replication-offset-checkpoint", "0\n2\norders 0 17\n__consumer_offsets 49 0\n")
    assert off.entries == [("orders", 0, 17), ("__consumer_offsets", 49, 0)]
    assert checkpoint_lines(off)[0] == "Offset checkpoint (high watermark per partition) version: 0 entries: 2"
    big = cps.parse_checkpoint("replication-offset-checkpoint", "0\n1\norders 0 9223372036854775808\n")
    assert [p.code for p in big.problems] == ["checkpoint-malformed"]  # beyond Long.parseLong


def test_checkpoint_numbers_of_thousands_of_digits():
    # found with the checkpoint fuzz target (fixtures/fuzz/checkpoint/): int() refuses more than 4,300 digits with ValueError (exit 70);
    # Long.parseLong throws NumberFormatException for any value past 19 significant digits, but takes any
    # number of leading zeros
    huge = cps.parse_checkpoint("replication-offset-checkpoint", "0\n1\norders 0 " + "9" * 5000 + "\n")
    assert [p.code for p in huge.problems] == ["checkpoint-malformed"]
    epoch = cps.parse_checkpoint("leader-epoch-checkpoint", "0\n1\n" + "1" * 4301 + " 0\n")
    assert [p.code for p in epoch.problems] == ["checkpoint-malformed"]
    zeros = cps.parse_checkpoint("replication-offset-checkpoint", "0\n1\norders 0 " + "0" * 5000 + "17\n")
    assert zeros.ok and zeros.entries == [("orders", 0, 17)]
    signed = cps.parse_checkpoint("leader-epoch-checkpoint", "0\n1\n+" + "0" * 30 + "2 -" + "0" * 30 + "9\n")
    assert signed.entries == [(2, -9)]


def test_partition_metadata():
    ok = cps.parse_partition_metadata("partition.metadata", "version: 0\ntopic_id: 3oRlSdXtQF2Z4LoyqHgZ2A\n")
    assert ok.ok and ok.topic_id == "3oRlSdXtQF2Z4LoyqHgZ2A"
    assert [p.code for p in cps.parse_partition_metadata("p", "version: x\n").problems] == ["checkpoint-malformed"]
    assert [p.code for p in cps.parse_partition_metadata("p", "version: 0\ntopic_id: short\n").problems] == [
        "partition-metadata-topic-id"]


def test_invalid_utf8_in_a_checkpoint(tmp_path):
    p = tmp_path / "leader-epoch-checkpoint"
    p.write_bytes(b"0\n1\n0 \xff0\n")
    cp = cps.parse_any(p)
    assert cp.problems[0].code == "checkpoint-encoding" and cp.problems[0].position == 6
