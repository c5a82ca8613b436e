"""The command line as one CLI (issue 9 item 9, issue 11 points 2, 5 and 8): the static command registry, the shared
options of every command, exit codes that tell the truth, output errors (``| head``, ``> /dev/full``), progress."""
from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from corpus import CORPUS
from support.segments import T0, data_batch, marker, write_log

from kdump import cli as cli_module
from kdump.cli import cli
from support.cli import run_cli
from kdump.errors import EXIT_DATA, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE

ROOT = Path(__file__).resolve().parent.parent
V2 = CORPUS / "kafka-generated/v2-none/00000000000000000000.log"  # 820 KB, 6117 records: output > a pipe buffer



def kdump(*args, stdout=subprocess.PIPE, timeout=120):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "kdump", *map(str, args)], stdout=stdout, stderr=subprocess.PIPE,
                          env=env, timeout=timeout, check=False)


def every_command():
    """(name words, click command) of every command and subcommand."""
    ctx = click.Context(cli)
    out = []
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        if isinstance(command, click.Group):
            out.extend(((name, sub), command.get_command(ctx, sub)) for sub in command.list_commands(ctx))
        else:
            out.append(((name,), command))
    return out


@pytest.fixture
def many_segments(tmp_path):
    """A partition of 400 one-batch segments: every command's output is larger than a pipe buffer."""
    part = tmp_path / "big-0"
    part.mkdir()
    for base in range(0, 4000, 10):
        write_log(part, base, [data_batch(base, 10, ts=T0 + base)])
    return part


# --- structure ---------------------------------------------------------------------------------------------
def test_the_registry_is_a_static_list_and_commands_load_lazily():
    assert [name for name, _m, _a in cli_module.COMMANDS] == [
        "dump", "verify", "index", "convert", "groups", "metadata", "txn-state", "txn", "stats", "salvage", "spark",
        "explain", "replicas"]
    for name, module, attr in cli_module.COMMANDS:  # each entry names the command it registers
        import importlib
        assert getattr(importlib.import_module(module), attr).name == name
    source = (ROOT / "kdump/cli.py").read_text()
    assert "not written yet" not in source and "ModuleNotFoundError" not in source
    code = ("import sys, kdump.cli; print(sorted(m for m in sys.modules if m.startswith('kdump.commands.') "
            "and m not in ('kdump.commands.options',)))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=dict(
        os.environ, PYTHONPATH=str(ROOT)), check=True).stdout.strip()
    assert loaded == "[]"  # importing the group imports no command


def test_commands_do_not_call_back_into_the_cli_module():
    for path in (ROOT / "kdump/commands").glob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert node.module != "kdump.cli", path
            if isinstance(node, ast.Import):
                assert all(a.name != "kdump.cli" for a in node.names), path


def test_exit_internal_beside_the_other_codes():
    from kdump import errors
    assert (errors.EXIT_OK, errors.EXIT_DATA, errors.EXIT_USAGE, errors.EXIT_INTERNAL) == (0, 1, 2, 70)


def test_a_bug_is_exit_70_without_a_traceback(monkeypatch, capsys):
    import kdump.dump as lib

    def broken(self, paths):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(lib.Dumper, "dump_paths", broken)
    monkeypatch.delenv("KDUMP_DEBUG", raising=False)
    with pytest.raises(SystemExit) as e:
        cli_module.main(["dump", str(V2)])
    assert e.value.code == EXIT_INTERNAL
    err = capsys.readouterr().err
    assert "internal error: ZeroDivisionError: boom" in err and "Traceback" not in err


def test_run_cli_is_the_command_line_users_run(monkeypatch):
    """The tests' one way to run the command line (tests/support/cli.py) goes through main(): a bug is main's exit
    70 and one line (Click's runner on the group would say exit 1 and keep the exception), output is captured."""
    import kdump.dump as lib

    def broken(self, paths):
        raise ZeroDivisionError("boom")
    monkeypatch.delenv("KDUMP_DEBUG", raising=False)
    assert run_cli("dump", V2).stdout.startswith("Dumping ")
    monkeypatch.setattr(lib.Dumper, "dump_paths", broken)
    result = run_cli("dump", V2)
    assert result.exit_code == EXIT_INTERNAL
    assert "internal error: ZeroDivisionError: boom" in result.stderr and "Traceback" not in result.stderr


