"""``kdump stats``: a thin Click layer over :mod:`kdump.stats`."""
from __future__ import annotations

import os
import sys

import click

from kdump.commands.options import exit_help, output_options
from kdump.errors import EXIT_OK, EXIT_USAGE

EXIT_HELP = exit_help()


def _size(text: str) -> int:
    """``256M``, ``2G``, ``512k`` or a number of bytes."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if scale > 1 else t
    if not digits.isdigit() or int(digits) == 0:
        raise click.BadParameter(f"{text!r} is not a size such as 256M or 2G", param_hint="--memory")
    return int(digits) * scale


@click.command("stats", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--memory", default="256M", show_default=True, metavar="SIZE",
              help="Memory for the key digests of one partition; beyond it they are spilled to disk (the counts "
                   "stay exact).")
@click.option("--spill-dir", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Where key digests are spilled (default: the system temporary directory).")
@output_options()
def command(paths, memory, spill_dir, ui):
    """The numbers of a log, per topic-partition and in total: segments, batches, records, bytes, offset and
    time ranges, magic and codec mix with compression ratios, producers, transactions, control records, key
    cardinality, and what a compaction would remove (records superseded by a later record with the same key,
    tombstones).

    PATHS: segments, partition directories or log directories. `kdump spark stats` gives the same numbers,
    one Spark task per partition. Key counts are exact: 16-byte key digests are
    kept in --memory, and spilled to disk beyond it.

    \b
    Examples:
      kdump stats /var/lib/kafka/data/orders-0
      kdump stats --memory 1G --format json /var/lib/kafka/data | jq '.total.compaction'
    """
    from kdump.commands.partition_paths import partition_groups
    from kdump.stats import render_json, render_text, stats_paths

    memory_bytes = _size(memory)
    groups, refused = partition_groups(paths)
    total = sum(os.path.getsize(log) for g in groups for log in g.logs)
    try:
        if sys.stderr.isatty() and total and not ui.quiet:
            from rich.progress import Progress
            with Progress(transient=True) as bar:
                task = bar.add_task("stats", total=total)
                summary = stats_paths(groups, memory_bytes=memory_bytes, spill_dir=spill_dir,
                                      progress=lambda n: bar.advance(task, n))
        else:
            summary = stats_paths(groups, memory_bytes=memory_bytes, spill_dir=spill_dir)
    except OSError as e:
        ui.cannot(e.filename, e)
        ui.exit()
    ui.stdout.write((render_json(summary) if ui.format == "json" else render_text(summary)) + "\n")
    ui.exit(EXIT_USAGE if refused else EXIT_OK)
