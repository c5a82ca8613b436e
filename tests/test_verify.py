"""``kdump verify`` against Kafka's own answers: every sound file of the corpus and of fixtures/generated
verifies clean (shallow and --deep) with Kafka's batch and record counts; every damaged corpus file gets
the finding Kafka's reader points at, at Kafka's byte position; the finding codes are documented.

Expected values come from the corpus (Kafka's ``.log.json``/``.log.check.txt``), not from verify's output.
"""
import json
import re
from pathlib import Path

import pytest

from corpus import CORPUS, FIXTURES, LOG_FILES, ROOT, case_id, load_json
from kdump.report.findings import ERROR, INFO, WARNING
from kdump.verify import CODES, VerifyOptions, verify_one, verify_paths
from kdump.report.findings import finding_code

pytestmark = pytest.mark.usefixtures("backend")  # the compiled and the pure record decoder

NEGATIVE = {
    "broker-written/fetch-v0-invalid-crc-0.9.0.0",
    "broker-written/fetch-truncated-mid-message",
}


def is_negative(path: Path) -> bool:
    rel = path.relative_to(CORPUS).parent.as_posix()
    return rel in NEGATIVE or rel.startswith("kafka-generated/corrupt/")


GOOD_CORPUS = [p for p in LOG_FILES if not is_negative(p)]
BAD_CORPUS = [p for p in LOG_FILES if is_negative(p)]
GENERATED = sorted((FIXTURES / "generated").rglob("*.log"))


def problems(report):
    return [(f.code, f.position) for f in report.findings if f.severity in (ERROR, WARNING)]


# --- sound files -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", GOOD_CORPUS, ids=case_id)
@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_sound_corpus_file_verifies_clean_with_kafkas_counts(path, deep):
    report = verify_one(path, VerifyOptions(deep=deep))
    assert report.io_error is None
    assert problems(report) == []
    assert report.status == "ok"
    totals = kafka_totals(path)
    assert report.batches == totals["batches"]
    assert report.bytes == path.stat().st_size
    if deep:
        assert report.records == totals["records"]


def kafka_totals(path: Path) -> dict:
    """Batch and record counts Kafka gives: from its .json, or (KRaft snapshots have none) from the lines of
    its DumpLogSegments output (one "baseOffset:" line per batch, one "| offset:" line per record)."""
    if (path.parent / f"{path.name}.json").exists():
        return load_json(path)["totals"]
    deep = (path.parent / f"{path.name}.dumplog.txt").read_text().splitlines()
    return {"batches": sum(line.startswith("baseOffset:") for line in deep),
            "records": sum(line.startswith("| offset:") for line in deep)}


@pytest.mark.parametrize("path", GENERATED, ids=lambda p: p.parent.name)
def test_generated_fixture_verifies_clean(path):
    report = verify_one(path, VerifyOptions(deep=True))
    assert problems(report) == []
    # the fixtures README gives entry and record counts per fixture (an independent statement)
    row = _generated_readme_row(path.parent.name)
    assert report.batches == row["entries"]
    assert report.records == row["records"]


def _generated_readme_row(name):
    text = (FIXTURES / "generated/README.md").read_text()
    m = re.search(rf"^\| `{re.escape(name)}` \| `[^`]+` \| (\d+) \| (\d+) \|", text, re.M)
    assert m, name
    return {"entries": int(m.group(1)), "records": int(m.group(2))}


def test_compacted_corpus_file_reports_its_gaps_as_info_only():
    path = CORPUS / "kafka-generated/v2-compacted/00000000000000000000.log"
    report = verify_one(path, VerifyOptions(deep=True))
    gaps = [f for f in report.findings if f.code == "offset-gap"]
    assert len(gaps) == 1 and gaps[0].severity == INFO
    # Kafka's view: the records' offsets; the offsets of the batches' ranges that hold no record are gaps
    batches = load_json(path)["batches"]
    offsets = {r["offset"] for b in batches for r in b["records"]}
    in_ranges = sum(b["lastOffset"] - b["baseOffset"] + 1 for b in batches)
    between = sum(max(0, b2["baseOffset"] - b1["lastOffset"] - 1) for b1, b2 in zip(batches, batches[1:]))
    missing = in_ranges - len(offsets) + between
    assert gaps[0].message.startswith(f"{missing} offsets missing")


