"""Findings: what ``verify`` and ``index check`` report, in one shape, one cap and one format.

A :class:`Finding` has a stable machine-readable ``code`` (registered in :mod:`kdump.finding_codes` with its
severity and documented in docs/findings.md or docs/index.md; never renamed, so CI jobs can match on it), a
severity, the byte position and offsets it concerns, and a message for people. A :class:`FileReport` holds
the findings of one file with its counts; every checker fills it through a :class:`Findings` collector
(severity from the registry, at most :data:`MAX_PER_CODE` per code). :func:`finding_code` and
:func:`tail_finding_code` map reader errors and the reasons a walk stopped to codes. Renderers: a short human
summary (rich) and JSON (``--format json``). Exit codes are kdump's: 0 sound, 1 findings (errors or
warnings), 2 usage or I/O errors.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

from kdump.finding_codes import CODES, ERROR, INFO, SEVERITIES, WARNING

__all__ = ["ERROR", "WARNING", "INFO", "SEVERITIES", "CODES", "MAX_PER_CODE", "Finding", "FileReport", "Findings",
           "READER_CODES", "finding_code", "tail_finding_code", "exit_code", "render_json", "render_text",
           "PlainConsole"]

# Findings of one code listed per file; the rest are counted in one ``findings-capped`` finding (a hostile
# file could otherwise make millions). 100 keeps a report readable and still shows a pattern.
MAX_PER_CODE = 100


@dataclass
class Finding:
    code: str
    severity: str
    message: str
    position: int | None = None  # byte position in the file
    first_offset: int | None = None  # offsets concerned, when known
    last_offset: int | None = None
    length: int | None = None  # bytes concerned (e.g. a damaged range), when known

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass
class FileReport:
    path: str
    kind: str  # log, index, timeindex, txnindex, snapshot, checkpoint, leader-epoch-checkpoint, ...
    batches: int = 0
    records: int = 0
    bytes: int = 0
    findings: list[Finding] = field(default_factory=list)
    io_error: str | None = None

    def add(self, code: str, severity: str, message: str, **where) -> Finding:
        f = Finding(code, severity, message, **where)
        self.findings.append(f)
        return f

    @property
    def status(self) -> str:
        if self.io_error is not None:
            return "unreadable"
        if any(f.severity in (ERROR, WARNING) for f in self.findings):
            return "findings"
        return "ok"

    def to_dict(self) -> dict:
        d = {"path": self.path, "kind": self.kind, "status": self.status, "batches": self.batches,
             "records": self.records, "bytes": self.bytes, "findings": [f.to_dict() for f in self.findings]}
        if self.io_error is not None:
            d["ioError"] = self.io_error
        return d


class Findings:
    """Fills one :class:`FileReport`: the severity comes from the registry, and at most ``cap`` findings of
    a code are listed; :meth:`finish` adds one ``findings-capped`` finding per code that had more (how many,
    and the byte position of the first one not listed).

    ``severity`` may be given for the few codes whose severity the situation decides (``Code.also``);
    any other value gives the registered one. An unregistered code raises KeyError: every code must be in
    :mod:`kdump.finding_codes` (tests check the sources for that)."""

    def __init__(self, report: FileReport, cap: int = MAX_PER_CODE):
        self.report = report
        self.cap = cap
        self.counts: dict[str, int] = {}
        self.first_dropped: dict[str, int | None] = {}

    def add(self, code: str, message: str, *, severity: str | None = None, **where) -> None:
        registered = CODES[code]
        n = self.counts.get(code, 0) + 1
        self.counts[code] = n
        if n > self.cap:
            if n == self.cap + 1:
                self.first_dropped[code] = where.get("position")
            return
        if severity is None or severity not in (registered.severity, registered.also):
            severity = registered.severity
        self.report.add(code, severity, message, **where)

    def finish(self) -> FileReport:
        for code, n in self.counts.items():
            if n > self.cap:
                first = self.first_dropped.get(code)
                at = f", the first of them at byte {first}" if first is not None else ""
                self.report.add("findings-capped", CODES["findings-capped"].severity,
                                f"{n - self.cap} more {code} findings not listed ({n} in all{at})")
        return self.report


# Reader error codes (kdump.errors.FormatError.code) met while decoding a batch's records or a wrapper's inner
# messages that findings name otherwise; every other registered reader code is reported under its own name.
# (A framing error of a top-level entry, e.g. message-too-small, keeps its own name.)
READER_CODES = {
    "decompressed-too-large": "batch-too-large",
    "varint-truncated": "record-truncated",
    "magic-invalid": "inner-message-invalid",
    "message-too-small": "inner-message-invalid",
    "message-truncated": "inner-message-invalid",
}

# Why a walk over a segment stopped (kdump.segment.Tail.kind), as a finding; "end" and "limit" are no finding,
# "corrupt" carries the reader's code.
TAIL_CODES = {"short": "truncated-tail", "truncated": "truncated-tail", "zeros": "zero-padding"}


def finding_code(reader_code: str, default: str = "record-size-invalid", *, in_batch: bool = True) -> str:
    """The finding code for an error code of kdump's readers (``default`` if it has none); ``in_batch``:
    the error came from inside a batch (its records, a wrapper's inner messages), not from its framing."""
    code = READER_CODES.get(reader_code, reader_code) if in_batch else reader_code
    return code if code in CODES else default


def tail_finding_code(kind: str, reader_code: str = "") -> str | None:
    """The finding code for the reason a walk stopped (None: it reached the end, or a limit)."""
    if kind in ("end", "limit"):
        return None
    return TAIL_CODES.get(kind) or finding_code(reader_code, "damaged-range", in_batch=False)


def exit_code(reports: list[FileReport]) -> int:
    """0 when every file is sound, 1 when any has an error or warning finding, 2 when any is unreadable."""
    if any(r.io_error is not None for r in reports):
        return 2
    if any(r.status == "findings" for r in reports):
        return 1
    return 0


def render_json(reports: list[FileReport], out) -> None:
    """One JSON document: per file its status, counts and every finding."""
    doc = {"files": [r.to_dict() for r in reports],
           "status": {0: "ok", 1: "findings", 2: "error"}[exit_code(reports)]}
    out.write(json.dumps(doc, indent=2) + "\n")


class PlainConsole:
    """The part of a rich ``Console`` that :func:`render_text` uses, for output that is no terminal:
    plain lines, and no import of rich (which would be a third of the start-up of a short run)."""

    plain = True

    def __init__(self, file):
        self.file = file

    def print(self, text: str) -> None:
        self.file.write(text + "\n")


def render_text(reports: list[FileReport], console, *, verbose: bool = False, list_ok: bool = True) -> None:
    """A short summary for people: one line per file, then its findings (info only with ``verbose``).
    ``list_ok=False`` leaves out the line of each sound file without shown findings (a log directory
    has thousands), keeping the totals line. ``console``: a rich Console, or a :class:`PlainConsole`."""
    if getattr(console, "plain", False):
        def escape(text):
            return text

        def styled(style, text):
            return text
    else:
        from rich.markup import escape

        def styled(style, text):
            return f"[{style}]{text}[/]"
    style = {ERROR: "bold red", WARNING: "yellow", INFO: "dim"}
    for r in reports:
        if r.io_error is not None:
            console.print(f"{styled('bold red', 'UNREADABLE')} {escape(r.path)}: {escape(r.io_error)}")
            continue
        shown = [f for f in r.findings if verbose or f.severity != INFO]
        if not list_ok and r.status == "ok" and not shown:
            continue
        mark = styled("green", "OK") if r.status == "ok" else styled("bold red", "FAIL")
        counts = (f"{r.batches} batches, {r.records} records, " if r.kind in ("log", "checkpoint") else "")
        console.print(f"{mark} {escape(r.path)} ({r.kind}): {counts}{r.bytes} bytes")
        for f in shown:
            where = f" at byte {f.position}" if f.position is not None else ""
            offsets = ""
            if f.first_offset is not None:
                offsets = (f" offsets {f.first_offset}-{f.last_offset}" if f.last_offset not in (None, f.first_offset)
                           else f" offset {f.first_offset}")
            console.print(f"  {styled(style[f.severity], f.severity)} {f.code}{where}{offsets}: {escape(f.message)}")
    n_err = sum(1 for r in reports for f in r.findings if f.severity == ERROR)
    n_warn = sum(1 for r in reports for f in r.findings if f.severity == WARNING)
    bad = sum(1 for r in reports if r.status == "findings")
    unreadable = sum(1 for r in reports if r.io_error is not None)
    tail = f", {unreadable} unreadable" if unreadable else ""
    console.print(f"{len(reports)} files checked, {bad} with findings: {n_err} errors, {n_warn} warnings{tail}")
