"""The partition lock: one kdump run at a time writes files in a directory (:func:`partition_lock`)."""
from __future__ import annotations

import contextlib
import errno
import os

from kdump.errors import WriteError
from kdump.read.logdir import KDUMP_LOCK

try:
    import fcntl
except ImportError:  # no flock (Windows): nothing is locked
    fcntl = None  # type: ignore[assignment]  # tested for None before each use


class PartitionBusy(WriteError):
    """Another kdump run holds the lock of the directory this run would write into: nothing was written."""


_held: dict[str, list] = {}  # directory -> [fd, depth]: the locks this process holds (taken again, not twice)


def _lock_holder(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            pid = f.read(32).strip()
    except OSError:
        pid = ""
    return f"another kdump run (pid {pid})" if pid.isdigit() else "another kdump run"


@contextlib.contextmanager
def partition_lock(directory):
    """Hold the lock of ``directory`` (a partition directory, or the directory an output goes to) while this run
    writes files there: ``<directory>/.kdump.lock`` (:data:`kdump.read.logdir.KDUMP_LOCK`, Kafka's ``.lock`` habit
    of its log directories), exclusively ``flock``-ed and holding this process's pid. A second run that would
    write there is refused at once with :class:`PartitionBusy` (exit 2) naming the first, instead of racing it
    rename for rename (issue 31: two ``index rebuild`` of one partition left a journal that ``verify`` then
    reported as an interrupted write). Taken again by the same process (a partition's groups), it nests.

    The lock file is removed when the lock is released: removed while still locked, and a run that took the lock
    checks that the file it locked is still the one at the name (else it locks the new one), so that no two runs
    ever hold two different files. A killed run's file stays (its lock died with it); the next run takes it and
    removes it. Without flock (Windows) nothing is locked."""
    directory = os.path.abspath(os.fspath(directory))
    held = _held.get(directory)
    if held is not None or fcntl is None:
        if held is not None:
            held[1] += 1
        try:
            yield
        finally:
            if held is not None:
                held[1] -= 1
        return
    path = os.path.join(directory, KDUMP_LOCK)
    fd = _take_lock(path)
    _held[directory] = [fd, 1]
    try:
        yield
    finally:
        del _held[directory]
        try:
            os.unlink(path)  # while locked: a run waiting on this file finds it gone and takes a new one
        except OSError:
            pass
        os.close(fd)


def _take_lock(path: str) -> int:
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0),
                         0o644)
        except OSError as e:
            raise WriteError(e.errno, f"{e.strerror or e} (its lock {KDUMP_LOCK} cannot be made); nothing was "
                             "written", os.path.dirname(path)) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise PartitionBusy(errno.EBUSY, f"{_lock_holder(path)} is writing files in this directory (it holds "
                                f"{KDUMP_LOCK}); nothing was written (run again when it has finished)",
                                os.path.dirname(path)) from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if not same:  # its holder removed it as we waited for it: lock the one at the name now
            os.close(fd)
            continue
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        except OSError:
            pass  # the pid only names the holder in a refusal
        return fd
