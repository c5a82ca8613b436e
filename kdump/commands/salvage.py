"""``kdump salvage``: a thin Click layer over :mod:`kdump.salvage`."""
from __future__ import annotations

import os

import click

from kdump.commands.options import exit_help, output_options
from kdump.errors import EXIT_DATA, EXIT_OK, EXIT_USAGE
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES

EXIT_HELP = exit_help(
    ok="every batch of the input was copied (nothing was damaged)",
    data="the copy is written, and damaged data was left out (listed)",
    usage="usage error, a path is missing or unreadable, or the output exists")


@click.command("salvage", epilog=EXIT_HELP)
@click.argument("source", type=click.Path(path_type=str))
@click.option("-o", "--output", required=True, metavar="OUT",
              help="The new segment (or, for a partition directory, the new directory). An existing directory "
                   "takes a segment under its own name.")
@click.option("--force", is_flag=True, help="Replace an existing output segment and its index files.")
@click.option("--max-batch-bytes", type=click.IntRange(min=1024), default=DEFAULT_MAX_BATCH_BYTES, show_default=True,
              help="Largest batch (or decompressed payload) checked; a larger one cannot be verified and is left out.")
@output_options()
def command(source, output, force, max_batch_bytes, ui):
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
    from kdump.commands.progress import file_sizes, with_progress
    from kdump.salvage import WriteVerificationError, salvage_directory, salvage_segment

    if not os.path.exists(source):
        _fail(ui, source, "no such file or directory", "cannot-read")
    try:
        if os.path.isdir(source):
            results = with_progress(ui, lambda: file_sizes([source]), "salvaging", lambda advance: salvage_directory(
                source, output, max_batch_bytes=max_batch_bytes, progress=_by_position(advance)))
        elif not os.path.isfile(source):
            _fail(ui, source, "not a regular file (a FIFO or device is not read)", "nothing-to-read")
        else:
            results = with_progress(ui, os.path.getsize(source), "salvaging", lambda advance: [salvage_segment(
                source, output, overwrite=force, max_batch_bytes=max_batch_bytes, progress=_by_position(advance))])
    except FileExistsError as e:
        _fail(ui, e.filename, e.strerror or "exists", "output-exists")
    except WriteVerificationError as e:
        _fail(ui, None, f"{e}; nothing was written", "write-verification-failed", EXIT_DATA)
    except OSError as e:
        written = e.filename is not None and os.path.abspath(e.filename).startswith(os.path.abspath(output))
        _fail(ui, e.filename or source, e.strerror or str(e), "cannot-write" if written else "cannot-read")

    def text():
        for r in results:
            _print(ui, r)
    _document(ui, results, text)
    ui.exit(EXIT_DATA if any(r.lost_data for r in results) else EXIT_OK)


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


def _fail(ui, path, message: str, error: str, code: int = EXIT_USAGE) -> None:
    ui.problem(path, message, code=code, error=error)
    _document(ui, [], lambda: None)  # nothing written: a JSON reader still gets the error
    ui.exit()


def _offsets(first, last) -> str:
    if first is None and last is None:
        return ""
    if last is None:
        return f", offsets from {first}"
    if first is None or first == last:
        return f", offset {last}"
    return f", offsets {first}-{last}"


def _print(ui, r) -> None:
    ui.echo(f"{r.source} -> {r.output}: kept {r.kept_batches} batches, {r.kept_records} records, "
               f"{r.kept_bytes} of {r.input_bytes} bytes{_offsets(r.first_offset, r.last_offset)}")
    for d in r.dropped:
        what = "claimed by its damaged header" if d.claimed else "lost"
        offsets = _offsets(d.first_offset, d.last_offset)
        records = f", {d.records} records" if d.records is not None else ""
        note = f" ({what}{offsets}{records})" if offsets or records else ""
        kind = "dropped" if d.data else "skipped (no data)"
        ui.echo(f"  {kind} bytes {d.start}-{d.end - 1} [{d.code}]{note}: {click.unstyle(d.reason)}")
    if r.indexes:
        ui.echo(f"  indexes: {', '.join(os.path.basename(p) for p in r.indexes)}")
    for note in r.notes:
        ui.echo(f"  note: {note}")
    ui.echo(f"  {r.verified}")
