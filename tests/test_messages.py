"""Issue 20 item 4: messages people can use. Each error beside the data it concerns (stdout flushed first); a
summary's range covers every finding it counts; a gap between segments shown and counted; the internal-topic
decoder hint wherever such records are dumped without their decoder; tables that never cut an id or a timestamp;
progress only on a terminal, for runs expected to take 2 s or more."""
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from support.cli import run_cli
from support.segments import T0, data_batch, write_log

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fixtures" / "corpus"
CORRUPT = CORPUS / "kafka-generated" / "corrupt"
INTERNAL = CORPUS / "kafka-generated" / "internal-topics"
SEG = "00000000000000000000.log"


# --- stdout flushed before each error line ------------------------------------------------------------------------
def test_each_error_sits_beside_its_files_data_in_one_pipe(tmp_path):
    """`kdump dump A B 2>&1 | less`: stdout and stderr are one pipe; A's error comes after A's data and before B's."""
    a, b = tmp_path / "a-0", tmp_path / "b-0"
    for src, dst in ((CORRUPT / "v2-bad-length-field", a), (CORRUPT / "v2-length-beyond-eof", b)):
        dst.mkdir()
        shutil.copy(src / SEG, dst / SEG)
    proc = subprocess.run([sys.executable, "-m", "kdump", "dump", a / SEG, b / SEG], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120)
    lines = proc.stdout.decode().splitlines()
    assert proc.returncode == 1

    def where(prefix, after=-1):
        return next(n for n, line in enumerate(lines) if line.startswith(prefix) and n > after)
    dump_a, dump_b = where(f"Dumping {a / SEG}"), where(f"Dumping {b / SEG}")
    error_a, error_b = where(f"kdump: {a / SEG}: at byte 219: "), where(f"kdump: {b / SEG}: at byte 219: ")
    # each file's first batch line (offset 0, as in Kafka's dump of it in the corpus), then its error
    assert dump_a < where("baseOffset: 0 ", dump_a) < error_a < dump_b < where("baseOffset: 0 ", dump_b) < error_b


# --- a range of capped findings covers all of them ----------------------------------------------------------------
def test_the_range_of_2000_findings_covers_all_2000(tmp_path):
    batches = [bytearray(data_batch(i * 2, 2, ts=T0 + i)) for i in range(2000)]
    for b in batches:
        b[-3] ^= 1  # a value byte: the CRC no longer matches, the records still decode
    (tmp_path / SEG).write_bytes(b"".join(batches))
    last = sum(len(b) for b in batches[:-1])  # where the 2000th batch starts
    result = run_cli("verify", "--deep", tmp_path / SEG)
    assert result.exit_code == 1
    (line,) = [x for x in result.stdout.splitlines() if "crc-mismatch" in x]
    assert line.startswith(f"  error crc-mismatch x2000 at bytes 0-{last} offsets 0-3999: "), line
    assert line.endswith("(the first of 2000)")


# --- a segment missing in the middle ------------------------------------------------------------------------------
def test_a_missing_segment_is_shown_without_v_and_counted(tmp_path):
    part = tmp_path / "t-0"
    for base in (0, 262, 524):
        write_log(part, base, [data_batch(base + i * 2, 2, ts=T0 + base + i) for i in range(131)])
    os.unlink(part / "00000000000000000262.log")
    result = run_cli("verify", "--deep", part)
    assert "segment-gap at byte 0 offsets 262-523: offsets 262-523 are in no segment" in result.stdout
    # two segments, and the .index each lacks (index check's warning, which verify of a partition runs too)
    assert result.stdout.splitlines()[-1] == "4 files checked, 3 with findings: 0 errors, 3 warnings"
    assert result.stdout.count("index-missing") == 2
    assert run_cli("verify", "--deep", "--fail-on", "warning", part).exit_code == 1
    doc = json.loads(run_cli("verify", "--format", "json", part).stdout)
    assert [(f["code"], f["severity"], f["firstOffset"], f["lastOffset"]) for r in doc["files"]
            for f in r["findings"] if f["code"] != "index-missing"] == [("segment-gap", "warning", 262, 523)]


