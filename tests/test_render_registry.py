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
from kdump.render import DOCUMENT_FORMATS, FINDINGS_FORMATS, FORMATS, PAGE_FORMATS, RENDERERS

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
            "FAIL a.log (log): 1 batches, 2 records, 3 bytes",
            "  error crc-mismatch at byte 0: the batch's CRC is wrong",
            "1 files checked, 1 with findings: 1 errors, 0 warnings"]


# Branches on the format name that do other work, not only choose how to write: dump's JSON stream carries the
# errors too; index rebuild and convert collect one JSON document while the text is printed file by file.
# ``text_only`` refuses a flag that only text honours.
# (dump's and text_only's ask the registry whether a format is JSON: kdump.render.is_json)
DIFFERENT_WORK = {("kdump/commands/index.py", "rebuild_command"),
                  ("kdump/commands/index.py", "_report_outcome"), ("kdump/commands/convert.py", "command"),
                  ("kdump/commands/convert.py", "on_result"), ("kdump/commands/convert.py", "_dry_run")}


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
    assert branches - DIFFERENT_WORK == set()
    assert DIFFERENT_WORK - branches == set()  # (a branch gone is one less to allow)


def test_the_branch_check_finds_what_it_looks_for(tmp_path):
    (tmp_path / "kdump" / "commands").mkdir(parents=True)
    sample = tmp_path / "kdump" / "commands" / "sample.py"
    sample.write_text('def command(ui, fmt):\n    if ui.format == "json":\n        pass\n'
                      '    def inner():\n        return "text" != fmt\n    return ui.other == "json"\n')
    assert _format_branches(sample, tmp_path) == {("kdump/commands/sample.py", "command"),
                                                  ("kdump/commands/sample.py", "inner")}
