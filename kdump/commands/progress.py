"""A progress bar on stderr for long work (verify, index check and rebuild, convert, JSON dumps): shown only
when stderr is a terminal, the work is large, and not with --quiet; never on standard output."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable

# A progress bar is worth its noise only when a run takes a while.
PROGRESS_MIN_BYTES = 256 << 20


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


class Bar:
    """A rich progress bar of bytes done out of ``total``; :meth:`advance` adds bytes."""

    def __init__(self, total: int, label: str, color: bool):
        self.total = total
        self.label = label
        self.color = color

    def __enter__(self) -> Bar:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )
        self._bar = Progress(self.label, BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                             console=Console(stderr=True, color_system="auto" if self.color else None),
                             transient=True)
        self._bar.__enter__()
        self._task = self._bar.add_task(self.label, total=self.total)
        return self

    def advance(self, n: int) -> None:
        self._bar.advance(self._task, n)

    def __exit__(self, *exc):
        self._bar.__exit__(*exc)


def bar_for(ui, total, label: str) -> Bar | None:
    """A bar for ``total`` bytes of work (a number, or a function counting them, called only when a bar could
    be shown), or None where none is wanted."""
    if ui.quiet or not stderr_is_terminal():
        return None
    if callable(total):
        total = total()
    if total < PROGRESS_MIN_BYTES:
        return None
    return Bar(total, label, ui.color)


def with_progress(ui, total, label: str, work: Callable):
    """``work(advance)``: ``advance(n)`` reports n more bytes done, or is None when no bar is shown (``total``:
    as for :func:`bar_for`)."""
    bar = bar_for(ui, total, label)
    if bar is None:
        return work(None)
    with bar:
        return work(bar.advance)


def file_sizes(paths) -> int:
    """The bytes of the regular files ``paths`` (or a :class:`kdump.read.scan.Scan` of them) stand for, directories
    expanded (:func:`kdump.read.scan.scan`)."""
    from kdump.read.scan import as_scan
    return as_scan(paths).total_bytes()


def partition_log_sizes(paths) -> int:
    """The bytes of the .log segments of the partitions ``paths`` stand for (a file: every segment of its
    directory, as a deep check walks them all), each directory counted once."""
    from kdump.read.logdir import FileKind
    from kdump.read.scan import scan
    places = list(dict.fromkeys(p if os.path.isdir(p) else (os.path.dirname(os.path.abspath(p)) or ".")
                                for p in map(os.fspath, paths)))
    return scan(places).total_bytes(FileKind.LOG)
