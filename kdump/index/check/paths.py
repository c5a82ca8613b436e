"""What ``kdump index check`` checks for each path it is given (:func:`check_paths`): a segment or companion file, a
partition directory, a log directory (its partitions, in ``--jobs`` worker processes, and its checkpoints); the
library entry points for a partition (:func:`check_partition_companions`, which ``verify`` runs) and a segment."""
from __future__ import annotations

import os

from kdump.index.check.checkpoints import check_text_checkpoint
from kdump.index.check.partition import PartitionChecker
from kdump.jobs import Work, WorkUnit, unit_work, work_units
from kdump.read import checkpoints as cps
from kdump.read.locate import SegmentLocator
from kdump.read.logdir import (
    SEGMENT_COMPANIONS,
    SUFFIXES,
    FileKind,
    classify,
    named_base_offset,
    segment_base_offset,
    set_aside_name,
)
from kdump.read.scan import scan
from kdump.read.segment import Stop, first_offset, walk_headers
from kdump.report.findings import FileReport
from kdump.report.outcome import REFUSAL_ERRNOS


def check_partition_companions(directory: str, *, deep: bool, index_interval_bytes: int = 4096,
                               progress=None, time_format: str = "epoch", report_logs: bool = True
                               ) -> list[FileReport]:
    """One FileReport per .index/.timeindex/.txnindex/.snapshot/leader-epoch-checkpoint file of a partition
    directory (and one for a missing .index, or a missing .txnindex that deep checks find needed): Kafka's
    sanity checks, layout, and consistency with the logs (see the module docstring for shallow vs deep).
    A segment whose log is no Kafka log at all has no companion checks: with ``report_logs``, a report of the
    log says so (``not-a-kafka-log``, as every command says it).
    ``index_interval_bytes`` (the topic's index.interval.bytes) only affects the deep comparison with what
    recovery would write, an info finding. ``progress(n)``: n more bytes of log walked (deep)."""
    return PartitionChecker(directory, deep=deep, index_interval_bytes=index_interval_bytes,
                            progress=progress, time_format=time_format, report_logs=report_logs).check_all()


def check_segment_companions(path: str, *, deep: bool, index_interval_bytes: int = 4096,
                             progress=None, time_format: str = "epoch") -> list[FileReport]:
    """The companion files of one segment, named by its .log or any of its companions; a producer snapshot named
    on its own is checked itself (a snapshot's offset is rarely a segment's base offset)."""
    from kdump.read.logdir import snapshot_offset
    base = segment_base_offset(path)
    snapshot = None if base is not None else snapshot_offset(path)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    checker = PartitionChecker(directory, deep=deep, index_interval_bytes=index_interval_bytes, progress=progress,
                               time_format=time_format)
    if base is not None:
        return checker.check_segment_files(base)
    if snapshot is not None:
        return [checker.check_snapshot_file(path, snapshot)]
    return _check_named_segment(checker, path)


def _check_named_segment(checker: PartitionChecker, path: str) -> list[FileReport]:
    """A segment named under a name Kafka's listing leaves out -- set aside (``X.log.deleted``, ``.cleaned``,
    ``.swap``, kdump's ``.bak``) or no segment name at all (``segment.bin``) -- read by its bytes, as ``dump`` and
    ``verify`` read it (:func:`kdump.read.logdir.read_kind`), on its own (no next segment), with the indexes Kafka
    keeps beside it under the same name (``X.index.deleted``: a segment is set aside with every file of it). Named by
    a set-aside index, its segment is checked. Base offset: the name's, else the first batch's."""
    inner = set_aside_name(path)
    name = os.path.basename(path)
    suffix = name[len(inner):] if inner is not None else ""
    stem = (inner if inner is not None else name).split(".", 1)[0]
    directory = os.path.dirname(os.path.abspath(path))
    log = path
    if inner is not None and classify(inner) in SEGMENT_COMPANIONS:  # X.index.deleted: its X.log.deleted
        log = os.path.join(directory, stem + SUFFIXES[FileKind.LOG] + suffix)
    base = named_base_offset(path)
    if base is None:
        with SegmentLocator(log, use_index=False) as loc:  # (an OSError: cannot be read, said in its report)
            first = next(iter(walk_headers(loc.fd, 0, loc.size)))
            base = (first_offset(loc.fd, first) if not isinstance(first, Stop) else None) or 0
    present = {kind.value: p for kind in (FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX)
               if os.path.isfile(p := os.path.join(directory, stem + SUFFIXES[kind] + suffix))}
    return checker.check_lone_segment(base, log, present)



