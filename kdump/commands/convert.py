"""``kdump convert``: the thin Click layer over :mod:`kdump.convert` (options in, report out)."""
from __future__ import annotations

import os

import click

from kdump.commands.hints import hinted
from kdump.commands.options import (
    Ui,
    exit_help,
    output_options,
    output_path_option,
    renamed_option,
)
from kdump.errors import EXIT_DATA, EXIT_USAGE, WriteError
from kdump.format.names import CODEC_IDS, CODEC_NAMES

CODEC_CHOICES = ["keep", *CODEC_NAMES]  # keep: each batch keeps its own codec

EPILOG = exit_help(ok="converted (or, with --dry-run, measured); a crash-cut tail, where Kafka's readers stop too, "
                      "or zero padding is left out and noted",
                   data="the input is damaged (refused; with --skip-damaged the intact batches are converted and "
                        "the damage reported; zstd inside a magic 0/1 wrapper is such damage), not a Kafka log "
                        "segment, or shrank while being read, a loss under "
                        "--strict, or the output did not verify (nothing is written then); or the segment was "
                        "written but its indexes could not be rebuilt",
                   usage="usage error (zstd batches to magic 0/1 without --recompress zstd=CODEC too), a missing, "
                         "refused or unreadable input, nothing to convert, an output that "
                         "cannot be written, or an output that exists (use --force) or is the input")


def _parse_recompress(values) -> dict[int, int]:
    mapping = {}
    for item in values:
        src, sep, dst = item.partition("=")
        src, dst = src.strip().lower(), dst.strip().lower()
        if not sep or src not in CODEC_IDS or dst not in CODEC_IDS:
            raise click.BadParameter(f"{item!r}: expected FROM=TO with codecs {', '.join(CODEC_NAMES)} "
                                     "(e.g. zstd=lz4)", param_hint="--recompress")
        mapping[CODEC_IDS[src]] = CODEC_IDS[dst]
    return mapping


@click.command("convert", epilog=EPILOG)
@click.argument("path", type=click.Path(path_type=str))
@click.option("--to-magic", type=click.Choice(["0", "1", "2"]), default=None,
              help="Message format to write: 0 (Kafka 0.8-0.9), 1 (0.10), 2 (0.11+). Required unless --dry-run.")
@output_path_option("Where to write: a file, or a directory (existing, or named with a trailing /; created if "
                    "missing) that gets the input's own NNN.log name. Required (the input is never modified).",
                    metavar="FILE|DIR/")
@click.option("--compression", type=click.Choice(CODEC_CHOICES), default="keep", show_default=True,
              help="Codec of the output batches; keep = each batch keeps its own (Kafka's rule).")
@click.option("--recompress", multiple=True, metavar="FROM=TO",
              help="With keep: write FROM-compressed batches as TO instead (e.g. zstd=lz4, the way to take zstd "
                   "batches below magic 2). Repeatable.")
@click.option("--force", is_flag=True, help="Replace an existing output file.")
@click.option("--strict", is_flag=True,
              help="Refuse the conversion if anything would be lost (headers, control batches, timestamps, "
                   "producer state, ...); nothing is written then.")
@click.option("--skip-damaged", is_flag=True,
              help="Convert the intact batches around damaged areas (a damaged size field, a batch failing its "
                   "CRC, ...), which are left out and reported; the run still exits 1, as verify does. By "
                   "default a damaged input is refused, as Kafka's converter refuses a corrupt record.")
@click.option("--dry-run", is_flag=True,
              help="Write nothing; print the size the segment would have in each magic and codec.")
@click.option("--max-batch-records", type=click.IntRange(min=0), default=0, show_default=True,
              help="Cut runs of uncompressed legacy messages (one batch going up, one wrapper with --compression) "
                   "after N records (0: no limit).")
@click.option("--split-batch-bytes", type=click.IntRange(min=0), default=None,
              help="Cut those runs so that no new batch exceeds N bytes before compression "
                   "[default: 1048588, Kafka's message.max.bytes; 0: no limit].")
