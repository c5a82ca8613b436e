"""``kdump dump``: a thin Click layer over :mod:`kdump.dump` (options in, a renderer, problems to stderr, exit code)."""
from __future__ import annotations

import os

import click

from kdump.commands.decoder_options import chosen_decoder, chosen_schemas, decoder_options
from kdump.commands.filter_options import build_filter, header_filter_options, record_filter_options
from kdump.commands.hints import hinted
from kdump.commands.options import Ui, exit_help, jobs_option, output_options, reject, text_only, time_format_option
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES
from kdump.render.protocol import CountingRenderer

EPILOG = exit_help(ok="every file named was dumped (Kafka's \"Found N invalid bytes at the end\" of a crash-cut "
                      "tail included)",
                   data="a file is damaged (a batch failing its CRC too, printed with Kafka's isvalid: false) or is "
                        "not a Kafka file, or could not be read among readable ones (each problem on stderr: file, "
                        "byte position, cause); everything readable was still printed")


def _decoder_option(value, which, schemas=None, data_paths=()):
    from kdump.decode.payload import DecoderLoadError, load_decoder
    try:
        return load_decoder(value, schemas=schemas, data_paths=data_paths)
    except DecoderLoadError as e:
        raise click.BadParameter(hinted(e.code, str(e)), param_hint=f"--{which}-decoder") from None


def _registry_auto(paths, schemas, key_dec, value_dec):
    """``--decoder auto`` for keys and values not given a decoder: schema-registry where the first payload is
    framed with an id of the schemas found (kdump.decode.schema_registry.auto_decoder), else Java's UTF-8."""
    from kdump.decode.payload import load_decoder
    if key_dec is None or value_dec is None:
        from kdump.decode.schema_registry import auto_decoders
        auto_key, auto_value = auto_decoders(paths, schemas)
        key_dec = key_dec or auto_key
        value_dec = value_dec or auto_value
    return key_dec or load_decoder("string"), value_dec or load_decoder("string")


def _time_option(value, flag):
    if value is None:
        return None
    from kdump.read.locate import parse_time
    try:
        return parse_time(value)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint=flag) from None


# Whose text `dump` prints (docs/dump.md): the newest, Java, DumpLogSegments (apache/kafka trunk of the 4.x line,
# the reference corpus's answers), or with --compat scala the Scala tool that shipped in Kafka 2.x-3.9.
KAFKA_TEXT = ("output follows Apache Kafka 4.x's kafka-dump-log.sh (the Java DumpLogSegments); with --compat scala, "
              "the Scala tool of Kafka 2.x-3.9")


def _version(ctx, _param, value):
    """kafka-dump-log.sh --version prints Kafka's version and exits 0: here kdump's, and which Kafka text it
    follows."""
    if not value or ctx.resilient_parsing:
        return
    from kdump.commands.options import version_line
    click.echo(version_line())
    click.echo(KAFKA_TEXT)
    ctx.exit()


@click.command("dump", epilog=EPILOG)
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
              help="Show kdump's version and the Kafka version whose kafka-dump-log.sh text it prints (as "
                   "kafka-dump-log.sh --version does), and exit.")
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
@click.option("--header-decoder", default=None, metavar="NAME|MODULE:ATTR",
              help="Print header values too (` headers: [k=v,...]` after headerKeys; in JSON, header values "
                   "decoded), decoded like this; same choices as --key-decoder. On a terminal header values are "
                   "shown with --print-data-log, as string. Implies --print-data-log.")
@time_format_option(shows="batch, record, time-index and producer-snapshot timestamps")
@click.option("--key-decoder-class", default=None, metavar="CLASS",
              help="DumpLogSegments' spelling: Kafka's decoder class names (kafka.serializer.StringDecoder, ...) "
                   "as the kdump decoder of the same output, or a Python import path; as --key-decoder.")
@click.option("--value-decoder-class", default=None, metavar="CLASS",
              help="DumpLogSegments' spelling, as --key-decoder-class; as --value-decoder.")
