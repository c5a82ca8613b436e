"""``kdump verify``'s batch-header filters (issue 14 item 2): with ``--deep`` they choose the batches whose
records are decoded, while every structural check still covers every batch; and a file that is no Kafka log at
all (issue 11 point 2) is said to be so, not taken for a truncated tail."""
from __future__ import annotations

import json
import struct

import pytest

from support.cli import run_cli
from kdump.decode.filters import RecordFilter
from kdump.verify import VerifyOptions, verify_one
from support.damaged import sound_then_corrupt_gzip

pytestmark = pytest.mark.usefixtures("backend")

SEGMENT = "00000000000000000000.log"



def codes(report) -> list[tuple[str, int | None]]:
    return [(f.code, f.position) for f in report.findings]


def json_codes(result) -> list[tuple[str, int | None]]:
    [doc] = json.loads(result.stdout)["files"]
    return [(f["code"], f["position"]) for f in doc["findings"]]


@pytest.fixture
def corrupt_gzip(tmp_path):
    """(path, position of the gzip batch whose compressed bytes are damaged under a valid CRC)."""
    data, gzip_at = sound_then_corrupt_gzip()
    path = tmp_path / SEGMENT
    path.write_bytes(data)
    return path, gzip_at


@pytest.fixture
def corrupt_gzip_then_bad_crc(tmp_path):
    """The same two batches, then the gzip batch again at offsets 4-6 with one byte of its records flipped and
    its CRC left as it was: (path, position of the damaged gzip batch, position of the CRC-damaged one)."""
    data, gzip_at = sound_then_corrupt_gzip()
    bad = bytearray(data[gzip_at:])
    struct.pack_into(">q", bad, 0, 4)  # base offset: not covered by the CRC
    bad[70] ^= 0x01  # inside the records (past the 61-byte header): covered by the CRC
    path = tmp_path / SEGMENT
    path.write_bytes(data + bytes(bad))
    return path, gzip_at, len(data)


# --- library ------------------------------------------------------------------------------------------------


def test_deep_finds_the_damaged_payload_without_a_filter(corrupt_gzip):
    path, gzip_at = corrupt_gzip
    assert codes(verify_one(path, VerifyOptions())) == []  # only decompressing shows it
    assert codes(verify_one(path, VerifyOptions(deep=True))) == [("decompress-failed", gzip_at)]


@pytest.mark.parametrize("flt", [RecordFilter(producer_id=7), RecordFilter(codec_id=0), RecordFilter(magic=1),
                                 RecordFilter(transactional=True)],
                         ids=["producer", "codec", "magic", "transactional"])
def test_a_filter_excluding_the_batch_skips_its_record_checks(corrupt_gzip, flt):
    path, _ = corrupt_gzip
    report = verify_one(path, VerifyOptions(deep=True, deep_filter=flt))
    assert codes(report) == []
    assert report.batches == 2 and report.records == 4  # still walked; the skipped batch's count from its header


@pytest.mark.parametrize("flt", [RecordFilter(producer_id=9), RecordFilter(codec_id=1)], ids=["producer", "codec"])
def test_a_filter_selecting_the_batch_still_finds_its_damage(corrupt_gzip, flt):
    path, gzip_at = corrupt_gzip
    assert codes(verify_one(path, VerifyOptions(deep=True, deep_filter=flt))) == [("decompress-failed", gzip_at)]


@pytest.mark.parametrize("flt", [RecordFilter(producer_id=7), RecordFilter(codec_id=0)], ids=["producer", "codec"])
def test_a_crc_damaged_batch_excluded_by_the_filter_is_still_reported(corrupt_gzip_then_bad_crc, flt):
    path, gzip_at, crc_at = corrupt_gzip_then_bad_crc
    unfiltered = codes(verify_one(path, VerifyOptions(deep=True)))
    assert ("decompress-failed", gzip_at) in unfiltered and ("crc-mismatch", crc_at) in unfiltered
    filtered = codes(verify_one(path, VerifyOptions(deep=True, deep_filter=flt)))
    assert ("crc-mismatch", crc_at) in filtered
    assert all(code != "decompress-failed" for code, _ in filtered)