def check_paths(paths, *, deep: bool, index_interval_bytes: int = 4096, jobs: int = 1,
                done=None, progress=None, time_format: str = "epoch") -> list[FileReport]:
    """What ``kdump index check`` checks for each argument: a segment (or companion file), a partition
    directory (its companions and partition.metadata), or a log directory (every partition, and the
    log directory's checkpoints). A path that cannot be read gives a report with ``io_error``.
    ``jobs`` > 1 checks a log directory's partitions in that many worker processes (same reports, same
    order); ``done(partition_directory)`` is then called as each one's reports arrive. ``progress(n)``: n more
    bytes of log walked by a deep check (in the workers too: they report as they go). ``time_format``: how
    findings quote a time (:mod:`kdump.text.times`)."""
    reports: list = []
    for p in paths:
        p = os.fspath(p)
        try:
            reports.extend(_check_path(p, deep, index_interval_bytes, later=jobs > 1, progress=progress,
                                       time_format=time_format))
        except OSError as e:  # refused (missing, a loop, not a regular file), or could not be read
            reports.append(FileReport(p, "unknown", io_error=f"cannot read: {e.strerror or e}",
                                      refused=e.errno in REFUSAL_ERRNOS))
    later = [r for r in reports if isinstance(r, _Later)]
    if not later:
        return reports
    from kdump.jobs import ordered_map
    checked = iter(ordered_map(_check_partition_path, [(r.directory, deep, index_interval_bytes, time_format)
                                                       for r in later],
                               jobs, done=None if done is None else (lambda i: done(later[i].directory)),
                               sizes=[r.size for r in later], progress=progress))
    return [x for r in reports for x in (next(checked) if isinstance(r, _Later) else [r])]

def check_work(paths) -> Work[WorkUnit]:
    """The partitions whose logs a deep :func:`check_paths` of ``paths`` walks (a segment named: every segment
    of its directory, as the check walks them all; a log directory: its partitions, the units its workers
    take), each once, with their bytes: a progress bar's total."""
    from kdump.write.leftovers import is_leftover_directory
    places = list(dict.fromkeys(p if os.path.isdir(p) else (os.path.dirname(os.path.abspath(p)) or ".")
                                for p in map(os.fspath, paths)))
    found = scan(places, depth=1)  # (a log directory's partitions are its subdirectories, as the check reads it)
    return unit_work(work_units([part for part in found.partitions if not is_leftover_directory(part.directory)]))



class _Later:
    """A partition of a log directory whose reports a worker process gives (their place in the list); ``size``:
    its segments' bytes (the largest start first)."""

    def __init__(self, directory: str, size: int):
        self.directory = directory
        self.size = size


def _check_partition_path(directory: str, deep: bool, index_interval_bytes: int,
                          time_format: str, *, progress=None) -> list[FileReport]:
    return check_paths([directory], deep=deep, index_interval_bytes=index_interval_bytes, time_format=time_format,
                       progress=progress)


def _check_path(p: str, deep: bool, index_interval_bytes: int, later: bool = False, progress=None,
                time_format: str = "epoch") -> list:
    reports: list[FileReport | _Later] = []
    if os.path.isdir(p):
        from kdump.write.leftovers import is_leftover_directory, leftover_reports
        reports.extend(leftover_reports(p))  # kdump's own crash leftovers (temporaries, interrupted group writes)
        found = scan([p], depth=1)  # a log directory's partitions are its subdirectories
        if not found.directories:
            raise found.refused[0].as_oserror()
        here = found.directories[0]
        if here.is_partition:
            reports.extend(check_partition_companions(p, deep=deep, index_interval_bytes=index_interval_bytes,
                                                      progress=progress, time_format=time_format))
            pm = here.checkpoints.get(FileKind.PARTITION_METADATA)
            if pm is not None:
                reports.append(check_text_checkpoint(pm))
        else:
            reports.extend(check_text_checkpoint(q) for q in here.files_of(FileKind.OFFSET_CHECKPOINT))
            for unit in work_units([part for part in found.partitions if not is_leftover_directory(part.directory)]):
                if later:
                    reports.append(_Later(unit.directory, unit.size))
                else:
                    reports.extend(check_paths([unit.directory], deep=deep, index_interval_bytes=index_interval_bytes,
                                               progress=progress, time_format=time_format))
            for refused in found.unlistable:  # a subdirectory that cannot be listed: said, the others checked
                r = FileReport(refused.path, "unknown")
                r.io_error = f"cannot read: {refused.reason}"
                reports.append(r)
    elif not os.path.exists(p):
        reports.append(FileReport(p, "unknown", io_error="no such file or directory", refused=True))
    elif cps.kind_of(p) is not None and cps.kind_of(p) != "leader-epoch-checkpoint":
        reports.append(check_text_checkpoint(p))
    elif os.path.basename(p) == cps.LEADER_EPOCH_CHECKPOINT:
        d = os.path.dirname(os.path.abspath(p))
        reports.append(PartitionChecker(d, deep=deep).check_leader_epoch_checkpoint(p))
    else:
        reports.extend(check_segment_companions(p, deep=deep, index_interval_bytes=index_interval_bytes,
                                                progress=progress, time_format=time_format))
    return reports
