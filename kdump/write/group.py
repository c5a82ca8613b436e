"""Files that appear together, or recognisably not at all; each one a :class:`kdump.write.atomic.AtomicFile`.

:class:`AtomicGroup` makes a segment and its indexes (``kdump convert``), or a segment's indexes
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

The journal of a group a killed run left is found and cleaned by :mod:`kdump.write.killed`.
"""
from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import Callable, Iterable

from kdump.errors import WriteError
from kdump.read.logdir import kdump_temporary
from kdump.write.atomic import (
    AtomicFile,
    crash_point,
    file_sha256,
    fsync_directory,
    mkstemp_beside,
    remove_path,
    sync_files,
)
from kdump.write.guards import NOTHING_WRITTEN, TAKEN_BACK, write_error
from kdump.write.killed import Leftover, clean_leftovers, leftovers, member_path, read_group_journal


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
                _resolve(read_group_journal(journal.path, self.directory), self.directory, "undo")
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


class _Journal:
    """The record of a group being renamed into place, held locked while the group is placed."""

    def __init__(self, directory: str, order: list[AtomicFile], extra: dict | None = None):
        members = [{"target": os.path.relpath(m.path, directory), "temporary": m.temporary_path, "size": m.size,
                    "sha256": m.written_sha256()} for m in order]
        doc = {"kdump": "atomic-group", "pid": os.getpid(), "members": members}
        # only what a group has: a plain group's journal is as it always was
        doc.update({name: value for name, value in (extra or {}).items() if value})
        fd, self.path = mkstemp_beside(os.path.join(directory, os.path.basename(order[-1].path)), "journal")
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


def _keep_previous(order: list[AtomicFile]) -> dict[str, str]:
    """The files a group will replace, each kept under a temporary name (a hard link, or a copy) until the group is
    placed, so that taking the group back restores them: member name -> the temporary."""
    kept: dict[str, str] = {}
    try:
        for m in order:
            if not os.path.lexists(m.path):
                continue
            fd, tmp = mkstemp_beside(m.path)
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
        remove_path(p)


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
    paths = [member_path(directory, m["target"]) for m in members]
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
                    remove_path(kept)
            elif m["placed"]:
                os.unlink(path)
    for m in members:
        tmp = str(m["temporary"])
        if kdump_temporary(tmp) is not None:
            remove_path(tmp)
    _drop(previous.values())
    if how == "undo":
        _remove_empty(str(d) for d in left.extra.get("made") or ())
    _fsync_all(sorted({os.path.dirname(p) for p in paths}))
    remove_path(left.path)
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
