"""Atomic file writes: a file appears complete and verified, or not at all.

:class:`AtomicFile` writes to a temporary file in the target's directory, fsyncs it, reads it back
(the bytes must hash to what was written, and an optional ``verify`` callback may check their meaning), and only
then moves it into place:

* without ``overwrite`` the target is created with ``link()``, which fails if the target exists, so "never
  replace" holds even against a racing writer (file systems without hard links: check, then rename);
* with ``overwrite`` an existing target is first kept as ``<name>.bak`` (one backup per file: a previous ``.bak``
  is replaced; made with a hard link, so the target never goes missing), then replaced with ``os.replace``;
* the directory is fsynced after the rename so that the new name survives a crash.

On any failure the temporary file is removed and the target is left untouched. ``protect`` names input files that
must never be written, whatever the target path says (``kdump index rebuild`` passes the ``.log``).

The process writing a temporary holds an exclusive ``flock`` on it for as long as it exists (a kill releases it). A
kdump temporary (:func:`kdump.read.logdir.kdump_temporary`) whose lock can be taken belongs to no living process: it
is *stale* (:func:`is_stale`; :mod:`kdump.write.killed` finds and removes them).

The write layer's other ideas: :mod:`kdump.write.group` (files that appear together, with their
journal), :mod:`kdump.write.killed` (what a killed run left), :mod:`kdump.write.tempdir` (a directory that appears
whole), :mod:`kdump.write.lock` (one writer per directory), :mod:`kdump.write.guards` (what may be written at all).

A test-only hook, ``KDUMP_TEST_KILL_AT=<point>[:<n>]``, SIGKILLs the process at the n-th pass of a named point
(:func:`crash_point`), so that the crash tests are deterministic.

>>> with AtomicFile("00000000000000000000.index", verify=check_index) as f:   # doctest: +SKIP
...     f.write(entries)
"""
from __future__ import annotations

import hashlib
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterable
from typing import BinaryIO

from kdump.errors import KdumpError
from kdump.read.logdir import backup_path, temporary_affixes
from kdump.write.digests import BackgroundSha256
from kdump.write.guards import NOTHING_WRITTEN, current_umask, refuse_irreplaceable, same_file, write_error

try:
    import fcntl
except ImportError:  # no flock (Windows): no temporary can be proven stale, none is removed
    fcntl = None  # type: ignore[assignment]  # tested for None before each use

KILL_AT_ENV = "KDUMP_TEST_KILL_AT"
_passes: dict[str, int] = {}


class AtomicWriteError(KdumpError):
    """The written file did not read back as written, or its ``verify`` callback refused it."""


def crash_point(name: str) -> None:
    """Test hook: SIGKILL this process at the n-th pass of point ``name`` when ``KDUMP_TEST_KILL_AT`` is
    ``name[:n]`` (n = 1 if not given). Does nothing otherwise."""
    wanted = os.environ.get(KILL_AT_ENV)
    if not wanted:
        return
    point, _, nth = wanted.partition(":")
    if point != name:
        return
    _passes[name] = _passes.get(name, 0) + 1
    if _passes[name] == int(nth or 1):
        os.kill(os.getpid(), signal.SIGKILL)


