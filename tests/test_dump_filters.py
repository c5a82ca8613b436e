"""`kdump dump` filters (issue 14 item 2) and readable records (item 1): what is shown is checked against Kafka's
own view of the corpus files (``.log.json``), and the header-level filters are shown to skip a batch without
decompressing it."""
from __future__ import annotations

import datetime as dt
import json
import re
import time
import zoneinfo

import pytest

from corpus import CORPUS, load_json
from support.cli import run_cli
from kdump.write.segment import RecordBatchBuilder, write_segment
from support.damaged import sound_then_corrupt_gzip

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

TXN = CORPUS / "kafka-generated/v2-transactional/00000000000000000000.log"
IDEMPOTENT = CORPUS / "kafka-generated/v2-idempotent/00000000000000000000.log"
MIXED = CORPUS / "kafka-generated/mixed-magic/00000000000000000000.log"
HEADERS = CORPUS / "broker-written/fetch-v2-headers/00000000000000000000.log"



def shown(text: str) -> tuple[list[int], list[int]]:
    """(batch positions, record offsets) of a dump's text."""
    positions = [int(m) for m in re.findall(r"^(?:baseOffset|offset): .*? position: (\d+) ", text, re.M)]
    offsets = [int(m) for m in re.findall(r"^\| offset: (\d+) ", text, re.M)]
    return positions, offsets


def text_of(hexstr):
    from kdump.format.text import java_utf8
    return None if hexstr is None else java_utf8(bytes.fromhex(hexstr))


def kafka_view(path):
    return load_json(path)["batches"]


def expected(path, batch_ok=lambda b: True, record_ok=None):
    """Batch positions and record offsets a filter must show, from Kafka's view of the file."""
    positions, offsets = [], []
    for b in kafka_view(path):
        if not batch_ok(b):
            continue
        records = [r for r in b.get("records", []) if record_ok is None or record_ok(r)]
        if record_ok is not None and (b["isControl"] or not records):
            continue
        positions.append(b["position"])
        offsets += [r["offset"] for r in records]
    return positions, offsets


# --- header-level filters -------------------------------------------------------------------------------


@pytest.mark.parametrize("flags, batch_ok", [
    (["--producer-id", "2001"], lambda b: b["producerId"] == 2001),
    (["--transactional"], lambda b: b["isTransactional"]),
    (["--no-transactional"], lambda b: not b["isTransactional"]),
    (["--control-only"], lambda b: b["isControl"]),
    (["--codec", "snappy"], lambda b: b["codec"] == "snappy"),
    (["--producer-id", "2001", "--control-only"], lambda b: b["producerId"] == 2001 and b["isControl"]),
])
def test_header_filters_show_the_batches_kafka_describes(flags, batch_ok):
    result = run_cli("dump", "--deep-iteration", *flags, TXN)
    assert result.exit_code == 0, result.output
    assert shown(result.stdout) == expected(TXN, batch_ok)
    assert shown(result.stdout)[0]  # the filter matched something


def test_magic_filter_on_a_mixed_magic_file():
    for magic in (0, 1, 2):
        result = run_cli("dump", "--deep-iteration", "--magic", magic, MIXED)
        assert result.exit_code == 0
        want = expected(MIXED, lambda b: b["magic"] == magic)
        assert shown(result.stdout) == want and want[0]


def test_shallow_dump_filters_batch_lines_too():
    result = run_cli("dump", "--producer-id", "1000", IDEMPOTENT)
    assert result.exit_code == 0
    assert shown(result.stdout)[0] == expected(IDEMPOTENT, lambda b: b["producerId"] == 1000)[0]
    assert "| offset:" not in result.stdout


def corrupt_gzip_file(tmp_path):
    """A sound batch of producer 7, then a gzip batch of producer 9 whose compressed bytes are damaged under a
    correct CRC: reading its records fails."""
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(sound_then_corrupt_gzip()[0])
    return path


@pytest.mark.parametrize("flags", [["--producer-id", "7"], ["--codec", "none"], ["--transactional", "--magic", "1"]])
def test_a_batch_excluded_by_its_header_is_not_decompressed(tmp_path, flags):
    path = corrupt_gzip_file(tmp_path)
    unfiltered = run_cli("dump", "--deep-iteration", path)
    assert unfiltered.exit_code == 1 and "decompress" in unfiltered.stderr  # the damage is there to find
    result = run_cli("dump", "--deep-iteration", "--print-data-log", *flags, path)
    assert result.exit_code == 0 and result.stderr == ""
    if flags[0] != "--transactional":
        assert shown(result.stdout) == ([0], [0])