# --- damaged corpus files: Kafka's answers ----------------------------------------------------------------
def kafka_check(path: Path) -> dict:
    """The .check.txt Kafka wrote: invalid batch positions, a fatal position, trailing position."""
    text = (path.parent / f"{path.name}.check.txt").read_text()
    out = {"invalid": [int(m) for m in re.findall(r"^INVALID pos=(\d+)", text, re.M)], "fatal": None,
           "trailing": None}
    m = re.search(r"^FATAL pos=(\d+) (.*)$", text, re.M)
    if m:
        out["fatal"] = (int(m.group(1)), m.group(2))
    m = re.search(r"^TRAILING pos=(\d+) bytes=(\d+)", text, re.M)
    if m:
        out["trailing"] = int(m.group(1))
    return out


def sound_batches_inside(damaged: bytes, after: int):
    """Batches of the sound kafka-generated files (positions and offsets from Kafka's .json) that lie
    byte for byte in ``damaged`` beyond ``after`` at their original position: what resynchronisation can
    find. Returns (position, baseOffset, lastOffset) of the first one, or None, and the batches in between."""
    for sound in (CORPUS / "kafka-generated").glob("v2-*/00000000000000000000.log"):
        original = sound.read_bytes()
        batches = load_json(sound)["batches"]
        for i, b in enumerate(batches):
            p, n = b["position"], b["size"]
            if p > after and damaged[p:p + n] == original[p:p + n] and len(damaged) >= p + n:
                earlier = [x for x in batches[:i] if x["position"] >= after]
                if damaged[:after] == original[:after]:
                    return b, earlier
    return None, None


@pytest.mark.parametrize("path", BAD_CORPUS, ids=case_id)
@pytest.mark.parametrize("deep", [False, True], ids=["shallow", "deep"])
def test_damaged_corpus_file_gets_the_finding_kafka_points_at(path, deep):
    report = verify_one(path, VerifyOptions(deep=deep))
    found = problems(report)
    kafka = kafka_check(path)
    expected = [("crc-mismatch", pos) for pos in kafka["invalid"]]
    data = path.read_bytes()
    if kafka["fatal"]:
        pos, message = kafka["fatal"]
        assert "smaller than minimum record overhead" in message
        nxt, lost = sound_batches_inside(data, pos)
        assert nxt is not None  # the corpus damaged one length field of an otherwise sound file
        expected += [("size-below-minimum", pos), ("damaged-range", pos)]
        damaged = next(f for f in report.findings if f.code == "damaged-range")
        assert damaged.length == nxt["position"] - pos
        assert (damaged.first_offset, damaged.last_offset) == (lost[0]["baseOffset"], lost[-1]["lastOffset"])
    if kafka["trailing"] is not None:
        pos = kafka["trailing"]
        nxt, lost = sound_batches_inside(data, pos)
        if nxt is None:  # nothing valid follows: what a crash leaves
            expected.append(("truncated-tail", pos))
        else:  # Kafka stops at a damaged size field, but sound batches follow it
            expected += [("size-beyond-end", pos), ("damaged-range", pos)]
            damaged = next(f for f in report.findings if f.code == "damaged-range")
            assert damaged.length == nxt["position"] - pos
            assert (damaged.first_offset, damaged.last_offset) == (lost[0]["baseOffset"], lost[-1]["lastOffset"])
    assert sorted(found) == sorted(expected)
    assert report.status == "findings"
    # every batch Kafka read before the damage is counted, and after a resynchronisation the rest too
    kafka_batches = load_json(path)["batches"]
    assert report.batches >= len(kafka_batches)


def test_crc_mismatch_names_the_offsets_kafka_gives_for_the_damaged_batch():
    path = CORPUS / "kafka-generated/corrupt/v2-crc-mismatch/00000000000000000000.log"
    report = verify_one(path)
    bad = [b for b in load_json(path)["batches"] if not b["crcValid"]]
    (f,) = [f for f in report.findings if f.code == "crc-mismatch"]
    assert (f.position, f.first_offset, f.last_offset, f.length) == (
        bad[0]["position"], bad[0]["baseOffset"], bad[0]["lastOffset"], bad[0]["size"])


