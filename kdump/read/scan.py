"""Paths to partitions, segments and work units, once: what every command and the Spark source visit.

:func:`scan` walks the paths a user names (files, partition directories, log directories) with the one directory
listing (:func:`kdump.read.logdir.list_directory`) and gives a :class:`Scan`:

* ``entries``: every file the paths stand for, in the order Kafka's tools visit them (a file as named; a
  directory's files in offset order, then its subdirectories in name order, recursively). Each directory, and
  each file found in one, is visited once (by device and inode: hard links, symlinks, a symlink loop and a
  directory named twice give one visit); a file named by the user is visited as often as named, as Kafka's
  DumpLogSegments dumps ``--files a,a`` twice;
* ``refused``: what must not or cannot be opened (missing, a dangling link, a symlink loop, a FIFO, a device,
  a socket, a directory that cannot be listed), with the reason, instead of being opened (opening a FIFO blocks
  until a writer comes);
* ``directories``: every directory searched (its :class:`~kdump.read.logdir.Partition` listing), and
  ``partitions``: those holding a partition's files, as :class:`~kdump.read.partition.PartitionLog` s. A partition
  lists every file of its directory, hard links included (a command reading a partition reads all of it); only
  ``entries`` visits a file once;
* hidden directories (a name starting with a dot: kdump's staging and temporary directories, a write not yet
  committed, are hidden) are never searched: ``staging`` lists those passed over; a path named by the user inside
  kdump's staging or temporary directories is refused;
* a file is visited once per directory that names it (a segment hard-linked into two partitions is in both).

:func:`kdump.jobs.work_units` cuts a scan into independent units (partitions, or segments) with their sizes,
the ones the ``--jobs`` map orders and a progress bar counts.
"""
from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from kdump.read.logdir import (
    Entry,
    FileKind,
    Listed,
    Partition,
    Refused,
    directory_order,
    is_hidden,
    is_kdump_staging,
    kdump_temporary,
    list_directory,
    listed,
    named_base_offset,
    named_kind,
    read_kind,
    topic_partition,
)
from kdump.read.partition import PartitionLog
from kdump.read.segment import SegmentReader


@dataclass
class Scan:
    """What :func:`scan` found (see the module's docstring)."""

    entries: list[Entry] = field(default_factory=list)
    directories: list[Partition] = field(default_factory=list)
    partitions: list[PartitionLog] = field(default_factory=list)
    staging: list[str] = field(default_factory=list)
    unlistable: list[Refused] = field(default_factory=list)  # directories that could not be listed (also refused)

    @property
    def refused(self) -> list[Refused]:
        return [e.refused for e in self.entries if e.refused is not None]

    @property
    def named_files(self) -> list[Entry]:
        """The files the user named (not found by searching a directory) that can be read."""
        return [e for e in self.entries if not e.from_dir and e.refused is None]

    def segment_groups(self) -> list[SegmentGroup]:
        """The ``.log`` segments visited, grouped by the directory holding them, in offset order (a segment named
        by the user whose name is no offset last)."""
        groups: dict[str, SegmentGroup] = {}
        for e in self.entries:
            if e.refused is not None or e.kind is not FileKind.LOG:
                continue
            directory = os.path.dirname(e.path)
            group = groups.get(directory)
            if group is None:
                named = topic_partition(os.path.basename(os.path.abspath(directory)))
                key = f"{named[0]}-{named[1]}" if named is not None else directory
                group = groups[directory] = SegmentGroup(key, directory)
            group.logs.append(e.path)
        for group in groups.values():
            group.logs.sort(key=lambda p: (named_base_offset(p) is None, named_base_offset(p) or 0))
        return list(groups.values())


def log_base_offset(path: str) -> int | None:
    """A segment's base offset: from its name (:func:`~kdump.read.logdir.named_base_offset`: ``5.log``,
    ``5.log.deleted``), else, for a segment named by the user whatever its name (``segment.bin``), from its bytes:
    its first batch's base offset; None when it has no readable first batch."""
    base = named_base_offset(path)
    if base is not None:
        return base
    try:
        with SegmentReader(path) as reader:
            return next((h.base_offset for h in reader.headers()), None)
    except OSError:
        return None  # said by the walk that reads it


@dataclass
class SegmentGroup:
    """The segments of one partition that a command was pointed at (:meth:`Scan.segment_groups`), in offset order.
    ``key``: ``<topic>-<partition>`` when the directory is named so, else the directory as reached."""

    key: str
    directory: str
    logs: list[str] = field(default_factory=list)

    def based(self) -> list[tuple[int, str]]:
        """(base offset, segment) of each of ``logs`` whose base offset is known (:func:`log_base_offset`)."""
        return [(base, log) for log in self.logs if (base := log_base_offset(log)) is not None]


