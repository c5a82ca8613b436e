"""One registry of output formats (``kdump.render.RENDERERS``): every ``--format`` choice is a format of the
registry, every format writes every kind of output, and no command chooses a renderer by comparing the name."""
from __future__ import annotations

import ast
import inspect
import io
import json
from pathlib import Path

import click
import pytest

from kdump.cli import COMMANDS, cli
from kdump.report.findings import ERROR, FileReport, Findings
from kdump.render import RENDERERS, formats_for

# the --format choices of each kind of command, as the registry gives them
FORMATS = formats_for("records")
FINDINGS_FORMATS = formats_for("findings")
DOCUMENT_FORMATS = formats_for("document")
PAGE_FORMATS = formats_for("page")

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("batches", "findings", "document")


def test_every_format_writes_every_kind_of_output_with_one_signature():
    text = RENDERERS["text"]
    for name, fmt in RENDERERS.items():
        for kind in KINDS:
            assert inspect.signature(getattr(fmt, kind)) == inspect.signature(getattr(text, kind)), (name, kind)
    assert FORMATS[0] == "text"  # the default of --format


def _commands(group: click.Group, ctx: click.Context):
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        yield command
        if isinstance(command, click.Group):
            yield from _commands(command, ctx)


def test_every_format_option_offers_the_registry():
    with click.Context(cli) as ctx:
        offered = {(command.callback.__module__, command.name): option.type.choices
                   for command in _commands(cli, ctx) for option in command.params
                   if isinstance(option, click.Option) and "--format" in option.opts}
    # groups: their subcommands
    assert {name for name, _, _ in COMMANDS} - {"index", "spark"} <= {name for _, name in offered}
    # the per-record format is offered where records are printed (dump), JUnit where the output is findings
    # (verify), the HTML page where bytes are explained (explain), every other format everywhere
    special = {("kdump.commands.dump", "dump"): FORMATS, ("kdump.commands.verify", "verify"): FINDINGS_FORMATS,
               ("kdump.commands.explain", "explain"): PAGE_FORMATS}
    assert {key: tuple(choices) for key, choices in offered.items()} == {
        key: special.get(key, DOCUMENT_FORMATS) for key in offered}
    assert set(FORMATS) - set(DOCUMENT_FORMATS) == {"records"}
    assert set(FINDINGS_FORMATS) - set(DOCUMENT_FORMATS) == {"junit"}
    assert set(PAGE_FORMATS) - set(DOCUMENT_FORMATS) == {"html"}


def test_json_document_keeps_epoch_ms_and_adds_the_chosen_form():
    out = io.StringIO()
    shown = []
    RENDERERS["json"].document(out, {"maxTimestamp": 1_700_000_000_000, "name": "caf\u00e9"}, lambda: shown.append(1),
                               time_format="iso")
    assert shown == []  # the text is for people only
    assert out.getvalue().endswith("}\n") and "\\u00e9" in out.getvalue()  # ASCII unless asked
    assert json.loads(out.getvalue()) == {"maxTimestamp": 1_700_000_000_000, "name": "caf\u00e9",
                                          "maxTimestampIso": "2023-11-14T22:13:20.000Z"}
    out = io.StringIO()
    RENDERERS["json"].document(out, {"name": "caf\u00e9", "n": [1]}, lambda: None, ensure_ascii=False, indent=None)
    assert out.getvalue() == '{"name": "caf\u00e9", "n": [1]}\n'


def test_html_document_is_a_page_of_its_fields_or_its_json():
    out = io.StringIO()
    RENDERERS["html"].document(out, {"name": "<b>", "n": [1]}, lambda: out.write("text\n"))
    page = out.getvalue()
    assert page.startswith("<!DOCTYPE html>") and "text\n" not in page
    assert "&quot;name&quot;: &quot;&lt;b&gt;&quot;" in page
    out = io.StringIO()
    entry = {"name": "entry", "kind": "offset index entry", "start": 8, "length": 8, "value": 1,
             "bytes": "0000000100000064",
             "children": [{"name": "relativeOffset", "start": 8, "length": 4, "value": 1, "kind": "int32"},
                          {"name": "position", "start": 12, "length": 4, "value": 100, "kind": "int32"}]}
    RENDERERS["html"].document(out, {"path": "x.index", "fileSize": 16, "entries": [entry], "stop": None}, lambda: None)
    page = out.getvalue()
    assert page.count('class="f k-int"') == 2 and page.count("<i class=\"k-int\"") == 8
    assert '<span class="pos">         8</span>' in page  # the pane's rows start at the entry's position


def test_text_document_is_the_commands_own_lines():
    out = io.StringIO()
    RENDERERS["text"].document(out, {"maxTimestamp": 0}, lambda: out.write("mine\n"), time_format="iso")
    assert out.getvalue() == "mine\n"


