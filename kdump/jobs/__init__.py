"""``--jobs``: independent units of work (partitions) in worker processes, results in the order given.

The commands that use it (verify, index check, index rebuild, stats, txn) compute every result first and print
only after, in the original order, so their output and exit code do not depend on the number of jobs (dump writes
out each partition's as soon as it and those before it are done: :func:`ordered_results`). Workers
ignore SIGINT: Ctrl-C reaches the parent, which ends them. Each worker takes one unit at a time and keeps
nothing between units, so its memory is that of one unit (the readers stream).

Where the process can fork (one thread: no lock another thread holds is copied) the workers are forked children
that take unit numbers from a pipe and send back each result pickled through a pipe of their own
(:func:`_forked_results`): they start with everything imported and every call's arguments already in memory, and
the parent imports nothing for them (multiprocessing and concurrent.futures, with their threads, were a sixth of a
small run: serial time that no second core takes over). Elsewhere a ``ProcessPoolExecutor`` does the same.

What a unit weighs is counted here once (:func:`bytes_of`; :class:`WorkUnit` for partitions and segments,
:class:`Work` for any other units a command cuts): the map starts the largest first by those sizes, and a
command's progress bar takes its total from the same :class:`Work` it hands the map, so the bar's total and its
advance (the bytes the work reads) are the scheduler's numbers.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from kdump.read.partition import PartitionLog
    from kdump.read.scan import Scan, SegmentGroup

U = TypeVar("U")

# multiprocessing and concurrent.futures are imported where a pool is made: with one job (and for every
# command that never makes one) their import would be most of kdump's start-up time; signal where it is used
# (every command imports this module for raise_malloc_thresholds).


def default_jobs() -> int:
    return os.cpu_count() or 1


def _ignore_sigint() -> None:
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_worker() -> None:
    """A pool's worker (started afresh, not forked from a process that did :func:`raise_malloc_thresholds`)."""
    _ignore_sigint()
    raise_malloc_thresholds()


def raise_malloc_thresholds() -> None:
    """Put glibc's malloc, once per process, where reading a first file leaves it: one 1 MiB block allocated and freed.

    glibc maps a block above its mmap threshold (128 KiB at start) on its own and trims the heap's top when more
    than twice that is free; freeing a mapped block raises the threshold to the block's size (a dynamic threshold,
    ``mallopt(3)``). Until then the buffers of each compressed batch (a few hundred KiB: zlib's output blocks and
    their join) are mapped fresh or the heap's top regrown for every batch, one page fault per 4 KiB touched:
    6,000 faults, 0.013 s of a first partition's 0.095 s in ``verify --deep`` of gzip batches, paid by every
    process, so once more by each ``--jobs`` worker, until the close of the first file frees its 1 MiB read buffer
    and raises the thresholds. Done first, no batch pays it (a 1 MiB threshold, 2 MiB kept free at the heap's
    top). Elsewhere (another malloc) an allocation and a free of nothing touched."""
    block = bytearray(1 << 20)  # calloc'd: mapped, never touched
    del block


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
                sizes: Sequence[int] | None = None, progress: Callable[[int], None] | None = None) -> list:
    """``[fn(*args) for args in calls]``; with ``jobs`` > 1 (and more than one call) in up to ``jobs`` worker
    processes (``fn`` and its arguments must pickle). ``done(i)`` is called in this process as each result
    arrives, in order (for a progress bar). A worker's exception is raised here, as it would be without jobs.
    ``sizes``: what each call weighs (its bytes: :class:`Work`'s ``sizes``, a :class:`WorkUnit`'s ``size``):
    the workers start the largest first (:func:`largest_first`), so that none is left running alone at the
    end; the results keep the order of ``calls``. ``progress(n)``: each call is made as ``fn(*args, progress=...)`` and
    what it reports (n more bytes done) reaches ``progress`` here as the workers go, not when a unit ends (a bar
    over a few large partitions would otherwise stand still until the end)."""
    results = []
    each = ordered_results(fn, calls, jobs, sizes=sizes, progress=progress)
    try:
        for i, result in enumerate(each):
            results.append(result)
            if done is not None:
                done(i)
    finally:
        each.close()  # (an exception here, in ``done``: the workers still running are ended)
    return results


