"""The ``kdump`` command: a thin Click layer over the library (parse options, call, render)."""
from __future__ import annotations

import os
import sys

import click

from kdump import __version__
from kdump.commands.decoder_options import chosen_decoder, decoder_options
from kdump.errors import EXIT_DATA, EXIT_OK, EXIT_USAGE

EXIT_CODES_HELP = """\b
Exit codes:
  0  success
  1  the data is damaged or could not be fully read (details on stderr)
  2  usage error, or a file is missing or unreadable"""


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="kdump")
def cli():
    """Read, check and convert Apache Kafka log segments without a broker.

    \b
    kdump dump 00000000000000000000.log              what DumpLogSegments prints
    kdump dump --print-data-log /var/kafka/topic-0   every segment of a partition, with keys and values
    kdump dump --format json --deep-iteration F.log  JSON Lines, one object per batch
    """


def _stderr(msg: str) -> None:
    from kdump.render.terminal import for_stream
    click.echo(for_stream(msg, sys.stderr), err=True)


def _decoder_option(value, which):
    from kdump.decode.payload import DecoderLoadError, load_decoder
    try:
        return load_decoder(value)
    except DecoderLoadError as e:
        raise click.BadParameter(str(e), param_hint=f"--{which}-decoder") from None


@cli.command(epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path(dir_okay=True, path_type=str))
@click.option("--files", "files_csv", metavar="F1,F2", help="Comma-separated files, as Kafka's tool takes them.")
@click.option("--deep-iteration", is_flag=True, help="Print one line per record (inside compressed batches too).")
@click.option("--print-data-log", is_flag=True, help="Print keys and values. Implies --deep-iteration.")
@click.option("--skip-record-metadata", is_flag=True,
              help="Leave out the per-record metadata (and control records); with --print-data-log only data.")
@click.option("--max-bytes", type=click.IntRange(min=0), default=None,
              help="Read at most this many bytes from the start of each file (whole batches only).")
@click.option("--key-decoder", default=None, metavar="NAME|MODULE:ATTR",
              help="How to print keys: string (default, Java's UTF-8), hex, base64, json, int32, int64, "
                   "or an import path to your own. Implies --print-data-log.")
@click.option("--value-decoder", default=None, metavar="NAME|MODULE:ATTR",
              help="How to print values; same choices as --key-decoder. Implies --print-data-log.")