# --- the internal-topic decoder hint ------------------------------------------------------------------------------
HINTS = {
    "__consumer_offsets": "kdump: note: __consumer_offsets records are binary; add --offsets-decoder (or --decoder "
                          "auto) to decode them",
    "__transaction_state": "kdump: note: __transaction_state records are binary; add --transaction-log-decoder (or "
                           "--decoder auto) to decode them",
    "__cluster_metadata": "kdump: note: __cluster_metadata records are binary; add --cluster-metadata-decoder (or "
                          "--decoder auto) to decode them",
}


def notes(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if " records are binary; " in line]


def test_the_decoder_hint_for_one_segment_and_for_a_log_directory(tmp_path):
    logs = tmp_path / "logs"
    for topic in HINTS:
        (logs / f"{topic}-0").mkdir(parents=True)
        shutil.copy(INTERNAL / f"{topic}-0" / SEG, logs / f"{topic}-0" / SEG)
    offsets = logs / "__consumer_offsets-0" / SEG
    assert notes(run_cli("dump", offsets)) == [HINTS["__consumer_offsets"]]
    # once per run, however often the topic's records were dumped
    assert notes(run_cli("dump", offsets, offsets.parent, offsets)) == [HINTS["__consumer_offsets"]]
    assert sorted(notes(run_cli("dump", "--deep-iteration", logs))) == sorted(HINTS.values())
    assert notes(run_cli("dump", "--offsets-decoder", offsets)) == []
    assert notes(run_cli("dump", "--decoder", "auto", logs)) == []
    plain = tmp_path / "orders-0"
    write_log(plain, 0, [data_batch(0, 3)])
    assert notes(run_cli("dump", plain)) == []


# --- tables never cut an id or a timestamp ------------------------------------------------------------------------
def iso(ms: int) -> str:
    """UTC ISO-8601 with milliseconds, as the tables print times (computed here with datetime)."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


# The ids and times each command's tables print, by their JSON names (table cells, not headings or titles).
TABLE_TOKENS = {
    "groups": (("groups", "members"), ("memberId", "groupInstanceId", "clientId", "clientHost"),
               ("groups", "offsets"), ("commitTimestamp", "expireTimestamp")),
    "txn-state": (("transactions",), ("transactionalId", "state", "transactionStartTimestampMs",
                                      "transactionLastUpdateTimestampMs")),
    "metadata": (("brokers",), ("incarnationId",), ("controllers",), ("incarnationId",),
                 ("delegationTokens",), ("tokenId", "owner", "expirationTimestamp")),
}


def tokens_of(command: str, path: Path) -> set[str]:
    """The ids, states and times the command's tables show, from its JSON document (times as the tables print
    them)."""
    doc = json.loads(run_cli(command, "--format", "json", path).stdout)
    found: set[str] = set()
    spec = TABLE_TOKENS[command]
    for where, keys in zip(spec[::2], spec[1::2], strict=True):
        items = [doc]
        for step in where:
            items = [x for item in items for x in item[step]]
        for item in items:
            for key in keys:
                value = item.get(key)
                if isinstance(value, int) and key.endswith(("Timestamp", "TimestampMs")):
                    if value >= 0:
                        found.add(iso(value))
                elif isinstance(value, str) and value:
                    found.add(value)
    return found


ANSI = re.compile(r"\x1b\[[0-9;]*m")


def rich_text(*args, width: int) -> list[str]:
    result = run_cli(*args, env={"COLUMNS": str(width), "FORCE_COLOR": "1", "NO_COLOR": None})
    return ANSI.sub("", result.stdout).splitlines()


@pytest.mark.parametrize("command, path", [
    ("groups", CORPUS / "broker-written" / "consumer-offsets-v2"),
    ("txn-state", INTERNAL / "__transaction_state-0"),
    ("metadata", CORPUS / "broker-written" / "kraft-metadata-log"),
    ("metadata", INTERNAL / "__cluster_metadata-0"),
])
def test_tables_on_a_120_column_terminal_cut_no_id_or_timestamp(command, path):
    lines = rich_text(command, path, width=120)
    assert lines and all(len(line) <= 120 for line in lines), max(lines, key=len)
    words = {word for line in lines for word in line.split()}
    tokens = tokens_of(command, path)
    assert tokens and tokens <= words, tokens - words


def test_the_groups_table_keeps_kafkas_member_id_and_times_whole():
    """consumer-offsets-v2: the broker's group (test_replay.py reads the same records)."""
    lines = rich_text("groups", CORPUS / "broker-written" / "consumer-offsets-v2", width=120)
    words = {word for line in lines for word in line.split()}
    assert {"consumer-demo-group-1-d33083a6-85c9-4dac-bd3a-ee987bc01b66", "/192.168.65.1",
            iso(1779276564803), iso(1779276404707)} <= words


