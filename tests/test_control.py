"""Control records: transaction markers and KRaft control records, as the newest DumpLogSegments prints
them (the Scala corpus prints LEADER_CHANGE generically, so these are checked against hand-decoded bytes)."""
import base64
import json
import re
import struct

import pytest

from corpus import CORPUS
from support.cli import run_cli
from kdump.errors import FormatError
from kdump.decode.control import kraft_control_json
from kdump.format.control import parse_control_key, parse_end_txn_marker
from kdump.format.types import ControlRecordType

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

META = CORPUS / "kafka-generated/internal-topics/__cluster_metadata-0/00000000000000000000.log"
BROKER_META = CORPUS / "broker-written/kraft-metadata-log/00000000000000000000.log"


def uuid_b64(hexstr):
    return base64.urlsafe_b64encode(bytes.fromhex(hexstr)).rstrip(b"=").decode()


def leader_change_lines(path):
    out = run_cli("dump", "--deep-iteration", path).stdout
    return {int(m.group(1)): json.loads(m.group(2))
            for m in re.finditer(r"^\| offset: (\d+) .* LeaderChange: (\{.*\})$", out, re.M)}


def test_leader_change_v0_and_v1_values():
    found = leader_change_lines(META)
    # offset 1: 0013 0000006c 03 00000071 00 00000074 00 03 00000068 00 0000006b 00 00  (schema v0)
    assert found[1] == {"version": 0x13, "leaderId": 0x6C, "voters": [{"voterId": 0x71}, {"voterId": 0x74}],
                        "grantingVoters": [{"voterId": 0x68}, {"voterId": 0x6B}]}
    # offset 2 was written at schema v1 (a directory id per voter); Kafka reads v0 and fails, kdump reads v1
    assert found[2] == {
        "version": 0x23, "leaderId": 0x7C,
        "voters": [{"voterId": 0x81, "voterDirectoryId": uuid_b64("000000000000101c000000000000201c")},
                   {"voterId": 0x84, "voterDirectoryId": uuid_b64("000000000000101f000000000000201f")}],
        "grantingVoters": [{"voterId": 0x78, "voterDirectoryId": uuid_b64("00000000000010130000000000002013")},
                           {"voterId": 0x7B, "voterDirectoryId": uuid_b64("00000000000010160000000000002016")}]}


def test_leader_change_records_of_a_real_kraft_log():
    from kdump.read.segment import SegmentReader
    expected = {}
    with SegmentReader(BROKER_META) as reader:
        for batch in reader:
            if not batch.is_control:
                continue
            for r in batch.records(1 << 20):
                v = r.value  # v0 layout decoded by hand: int16 version, int32 leader, compact arrays of int32 + tags
                version, leader = struct.unpack_from(">hi", v, 0)
                pos = 6
                arrays = []
                for _ in range(2):
                    n = v[pos] - 1
                    pos += 1
                    ids = []
                    for _ in range(n):
                        ids.append(struct.unpack_from(">i", v, pos)[0])
                        pos += 5  # id + empty tagged fields
                    arrays.append([{"voterId": i} for i in ids])
                expected[r.offset] = {"version": version, "leaderId": leader, "voters": arrays[0],
                                      "grantingVoters": arrays[1]}
    assert expected and leader_change_lines(BROKER_META) == expected


def test_control_key_checks():
    assert parse_control_key(b"\x00\x00\x00\x01") == (ControlRecordType.COMMIT, 1)
    assert parse_control_key(b"\x00\x01\x00\x63") == (ControlRecordType.UNKNOWN, 99)  # newer key versions parse
    with pytest.raises(FormatError, match="at least 4 bytes, but found only 3"):
        parse_control_key(b"\x00\x00\x00")
    with pytest.raises(FormatError, match="invalid version found for control record: -1"):
        parse_control_key(b"\xff\xff\x00\x00")


def test_end_txn_marker_checks():
    m = parse_end_txn_marker(ControlRecordType.ABORT, b"\x00\x00\x00\x00\x00\x07")
    assert (m.type, m.version, m.coordinator_epoch) == (ControlRecordType.ABORT, 0, 7)
    with pytest.raises(FormatError, match="at least 6 bytes, but found only 5"):
        parse_end_txn_marker(ControlRecordType.ABORT, b"\x00" * 5)
    with pytest.raises(FormatError, match="invalid version found for end transaction marker: -2"):
        parse_end_txn_marker(ControlRecordType.COMMIT, b"\xff\xfe\x00\x00\x00\x00")


def test_kraft_control_values():
    # SnapshotHeader: int16 version, int64 lastContainedLogTimestamp, empty tagged fields
    assert kraft_control_json(ControlRecordType.SNAPSHOT_HEADER, bytes.fromhex("0000000000000000271000")) == \
        '{"version":0,"lastContainedLogTimestamp":10000}'
    assert kraft_control_json(ControlRecordType.KRAFT_VERSION, bytes.fromhex("0000000100")) == \
        '{"version":0,"kRaftVersion":1}'
    with pytest.raises(FormatError):
        kraft_control_json(ControlRecordType.SNAPSHOT_HEADER, b"\x00")
