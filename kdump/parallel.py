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
    # forkserver: workers start from a clean process (no threads, no open files of the parent copied), forked
    # from a server that has imported ``preload`` (the work's module) once; spawn where there is none.
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([preload])
    return context


def ordered_map(fn: Callable, calls: Sequence[tuple], jobs: int, *, done: Callable[[int], None] | None = None) -> list:
    """``[fn(*args) for args in calls]``; with ``jobs`` > 1 (and more than one call) in up to ``jobs`` worker
    processes (``fn`` and its arguments must pickle). ``done(i)`` is called in this process as each result
    arrives, in order (for a progress bar). A worker's exception is raised here, as it would be without jobs."""
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
        futures = [executor.submit(fn, *args) for args in calls]
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