def test_truncated_tail_gives_kafkas_valid_end_and_trailing_bytes():
    path = CORPUS / "kafka-generated/corrupt/v2-truncated-tail/00000000000000000000.log"
    totals = load_json(path)["totals"]
    (f,) = [f for f in verify_one(path).findings if f.code == "truncated-tail"]
    assert (f.position, f.length) == (totals["validEnd"], totals["trailingBytes"])
    assert f"truncate the file to {totals['validEnd']} bytes" in f.message


# --- codes ---------------------------------------------------------------------------------------------
def test_every_code_has_one_severity_and_is_documented():
    findings_doc = (ROOT / "docs/findings.md").read_text()
    verify_doc = (ROOT / "docs/verify.md").read_text()
    for code in CODES.values():
        assert code.severity in (ERROR, WARNING, INFO)
        row = re.search(rf"^\| `{re.escape(code.name)}` \| ([\w/]+) \|", findings_doc, re.M)
        assert row, f"{code.name} is not in docs/findings.md"
        # one severity, or (W/E, I/W) the two a code takes where the situation decides (Code.also)
        assert row.group(1) == code.severity or code.also is not None, code.name
        assert f"`{code.name}`" in verify_doc, f"{code.name} is not in docs/verify.md"


def test_every_code_verify_emits_is_registered():
    """Codes are passed as string literals; a typo would otherwise only show as a KeyError on bad input."""
    emitted = set()
    for src in (ROOT / "kdump/verify").glob("*.py"):
        text = src.read_text()
        emitted |= set(re.findall(r'\b(?:self|v)\.add\(\s*"([a-z0-9-]+)"', text))
        emitted |= set(re.findall(r'report\.add\(\s*"([a-z0-9-]+)"', text))
        emitted |= set(re.findall(r'_bad_entry\([^,]+,[^,]+,\s*"([a-z0-9-]+)"', text))
        emitted |= set(re.findall(r'_damaged\([^,]+,[^,]+,\s*"([a-z0-9-]+)"', text))
    assert emitted, "the patterns above no longer match the code"
    assert emitted <= set(CODES), emitted - set(CODES)


def test_every_reader_error_code_maps_to_a_documented_finding():
    """The record decoder's and the legacy reader's error codes reach verify's findings: each must be a
    verify code or be mapped to one explicitly (the catch-all in finding_code is only a safety net)."""
    from kdump.report.findings import READER_CODES as _READER_CODES
    reader_codes = set()
    for rel in ("kdump/format/v2.py", "kdump/format/_records.pyx", "kdump/format/legacy.py", "kdump/format/control.py",
                "kdump/decode/control.py",
                "kdump/format/schema.py"):
        reader_codes |= set(re.findall(r'FormatError\(\s*"([a-z0-9-]+)"', (ROOT / rel).read_text()))
    assert "record-truncated" in reader_codes and "decompress-failed" in reader_codes
    unmapped = {c for c in reader_codes if c not in CODES and c not in _READER_CODES
                and not c.startswith("schema-")}  # (KRaft control values: control-value-invalid)
    assert unmapped == set()
    for code in reader_codes:
        assert finding_code(code) in CODES, code


def test_json_report_of_a_directory_lists_every_file(tmp_path):
    reports = verify_paths([CORPUS / "kafka-generated/corrupt"], VerifyOptions())
    every = [r.to_dict() for r in reports]
    doc = [d for d in every if d["path"].endswith(".log")]
    assert sorted(Path(d["path"]).parent.name for d in doc) == sorted(
        p.name for p in (CORPUS / "kafka-generated/corrupt").iterdir())
    # segments copied without their indexes: what index check says of them (a warning), not a failure
    companions = [d for d in every if not d["path"].endswith(".log")]
    assert companions and {f["code"] for d in companions for f in d["findings"]} == {"index-missing"}
    for d in every:
        assert d["status"] == "findings"
        json.dumps(d)
        for f in d["findings"]:
            assert {"code", "severity", "message"} <= set(f)
