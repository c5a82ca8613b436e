"""The PATHS argument of the per-partition commands (``txn``, ``stats``): segments, partition directories or log
directories, grouped by partition (:meth:`kdump.read.scan.Scan.segment_groups`). What cannot be read is said on
stderr and recorded in the run's :class:`kdump.report.outcome.Outcome`: a path named but missing or refused (a FIFO, a
device, a symlink loop) and a path with no segment in it or below it make the run exit 2; a segment or directory
found while searching that cannot be read is unreadable among readable ones (exit 1 when something else was read).
"""
from __future__ import annotations

import os

import click

NOTHING = "nothing to read: no log segments (<base offset>.log) in this directory or below it"


def partition_groups(paths, ui, outcome) -> tuple[list, list]:
    """(segment groups, the :class:`kdump.report.findings.Problem` s of paths not read, each said through ``ui`` and
    recorded in ``outcome``); a usage error when no path is given."""
    from kdump.read.logdir import FileKind
    from kdump.read.scan import scan
    from kdump.report.findings import Problem

    if not paths:
        raise click.UsageError("no paths given: name segments, partition directories or log directories")
    found = scan(paths)
    groups = found.segment_groups()
    problems = []
    for e in found.entries:
        r = e.refused
        if r is None or (e.from_dir and e.kind is not FileKind.LOG and r not in found.unlistable):
            continue  # (a FIFO or socket beside the segments is none of their business)
        problems.append(Problem(r.path, None, "cannot-read", f"cannot read: {r.reason}"))
        if e.from_dir:
            outcome.cannot_read()
        else:
            outcome.refused()
    logs = [os.path.abspath(p) for g in groups for p in g.logs]
    for p in map(os.fspath, paths):
        if not any(e.path == p and e.refused is not None for e in found.entries) and not holds_one_of(p, logs):
            problems.append(Problem(p, None, "nothing-to-read", NOTHING if os.path.isdir(p) else
                                    "nothing to read: not a log segment (<base offset>.log)"))
            outcome.empty()
    for problem in problems:
        ui.nothing(problem.path, problem.message)
    return groups, problems


def holds_one_of(path: str, files: list[str]) -> bool:
    """Is one of ``files`` (absolute) ``path`` itself or below it?"""
    where = os.path.abspath(path)
    inside = os.path.join(where, "")
    return any(f == where or f.startswith(inside) for f in files)


def say_problems(ui, errors, notes=()) -> None:
    """Errors and notes (:class:`kdump.report.findings.Problem` s) of what was read, on stderr:
    ``kdump: FILE: at byte N: cause`` (notes left out with --quiet)."""
    from kdump.commands.hints import hinted
    for e in errors:
        ui.problem(e.path, hinted(e.code, e.message), position=e.position)
    for n in notes:
        ui.note(n.path, n.message if n.position is None else f"at byte {n.position}: {n.message}")
