"""The finding codes of ``kdump verify``'s log checks: the part of the one registry
(:mod:`kdump.report.codes`) that docs/findings.md documents (docs/verify.md explains each)."""
from __future__ import annotations

from kdump.report.codes import CODES as ALL_CODES
from kdump.report.codes import FINDINGS_DOC, Code

__all__ = ["CODES", "Code", "severity"]

CODES: dict[str, Code] = {name: c for name, c in ALL_CODES.items() if c.doc == FINDINGS_DOC}


def severity(code: str) -> str:
    return ALL_CODES[code].severity
