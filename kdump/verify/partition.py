"""What ``kdump verify PATH...`` walks: files, partition directories and whole log directories.

* a file is verified as a segment, whatever its name (a KRaft snapshot if it ends in ``.checkpoint``);
* a directory holding segments (``<base offset>.log``, the one naming rule of :mod:`kdump.read.logdir`; a file such
  as ``notes.log`` is no segment) or KRaft snapshots is a partition: its segments are verified in offset order
  with one producer/leader-epoch state carried from each to the next, then checked against each other (each
  segment's base offset must be above the previous one's last offset; gaps are allowed, compaction leaves them);
* any directory is searched recursively, so a log directory verifies every partition in it.

A partition's companion files (``.index``, ``.timeindex``, ``.txnindex``, producer ``.snapshot``,
``leader-epoch-checkpoint``) are checked by :func:`kdump.index.check.check_partition_companions`, one report
each, and its ``partition.metadata`` and a log directory's offset checkpoints by
:func:`kdump.index.check.check_text_checkpoint`: what ``kdump index check`` checks, so that ``verify``, the gate,
never passes what ``index check`` fails. A directory of bare ``.log`` files (segments copied somewhere for a look)
is checked so too: a missing ``.index`` is a warning there as in ``index check`` (``index-missing``: Kafka rebuilds
it), and so is a missing ``.txnindex`` where the log has aborted transactions (``--deep``: ``txnindex-missing``),
since Kafka recovers a segment without an offset index at startup, which writes it; beside an offset index a
missing ``.txnindex`` fails both (consumers reading committed data would see the aborted records). A companion
file named on the command line is checked the same way. Other files (``.deleted``/``.cleaned``/``.swap``
leftovers) are not read here.
"""
from __future__ import annotations

import os
from typing import Any

from kdump.read.logdir import COMPANION_KINDS, FileKind, Partition, named_kind
from kdump.read.scan import Scan, scan
from kdump.report.findings import FileReport
from kdump.verify.codes import CODES
from kdump.verify.walk import PartitionState, SegmentVerifier, VerifyOptions
from kdump.write.leftovers import is_leftover_directory

_BROKER_TEXT = (FileKind.OFFSET_CHECKPOINT, FileKind.PARTITION_METADATA, FileKind.META_PROPERTIES)


def is_companion(path: str) -> bool:
    kind = named_kind(path)
    return kind in COMPANION_KINDS or kind is FileKind.LEADER_EPOCH_CHECKPOINT


def _is_broker_text_file(path: str) -> bool:
    return named_kind(path) in _BROKER_TEXT or os.path.basename(path).endswith("-checkpoint")


def file_kind(path: str) -> str:
    return "checkpoint" if named_kind(path) is FileKind.KRAFT_CHECKPOINT else "log"


def verify_file(path: str, options: VerifyOptions, *, state: PartitionState | None = None,
                progress=None) -> tuple[FileReport, SegmentVerifier]:
    v = SegmentVerifier(path, options, kind=file_kind(path), state=state, progress=progress)
    v.run()
    return v.report, v


def collect(paths) -> list[tuple[str, Any]]:
    """What to verify, in order: ("file", path), ("companion", path), ("partition", (directory, [segment
    paths], [snapshot paths], has companions)), ("leftovers", directory) for kdump's crash leftovers in a directory
    searched, or ("error", (path, message)) for a path that cannot be used."""
    out: list[tuple[str, Any]] = []
    for p in paths:
        p = os.fspath(p)
        found = scan([p])  # each path on its own: a directory named twice is verified twice
        if os.path.isdir(p):
            listed: list[tuple[str, Any]] = []
            error = _walk_dir(p, found, listed)
            if error is not None:
                out.append(("error", (p, error)))
            elif not [kind for kind, _ in listed if kind != "leftovers"]:
                out.append(("error", (p, "no log segments (.log), KRaft snapshots (.checkpoint) or partition "
                                         "companion files in this directory or below it")))
            out.extend(listed)
            continue
        (entry,) = found.entries
        if entry.refused is not None:
            missing = not os.path.lexists(p)
            out.append(("error", (p, "no such file or directory" if missing else entry.refused.reason)))
        elif is_companion(p):
            out.append(("companion", p))
        elif _is_broker_text_file(p):
            out.append(("error", (p, "not a log segment but one of the broker's text files (`kdump index check` "
                                     "reads checkpoints and partition.metadata)")))
        else:
            out.append(("file", p))
    return out