@pytest.mark.parametrize("fmt", RENDERERS)
def test_findings_in_each_format(fmt):
    report = FileReport("a.log", "log", batches=1, records=2, bytes=3)
    Findings(report).add("crc-mismatch", "the batch's CRC is wrong", position=0)
    out = io.StringIO()
    RENDERERS[fmt].findings(out, [report], styled=False, fail_on=ERROR)
    if fmt == "junit":
        import xml.etree.ElementTree as ET
        (case,) = ET.fromstring(out.getvalue()).iter("testcase")
        assert case.get("name") == "a.log" and "crc-mismatch at byte 0" in case.find("failure").text
    elif fmt == "html":  # the text lines, escaped, in a page
        page = out.getvalue()
        assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
        assert "error crc-mismatch at byte 0: the batch&#x27;s CRC is wrong" in page
    elif fmt != "text":  # records: a report is the JSON document
        doc = json.loads(out.getvalue())
        assert doc["status"] == "findings" and doc["summary"]["exitCode"] == 1
        assert [(f["code"], f["position"]) for f in doc["files"][0]["findings"]] == [("crc-mismatch", 0)]
    else:
        assert out.getvalue().splitlines() == [
            "FAIL a.log (log): 1 batch, 2 records, 3 bytes",
            "  error crc-mismatch at byte 0: the batch's CRC is wrong",
            "1 file checked, 1 with findings: 1 error, 0 warnings"]


def _format_branches(path: Path, root: Path = ROOT) -> set[tuple[str, str]]:
    """(file, function) of each comparison of a format name with a literal (``ui.format == "json"``)."""
    found = set()
    rel = path.relative_to(root).as_posix()

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) else function
            if isinstance(child, ast.Compare) and any(isinstance(c, ast.Constant) and c.value in FORMATS
                                                      for c in [child.left, *child.comparators]):
                sides = [child.left, *child.comparators]
                if any((isinstance(s, ast.Attribute) and s.attr == "format") or (isinstance(s, ast.Name)
                       and s.id == "fmt") for s in sides):
                    found.add((rel, function))
            visit(child, name)
    visit(ast.parse(path.read_text()), "<module>")
    return found


def test_commands_choose_renderers_through_the_registry():
    branches = set().union(*(_format_branches(p) for p in sorted((ROOT / "kdump" / "commands").glob("*.py"))))
    assert branches == set()  # none allowed: a format's own work is its renderer's (kdump.render.protocol)


def test_the_branch_check_finds_what_it_looks_for(tmp_path):
    (tmp_path / "kdump" / "commands").mkdir(parents=True)
    sample = tmp_path / "kdump" / "commands" / "sample.py"
    sample.write_text('def command(ui, fmt):\n    if ui.format == "json":\n        pass\n'
                      '    def inner():\n        return "text" != fmt\n    return ui.other == "json"\n')
    assert _format_branches(sample, tmp_path) == {("kdump/commands/sample.py", "command"),
                                                  ("kdump/commands/sample.py", "inner")}


# --- the one renderer protocol (kdump.render.protocol) ------------------------------------------------------
def test_every_format_implements_the_protocol():
    from kdump.dump import DumpOptions
    from kdump.render.protocol import BatchRenderer, OutputFormat, ResultStream

    def members(protocol):
        return {name for name in vars(protocol) if not name.startswith("_")} | set(
            getattr(protocol, "__annotations__", {}))
    for name, fmt in RENDERERS.items():
        assert members(OutputFormat) <= set(dir(fmt)), name
        for method in ("batches", "findings", "document", "results"):
            assert inspect.signature(getattr(fmt, method)).parameters.keys() == inspect.signature(
                getattr(OutputFormat, method)).parameters.keys(), (name, method)
        stream = fmt.results(io.StringIO(), lambda line: None)
        assert members(ResultStream) <= set(dir(stream)), name
        if fmt.page:  # a page is offered by explain only (formats_for("page")): no batch stream, which has no end
            assert name not in formats_for("records"), name
            continue
        renderer = fmt.batches(io.StringIO(), DumpOptions(), None, None, no_color=True)
        for method in members(BatchRenderer) - {"out"}:
            assert inspect.signature(getattr(type(renderer), method)).parameters.keys() == inspect.signature(
                getattr(BatchRenderer, method)).parameters.keys(), (name, method)
        assert renderer.out is not None


def test_the_page_format_writes_results_as_one_page():
    out = io.StringIO()
    stream = RENDERERS["html"].results(out, lambda line: None)
    stream.result({"path": "a"}, ["a.log: 1 batch <ok>"])
    assert out.getvalue() == ""  # nothing until the end: one page
    stream.end({}, ["done"])
    page = out.getvalue()
    assert page.startswith("<!DOCTYPE html>") and "a.log: 1 batch &lt;ok&gt;\ndone" in page


def test_the_text_renderer_takes_errors_and_writes_none():
    """Errors are said on stderr for people: Kafka's text stays Kafka's (a dump's JSON carries them instead)."""
    from kdump.dump import DumpOptions
    from kdump.errors import FormatError
    out = io.StringIO()
    renderer = RENDERERS["text"].batches(out, DumpOptions(), None, None, no_color=True)
    renderer.error("a.log", FormatError("crc-mismatch", "bad", position=3))
    renderer.io_error("a.log", "cannot read: gone")
    assert out.getvalue() == ""
    out = io.StringIO()
    renderer = RENDERERS["json"].batches(out, DumpOptions(), None, None, no_color=True)
    renderer.error("a.log", FormatError("crc-mismatch", "bad", position=3))
    assert json.loads(out.getvalue())["code"] == "crc-mismatch"