@renamed_option("--max-batch-bytes", "--split-batch-bytes (--max-batch-bytes is the memory guard of dump and "
                "verify)", "split_batch_bytes", type=click.IntRange(min=0))
@click.option("--all-in-target-magic", is_flag=True,
              help="Write every batch in the target magic. By default a down-conversion (the input has batches "
                   "above the target magic) copies batches already below it as they are, as Kafka does "
                   "(magic-0 batches stay magic 0 going to 1).")
@output_options(format_help="text for people; json: one JSON document with every count.")
def command(path, to_magic, output, compression, recompress, force, strict, skip_damaged, dry_run, max_batch_records,
            split_batch_bytes, all_in_target_magic, ui: Ui):
    """Rewrite a segment (or every segment of a partition directory) in another message format.

    Offsets are kept. Batches already in the target format are copied byte for byte; the others are
    re-encoded the way Kafka converts (up: one v2 batch per wrapper or run of messages; down: headers,
    control batches and producer fields dropped, and batches already below the target format copied). Whatever
    cannot be carried over is counted and
    reported; --strict refuses instead. The output is written to a temporary file, read back and
    checked record by record, and only then renamed into place.

    \b
    Examples:
      kdump convert 00000000000000000000.log --to-magic 1 -o old-clients/
      kdump convert my-topic-0/ --to-magic 2 --compression lz4 -o my-topic-0-v2/
      kdump convert F.log --to-magic 0 --recompress zstd=gzip --strict -o out/F.log
      kdump convert F.log --dry-run
    """
    from kdump import convert as conv
    from kdump.commands.hints import force_hint
    from kdump.write.segment import WriteVerificationError

    recompress_map = _parse_recompress(recompress)
    codec = None if compression == "keep" else CODEC_IDS[compression]
    limits = {"max_batch_records": max_batch_records, "all_in_target_magic": all_in_target_magic}
    if split_batch_bytes is not None:
        limits["max_batch_bytes"] = split_batch_bytes
    from kdump.read.scan import scan
    refused = None if os.path.isdir(path) else scan([path]).entries[0].refused
    if refused is not None:  # missing, a FIFO or device: never opened
        ui.cannot(path, refused.as_oserror())
        ui.exit()

    if dry_run:
        _dry_run(ui, conv, path, to_magic, codec, compression, recompress_map, limits)
        return
    if to_magic is None:
        raise click.UsageError("--to-magic is required (or use --dry-run to compare the sizes of every format)")
    if output is None:
        raise click.UsageError("-o/--output is required: kdump never modifies its input "
                               "(give a directory to keep the segment's name, e.g. -o converted/)")
    try:
        options = conv.ConvertOptions(int(to_magic), codec, recompress_map, strict=strict, skip_damaged=skip_damaged,
                                      **limits)
    except ValueError as e:
        raise click.UsageError(str(e)) from None

    from kdump.render.convert import result_lines
    report = ui.renderer.results(ui.stdout, ui.echo)

    def on_result(result):
        ui.read(result.source)
        for d in result.stats.damage:  # written from the intact batches around it; the run fails as verify does
            ui.problem(result.source, d.describe(), position=d.start, error=d.code)
            errors.append(d.to_dict(result.source))
        if result.indexes is not None and result.indexes.problem:  # written and verified; its indexes are not
            ui.problem(result.output, result.indexes.note)
        report.result(result.to_dict(), result_lines(result, hinted))

    from kdump.commands.progress import with_progress
    from kdump.errors import error_object
    from kdump.jobs import path_work
    errors = []  # each error as an object in the document too (a format for programs)
    try:
        if os.path.isdir(path):
            if os.path.exists(output) and not os.path.isdir(output):
                raise click.UsageError(f"{output} is a file; converting a directory needs an output directory")
            segments = conv.segments_in(path)
            if not segments:
                ui.nothing(path, "no NNN.log segments in this directory")
                ui.exit()

            def convert_all(advance):
                done = on_result if advance is None else (lambda r: (on_result(r), advance(r.stats.source_bytes)))
                conv.convert_directory(path, output, options, overwrite=force, on_result=done)
            with_progress(ui, lambda: path_work([path]).total, "converting", convert_all)
        else:
            dest = conv.output_path_for(path, output)
            if dest != output:
                os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
            on_result(conv.convert_segment(path, dest, options, overwrite=force))
    except conv.ConversionRefused as e:
        _report_error(ui, e.source or path, e, whole=os.path.isdir(path))
        errors.append(error_object(e.source or path, e.code, hinted(e.reason, e.message), e.position))
    except FileExistsError as e:
        hint = force_hint(e, force)
        errors.append(error_object(e.filename or output, "output-exists", f"{e.strerror or e}{hint}"))
        if e.filename:
            ui.problem(e.filename, f"{e.strerror}{hint}", code=EXIT_USAGE)
        else:
            ui.problem(None, f"{e}{hint}", code=EXIT_USAGE)
    except OSError as e:
        doing = "write" if isinstance(e, WriteError) or _is_output(e.filename, output) else "read"
        ui.cannot(e.filename or (output if doing == "write" else path), e, doing)
        errors.append(error_object(os.fsdecode(e.filename or (output if doing == "write" else path)), f"cannot-{doing}",
                                   f"cannot {doing}: {e.strerror or e}"))
    except WriteVerificationError as e:
        ui.problem(None, f"{e}; nothing was written")
        errors.append(error_object(path, "write-verification-failed", f"{e}; nothing was written"))
    report.end({"errors": errors})
    ui.exit()


