"""The PATHS argument of the per-partition commands (``txn``, ``stats``): segments, partition directories or log
directories, grouped by partition (:func:`kdump.read.logdir.segment_groups`); what cannot be read is said on stderr."""
from __future__ import annotations

import click


def partition_groups(paths, ui) -> tuple[list, list]:
    """(segment groups, refused paths, each said through ``ui``); a usage error when no path is given."""
    from kdump.errors import EXIT_USAGE
    from kdump.read.logdir import segment_groups

    if not paths:
        raise click.UsageError("no paths given: name segments, partition directories or log directories")
    groups, refused = segment_groups(paths)
    for r in refused:
        ui.problem(r.path, r.reason, code=EXIT_USAGE)
    return groups, refused
