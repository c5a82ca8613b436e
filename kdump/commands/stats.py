"""``kdump stats``: a thin Click layer over :mod:`kdump.stats.counts`."""
from __future__ import annotations

import errno
import os
import sys

import click

from kdump.commands.options import exit_help, jobs_option, output_options, time_format_option
from kdump.errors import WriteError

EXIT_HELP = exit_help(
    data="damage in what was read (each damaged area, undecodable batch or unreadable segment on stderr: file, byte "
         "position, cause; the numbers are of what could be read), or a file that is not a Kafka log segment")


def _size(text: str) -> int:
    """``256M``, ``2G``, ``512k`` or a number of bytes."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if scale > 1 else t
    if not digits.isdigit() or int(digits) == 0:
        raise click.BadParameter(f"{text!r} is not a size such as 256M or 2G", param_hint="--memory")
    return int(digits) * scale


def _check_spill_dir(spill_dir: str, ui, outcome) -> None:
    """A spill directory that is missing, not a directory or cannot be written: exit 2 before anything is read,
    naming it (never blamed on a segment)."""
    from kdump.write.guards import unwritable_directory
    problem: OSError | None
    if not os.path.isdir(spill_dir):
        problem = OSError(errno.ENOENT if not os.path.exists(spill_dir) else errno.ENOTDIR,
                          "no such directory" if not os.path.exists(spill_dir) else "not a directory", spill_dir)
    else:
        problem = unwritable_directory(spill_dir)
    if problem is not None:
        outcome.cannot_write()
        ui.cannot(spill_dir, OSError(problem.errno, f"--spill-dir: {problem.strerror}; nothing was read"), "write")
        sys.exit(outcome.exit_code())


@click.command("stats", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--memory", default="256M", show_default=True, metavar="SIZE",
              help="Memory for the key digests of one partition; beyond it they are spilled to disk (the counts "
                   "stay exact). Each of the --jobs workers counts one partition at a time.")
@click.option("--spill-dir", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Where key digests are spilled (default: the system temporary directory).")
@time_format_option(shows="the time ranges (smallest and largest batch timestamp)")
@click.option("--value-decoder", type=click.Choice(["schema-registry"]), default=None,
              help="Also count values per Schema Registry schema id and subject, and those that do not decode "
                   "(each value is decoded).")
@click.option("--schemas", metavar="PATH", type=click.Path(exists=True, path_type=str), default=None,
              help="Where --value-decoder finds schemas (default: the _schemas partition beside the data).")
@output_options()
@jobs_option
def command(paths, memory, spill_dir, time_format, value_decoder, schemas, ui, jobs):
    """The numbers of a log, per topic-partition and in total: segments, batches, records, bytes, offset and
    time ranges, magic and codec mix with compression ratios, producers, transactions, control records, key
    cardinality, and what a compaction would remove (records superseded by a later record with the same key,
    tombstones).

    Segments are read as dump and verify read them, past damage: every intact batch is counted, each damaged
    area is an error (stderr, and `errors` in JSON), and each line is labelled OK or FAIL.

    PATHS: segments, partition directories or log directories. `kdump spark stats` gives the same numbers,
    one Spark task per partition. Key counts are exact: 16-byte key digests are
    kept in --memory, and spilled to disk beyond it.

    \b
    Examples:
      kdump stats /var/lib/kafka/data/orders-0
      kdump stats --memory 1G --format json /var/lib/kafka/data | jq '.total.compaction'
      kdump stats --time-format iso /var/lib/kafka/data/orders-0
    """
    from kdump.commands.partition_paths import partition_groups, say_problems
    from kdump.commands.progress import with_progress
    from kdump.jobs import group_work
    from kdump.render import RENDERERS
    from kdump.render.stats import names, render_text
    from kdump.report.outcome import Outcome
    from kdump.stats.counts import stats_paths, summary_doc
    from kdump.text.times import time_formatter

    memory_bytes = _size(memory)
    outcome = Outcome()
    if spill_dir is not None:  # checked before reading: a spill fails only after --memory has filled
        _check_spill_dir(spill_dir, ui, outcome)
    groups, refused = partition_groups(paths, ui, outcome)
    work = group_work(groups)  # each partition's segments and their bytes: the --jobs map's sizes, the bar's total
    try:
        summary = with_progress(ui, work.total, "counting",
                                lambda advance: stats_paths(work, memory_bytes=memory_bytes, spill_dir=spill_dir,
                                                            progress=advance, jobs=jobs))
    except WriteError as e:  # the spill files (a full disk...): the counts would be wrong, so there are none
        outcome.cannot_write()
        ui.cannot(e.filename, e, "write")
        RENDERERS[ui.format].document(ui.stdout, {"errors": ui.errors}, lambda: None)
        sys.exit(outcome.exit_code())
    summary.errors = refused
    summary.outcome(outcome)
    say_problems(ui, [e for p in summary.partitions for e in p.stats.errors],
                 [n for p in summary.partitions for n in p.stats.notes])
    if outcome.nothing_read:  # nothing read: no report of zeros (text: nothing; JSON: the errors only)
        RENDERERS[ui.format].document(ui.stdout, summary_doc(summary), lambda: None)
        sys.exit(outcome.exit_code())
    census = None if value_decoder is None else _schema_census(groups, paths, schemas)
    doc = summary_doc(summary)
    if census is not None:
        decoder, counts = census
        entries = {p["path"]: p for p in doc["partitions"]}
        for where, counted in counts.items():
            target = doc["total"] if where is None else entries.get(where)
            if target is not None:
                target["schemaRegistry"] = counted.to_dict(decoder)

    def text() -> None:
        ui.echo(render_text(summary, time_formatter(time_format)))
        if census is not None:
            decoder, counts = census
            called = names(summary)
            for where, counted in counts.items():
                if where is None or where in called:
                    ui.echo(f"{'total' if where is None else called[where]}: {counted.text(decoder)}")
    RENDERERS[ui.format].document(ui.stdout, doc, text, time_format=time_format)
    sys.exit(outcome.exit_code())


def _schema_census(groups, paths, schemas):
    """(decoder, {partition directory, or None for the total: SchemaCensus}) for --value-decoder schema-registry."""
    from kdump.commands.hints import hinted
    from kdump.decode.errors import DecoderLoadError
    from kdump.decode.schema_registry import registry_decoder
    from kdump.decode.schema_registry.census import SchemaCensus, census
    try:
        decoder = registry_decoder(schemas, paths)
    except DecoderLoadError as e:
        raise click.BadParameter(hinted(e.code, str(e)), param_hint="--value-decoder") from None
    counts: dict[str | None, SchemaCensus] = {}
    for g in groups:
        counted = census(decoder, g.logs)
        counts[g.directory] = counts[g.directory].merge(counted) if g.directory in counts else counted
    total = SchemaCensus()
    for counted in list(counts.values()):
        total = total.merge(counted)
    counts[None] = total
    return decoder, counts
