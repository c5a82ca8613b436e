"""``--jobs`` for a dump: its entries cut into units of work (a partition each), dumped in forked workers whose
output and messages the parent writes out in order (:func:`dump_in_workers`)."""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kdump.dump.dumper import Dumper
    from kdump.dump.results import FileResult
    from kdump.jobs import Work
    from kdump.read.logdir import Entry


def dump_work(entries: list[Entry]) -> Work[list[Entry]]:
    """The entries of a dump (:func:`kdump.dump.plan.entries_to_dump`, :meth:`kdump.dump.dumper.Dumper.plan`)
    cut into its units of work, the entries of each directory (a partition), each weighed by its files' bytes:
    what :func:`dump_in_workers` balances and a progress bar's total."""
    from kdump.jobs import weigh
    units: list[list[Entry]] = []
    for entry in entries:
        if units and os.path.dirname(units[-1][-1].path) == os.path.dirname(entry.path):
            units[-1].append(entry)
        else:
            units.append([entry])
    return weigh(units, lambda unit: [e.path for e in unit])


def dump_in_workers(dumper: Dumper, paths, jobs: int, worker_dumper: Callable, ui, *,
                    progress: Callable[[int], None] | None = None,
                    work: Work[list[Entry]] | None = None) -> list[FileResult]:
    """:meth:`kdump.dump.dumper.Dumper.dump_paths`, the entries of each directory (a partition) in one of ``jobs``
    forked workers (:func:`kdump.jobs.ordered_map`): each dumps them with ``worker_dumper(out, sink)`` (a Dumper like
    ``dumper`` writing to ``out``, a file of the worker's own, and calling ``sink`` where ``dumper`` calls ``ui``),
    and the parent writes the files in order beneath ``dumper.renderer.out`` and makes ``sink``'s calls on ``ui``:
    the same output and messages as one process (each stream; their interleaving is by partition). One process
    where a fork is not safe, or for a terminal (whose renderer differs from a file's). ``progress(bytes)``: the
    workers' batches as they show them (``worker_dumper(out, sink, progress)`` wraps its renderer in a
    :class:`kdump.render.protocol.CountingRenderer`; in one process, ``dumper``'s own counts them). ``work``: the
    :func:`dump_work` of the same entries, when the caller made it once already (for its progress bar)."""
    from kdump.jobs import can_fork, ordered_results
    out = dumper.renderer.out
    if jobs <= 1 or not can_fork() or out.isatty() or getattr(out, "buffer", None) is None:
        return dumper.dump_paths(paths)
    entries = dumper.plan(paths)
    if work is None:
        work = dump_work(entries)
    units = work.units
    if len(units) <= 1:
        for entry in entries:
            dumper.dump_entry(entry)
        return dumper.results
    next_bases = dumper.next_bases

    def dump_unit(i: int, *, progress=None):  # in a forked worker: the closure is not pickled
        import tempfile
        fd, path = tempfile.mkstemp(prefix=".kdump-dump.")
        sink = _Calls()
        with open(fd, "w", encoding=out.encoding, errors=out.errors) as own:
            worker = worker_dumper(own, sink, progress)  # (progress: through the worker's pipe as it goes)
            worker.next_bases = next_bases
            for entry in units[i]:
                worker.dump_entry(entry)
        return (path, sink.calls, worker.results, worker.index_reports, worker.passed_over, worker.unreadable,
                worker.outside_window)

    # each partition written out as soon as it and those before it are done, while the workers dump the next
    # (not all at the end: that was serial time, and every partition's file on disk at once)
    dumped = ordered_results(dump_unit, [(i,) for i in range(len(units))], jobs, sizes=work.sizes, progress=progress)
    try:
        for path, calls, results, index_reports, passed_over, unreadable, outside in dumped:
            try:
                _copy_into(out, path)
            finally:
                os.unlink(path)
            for name, args, kwargs in calls:
                getattr(ui, name)(*args, **kwargs)
            dumper.results.extend(results)
            dumper.passed_over.extend(passed_over)
            dumper.outside_window.extend(outside)
            dumper.unreadable |= unreadable
            for name, found in vars(index_reports).items():
                getattr(dumper.index_reports, name).update(found)
    finally:
        dumped.close()  # (an error writing out: the workers still running are ended)
    return dumper.results


def _copy_into(out, path: str) -> None:
    """The bytes of the file at ``path`` written beneath the text stream ``out``: by the kernel (``sendfile``) where
    ``out`` is a descriptor it writes to, else (or on any error: the buffered write then says it as kdump's
    output errors are said) through ``out``'s buffer."""
    out.flush()
    with open(path, "rb") as own:
        size, sent = os.fstat(own.fileno()).st_size, 0
        try:
            target = out.fileno()
            while sent < size and (n := os.sendfile(target, own.fileno(), sent, size - sent)):
                sent += n
        except (OSError, ValueError, AttributeError):
            pass
        own.seek(sent)
        while chunk := own.read(1 << 20):
            out.buffer.write(chunk)


class _Calls:
    """Records the calls made on it (``sink.problem(...)``), for :func:`dump_in_workers` to make them again."""

    def __init__(self):
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str):
        def record(*args, **kwargs):
            self.calls.append((name, args, kwargs))
        return record