def _is_output(filename, output) -> bool:  # (kdump.errors.WriteError says so itself)
    """Whether a failed file (None: unnamed, as a full disk leaves it) is on the output side."""
    if filename is None:
        return True
    out = os.path.abspath(output)
    name = os.path.abspath(os.fsdecode(filename))
    return (name == out or name.startswith(os.path.join(out, ""))
            or os.path.basename(name).startswith(f".{os.path.basename(out)}."))  # its temporary


# Refusals of sound input for what the command line asks: zstd batches to magic 0/1 (Kafka's down-conversion refuses
# them too) is a usage refusal, exit 2 as `--compression zstd --to-magic 1` is; every other refusal is damage (1).
# zstd *inside* a magic 0/1 wrapper is invalid record data (Kafka's LogValidator rejects it): damage, in every command.
USAGE_REFUSALS = {"zstd-below-v2"}


def _report_error(ui: Ui, path, e, whole: bool = False) -> None:
    ui.problem(path, hinted(e.reason, e.message), position=e.position,
               code=EXIT_USAGE if e.code in USAGE_REFUSALS else EXIT_DATA)
    ui.say("kdump: nothing was written (a partition is converted all or nothing)" if whole else
           "kdump: nothing was written for this segment")


def _dry_run(ui: Ui, conv, path, to_magic, codec, compression, recompress_map, limits) -> None:
    from kdump.render.convert import estimate_lines
    if os.path.isdir(path):
        paths = conv.segments_in(path)
        if not paths:
            ui.nothing(path, "no NNN.log segments in this directory")
            ui.exit()
    else:
        paths = [path]
    magics = (0, 1, 2) if to_magic is None else (int(to_magic),)
    codecs = conv.DRY_RUN_CODECS if codec is None and compression == "keep" else (codec,)
    report = ui.renderer.results(ui.stdout, ui.echo, key="dryRun")
    for p in paths:
        try:
            size = os.path.getsize(p)
            estimates = conv.estimate_sizes(p, magics, codecs, recompress=recompress_map, **limits)
        except OSError as e:
            ui.cannot(p, e)
            ui.exit()
        report.result({"path": p, "bytes": size, "estimates": [e.to_dict() for e in estimates]},
                      estimate_lines(p, size, estimates, magics, codecs))
        if all(e.refused for e in estimates):
            ui.outcome.saw(p, errors=1)  # no format can take it (each refusal is printed)
        else:
            ui.read(p)
    report.end({})
    ui.exit()