class Files(Protocol):
    """Where a scan lists: the local disk (:class:`LocalFiles`), or a remote store (the Spark source's
    ``pyarrow.fs`` lister, :mod:`kdump.spark.plan`), each giving the same :class:`~kdump.read.logdir.Listed`."""

    def stat(self, path: str) -> Listed:
        """The path itself (links followed), ``refused`` set when it is missing or must not be opened."""

    def listdir(self, directory: str) -> list[Listed]:
        """The directory's entries in name order; raises OSError when it cannot be listed."""

    def parts(self, path: str) -> list[str]:
        """The names along the path, from its root (to find a staging directory it lies in)."""


class LocalFiles:
    """The local disk: :func:`kdump.read.logdir.list_directory` and :func:`~kdump.read.logdir.listed`."""

    def stat(self, path: str) -> Listed:
        return listed(path)

    def listdir(self, directory: str) -> list[Listed]:
        return list_directory(directory)

    def parts(self, path: str) -> list[str]:
        return os.path.abspath(path).split(os.sep)


def scan(paths: Iterable, *, depth: int | None = None, files: Files | None = None) -> Scan:
    """Walk ``paths`` (see the module's docstring). ``depth``: how many levels of subdirectories below a named
    directory are searched (None: all; 1: its own subdirectories only). ``files``: where the paths are (the local
    disk unless given)."""
    walk = _Walk(depth, files or LocalFiles())
    for p in paths:
        walk.named(os.fspath(p))
    return walk.found


def as_scan(paths_or_scan: Iterable | Scan) -> Scan:
    """A scan already made (one per run: a command hands it to its progress bar and its work), or one of paths."""
    return paths_or_scan if isinstance(paths_or_scan, Scan) else scan(paths_or_scan)


_STAGING_REASON = ("a hidden directory (kdump's staging and temporary directories, a write not yet committed, are "
                   "hidden): its files are not data")


class _Walk:
    def __init__(self, depth: int | None, files: Files):
        self.depth = depth
        self.files = files
        self.found = Scan()
        self.seen: set = set()  # directories, and files found in one, by identity ((device, inode) on a disk)

    def named(self, p: str) -> None:
        entries = self.found.entries
        # named by the user: refused inside kdump's own staging or temporary directories only (a hidden ancestor,
        # ~/.kafka/..., is the user's choice)
        if any(is_kdump_staging(part) or kdump_temporary(part) is not None for part in self.files.parts(p)):
            entries.append(Entry(p, named_kind(p), False, Refused(p, _STAGING_REASON, errno.EPERM)))
            return
        item = self.files.stat(p)
        if item.refused is not None:
            entries.append(Entry(p, named_kind(p), False, item.refused))
        elif item.is_dir:
            self.directory(item, 0)
        else:  # named by the user: visited as often as named, read by its bytes whatever its name (read_kind)
            entries.append(Entry(p, read_kind(p), False, size=item.size))

    def directory(self, d: Listed, level: int) -> None:
        entries = self.found.entries
        if d.identity in self.seen:
            return
        self.seen.add(d.identity)
        try:
            listing = self.files.listdir(d.path)
        except OSError as e:
            refused = Refused(d.path, f"cannot list the directory: {e.strerror or e}", e.errno or 0)
            entries.append(Entry(d.path, FileKind.UNKNOWN, True, refused))
            self.found.unlistable.append(refused)
            return
        here = Partition(d.path, listing)
        self.found.directories.append(here)
        if here.is_partition:
            self.found.partitions.append(PartitionLog(here))
        subdirectories: list[Listed] = []
        for item in sorted(listing, key=lambda item: directory_order(item.name)):
            if item.refused is not None:
                entries.append(Entry(item.path, item.kind, True, item.refused))
            elif item.is_dir:
                subdirectories.append(item)
            elif (d.identity, item.identity) not in self.seen:  # a file linked into two partitions: in both
                self.seen.add((d.identity, item.identity))
                entries.append(Entry(item.path, item.kind, True, size=item.size))
        if self.depth is not None and level >= self.depth:
            return
        for item in subdirectories:  # (in name order: the listing's)
            if is_hidden(item.name):
                self.found.staging.append(item.path)
            else:
                self.directory(item, level + 1)