def fsync_directory(directory: str) -> None:
    """Make a rename in ``directory`` durable (POSIX); silently impossible on some platforms."""
    try:
        fd = os.open(directory or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def lock_temporary(fd: int) -> None:
    """Mark a temporary as in use by this process (see the module docstring: a stale one is held by none)."""
    if fcntl is not None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass


def is_stale(path: str) -> bool:
    """True if no living process holds ``path`` (its lock can be taken; it is released at once)."""
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def remove_path(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def mkstemp_beside(target: str, role: str = "data") -> tuple[int, str]:
    directory, name = os.path.split(target)
    prefix, suffix = temporary_affixes(name, role)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    lock_temporary(fd)
    return fd, tmp


class AtomicFile:
    """One file written atomically and verified. Use :meth:`write` then :meth:`commit` (or a ``with`` block)."""

    def __init__(self, path, *, overwrite: bool = False, backup: bool = True,
                 verify: Callable[[str], None] | None = None, protect: Iterable = (),
                 compare_bytes: bool = True):
        self.path = os.path.abspath(os.fspath(path))
        self.overwrite = overwrite
        self.backup = backup
        self.verify = verify
        # ``compare_bytes=False``: the caller's ``verify`` compares what was written itself (a segment
        # writer reads the file back batch by batch anyway), so the file is not read twice.
        self.compare_bytes = compare_bytes
        self.backup_path: str | None = None
        for p in protect:
            p = os.path.abspath(os.fspath(p))
            if self.path == p or (os.path.lexists(self.path) and same_file(self.path, p)):
                raise AtomicWriteError(f"refusing to write {self.path}: it is an input file ({p})")
        if not overwrite and os.path.lexists(self.path):
            raise FileExistsError(f"{self.path} exists (not replaced unless asked to; "
                                  "the old file is then kept as .bak)")
        refuse_irreplaceable(self.path)
        try:
            fd, self._tmp = mkstemp_beside(self.path)
        except OSError as e:
            raise write_error(e, self.path, NOTHING_WRITTEN) from None
        try:
            os.fchmod(fd, 0o666 & ~current_umask())  # mkstemp makes 0600; give what a plain open() would
        except (AttributeError, OSError):
            pass
        self._file: BinaryIO = os.fdopen(fd, "wb")
        self._hash: BackgroundSha256 | None = BackgroundSha256()  # hashed beside the writing
        self._size = 0
        self._done = False
        self._prepared = False

    @classmethod
    def from_file(cls, path, source, *, overwrite: bool = False, backup: bool = True) -> AtomicFile:
        """A finished, already verified file ``source`` (on the same file system) to be moved to ``path``: it is
        renamed to a temporary name beside ``path`` now and placed like a written one (:class:`AtomicGroup`)."""
        f = cls(path, overwrite=overwrite, backup=backup, compare_bytes=False)
        f._file.close()
        os.replace(source, f._tmp)
        f._file = open(f._tmp, "rb")  # noqa: SIM115 -- holds the lock on the moved file until close()
        lock_temporary(f._file.fileno())
        f._size = os.path.getsize(f._tmp)
        f._prepared = True
        f._hash = None
        return f

    @property
    def size(self) -> int:
        return self._size

    @property
    def temporary_path(self) -> str:
        """Where the bytes go until :meth:`commit` moves them to :attr:`path`."""
        return self._tmp

    def written_sha256(self) -> str:
        """sha256 (hex) of the bytes written so far."""
        return self._hash.hexdigest() if self._hash is not None else file_sha256(self._tmp)

    def write(self, data) -> None:
        if self._done or self._prepared:
            raise ValueError("atomic file already finished")
        assert self._hash is not None  # None only for from_file, which is prepared
        try:
            self._file.write(data)
            self._hash.update(data)
            self._size += len(data)
        except OSError as e:
            self.abort()
            raise write_error(e, self.path, NOTHING_WRITTEN) from None
        except BaseException:
            self.abort()
            raise

    def flush(self) -> None:
        """Push buffered bytes to the temporary file (commit does this itself)."""
        self._file.flush()

    def prepare(self, *, sync: bool = True) -> None:
        """fsync, read back and verify the temporary file; the target is not touched (idempotent). ``sync=False``:
        the caller makes the bytes durable itself before placing the file (:func:`commit_groups`, one sync for
        many files)."""
        if self._prepared:
            return
        if self._done:
            raise ValueError("atomic file already finished")
        try:
            self._file.flush()
            if sync:
                os.fsync(self._file.fileno())
            if self.compare_bytes:
                self._check_readback()
            if self.verify is not None:
                self.verify(self._tmp)
        except OSError as e:
            self.abort()
            raise write_error(e, self.path, NOTHING_WRITTEN) from None
        except BaseException:
            self.abort()
            raise
        self._prepared = True

    def commit(self) -> str:
        """fsync, read back and verify, move into place; returns the final path."""
        self.prepare()
        self.place()
        fsync_directory(os.path.dirname(self.path))
        return self.path

    def place(self) -> str:
        """Move the prepared temporary into place (keeping the old file as ``.bak`` if ``backup``); the caller
        fsyncs the directory."""
        if self._done or not self._prepared:
            raise ValueError("atomic file not prepared, or already finished")
        try:
            if os.path.lexists(self.path):
                if not self.overwrite:
                    raise FileExistsError(f"{self.path} exists (not replaced unless asked to)")
                refuse_irreplaceable(self.path)  # again: it may have changed since the write began
                if self.backup:
                    self.backup_path = self._keep_backup()
                os.replace(self._tmp, self.path)
            else:
                self._place_new()
        except OSError as e:
            self.abort()
            raise write_error(e, self.path) from None
        except BaseException:
            self.abort()
            raise
        self._finish()
        return self.path

    def move_aside(self) -> None:
        """Take the old target out of the way before the group's other files are placed: renamed to its ``.bak``
        (the previous one replaced), or removed when no backup is kept."""
        if not os.path.lexists(self.path):
            return
        if not self.overwrite:
            raise FileExistsError(f"{self.path} exists (not replaced unless asked to)")
        refuse_irreplaceable(self.path)
        try:
            if self.backup:
                self.backup_path = backup_path(self.path)
                os.replace(self.path, self.backup_path)
            else:
                os.unlink(self.path)
        except OSError as e:
            raise write_error(e, self.path) from None

    def abort(self) -> None:
        """Drop the temporary file (idempotent); the target is not touched."""
        if self._done:
            return
        self._finish()
        try:
            os.unlink(self._tmp)
        except FileNotFoundError:
            pass

    def _finish(self) -> None:
        self._done = True
        try:
            self._file.close()  # releases the lock: the temporary name is gone (or going) now
        except OSError:
            pass

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    # --- internals ------------------------------------------------------------------------------
    def _check_readback(self) -> None:
        h = hashlib.sha256()
        n = 0
        with open(self._tmp, "rb") as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                h.update(chunk)
                n += len(chunk)
        assert self._hash is not None  # None only for from_file, which is never read back
        if n != self._size or h.digest() != self._hash.digest():
            raise AtomicWriteError(f"verification of {self.path} failed: read back {n} bytes that differ from "
                                   f"the {self._size} bytes written")

    def _place_new(self) -> None:
        try:
            os.link(self._tmp, self.path)  # fails if the target appeared meanwhile
        except FileExistsError:
            raise FileExistsError(f"{self.path} exists (not replaced unless asked to)") from None
        except OSError:
            if os.path.lexists(self.path):  # no hard links here: check, then rename
                raise FileExistsError(f"{self.path} exists (not replaced unless asked to)") from None
            os.replace(self._tmp, self.path)
        else:
            os.unlink(self._tmp)

    def _keep_backup(self) -> str:
        """The current target as ``<name>.bak``, replacing an older one in one rename: hard-linked (or, without
        hard links, copied) to a temporary name first, so neither name is ever missing."""
        bak = backup_path(self.path)
        fd, tmp = mkstemp_beside(bak)
        os.close(fd)
        try:
            os.unlink(tmp)
            try:
                os.link(self.path, tmp)
            except FileExistsError:
                raise
            except OSError:  # no hard links
                shutil.copy2(self.path, tmp)
            os.replace(tmp, bak)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise
        return bak


def write_atomic(path, data: bytes, **kwargs) -> str:
    """Write ``data`` to ``path`` with :class:`AtomicFile`; returns the final path."""
    f = AtomicFile(path, **kwargs)
    f.write(data)
    return f.commit()


def sync_files(directory: str, files: list[AtomicFile]) -> None:
    """Make the written temporaries durable: one ``syncfs`` of the directory's file system where the platform has
    it (Linux), else an fsync per file."""
    if _syncfs is not None and len(files) > 1:
        fd = os.open(directory, os.O_RDONLY)
        try:
            if _syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    for f in files:
        os.fsync(f._file.fileno())


def _find_syncfs():
    """libc's ``syncfs(fd)`` (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        import ctypes.util
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.syncfs
    except (OSError, AttributeError):
        return None


_syncfs = _find_syncfs()