def ordered_results(fn: Callable, calls: Sequence[tuple], jobs: int, *,
                    sizes: Sequence[int] | None = None, progress: Callable[[int], None] | None = None) -> Generator:
    """The results of :func:`ordered_map` one at a time, in the order of ``calls``, each as soon as it and every
    one before it have arrived: the caller uses each (writes it out, frees it) while the workers compute the
    next, instead of after the last. Read it to its end or close it: closed early, it ends the workers."""
    if jobs <= 1 or len(calls) <= 1:
        if progress is not None:
            return (fn(*args, progress=progress) for args in calls)
        return (fn(*args) for args in calls)
    order = list(range(len(calls)) if sizes is None else largest_first(sizes))
    if can_fork() and len(calls) <= _MAX_FORKED_UNITS:
        return _forked_results(fn, calls, min(jobs, len(calls)), order, progress)
    if progress is not None:  # (an executor's worker has no pipe to report through: a unit's bytes when it ends)
        return _reported(_pooled_results(fn, calls, min(jobs, len(calls)), order),
                         [0] * len(calls) if sizes is None else list(sizes), progress)
    return _pooled_results(fn, calls, min(jobs, len(calls)), order)


def _reported(results: Generator, sizes: list[int], progress: Callable[[int], None]) -> Generator:
    """``results``, ``progress`` told each one's size as it is handed over."""
    try:
        for i, result in enumerate(results):
            progress(sizes[i])
            yield result
    finally:
        results.close()


def _pooled_results(fn: Callable, calls: Sequence[tuple], workers: int, order: list[int]) -> Generator:
    """:func:`ordered_results` in a ``ProcessPoolExecutor`` (where a fork is not safe)."""
    from concurrent.futures import ProcessPoolExecutor
    executor = ProcessPoolExecutor(max_workers=workers, mp_context=_context(fn.__module__),
                                   initializer=_start_worker)
    try:
        submitted = {i: executor.submit(fn, *calls[i]) for i in order}
        for i in range(len(calls)):
            yield submitted.pop(i).result()
    except BaseException:  # Ctrl-C, a worker's exception, or closed early: end the other workers now
        executor.shutdown(wait=False, cancel_futures=True)
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.terminate()
        raise
    executor.shutdown()


# A unit number in the task pipe takes 4 bytes. The parent writes every number before it reads a result, so they
# must fit in the pipe's buffer (64 KiB on Linux; 16 KiB on macOS, the least assumed elsewhere): more units go to
# the executor.
_UNIT_BYTES = 4
_MAX_FORKED_UNITS = (64 if sys.platform.startswith("linux") else 16) * 1024 // _UNIT_BYTES
_SIZE_BYTES = 8  # the length before each pickled result


def can_fork() -> bool:
    """Whether :func:`ordered_map` forks its workers (they then run ``fn`` as it is: a closure too)."""
    import threading
    return hasattr(os, "fork") and threading.active_count() == 1