def test_structural_findings_of_excluded_batches_are_kept(tmp_path):
    """Producer 9's second batch repeats its first one (a duplicate write): found with a filter on producer 7."""
    from kdump.write.segment import RecordBatchBuilder
    batches = []
    for base, pid in ((0, 7), (1, 9), (2, 9)):
        b = RecordBatchBuilder(base, producer_id=pid, producer_epoch=0, base_sequence=0)
        b.append(base, 1_700_000_000_000, b"k", b"v")
        batches.append(b.build())
    path = tmp_path / SEGMENT
    path.write_bytes(b"".join(batches))
    dup_at = len(batches[0]) + len(batches[1])
    want = [("sequence-duplicate", dup_at)]
    assert codes(verify_one(path, VerifyOptions(deep=True))) == want
    assert codes(verify_one(path, VerifyOptions(deep=True, deep_filter=RecordFilter(producer_id=7)))) == want


# --- command line -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("flags", [["--producer-id", "7"], ["--codec", "none"], ["--no-transactional", "--magic", "1"]])
def test_cli_filters_choose_what_deep_decodes(corrupt_gzip, flags):
    path, gzip_at = corrupt_gzip
    unfiltered = run_cli("verify", "--deep", "--format", "json", path)
    assert unfiltered.exit_code == 1 and json_codes(unfiltered) == [("decompress-failed", gzip_at)]
    result = run_cli("verify", "--deep", "--format", "json", *flags, path)
    assert result.exit_code == 0 and json_codes(result) == []


def test_cli_filter_keeps_crc_findings(corrupt_gzip_then_bad_crc):
    path, _, crc_at = corrupt_gzip_then_bad_crc
    result = run_cli("verify", "--deep", "--format", "json", "--producer-id", "7", path)
    assert result.exit_code == 1 and json_codes(result) == [("crc-mismatch", crc_at)]


def test_cli_filters_need_deep(corrupt_gzip):
    result = run_cli("verify", "--codec", "gzip", corrupt_gzip[0])
    assert result.exit_code == 2 and "give --deep too" in result.stderr and "Traceback" not in result.output


def test_cli_help_says_what_a_filter_does_not_hide():
    text = " ".join(run_cli("verify", "--help").stdout.split())
    for flag in ("--producer-id", "--transactional / --no-transactional", "--codec", "--magic"):
        assert flag in text
    assert "still run on every batch" in text


# --- not a Kafka log ------------------------------------------------------------------------------------------


def test_a_text_file_named_log_is_not_a_kafka_log(tmp_path):
    text = b"hello world, this is a text file\nsecond line\n"
    path = tmp_path / SEGMENT
    path.write_bytes(text)
    size_field = struct.unpack(">i", text[8:12])[0]  # what the first entry's size field would say
    result = run_cli("verify", "--format", "json", path)
    assert result.exit_code == 1
    [doc] = json.loads(result.stdout)["files"]
    [finding] = doc["findings"]
    assert (finding["code"], finding["severity"], finding["position"]) == ("not-a-kafka-log", "error", 0)
    message = finding["message"]
    assert message.startswith("not a Kafka log segment")
    assert f"declares {size_field + 12} bytes" in message and f"magic byte {text[16]}" in message
    assert repr(text[:16].decode()) in message
    text_out = run_cli("verify", path).stdout
    assert "not-a-kafka-log" in text_out and "truncated" not in text_out


def test_an_empty_file_is_still_a_sound_empty_segment(tmp_path):
    path = tmp_path / SEGMENT
    path.write_bytes(b"")
    result = run_cli("verify", "--format", "json", path)
    assert result.exit_code == 0
    [doc] = json.loads(result.stdout)["files"]
    assert (doc["status"], doc["batches"], doc["findings"]) == ("ok", 0, [])


def test_a_short_damaged_tail_is_still_a_truncated_tail(tmp_path):
    """A few bytes too short to judge (under 17) are what a crash leaves, not a foreign file."""
    path = tmp_path / SEGMENT
    path.write_bytes(b"hello world")
    assert [c for c, _ in codes(verify_one(path))] == ["truncated-tail"]
