"""Findings for people and for programs: the text summary (plain, or rich on a terminal) and the JSON
document of ``verify``, ``index check`` and ``spark verify``, from the reports of :mod:`kdump.findings`."""
from __future__ import annotations

import json
from dataclasses import replace

from kdump.findings import ERROR, INFO, WARNING, FileReport, Finding, Span, summary
from kdump.outcome import FAIL, OK, WARN, Outcome
from kdump.text.escape import escape as safe

__all__ = ["render_json", "render_text", "PlainConsole"]


def render_json(reports: list[FileReport], out, fail_on: str = ERROR, run: Outcome | None = None) -> None:
    """One JSON document: per file its status, label, counts and every finding (up to the cap), then the totals;
    the labels are the text's (:class:`kdump.outcome.Outcome`). ``run``: the run's own outcome, which also holds
    the problems said beside the reports (a directory named that held nothing): the document's status, label and
    exit code are then the command's."""
    totals = summary(reports, fail_on)
    outcome = Outcome(fail_on=fail_on)
    files = [{**r.to_dict(), "label": outcome.report(r)} for r in reports]
    whole = outcome if run is None else run
    totals["exitCode"] = whole.exit_code()
    doc = {"files": files, "status": {0: "ok", 1: "findings", 2: "error"}[totals["exitCode"]],
           "label": whole.run_label(), "summary": totals}
    out.write(json.dumps(doc, indent=2) + "\n")


class PlainConsole:
    """The part of a rich ``Console`` that :func:`render_text` uses, for output that is no terminal:
    plain lines, and no import of rich (which would be a third of the start-up of a short run)."""

    plain = True

    def __init__(self, file):
        self.file = file

    def print(self, text: str) -> None:
        self.file.write(text + "\n")


def _grouped(report: FileReport, findings: list[Finding]) -> list[tuple[Finding, int, Span]]:
    """(first finding, how many in all, where they all lie) per code and severity, in the order they first
    appear; a code's findings beyond the cap count in its first group, and their positions and offsets widen its
    span (the range a summary line prints is of every finding it counts, not of the listed ones only)."""
    groups: dict[tuple[str, str], list] = {}
    for f in findings:
        g = groups.get((f.code, f.severity))
        if g is None:
            first_of_code = all(c != f.code for c, _ in groups)
            unlisted = report.unlisted.get(f.code, 0) if first_of_code else 0
            span = replace(report.unlisted_spans.get(f.code, Span())) if unlisted else Span()
            g = groups[(f.code, f.severity)] = [f, 1 + unlisted, span]
        else:
            g[1] += 1
        g[2].add(f.position, f.first_offset, f.last_offset)
    return [(first, n, span) for first, n, span in groups.values()]


def _where(f: Finding) -> str:
    """`` at byte P offsets A-B`` for one finding."""
    where = "" if f.position is None else f" at byte {f.position}"
    return where + _offsets(f.first_offset, f.last_offset)


def _span_where(span: Span) -> str:
    """`` at bytes P-Q offsets A-B`` for a group of findings."""
    low, high = span.min_position, span.max_position
    if low is None:
        where = ""
    elif high is not None and high != low:
        where = f" at bytes {low}-{high}"
    else:
        where = f" at byte {low}"
    return where + _offsets(span.min_offset, span.max_offset)


def _offsets(low: int | None, high: int | None) -> str:
    if low is None:
        return ""
    return f" offsets {low}-{high}" if high not in (None, low) else f" offset {low}"


def render_text(reports: list[FileReport], console, *, verbose: bool = False, list_ok: bool = True,
                fail_on: str = ERROR) -> None:
    """A short summary for people: one line per file, then its findings (info only with ``verbose``), one
    line per code: several findings of one code in one file are one line with their count (the first one's
    message, the span of positions and offsets). ``list_ok=False`` leaves out the line of each sound file
    without shown findings (a log directory has thousands), keeping the totals line. The totals count every
    finding, listed or capped. ``console``: a rich Console, or a :class:`PlainConsole`. Each file's label
    (OK, WARN, FAIL; UNREADABLE) is the one outcome policy's at ``fail_on``, so it agrees with the exit code."""
    # paths and messages quote the data: never raw (``safe``: kdump.text.escape)
    if getattr(console, "plain", False):
        def escape(text):
            return safe(text)

        def styled(style, text):
            return text
    else:
        from rich.markup import escape as markup_escape

        def escape(text):
            return markup_escape(safe(text))

        def styled(style, text):
            return f"[{style}]{text}[/]"
    style = {ERROR: "bold red", WARNING: "yellow", INFO: "dim"}
    label_style = {OK: "green", WARN: "yellow", FAIL: "bold red"}
    outcome = Outcome(fail_on=fail_on)  # each file's label, as the exit code sees it
    for r in reports:
        mark = outcome.report(r)
        if r.io_error is not None:
            console.print(f"{styled('bold red', mark)} {escape(r.path)}: {escape(r.io_error)}")
            continue
        shown = [f for f in r.findings if (verbose or f.severity != INFO) and f.code != "findings-capped"]
        if not list_ok and r.status == "ok" and not shown:
            continue
        mark = styled(label_style[mark], mark)
        counts = (f"{r.batches} batches, {r.records} records, " if r.kind in ("log", "checkpoint") else "")
        console.print(f"{mark} {escape(r.path)} ({r.kind}): {counts}{r.bytes} bytes")
        for first, n, span in _grouped(r, shown):
            sev = styled(style[first.severity], first.severity)
            if n == 1:
                console.print(f"  {sev} {first.code}{_where(first)}: {escape(first.message)}")
            else:
                console.print(f"  {sev} {first.code} x{n}{_span_where(span)}: {escape(first.message)} "
                              f"(the first of {n})")
    totals = summary(reports)
    tail = f", {totals['unreadable']} unreadable" if totals["unreadable"] else ""
    console.print(f"{totals['files']} files checked, {totals['filesWithFindings']} with findings: "
                  f"{totals['errors']} errors, {totals['warnings']} warnings{tail}")