def _forked_results(fn: Callable, calls: Sequence[tuple], workers: int, order: list[int],
                    progress: Callable[[int], None] | None = None) -> Generator:
    """:func:`ordered_results` in ``workers`` forked children: unit numbers (``order``) through one pipe that every
    worker reads (a read of one number takes it whole: each was written whole and at once), results back pickled,
    each worker through a pipe of its own read as it fills (a worker is never left blocked on a full pipe longer
    than the caller takes to use the result it was given)."""
    import gc
    import pickle
    import select
    tasks_r, tasks_w = os.pipe()
    results_of: dict[int, bytearray] = {}  # a worker's result pipe -> the bytes read and not yet unpickled
    pids: list[int] = []
    gc.freeze()  # the parent's objects out of the children's collections: their pages stay shared
    try:
        for _ in range(workers):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the worker
                os.close(r)
                os.close(tasks_w)
                for other in results_of:
                    os.close(other)
                _work(fn, calls, tasks_r, w, pickle, progress is not None)
            os.close(w)
            pids.append(pid)
            results_of[r] = bytearray()
        os.close(tasks_r)
        tasks_r = -1
        os.write(tasks_w, b"".join(i.to_bytes(_UNIT_BYTES, "little") for i in order))
        os.close(tasks_w)
        tasks_w = -1
        n = len(calls)
        results: list = [None] * n
        arrived = [False] * n
        failed: dict[int, BaseException] = {}
        poller = select.poll()
        for fd in results_of:
            poller.register(fd, select.POLLIN)
        answered = 0
        while answered < n:
            if not results_of:
                raise RuntimeError(f"a worker process ended before its result (unit {answered}): killed?")
            for fd, _ in poller.poll():
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    poller.unregister(fd)
                    del results_of[fd]
                    os.close(fd)
                    continue
                pending = results_of[fd]
                pending += chunk
                while len(pending) >= _SIZE_BYTES:
                    size = int.from_bytes(pending[:_SIZE_BYTES], "little")
                    if len(pending) < _SIZE_BYTES + size:
                        break
                    i, ok, value = pickle.loads(pending[_SIZE_BYTES:_SIZE_BYTES + size])
                    del pending[:_SIZE_BYTES + size]
                    if ok is None:  # a worker's progress: bytes done in unit i
                        if progress is not None:
                            progress(value)
                        continue
                    results[i], arrived[i] = value, True
                    if not ok:
                        failed[i] = value
            while answered < n and arrived[answered]:
                if answered in failed:
                    raise failed[answered]  # as the call would have raised it without jobs
                result, results[answered] = results[answered], None  # (held by the caller alone from here)
                answered += 1
                yield result
    except BaseException:  # Ctrl-C, a worker's exception, or closed early: end the workers now, not after their units
        import signal
        for pid in pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass
        raise
    finally:
        gc.unfreeze()
        for fd in (tasks_r, tasks_w, *results_of):
            if fd >= 0:
                os.close(fd)
        for pid in pids:
            os.waitpid(pid, 0)


def _work(fn: Callable, calls: Sequence[tuple], tasks: int, results: int, pickle, report: bool = False) -> None:
    """A forked worker: each unit number read from ``tasks``, its result (or its exception) pickled to
    ``results``; ends the process (``os._exit``: nothing the parent left buffered is written twice). ``report``:
    ``fn`` is given ``progress=``, whose bytes go to the parent as ``(i, None, n)`` messages, a few MiB at a time."""
    code = 1

    def send(message: bytes) -> None:
        view = memoryview(len(message).to_bytes(_SIZE_BYTES, "little") + message)
        while view:
            view = view[os.write(results, view):]

    try:
        _ignore_sigint()
        while True:
            taken = os.read(tasks, _UNIT_BYTES)
            if not taken:
                break
            i = int.from_bytes(taken, "little")
            pending = [0]

            def progress(n: int, i=i, pending=pending) -> None:
                pending[0] += n
                if pending[0] >= _PROGRESS_BYTES:
                    send(pickle.dumps((i, None, pending[0]), pickle.HIGHEST_PROTOCOL))
                    pending[0] = 0
            try:
                value = fn(*calls[i], progress=progress) if report else fn(*calls[i])
                if pending[0]:
                    send(pickle.dumps((i, None, pending[0]), pickle.HIGHEST_PROTOCOL))
                message = pickle.dumps((i, True, value), pickle.HIGHEST_PROTOCOL)
            except BaseException as e:  # raised in the parent when its turn comes
                message = pickle.dumps((i, False, _portable(e, pickle)), pickle.HIGHEST_PROTOCOL)
            send(message)
        code = 0
    finally:
        os._exit(code)


_PROGRESS_BYTES = 4 << 20  # a worker's progress goes to the parent this many bytes at a time


def _portable(e: BaseException, pickle) -> BaseException:
    """``e`` if it comes back whole through pickle, else a RuntimeError that says what it was."""
    try:
        pickle.loads(pickle.dumps(e))
        return e
    except Exception:
        return RuntimeError(f"{type(e).__name__}: {e}")


