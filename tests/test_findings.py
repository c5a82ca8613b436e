"""The one registry of finding codes (kdump/report/codes.py), its docs (docs/findings.md, docs/index.md), the one
collector with its one cap, and the mapping from reader errors to codes."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from kdump.report.codes import CODES, FINDINGS_DOC, INDEX_DOC
from kdump.report.findings import ERROR, INFO, MAX_PER_CODE, WARNING, FileReport, Findings, tail_finding_code

ROOT = Path(__file__).resolve().parent.parent
_LETTER = {"E": ERROR, "W": WARNING, "I": INFO}


def _documented_severities() -> dict[str, set[str]]:
    """code -> severities as the table rows of findings.md (``| `code` | error |``) and index.md
    (``| `a`, `b` | E |``, ``I/W``) give them."""
    out: dict[str, set[str]] = {}
    for doc in (FINDINGS_DOC, INDEX_DOC):
        for line in (ROOT / doc).read_text().splitlines():
            m = re.match(r"^\| (`[^|]+`) \| ([a-zA-Z/]+) \|", line)
            if not m:
                continue
            sev = m.group(2)
            severities = {sev} if sev in (ERROR, WARNING, INFO) else {_LETTER.get(s) for s in sev.split("/")}
            for code in re.findall(r"`([a-z0-9-]+)`", m.group(1)):
                out.setdefault(f"{doc}:{code}", set()).update(severities)
    return out


def test_every_registered_code_is_documented_with_its_severities():
    documented = _documented_severities()
    for code in CODES.values():
        assert code.severity in (ERROR, WARNING, INFO) and code.meaning, code.name
        key = f"{code.doc}:{code.name}"
        assert key in documented, f"{code.name} is not in {code.doc}"
        assert documented[key] == {code.severity} | ({code.also} if code.also else set()), code.name


def test_every_documented_code_is_registered():
    documented = {key.split(":", 1)[1] for key in _documented_severities()}
    assert documented - set(CODES) == set()


def _index_sources() -> str:
    """The companion-file readers (read layer) and index check."""
    paths = sorted((ROOT / "kdump/index").rglob("*.py")) + sorted((ROOT / "kdump/read").glob("*.py"))
    return "".join(p.read_text() for p in paths if p.name != "dump.py")


def test_every_code_index_check_emits_is_registered():
    """Index check names a code and its facts; the severity is the registry's (tests/test_one_implementation.py),
    so every code it names must be there, and a code it gives its second severity (``also=``) must have one."""
    text = _index_sources()
    calls = re.findall(r'\br\.add\(\s*f?"([a-z0-9{}-]+)",([^()]*(?:\([^()]*\)[^()]*)*)\)', text)
    assert len(calls) > 50, "the pattern above no longer matches the code"
    for name, rest in calls:
        names = [name.replace("{kind}", k) for k in ("index", "timeindex")] if "{kind}" in name else [name]
        for n in names:
            assert n in CODES, n
            assert "also=" not in rest or CODES[n].also is not None, n


def test_every_error_code_the_index_readers_raise_is_registered():
    """Index check reports the readers' FormatError codes under their own names."""
    raised = set(re.findall(r'FormatError\(\s*"([a-z0-9-]+)"', _index_sources()))
    raised |= set(re.findall(r'error_code\s*=\s*"([a-z0-9-]+)"', _index_sources()))
    assert raised and raised - set(CODES) == set()


def test_one_cap_for_every_collector():
    report = FileReport("x", "index")
    findings = Findings(report)
    for i in range(MAX_PER_CODE + 7):
        findings.add("index-offset-not-increasing", f"entry {i}", position=8 * i)
    findings.add("index-zero-tail", "a zero tail", severity=WARNING)
    findings.add("index-missing", "no index", severity=ERROR)  # not a severity this code takes: the registered one
    findings.finish()
    listed = [f for f in report.findings if f.code == "index-offset-not-increasing"]
    assert len(listed) == MAX_PER_CODE == 100
    (capped,) = [f for f in report.findings if f.code == "findings-capped"]
    assert capped.message == (f"7 more index-offset-not-increasing findings not listed ({MAX_PER_CODE + 7} in all, "
                              f"the first of them at byte {8 * MAX_PER_CODE})")
    assert capped.severity == INFO
    assert [f.severity for f in report.findings if f.code in ("index-zero-tail", "index-missing")] == [WARNING, WARNING]
    with pytest.raises(KeyError):
        findings.add("no-such-code", "unregistered")


@pytest.mark.parametrize("kind, reader_code, expected", [
    ("end", "", None), ("limit", "", None), ("short", "", "truncated-tail"), ("truncated", "", "truncated-tail"),
    ("zeros", "", "zero-padding"), ("corrupt", "size-below-minimum", "size-below-minimum"),
    ("corrupt", "message-too-small", "message-too-small"), ("corrupt", "no-such-reader-code", "damaged-range"),
])
def test_tail_kinds_map_to_codes(kind, reader_code, expected):
    assert tail_finding_code(kind, reader_code) == expected
