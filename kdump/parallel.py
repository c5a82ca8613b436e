"""``--jobs``: independent units of work (partitions) in worker processes, results in the order given.

The commands that use it (verify, index check, index rebuild) compute every result first and print only
after, in the original order, so their output and exit code do not depend on the number of jobs. Workers
ignore SIGINT: Ctrl-C reaches the parent, which ends them. Each worker takes one unit at a time and keeps
nothing between units, so its memory is that of one unit (the readers stream).
"""
from __future__ import annotations

import os
import signal
from collections.abc import Callable, Sequence

# multiprocessing and concurrent.futures are imported where a pool is made: with one job (and for every
# command that never makes one) their import would be most of kdump's start-up time.


def default_jobs() -> int:
    return os.cpu_count() or 1


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _context(preload: str):
    import multiprocessing
    import threading
    methods = multiprocessing.get_all_start_methods()
    # fork while this process has one thread (no lock another thread could hold is copied): the workers start
    # at once with everything imported, where a fork server would first start an interpreter and import
    # kdump (a tenth of a second, as long as the whole work on a small directory).
    if "fork" in methods and threading.active_count() == 1:
        return multiprocessing.get_context("fork")
    # forkserver: workers start from a clean process (no threads, no open files of the parent copied), forked
    # from a server that has imported ``preload`` (the work's module) once; spawn where there is none.
    if "forkserver" not in methods:
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([preload])
    return context


def ordered_map(fn: Callable, calls: Sequence[tuple], jobs: int, *, done: Callable[[int], None] | None = None,
                sizes: Sequence[int] | None = None) -> list:
    """``[fn(*args) for args in calls]``; with ``jobs`` > 1 (and more than one call) in up to ``jobs`` worker
    processes (``fn`` and its arguments must pickle). ``done(i)`` is called in this process as each result
    arrives, in order (for a progress bar). A worker's exception is raised here, as it would be without jobs.
    ``sizes``: what each call weighs (its bytes, :class:`kdump.read.scan.WorkUnit`): the workers start the
    largest first (:func:`largest_first`), so that none is left running alone at the end; the
    results keep the order of ``calls``."""
    if jobs <= 1 or len(calls) <= 1:
        results = []
        for i, args in enumerate(calls):
            results.append(fn(*args))
            if done is not None:
                done(i)
        return results
    from concurrent.futures import ProcessPoolExecutor
    executor = ProcessPoolExecutor(max_workers=min(jobs, len(calls)), mp_context=_context(fn.__module__),
                                   initializer=_ignore_sigint)
    try:
        start = range(len(calls)) if sizes is None else largest_first(sizes)
        submitted = {i: executor.submit(fn, *calls[i]) for i in start}
        futures = [submitted[i] for i in range(len(calls))]
        results = []
        for i, future in enumerate(futures):
            results.append(future.result())
            if done is not None:
                done(i)
    except BaseException:  # Ctrl-C, or a worker's exception: end the other workers now, not after their units
        executor.shutdown(wait=False, cancel_futures=True)
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.terminate()
        raise
    executor.shutdown()
    return results


def bytes_of(paths) -> int:
    """What a unit of files weighs for :func:`largest_first`: their bytes (a file gone meanwhile weighs nothing)."""
    total = 0
    for path in paths:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    return total


def largest_first(sizes: Sequence[int]) -> list[int]:
    """The indexes of ``sizes``, largest first (equal sizes in their given order): the order to start units in
    so that workers finish together (a big unit started last would run alone at the end)."""
    return sorted(range(len(sizes)), key=lambda i: -sizes[i])
