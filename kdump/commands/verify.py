"""``kdump verify``: a thin Click layer over :mod:`kdump.verify` (options in, reports out, exit code)."""
from __future__ import annotations

import os

import click

from kdump.commands.filter_options import deep_filter_options
from kdump.commands.findings import FAIL_ON_EXIT, FAIL_ON_OK, fail_on_option
from kdump.commands.options import Ui, exit_help, jobs_option, output_options, time_format_option
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES

EXIT_HELP = exit_help(ok=FAIL_ON_OK, data=FAIL_ON_EXIT)


@click.command("verify", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--deep", is_flag=True,
              help="Also decompress every batch and check every record against its batch header "
                   "(counts, offsets, timestamps, control records, legacy wrappers).")
@deep_filter_options
@click.option("--max-batch-bytes", type=click.IntRange(min=1024), default=DEFAULT_MAX_BATCH_BYTES,
              show_default=True,
              help="Largest batch, or decompressed payload, read into memory; a larger one is a finding "
                   "(its CRC is still checked, in chunks).")
@output_options(format_help="text: a short summary for people. json: per file its status, counts and every finding. "
                            "junit: JUnit XML for CI, one test case per file, its findings as a failure.",
                verbose_help="Also show info findings (offset gaps, ...) and every sound file.", findings=True)
@time_format_option(shows="the times findings quote (a batch's max timestamp against its records')")
@click.option("--value-decoder", type=click.Choice(["schema-registry"]), default=None,
              help="With --deep: also check that every value decodes with the Schema Registry's schemas "
                   "(finding value-undecodable).")
@click.option("--schemas", metavar="PATH", type=click.Path(exists=True, path_type=str), default=None,
              help="Where --value-decoder finds schemas (default: the _schemas partition beside the data).")
@fail_on_option
@jobs_option
def command(paths, deep, max_batch_bytes, ui: Ui, fail_on, jobs, time_format, value_decoder, schemas, **filters):
    """Check Kafka log segments, partition directories or whole log directories, and say exactly where
    and how they are damaged.

    \b
    Shallow (default): framing and sizes, magic bytes, the CRC of every batch, batch headers, offsets
    increasing and not below the segment's base offset, producer epochs and duplicates, what lies after
    the last whole batch (truncated tail, zero padding). After damage in the middle of a file, verify
    finds the next valid batch, reports the damaged byte range and the offsets lost, and goes on.
    --deep: every record too (with --producer-id, --transactional, --codec or --magic: only the records of
    the batches they select; every other check still covers every batch). Partition directories: segments in
    offset order, without overlaps.

    \b
    Examples:
      kdump verify 00000000000000000000.log
      kdump verify --deep /var/lib/kafka/data/orders-0
      kdump verify --format json /var/lib/kafka/data | jq '.files[] | select(.status != "ok")'
      kdump verify --deep --time-format iso 00000000000000000000.log
    """
    from kdump.commands.findings import render_reports
    from kdump.commands.progress import with_progress
    from kdump.verify import VerifyOptions, verify_paths, verify_work

    if not paths:
        raise click.UsageError("no paths given: name segment files, partition directories or log directories")
    from kdump.commands.filter_options import build_filter
    deep_filter = build_filter(filters)
    if deep_filter is not None and not deep:
        raise click.UsageError("--producer-id, --transactional, --codec and --magic choose the batches whose "
                               "records --deep checks: give --deep too")
    if value_decoder is not None and not deep:
        raise click.UsageError("--value-decoder checks every value, a record check: give --deep too")
    decoder = None
    if value_decoder is not None:
        from kdump.commands.hints import hinted
        from kdump.decode.errors import DecoderLoadError
        from kdump.decode.schema_registry import registry_decoder
        try:
            decoder = registry_decoder(schemas, paths)
        except DecoderLoadError as e:
            raise click.BadParameter(hinted(e.code, str(e)), param_hint="--value-decoder") from None
    options = VerifyOptions(deep=deep, max_batch_bytes=max_batch_bytes, deep_filter=deep_filter,
                            time_format=time_format)
    work = verify_work(paths)  # the units verified, and their sizes: the bar's total
    reports = with_progress(ui, work.total, "verifying",
                            lambda advance: verify_paths(work, options, progress=advance, jobs=jobs))
    if decoder is not None:
        _check_values(reports, decoder)
    if deep:
        from kdump.verify import check_internal_records
        check_internal_records(reports)
    render_reports(ui, reports, fail_on)


def _check_values(reports, decoder) -> None:
    """``value-undecodable`` on each segment report whose values do not all decode."""
    from kdump.decode.schema_registry.census import undecodable_values
    from kdump.decode.schema_registry.storage import DEFAULT_TOPIC
    from kdump.read.logdir import FileKind, classify, topic_partition
    from kdump.report.codes import CODES
    code = CODES["value-undecodable"]
    for report in reports:
        if report.io_error or classify(report.path) is not FileKind.LOG:
            continue
        named = topic_partition(os.path.dirname(os.path.abspath(report.path)))
        if named is not None and named[0] == DEFAULT_TOPIC:
            continue  # the registry's own topic holds JSON, not framed values
        found = undecodable_values(decoder, report.path)
        if found.first is not None:
            offset, position, reason = found.first
            report.add(code.name, code.severity, f"{found.count} of {found.values} values do not decode with the "
                       f"Schema Registry's schemas; the first, at offset {offset}: {reason}", position=position,
                       first_offset=offset)