def test_a_record_filter_still_reports_a_batch_it_cannot_read(tmp_path):
    result = run_cli("dump", "--key", "k0", corrupt_gzip_file(tmp_path))
    assert result.exit_code == 1 and "decompress" in result.stderr
    assert shown(result.stdout) == ([0], [0])


# --- record-level filters -------------------------------------------------------------------------------


def test_key_is_an_exact_decoded_key():
    result = run_cli("dump", "--key", "txB-key-43", TXN)
    assert result.exit_code == 0
    want = expected(TXN, record_ok=lambda r: text_of(r.get("key")) == "txB-key-43")
    assert shown(result.stdout) == want and len(want[1]) >= 2
    assert "| offset:" in result.stdout and " key: " not in result.stdout  # implies deep, not data


def test_key_with_another_decoder_is_compared_decoded():
    key = "txB-key-43".encode().hex()
    result = run_cli("dump", "--key-decoder", "hex", "--key", key, TXN)
    assert shown(result.stdout) == expected(TXN, record_ok=lambda r: r.get("key") == key)
    assert f"key: {key}" in result.stdout


@pytest.mark.parametrize("path", [TXN, MIXED, IDEMPOTENT])
def test_key_match_and_value_match_are_regex_searches(path):
    key_re, value_re = r"key-4\d$", r"\"i\":\d*[02468],"
    result = run_cli("dump", "--print-data-log", "--key-match", key_re, "--value-match", value_re, path)
    assert result.exit_code == 0
    want = expected(path, record_ok=lambda r: r.get("key") is not None and r.get("value") is not None
                    and re.search(key_re, text_of(r["key"])) and re.search(value_re, text_of(r["value"])))
    assert shown(result.stdout) == want and want[1]


def test_header_filter_by_key_and_by_value():
    view = kafka_view(HEADERS)
    some = view[0]["records"][1]["headers"][0]
    name, value = some["key"], text_of(some["value"])

    def has(r, v=None):
        return any(h["key"] == name and (v is None or text_of(h["value"]) == v) for h in r.get("headers", []))

    result = run_cli("dump", "--header", name, HEADERS)
    assert shown(result.stdout) == expected(HEADERS, record_ok=has)
    result = run_cli("dump", "--header", f"{name}={value}", HEADERS)
    assert shown(result.stdout) == expected(HEADERS, record_ok=lambda r: has(r, value))
    assert shown(result.stdout)[1]
    assert shown(run_cli("dump", "--header", f"{name}=no such value", HEADERS).stdout) == ([], [])


def test_filters_combine():
    result = run_cli("dump", "--producer-id", "2002", "--key-match", "^txB", "--codec", "zstd", TXN)
    want = expected(TXN, lambda b: b["producerId"] == 2002 and b["codec"] == "zstd",
                    lambda r: r.get("key") is not None and text_of(r["key"]).startswith("txB"))
    assert shown(result.stdout) == want and want[1]


def test_filtered_records_make_no_non_consecutive_report():
    result = run_cli("dump", "--key-match", "7$", IDEMPOTENT)
    assert result.exit_code == 0 and shown(result.stdout)[1]
    assert "Non-consecutive" not in result.stderr


def test_json_carries_only_matching_records():
    result = run_cli("dump", "--format", "json", "--key", "txB-key-43", TXN)
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    batches = [o for o in objs if o["type"] == "batch"]
    got = ([b["position"] for b in batches], [r["offset"] for b in batches for r in b["records"]])
    assert got == expected(TXN, record_ok=lambda r: text_of(r.get("key")) == "txB-key-43")


def test_a_bad_regex_is_a_usage_error():
    result = run_cli("dump", "--value-match", "(", TXN)
    assert result.exit_code == 2 and "--value-match" in result.output


# --- readable records -----------------------------------------------------------------------------------


def iso(ms: int, tz=dt.timezone.utc) -> str:
    when = dt.datetime.fromtimestamp(ms / 1000, tz)
    text = f"{when:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}"
    return text + "Z" if tz is dt.timezone.utc else text + when.strftime("%z")[:3] + ":" + when.strftime("%z")[3:]