@click.option("--compat", type=click.Choice(["java", "scala"]), default="java", show_default=True,
              help="Text of the newest (Java) tool, or of the Scala tool of Kafka 2.x-3.9 (text format only).")
@click.option("--max-batch-bytes", type=click.IntRange(min=1024), default=DEFAULT_MAX_BATCH_BYTES, show_default=True,
              help="Refuse a batch, or a decompressed payload, larger than this (protects memory).")
@click.option("--verify-index-only", is_flag=True,
              help="For .index/.timeindex files: check the entries against the log, print only the mismatches.")
@click.option("--index-sanity-check", is_flag=True,
              help="For .index/.timeindex files: only run Kafka's index sanity check.")
@click.option("--max-message-size", type=int, default=None,
              help="Accepted for DumpLogSegments' command lines; kdump reads each batch's size from its header and "
                   "bounds memory with --max-batch-bytes instead.")
@click.option("--companions", is_flag=True,
              help="In directory dumps, also dump each segment's .index, .timeindex, .txnindex and .snapshot, "
                   "and the text checkpoints (leader-epoch-checkpoint, partition.metadata, ...).")
@click.option("--from-offset", type=int, default=None, metavar="N",
              help="Start at the batch holding offset N (found with the offset index when there is one); "
                   "segments wholly before it are passed over.")
@click.option("--to-offset", type=int, default=None, metavar="M",
              help="Stop after offset M; segments starting after it are passed over.")
@click.option("--from-time", default=None, metavar="T",
              help="Start at the first batch with a timestamp at or after T: epoch ms or ISO-8601 "
                   "(2024-05-01T12:00:00Z; no zone = UTC). Uses the time index when there is one.")
@click.option("--to-time", default=None, metavar="T",
              help="Stop before the first batch whose timestamps are all after T (same forms as --from-time).")
@header_filter_options
@record_filter_options
@decoder_options
@output_options(format_help="text: DumpLogSegments' lines (coloured on a terminal). json: JSON Lines, one object "
                            "per batch. records: JSON Lines, one object per record with its topic, partition and "
                            "batch fields (kcat -J's shape; implies --print-data-log).",
                records=True,
                verbose_help="Also name the files of a directory that are passed over (checkpoints, "
                             "meta.properties, .deleted, ...).")
@jobs_option(default=1, more=" With one job the output streams; with more each partition is dumped to a "
                             "temporary file, written out in order as soon as it and those before it are done.")
