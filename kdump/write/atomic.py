"""Atomic file writes: a file, or a group of files, appears complete and verified, or recognisably not at all.

**One file.** :class:`AtomicFile` writes to a temporary file in the target's directory, fsyncs it, reads it back
(the bytes must hash to what was written, and an optional ``verify`` callback may check their meaning), and only
then moves it into place:

* without ``overwrite`` the target is created with ``link()``, which fails if the target exists, so "never
  replace" holds even against a racing writer (file systems without hard links: check, then rename);
* with ``overwrite`` an existing target is first kept as ``<name>.bak`` (one backup per file: a previous ``.bak``
  is replaced; made with a hard link, so the target never goes missing), then replaced with ``os.replace``;
* the directory is fsynced after the rename so that the new name survives a crash.

On any failure the temporary file is removed and the target is left untouched. ``protect`` names input files that
must never be written, whatever the target path says (``kdump index rebuild`` passes the ``.log``).

**A group.** :class:`AtomicGroup` makes a segment and its indexes (``kdump convert``), or a segment's indexes
(``kdump index rebuild``), appear together. One member is the group's *last* file, the segment's ``.index``: it
is the first name to go and the last to appear, so that every state a crash can leave is recognisably incomplete,
to Kafka as to kdump:

1. every member is written to its temporary and verified (fsync, read back, ``verify``). A crash here leaves only
   temporaries; the targets are untouched;
2. a journal ``.<last name>.<random>.group.tmp`` listing the members (target, temporary, size, sha256) is written
   and fsynced, with the directory;
3. the last member's old file, if any, is moved to its ``.bak`` (or removed when no backup is kept), and the
   directory fsynced. From here until step 5 **the segment has no ``.index``**: Kafka's log loading then recovers
   the segment and rebuilds all its indexes ("Could not find offset index file ... rebuilding index files"), an
   ``.index``/``.timeindex`` without their ``.log`` are orphans Kafka deletes, and ``kdump index check`` reports
   the missing ``.index`` and the journal (``kdump-write-interrupted``);
4. the other members are renamed into place (the old ones kept as ``.bak`` first), then the directory fsynced;
5. the last member is renamed into place, the directory fsynced, the journal removed and the directory fsynced.

So a new ``.index`` is never beside an old ``.timeindex``, and a new ``.log`` never beside old indexes.

A group's members may lie in directories below its own (the journal, in the group's directory, names them by
their path under it): the Spark writer commits the segments of many partitions, the log directory's checkpoints
and a stream's batch record as one group. Such a group can be made all or nothing in-process (``undo=True``: the
files a group replaces are kept under temporary names until it is placed, and a failure after a target was
touched puts everything back) and can say, in its journal, what the next run does after a kill
(``resolve="finish"``: place the rest from the temporaries; ``"undo"``: take it back), which
:func:`resolve_interrupted` carries out; ``key`` holds the writer's own facts (a stream's batch id).

**Leftovers.** The process writing a temporary, a journal or a temporary directory holds an exclusive ``flock``
on it for as long as it exists (a kill releases it). A kdump temporary (:func:`kdump.read.logdir.kdump_temporary`)
whose lock can be taken belongs to no living process: it is *stale*. Before a group is written, the stale
temporaries of its targets and the stale journals naming them are removed (:func:`clean_leftovers`); a target a
stale journal lists and whose bytes are that journal's (size and sha256) is the interrupted run's own output: it
is replaced without ``--force`` and without a backup, so the ``.bak`` keeps the file from before that run.
``kdump verify`` and ``kdump index check`` report stale leftovers (:func:`leftovers`).

A test-only hook, ``KDUMP_TEST_KILL_AT=<point>[:<n>]``, SIGKILLs the process at the n-th pass of a named point
(:func:`crash_point`), so that the crash tests are deterministic.

>>> with AtomicFile("00000000000000000000.index", verify=check_index) as f:   # doctest: +SKIP
...     f.write(entries)
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import signal
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import BinaryIO

from kdump.errors import KdumpError, WriteError
from kdump.read.logdir import KDUMP_LOCK, backup_path, file_type_name, kdump_temporary, temporary_affixes
from kdump.write.digests import BackgroundSha256

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


def _lock(fd: int) -> None:
    """Mark a temporary as in use by this process (see "Leftovers" above)."""
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


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    except FileNotFoundError:
        pass


def refuse_irreplaceable(path: str) -> None:
    """Raise unless ``path`` is absent or a regular file: ``--force`` replaces only what kdump would have written
    (never a FIFO, a device or a socket, which writing would turn into a plain file or block on, never a
    directory, and never a symbolic link, whose target another user may own)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"{file_type_name(mode)}, not replaced: only a regular file is ever replaced",
                      path)


