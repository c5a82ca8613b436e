"""``kdump dump`` reads past damage (issue 11, point 1): every intact batch before and after a damaged
region is printed as on an intact file, one error line per region (file, byte range, cause, offsets lost),
exit 1; an entry with an unknown magic byte inside intact framing is skipped by its size; "Found N invalid
bytes at the end" (exit 0, as Kafka) only for a true tail; seeking reaches the part after the damage.

The segments are built with the fixture writer: eight batches of two records each (offsets 0-15), then one
batch is damaged. The expected text is kdump's dump of the intact segment without the damaged batch (the
intact text itself is checked against Kafka's on the corpus, tests/test_dump_corpus.py)."""
import re
import struct

import pytest

from support.cli import run_cli
from kdump.format import layout as L
from kdump.write.segment import RecordBatchBuilder

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

NAME = "00000000000000000000.log"
T0 = 1_700_000_000_000
DAMAGED = 3  # the batch that is damaged (offsets 6 and 7)


def eight_batches() -> list[bytes]:
    out = []
    for b in range(8):
        builder = RecordBatchBuilder(base_offset=2 * b)
        for i in range(2):
            builder.append(2 * b + i, T0 + 1000 * b + i, f"k{b}".encode(), f"value {b}.{i}".encode())
        out.append(builder.build())
    return out


def positions(batches: list[bytes]) -> list[int]:
    pos, out = 0, []
    for b in batches:
        out.append(pos)
        pos += len(b)
    return out


def run(tmp_path, data: bytes, *flags):
    path = tmp_path / NAME
    path.write_bytes(data)
    return run_cli("dump", *flags, path), path


def without_batch(text: str, position: int) -> list[str]:
    out, skipping = [], False
    for line in text.splitlines():
        if not line.startswith("| "):
            skipping = f" position: {position} " in line
        if not skipping:
            out.append(line)
    return out


def damaged(batches: list[bytes], damage) -> bytes:
    bad = bytearray(batches[DAMAGED])
    damage(bad)
    return b"".join(batches[:DAMAGED]) + bytes(bad) + b"".join(batches[DAMAGED + 1:])


@pytest.mark.parametrize("flags", [[], ["--deep-iteration", "--print-data-log"]], ids=["shallow", "data"])
@pytest.mark.parametrize("size", [5, 1 << 30], ids=["below-minimum", "beyond-end"])
def test_damaged_size_field_mid_file_prints_every_intact_batch(tmp_path, flags, size):
    batches = eight_batches()
    at = positions(batches)[DAMAGED]
    intact, _ = run(tmp_path, b"".join(batches), *flags)
    result, path = run(tmp_path, damaged(batches, lambda b: struct.pack_into(">i", b, L.SIZE_AT, size)), *flags)
    assert result.stdout.splitlines() == without_batch(intact.stdout, at)
    assert result.stdout.count("baseOffset:") == 7
    assert "invalid bytes at the end" not in result.stdout
    errors = [x for x in result.stderr.splitlines() if x.startswith("kdump:")]
    end = positions(batches)[DAMAGED + 1]
    assert errors == [errors[0]] and errors[0].startswith(f"kdump: {path}: at byte {at}: {end - at} bytes (to byte {end})")
    assert f"size field is {size}" in errors[0] and "offsets 6-7 are lost" in errors[0]
    assert result.exit_code == 1


def test_unknown_magic_entry_is_skipped_by_its_size(tmp_path):
    batches = eight_batches()
    at = positions(batches)[DAMAGED]
    intact, _ = run(tmp_path, b"".join(batches), "--deep-iteration")
    result, path = run(tmp_path, damaged(batches, lambda b: b.__setitem__(L.MAGIC_AT, 7)), "--deep-iteration")
    assert result.stdout.splitlines() == without_batch(intact.stdout, at)
    errors = [x for x in result.stderr.splitlines() if x.startswith("kdump:")]
    assert len(errors) == 1
    assert errors[0].startswith(f"kdump: {path}: at byte {at}: unknown magic byte 7")
    assert f"skipped this entry of {len(batches[DAMAGED])} bytes (offset field 6)" in errors[0]
    assert result.exit_code == 1


def test_unknown_magic_with_damaged_size_too_is_one_region(tmp_path):
    batches = eight_batches()
    at, end = positions(batches)[DAMAGED], positions(batches)[DAMAGED + 1]

    def damage(b):
        b[L.MAGIC_AT] = 7
        struct.pack_into(">i", b, L.SIZE_AT, len(b) - L.LOG_OVERHEAD - 7)  # points into the next batch

    result, path = run(tmp_path, damaged(batches, damage))
    errors = [x for x in result.stderr.splitlines() if x.startswith("kdump:")]
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"kdump: {path}: at byte {at}: {end - at} bytes (to byte {end})")
    assert "unknown magic byte 7" in errors[0] and "offsets 6-7 are lost" in errors[0]
    assert result.stdout.count("baseOffset:") == 7 and result.exit_code == 1


def test_entry_above_max_batch_bytes_is_skipped(tmp_path):
    batches = eight_batches()
    batches[DAMAGED] = RecordBatchBuilder(base_offset=6)
    batches[DAMAGED].append(6, T0, b"big", bytes(5000))
    batches[DAMAGED].append(7, T0, b"big", bytes(5000))
    batches[DAMAGED] = batches[DAMAGED].build()
    at = positions(batches)[DAMAGED]
    result, path = run(tmp_path, b"".join(batches), "--max-batch-bytes", 4096)
    assert result.stdout.count("baseOffset:") == 7
    assert f"position: {at} " not in result.stdout
    assert f"kdump: {path}: at byte {at}: an entry of {len(batches[DAMAGED])} bytes is above the limit of 4096 " \
           "bytes per batch" in result.stderr and "offsets 6-7 are lost" in result.stderr
    assert result.stderr.count("raise --max-batch-bytes") == 1, result.stderr  # the command's hint, said once
    assert result.exit_code == 1