def test_groups_offsets_on_an_80_column_terminal_are_a_table_one_line_per_partition():
    """consumer-offsets-v2: the broker's group committed offset 0 of demo-topic partitions 0-2 at 1779276564803,
    with no leader epoch, metadata or expiry (test_replay.py reads the same records). At 80 columns the seven
    columns do not fit; the three empty in every row are left out and named, so each partition is one line."""
    lines = rich_text("groups", CORPUS / "broker-written" / "consumer-offsets-v2", width=80)
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    rows = [line.split() for line in lines if line.split()[:1] == ["demo-topic"]]
    assert rows == [["demo-topic", str(p), "0", iso(1779276564803)] for p in range(3)]
    assert "(leader epoch, metadata, expires: none in any row)" in [line.strip() for line in lines]


def test_a_table_too_narrow_for_one_line_per_row_divides_its_blocks():
    """At 50 columns even the offsets' non-empty columns do not fit: one block per partition, each under a
    divider naming it (n of 3), so no block runs into the next."""
    lines = [line.strip() for line in rich_text("groups", CORPUS / "broker-written" / "consumer-offsets-v2",
                                                 width=50)]
    dividers = [n for n, line in enumerate(lines) if line.startswith("── ") and " of 3 " in line]
    assert [lines[n].split()[1:4] for n in dividers] == [["1", "of", "3"], ["2", "of", "3"], ["3", "of", "3"]]
    assert [lines[n + 1].split() for n in dividers] == [["topic", "demo-topic"]] * 3


@pytest.mark.parametrize("width", [60, 100, 120, 160, 161, 174, 175, 200])
def test_a_table_fits_any_width_without_cutting_a_token(width):
    """Wide enough: one line per row (its text columns may wrap at spaces; from 175 columns its headings fit on one
    line, from 161 broken at their spaces); too narrow: one block per row."""
    path = INTERNAL / "__transaction_state-0"
    lines = rich_text("txn-state", path, width=width)
    assert all(len(line) <= width for line in lines)
    words = {word for line in lines for word in line.split()}
    assert tokens_of("txn-state", path) <= words
    rows_on_one_line = any(line.split()[:2] == ["txn-Ongoing", "4001"] for line in lines)
    assert rows_on_one_line == (width >= 161)
    headings_on_one_line = any("transactional id" in line and "producer id" in line for line in lines)
    assert headings_on_one_line == (width >= 175)


# --- progress --------------------------------------------------------------------------------------------------
class Shown(list):
    """Labels of the bars shown, and ``done``: the bytes they were advanced by."""

    def __init__(self):
        super().__init__()
        self.done: list[int] = []


@pytest.fixture
def bars(monkeypatch):
    """The bars shown (their labels; ``bars.done``: what they were advanced by), stderr taken for a terminal."""
    import kdump.commands.progress as progress
    shown = Shown()

    class Spy:
        def __init__(self, total, label, color):
            shown.append(label)

        def __enter__(self):
            return self

        def advance(self, n):
            assert n >= 0
            shown.done.append(n)

        def __exit__(self, *exc):
            pass
    monkeypatch.setattr(progress, "Bar", Spy)
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    return shown


