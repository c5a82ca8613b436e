"""``kdump replicas``: a thin Click layer over :mod:`kdump.replicas`."""
from __future__ import annotations

import sys

import click

from kdump.commands.options import exit_help, jobs_option, output_options

EXIT_HELP = exit_help(
    ok="every partition held by two or more of the paths is in sync with its reference, or only behind it, and "
       "every file read is sound",
    data="replicas diverge (truncation would remove records) or mismatch (a batch below the divergence point "
         "differs), or a replica's files are damaged",
    usage="usage error; no topic-partition is held by two or more of the paths (nothing compares); a path missing "
          "or refused")


@click.command("replicas", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--reference", metavar="LOGDIR", default=None,
              help="The replica to compare the others with (the leader): the one under this path. Default: the "
                   "replica with the highest leader epoch, then the longest log.")
@click.option("--records", is_flag=True,
              help="Also read and show the records each replica would lose (else batch headers and CRCs only).")
@output_options()
@jobs_option
def command(paths, reference, records, ui, jobs):
    """Compare the copies of each partition across brokers, offline, by Kafka's replication rules.

    PATHS: two or more brokers' log directories (or partition directories of one topic-partition). For every
    topic-partition held by two or more of them: each replica's log start offset, log end offset, high watermark,
    recovery point and leader epochs; the divergence point each follower's fetcher would truncate to
    (KIP-101/KIP-279) and the records it would lose there (those below its high watermark were acknowledged);
    below it, batch by batch, any batch whose offsets, leader epoch or CRC differ from the reference's
    (a mismatch: corruption or a broken replica). Status per partition: in-sync, behind, diverged or
    inconsistent.

    \b
    Examples:
      kdump replicas /data/broker1 /data/broker2 /data/broker3
      kdump replicas --reference /data/broker2 --records /data/broker1 /data/broker2
      kdump replicas --format json b1/ b2/ b3/ | jq '.partitions[] | select(.status != "in-sync")'
    """
    from kdump.replicas import compare

    existing = check_paths(paths, reference, ui)
    found, results = compare(existing, reference=reference, records=records, jobs=jobs)
    report(ui, found, results)


def check_paths(paths, reference, ui) -> list[str]:
    """The paths that exist (each missing one said, and recorded: exit 2); a usage error for fewer than two, or
    a --reference that does not exist. Shared with ``kdump spark replicas``."""
    import os
    if len(paths) < 2:
        raise click.UsageError("name two or more log directories (or partition directories of one partition)")
    for p in paths:
        if not os.path.exists(p):
            ui.nothing(p, "no such file or directory")
    if reference is not None and not os.path.exists(reference):
        raise click.BadParameter(f"{reference!r} does not exist", param_hint="--reference")
    return [p for p in paths if os.path.exists(p)]


def report(ui, found, results) -> None:
    """What the comparison found, on stderr (paths with nothing to compare) and standard output (the report
    through RENDERERS), and the exit code. Shared with ``kdump spark replicas``."""
    from kdump.render import RENDERERS
    from kdump.render.replicas import document, text_lines
    from kdump.replicas import DIVERGED, INCONSISTENT

    outcome = ui.outcome
    for p in found.empty:
        ui.nothing(p, "no partition directory with log segments here or below")
    for directory, source in found.duplicates:
        ui.note(directory, f"reached again (through {source}): one replica, passed over")
    if not results:
        ui.nothing(None, "no topic-partition is held by two or more of the paths: nothing to compare")
    errors = list(ui.error_fields()["errors"])  # (the damage of each replica is in its own report)
    for r in results:
        for rep in r.replicas:
            for d in rep.damage:  # each damaged area on stderr too, as every command says it
                ui.problem(d["path"], d.get("description") or d["message"], position=d["position"],
                           error=d["code"])
            outcome.file(errors=rep.damage_count)
        outcome.file(errors=1 if r.status in (DIVERGED, INCONSISTENT) else 0)
    doc = document(found, results, errors)
    RENDERERS[ui.format].document(ui.stdout, doc, lambda: text_lines(found, results, ui.echo))
    sys.exit(outcome.exit_code())
