"""`kdump dump` options, formats and file handling (the corpus text comparisons are in test_dump_corpus.py)."""
import base64
import io
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from corpus import CORPUS, ROOT, load_json
from support.cli import run_cli

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

TXN = CORPUS / "kafka-generated/v2-transactional/00000000000000000000.log"
MIXED = CORPUS / "kafka-generated/mixed-magic/00000000000000000000.log"
HEADERS = CORPUS / "broker-written/fetch-v2-headers/00000000000000000000.log"



def kafka_records(path):
    """(batch, record) pairs from Kafka's own field-level view of the file."""
    for b in load_json(path)["batches"]:
        for r in b["records"]:
            yield b, r


def java_text(hexstr):
    from kdump.decode.payload import java_utf8
    return java_utf8(bytes.fromhex(hexstr))


def test_max_bytes_reads_whole_batches_only():
    # Kafka's testPrintDataLogPartialBatches: --max-bytes = size of the first two batches -> two batch lines
    sizes = [b["size"] for b in load_json(TXN)["batches"]]
    result = run_cli("dump", "--max-bytes", sizes[0] + sizes[1] + 5, TXN)
    assert result.exit_code == 0
    assert result.stdout.count("baseOffset:") == 2
    assert "invalid bytes" not in result.stdout  # Kafka prints trailing bytes only without --max-bytes


def test_skip_record_metadata_prints_only_data_and_blank_control_lines():
    result = run_cli("dump", "--print-data-log", "--skip-record-metadata", TXN)
    assert result.exit_code == 0
    body = result.stdout_bytes.decode().split("\n", 2)[2]  # after "Dumping" and "Log starting offset"
    records_text = re.sub(r"^baseOffset: .*\n", "", body, flags=re.M)
    expected = []
    for b, r in kafka_records(TXN):
        if b["isControl"]:
            expected.append("")
            continue
        parts = []
        prefix = "| "
        if r["key"] is not None:
            parts.append(f"{prefix}key: {java_text(r['key'])}")
            prefix = " "
        if r["value"] is not None:
            parts.append(f"{prefix}payload: {java_text(r['value'])}")
        expected.append("".join(parts))
    assert records_text == "".join(line + "\n" for line in expected)


def test_print_data_log_record_lines_end_as_kafkas_test_expects():
    result = run_cli("dump", "--print-data-log", HEADERS)
    lines = [line for line in result.stdout.split("\n") if line.startswith("| offset:")]
    recs = [r for _, r in kafka_records(HEADERS)]
    assert len(lines) == len(recs)
    for line, r in zip(lines, recs):
        keys = ",".join(h["key"] for h in r["headers"])
        assert line.endswith(f"headerKeys: [{keys}] key: {java_text(r['key'])} payload: {java_text(r['value'])}")


@pytest.mark.parametrize("decoder,convert", [
    ("hex", lambda b: b.hex()),
    ("base64", lambda b: base64.b64encode(b).decode()),
])
def test_key_and_value_decoders(decoder, convert):
    result = run_cli("dump", "--key-decoder", decoder, "--value-decoder", decoder, HEADERS)
    assert result.exit_code == 0  # a decoder implies --print-data-log
    lines = [line for line in result.stdout.split("\n") if line.startswith("| offset:")]
    for line, (_, r) in zip(lines, kafka_records(HEADERS)):
        assert line.endswith(f" key: {convert(bytes.fromhex(r['key']))} payload: {convert(bytes.fromhex(r['value']))}")


def test_kafka_decoder_class_names_are_accepted():
    result = run_cli("dump", "--value-decoder-class", "org.apache.kafka.tools.api.StringDecoder", HEADERS)
    assert result.exit_code == 0
    assert "payload: some-value-0" in result.stdout


def test_int32_decoder_failure_is_inline_not_fatal():
    result = run_cli("dump", "--key-decoder", "int64", HEADERS)  # keys are 5 bytes: too short for int64
    assert result.exit_code == 0
    assert "key: <int64 decoder needs 8 bytes, got 5>" in result.stdout


def test_user_decoder_by_import_path(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "tests"))
    result = run_cli("dump", "--value-decoder", "decoder_plugins:upper", HEADERS)
    assert result.exit_code == 0, result.output
    assert "payload: SOME-VALUE-0" in result.stdout


