"""Untrusted bytes never reach a terminal raw (issue 11, point 4): keys, values, header keys and file names
holding escape sequences are shown escaped on a terminal (plain and rich), a pipe gets Kafka's bytes exactly.
The terminal runs are real: ``kdump dump`` in a subprocess whose stdout and stderr are a pseudo-terminal."""
from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys

import pytest
from corpus import ROOT
from support.cli import run_cli

from kdump.render.replay import printable
from kdump.text.escape import escape, escape_json
from kdump.write.segment import RecordBatchBuilder, write_segment

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # write "rm -rf ~" to the clipboard
TITLE = "\x1b]0;pwned\x07"  # set the window title
CLEAR = "\x1b[2J\x1b[H"  # clear the screen, cursor home
OVERWRITE = "harmless\rEVIL"  # a carriage return overwrites what the line showed
BIDI = "abc\u202edcba"  # right-to-left override
C1 = "x\u009b31m"  # CSI as one C1 character
HOSTILE = [OSC52, TITLE, CLEAR, OVERWRITE, BIDI, C1]
RAW_SIGNS = ["\x1b]52", "\x1b]0;", "\x1b[2J", "harmless\rEVIL", "\u202e", "\u009b", "\x07"]


@pytest.fixture
def hostile_log(tmp_path):
    b = RecordBatchBuilder(0)
    for i, text in enumerate(HOSTILE):
        b.append(i, 1_700_000_000_000 + i, f"key{text}".encode(), f"value{text}".encode(),
                 headers=[(f"h{text}", b"v")])
    path = tmp_path / "00000000000000000000.log"
    write_segment(str(path), [b.build()])
    return path


def test_escape_shows_what_a_terminal_would_obey():
    assert escape(OSC52) == "\\x1b]52;c;cm0gLXJmIH4K\\x07"
    assert escape(OVERWRITE) == "harmless\\x0dEVIL"
    assert escape(BIDI) == "abc\\u202edcba"
    assert escape(C1) == "x\\x9b31m"
    assert escape("a\tb\nc\x7f") == "a\tb\\x0ac\\x7f"
    assert escape("a\tb", keep_tab=False) == "a\\x09b"
    assert escape("caf\u00e9 \u2192 \U0001F600") == "caf\u00e9 \u2192 \U0001F600"  # printable text is untouched
    assert escape(b"bad\x9b".decode("utf-8", "surrogateescape")) == "bad\\x9b"  # a byte that was not UTF-8
    for text in HOSTILE:
        assert json.loads(escape_json(json.dumps(text, ensure_ascii=False))) == text  # the same JSON value
        assert not any(sign in escape_json(json.dumps(text, ensure_ascii=False)) for sign in RAW_SIGNS)


def test_replay_tables_use_the_same_escaping():
    for text in HOSTILE:
        assert printable(text) == escape(text, keep_tab=False)
    assert printable("a\x1b[31mb\x07") == "a\\x1b[31mb\\x07"
    assert printable(None) == "-"


def _on_a_terminal(args, env_extra, cwd, exit_code=0):
    """Run ``python -m kdump ARGS`` with stdout and stderr on a pseudo-terminal; returns what it showed."""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="400", **env_extra)
    env.pop("NO_COLOR", None) if "NO_COLOR" not in env_extra else None
    proc = subprocess.Popen([sys.executable, "-m", "kdump", *args], stdin=subprocess.DEVNULL, stdout=slave,
                            stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=60) == exit_code
    return b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"TERM": "xterm-256color"}], ids=["plain", "rich"])
