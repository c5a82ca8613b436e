"""``kdump salvage``: a thin Click layer over :mod:`kdump.convert.salvage`."""
from __future__ import annotations

import os

import click

from kdump.commands.findings import fail_on_option
from kdump.commands.options import exit_help, output_options
from kdump.errors import EXIT_DATA, EXIT_USAGE, WriteError
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES

EXIT_HELP = exit_help(
    ok="every batch of the input was copied (a crash-cut tail, which Kafka's recovery drops too, is listed)",
    data="the copy is written, and damaged data was left out (listed)",
    usage="usage error, nothing to salvage (no segments), a path missing, refused or unreadable, or the output "
          "exists")


@click.command("salvage", epilog=EXIT_HELP)
@click.argument("source", type=click.Path(path_type=str))
@click.option("-o", "--output", required=True, metavar="OUT",
              help="The new segment (or, for a partition directory, the new directory). An existing directory "
                   "takes a segment under its own name.")
@click.option("--force", is_flag=True, help="Replace an existing output segment and its index files.")
@click.option("--max-batch-bytes", type=click.IntRange(min=1024), default=DEFAULT_MAX_BATCH_BYTES, show_default=True,
              help="Largest batch (or decompressed payload) checked; a larger one cannot be verified and is left out.")
@output_options()
@fail_on_option
def command(source, output, force, max_batch_bytes, ui, fail_on):
    """Copy every batch of a damaged segment that verifies into a new segment, including the intact batches
    after a damaged region, and list what was left out (byte ranges, offsets, record counts).

    The input is never modified. The new segment is read back and checked with `kdump verify --deep` before it
    is placed, together with its rebuilt .index, .timeindex and .txnindex. A partition directory is salvaged
    segment by segment into a new directory, all or nothing.

    \b
    Examples:
      kdump salvage 00000000000000000000.log -o /tmp/rescued/00000000000000000000.log
      kdump salvage /var/lib/kafka/data/orders-3 -o /tmp/orders-3
      kdump salvage --format json broken.log -o /tmp/rescued/ | jq '.files[].dropped'
    """
    from kdump.commands.hints import force_hint
    from kdump.commands.progress import with_progress
    from kdump.convert.salvage import WriteVerificationError, salvage_directory, salvage_segment
    from kdump.jobs import path_work
    from kdump.read.logdir import stat_or_refusal
    ui.fail_on = fail_on
    refused = stat_or_refusal(source)
    if not isinstance(refused, os.stat_result):  # missing, a symlink loop, a FIFO or device: never opened
        ui.cannot(source, refused.as_oserror())
        _stop(ui)

    def total() -> int:  # (counted only when a bar could be shown)
        return path_work([source]).total
    try:
        if os.path.isdir(source):
            results = with_progress(ui, total, "salvaging", lambda advance: salvage_directory(
                source, output, max_batch_bytes=max_batch_bytes, progress=_by_position(advance)))
        else:
            results = with_progress(ui, total, "salvaging", lambda advance: [salvage_segment(
                source, output, overwrite=force, max_batch_bytes=max_batch_bytes, progress=_by_position(advance))])
    except FileExistsError as e:  # --force replaces a segment's output (a partition goes into a new directory)
        hint = "" if os.path.isdir(source) else force_hint(e)
        ui.problem(e.filename, f"{e.strerror or 'exists'}{hint}", code=EXIT_USAGE, error="output-exists")
        _stop(ui)
    except WriteVerificationError as e:
        ui.problem(None, f"{e}; nothing was written", code=EXIT_DATA, error="write-verification-failed")
        _stop(ui)
    except OSError as e:
        written = isinstance(e, WriteError) or (
            e.filename is not None and os.path.abspath(e.filename).startswith(os.path.abspath(output)))
        ui.cannot(e.filename or source, e, "write" if written else "read")
        _stop(ui)
    if not results:
        ui.nothing(source, "nothing to salvage: no log segments (<base offset>.log) in this directory")
    for r in results:
        _record(ui, r)

    def text():
        from kdump.render.salvage import salvage_lines
        for r in results:
            for line in salvage_lines(r, click.unstyle):
                ui.echo(line)
    _document(ui, results, text)
    ui.exit()


def _by_position(advance):
    """Salvage reports how far into a segment it is (the end of each batch kept); a bar is advanced by bytes done.
    A position below the last one is the next segment's."""
    if advance is None:
        return None
    last = 0

    def progress(end: int) -> None:
        nonlocal last
        if end < last:
            last = 0
        advance(end - last)
        last = end
    return progress


def _document(ui, results, text) -> None:
    """What was salvaged, and (JSON) the errors said on stderr, as every JSON of kdump carries them."""
    from kdump.render import RENDERERS
    RENDERERS[ui.format].document(ui.stdout, {"files": [r.to_dict() for r in results], **ui.error_fields()},
                                  text)  # JSON: ASCII


def _stop(ui) -> None:
    """Nothing was salvaged: a JSON reader still gets the errors; the exit code is the outcome's."""
    _document(ui, [], lambda: None)
    ui.exit()


def _record(ui, r) -> None:
    """What one segment's salvage saw, for the exit code, by the read layer's one policy
    (:attr:`kdump.read.damage.Damage.fails`): each range dropped is damage (an error, zeros too, as ``verify`` says),
    except a crash-cut tail, which Kafka's own tools report with exit 0 (a warning, as in ``verify``)."""
    ui.read(r.source)
    for d in r.dropped:
        if not d.fails:
            ui.outcome.saw(r.source, warnings=1)
        else:
            ui.outcome.saw(r.source, errors=1)