def _walk_dir(d: str, found: Scan, out: list) -> str | None:
    """The partitions of ``d`` and below (:func:`kdump.read.scan.scan`: segments by the one naming rule, in offset
    order; each directory once), and an error for each path that cannot be read; or why ``d`` itself cannot."""
    if not found.directories:  # d itself could not be listed (or is kdump's staging directory)
        return found.refused[0].reason
    out.append(("leftovers", d))  # kdump's own crash leftovers (kdump.write.leftovers)
    for here in found.directories:  # a log directory's checkpoints (as index check reads them)
        if not here.is_partition:
            out.extend(("checkpoint", q) for q in here.files_of(FileKind.OFFSET_CHECKPOINT))
    for part in found.partitions:
        if is_leftover_directory(part.directory):
            continue  # a partition kdump was converting into: a leftover of its parent, not a partition
        if part.directory != d:
            out.append(("leftovers", part.directory))
        # (the companion checks of every partition, one of bare .log files too: what index check checks)
        out.append(("partition", (part.directory, [s.log for s in part.segments], part.files.kraft_snapshots,
                                  True)))
    out.extend(("error", (refused.path, refused.reason)) for refused in found.refused)
    return None


def verify_partition(directory: str, segments: list[str], snapshots: list[str], options: VerifyOptions,
                     progress=None, *, companions: bool = False) -> list[FileReport]:
    state = PartitionState()
    reports = []
    previous = None  # (summary, report) of the previous segment with a base offset in its name
    for path in segments:
        report, v = verify_file(path, options, state=state, progress=progress)
        reports.append(report)
        summary = v.summary
        if report.io_error is not None or summary.base_offset is None:
            continue
        if previous is not None:
            _contiguity(previous, summary, report)
        previous = summary
    for path in snapshots:
        report, _ = verify_file(path, options, progress=progress)  # a snapshot is a log of its own
        reports.append(report)
    if companions:
        # (imported only when needed: start-up time)
        from kdump.index.check import check_partition_companions, check_text_checkpoint
        reports.extend(check_partition_companions(directory, deep=options.deep, report_logs=False))
        metadata = Partition(directory).checkpoints.get(FileKind.PARTITION_METADATA)
        if metadata is not None:
            reports.append(check_text_checkpoint(metadata))
    return reports


def verify_companion(path: str, options: VerifyOptions) -> list[FileReport]:
    """A companion file named on its own: its partition's companion checks, keeping its own report."""
    from kdump.index.check import check_partition_companions
    directory = os.path.dirname(path) or "."
    reports = check_partition_companions(directory, deep=options.deep)
    mine = [r for r in reports if _same(r.path, path)]
    return mine or reports


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _contiguity(prev, cur, report: FileReport) -> None:
    """Each segment starts above where the previous one ends. A gap is a warning, shown without -v and counted:
    the segment that held those offsets may be missing (deleted, lost in a copy), though compaction can leave one
    too (the last records of a cleaned segment removed); an overlap is never right."""
    prev_next = prev.last_offset + 1 if prev.last_offset is not None else prev.base_offset
    base = cur.base_offset
    name = os.path.basename(prev.path)
    if base < prev_next:
        report.add("segment-overlap", CODES["segment-overlap"].severity,
                   f"the segment's base offset {base} is not above the last offset {prev_next - 1} of the previous "
                   f"segment {name}", position=0, first_offset=base, last_offset=prev_next - 1)
    elif base > prev_next:
        report.add("segment-gap", CODES["segment-gap"].severity,
                   f"offsets {prev_next}-{base - 1} are in no segment (the previous segment {name} ends at "
                   f"{prev_next - 1}): a segment is missing, or compaction removed the last records of {name}",
                   position=0, first_offset=prev_next, last_offset=base - 1)