def test_dump_on_a_terminal_shows_hostile_bytes_escaped(hostile_log, env):
    shown = _on_a_terminal(["dump", "--print-data-log", hostile_log.name], env, hostile_log.parent)
    for sign in RAW_SIGNS:
        assert sign not in shown, repr(sign)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown.replace("\r\n", "\n"))  # rich's own colours off
    for expected in ("\\x1b]52;c;cm0gLXJmIH4K\\x07", "\\x1b]0;pwned\\x07", "\\x1b[2J", "harmless\\x0dEVIL",
                     "abc\\u202edcba", "x\\x9b31m"):
        assert f"key: key{expected}" in plain or f"key{expected}" in plain, expected
        assert f"value{expected}" in plain, expected
    assert "headerKeys: [h\\x1b]52;c;cm0gLXJmIH4K\\x07]" in plain


def test_json_on_a_terminal_has_the_same_values(hostile_log):
    shown = _on_a_terminal(["dump", "--format", "json", "--print-data-log", hostile_log.name], {"NO_COLOR": "1"},
                           hostile_log.parent)
    for sign in RAW_SIGNS:
        assert sign not in shown, repr(sign)
    (batch,) = [json.loads(line) for line in shown.replace("\r\n", "\n").splitlines() if line.startswith("{")]
    assert [r["value"] for r in batch["records"]] == [f"value{text}" for text in HOSTILE]


def test_file_names_and_messages_on_a_terminal_are_escaped(hostile_log):
    evil = hostile_log.parent / f"x{TITLE}{CLEAR}.log"
    evil.write_bytes(hostile_log.read_bytes()[:-3])  # a truncated tail: Kafka's "Found N invalid bytes"
    # a named file is read whatever its name (a note says its name gives no base offset): exit 0
    shown = _on_a_terminal(["dump", evil.name], {"NO_COLOR": "1"}, hostile_log.parent, exit_code=0)
    for sign in RAW_SIGNS:
        assert sign not in shown, repr(sign)
    assert "Dumping x\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H.log" in shown
    assert "x\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H.log: note: the file name is not" in shown
    assert "invalid bytes at the end of x\\x1b]0;pwned\\x07" in shown


def test_piped_output_keeps_kafkas_bytes(hostile_log):
    result = run_cli("dump", "--print-data-log", hostile_log)
    assert result.exit_code == 0
    for text in HOSTILE:
        assert f"key: key{text} payload: value{text}" in result.stdout


def test_verify_text_escapes_file_names(hostile_log):
    evil = hostile_log.parent / f"{OSC52}.log"
    evil.write_bytes(b"\x00" * 10)
    result = run_cli("verify", evil)
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b]52;c;cm0gLXJmIH4K\\x07.log" in result.output


EVIL = f"t{TITLE}{OSC52}"  # a directory name with control characters (a title, a clipboard write)
EVIL_SHOWN = "t\\x1b]0;pwned\\x07\\x1b]52;c;cm0gLXJmIH4K\\x07"


@pytest.mark.parametrize("args, code", [
    (["txn", f"{EVIL}-0"], 0), (["stats", f"{EVIL}-0"], 0), (["convert", "--dry-run", f"{EVIL}-0"], 0),
    (["convert", "--to-magic", "1", "-o", "out/", f"{EVIL}-0/00000000000000000000.log"], 0),
    (["convert", "--to-magic", "1", "-o", "out/", f"{EVIL}-empty"], 2),
    (["convert", "--to-magic", "1", "-o", f"{EVIL}-0/00000000000000000000.log",
      f"{EVIL}-0/00000000000000000000.log"], 2),
    (["index", "rebuild", "-o", "idx", f"{EVIL}-0"], 0), (["salvage", f"{EVIL}-0", "-o", "saved"], 0),
    (["salvage", f"{EVIL}-missing.log", "-o", "saved.log"], 2), (["stats", f"{EVIL}-missing"], 2),
    (["index", "rebuild", f"{EVIL}-0/x.index"], 2),  # Click's own usage error quotes the name
], ids=["txn", "stats", "convert-dry-run", "convert", "convert-nothing", "convert-over-input", "rebuild",
        "salvage", "salvage-missing", "stats-missing", "click-usage-error"])
