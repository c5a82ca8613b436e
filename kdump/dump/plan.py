"""Which files a dump visits, in which order: the entries of a scan less the files a directory dump passes
over, and which segments a seek leaves out wholly (by their base offsets)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING

from kdump.read.logdir import COMPANION_KINDS, TEXT_KINDS, Entry, FileKind, segment_base_offset
from kdump.read.scan import as_scan

if TYPE_CHECKING:
    from kdump.dump.options import DumpOptions


# Files of Kafka's (and kdump's) own that a directory dump passes over without calling them unknown.
PASSED_OVER_KINDS = frozenset((FileKind.META_PROPERTIES, FileKind.BROKER_STATE, FileKind.DELETED, FileKind.SWAP,
                               FileKind.CLEANED, FileKind.KAFKA_TEMP, FileKind.KDUMP_TEMP, FileKind.KDUMP_BACKUP,
                               FileKind.KDUMP_LOCK))
PRE_08_SUFFIX = ".kafka"  # Kafka 0.7's segments: <offset>.kafka, messages without offsets


def entries_to_dump(paths, *, companions: bool = False) -> list[Entry]:
    """What a dump of ``paths`` (or of their :class:`~kdump.read.scan.Scan`) visits (:func:`kdump.read.scan.scan`):
    files as named; from directories, their
    segments in offset order and every other file (so that unknown files are named and skipped), but not the
    index-like companions and text checkpoints unless ``companions`` (then each segment is followed by its
    .index, .timeindex, .txnindex and the snapshot of its offset), nor Kafka's other files
    (:func:`passed_over`)."""
    return [e for e in as_scan(paths).entries if passed_over(e, companions) is None]


def passed_over(entry: Entry, companions: bool = False) -> FileKind | None:
    """The kind of a file found in a directory that a dump passes over quietly, or None."""
    if not entry.from_dir or entry.refused is not None:
        return None
    if entry.kind in PASSED_OVER_KINDS:
        return entry.kind
    if not companions and (entry.kind in COMPANION_KINDS or entry.kind in TEXT_KINDS):
        return entry.kind
    return None


def outside_range(entry: Entry, next_base: int | None, opts: DumpOptions) -> bool:
    """A segment wholly outside ``from_offset``..``to_offset`` (by its base offset and the next segment's)."""
    if entry.kind is not FileKind.LOG or not entry.from_dir:
        return False  # a file named by the user is read (its name need not be its first offset)
    base = segment_base_offset(entry.path)
    if base is None:
        return False
    if opts.from_offset is not None and next_base is not None and next_base <= opts.from_offset:
        return True
    return opts.to_offset is not None and base > opts.to_offset


def next_segment_bases(entries: list[Entry]) -> dict[str, int | None]:
    """For each segment, the base offset of the next segment of the same directory among ``entries``."""
    by_dir: dict[str, list[tuple[int, str]]] = {}
    for e in entries:
        base = segment_base_offset(e.path)
        if e.kind is FileKind.LOG and base is not None:
            by_dir.setdefault(os.path.dirname(os.path.abspath(e.path)), []).append((base, e.path))
    out: dict[str, int | None] = {}
    for items in by_dir.values():
        items.sort()
        for (_, p), nxt in zip(items, [*items[1:], (None, None)], strict=True):
            out[p] = nxt[0]
    return out