def command(paths, files_csv, deep_iteration, print_data_log, skip_record_metadata, max_bytes, key_decoder,
            value_decoder, header_decoder, time_format, key_decoder_class, value_decoder_class, compat, max_batch_bytes,
            verify_index_only, index_sanity_check, max_message_size, companions, from_offset, to_offset, from_time,
            to_time, ui: Ui, jobs, **decoder_flags):
    """Print the batches and records of log segments, as Kafka's DumpLogSegments does.

    PATHS are .log segments, KRaft .checkpoint snapshots, their companion files (.index, .timeindex,
    .txnindex, producer .snapshot, leader-epoch-checkpoint and the other text checkpoints), or directories (a
    partition directory gives its segments in offset order; a log directory, every partition; --companions
    adds the companion files; Kafka's own checkpoint and metadata files are passed over). The text is Kafka's,
    line for line, so existing scripts keep working; where Kafka's tool dies on damaged data, kdump prints
    everything it can read and one error line per problem (file, byte position, cause) on stderr, and exits 1.

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
      kdump dump --print-data-log --time-format iso --header-decoder string my-topic-0/
      kdump dump --key order-1234 my-topic-0/
      kdump dump --print-data-log --value-match '"status": ?"failed"' --header trace-id my-topic-0/
      kdump dump --producer-id 4001 --transactional --codec zstd my-topic-0/

    \b
    Filters (all given must hold): --producer-id, --transactional/--no-transactional, --control-only, --codec
    and --magic read the batch header only, so a batch they exclude is never decompressed. --key, --key-match,
    --value-match and --header look at each record (they imply --deep-iteration and pass over control
    batches); a batch is printed only if one of its records matches, its batch line followed by the matching
    records only. Kafka's non-consecutive offsets report still covers every record read.
    """
    from kdump.dump import DumpOptions

    all_paths = list(paths)
    if files_csv:
        all_paths.extend(p for p in files_csv.split(",") if p)
    if not all_paths:
        raise click.UsageError("no files given: name one or more segment files or directories")
    text_only(ui, "--compat")
    key_spec = key_decoder or key_decoder_class
    value_spec = value_decoder or value_decoder_class
    record_decoder = chosen_decoder(decoder_flags)
    schemas = chosen_schemas(decoder_flags)
    if ui.renderer.per_record:  # one object per record, keys and values included
        deep_iteration = print_data_log = True
    print_data = (print_data_log or key_spec is not None or value_spec is not None or record_decoder is not None
                  or header_decoder is not None)
    key_dec = _decoder_option(key_spec or "string", "key", schemas, all_paths)
    value_dec = _decoder_option(value_spec or "string", "value", schemas, all_paths)
    if record_decoder == "auto":
        key_dec, value_dec = _registry_auto(all_paths, schemas, key_dec if key_spec else None,
                                            value_dec if value_spec else None)
    header_dec = None if header_decoder is None else _decoder_option(header_decoder, "header")
    filters = build_filter(decoder_flags, key_dec, value_dec, header_dec)
    from_time_ms = _time_option(from_time, "--from-time")
    to_time_ms = _time_option(to_time, "--to-time")
    if from_offset is not None and from_time_ms is not None:
        raise click.UsageError("--from-offset and --from-time cannot be combined")
    if from_offset is not None and to_offset is not None and to_offset < from_offset:
        raise click.UsageError(f"--to-offset {to_offset} is below --from-offset {from_offset}")
    if from_time_ms is not None and to_time_ms is not None and to_time_ms < from_time_ms:
        raise click.UsageError(f"--to-time {to_time} is before --from-time {from_time}")
    opts = DumpOptions(deep_iteration=deep_iteration, print_data=print_data,
                       skip_record_metadata=skip_record_metadata, max_bytes=max_bytes, compat=compat,
                       max_batch_bytes=max_batch_bytes, max_decompressed_bytes=max_batch_bytes,
                       verify_index_only=verify_index_only, index_sanity_check=index_sanity_check,
                       companions=companions, from_offset=from_offset, to_offset=to_offset, from_time=from_time_ms,
                       to_time=to_time_ms, record_decoder=record_decoder, filters=filters, time_format=time_format)
    run_dump(ui, all_paths, opts, key_dec, value_dec, header_dec, jobs=jobs)