def write_error(error: OSError, path: str, left: str = "") -> OSError:
    """``error`` of writing ``path`` as a :class:`~kdump.errors.WriteError` naming ``path`` (the file that could not
    be written: never the temporary, never an input) and saying what was ``left``; a refusal (FileExistsError)
    and an error already told apart stay as they are."""
    if isinstance(error, (FileExistsError, WriteError)):
        return error
    reason = error.strerror or str(error)
    return WriteError(error.errno, f"{reason}; {left}" if left else reason, path)


NOTHING_WRITTEN = "nothing was written (no temporary is left, the old file is untouched)"
TAKEN_BACK = "nothing was written (any file already moved was moved back)"


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class InputRefused(FileExistsError):
    """The output named is the input itself: refused whatever ``--force`` says, so no message may suggest it."""


def refuse_input(source: str, destination: str, *, directory: bool = False) -> None:
    """Raise :class:`InputRefused` when ``destination`` is ``source`` (or a link to it): kdump never writes over its
    input, whatever the output path says (convert and salvage, of a segment or of a partition directory)."""
    if os.path.exists(destination) and _same_file(source, destination):
        message = ("this is the input directory, and kdump never modifies its input" if directory else
                   "this is the input itself, and kdump never modifies its input (write elsewhere with -o)")
        raise InputRefused(errno.EEXIST, message, destination)


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def current_umask() -> int:
    """The process's umask (read by setting it, so set straight back)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _mkstemp(target: str, role: str = "data") -> tuple[int, str]:
    directory, name = os.path.split(target)
    prefix, suffix = temporary_affixes(name, role)
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=directory)
    _lock(fd)
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
            if self.path == p or (os.path.lexists(self.path) and _same_file(self.path, p)):
                raise AtomicWriteError(f"refusing to write {self.path}: it is an input file ({p})")
        if not overwrite and os.path.lexists(self.path):
            raise FileExistsError(f"{self.path} exists (not replaced unless asked to; "
                                  "the old file is then kept as .bak)")
        refuse_irreplaceable(self.path)
        try:
            fd, self._tmp = _mkstemp(self.path)
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
        _lock(f._file.fileno())
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
        fd, tmp = _mkstemp(bak)
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


# --- groups ------------------------------------------------------------------------------------------------------
class AtomicGroup:
    """Files of one directory that appear together (see the module docstring for the steps and the states).

    >>> group = AtomicGroup(directory, overwrite=force)                        # doctest: +SKIP
    >>> group.clean([index_path, timeindex_path])     # stale leftovers of an interrupted run
    >>> t = group.add(timeindex_path); t.write(time_entries)
    >>> i = group.add(index_path, last=True); i.write(offset_entries)
    >>> group.commit()
    """

    def __init__(self, directory, *, overwrite: bool = False, backup: bool = True, protect: Iterable = (),
                 undo: bool = False, resolve: str | None = None, key: dict | None = None):
        self.directory = os.path.abspath(os.fspath(directory))
        self.overwrite = overwrite
        self.backup = backup
        self.protect = list(protect)
        # ``undo``: a failure after a target was touched takes the group back (the files placed removed, the
        # files replaced restored) instead of leaving its journal for the next run: all or nothing in-process
        self.undo = undo
        # ``resolve``: what :func:`resolve_interrupted` does with this group's journal after a kill ("finish":
        # place the rest; "undo": take it back); None: the next run of the same command cleans it (clean_leftovers)
        if resolve not in (None, "finish", "undo"):
            raise ValueError(f"resolve={resolve!r}: finish, undo or None")
        self.resolve = resolve
        self.key = key  # the writer's own facts, kept in the journal (e.g. a stream's batch id)
        self.members: list[AtomicFile] = []
        self.last: AtomicFile | None = None
        self.made: list[str] = []  # directories move_in made (removed again if the group is taken back)
        self.cleaned: list[str] = []  # stale leftovers removed
        self.interrupted: set[str] = set()  # target names an interrupted run placed (replaced freely)

    def clean(self, paths, found: list[Leftover] | None = None) -> list[str]:
        """Remove the stale leftovers of an interrupted kdump run that wrote any of ``paths``; returns the
        targets among ``paths`` that exist and may not be replaced (exist, not ``overwrite``, and not that
        run's own output). Call it before adding members. ``found``: the directory's :func:`leftovers`, listed
        once for many groups (see :func:`clean_leftovers`)."""
        by_directory: dict[str, set[str]] = {}
        for p in paths:
            where, name = os.path.split(os.path.join(self.directory, os.fspath(p)))
            by_directory.setdefault(where, set()).add(name)
        for where, names in by_directory.items():
            removed, placed = clean_leftovers(where, names, found if where == self.directory else None)
            self.cleaned.extend(removed)
            self.interrupted |= {self._name(os.path.join(where, n)) for n in placed}
        if self.overwrite:
            return []
        return [os.fspath(p) for p in paths if os.path.lexists(p) and not self.may_replace(p)]

    def _name(self, path) -> str:
        """A member's name in the journal: its path under the group's directory (its file name when it is there)."""
        return os.path.relpath(os.path.join(self.directory, os.fspath(path)), self.directory)

    def may_replace(self, path) -> bool:
        return self.overwrite or self._name(path) in self.interrupted

    def add(self, path, *, verify: Callable[[str], None] | None = None, last: bool = False,
            compare_bytes: bool = True, backup: bool = True) -> AtomicFile:
        """A new member written through the returned :class:`AtomicFile` (``backup=False``: the old file is not
        kept, e.g. because it holds the same bytes)."""
        ours = self._name(path) in self.interrupted
        f = AtomicFile(path, overwrite=self.overwrite or ours, backup=self.backup and backup and not ours,
                       verify=verify,
                       protect=self.protect, compare_bytes=compare_bytes)
        return self.adopt(f, last=last)

    def adopt(self, f: AtomicFile, *, last: bool = False) -> AtomicFile:
        """A member made elsewhere (e.g. :class:`kdump.write.segment.SegmentWriter`'s file, or
        :meth:`AtomicFile.from_file`), in the group's directory or one below it."""
        if self._name(f.path).split(os.sep)[0] == os.pardir:
            f.abort()
            self.abort()
            raise ValueError(f"{f.path} is not in {self.directory}")
        if last:
            if self.last is not None:
                raise ValueError("a group has one last file")
            self.last = f
        self.members.append(f)
        return f

    def move_in(self, path, source, *, last: bool = False) -> AtomicFile:
        """A finished, verified file ``source`` (same file system) as a new member at ``path`` (never replacing a
        file), the directories it needs made (and removed again if the group is taken back)."""
        missing = []
        parent = os.path.dirname(os.path.abspath(os.fspath(path)))
        while not os.path.isdir(parent) and parent.startswith(self.directory + os.sep):
            missing.append(parent)
            parent = os.path.dirname(parent)
        try:
            for d in reversed(missing):
                os.mkdir(d)
                self.made.append(d)
            f = AtomicFile.from_file(path, source)
        except BaseException:
            self.abort()
            raise
        return self.adopt(f, last=last)

    @property
    def backups(self) -> list[str]:
        return [m.backup_path for m in self.members if m.backup_path]

    def abort(self) -> None:
        for m in self.members:
            m.abort()
        _remove_empty(self.made)  # (a directory holding a placed member is not empty: it stays)

    def commit(self) -> list[str]:
        """Verify every member, then place them (the last one last); returns the final paths in member order."""
        order = [m for m in self.members if m is not self.last] + ([self.last] if self.last else [])
        try:
            for m in order:
                m.prepare()
        except BaseException:
            self.abort()
            raise
        crash_point("group-written")
        if (len(order) <= 1 and not (self.undo or self.resolve or self.key)) or not order:
            return [m.commit() for m in order]
        previous: dict[str, str] = {}
        try:
            if self.undo or self.resolve == "undo":
                previous = _keep_previous(order)
            journal = _Journal(self.directory, order,
                               {"key": self.key, "resolve": self.resolve, "made": self.made, "previous": previous})
        except OSError as e:
            self.abort()
            _drop(previous.values())
            self._remove_made()
            raise write_error(e, order[-1].path, NOTHING_WRITTEN) from None
        crash_point("group-journal")
        touched = False
        directories = sorted({os.path.dirname(m.path) for m in order})
        try:
            if self.last is not None:
                self.last.move_aside()
                touched = True
                _fsync_all(directories)
                crash_point("group-placed")
            for m in order:
                if m is self.last:
                    _fsync_all(directories)
                m.place()
                touched = True
                crash_point("group-placed")
            _fsync_all(directories)
        except BaseException as e:
            self.abort()
            if not (self.undo and touched):
                journal.leave(touched)
                if not touched:
                    _drop(previous.values())
                    self._remove_made()
                raise
            journal.release()
            try:  # all or nothing: what was placed is taken back, with the journal's own record of it
                _resolve(_read_group_journal(journal.path, self.directory), self.directory, "undo")
            except OSError:
                raise e from None  # the journal stays: the next run's resolve_interrupted takes the group back
            if isinstance(e, OSError) and e.filename is not None:
                reason = e.strerror or str(e)
                raise WriteError(e.errno, f"{reason}; {TAKEN_BACK}", e.filename) from None
            raise
        _drop(previous.values())
        journal.remove()
        return [m.path for m in self.members]

    def _remove_made(self) -> None:
        _remove_empty(self.made)
        self.made = []


def commit_groups(groups: list[AtomicGroup]) -> list[list[str]]:
    """Commit several groups of one directory together (``kdump index rebuild`` of a partition: one group per
    segment): the steps of :meth:`AtomicGroup.commit` taken for every group at once, so that the cost is one
    file-system sync and a handful of directory fsyncs per call instead of about ten fsyncs per group.

    The states a crash can leave are those of one group, for each group: every member verified before any target
    is touched; one journal listing every member of every group; every group's last file moved aside (each
    segment without its ``.index`` from here), the others placed, then the last files placed; the journal
    removed. A group of one file has no window and is placed with the others. Returns each group's final paths."""
    if not groups:
        return []
    directory = groups[0].directory
    if any(g.directory != directory for g in groups):
        raise ValueError("commit_groups: the groups are not all in one directory")
    members = [m for g in groups for m in g.members]
    if not members:  # every file already held its bytes
        return [[] for _ in groups]

    def abort_all() -> None:
        for g in groups:
            g.abort()

    try:
        for m in members:
            m.prepare(sync=False)
        try:
            sync_files(directory, members)
        except OSError as e:
            raise write_error(e, members[-1].path, NOTHING_WRITTEN) from None
    except BaseException:
        abort_all()
        raise
    crash_point("group-written")
    lasts = [g.last for g in groups if g.last is not None and len(g.members) > 1]
    others = [m for m in members if not any(m is last for last in lasts)]
    try:
        journal = _Journal(directory, others + lasts)
    except OSError as e:
        abort_all()
        raise write_error(e, (others + lasts)[-1].path, NOTHING_WRITTEN) from None
    crash_point("group-journal")
    touched = False
    try:
        for last in lasts:
            last.move_aside()
            touched = True
        fsync_directory(directory)
        crash_point("group-placed")
        for m in others:
            m.place()
            touched = True
            crash_point("group-placed")
        fsync_directory(directory)
        for last in lasts:
            last.place()
            crash_point("group-placed")
        fsync_directory(directory)
    except BaseException:
        abort_all()
        journal.leave(touched)
        raise
    journal.remove()
    return [[m.path for m in g.members] for g in groups]


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


class _Journal:
    """The record of a group being renamed into place, held locked while the group is placed."""

    def __init__(self, directory: str, order: list[AtomicFile], extra: dict | None = None):
        members = [{"target": os.path.relpath(m.path, directory), "temporary": m.temporary_path, "size": m.size,
                    "sha256": m.written_sha256()} for m in order]
        doc = {"kdump": "atomic-group", "pid": os.getpid(), "members": members}
        # only what a group has: a plain group's journal is as it always was
        doc.update({name: value for name, value in (extra or {}).items() if value})
        fd, self.path = _mkstemp(os.path.join(directory, os.path.basename(order[-1].path)), "journal")
        try:
            self._file = os.fdopen(fd, "w", encoding="utf-8")
            json.dump(doc, self._file)
            self._file.flush()
            os.fsync(fd)
        except BaseException:  # not written whole (a full disk): no target was touched, so no journal stays
            os.unlink(self.path)
            try:
                self._file.close() if hasattr(self, "_file") else os.close(fd)
            except OSError:
                pass
            raise
        fsync_directory(directory)
        self.directory = directory

    def release(self) -> None:
        try:
            self._file.close()
        except OSError:
            pass

    def leave(self, touched: bool) -> None:
        """After a failed placing: the journal stays when a target was touched (the directory is recognisably in
        the middle of its group: ``kdump-write-interrupted``), and goes when none was (every file is as before:
        nothing was interrupted, and a journal would say otherwise)."""
        if touched:
            self.release()
            return
        try:
            self.remove()
        except OSError:
            self.release()

    def remove(self) -> None:
        os.unlink(self.path)
        self.release()
        fsync_directory(self.directory)


# --- leftovers ---------------------------------------------------------------------------------------------------
@dataclass
class Leftover:
    """A kdump temporary no living process holds. ``role``: ``data`` (a file or directory being written) or
    ``journal``; ``target``: the name it was to become (a journal: its last file); ``members``: a journal's list
    of (target, temporary, size, sha256) dicts, with ``placed`` set on those whose target now holds its bytes."""

    path: str
    role: str
    target: str
    members: list = field(default_factory=list)
    unreadable: str | None = None
    extra: dict = field(default_factory=dict)  # a journal's key, resolve, made and previous (AtomicGroup's)


def leftovers(directory) -> list[Leftover]:
    """The stale kdump temporaries and journals in ``directory``, in name order (for ``verify``/``index check``)."""
    directory = os.fspath(directory)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        temp = kdump_temporary(name)
        path = os.path.join(directory, name)
        if temp is None or not is_stale(path):
            continue
        left = Leftover(path, temp.role, temp.target)
        if temp.role == "journal":
            _read_journal(left, directory)
        out.append(left)
    return out


def _read_journal(left: Leftover, directory: str) -> None:
    try:
        with open(left.path, encoding="utf-8") as f:
            doc = json.load(f)
        members = [dict(m) for m in doc["members"]]
        for m in members:
            target = _member_path(directory, m["target"])
            m["placed"] = (os.path.isfile(target) and os.path.getsize(target) == m["size"]
                           and file_sha256(target) == m["sha256"])
        extra = {name: doc[name] for name in ("key", "resolve", "made", "previous") if name in doc}
    except (OSError, ValueError, KeyError, TypeError) as e:
        left.unreadable = str(e)
        return
    left.members = members
    left.extra = extra


def _member_path(directory: str, name) -> str:
    """Where a journal's member ``name`` (its path under the journal's directory) is; a name that leaves the
    directory is no journal kdump wrote."""
    name = os.path.normpath(str(name))
    if os.path.isabs(name) or name.split(os.sep)[0] == os.pardir:
        raise ValueError(f"member {name!r} is not under the journal's directory")
    return os.path.join(directory, name)


def _read_group_journal(path: str, directory: str) -> Leftover:
    temp = kdump_temporary(path)
    left = Leftover(path, "journal", temp.target if temp else "")
    _read_journal(left, directory)
    return left


def _keep_previous(order: list[AtomicFile]) -> dict[str, str]:
    """The files a group will replace, each kept under a temporary name (a hard link, or a copy) until the group is
    placed, so that taking the group back restores them: member name -> the temporary."""
    kept: dict[str, str] = {}
    try:
        for m in order:
            if not os.path.lexists(m.path):
                continue
            fd, tmp = _mkstemp(m.path)
            os.close(fd)
            os.unlink(tmp)
            try:
                os.link(m.path, tmp)
            except OSError:  # no hard links here
                shutil.copy2(m.path, tmp)
            kept[m.path] = tmp
    except BaseException:
        _drop(kept.values())
        raise
    return kept


def _drop(paths: Iterable[str]) -> None:
    for p in paths:
        _remove(p)


def _remove_empty(directories: Iterable[str]) -> None:
    for d in reversed(list(directories)):
        try:
            os.rmdir(d)
        except OSError:
            pass


def _fsync_all(directories: Iterable[str]) -> None:
    for d in directories:
        fsync_directory(d)


def _resolve(left: Leftover, directory: str, how: str) -> str:
    """Finish (``how`` "finish": every member not yet placed moved in from its temporary) or take back ("undo":
    members placed removed, files replaced restored, directories made removed) the group of the journal ``left``;
    the journal is removed. A group whose last member is placed is complete (finished whatever ``how``); one that
    cannot be finished (a temporary gone or not its bytes) is taken back. Returns "finished" or "undone"."""
    if left.unreadable is not None:
        raise WriteError(errno.EIO, f"the journal cannot be read ({left.unreadable}); nothing was resolved",
                         left.path)
    members = left.members
    previous = {str(k): str(v) for k, v in (left.extra.get("previous") or {}).items()}
    paths = [_member_path(directory, m["target"]) for m in members]
    complete = bool(members) and members[-1]["placed"]
    if how == "finish" or complete:
        if complete or all(m["placed"] or _holds(str(m["temporary"]), m) for m in members):
            for m, path in zip(members, paths, strict=True):
                if not m["placed"]:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    os.replace(str(m["temporary"]), path)
            how = "finish"
        else:
            how = "undo"
    if how == "undo":
        for m, path in reversed(list(zip(members, paths, strict=True))):
            kept = previous.pop(path, None)
            if kept is not None and os.path.lexists(kept):
                if m["placed"] or not os.path.lexists(path):
                    os.replace(kept, path)
                else:  # never replaced: the old file is still there
                    _remove(kept)
            elif m["placed"]:
                os.unlink(path)
    for m in members:
        tmp = str(m["temporary"])
        if kdump_temporary(tmp) is not None:
            _remove(tmp)
    _drop(previous.values())
    if how == "undo":
        _remove_empty(str(d) for d in left.extra.get("made") or ())
    _fsync_all(sorted({os.path.dirname(p) for p in paths}))
    _remove(left.path)
    fsync_directory(directory)
    return "finished" if how == "finish" else "undone"


def _holds(path: str, member: dict) -> bool:
    return (os.path.isfile(path) and os.path.getsize(path) == member["size"]
            and file_sha256(path) == member["sha256"])


def resolve_interrupted(directory) -> list[tuple[dict | None, str]]:
    """Resolve the groups of ``directory`` that a killed run left between renames and that said how
    (``AtomicGroup(resolve=...)``): each finished or taken back as its journal says, its temporaries removed.
    Returns each group's (key, "finished" or "undone"). Journals of plain groups are left to
    :func:`clean_leftovers` (the next run of the same command)."""
    directory = os.path.abspath(os.fspath(directory))
    return [(left.extra.get("key"), _resolve(left, directory, str(left.extra["resolve"])))
            for left in leftovers(directory) if left.role == "journal" and left.extra.get("resolve")]


def clean_leftovers(directory, targets, found: list[Leftover] | None = None) -> tuple[list[str], set[str]]:
    """Remove the stale temporaries of ``targets`` (names) in ``directory`` and the stale journals naming any of
    them (with the temporaries they list); returns (the paths removed, the target names a removed journal's group
    had already placed). A journal that cannot be read is left alone.

    ``found``: the directory's :func:`leftovers`, listed once by a caller that cleans for many targets in turn (a
    partition of thousands of segments: listing the directory for each would cost its size squared); what is
    removed here is taken out of it."""
    targets = set(targets)
    removed: list[str] = []
    placed: set[str] = set()
    if found is None:
        found = leftovers(directory)
    for left in list(found):
        if left.role == "data" and left.target in targets:
            found.remove(left)
            _remove(left.path)
            removed.append(left.path)
        elif (left.role == "journal" and left.unreadable is None and not left.extra.get("resolve")
              and any(m["target"] in targets for m in left.members)):
            found.remove(left)
            for m in left.members:
                tmp = str(m["temporary"])
                if kdump_temporary(tmp) is not None and os.path.lexists(tmp) and is_stale(tmp):
                    _remove(tmp)
                    removed.append(tmp)
                if m["placed"]:
                    placed.add(m["target"])
            _remove(left.path)
            removed.append(left.path)
    if removed:
        fsync_directory(os.fspath(directory))
    return removed, placed


class TemporaryDirectory:
    """A directory ``.<name>.<random>.tmp`` beside ``path`` that becomes ``path`` (:meth:`publish`) or is
    removed; locked while it exists (a stale one is removed by :func:`clean_leftovers` of ``path``'s name)."""

    def __init__(self, path):
        self.path = os.path.abspath(os.fspath(path))
        parent, name = os.path.split(self.path)
        prefix, suffix = temporary_affixes(name)
        try:
            self.work = tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent)
        except OSError as e:
            raise write_error(e, self.path, NOTHING_WRITTEN) from None
        self._fd: int | None = os.open(self.work, os.O_RDONLY)
        _lock(self._fd)

    def write_error(self, error: WriteError) -> WriteError:
        """A write into this staging directory that failed, said of ``path`` (the staging directory is removed
        with the run): the name under ``path`` it was to have, and that nothing was left."""
        where = self.path
        if error.filename and os.path.abspath(os.fsdecode(error.filename)).startswith(os.path.join(self.work, "")):
            where = os.path.join(self.path, os.path.relpath(os.fsdecode(error.filename), self.work))
        return WriteError(error.errno, f"{error.strerror} (all or nothing: {os.path.basename(self.path)} was not "
                          "made, nothing was left)", where)

    def publish(self) -> bool:
        """Rename the directory to ``path`` in one step if ``path`` does not exist or is an empty directory;
        False (nothing done) if ``path`` is anything else by now (a directory with files, a file: another writer
        was faster). The directory gets the mode ``mkdir`` gives (the umask's, 0755 under 022): private
        (mkdtemp's 0700) only while it is kdump's staging."""
        try:
            os.chmod(self.work, 0o777 & ~current_umask())
            os.rename(self.work, self.path)
        except OSError as e:
            if os.path.lexists(self.path) and not (os.path.isdir(self.path) and not os.path.islink(self.path)
                                                   and not os.listdir(self.path)):
                return False
            raise write_error(e, self.path) from None
        self.close()
        fsync_directory(os.path.dirname(self.path))
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def remove(self) -> None:
        _remove(self.work)
        self.close()


