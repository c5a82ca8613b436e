"""The findings of one companion file, as index check collects them: the shared collector
(:class:`~kdump.report.findings.Findings`) with what index check adds, that a finding which follows from damage in
the log beside the file is said as that."""
from __future__ import annotations

from kdump.report.codes import CODES
from kdump.report.findings import FileReport, Findings

# Findings about a companion file's entry that damage in the log explains (the entry names a lost offset or a
# position in damaged bytes): reported as ``entry-in-damaged-log`` (info) when the log's damage covers it.
KNOCK_ON = frozenset((
    "index-position-not-batch", "index-entry-skips-offsets", "index-offset-past-end", "index-offset-mismatch",
    "index-position-beyond-valid", "timeindex-offset-past-end", "timeindex-offset-not-found",
    "timeindex-batch-unreadable", "timeindex-timestamp-mismatch", "timeindex-not-max-so-far",
    "timeindex-not-first-offset", "timeindex-record-offset", "leader-epoch-differs", "leader-epoch-missing",
    "leader-epoch-beyond-log-end"))


class Report:
    """The shared collector (:class:`Findings`), which takes each finding's severity from the registry
    (:data:`kdump.report.codes.CODES`); a wrapper that says what index check adds: a finding that follows from
    damage in the log beside it is said as that."""

    def __init__(self, path: str, kind: str, size: int = 0, log_damage=None):
        self._findings = Findings(FileReport(path, kind, bytes=size))
        self.report = self._findings.report
        # () -> LogDamage of the segment beside this file (read when first needed), or None
        self.log_damage = log_damage

    def add(self, code: str, message: str, **where) -> None:
        """``where``: the finding's position and offsets, and the facts its severity and wording follow from:
        ``also`` makes a code of two severities take its second (``Code.also``: a zero tail or an incomplete
        time index of a rolled segment, not of the active one); ``damage_offset`` and ``log_position`` place it
        in the log beside this file, to tell a consequence of the log's damage."""
        severity = CODES[code].also if where.pop("also", False) else None
        if code in KNOCK_ON and self.log_damage is not None:
            damage = self.log_damage()
            area = None
            if damage is not None and damage.foreign:
                area = "the whole log, which is no Kafka log"
            elif damage is not None:
                d = damage.covers(where.pop("damage_offset", where.get("first_offset")),
                                  where.pop("log_position", None))
                area = None if d is None else f"the damaged area of the log at byte {d.start} ({d.code})"
            if area is not None:  # reported once, for the log: this file is not at fault
                code, severity = "entry-in-damaged-log", None
                message = f"{message}: a consequence of {area}, reported there"
        where.pop("log_position", None)
        where.pop("damage_offset", None)
        self._findings.add(code, message, severity=severity, **where)

    def finish(self) -> FileReport:
        return self._findings.finish()