def test_bad_decoder_is_a_usage_error():
    result = run_cli("dump", "--value-decoder", "no_such_module:thing", HEADERS)
    assert result.exit_code == 2
    assert "no_such_module" in result.stderr


def test_files_option_like_kafka(in_dir):
    in_dir(TXN.parent)
    result = run_cli("dump", "--files", f"{TXN.name},{TXN.name}")
    assert result.stdout.count(f"Dumping {TXN.name}\n") == 2


def test_directory_dumps_segments_in_offset_order_and_passes_over_kafkas_own_files(tmp_path):
    part = tmp_path / "topic-0"
    part.mkdir()
    shutil.copy(MIXED, part / "00000000000000000000.log")
    shutil.copy(CORPUS / "kafka-generated/v1-edge-cases/00000000000000001000.log", part / "00000000000000001000.log")
    shutil.copy(CORPUS / "broker-written/fetch-truncated-mid-message/00000000000000000262.log",
                part / "00000000000000000262.log")
    (part / "00000000000000000000.index").write_bytes(b"")
    (part / "partition.metadata").write_text("version: 0\n")
    result = run_cli("dump", str(part) + "/")
    dumped = re.findall(r"^Dumping (.*)$", result.stdout, re.M)
    assert [os.path.basename(p) for p in dumped] == [
        "00000000000000000000.log", "00000000000000000262.log", "00000000000000001000.log"]
    # issue 11 point 5: Kafka's own files are known kinds, passed over quietly (named with -v), not "unknown"
    assert "Ignoring unknown file" not in result.stderr and "partition.metadata" not in result.stderr
    assert result.exit_code == 0
    verbose = run_cli("dump", "-v", str(part) + "/")
    assert f"kdump: {part / 'partition.metadata'}: note: passed over (partition-metadata" in verbose.stderr


def test_json_lines_carry_kafkas_field_names_and_values():
    for path in (TXN, MIXED, HEADERS):
        result = run_cli("dump", "--format", "json", "--print-data-log", path)
        assert result.exit_code == 0
        ours = [json.loads(line) for line in result.stdout.split("\n") if line]
        kafka = load_json(path)["batches"]
        assert len(ours) == len(kafka)
        for o, k in zip(ours, kafka):
            for field in ("position", "size", "baseOffset", "lastOffset", "magic", "codec", "crc", "crcValid",
                          "timestampType", "maxTimestamp", "isTransactional", "isControl", "producerId",
                          "producerEpoch", "baseSequence", "lastSequence", "partitionLeaderEpoch",
                          "deleteHorizonMs", "recordCount"):
                assert o[field] == k[field], field
            assert len(o["records"]) == len(k["records"])
            for orec, krec in zip(o["records"], k["records"]):
                for field in ("offset", "timestamp", "timestampType", "sequence", "sizeInBytes"):
                    assert orec[field] == krec[field], field
                for part in ("key", "value"):
                    raw = None if krec[part] is None else bytes.fromhex(krec[part])
                    if orec[f"{part}Encoding"] == "base64":
                        assert base64.b64decode(orec[part]) == raw
                    else:
                        assert (None if orec[part] is None else orec[part].encode()) == raw
                assert [h["key"] for h in orec.get("headers", [])] == [h["key"] for h in krec["headers"]]


def test_json_shallow_has_no_records():
    result = run_cli("dump", "--format", "json", TXN)
    assert all("records" not in json.loads(line) for line in result.stdout.splitlines())


def test_rich_rendering_on_a_terminal_and_no_color(monkeypatch):
    from kdump.decode.payload import load_decoder
    from kdump.dump import DumpOptions
    from kdump.render import RENDERERS
    from kdump.render.rich_text import RichTextOut

    def _make_renderer(fmt, out, opts, key_dec, value_dec, no_color):  # the renderer `kdump dump` makes
        return RENDERERS[fmt].batches(out, opts, key_dec, value_dec, no_color=no_color)

    class FakeTty(io.StringIO):
        def isatty(self):
            return True

    string = load_decoder("string")
    monkeypatch.delenv("NO_COLOR", raising=False)
    r = _make_renderer("text", FakeTty(), DumpOptions(), string, string, False)
    assert isinstance(r.out, RichTextOut)
    assert not isinstance(_make_renderer("text", FakeTty(), DumpOptions(), string, string, True).out, RichTextOut)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not isinstance(_make_renderer("text", FakeTty(), DumpOptions(), string, string, False).out, RichTextOut)
    piped = io.StringIO()
    assert _make_renderer("text", piped, DumpOptions(), string, string, False).out is piped