@click.option("--key-decoder-class", default=None, hidden=True)
@click.option("--value-decoder-class", default=None, hidden=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: DumpLogSegments' lines (coloured on a terminal). json: JSON Lines, one object per batch.")
@click.option("--compat", type=click.Choice(["java", "scala"]), default="java", show_default=True,
              help="Text of the newest (Java) tool, or of the Scala tool of Kafka 2.x-3.9.")
@click.option("--no-color", is_flag=True, help="No colour on a terminal (also: NO_COLOR=1).")
@click.option("--max-batch-bytes", type=click.IntRange(min=1024), default=256 * 1024 * 1024, show_default=True,
              help="Refuse a batch, or a decompressed payload, larger than this (protects memory).")
@click.option("--verify-index-only", is_flag=True,
              help="For .index/.timeindex files: check the entries against the log, print only the mismatches.")
@click.option("--index-sanity-check", is_flag=True,
              help="For .index/.timeindex files: only run Kafka's index sanity check.")
@click.option("--max-message-size", type=int, default=None, hidden=True)  # Kafka's; kdump reads headers only
@click.option("--companions", is_flag=True,
              help="In directory dumps, also dump each segment's .index, .timeindex, .txnindex and .snapshot, "
                   "and the text checkpoints (leader-epoch-checkpoint, partition.metadata, ...).")
@click.option("--from-offset", type=int, default=None, metavar="N",
              help="Start at the batch holding offset N (found with the offset index when there is one).")
@click.option("--to-offset", type=int, default=None, metavar="M", help="Stop after offset M.")
@click.option("--from-time", default=None, metavar="T",
              help="Start at the first batch with a timestamp at or after T: epoch ms or ISO-8601 "
                   "(2024-05-01T12:00:00Z; no zone = UTC). Uses the time index when there is one.")
@decoder_options
def dump(paths, files_csv, deep_iteration, print_data_log, skip_record_metadata, max_bytes, key_decoder,
         value_decoder, key_decoder_class, value_decoder_class, fmt, compat, no_color, max_batch_bytes,
         verify_index_only, index_sanity_check, max_message_size, companions, from_offset, to_offset, from_time,
         **decoder_flags):
    """Print the batches and records of log segments, as Kafka's DumpLogSegments does.

    PATHS are .log segments, KRaft .checkpoint snapshots, their companion files (.index, .timeindex,
    .txnindex, producer .snapshot, leader-epoch-checkpoint and the other text checkpoints), or directories (a
    partition directory gives its segments in offset order; a log directory, every partition; --companions
    adds the companion files). The text is Kafka's, line for line, so
    existing scripts keep working; where Kafka's tool dies on damaged data, kdump prints everything it
    can read and one error line per problem (file, byte position, cause) on stderr, and exits 1.

    \b
    Examples:
      kdump dump 00000000000000000000.log
      kdump dump --deep-iteration --print-data-log --value-decoder json my-topic-0/
      kdump dump --files a.log,b.log --max-bytes 1048576
      kdump dump --deep-iteration --from-offset 1200000 --to-offset 1200010 my-topic-0/
      kdump dump --verify-index-only 00000000000000000000.index 00000000000000000000.timeindex
      kdump dump --offsets-decoder __consumer_offsets-12/00000000000000000000.log
      kdump dump --cluster-metadata-decoder __cluster_metadata-0/00000000000000012345-0000000007.checkpoint
      kdump dump --decoder auto --format json /var/kafka/__transaction_state-3/
    """
    from kdump.dump import Dumper, DumpOptions, non_consecutive_report

    all_paths = list(paths)
    if files_csv:
        all_paths.extend(p for p in files_csv.split(",") if p)
    if not all_paths:
        raise click.UsageError("no files given: name one or more segment files or directories")
    key_spec = key_decoder or key_decoder_class
    value_spec = value_decoder or value_decoder_class
    record_decoder = chosen_decoder(decoder_flags)
    print_data = print_data_log or key_spec is not None or value_spec is not None or record_decoder is not None
    key_dec = _decoder_option(key_spec or "string", "key")
    value_dec = _decoder_option(value_spec or "string", "value")
    from_time_ms = None
    if from_time is not None:
        from kdump.index.seek import parse_time
        try:
            from_time_ms = parse_time(from_time)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--from-time") from None
    if from_offset is not None and from_time_ms is not None:
        raise click.UsageError("--from-offset and --from-time cannot be combined")
    if from_offset is not None and to_offset is not None and to_offset < from_offset:
        raise click.UsageError(f"--to-offset {to_offset} is below --from-offset {from_offset}")
    opts = DumpOptions(deep_iteration=deep_iteration, print_data=print_data,
                       skip_record_metadata=skip_record_metadata, max_bytes=max_bytes, compat=compat,
                       max_batch_bytes=max_batch_bytes, max_decompressed_bytes=max_batch_bytes,
                       verify_index_only=verify_index_only, index_sanity_check=index_sanity_check,
                       companions=companions, from_offset=from_offset, to_offset=to_offset, from_time=from_time_ms,
                       record_decoder=record_decoder)

    out = click.get_text_stream("stdout")
    status = {"code": EXIT_OK}

    def on_error(path, err):
        status["code"] = max(status["code"], EXIT_DATA)
        where = f"at byte {err.position}: " if err.position is not None else ""
        _stderr(f"kdump: {path}: {where}{err.message}")
        if fmt == "json":  # errors are in the JSON stream too
            renderer.error(path, err)

    def on_unknown(path):
        _stderr(f"Ignoring unknown file {path}")

    def on_io_error(path, err):
        status["code"] = max(status["code"], EXIT_USAGE)
        _stderr(f"kdump: {path}: cannot read: {err.strerror or err}")
        if fmt == "json":
            renderer.io_error(path, f"cannot read: {err.strerror or err}")

    def on_note(path, message):
        _stderr(f"kdump: {path}: note: {message}")

    renderer = _make_renderer(fmt, out, opts, key_dec, value_dec, no_color)
    dumper = Dumper(opts, renderer, on_error=on_error, on_unknown=on_unknown, on_io_error=on_io_error,
                    on_note=on_note)
    dumper.dump_paths(all_paths)
    renderer.out.flush()
    for line in dumper.index_reports.lines(compat):
        _stderr(line)
    for line in non_consecutive_report(dumper.results, compat):
        _stderr(line)
    if record_decoder is None:
        _internal_topic_hint(all_paths)
    sys.exit(status["code"])


def _internal_topic_hint(paths) -> None:
    from kdump.decoders import internal_topic_hint
    hint = next((h for h in map(internal_topic_hint, paths) if h), None)
    if hint:
        _stderr(hint)


def _make_renderer(fmt, out, opts, key_dec, value_dec, no_color):
    terminal = out.isatty()  # record bytes are shown escaped on a terminal, never raw (kdump.render.terminal)
    if fmt == "json":
        from kdump.render.jsonl import JsonLinesRenderer
        return JsonLinesRenderer(out, print_data=opts.print_data, deep=opts.deep, terminal=terminal)
    from kdump.render.kafka_text import KafkaTextRenderer
    use_rich = terminal and not no_color and not os.environ.get("NO_COLOR")
    if use_rich:
        from kdump.render.rich_text import RichTextOut
        out = RichTextOut()
    return KafkaTextRenderer(out, print_data=opts.print_data, skip_record_metadata=opts.skip_record_metadata,
                             key_decoder=key_dec, value_decoder=value_dec, compat=opts.compat, terminal=terminal)


def main(argv=None):
    """Entry point: never shows a traceback for bad input; a broken pipe (``| head``) ends quietly."""
    if hasattr(sys.stdout, "reconfigure"):
        try:
            sys.stdout.reconfigure(encoding="utf-8", errors="surrogateescape")
        except Exception:  # pragma: no cover - exotic streams
            pass
    try:
        cli.main(args=argv, prog_name="kdump", standalone_mode=True)
    except BrokenPipeError:
        # Python flushes stdout at exit; point it at devnull so that flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_OK)
    except KeyboardInterrupt:
        _stderr("kdump: interrupted")
        sys.exit(130)
    except Exception as e:  # a bug in kdump: say so briefly; KDUMP_DEBUG=1 shows the traceback
        if os.environ.get("KDUMP_DEBUG"):
            raise
        _stderr(f"kdump: internal error: {type(e).__name__}: {e} (this is a bug in kdump; rerun with "
                "KDUMP_DEBUG=1 for details and please report it)")
        sys.exit(70)


def _register_commands():
    """Subcommands living in their own modules (kdump/commands/*.py), each a thin layer over its library."""
    import importlib
    for name in ("verify", "index", "convert", "groups", "metadata", "txn_state", "spark"):
        try:
            module = importlib.import_module(f"kdump.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"kdump.commands.{name}":
                raise
            continue  # not written yet
        cli.add_command(module.command)


_register_commands()
