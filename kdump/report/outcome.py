"""The one outcome policy: what a run saw, turned into its exit code and the label of each line it prints.

Every command (dump, verify, index dump/check/rebuild, convert, salvage, stats, txn, groups, txn-state, metadata,
the ``kdump spark`` jobs) records what happened to each path it was given in an :class:`Outcome`, and ends with
:meth:`Outcome.exit_code`; nothing else decides an exit code. The rules (docs/cli.md, "Exit codes"):

* 0: everything named was read and is sound (warnings below ``--fail-on`` included);
* 1: something read is damaged or not Kafka's, a path is unreadable among readable ones, a finding at or above
  ``--fail-on``, or (``txn``) a hanging transaction;
* 2: nothing to read at all, a path missing (or a FIFO, a device, a symlink loop: refused before reading), a usage
  error, or an output that cannot be written;
* 70: a bug (never decided here: the command line's last resort).

Kafka's own exit 0 is kept where Kafka's text is the contract: a crash-cut tail that DumpLogSegments reports as
``Found N invalid bytes at the end of F`` is recorded as a warning (``saw(path, warnings=1)``), which fails a run
only at ``--fail-on warning``.
"""
from __future__ import annotations

import errno
from dataclasses import dataclass, field

from kdump.errors import EXIT_DATA, EXIT_OK, EXIT_USAGE
from kdump.report.codes import ERROR, WARNING

__all__ = ["Outcome", "label", "OK", "WARN", "FAIL", "LABELS", "UNREADABLE", "REFUSAL_ERRNOS"]

# errnos of a path refused before reading (missing, a dangling link, a symlink loop, not a regular file): exit 2
# even among readable paths, as a missing path; any other error reading a path makes it unreadable.
REFUSAL_ERRNOS = frozenset((errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.EINVAL, errno.ENXIO))

OK, WARN, FAIL = "OK", "WARN", "FAIL"
LABELS = (OK, WARN, FAIL)
UNREADABLE = "UNREADABLE"  # the label of a path that could not be read (it fails the run as FAIL does)


def label(errors: int, warnings: int, fail_on: str = ERROR) -> str:
    """The label of one line (a file, a partition, a check): ``FAIL`` exactly when that line alone would make
    the run exit 1 at ``fail_on``; ``WARN`` for warnings that do not; else ``OK``. So a label never disagrees
    with the exit code."""
    if errors or (warnings and fail_on == WARNING):
        return FAIL
    if warnings:
        return WARN
    return OK


@dataclass
class Outcome:
    """What one run saw, path by path, in the read layer's words. Counts, not booleans, so that a summary line
    can say how many of each; ``fail_on`` is the run's ``--fail-on`` (error unless the command offers it)."""

    fail_on: str = ERROR
    read: int = 0  # paths (files) read, in whole or in part
    damaged: int = 0  # read, but damaged or not a Kafka file (errors)
    warned: int = 0  # read, with warnings only
    unreadable: int = 0  # could not be opened or read (EACCES, EIO...), though other paths were
    missing: int = 0  # named but missing, or refused before reading (FIFO, device, symlink loop, unlistable)
    hanging: int = 0  # txn: hanging transactions
    usage: bool = False  # bad options
    output_failed: bool = False  # an output could not be written (or verified)
    nothing: bool = False  # the command found nothing to read where it was pointed (an empty directory...)
    # Paths seen so far with their [errors, warnings]: a command that meets a file's problems one by one (dump's
    # errors, rebuild's warnings) says so with :meth:`saw`; each path is counted once, by :meth:`settle`.
    seen: dict = field(default_factory=dict)

    # -- what a command records ------------------------------------------------------------------------------
    def file(self, *, errors: int = 0, warnings: int = 0) -> str:
        """A file (or partition) read, with the number of error and warning findings it gave; returns its label."""
        self.read += 1
        if errors:
            self.damaged += 1
        elif warnings:
            self.warned += 1
        return label(errors, warnings, self.fail_on)

    def saw(self, path, *, errors: int = 0, warnings: int = 0) -> None:
        """``path`` (None: the run as a whole) read, in whole or in part, with ``errors`` and ``warnings`` more
        problems; called as often as problems are met, counted as one :meth:`file` when the run is settled."""
        seen = self.seen.setdefault(path, [0, 0])
        seen[0] += errors
        seen[1] += warnings

    def settle(self) -> None:
        """Count every path :meth:`saw` gave as one file read (settling again counts nothing twice; a path seen
        after a settle is counted again)."""
        for errors, warnings in self.seen.values():
            self.file(errors=errors, warnings=warnings)
        self.seen.clear()

    def report(self, report) -> str:
        """A checker's :class:`~kdump.report.findings.FileReport`: unreadable, or read with its errors and warnings;
        returns its label (``UNREADABLE`` for one that could not be read)."""
        if report.io_error is not None:
            if getattr(report, "refused", False):
                self.refused()
            else:
                self.cannot_read()
            return UNREADABLE
        counts = report.counts()
        return self.file(errors=counts[ERROR], warnings=counts[WARNING])

    def cannot_read(self) -> None:
        self.unreadable += 1

    def refused(self) -> None:
        """A path missing, or one kdump refuses to open (FIFO, device, symlink loop)."""
        self.missing += 1

    def empty(self) -> None:
        """Nothing to read where the user pointed (an empty directory, a directory without segments)."""
        self.nothing = True

    def hanging_transactions(self, n: int) -> None:
        self.hanging += n

    def cannot_write(self) -> None:
        self.output_failed = True

    def bad_usage(self) -> None:
        self.usage = True

    # -- what it means ---------------------------------------------------------------------------------------
    @property
    def nothing_read(self) -> bool:
        self.settle()
        return self.read == 0

    def exit_code(self) -> int:
        """0, 1 or 2 by the rules in this module's docstring."""
        self.settle()
        if self.usage or self.output_failed or self.missing or self.nothing:
            # a path named that gave nothing to read is no success, whatever the other paths gave (as a missing one)
            return EXIT_USAGE
        if self.read == 0:
            # Every path unreadable, or nothing there: nothing was read, which is never a success.
            return EXIT_USAGE
        if self.damaged or self.unreadable or self.hanging or (self.warned and self.fail_on == WARNING):
            return EXIT_DATA
        return EXIT_OK

    def run_label(self) -> str:
        """The run's own label: ``FAIL`` when it exits non-zero, ``WARN`` when warnings were read, else ``OK``."""
        code = self.exit_code()
        return FAIL if code else WARN if self.warned else OK