def test_progress_is_decided_by_size_and_the_commands_speed(bars, monkeypatch, tmp_path):
    import kdump.commands.progress as progress
    part = tmp_path / "t-0"
    log = write_log(part, 0, [data_batch(i * 10, 10, ts=T0 + i) for i in range(50)])
    size = os.path.getsize(log)
    monkeypatch.setattr("kdump._backend.BACKEND", "compiled")  # whichever backend the suite runs on
    monkeypatch.setitem(progress.SPEEDS, "counting", size // 3)  # 3 s expected
    assert run_cli("stats", part).exit_code == 0 and bars == ["counting"]
    bars.clear()
    monkeypatch.setitem(progress.SPEEDS, "counting", size)  # 1 s expected: no bar
    assert run_cli("stats", part).exit_code == 0 and bars == []
    monkeypatch.setattr("kdump._backend.BACKEND", "python")  # 5x slower without the compiled path: 5 s
    assert run_cli("stats", part).exit_code == 0 and bars == ["counting"]
    bars.clear()
    monkeypatch.setitem(progress.SPEEDS, "dumping", size // 3)
    assert run_cli("dump", "--print-data-log", part).exit_code == 0 and bars == ["dumping"]  # text to a file too
    bars.clear()
    assert run_cli("-q", "stats", part).exit_code == 0 and bars == []
    write_log(part, 500, [data_batch(500 + i * 10, 10, ts=T0 + i) for i in range(50)])  # a second segment
    monkeypatch.setitem(progress.SPEEDS, "salvaging", size // 3)
    for source, out in ((part, tmp_path / "saved"), (log, tmp_path / "saved.log")):
        bars.done.clear()
        assert run_cli("salvage", source, "-o", out).exit_code == 0 and bars == ["salvaging"]
        bars.clear()
        logs = part.glob("*.log") if source == part else [log]
        assert sum(bars.done) == sum(os.path.getsize(x) for x in logs)  # every byte of every segment, once


def test_txn_and_the_replays_show_progress_by_size_and_speed(bars, monkeypatch, tmp_path):
    """txn advances its bar as each partition ends, a replay as each batch is read: every byte once."""
    import shutil

    import kdump.commands.progress as progress
    part = tmp_path / "t-0"
    log = write_log(part, 0, [data_batch(i * 10, 10, ts=T0 + i) for i in range(50)])
    size = os.path.getsize(log)
    monkeypatch.setattr("kdump._backend.BACKEND", "compiled")
    monkeypatch.setitem(progress.SPEEDS, "reading transactions", size // 3)  # 3 s expected
    assert run_cli("txn", part).exit_code == 0 and bars == ["reading transactions"] and sum(bars.done) == size
    bars.clear()
    bars.done.clear()
    offsets = tmp_path / "__consumer_offsets-0"
    shutil.copytree(ROOT / "fixtures/corpus/broker-written/consumer-offsets-v2", offsets)
    monkeypatch.setitem(progress.SPEEDS, "replaying", 1)  # any size takes long
    assert run_cli("groups", offsets).exit_code == 0 and bars == ["replaying"]
    assert sum(bars.done) == sum(os.path.getsize(x) for x in offsets.glob("*.log"))
    bars.clear()
    monkeypatch.setitem(progress.SPEEDS, "replaying", 10 ** 12)  # a moment: no bar
    assert run_cli("groups", offsets).exit_code == 0 and bars == []


def test_progress_speeds_are_documented():
    import kdump.commands.progress as progress
    readme = (ROOT / "docs" / "cli.md").read_text()  # the options every command shares
    for label, speed in progress.SPEEDS.items():
        assert f"{speed // 1_000_000} MB/s" in readme, label
    assert "2 s or more" in readme


def test_spark_progress_only_on_a_terminal(monkeypatch):
    import kdump.commands.progress as progress
    from kdump.commands.spark import _progress
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: False)
    assert _progress("scan", SimpleNamespace(quiet=False)) is None  # `kdump spark scan 2>log`: nothing in the log
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    assert _progress("scan", SimpleNamespace(quiet=True)) is None
    show = _progress("scan", SimpleNamespace(quiet=False))
    err = StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    show(1, 2)
    show(2, 2)
    assert err.getvalue() == "\rscan: 1/2 segments\rscan: 2/2 segments\n"