def run_dump(ui: Ui, paths: list[str], opts, key_dec=None, value_dec=None, header_dec=None, *, jobs: int = 1) -> None:
    """Dump ``paths`` with ``opts`` (:class:`kdump.dump.DumpOptions`) and exit (also used by ``kdump index dump``);
    ``jobs`` > 1: the partitions in worker processes (:func:`kdump.dump.dump_in_workers`)."""
    from kdump.dump import Dumper, dump_in_workers, entries_to_dump, non_consecutive_report
    from kdump.read.logdir import FileKind
    from kdump.read.scan import scan
    from kdump.render.companions import index_report_lines

    found = scan(paths)  # once per run: the flags' check, the progress bar and the dump all read it
    if opts.verify_index_only or opts.index_sanity_check:
        kinds = {e.kind for e in entries_to_dump(found, companions=opts.companions)}
        if not kinds & {FileKind.INDEX, FileKind.TIMEINDEX}:
            flag = "--verify-index-only" if opts.verify_index_only else "--index-sanity-check"
            reject(flag, "applies to .index and .timeindex files, and none was named (add --companions to take "
                         "them from a directory, or use `kdump index dump`)")
    if key_dec is None:
        from kdump.decode.payload import load_decoder
        key_dec = value_dec = load_decoder("string")

    def dumper_to(out, sink, advance=None) -> Dumper:
        """A Dumper writing to ``out``, saying problems through ``sink`` (``ui``, or a worker's record of it);
        ``advance``: told each batch's bytes (a progress bar)."""
        def on_error(path, err):
            sink.problem(path, hinted(err.code, err.message), position=err.position)
            renderer.error(path, err)  # (a format for programs has its errors in its stream too)

        def on_unknown(path):
            sink.info(f"Ignoring unknown file {ui_path(path)}")

        def on_io_error(path, err):
            sink.cannot(path, err)
            renderer.io_error(path, f"cannot read: {err.strerror or err}")

        renderer = ui.renderer.batches(out, opts, key_dec, value_dec, no_color=not ui.color,
                                       header_decoder=header_dec)
        if advance is not None:
            renderer = CountingRenderer(renderer, advance)
        return Dumper(opts, renderer, on_error=on_error, on_unknown=on_unknown, on_io_error=on_io_error,
                      on_note=sink.note)

    def dump(advance, work=None) -> Dumper:
        dumper = dumper_to(ui.stdout, ui, advance)  # (with workers, each counts the batches it shows)
        dump_in_workers(dumper, found, jobs, dumper_to, ui, progress=advance, work=work)
        return dumper

    from kdump.text.escape import is_terminal
    if not is_terminal(ui.stdout):  # a dump to a terminal shows its progress itself (a bar would cut into its lines)
        from kdump.commands.progress import with_progress
        from kdump.dump import dump_work
        # the partitions dumped and their bytes, once: the --jobs map's sizes and the bar's total
        work = dump_work(entries_to_dump(found, companions=opts.companions))
        dumper = with_progress(ui, work.total, "dumping", lambda advance: dump(advance, work))
    else:
        dumper = dump(None)
    renderer = dumper.renderer
    renderer.out.flush()
    for result in dumper.results:
        if result.path not in dumper.unreadable:
            ui.read(result.path)
    from kdump.read.logdir import SET_ASIDE_KINDS, named_kind
    for path, kind in dumper.passed_over:
        if kind in SET_ASIDE_KINDS and named_kind(path) is not FileKind.UNKNOWN:
            # what an incident is often about: said always, with how to read it (Kafka's naming rules leave it out)
            ui.note(path, f"passed over: a {named_kind(path).value} file set aside ({kind.value}), not part of the "
                          "partition by Kafka's naming rules; name it to read it")
        elif ui.verbose:
            ui.note(path, f"passed over ({kind.value}; not a segment)")
    for path in dumper.outside_window if ui.verbose else ():
        ui.note(path, "passed over: no batch of it is in the --from-/--to- range")
    _nothing_dumped(ui, paths, dumper)
    from kdump.text.times import time_formatter
    for line in index_report_lines(dumper.index_reports, opts.compat, time_formatter(opts.time_format)):
        ui.say(line)
    for line in non_consecutive_report(dumper.results, opts.compat):
        ui.say(line)
    if opts.record_decoder is None:
        _internal_topic_hint(ui, dumper)
    ui.exit()


def ui_path(path) -> str:
    from kdump.text.escape import printable_path
    return printable_path(path)


def _nothing_dumped(ui: Ui, paths, dumper) -> None:
    """A directory that gave nothing to dump is not a success: say so (exit 2)."""
    for p in paths:
        if not os.path.isdir(p):
            continue
        prefix = os.path.join(p, "")
        if not any(r.path.startswith(prefix) and not r.skipped for r in dumper.results):
            ui.nothing(p, "nothing to dump: no log segments (<base offset>.log), KRaft snapshots (.checkpoint) "
                          "or companion files in this directory or below it")


def _internal_topic_hint(ui: Ui, dumper) -> None:
    """Which decoder would decode the internal topics' records just dumped without one: once per run and topic,
    whether a segment, its partition directory or a whole log directory was named."""
    from kdump.decode.internal import TOPIC_DECODERS, decoder_for_path
    names = (decoder_for_path(r.path) for r in dumper.results if r.batches and not r.skipped)
    for name in dict.fromkeys(n for n in names if n):
        ui.info(hinted("internal-topic", decoder=name, topic=TOPIC_DECODERS[name]))