@pytest.mark.parametrize("path", [TXN, MIXED])
def test_time_format_iso_on_every_batch_and_record_line(path):
    result = run_cli("dump", "--deep-iteration", "--time-format", "iso", path)
    assert result.exit_code == 0
    batch_times = re.findall(r"^(?:baseOffset|offset): .*? (?:CreateTime|LogAppendTime|NoTimestampType): (\S+) ",
                             result.stdout, re.M)
    record_times = re.findall(r"^\| offset: \d+ \w+: (\S+) ", result.stdout, re.M)
    view = kafka_view(path)
    assert batch_times == [iso(b["maxTimestamp"]) if b["maxTimestamp"] >= 0 else str(b["maxTimestamp"])
                           for b in view]
    assert record_times == [iso(r["timestamp"]) if r["timestamp"] >= 0 else str(r["timestamp"])
                            for b in view for r in b["records"]]


def run_in_zone(monkeypatch, zone: str, *args):
    """``run_cli(*args)`` with the local time zone ``zone`` (TZ), restored afterwards."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        return run_cli(*args)
    finally:
        monkeypatch.undo()
        time.tzset()


def test_time_format_local_uses_the_time_zone(monkeypatch):
    result = run_in_zone(monkeypatch, "Asia/Kolkata", "dump", "--deep-iteration", "--time-format", "local", HEADERS)
    ms = kafka_view(HEADERS)[0]["records"][0]["timestamp"]
    assert f"CreateTime: {iso(ms, zoneinfo.ZoneInfo('Asia/Kolkata'))} " in result.stdout
    assert "+05:30" in result.stdout


def test_json_keeps_epoch_and_adds_iso():
    result = run_cli("dump", "--format", "json", "--deep-iteration", "--time-format", "iso", HEADERS)
    batch = json.loads(result.stdout.splitlines()[0])
    k = kafka_view(HEADERS)[0]
    assert (batch["maxTimestamp"], batch["maxTimestampIso"]) == (k["maxTimestamp"], iso(k["maxTimestamp"]))
    assert [(r["timestamp"], r["timestampIso"]) for r in batch["records"]] == \
        [(r["timestamp"], iso(r["timestamp"])) for r in k["records"]]
    assert "timestampIso" not in run_cli("dump", "--format", "json", "--deep-iteration", HEADERS).stdout


def test_header_values_in_text_and_json_with_a_header_decoder():
    view = kafka_view(HEADERS)
    result = run_cli("dump", "--header-decoder", "hex", HEADERS)
    assert result.exit_code == 0
    lines = [line for line in result.stdout.splitlines() if line.startswith("| offset:")]
    records = [r for b in view for r in b["records"]]
    for line, r in zip(lines, records, strict=True):
        want = ",".join(f"{h['key']}={'null' if h['value'] is None else h['value']}" for h in r["headers"])
        assert f" headers: [{want}]" in line
        assert f"payload: {text_of(r['value'])}" in line  # implies --print-data-log
    objs = [json.loads(x) for x in
            run_cli("dump", "--format", "json", "--header-decoder", "hex", HEADERS).stdout.split("\n") if x]
    got = [h for o in objs for r in o["records"] for h in r["headers"]]
    assert got == [{"key": h["key"], "value": h["value"], "valueEncoding": "decoded"} for r in records
                   for h in r["headers"]]


def test_default_piped_text_has_no_header_values():
    assert " headers: [" not in run_cli("dump", "--print-data-log", HEADERS).stdout


def test_header_values_on_a_terminal_are_shown_escaped(tmp_path):
    from test_terminal_safety import HOSTILE, RAW_SIGNS, _on_a_terminal
    b = RecordBatchBuilder(0)
    for i, text in enumerate(HOSTILE):
        b.append(i, 1_700_000_000_000 + i, b"k", b"v", headers=[("h", f"hv{text}".encode())])
    path = tmp_path / "00000000000000000000.log"
    write_segment(str(path), [b.build()])
    out = _on_a_terminal(["dump", "--print-data-log", path.name], {"NO_COLOR": "1"}, tmp_path)
    for sign in RAW_SIGNS:
        assert sign not in out, repr(sign)
    assert "headers: [h=hv\\x1b]52;c;cm0gLXJmIH4K\\x07]" in out


def test_json_with_readable_fields_and_filters_validates():
    from test_json_schemas import _all_valid
    objs = []
    for args in (["--time-format", "local", "--header-decoder", "base64", HEADERS],
                 ["--time-format", "iso", "--key-match", "key", MIXED],
                 ["--time-format", "iso", "--control-only", TXN]):
        objs += [json.loads(line) for line in run_cli("dump", "--format", "json", *args).stdout.splitlines()]
    assert {"maxTimestampIso", "records"} <= set(objs[0]) and objs[0]["records"][0]["headers"]
    _all_valid("dump", objs)
