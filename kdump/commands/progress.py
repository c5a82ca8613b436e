"""A progress bar on stderr for long work (dump to a file or pipe, verify, index check --deep and rebuild, convert,
stats): shown only when stderr is a terminal, the run is expected to take :data:`SHOW_AFTER_SECONDS` or more, and
not with --quiet; never on standard output, never into a file stderr is redirected to.

A run's expected time is its input's size over the speed of its kind of work (:data:`SPEEDS`), measured on the
2,000,000-record segments of bench/RESULTS.md with the compiled backend and divided by
:data:`PURE_PYTHON_SLOWDOWN` without it. docs/cli.md ("Every command takes the same output options") says which
commands show one and when."""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

# A progress bar is worth its noise only when a run takes a while.
SHOW_AFTER_SECONDS = 2.0
REDRAW_SECONDS = 0.1  # at most this often (rich's own refresh rate)

# Input bytes per second, by the bar's label (bench/RESULTS.md, compiled backend, the slower of the uncompressed and
# the lz4 segment, rounded down: a run is rather shown a bar it did not need than left silent for long).
SPEEDS = {
    "dumping": 200_000_000,     # dump --deep-iteration --print-data-log, lz4: 227 MB in 1.02 s (JSON: 246 MB, 0.70 s)
    "verifying": 600_000_000,   # verify --deep, lz4: 227 MB in 0.34 s (shallow: 1.8 GB/s)
    "checking": 600_000_000,    # index check --deep: a recovery walk, faster than verify --deep (measured side by side)
    "rebuilding": 500_000_000,  # index rebuild: the same walk, then the writes (about verify --deep's time)
    "converting": 40_000_000,   # convert lz4, magic 2 -> 1: 227 MB in 5.6 s (gzip output: 14 MB/s, none: 130 MB/s)
    "counting": 35_000_000,     # stats, lz4: 227 MB in 6.3 s (every key hashed)
    # salvage: every batch verified deeply, written, read back and verified again, then indexed: a 49 MB segment of
    # those records (400,000) in 2.6 s, measured 2026-11-26 beside the other commands at a load of 7 on 2 cores
    # (verify --deep took 0.6 s there)
    "salvaging": 20_000_000,
    # txn: batch headers (control batches read whole), the producer state machine per batch: 227 MB in 0.23 s
    "reading transactions": 800_000_000,
    # groups, txn-state, metadata: every record decoded by the generated schemas in Python, and applied; 10 M
    # records of a few bytes (zstd) took 60-140 s in the memory bench (bench/RESULTS.md, issue 22 item 2), so
    # bytes say little: the slowest case, rounded down
    "replaying": 1_000_000,
}
# Without the compiled fast path (KDUMP_PURE_PYTHON=1) records are decoded in Python: dump with data at 0.19 M
# records/s instead of 0.85 M (bench/RESULTS.md, "kdump dump").
PURE_PYTHON_SLOWDOWN = 5


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
        # drawn as it advances, not by rich's refresh thread: a process with a second thread does not fork its
        # --jobs workers (kdump.jobs.can_fork), whose progress then came only as each unit ended (a bar over a
        # few large partitions stood at 0 for the whole run)
        self._bar = Progress(self.label, BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                             console=Console(stderr=True, color_system="auto" if self.color else None),
                             transient=True, auto_refresh=False)
        self._bar.__enter__()
        self._task = self._bar.add_task(self.label, total=self.total)
        self._drawn = 0.0
        return self

    def advance(self, n: int) -> None:
        self._bar.advance(self._task, n)
        now = time.monotonic()
        if now - self._drawn >= REDRAW_SECONDS:
            self._drawn = now
            self._bar.refresh()

    def __exit__(self, *exc):
        self._bar.__exit__(*exc)


def expected_seconds(label: str, total: int) -> float:
    """How long ``total`` bytes of the work ``label`` names should take here (:data:`SPEEDS`)."""
    from kdump._backend import BACKEND
    speed = SPEEDS[label] / (1 if BACKEND == "compiled" else PURE_PYTHON_SLOWDOWN)
    return total / speed


def bar_for(ui, total, label: str) -> Bar | None:
    """A bar for ``total`` bytes of work (a number, or a function counting them, called only when a bar could
    be shown), or None where none is wanted. ``label``: what the bar says, one of :data:`SPEEDS`. The total is
    the work's own (:class:`kdump.jobs.Work`'s ``total``: the sum of the sizes its ``--jobs`` map is given),
    never counted again here."""
    if ui.quiet or not stderr_is_terminal():
        return None
    if callable(total):
        total = total()
    if expected_seconds(label, total) < SHOW_AFTER_SECONDS:
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