def replace_directory(new: str, path: str) -> None:
    """The finished directory ``new`` (beside ``path``, on its file system) becomes ``path`` in one rename; an
    existing ``path`` is first renamed aside into a kdump temporary directory (one rename: ``path`` is the old one
    until the next), then removed. A failure puts the old one back: nothing was written."""
    parent, name = os.path.split(os.path.abspath(path))
    if not os.path.lexists(path):
        try:
            os.rename(new, path)
        except OSError as e:
            raise write_error(e, path, TAKEN_BACK) from None
        return
    prefix, suffix = temporary_affixes(name)
    aside = tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent)
    os.rename(path, os.path.join(aside, name))
    try:
        os.rename(new, path)
    except OSError as e:
        os.rename(os.path.join(aside, name), path)
        shutil.rmtree(aside, ignore_errors=True)
        raise write_error(e, path, TAKEN_BACK) from None
    shutil.rmtree(aside, ignore_errors=True)


def write_atomic(path, data: bytes, **kwargs) -> str:
    """Write ``data`` to ``path`` with :class:`AtomicFile`; returns the final path."""
    f = AtomicFile(path, **kwargs)
    f.write(data)
    return f.commit()


# --- checks before a long run ----------------------------------------------------------------------------------
def _nearest_existing(path: str) -> str:
    path = os.path.abspath(path)
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def unwritable_directory(directory: str) -> OSError | None:
    """Why nothing can be created in ``directory`` (or, when it is missing, in its nearest existing parent, where
    it would be made): a read-only file system (EROFS) or no write permission (EACCES); None when it looks
    writable. A check before a run that takes long, so that it stops in a second instead of at its end; the write
    itself still decides (a full disk or a quota shows only then)."""
    existing = _nearest_existing(directory)
    if not os.path.isdir(existing):
        return NotADirectoryError(errno.ENOTDIR, "not a directory", existing)
    try:
        if os.statvfs(existing).f_flag & os.ST_RDONLY:
            return OSError(errno.EROFS, os.strerror(errno.EROFS), existing)
    except (OSError, AttributeError):
        pass
    if not os.access(existing, os.W_OK | os.X_OK):
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), existing)
    return None


def check_new_directory(path) -> None:
    """Before a run that writes the new directory ``path`` (an export, a salvaged partition): FileExistsError when
    ``path`` exists and is not an empty directory (a regular file, a symbolic link, a directory with files);
    :class:`~kdump.errors.WriteError` when it could not be created beside its parent (read-only, no permission).
    Nothing is created."""
    path = os.path.abspath(os.fspath(path))
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise WriteError(e.errno, e.strerror or str(e), path) from None
    if mode is not None:
        if not stat.S_ISDIR(mode):
            raise FileExistsError(errno.EEXIST, f"exists and is {file_type_name(mode)}; the output is a new "
                                  "directory", path)
        try:
            if os.listdir(path):
                raise FileExistsError(errno.EEXIST, "exists and is not empty; the output is a new directory", path)
        except OSError as e:
            if isinstance(e, FileExistsError):
                raise
            raise WriteError(e.errno, e.strerror or str(e), path) from None
    problem = unwritable_directory(os.path.dirname(path))
    if problem is not None:
        raise WriteError(problem.errno, f"{problem.strerror} (in {problem.filename}): {os.path.basename(path)} "
                         "cannot be created there", path)


# --- the partition lock ------------------------------------------------------------------------------------------
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
