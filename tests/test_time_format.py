"""``--time-format epoch|iso|local`` on every command that prints a time (issue 14 item 1): one shared option; epoch
ms stays Kafka's text (byte for byte on the corpus); iso/local reach companion files (time index, producer
snapshot), ``index dump``, ``txn``, ``stats`` and the replays; JSON keeps the epoch ms and adds ``<name>Iso`` only
when a non-epoch form is asked. ``dump``'s batch and record lines are tested in test_dump_filters.py; the expected
forms come from :func:`test_dump_filters.iso`, written on :mod:`datetime` apart from :mod:`kdump.text.times`."""
from __future__ import annotations

import datetime as dt
import json
import re
import time
import zoneinfo

import click
import pytest
from corpus import CORPUS
from test_cli import every_command
from test_dump_filters import iso, run_in_zone

from support.cli import run_cli

BROKER = CORPUS / "broker-written"
SNAPSHOT_DIR = BROKER / "producer-snapshot-3-producers"
OFFSETS_V2 = BROKER / "consumer-offsets-v2"  # .index, .timeindex, leader-epoch-checkpoint
TXN_DIR = CORPUS / "kafka-generated/v2-transactional"
INTERNAL = CORPUS / "kafka-generated/internal-topics"

# Every command that prints a time, and the form it prints without --time-format (None: text iso, JSON epoch).
TIMED = {("dump",): "epoch", ("index", "dump"): "epoch", ("txn",): "epoch", ("stats",): "epoch",
         ("groups",): None, ("txn-state",): None, ("metadata",): None, ("verify",): "epoch",
         ("index", "check"): "epoch"}


def run(*args):
    result = run_cli(*args)
    assert result.exit_code in (0, 1), (args, result.output)
    return result


def kafka_lines(path) -> list[str]:
    """Kafka's own DumpLogSegments text for a file (its ``Dumping`` line left out: kdump names the path given)."""
    text = path.with_name(path.name + ".dumplog.txt").read_text()
    return [line for line in text.splitlines() if not line.startswith("Dumping ")]


def with_iso(line: str, form=iso) -> str:
    """Kafka's line with each timestamp (``timestamp:``/``lastTimestamp:`` followed by epoch ms) in ``form``."""
    return re.sub(r"\b((?:last)?[tT]imestamp): (-?\d+)", lambda m: f"{m.group(1)}: {form(int(m.group(2)))}", line)


def dumped(result) -> list[str]:
    return [line for line in result.stdout.splitlines() if not line.startswith("Dumping ")]


def test_every_command_that_prints_a_time_has_the_one_option():
    for words, command in every_command():
        option = next((p for p in command.params if p.name == "time_format"), None)
        if words not in TIMED:
            continue
        assert option is not None, words
        assert option.opts == ["--time-format"] and isinstance(option.type, click.Choice), words
        assert list(option.type.choices) == ["epoch", "iso", "local"], words
        assert option.default == TIMED[words], words
        assert "--time-format" in command.get_help(click.Context(command)).split("Examples:")[1], words  # an example


@pytest.mark.parametrize("path", [OFFSETS_V2 / "00000000000000000000.timeindex",
                                  SNAPSHOT_DIR / "00000000000000094751.snapshot"])
def test_companion_timestamps_epoch_is_kafkas_text_and_iso_formats_each(path):
    kafka = kafka_lines(path)
    assert dumped(run("index", "dump", path)) == kafka
    assert dumped(run("index", "dump", "--time-format", "epoch", path)) == kafka
    formatted = dumped(run("index", "dump", "--time-format", "iso", path))
    assert formatted == [with_iso(line) for line in kafka]
    assert formatted != kafka  # there were timestamps to format


def test_companion_timestamps_in_a_directory_dump_local(monkeypatch):
    result = run_in_zone(monkeypatch, "Asia/Kolkata", "dump", "--companions", "--time-format", "local", OFFSETS_V2)
    kolkata = zoneinfo.ZoneInfo("Asia/Kolkata")
    kafka = kafka_lines(OFFSETS_V2 / "00000000000000000000.timeindex")
    want = [with_iso(line, lambda ms: iso(ms, kolkata)) for line in kafka]
    lines = result.stdout.splitlines()
    start = lines.index(f"Dumping {OFFSETS_V2 / '00000000000000000000.timeindex'}") + 1
    assert lines[start:start + len(want)] == want and "+05:30" in want[0]


def test_companion_json_keeps_epoch_and_adds_iso_only_when_asked():
    from test_json_schemas import _all_valid
    plain = [json.loads(x) for x in
             run("index", "dump", "--format", "json", OFFSETS_V2, SNAPSHOT_DIR).stdout.split("\n") if x]
    objs = [json.loads(x) for x in run("index", "dump", "--format", "json", "--time-format", "iso", OFFSETS_V2,
                                       SNAPSHOT_DIR).stdout.split("\n") if x]
    assert not any(k.endswith("Iso") for o in plain for k in o)
    times = [o for o in objs if o["kind"] == "timeindex"]
    snaps = [o for o in objs if o["kind"] == "snapshot"]
    assert times and all(o["timestampIso"] == iso(o["timestamp"]) for o in times)
    assert snaps and all(o["lastTimestampIso"] == iso(o["lastTimestamp"]) and o["timestampIso"] == iso(o["timestamp"])
                         for o in snaps)
    assert [{k: v for k, v in o.items() if not k.endswith("Iso")} for o in objs] == plain  # the rest unchanged
    _all_valid("index-dump", objs)
    _all_valid("dump", objs)


