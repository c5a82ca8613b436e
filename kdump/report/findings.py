"""Findings: what ``verify`` and ``index check`` report, in one shape, one cap and one format.

A :class:`Finding` has a stable machine-readable ``code`` (registered in :mod:`kdump.report.codes` with its
severity and documented in docs/findings.md or docs/index.md; never renamed, so CI jobs can match on it), a
severity, the byte position and offsets it concerns, and a message for people. A :class:`FileReport` holds
the findings of one file with its counts; every checker fills it through a :class:`Findings` collector
(severity from the registry, at most :data:`MAX_PER_CODE` per code). :func:`finding_code` and
:func:`tail_finding_code` map reader errors and the reasons a walk stopped to codes. The renderers (a short
human summary, JSON for ``--format json``) are in :mod:`kdump.render.findings`, above the checkers that fill
reports here. Exit codes are the one outcome policy's (:mod:`kdump.report.outcome`): 0 sound, 1 findings at or above the
``--fail-on`` severity (errors by default; ``--fail-on warning`` as linters and fsck offer it) or a file unreadable
among readable ones, 2 a path refused or nothing read. Counts (per file, per
severity and per code) are those of every finding, listed or capped.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kdump.errors import EXTENT_JSON, error_object
from kdump.report.codes import CODES, ERROR, INFO, SEVERITIES, WARNING
from kdump.report.outcome import Outcome

__all__ = ["ERROR", "WARNING", "INFO", "SEVERITIES", "CODES", "MAX_PER_CODE", "Finding", "FileReport", "Findings",
           "READER_CODES", "finding_code", "tail_finding_code", "exit_code", "FAIL_ON", "summary", "Problem"]

# ``--fail-on``: the lowest severity that makes ``verify`` and ``index check`` exit 1.
FAIL_ON = (ERROR, WARNING)

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
        """The JSON object: camelCase names, as every JSON kdump writes (``firstOffset``...); absent fields left out."""
        return {_JSON_NAMES.get(k, k): v for k, v in asdict(self).items() if v is not None}


# (``length``: the bytes concerned, ``bytes`` as every byte count in kdump's JSON)
_JSON_NAMES = EXTENT_JSON


@dataclass
class Span:
    """The byte positions and offsets some findings lie in (``None`` where none of them had one)."""

    min_position: int | None = None
    max_position: int | None = None
    min_offset: int | None = None
    max_offset: int | None = None

    def add(self, position: int | None, first_offset: int | None, last_offset: int | None) -> None:
        self.min_position, self.max_position = _widened(self.min_position, self.max_position, position, position)
        low = first_offset if first_offset is not None else last_offset
        high = last_offset if last_offset is not None else first_offset
        self.min_offset, self.max_offset = _widened(self.min_offset, self.max_offset, low, high)


def _widened(low: int | None, high: int | None, new_low: int | None, new_high: int | None) -> tuple:
    if new_low is None or new_high is None:
        return low, high
    return (new_low if low is None else min(low, new_low)), (new_high if high is None else max(high, new_high))


@dataclass
class FileReport:
    path: str
    kind: str  # log, index, timeindex, txnindex, snapshot, checkpoint, leader-epoch-checkpoint, ...
    batches: int = 0
    records: int = 0
    bytes: int = 0
    findings: list[Finding] = field(default_factory=list)
    io_error: str | None = None
    # With io_error: the path was refused before reading (missing, a FIFO, a symlink loop) or held nothing to
    # read (an empty directory): exit 2 whatever else was read (kdump.report.outcome); else it could not be read.
    refused: bool = False
    # Findings beyond the cap, not listed: how many of each code, and of each severity (Findings fills them).
    unlisted: dict[str, int] = field(default_factory=dict)
    unlisted_severities: dict[str, int] = field(default_factory=dict)
    # Where the unlisted findings of each code lie, so that a summary's range covers them all (Findings fills it).
    unlisted_spans: dict[str, Span] = field(default_factory=dict)

    def add(self, code: str, severity: str, message: str, **where) -> Finding:
        f = Finding(code, severity, message, **where)
        self.findings.append(f)
        return f

    def counts(self) -> dict[str, int]:
        """Findings of each severity, listed or not (the ``findings-capped`` notes themselves not counted)."""
        out = {sev: self.unlisted_severities.get(sev, 0) for sev in SEVERITIES}
        for f in self.findings:
            if f.code != "findings-capped":
                out[f.severity] += 1
        return out

    def code_counts(self) -> dict[str, int]:
        """Findings of each code, listed or not."""
        out: dict[str, int] = {}
        for f in self.findings:
            if f.code != "findings-capped":
                out[f.code] = out.get(f.code, 0) + 1
        for code, n in self.unlisted.items():
            out[code] = out.get(code, 0) + n
        return out

    @property
    def status(self) -> str:
        if self.io_error is not None:
            return "unreadable"
        if any(f.severity in (ERROR, WARNING) for f in self.findings):
            return "findings"
        return "ok"

    def fails(self, fail_on: str = ERROR) -> bool:
        """Whether this file makes the run fail at ``--fail-on`` (an unreadable file always does)."""
        if self.io_error is not None:
            return True
        counts = self.counts()
        return counts[ERROR] > 0 or (fail_on == WARNING and counts[WARNING] > 0)

    def to_dict(self) -> dict:
        counts = self.counts()
        d = {"path": self.path, "kind": self.kind, "status": self.status, "batches": self.batches,
             "records": self.records, "bytes": self.bytes, "errors": counts[ERROR], "warnings": counts[WARNING],
             "infos": counts[INFO], "codes": self.code_counts(), "findings": [f.to_dict() for f in self.findings]}
        if self.io_error is not None:  # an error object, as every JSON of kdump carries one
            d["error"] = error_object(self.path, "cannot-read", self.io_error)
        return d


class Findings:
    """Fills one :class:`FileReport`: the severity comes from the registry, and at most ``cap`` findings of
    a code are listed; :meth:`finish` adds one ``findings-capped`` finding per code that had more (how many,
    and the byte position of the first one not listed).

    ``severity`` may be given for the few codes whose severity the situation decides (``Code.also``);
    any other value gives the registered one. An unregistered code raises KeyError: every code must be in
    :mod:`kdump.report.codes` (tests check the sources for that)."""

    def __init__(self, report: FileReport, cap: int = MAX_PER_CODE):
        self.report = report
        self.cap = cap
        self.counts: dict[str, int] = {}
        self.first_dropped: dict[str, int | None] = {}

    def add(self, code: str, message: str, *, severity: str | None = None, **where) -> None:
        registered = CODES[code]
        n = self.counts.get(code, 0) + 1
        self.counts[code] = n
        if severity is None or severity not in (registered.severity, registered.also):
            severity = registered.severity
        if n > self.cap:
            if n == self.cap + 1:
                self.first_dropped[code] = where.get("position")
            unlisted = self.report.unlisted
            unlisted[code] = unlisted.get(code, 0) + 1
            by_severity = self.report.unlisted_severities
            by_severity[severity] = by_severity.get(severity, 0) + 1
            self.report.unlisted_spans.setdefault(code, Span()).add(
                where.get("position"), where.get("first_offset"), where.get("last_offset"))
            return
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

# Why a walk over a segment stopped (kdump.read.segment.Tail.kind), as a finding; "end" and "limit" are no finding,
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


def exit_code(reports: list[FileReport], fail_on: str = ERROR) -> int:
    """The exit code of a run that gave ``reports``, by the one outcome policy (:class:`kdump.report.outcome.Outcome`):
    a refused path 2; else 1 for an unreadable file among readable ones or a finding at or above ``fail_on``
    (``error``: errors only; ``warning``: errors and warnings); 2 when nothing could be read; else 0. Info
    findings never fail a run."""
    if fail_on not in FAIL_ON:
        raise ValueError(f"fail_on must be one of {FAIL_ON}, not {fail_on!r}")
    outcome = Outcome(fail_on=fail_on)
    for r in reports:
        outcome.report(r)
    return outcome.exit_code()


def summary(reports: list[FileReport], fail_on: str = ERROR) -> dict:
    """The totals of a run, from every finding (listed or capped): files, files with findings, unreadable
    files, errors, warnings, infos, batches, records, bytes, and the exit code at ``fail_on``. A path refused
    before reading (missing, a FIFO, a directory with nothing to read) is no file checked, nor unreadable."""
    out: dict[str, Any]
    out = {"files": sum(not r.refused for r in reports),
           "filesWithFindings": 0, "unreadable": 0, "errors": 0, "warnings": 0, "infos": 0,
           "batches": 0, "records": 0, "bytes": 0, "failOn": fail_on, "exitCode": exit_code(reports, fail_on)}
    for r in reports:
        counts = r.counts()
        out["errors"] += counts[ERROR]
        out["warnings"] += counts[WARNING]
        out["infos"] += counts[INFO]
        out["batches"] += r.batches
        out["records"] += r.records
        out["bytes"] += r.bytes
        out["filesWithFindings"] += r.status == "findings"
        out["unreadable"] += r.io_error is not None and not r.refused
    return out


@dataclass(frozen=True)
class Problem:
    """One problem a command met outside a findings report (``stats``, ``txn``): the file it concerns, the byte
    position (None: no place in the file), a stable ``code`` (a reader's error code, a finding code, or
    ``cannot-read``) and the message for people. JSON: the error object of every kdump document
    (``{"type", "path", "position", "code", "message"}``)."""

    path: str
    position: int | None
    code: str
    message: str

    @classmethod
    def of(cls, path: str, error) -> Problem:
        """A reader's error (a :class:`kdump.errors.FormatError`; a :class:`kdump.read.damage.Damage` says itself
        with its ``describe()``: bytes, cause, offsets lost), or an OSError (``cannot-read``)."""
        if isinstance(error, OSError):
            return cls(path, None, "cannot-read", f"cannot read: {error.strerror or error}")
        describe = getattr(error, "describe", None)
        message = describe() if describe is not None else getattr(error, "message", str(error))
        return cls(path, getattr(error, "position", None), getattr(error, "code", "records-unreadable"), message)

    def to_dict(self, kind: str = "error") -> dict:
        """The error object every command writes (:func:`kdump.errors.error_object`), its ``type`` ``kind``:
        ``error`` (fails the run), ``warning`` (txn's disagreements) or ``note`` (never fails it)."""
        return {**error_object(self.path, self.code, self.message, self.position), "type": kind}