def bytes_of(paths) -> int:
    """What a unit of files weighs: their bytes (a file gone meanwhile weighs nothing). The one sizing of work:
    the scheduler's order (:func:`largest_first`) and a progress bar's total (:attr:`Work.total`) both come from
    it, so a bar advanced by the bytes the work reads ends where the work does."""
    total = 0
    for path in paths:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass
    return total


@dataclass(frozen=True)
class Work(Generic[U]):
    """The units of one run, in order, and what each weighs (:func:`bytes_of` of the files it reads): the
    ``sizes=`` every ``--jobs`` map is given, and :attr:`total`, the progress bar's, from the same numbers."""

    units: list[U]
    sizes: list[int]

    @property
    def total(self) -> int:
        return sum(self.sizes)

    def only(self, keep: Callable[[U], bool]) -> Work[U]:
        """The units ``keep`` keeps, with their sizes as counted."""
        kept = [i for i, u in enumerate(self.units) if keep(u)]
        return Work([self.units[i] for i in kept], [self.sizes[i] for i in kept])


def weigh(units: Iterable[U], files: Callable[[U], Iterable[str]]) -> Work[U]:
    """``units`` with their sizes: the bytes of the files ``files(unit)`` names."""
    listed = list(units)
    return Work(listed, [bytes_of(files(u)) for u in listed])


# --- work units -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class WorkUnit:
    """An independent piece of work: one partition (its segments in offset order) or one segment; ``size``: the
    bytes of its segments, what balancing weighs."""

    key: str
    directory: str
    segments: tuple[str, ...]
    size: int


def work_units(found: Scan | Sequence[PartitionLog], *, by: str = "partition") -> list[WorkUnit]:
    """The partitions of a scan (or the given ones) as work units, in scan order: one per partition, or with
    ``by="segment"`` one per segment (for work that needs no state carried from one segment to the next). A
    segment gone since the listing (deleted by retention) weighs nothing: nothing to read."""
    from kdump.read.scan import Scan
    if by not in ("partition", "segment"):
        raise ValueError(f"work units are partitions or segments, not {by!r}")
    partitions = found.partitions if isinstance(found, Scan) else found
    units = []
    for part in partitions:
        sizes = [(seg.log, bytes_of([seg.log])) for seg in part.segments]
        if by == "partition":
            units.append(WorkUnit(part.key, part.directory, tuple(p for p, _ in sizes), sum(n for _, n in sizes)))
        else:
            units.extend(WorkUnit(part.key, part.directory, (p,), n) for p, n in sizes)
    return units


def unit_work(units: Iterable[WorkUnit]) -> Work[WorkUnit]:
    """Work units as a :class:`Work` (their sizes as they were counted)."""
    listed = list(units)
    return Work(listed, [u.size for u in listed])


def group_work(groups: Iterable[SegmentGroup] | Work[SegmentGroup]) -> Work[SegmentGroup]:
    """Segment groups (:meth:`kdump.read.scan.Scan.segment_groups`: a partition's segments a command was pointed
    at) weighed by their segments; a :class:`Work` of them as it is (made once by the command for its bar)."""
    return groups if isinstance(groups, Work) else weigh(groups, lambda g: g.logs)


def path_work(paths) -> Work[str]:
    """Each of ``paths`` with what reading it weighs: a file its bytes, a directory the segments of the
    partitions in it and below it (:func:`work_units`: what a command walks there, not its indexes)."""
    from kdump.read.scan import scan

    def size(path: str) -> int:
        if os.path.isdir(path):
            return sum(u.size for u in work_units(scan([path])))
        return bytes_of([path])
    listed = [os.fspath(p) for p in paths]
    return Work(listed, [size(p) for p in listed])


def largest_first(sizes: Sequence[int]) -> list[int]:
    """The indexes of ``sizes``, largest first (equal sizes in their given order): the order to start units in
    so that workers finish together (a big unit started last would run alone at the end)."""
    return sorted(range(len(sizes)), key=lambda i: -sizes[i])