def test_txn_times_in_text_and_json():
    doc = json.loads(run("txn", "--format", "json", TXN_DIR).stdout)
    part = doc["partitions"][0]
    assert "newestTimestampIso" not in part and all("startTimeIso" not in t for t in part["transactions"])
    text = run("txn", "--time-format", "iso", TXN_DIR).stdout
    assert f"newest timestamp {iso(part['newestTimestamp'])};" in text
    for t in part["transactions"]:
        assert f"offsets {t['firstOffset']}-{t['lastOffset']} {t['outcome']}" in text
        assert f", first timestamp {iso(t['startTime'])}, age " in text
    assert f"first timestamp {part['transactions'][0]['startTime']}, age" in run("txn", TXN_DIR).stdout  # epoch ms
    formatted = json.loads(run("txn", "--format", "json", "--time-format", "local", TXN_DIR).stdout)["partitions"][0]
    utc = zoneinfo.ZoneInfo("UTC") if time.localtime().tm_gmtoff == 0 else None
    for t in formatted["transactions"]:
        assert dt.datetime.fromisoformat(t["startTimeIso"]).timestamp() * 1000 == t["startTime"]
        assert dt.datetime.fromisoformat(t["endTimeIso"]).timestamp() * 1000 == t["endTime"]
        if utc is not None:
            assert t["startTimeIso"] == iso(t["startTime"], utc)


def test_stats_time_ranges():
    doc = json.loads(run("stats", "--format", "json", TXN_DIR).stdout)
    total = doc["total"]
    assert "minTimestampIso" not in total
    assert f"timestamps {total['minTimestamp']} to {total['maxTimestamp']};" in run("stats", TXN_DIR).stdout
    assert f"timestamps {iso(total['minTimestamp'])} to {iso(total['maxTimestamp'])};" in \
        run("stats", "--time-format", "iso", TXN_DIR).stdout
    formatted = json.loads(run("stats", "--format", "json", "--time-format", "iso", TXN_DIR).stdout)["total"]
    assert (formatted["minTimestampIso"], formatted["maxTimestampIso"]) == \
        (iso(total["minTimestamp"]), iso(total["maxTimestamp"]))


@pytest.mark.parametrize("command, path, key", [
    ("groups", OFFSETS_V2, "commitTimestamp"),
    ("txn-state", INTERNAL / "__transaction_state-0", "transactionLastUpdateTimestampMs"),
    ("metadata", INTERNAL / "__cluster_metadata-0", "expirationTimestamp"),
])
def test_replay_tables_iso_by_default_and_any_form_when_asked(command, path, key):
    doc = json.loads(run(command, "--format", "json", path).stdout)
    values = sorted({v for v in _values(doc, key) if v >= 0})
    assert values and not list(_values(doc, "Iso"))
    default = run(command, path).stdout
    assert all(iso(v) in default for v in values)  # the tables' own form
    epoch = run(command, "--time-format", "epoch", path).stdout
    assert all(str(v) in epoch and iso(v) not in epoch for v in values)
    formatted = json.loads(run(command, "--format", "json", "--time-format", "iso", path).stdout)
    iso_key = key.removesuffix("Ms") + "Iso"
    assert sorted({iso(v) for v in _values(formatted, key) if v >= 0}) == \
        sorted({s for s in _values(formatted, iso_key) if not s.lstrip("-").isdigit()})


def _values(doc, key):
    """Every value of members named ``key`` (or, for ``"Iso"``, ending so) in a JSON document."""
    if isinstance(doc, list):
        for item in doc:
            yield from _values(item, key)
    elif isinstance(doc, dict):
        for k, v in doc.items():
            if (k == key or (key == "Iso" and k.endswith("Iso"))) and not isinstance(v, dict | list):
                if v is not None:
                    yield v
            else:
                yield from _values(v, key)


def _segment_with_wrong_max_timestamp(directory):
    """A magic-2 batch whose header's max timestamp (T0 + 5) is not its largest record timestamp (T0 + 2), CRC
    valid; and a .timeindex entry whose timestamp (T0 + 7) is no batch's."""
    import struct

    from crc32c import crc32c

    from kdump.format.v2_builder import RecordBatchBuilder
    t0 = 1_700_000_000_000
    b = RecordBatchBuilder(base_offset=0)
    for i in range(3):
        b.append(i, t0 + i, b"k", b"v")
    data = bytearray(b.build())
    struct.pack_into(">q", data, 35, t0 + 5)  # maxTimestamp: after offset, length, epoch, magic, crc, ...
    struct.pack_into(">I", data, 17, crc32c(bytes(data[21:])))  # the CRC covers attributes .. end
    directory.mkdir()
    (directory / "00000000000000000000.log").write_bytes(data)
    (directory / "00000000000000000000.index").write_bytes(b"")
    (directory / "00000000000000000000.timeindex").write_bytes(struct.pack(">qi", t0 + 7, 2))
    return directory, t0


def test_findings_quote_times_in_the_form_asked(tmp_path):
    """verify --deep and index check --deep quote the times of their findings in --time-format's form (epoch ms,
    as before, without it)."""
    part, t0 = _segment_with_wrong_max_timestamp(tmp_path / "t-0")
    log = part / "00000000000000000000.log"
    epoch = run("verify", "--deep", log).output
    assert f"max timestamp {t0 + 5} but the largest record timestamp is {t0 + 2}" in epoch
    shown = run("verify", "--deep", "--time-format", "iso", log).output
    assert f"max timestamp {iso(t0 + 5)} but the largest record timestamp is {iso(t0 + 2)}" in shown
    epoch = run("index", "check", "--deep", "-v", part).output
    assert f"timestamp {t0 + 7}" in epoch and iso(t0 + 7) not in epoch
    shown = run("index", "check", "--deep", "-v", "--time-format", "iso", part).output
    assert f"timestamp {iso(t0 + 7)}" in shown and str(t0 + 7) not in shown
