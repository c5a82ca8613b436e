"""Renderers: turn batches, records and reports into text (Kafka's DumpLogSegments lines, JSON Lines, rich).

:data:`RENDERERS` is the one place where an output format's name (``--format``) chooses how a command's output
is written. A command hands its output to ``RENDERERS[ui.format]`` in a shape that names no format: a
segment's batches (``batches``: a renderer the dump walk drives), findings reports (``findings``), a
document (``document``: a JSON-ready dict, and the command's own way of printing it for people), or results
as they come (``results``: convert's and index rebuild's). The methods and what they return are declared once,
in :mod:`kdump.render.protocol`. A new output format is one class with those four methods and one row of
:data:`RENDERERS`, and every command offers it.

The renderer modules are imported on first use: ``kdump --help`` and the short commands start without them
(rich alone is a third of a short run).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from kdump.render.protocol import BatchRenderer, JsonResults, ResultStream, TextResults


class TextFormat:
    """``--format text``: Kafka's DumpLogSegments text (rich colour on a terminal), short summaries for people."""

    # one object per record, keys and values included: offered by the commands that print records only
    per_record = False
    # findings only (JUnit XML): offered by the commands whose output is findings only
    findings_only = False
    # a page of fields beside their bytes (HTML): offered by the commands that explain bytes (explain); its
    # documents carry each entry's bytes
    page = False
    # for people: the options that shape text (--compat) apply; errors are on stderr only
    for_people = True

    @staticmethod
    def batches(out, opts, key_decoder, value_decoder, *, no_color: bool, header_decoder=None) -> BatchRenderer:
        """The renderer ``kdump.dump.Dumper`` drives (``opts``: :class:`kdump.dump.DumpOptions`)."""
        terminal = out.isatty()  # record bytes are shown escaped on a terminal, never raw (kdump.text.escape)
        if header_decoder is None and terminal and opts.print_data:  # a person reading: header values too
            from kdump.decode.payload import load_decoder
            header_decoder = load_decoder("string")
        from kdump.render.kafka_text import KafkaTextRenderer
        use_rich = terminal and not no_color and not os.environ.get("NO_COLOR")
        if use_rich:
            from kdump.render.rich_text import RichTextOut
            out = RichTextOut()
        return KafkaTextRenderer(out, print_data=opts.print_data, skip_record_metadata=opts.skip_record_metadata,
                                 key_decoder=key_decoder, value_decoder=value_decoder, compat=opts.compat,
                                 terminal=terminal, time_format=opts.time_format, header_decoder=header_decoder)

    @staticmethod
    def findings(out, reports, *, styled: bool, fail_on: str = "error", verbose: bool = False,
                 list_ok: bool = True, run=None) -> None:
        """A line per file and per finding code, coloured when ``styled`` (the totals count at every severity;
        ``fail_on`` decides each file's label, as it decides the exit code; ``run``, the run's outcome, is for the
        JSON document's run-level fields)."""
        from kdump.render.findings import PlainConsole, render_text
        console: Any
        if styled:
            from rich.console import Console
            console = Console(file=out, highlight=False, soft_wrap=True)
        else:  # piped, or --no-color: plain lines (and no rich to import)
            console = PlainConsole(out)
        render_text(reports, console, verbose=verbose, list_ok=list_ok, fail_on=fail_on)

    @staticmethod
    def document(out, doc: Any, text: Callable[[], None], *, time_format: str = "epoch",
                 ensure_ascii: bool = True, indent: int | None = 2) -> None:
        """``text()`` prints the document for people (it chooses its own time form and lines)."""
        text()

    @staticmethod
    def results(out, echo: Callable[[str], None], key: str = "results") -> ResultStream:
        """Each result's lines as it arrives, through ``echo`` (which escapes them on a terminal)."""
        return TextResults(echo)


