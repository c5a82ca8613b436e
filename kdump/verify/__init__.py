"""``kdump verify`` as a library: prove segments, partitions and log directories sound, or say exactly
where and how they are not.

>>> from kdump.verify import VerifyOptions, verify_paths          # doctest: +SKIP
>>> reports = verify_paths(["/var/lib/kafka/orders-0"], VerifyOptions(deep=True))
>>> [(f.code, f.position) for r in reports for f in r.findings]

One :class:`~kdump.report.findings.FileReport` per file, with its findings (stable codes, see
:mod:`kdump.verify.codes` and docs/findings.md). Modules:

* :mod:`kdump.verify.walk`: one file's walk (:meth:`kdump.read.segment.SegmentReader.events`, which resynchronises
  after damage) turned into findings (shallow checks);
* :mod:`kdump.verify.deep`: ``--deep`` record checks;
* :mod:`kdump.verify.partition`: paths, partition directories, segment contiguity, and the companion
  files' checks of :mod:`kdump.index.check`.

Nothing here writes to the files it checks; every file is opened read-only.
"""
from __future__ import annotations

import os
from typing import Any

from kdump.jobs import Work, weigh
from kdump.report.findings import FileReport, exit_code
from kdump.verify.codes import CODES
from kdump.verify.partition import collect, verify_companion, verify_file, verify_partition
from kdump.verify.walk import PartitionState, SegmentVerifier, VerifyOptions
from kdump.write.leftovers import leftover_reports

__all__ = ["VerifyOptions", "verify_paths", "verify_unit", "verify_one", "collect", "verify_work", "exit_code", "CODES",
           "SegmentVerifier", "PartitionState"]


def verify_one(path, options: VerifyOptions | None = None) -> FileReport:
    """Verify one segment file on its own (no partition context)."""
    report, _ = verify_file(os.fspath(path), options or VerifyOptions())
    return report


def verify_work(paths) -> Work[tuple[str, Any]]:
    """The units :func:`verify_paths` verifies (:func:`~kdump.verify.partition.collect`), each with the bytes it
    reads: what ``--jobs`` balances and a progress bar's total."""
    return weigh(collect(paths), _unit_files)


def _unit_files(unit: tuple[str, Any]) -> list[str]:
    kind, item = unit
    return [item] if kind == "file" else (item[1] + item[2] if kind == "partition" else [])


def verify_paths(paths, options: VerifyOptions | None = None, *, progress=None, jobs: int = 1) -> list[FileReport]:
    """Verify files and directories (partition and log directories, recursively), in the order given; or the
    units of :func:`verify_work` (made once: the command's progress bar takes its total from them).

    ``progress``, if given, is called with the number of bytes advanced, every 16 MiB or so (with ``jobs``
    > 1: as the workers report it, a few MiB at a time). ``jobs`` > 1 verifies the units (files, partitions) in
    that many worker processes; the reports are the same, in the same order. A path that does not exist
    or cannot be read gets a report with ``io_error`` set (``refused`` too when it was never opened: exit code 2).
    """
    options = options or VerifyOptions()
    work = paths if isinstance(paths, Work) else verify_work(paths)
    reports: list[FileReport] = []
    if jobs <= 1:
        for kind, item in work.units:
            reports.extend(verify_unit(kind, item, options, progress=progress))
        return reports
    from kdump.jobs import ordered_map
    for unit_reports in ordered_map(verify_unit, [(kind, item, options) for kind, item in work.units], jobs,
                                    sizes=work.sizes, progress=progress):
        reports.extend(unit_reports)
    return reports


def verify_unit(kind: str, item, options: VerifyOptions, *, progress=None) -> list[FileReport]:
    """The reports of one item of :func:`~kdump.verify.partition.collect` (units are independent, so
    they may be verified in any order or in parallel, as ``kdump spark verify`` does)."""
    if kind == "error":
        path, message = item
        return [FileReport(path, "unknown", io_error=message, refused=True)]
    if kind == "file":
        report, _ = verify_file(item, options, progress=progress)
        return [report]
    if kind == "companion":
        return verify_companion(item, options)
    if kind == "leftovers":
        return leftover_reports(item)
    if kind == "checkpoint":  # a log directory's offset checkpoint, as index check reads it
        from kdump.index.check import check_text_checkpoint
        return [check_text_checkpoint(item)]
    directory, segments, snapshots, companions = item
    return verify_partition(directory, segments, snapshots, options, progress=progress, companions=companions)


def check_internal_records(reports) -> None:
    """``internal-record-partly-decoded`` on each segment of an internal topic whose records do not all decode
    whole with Kafka's definitions (``verify --deep``, on one machine or on Spark)."""
    from kdump.decode.internal import decoder_for_path, record_decoder_for
    from kdump.decode.internal.check import partly_decoded
    from kdump.read.logdir import FileKind, classify
    from kdump.report.codes import CODES
    code = CODES["internal-record-partly-decoded"]
    for report in reports:
        if report.io_error or classify(report.path) is not FileKind.LOG:
            continue
        name = decoder_for_path(report.path)
        if name is None or name == "remote-log-metadata":
            continue
        found = partly_decoded(record_decoder_for(report.path, name), report.path)
        if found.first is not None:
            offset, position, what = found.first
            report.add(code.name, code.severity, f"{found.count} of {found.records} records decode only in part "
                       f"with Kafka's definitions; the first, at offset {offset}: {what}", position=position,
                       first_offset=offset)
