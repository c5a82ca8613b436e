"""The PATHS argument of the per-partition commands (``txn``, ``stats``): segments, partition directories or log
directories, grouped by partition (:func:`kdump.logdir.segment_groups`); what cannot be read is said on stderr."""
from __future__ import annotations

import click


def partition_groups(paths) -> tuple[list, list]:
    """(segment groups, refused paths); a usage error when no path is given."""
    from kdump.logdir import segment_groups

    if not paths:
        raise click.UsageError("no paths given: name segments, partition directories or log directories")
    groups, refused = segment_groups(paths)
    for r in refused:
        click.echo(f"kdump: {r.path}: {r.reason}", err=True)
    return groups, refused