def test_every_cli_test_goes_through_main():
    """No test module runs the command line its own way: run_cli is the one helper (a test that needs Click itself
    says why on the line, with ``# Click-level:``)."""
    runner = "CliRunner" + "("
    found = [f"{path.name}:{n}" for path in sorted((ROOT / "tests").glob("test_*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if runner in line and "# Click-level:" not in line]
    assert found == []


def test_companion_text_is_the_renderers_the_library_yields_entries():
    from kdump.index.dump import CompanionDumper, CompanionOptions
    from kdump.read.offset_index import OffsetPosition
    from kdump.index.reports import IndexReports
    items = []
    index = CORPUS / "broker-written/consumer-offsets-v2/00000000000000000000.index"
    CompanionDumper(CompanionOptions(), IndexReports(), emit=items.append, error=lambda e: None,
                    missing=lambda p, m: None, note=lambda m: None).dump(str(index), "index")
    assert items and all(isinstance(i, OffsetPosition) for i in items)
    from kdump.read import checkpoints, snapshot, txn_index
    assert not hasattr(txn_index.AbortedTxn, "dump_line") and not hasattr(snapshot.ProducerEntry, "dump_line")
    assert not hasattr(checkpoints, "dump_lines")


# --- one CLI: shared options -------------------------------------------------------------------------------
def test_every_command_shows_the_shared_options_and_its_exit_codes():
    commands = every_command()
    assert {" ".join(words) for words, _c in commands} >= {
        "dump", "verify", "index check", "index dump", "index rebuild", "convert", "groups", "metadata", "txn-state", "txn", "stats", "salvage"}
    for words, _command in commands:
        result = run_cli(*words, "--help")
        assert result.exit_code == 0, words
        # text and json everywhere; dump adds records, verify junit, explain html
        assert re.search(r"--format \[text\|json(\|records|\|junit|\|html)?\]", result.output), words
        for flag in ("--no-color", "-v, --verbose", "-q, --quiet", "Exit codes:", "70"):
            assert flag in result.output, (words, flag)


def test_group_level_output_options():
    plain = run_cli("dump", "--no-color", "-q", V2)
    assert plain.exit_code == 0
    assert run_cli("--no-color", "-q", "dump", V2).stdout == plain.stdout
    assert run_cli("-v", "dump", "-q", V2).exit_code == EXIT_USAGE  # the group's -v and the command's -q clash


def test_quiet_leaves_out_notes_and_hints(tmp_path):
    part = tmp_path / "__consumer_offsets-3"
    shutil.copytree(CORPUS / "broker-written/consumer-offsets-v2", part, ignore=shutil.ignore_patterns("*.txt",
                                                                                                      "*.json"))
    loud = run_cli("dump", part)
    assert "--offsets-decoder" in loud.stderr  # the internal-topic hint
    assert run_cli("-q", "dump", part).stderr == ""


def test_options_that_do_not_apply_say_so():
    result = run_cli("dump", "--format", "json", "--compat", "scala", V2)
    assert result.exit_code == EXIT_USAGE and "--compat" in result.output and "--format json" in result.output
    assert run_cli("dump", "--format", "json", V2).exit_code == EXIT_OK  # the default compat is no choice
    result = run_cli("dump", "--verify-index-only", V2)
    assert result.exit_code == EXIT_USAGE and "--verify-index-only applies to .index and .timeindex" in result.output


def test_convert_split_size_has_its_own_name_and_the_old_one_still_works(tmp_path):
    src = CORPUS / "kafka-generated/v0-none/00000000000000000000.log"
    new = run_cli("convert", src, "--to-magic", "2", "--split-batch-bytes", "2000", "-o", f"{tmp_path}/a/")
    old = run_cli("convert", src, "--to-magic", "2", "--max-batch-bytes", "2000", "-o", f"{tmp_path}/b/")
    assert new.exit_code == old.exit_code == 0, new.output + old.output
    assert "--max-batch-bytes is deprecated here; use --split-batch-bytes" in old.stderr
    assert (tmp_path / "a/00000000000000000000.log").read_bytes() == (tmp_path / "b/00000000000000000000.log").read_bytes()
    assert "--max-batch-bytes" not in run_cli("convert", "--help").output


def test_to_time_beside_from_time(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    write_log(part, 0, [data_batch(i, 1, ts=T0 + 1000 * i) for i in range(10)])
    result = run_cli("dump", "--to-time", T0 + 3000, part)
    assert result.exit_code == 0
    assert [line.split()[1] for line in result.stdout.splitlines() if line.startswith("baseOffset")] == \
        ["0", "1", "2", "3"]
    both = run_cli("dump", "--from-time", T0 + 2000, "--to-time", T0 + 3000, part)
    assert [line.split()[1] for line in both.stdout.splitlines() if line.startswith("baseOffset")] == ["2", "3"]
    assert run_cli("dump", "--from-time", T0 + 3000, "--to-time", T0, part).exit_code == EXIT_USAGE


def test_version_says_which_path_is_in_use(monkeypatch):
    from kdump import _backend
    if _backend.BACKEND == "compiled":  # and names the modules setup.py builds, each of them loaded
        said = run_cli("--version").stdout
        assert "compiled fast path in use: " in said
        named = said.split("compiled fast path in use: ")[1].split(";")[0].split(", ")
        extensions = next(node.value for node in ast.parse((ROOT / "setup.py").read_text()).body
                          if isinstance(node, ast.Assign) and node.targets[0].id == "EXTENSIONS")
        assert sorted(named) == sorted(ast.literal_eval(extensions)) and all(m in sys.modules for m in named)
    else:  # not built, or KDUMP_PURE_PYTHON=1
        assert "pure-Python path in use" in run_cli("--version").stdout
    monkeypatch.setattr(_backend, "BACKEND", "python")
    assert "pure-Python path in use" in run_cli("--version").stdout


# --- exit codes that tell the truth ------------------------------------------------------------------------
def test_nothing_to_read_is_never_success(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "nosegs").mkdir()
    (tmp_path / "nosegs/meta.properties").write_text("version=1\n")
    for args in (("dump",), ("index", "dump"), ("index", "check"), ("index", "rebuild"), ("verify",)):
        for d in ("empty", "nosegs"):
            result = run_cli(*args, tmp_path / d)
            assert result.exit_code == EXIT_USAGE, (args, d, result.output)
    result = run_cli("dump", tmp_path / "empty")
    assert "nothing to dump" in result.stderr
    result = run_cli("dump", "/dev/null")
    assert result.exit_code == EXIT_USAGE and "a device, not a regular file" in result.stderr


def test_a_text_file_named_log_is_not_a_kafka_segment(tmp_path):
    text = tmp_path / "00000000000000000000.log"
    text.write_text("2024-05-01 12:00:00 INFO server started\n" * 3)
    result = run_cli("dump", text)
    assert result.exit_code == EXIT_DATA
    assert "at byte 0: not a Kafka log segment" in result.stderr and "starts with text" in result.stderr
    assert "invalid bytes" not in result.stdout  # not Kafka's "incomplete last batch" report


def test_dump_opens_each_segment_once(tmp_path, monkeypatch):
    """The not-a-Kafka-log check reads the first bytes through the segment reader that walks the file."""
    import builtins
    log = tmp_path / "00000000000000000000.log"
    write_log(tmp_path, 0, [data_batch(0, 3)])
    opened = []
    real_open = builtins.open

    def spy(file, *args, **kwargs):
        opened.append(os.fspath(file) if isinstance(file, str | os.PathLike) else file)
        return real_open(file, *args, **kwargs)
    monkeypatch.setattr(builtins, "open", spy)
    assert run_cli("dump", log).exit_code == EXIT_OK
    assert opened.count(str(log)) == 1


def test_a_kafka_07_segment_is_recognised(tmp_path):
    import struct
    message = b"\x00" + struct.pack(">I", 0) + b"hello"  # 0.7: size, magic 0, crc, payload; no offsets
    path = tmp_path / "00000000000000000000.kafka"
    path.write_bytes(struct.pack(">i", len(message)) + message)
    result = run_cli("dump", path)
    assert result.exit_code == EXIT_DATA and "pre-0.8 format, not supported" in result.stderr


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    for args in (("dump",), ("verify",), ("index", "check"), ("index", "rebuild"), ("convert", "--dry-run"),
                 ("convert", "--to-magic", "1", "-o", tmp_path / "out.log")):
        result = kdump(*args, fifo, timeout=30)
        assert result.returncode == EXIT_USAGE, (args, result.stderr)


def test_a_name_that_is_not_utf8_is_printed_escaped(tmp_path):
    part = tmp_path / "p-0"
    part.mkdir()
    shutil.copy(V2, part / "00000000000000000000.log")
    with open(os.path.join(os.fsencode(part), b"\xff\xfe.log"), "wb") as f:
        f.write(b"x" * 40)
    result = kdump("dump", part)
    assert result.returncode == EXIT_OK, result.stderr
    assert b"Ignoring unknown file " + os.fsencode(part) + b"/\\xff\\xfe.log" in result.stderr
    assert b"baseOffset: 6116" in result.stdout  # the whole directory was dumped


OFFSETS_V2 = CORPUS / "broker-written/consumer-offsets-v2"
TXN_STATE = CORPUS / "kafka-generated/internal-topics/__transaction_state-0"
KRAFT_LOG = CORPUS / "broker-written/kraft-metadata-log"


@pytest.fixture(scope="module")
def big_inputs(tmp_path_factory):
    """Inputs on which a command prints more than a pipe buffer (all but the replays of the corpus's internal
    topics, which print a page), and smaller ones for the slow writers (convert, salvage, index rebuild)."""
    root = tmp_path_factory.mktemp("big")
    segments = root / "big-0"
    for base in range(0, 4000, 10):
        write_log(segments, base, [data_batch(base, 10, ts=T0 + base)])
    indexed = root / "indexed-0"
    shutil.copytree(segments, indexed)
    for log in indexed.glob("*.log"):  # an empty .index and .timeindex beside each: two lines each in index dump
        log.with_suffix(".index").write_bytes(b"")
        log.with_suffix(".timeindex").write_bytes(b"")
    mid, small = root / "mid-0", root / "small-0"
    for part, n in ((mid, 130), (small, 20)):
        part.mkdir()
        for log in sorted(segments.glob("*.log"))[:n]:
            shutil.copy(log, part / log.name)
    log_dir = root / "logs"
    for p in range(300):  # stats: a line per partition
        write_log(log_dir / f"t-{p}", 0, [data_batch(0, 2)])
    txns = root / "txns-0"
    entries, off = [], 0
    for pid in range(1500):  # txn: a line per transaction
        entries += [data_batch(off, 1, pid=pid, epoch=0, seq=0, txn=True), marker(off + 1, pid, commit=pid % 2 == 0)]
        off += 2
    write_log(txns, 0, entries)
    return {"segments": segments, "indexed": indexed, "mid": mid, "small": small, "logs": log_dir, "txns": txns}


def every_command_case(name, big, out, whole_pipe: bool):
    """The arguments of one command run that prints a lot on standard output (``out``: a new output path;
    ``whole_pipe``: more than a pipe's buffer is needed)."""
    segments = big["segments"]
    return {"dump": ("dump", "--deep-iteration", V2), "dump-json": ("dump", "--format", "json", "--deep-iteration", V2),
            "verify": ("verify", "-v", segments), "verify-json": ("verify", "--format", "json", segments),
            "index-dump": ("index", "dump", big["indexed"]), "index-check": ("index", "check", "-v", segments),
            "index-rebuild": ("index", "rebuild", "-o", out, segments if whole_pipe else big["small"]),
            "convert-dry-run": ("convert", "--dry-run", segments),
            "convert": ("convert", "--to-magic", "1", "-o", out, big["mid"] if whole_pipe else big["small"]),
            "txn": ("txn", big["txns"]), "stats": ("stats", big["logs"]), "groups": ("groups", OFFSETS_V2),
            "txn-state": ("txn-state", TXN_STATE), "metadata": ("metadata", KRAFT_LOG),
            "salvage": ("salvage", big["small"], "-o", out), "help": ("--help",), "version": ("--version",)}[name]


EVERY = ["dump", "dump-json", "verify", "verify-json", "index-dump", "index-check", "index-rebuild", "convert-dry-run",
         "convert", "txn", "stats", "groups", "txn-state", "metadata", "salvage", "help", "version"]
# Whose whole output fits in a pipe's buffer here (a reader leaving after a few bytes fails no write).
FITS_A_PIPE = {"groups", "txn-state", "metadata", "salvage", "help", "version"}


@pytest.mark.parametrize("name", EVERY)
@pytest.mark.parametrize("when", ["after-a-few-bytes", "before-any-output"])
def test_head_ends_every_command_quietly_with_0(name, when, big_inputs, tmp_path):
    """`kdump ... | head -c 16`: the reader goes away after a few bytes (or before kdump writes anything): exit 0,
    nothing on stderr (no traceback, no "Exception ignored", no Click "Broken pipe" and exit 1)."""
    if when == "after-a-few-bytes" and name in FITS_A_PIPE:
        pytest.skip("the whole output fits in the pipe: no write fails")
    args = every_command_case(name, big_inputs, tmp_path / "out", when == "after-a-few-bytes")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    read, write = os.pipe()
    if when == "before-any-output":
        os.close(read)
    with subprocess.Popen([sys.executable, "-m", "kdump", *map(str, args)], stdout=write, stderr=subprocess.PIPE,
                          env=env) as p:
        os.close(write)
        if when == "after-a-few-bytes":
            first = os.read(read, 16)
            os.close(read)  # as `head -c 16` exits
            assert first, args
        err = p.stderr.read()
        code = p.wait(timeout=120)
    assert (code, err) == (0, b""), (args, code, err)


@pytest.mark.parametrize("args", [("dump", V2, "missing.log"), ("verify", "missing.log"), ("txn", "missing-0"),
                                  ("stats", "missing-0"), ("index", "check", "missing.log"), ("groups", "missing-0")])
def test_head_of_stdout_and_stderr_together_ends_quietly_with_0(args, tmp_path):
    """`kdump ... 2>&1 | head -c 0`: messages on stderr meet the closed pipe first; Click's own broken-pipe
    handling (exit 1) must not take them: exit 0, as for standard output."""
    read, write = os.pipe()
    os.close(read)
    result = subprocess.run([sys.executable, "-m", "kdump", *map(str, args)], stdout=write, stderr=write,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), cwd=tmp_path, timeout=120, check=False)
    os.close(write)
    assert result.returncode == 0, args


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("name", EVERY)
def test_a_full_output_is_named_and_exits_2(name, big_inputs, tmp_path):
    """`kdump ... > /dev/full`: exit 2, the message names standard output, never the input; no traceback."""
    args = every_command_case(name, big_inputs, tmp_path / "out", False)
    with open("/dev/full", "w") as full:
        result = kdump(*args, stdout=full)
    assert result.returncode == EXIT_USAGE, (args, result.stderr)
    assert result.stderr.decode() == "kdump: standard output: cannot write: No space left on device\n", \
        (args, result.stderr)


def test_a_failed_write_names_the_file_written(tmp_path, monkeypatch):
    import errno

    from kdump.write import atomic
    part = tmp_path / "w-0"
    part.mkdir()
    write_log(part, 0, [data_batch(0, 3)])
    out = tmp_path / "out"

    def full(self, **_):
        raise OSError(errno.ENOSPC, "No space left on device")  # as a full disk leaves it: no file name
    monkeypatch.setattr(atomic.AtomicFile, "prepare", full)  # what a one-segment and a batched commit both call
    result = run_cli("index", "rebuild", "-o", out, part)
    assert result.exit_code == EXIT_USAGE
    assert f"kdump: {out / '00000000000000000000.index'}: cannot write: " in result.stderr, result.stderr
    assert "cannot read" not in result.stderr


def test_an_unreadable_segment_is_named_as_read(tmp_path):
    from support.privileges import without_read_anything
    part = tmp_path / "r-0"
    part.mkdir()
    log = write_log(part, 0, [data_batch(0, 3)])
    write_log(part, 3, [data_batch(3, 3)])
    os.chmod(log, 0)
    with without_read_anything():  # as a user sees it, even when the suite runs as root
        result = run_cli("index", "rebuild", "-o", tmp_path / "out", part)
    os.chmod(log, 0o644)
    assert result.exit_code == EXIT_USAGE and f"kdump: {log}: cannot read: Permission denied" in result.stderr


# --- progress -------------------------------------------------------------------------------------------
def test_progress_on_a_terminal_for_long_work(monkeypatch, many_segments, tmp_path):
    from kdump.commands import progress
    shown = []

    class Spy(progress.Bar):
        def __enter__(self):
            shown.append(self.label)
            self.done = 0
            return self

        def advance(self, n):
            self.done += n

        def __exit__(self, *exc):
            shown.append(self.done)
    monkeypatch.setattr(progress, "Bar", Spy)
    monkeypatch.setattr(progress, "SHOW_AFTER_SECONDS", 0)
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: True)
    total = sum(p.stat().st_size for p in many_segments.glob("*.log"))
    for args, label in ((("dump", "--format", "json", many_segments), "dumping"),
                        (("index", "rebuild", "-o", tmp_path / "idx", many_segments), "rebuilding"),
                        (("index", "check", "--deep", many_segments), "checking"),
                        (("index", "check", "--deep", "-j", "2", many_segments.parent), "checking"),
                        (("index", "check", "--deep", many_segments / "00000000000000000010.log"), "checking"),
                        (("stats", many_segments), "counting"),
                        (("convert", "--to-magic", "1", "-o", tmp_path / "conv/", many_segments), "converting"),
                        (("verify", many_segments), "verifying")):
        shown.clear()
        assert run_cli(*args).exit_code in (0, 1), args  # (index check: no indexes yet is a finding)
        assert shown and shown[0] == label, args
        if label != "verifying":  # the bar reaches its total: every byte of log walked was reported
            assert shown[1] == total, (args, shown)
        shown.clear()
        run_cli("-q", *args[:1], *args[1:]) if label != "verifying" else run_cli("verify", "-q", many_segments)
        assert not shown  # never with --quiet
    monkeypatch.setattr(progress, "stderr_is_terminal", lambda: False)
    run_cli("dump", "--format", "json", many_segments)
    assert not shown  # never when stderr is piped


def test_no_deprecation_warnings_from_our_click_calls():
    result = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-m", "kdump", "dump", str(V2)],
                            capture_output=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=120, check=False)
    assert result.returncode == 0 and b"Warning" not in result.stderr, result.stderr
    assert "get_text_stream" not in "".join(p.read_text() for p in (ROOT / "kdump").rglob("*.py"))


def test_json_dump_of_a_directory_with_companion_entries_is_one_stream(tmp_path):
    part = tmp_path / "orders-0"
    part.mkdir()
    write_log(part, 0, [data_batch(0, 3)])
    run_cli("index", "rebuild", part)
    result = run_cli("dump", "--format", "json", "--companions", part)
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.exit_code == 0 and [o.get("kind") for o in objs][:1] == [None]
    assert {"type": "entry", "kind": "index", "empty": True} in [{k: v for k, v in o.items() if k != "path"} for o in objs]


@pytest.mark.parametrize("shell, marker", [("bash", "complete -o nosort -F _kdump_completion kdump"),
                                           ("zsh", "compdef _kdump_completion kdump"),
                                           ("fish", "complete --no-files --command kdump")])
def test_shell_completion_as_docs_cli_md_shows_it(shell, marker):
    """docs/cli.md: `eval "$(_KDUMP_COMPLETE=bash_source kdump)"` (and zsh, fish) installs completion; the script
    is Click's for the `kdump` program, and completing `kdump ver` offers verify."""
    documented = (ROOT / "docs" / "cli.md").read_text()
    assert f"_KDUMP_COMPLETE={shell}_source kdump" in documented
    script = run_cli(env={"_KDUMP_COMPLETE": f"{shell}_source"})
    assert script.exit_code == 0 and marker in script.stdout, script.stdout
    offered = run_cli(env={"_KDUMP_COMPLETE": "bash_complete", "COMP_WORDS": "kdump ver", "COMP_CWORD": "1"})
    assert offered.stdout.split() == ["plain,verify"]
