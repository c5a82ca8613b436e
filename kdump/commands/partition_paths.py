"""The PATHS argument of the per-partition commands (``txn``, ``stats``): segments, partition directories or log
directories, grouped by partition (:meth:`kdump.read.scan.Scan.segment_groups`); what cannot be read is said on
stderr."""
from __future__ import annotations

import click


def partition_groups(paths, ui) -> tuple[list, list]:
    """(segment groups, refused paths, each said through ``ui``); a usage error when no path is given."""
    from kdump.errors import EXIT_USAGE
    from kdump.read.scan import scan

    if not paths:
        raise click.UsageError("no paths given: name segments, partition directories or log directories")
    found = scan(paths)
    groups, refused = found.segment_groups(), found.refused
    for r in refused:
        ui.problem(r.path, r.reason, code=EXIT_USAGE)
    return groups, refused
