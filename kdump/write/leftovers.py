"""Findings for kdump's own crash leftovers in a directory (:func:`kdump.write.killed.leftovers`): a temporary no
running process holds (``kdump-temporary-left``), and the journal of a group write interrupted between its renames
(``kdump-write-interrupted``), which names the files of the group that already hold their new bytes and those
that do not: index and segment files that do not belong together. ``kdump verify`` and ``kdump index check`` of a
directory report them, one report per leftover; it sits below both (``kdump verify`` runs ``index check``'s
companion checks, so ``index`` must not import ``verify``)."""
from __future__ import annotations

import os

from kdump.read.logdir import kdump_temporary
from kdump.report.codes import CODES
from kdump.report.findings import FileReport


def leftover_reports(directory) -> list[FileReport]:
    try:
        names = os.listdir(directory)
    except OSError:
        return []  # as kdump.write.killed.leftovers: the directory's own report says why it cannot be read
    if not any(kdump_temporary(name) for name in names):
        # nothing to check (the usual case): the writer's module and what it imports (hashlib, tempfile, the
        # digest threads: 0.013 s of CPU) stay unimported; each ``--jobs`` worker would pay them again
        return []
    from kdump.write.killed import leftovers
    return [_report(left) for left in leftovers(directory)]


def is_leftover_directory(path) -> bool:
    """A directory kdump was filling (``.<name>.<random>.tmp``, a partition being converted): reported by
    :func:`leftover_reports` of its parent, not read as a partition."""
    return os.path.isdir(path) and kdump_temporary(path) is not None


def _size(path: str) -> int:
    """What a leftover takes on disk (a staging directory: its files), for its report's ``bytes``."""
    try:
        if not os.path.isdir(path):
            return os.path.getsize(path)
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(path) for f in files)
    except OSError:
        return 0


def _report(left) -> FileReport:
    report = FileReport(left.path, "kdump-temporary", bytes=_size(left.path))
    if left.role == "journal":
        code = "kdump-write-interrupted"
        if left.unreadable is not None:
            detail = f"the journal cannot be read ({left.unreadable})"
        else:
            new = [m["target"] for m in left.members if m["placed"]]
            old = [m["target"] for m in left.members if not m["placed"]]
            detail = (f"new: {', '.join(new) or 'none'}; not yet written (old or missing): {', '.join(old) or 'none'}; "
                      "these files do not belong together")
        message = f"a kdump write of {len(left.members) or 'several'} files was interrupted between renames: {detail}"
    else:
        code = "kdump-temporary-left"
        what = "directory" if os.path.isdir(left.path) else "file"
        message = (f"temporary {what} of an interrupted kdump write of {left.target} (no running process holds it); "
                   "the next run of the same command removes it")
    report.add(code, CODES[code].severity, message)
    return report