class JsonFormat:
    """``--format json``: JSON Lines for batches, one JSON document for a report; timestamps stay epoch
    milliseconds, with the ``--time-format`` form beside them (:func:`kdump.text.times.add_formatted`)."""

    per_record = False
    findings_only = False
    page = False
    for_people = False

    @staticmethod
    def batches(out, opts, key_decoder, value_decoder, *, no_color: bool, header_decoder=None) -> BatchRenderer:
        from kdump.render.jsonl import JsonLinesRenderer
        return JsonLinesRenderer(out, print_data=opts.print_data, deep=opts.deep, terminal=out.isatty(),
                                 time_format=opts.time_format, header_decoder=header_decoder,
                                 key_decoder=key_decoder, value_decoder=value_decoder)

    @staticmethod
    def findings(out, reports, *, styled: bool, fail_on: str = "error", verbose: bool = False,
                 list_ok: bool = True, run=None) -> None:
        from kdump.render.findings import render_json
        render_json(reports, out, fail_on, run)

    @staticmethod
    def document(out, doc: Any, text: Callable[[], None], *, time_format: str = "epoch",
                 ensure_ascii: bool = True, indent: int | None = 2) -> None:
        """``doc`` (dicts and lists) written as JSON and a line break; ``ensure_ascii=False`` keeps the data's
        characters (a document that quotes record data), ``indent=None`` writes one line."""
        import json

        from kdump.text.times import add_formatted, json_formatter
        add_formatted(doc, json_formatter(time_format))  # (in place: the command's document is written once)
        out.write(json.dumps(doc, indent=indent, ensure_ascii=ensure_ascii) + "\n")

    @staticmethod
    def results(out, echo: Callable[[str], None], key: str = "results") -> ResultStream:
        """One JSON document at the end: ``{key: [each result], ...}``."""
        return JsonResults(out, key)


class RecordsFormat(JsonFormat):
    """``--format records``: JSON Lines, one object per record (kcat -J's shape), for the commands that print
    records (``dump``); the same JSON as ``--format json`` for everything else."""

    per_record = True

    @staticmethod
    def batches(out, opts, key_decoder, value_decoder, *, no_color: bool, header_decoder=None) -> BatchRenderer:
        from kdump.render.records import RecordsRenderer
        return RecordsRenderer(out, terminal=out.isatty(), time_format=opts.time_format,
                               header_decoder=header_decoder, key_decoder=key_decoder, value_decoder=value_decoder)


class JunitFormat(JsonFormat):
    """``--format junit``: findings as JUnit XML (one test case per file, findings as failures), which CI systems
    show as test reports; offered by ``verify`` (a command whose output is findings)."""

    findings_only = True

    @staticmethod
    def findings(out, reports, *, styled: bool, fail_on: str = "error", verbose: bool = False,
                 list_ok: bool = True, run=None) -> None:
        from kdump.render.findings import render_junit
        render_junit(reports, out, fail_on, run)


class HtmlFormat:
    """``--format html``: one self-contained page (no network reference), for an incident ticket: a document of
    field trees (``kdump explain``) as a hex pane beside the tree, a field and its bytes lit together under the
    pointer (:mod:`kdump.render.html`); findings as their text lines. Offered by the commands that explain bytes."""

    per_record = False
    findings_only = False
    page = True
    for_people = True  # (errors on stderr, as text's)

    @staticmethod
    def batches(out, opts, key_decoder, value_decoder, *, no_color: bool, header_decoder=None) -> BatchRenderer:
        # (a page has no end a batch stream could close, so no command that prints batches offers it: the
        # field page is explain's document; the commands offered formats by their kind, formats_for)
        raise NotImplementedError("the HTML page draws a document of fields, not a stream of batches")

    @staticmethod
    def results(out, echo: Callable[[str], None], key: str = "results") -> ResultStream:
        """The results' text lines, as one page at the end."""
        from kdump.render.html import LinesPage
        return LinesPage(out, f"kdump {key}")

    @staticmethod
    def findings(out, reports, *, styled: bool, fail_on: str = "error", verbose: bool = False,
                 list_ok: bool = True, run=None) -> None:
        import io

        from kdump.render.findings import PlainConsole, render_text
        from kdump.render.html import lines_page
        text = io.StringIO()
        render_text(reports, PlainConsole(text), verbose=verbose, list_ok=list_ok, fail_on=fail_on)
        out.write(lines_page("kdump findings", text.getvalue()))

    @staticmethod
    def document(out, doc: Any, text: Callable[[], None], *, time_format: str = "epoch",
                 ensure_ascii: bool = True, indent: int | None = 2) -> None:
        from kdump.render.html import document_page
        out.write(document_page(doc))


# ``--format`` name -> how that format writes each kind of output.
RENDERERS: dict[str, type[TextFormat] | type[JsonFormat] | type[HtmlFormat]] = {
    "text": TextFormat, "json": JsonFormat, "records": RecordsFormat, "junit": JunitFormat, "html": HtmlFormat}


def formats_for(kind: str) -> tuple[str, ...]:
    """The ``--format`` choices, read from :data:`RENDERERS` as it is now: ``kind`` "records" (a command that prints
    records: dump), "findings" (a command whose output is findings: verify), "page" (a command that explains
    bytes: explain, offered the page too) or "document" (every other)."""
    return tuple(name for name, f in RENDERERS.items()
                 if (kind == "records" or not f.per_record) and (kind == "findings" or not f.findings_only)
                 and (kind == "page" or not f.page))