def test_a_progress_bar_wraps_the_renderer_without_patching_it():
    from kdump.dump import Dumper, DumpOptions
    from kdump.render.protocol import CountingRenderer
    log = CORPUS_LOG
    out = io.StringIO()
    inner = RENDERERS["text"].batches(out, DumpOptions(), None, None, no_color=True)
    counted = []
    Dumper(DumpOptions(), CountingRenderer(inner, counted.append)).dump_paths([str(log)])
    assert "batch" not in vars(inner)  # the renderer is the renderer it was
    assert counted == [int(size) for _, size in _kafka_batches(log)]  # each batch's size, as Kafka's tool says it
    assert out.getvalue().splitlines()[2:] == log.with_name(log.name + ".dumplog-shallow.txt").read_text(
        ).splitlines()[2:]


CORPUS_LOG = ROOT / "fixtures/corpus/kafka-generated/v1-gzip-createtime/00000000000000000000.log"


def _kafka_batches(log: Path) -> list[tuple[str, str]]:
    """(position, size) of each batch, from Kafka's own DumpLogSegments text of ``log`` (the corpus)."""
    import re
    text = log.with_name(log.name + ".dumplog-shallow.txt").read_text()
    return re.findall(r"position: (\d+) .*?size: (\d+)", text)


class _PositionsRenderer:
    """A test-only batch renderer: each batch's position and size, each error's code."""

    def __init__(self, out):
        self.out = out

    def begin_file(self, display_path, header):
        self.out.write(f"file {Path(display_path).name}\n")

    def companion(self, item):
        pass

    def trailing(self, file_name, tail):
        self.out.write(f"tail {tail.length}\n")

    def batch(self, batch, records=None, decoded=None):
        self.out.write(f"{batch.position} {batch.size}\n")

    def legacy_run(self, run, deep):
        return False

    open_batch = batch

    def more_records(self, batch, records, decoded=None):
        pass

    def close_batch(self, batch):
        pass

    def error(self, path, err):
        self.out.write(f"error {err.code}\n")

    def io_error(self, path, message):
        self.out.write(f"io-error {message}\n")

    def errors_to(self, listener):
        pass


class _Results:
    def __init__(self, out, key):
        self.out, self.key = out, key

    def result(self, doc, lines):
        self.out.write(f"{self.key} {Path(doc['path']).name}\n")

    def end(self, doc, lines=()):
        self.out.write(f"end {sorted(doc)}\n")


class PositionsFormat:
    """A new output format: one class (and one registry row, added by the test)."""

    per_record = False
    findings_only = False
    for_people = False
    page = False

    @staticmethod
    def batches(out, opts, key_decoder, value_decoder, *, no_color, header_decoder=None):
        return _PositionsRenderer(out)

    @staticmethod
    def findings(out, reports, *, styled, fail_on="error", verbose=False, list_ok=True, run=None):
        for r in reports:
            out.write(f"{Path(r.path).name} {r.batches} {[f.code for f in r.findings]}\n")

    @staticmethod
    def document(out, doc, text, *, time_format="epoch", ensure_ascii=True, indent=2):
        out.write(f"document {sorted(doc)}\n")

    @staticmethod
    def results(out, echo, key="results"):
        return _Results(out, key)


def test_a_new_format_is_one_class_and_one_registry_row(monkeypatch, tmp_path):
    from support.cli import run_cli
    monkeypatch.setitem(RENDERERS, "positions", PositionsFormat)
    log = str(CORPUS_LOG)
    kafka = _kafka_batches(CORPUS_LOG)
    shown = run_cli("dump", "--format", "positions", log)
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.splitlines() == ["file 00000000000000000000.log", *(f"{p} {s}" for p, s in kafka)]
    checked = run_cli("verify", "--format", "positions", log)
    assert checked.stdout == f"00000000000000000000.log {len(kafka)} []\n"
    measured = run_cli("convert", "--dry-run", "--format", "positions", log)
    assert measured.stdout == "dryRun 00000000000000000000.log\nend []\n"
    converted = run_cli("convert", "--to-magic", "2", "-o", str(tmp_path) + "/", "--format", "positions", log)
    assert converted.stdout == "results 00000000000000000000.log\nend ['errors']\n", converted.output
    rebuilt = run_cli("index", "rebuild", "-o", str(tmp_path / "ix"), "--format", "positions", log)
    assert rebuilt.stdout == "results 00000000000000000000.log\nend ['errors']\n", rebuilt.output
    counted = run_cli("txn", "--format", "positions", log)
    assert counted.stdout == "document ['errors', 'hanging', 'partitions', 'timeoutMs']\n"
    # and its name is refused where its kind of output is not offered: no such format without its row
    monkeypatch.delitem(RENDERERS, "positions")
    assert run_cli("dump", "--format", "positions", log).exit_code == 2