def test_every_command_shows_file_names_escaped_on_a_terminal(hostile_log, args, code):
    """Reports on stdout and messages on stderr (kdump's and Click's) quote file names: escaped on a terminal."""
    part = hostile_log.parent / f"{EVIL}-0"
    part.mkdir()
    os.rename(hostile_log, part / hostile_log.name)
    (hostile_log.parent / f"{EVIL}-empty").mkdir()
    (part / "x.index").write_bytes(b"")
    shown = _on_a_terminal(args, {"NO_COLOR": "1"}, hostile_log.parent, exit_code=code)
    for sign in RAW_SIGNS:
        assert sign not in shown, (repr(sign), shown)
    assert EVIL_SHOWN in shown, shown


# Invisible and format characters: they act on what a terminal shows (a zero-width space hides in a key, an LRM
# moves text, a line separator breaks a line, tag characters smuggle text no one sees)
INVISIBLE = {"\u200b": "\\u200b", "\u200d": "\\u200d", "\u200e": "\\u200e", "\u200f": "\\u200f",
             "\u061c": "\\u061c", "\ufeff": "\\ufeff", "\u2060": "\\u2060", "\u00ad": "\\xad",
             "\u2028": "\\u2028", "\u2029": "\\u2029", "\U000e0041": "\\U000e0041", "\U000e007f": "\\U000e007f"}


def test_every_format_character_is_escaped_like_esc():
    import unicodedata
    wanted = [c for c in range(0x110000)
              if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp") or 0xE0000 <= c <= 0xE007F]
    assert len(wanted) > 150
    for c in wanted:  # Python's own Unicode table is the oracle
        text = f"a{chr(c)}b"
        shown = escape(text)
        assert chr(c) not in shown and shown != text, hex(c)
        assert chr(c) not in escape_json(json.dumps(text, ensure_ascii=False)), hex(c)
        assert json.loads(escape_json(json.dumps(text, ensure_ascii=False))) == text
    for raw, shown in INVISIBLE.items():
        assert escape(f"k{raw}k") == f"k{shown}k"
    for c in ("\u00e9", "\u05d0", "\u0627", "\U0001F600", "\u4e2d", " "):  # visible text stays as it is
        assert escape(c) == c and escape_json(json.dumps(c, ensure_ascii=False)) == json.dumps(c, ensure_ascii=False)


@pytest.fixture
def invisible_log(tmp_path):
    b = RecordBatchBuilder(0)
    for i, raw in enumerate(INVISIBLE):
        b.append(i, 1_700_000_000_000 + i, f"key{raw}".encode(), f"value{raw}".encode())
    path = tmp_path / "00000000000000000000.log"
    write_segment(str(path), [b.build()])
    return path


def test_dump_on_a_terminal_escapes_invisible_characters(invisible_log):
    shown = _on_a_terminal(["dump", "--print-data-log", invisible_log.name], {"NO_COLOR": "1"},
                           invisible_log.parent)
    for raw, escaped in INVISIBLE.items():
        assert raw not in shown, repr(raw)
        assert f"key: key{escaped} payload: value{escaped}" in shown, escaped
    as_json = _on_a_terminal(["dump", "--format", "json", "--print-data-log", invisible_log.name],
                             {"NO_COLOR": "1"}, invisible_log.parent)
    assert not any(raw in as_json for raw in INVISIBLE)
    (batch,) = [json.loads(line) for line in as_json.replace("\r\n", "\n").splitlines() if line.startswith("{")]
    assert [r["value"] for r in batch["records"]] == [f"value{raw}" for raw in INVISIBLE]


def test_piped_output_keeps_invisible_characters_as_kafka_wrote_them(invisible_log):
    piped = subprocess.run([sys.executable, "-m", "kdump", "dump", "--print-data-log", str(invisible_log)],
                           capture_output=True, cwd=ROOT, check=True).stdout
    for raw in INVISIBLE:
        assert f"payload: value{raw}\n".encode() in piped
