"""Atomic file writes: a file appears complete and verified, or not at all.

:class:`AtomicFile` writes to a temporary file in the target's directory, fsyncs it, reads it back
(the bytes must hash to what was written, and an optional ``verify`` callback may check their meaning),
and only then moves it into place:

* without ``overwrite`` the target is created with ``link()``, which fails if the target exists, so
  "never replace" holds even against a racing writer (file systems without hard links: check, then rename);
* with ``overwrite`` an existing target is first kept as ``<name>.bak`` (``.bak.1``, ``.bak.2``, ... if
  that exists too; made with a hard link, so the target never goes missing), then replaced with
  ``os.replace`` in one step;
* the directory is fsynced after the rename so that the new name survives a crash.

On any failure the temporary file is removed and the target is left untouched. ``protect`` names
input files that must never be written, whatever the target path says (``kdump index rebuild`` passes the
``.log``): a target that is, or is a link to, a protected file is refused before anything is written.

>>> with AtomicFile("00000000000000000000.index", verify=check_index) as f:   # doctest: +SKIP
...     f.write(entries)
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from typing import Callable, Iterable

from kdump.errors import KdumpError


class AtomicWriteError(KdumpError):
    """The written file did not read back as written, or its ``verify`` callback refused it."""


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


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def backup_name(path: str) -> str:
    """The first free name of ``path.bak``, ``path.bak.1``, ``path.bak.2``, ..."""
    candidate = path + ".bak"
    n = 0
    while os.path.lexists(candidate):
        n += 1
        candidate = f"{path}.bak.{n}"
    return candidate


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
            if self.path == p or (os.path.lexists(self.path) and _same_file(self.path, p)):
                raise AtomicWriteError(f"refusing to write {self.path}: it is an input file ({p})")
        if not overwrite and os.path.lexists(self.path):
            raise FileExistsError(f"{self.path} exists (use --force to replace it; the old file is kept as .bak)")
        directory, name = os.path.split(self.path)
        fd, self._tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
        try:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; give what a plain open() would
        except (AttributeError, OSError):
            pass
        self._file = os.fdopen(fd, "wb")
        self._hash = hashlib.sha256()
        self._size = 0
        self._done = False

    @property
    def size(self) -> int:
        return self._size

    @property
    def temporary_path(self) -> str:
        """Where the bytes go until :meth:`commit` moves them to :attr:`path`."""
        return self._tmp

    def written_sha256(self) -> str:
        """sha256 (hex) of the bytes written so far."""
        return self._hash.hexdigest()

    def write(self, data) -> None:
        if self._done:
            raise ValueError("atomic file already finished")
        try:
            self._file.write(data)
            self._hash.update(data)
            self._size += len(data)
        except BaseException:
            self.abort()
            raise

    def flush(self) -> None:
        """Push buffered bytes to the temporary file (commit does this itself)."""
        self._file.flush()

    def commit(self) -> str:
        """fsync, read back and verify, move into place; returns the final path."""
        if self._done:
            raise ValueError("atomic file already finished")
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
            if self.compare_bytes:
                self._check_readback()
            if self.verify is not None:
                self.verify(self._tmp)
            if os.path.lexists(self.path):
                if not self.overwrite:
                    raise FileExistsError(f"{self.path} exists (use --force to replace it)")
                if self.backup:
                    self.backup_path = self._keep_backup()
                os.replace(self._tmp, self.path)
            else:
                self._place_new()
        except BaseException:
            self.abort()
            raise
        self._done = True
        fsync_directory(os.path.dirname(self.path))
        return self.path

    def abort(self) -> None:
        """Drop the temporary file (idempotent); the target is not touched."""
        self._done = True
        try:
            self._file.close()
        except OSError:
            pass
        try:
            os.unlink(self._tmp)
        except FileNotFoundError:
            pass

    def __enter__(self) -> "AtomicFile":
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
        if n != self._size or h.digest() != self._hash.digest():
            raise AtomicWriteError(f"verification of {self.path} failed: read back {n} bytes that differ from "
                                   f"the {self._size} bytes written")

    def _place_new(self) -> None:
        try:
            os.link(self._tmp, self.path)  # fails if the target appeared meanwhile
        except FileExistsError:
            raise FileExistsError(f"{self.path} exists (use --force to replace it)") from None
        except OSError:
            if os.path.lexists(self.path):  # no hard links here: check, then rename
                raise FileExistsError(f"{self.path} exists (use --force to replace it)") from None
            os.replace(self._tmp, self.path)
        else:
            os.unlink(self._tmp)

    def _keep_backup(self) -> str:
        bak = backup_name(self.path)
        try:
            os.link(self.path, bak)
        except FileExistsError:  # raced with another backup: take the next free name
            bak = backup_name(self.path)
            os.link(self.path, bak)
        except OSError:  # no hard links: copy through a temporary name, then rename
            directory = os.path.dirname(self.path)
            fd, tmp = tempfile.mkstemp(prefix=".bak.", suffix=".tmp", dir=directory)
            os.close(fd)
            try:
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