def test_true_tail_is_still_kafkas_invalid_bytes(tmp_path):
    batches = eight_batches()
    data = b"".join(batches)[:-10]
    result, path = run(tmp_path, data)
    assert result.stdout.count("baseOffset:") == 7
    assert result.stdout.endswith(f"Found {len(batches[-1]) - 10} invalid bytes at the end of {NAME}\n")
    assert result.stderr == "" and result.exit_code == 0


def test_damage_with_nothing_after_it_is_one_error(tmp_path):
    batches = eight_batches()
    data = b"".join(batches[:DAMAGED]) + b"\x00" * 8 + struct.pack(">i", 3) + b"garbage" * 30
    result, path = run(tmp_path, data)
    assert result.stdout.count("baseOffset:") == DAMAGED
    errors = result.stderr.splitlines()
    assert len(errors) == 1 and "no intact batch follows: offsets from 6 on are lost" in errors[0]
    assert result.exit_code == 1


def body(text: str) -> list[str]:
    return [x for x in text.splitlines() if x.startswith(("baseOffset:", "| offset:"))]


@pytest.mark.parametrize("seek", ["--from-offset", "--from-time"])
def test_seeking_reaches_the_part_after_the_damage(tmp_path, seek):
    batches = eight_batches()
    data = damaged(batches, lambda b: struct.pack_into(">i", b, L.SIZE_AT, 1 << 30))
    full, _ = run(tmp_path, data, "--deep-iteration")
    target = 10 if seek == "--from-offset" else T0 + 5000
    result, _ = run(tmp_path, data, "--deep-iteration", seek, target)
    lines = body(full.stdout)
    start = next(i for i, x in enumerate(lines) if x.startswith("baseOffset: 10 "))
    assert body(result.stdout) == lines[start:]
    if seek == "--from-offset":
        assert result.exit_code == 0 and "lost" not in result.stderr  # the damage lies before the window
    else:  # the lost batches' timestamps are not known: they may belong to the window
        assert "the offsets lost before 8 are not known" in result.stderr and result.exit_code == 1
    inside, _ = run(tmp_path, data, "--deep-iteration", "--from-offset", 4)
    assert "offsets 6-7 are lost" in inside.stderr and inside.exit_code == 1
    assert "| offset: 8 " in inside.stdout


def test_json_dump_reads_past_damage(tmp_path):
    batches = eight_batches()
    data = damaged(batches, lambda b: struct.pack_into(">i", b, L.SIZE_AT, 5))
    result, _ = run(tmp_path, data, "--format", "json")
    assert len(re.findall(r'"base_?[oO]ffset"', result.stdout)) == 7
    assert result.exit_code == 1


def test_non_consecutive_report_keeps_the_first_n_and_counts_the_rest(tmp_path, monkeypatch):
    import kdump.dump.results  # (where FileResult reads it)
    monkeypatch.setattr(kdump.dump.results, "MAX_KEPT", 3)
    entries = []
    for b in range(10):  # offsets 0, 2, 4, ...: nine gaps
        builder = RecordBatchBuilder(base_offset=2 * b)
        builder.append(2 * b, T0, None, b"v")
        entries.append(builder.build())
    result, path = run(tmp_path, b"".join(entries), "--deep-iteration")
    report = result.stderr.splitlines()
    assert report[1:] == ["  0 is followed by 2", "  2 is followed by 4", "  4 is followed by 6",
                          "  ... 6 more non-consecutive offsets not listed (9 in all)"]


# --- dump's JSON errors say what a damaged stretch covers, as verify's findings do -----------------------------
CORRUPT = __import__("pathlib").Path(__file__).resolve().parent.parent / "fixtures/corpus/kafka-generated/corrupt"


def _json_errors(log) -> list[dict]:
    import json
    return [o for o in map(json.loads, run_cli("dump", "--format", "json", log).stdout.splitlines())
            if o["type"] == "error"]


def test_a_batch_failing_its_crc_is_an_error_with_its_bytes_and_offsets():
    log = CORRUPT / "v2-crc-mismatch" / NAME
    # Kafka's own walk of the file (the corpus): the batch at 509 is invalid, 1496 bytes, offsets 3-12
    invalid = next(line for line in (log.parent / (NAME + ".check.txt")).read_text().splitlines()
                   if line.startswith("batch ") and "valid=false" in line)
    facts = dict(item.split("=", 1) for item in invalid.split()[1:])
    (error,) = _json_errors(log)
    assert (error["code"], error["position"]) == ("crc-mismatch", int(facts["pos"]))
    assert (error["bytes"], error["firstOffset"], error["lastOffset"]) == (
        int(facts["size"]), int(facts["base"]), int(facts["last"]))


def test_a_damaged_range_is_an_error_with_what_verify_says_it_covers():
    import json
    log = CORRUPT / "v2-bad-length-field" / NAME
    (error,) = _json_errors(log)
    findings = json.loads(run_cli("verify", "--format", "json", log).stdout)["files"][0]["findings"]
    (damaged,) = [f for f in findings if f["code"] == "damaged-range"]
    assert error["position"] == damaged["position"]
    assert {k: error[k] for k in ("bytes", "firstOffset", "lastOffset")} == {
        k: damaged[k] for k in ("bytes", "firstOffset", "lastOffset")}