def test_rich_output_keeps_kafkas_words_and_adds_colour():
    from rich.console import Console
    from kdump.render.rich_text import THEME, DumpHighlighter, RichTextOut
    buf = io.StringIO()
    out = RichTextOut(Console(file=buf, force_terminal=True, color_system="standard", theme=THEME,
                              highlighter=DumpHighlighter(), soft_wrap=True))
    line = "offset: 0 position: 0 NoTimestampType: -1 size: 111 magic: 0 compresscodec: none crc: 1 isvalid: false\n"
    out.write(line)
    text = buf.getvalue()
    assert "\x1b[" in text
    assert re.sub(r"\x1b\[[0-9;]*m", "", text) == line


def test_no_arguments_is_a_usage_error():
    result = run_cli("dump")
    assert result.exit_code == 2
    assert "no files given" in result.stderr


def test_version_and_help():
    assert run_cli("--version").stdout.startswith("kdump, version ")
    help_text = run_cli("dump", "--help").stdout
    for option in ("--deep-iteration", "--print-data-log", "--skip-record-metadata", "--max-bytes",
                   "--key-decoder", "--value-decoder", "--format", "--no-color", "Exit codes"):
        assert option in help_text


def test_python_dash_m_and_broken_pipe():
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-m", "kdump", "dump", "--print-data-log", str(TXN)],
                          capture_output=True, env=env)
    assert proc.returncode == 0 and proc.stdout.startswith(b"Dumping ")
    big = CORPUS / "kafka-generated/v2-none/00000000000000000000.log"  # 1.4 MB of text: fills the pipe
    proc = subprocess.run(f"{sys.executable} -m kdump dump --print-data-log {big} | head -1", shell=True,
                          capture_output=True, env=env)
    assert proc.stdout == f"Dumping {big}\n".encode()
    assert proc.stderr == b""  # no traceback, and not reported as a problem with the file


def test_scala_compat_payload_prefix_quirk_with_skip_record_metadata(tmp_path):
    # Spec §2.3: the Scala tool always printed " payload: " (leading space, no "|"), even when the record
    # line has no metadata and no key; the Java tool prints "| payload: ".
    from kdump.write.segment import RecordBatchBuilder
    b = RecordBatchBuilder(base_offset=0)
    b.append(0, 1700000000000, None, b"v0")
    b.append(1, 1700000000001, b"k1", b"v1")
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b.build())
    java = run_cli("dump", "--print-data-log", "--skip-record-metadata", path).stdout.split("\n")[3:5]
    scala = run_cli("dump", "--compat", "scala", "--print-data-log", "--skip-record-metadata",
                    path).stdout.split("\n")[3:5]
    assert java == ["| payload: v0", "| key: k1 payload: v1"]
    assert scala == [" payload: v0", "| key: k1 payload: v1"]


def test_dumplogsegments_options_are_in_help():
    shown = run_cli("dump", "--help").stdout
    for flag in ("--max-message-size", "--key-decoder-class", "--value-decoder-class"):
        assert flag in shown, flag


def test_dump_version_as_kafka_dump_log_takes_it():
    """kafka-dump-log.sh accepts --version (CommandDefaultOptions) and prints Kafka's version, exit 0: dump prints
    kdump's version line (the one `kdump --version` prints) and whose Kafka text it follows."""
    own = run_cli("dump", "--version")
    assert own.exit_code == 0
    lines = own.stdout.splitlines()
    assert lines[0] == run_cli("--version").stdout.strip()
    assert "kafka-dump-log.sh" in lines[1] and "Kafka 4" in lines[1] and "--compat scala" in lines[1]
    shown = run_cli("dump", "--help").stdout  # DumpLogSegments' options kdump accepts are in its help
    for option in ("--version", "--max-message-size", "--key-decoder-class", "--value-decoder-class", "--files"):
        assert option in shown, option
