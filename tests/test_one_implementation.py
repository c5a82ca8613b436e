"""One implementation of each concept (issue 30 item 4), checked on the source so that a copy cannot come back:
each test finds the concept's home and no second spelling of it elsewhere in ``kdump/``. What the one
implementation does is tested where it lives (the files named in each test's docstring); these tests hold that
there is only one.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kdump"
SOURCES = {str(p.relative_to(ROOT)): p for p in sorted(PACKAGE.rglob("*.py"))}


def _strings(path: Path) -> list[tuple[int, str]]:
    """The string literals of ``path`` that reach a user or a caller (docstrings left out), an f-string's
    formatted parts as ``{}``."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    in_fstrings = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            found.append((node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and id(node) not in in_fstrings):
            found.append((node.lineno, node.value))
    return found


def _spelled(text: str, *, outside: tuple[str, ...]) -> dict[str, list[str]]:
    """Where a string literal holding ``text`` is written, in the modules not under ``outside``."""
    return {name: hits for name, path in SOURCES.items() if not name.startswith(outside)
            for hits in [[f"{line}: {s}" for line, s in _strings(path) if text in s]] if hits}


# --- "not a Kafka log segment": the read layer's judgement ---------------------------------------------------
def test_not_a_kafka_log_is_judged_by_the_read_layer_only():
    """A file whose first bytes cannot start a Kafka log (text renamed .log) is judged by
    ``kdump.read.damage.foreign_start`` (code ``not-a-kafka-log`` and its message); every command (dump, verify,
    index check and rebuild, stats, txn, convert, salvage, replay) asks it instead of saying it again. Its
    behaviour: tests/test_one_judgement.py, tests/test_salvage.py, tests/test_convert*.py."""
    home = "kdump/read/damage.py"
    assert _spelled("not a Kafka log segment", outside=()).keys() == {home, *_command_help("not a Kafka log")}
    assert _spelled("not-a-kafka-log", outside=("kdump/commands/", "kdump/report/")).keys() == {home}


def _command_help(text: str) -> set[str]:
    """The commands whose help (exit-code epilogs) mentions ``text``: they describe the judgement, not make it."""
    return {name for name in _spelled(text, outside=()) if name.startswith("kdump/commands/")}
