"""Findings for people and for programs: the text summary (plain, or rich on a terminal) and the JSON
document of ``verify``, ``index check`` and ``spark verify``, from the reports of :mod:`kdump.report.findings`."""
from __future__ import annotations

import json
from dataclasses import replace

from kdump.render.words import count
from kdump.report.findings import ERROR, INFO, WARNING, FileReport, Finding, Span, summary
from kdump.report.outcome import FAIL, OK, WARN, Outcome
from kdump.text.escape import escape as safe

__all__ = ["render_json", "render_text", "PlainConsole"]


def render_json(reports: list[FileReport], out, fail_on: str = ERROR, run: Outcome | None = None) -> None:
    """One JSON document: per file its status, label, counts and every finding (up to the cap), then the totals;
    the labels are the text's (:class:`kdump.report.outcome.Outcome`). ``run``: the run's own outcome, which also holds
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
        counts = (f"{count(r.batches, 'batch')}, {count(r.records, 'record')}, " if r.kind in ("log", "checkpoint")
                  else "")
        console.print(f"{mark} {escape(r.path)} ({r.kind}): {counts}{count(r.bytes, 'byte')}")
        for first, n, span in _grouped(r, shown):
            sev = styled(style[first.severity], first.severity)
            if n == 1:
                console.print(f"  {sev} {first.code}{_where(first)}: {escape(first.message)}")
            else:
                console.print(f"  {sev} {first.code} x{n}{_span_where(span)}: {escape(first.message)} "
                              f"(the first of {n})")
    totals = summary(reports)
    tail = f", {totals['unreadable']} unreadable" if totals["unreadable"] else ""
    console.print(f"{count(totals['files'], 'file')} checked, {totals['filesWithFindings']} with findings: "
                  f"{count(totals['errors'], 'error')}, {count(totals['warnings'], 'warning')}{tail}")


def render_junit(reports: list[FileReport], out, fail_on: str = ERROR, run: Outcome | None = None,
                 suite: str = "kdump verify") -> None:
    """JUnit XML, what CI systems show as test reports: one ``testcase`` per file (``classname`` its kind, ``name``
    its path), a ``failure`` holding its findings where the file fails the run at ``fail_on`` (its label is
    ``FAIL``), an ``error`` where it could not be read, its other findings in ``system-out`` (``run``: as for
    :func:`render_json`; the exit code is the command's). Text that quotes the data is escaped
    (:func:`kdump.text.escape.escape`): XML cannot hold most control characters."""
    import xml.etree.ElementTree as ET

    def text(s: str) -> str:
        return safe(s, keep_tab=False)

    outcome = Outcome(fail_on=fail_on)
    suite_el = ET.Element("testsuite", name=suite)
    failures = errors = 0
    for r in reports:
        case = ET.SubElement(suite_el, "testcase", classname=f"kdump.{r.kind}", name=text(r.path))
        lines = [f"{f.severity} {f.code}" + (f" at byte {f.position}" if f.position is not None else "")
                 + f": {text(f.message)}" for f in r.findings]
        label = outcome.report(r)
        if r.io_error is not None:
            errors += 1
            ET.SubElement(case, "error", type="cannot-read", message=text(r.io_error)).text = text(r.io_error)
        elif label == "FAIL":
            failures += 1
            first = next((f for f in r.findings if f.severity == ERROR), r.findings[0] if r.findings else None)
            failure = ET.SubElement(case, "failure", type=first.code if first else "findings",
                                    message=count(len(r.findings), "finding"))
            failure.text = "\n".join(lines)
        elif lines:
            ET.SubElement(case, "system-out").text = "\n".join(lines)
    tests = len(suite_el)
    for name, value in (("tests", tests), ("failures", failures), ("errors", errors), ("skipped", 0)):
        suite_el.set(name, str(value))
    root = ET.Element("testsuites", name=suite, tests=str(tests), failures=str(failures), errors=str(errors))
    root.append(suite_el)
    ET.indent(root)
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n")
