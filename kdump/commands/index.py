"""``kdump index``: dump, check and rebuild a segment's index, snapshot and checkpoint files.
A thin Click layer over :mod:`kdump.index`."""
from __future__ import annotations

import os

import click

from kdump.commands.findings import FAIL_ON_EXIT, FAIL_ON_OK, fail_on_option
from kdump.commands.options import (
    Ui,
    exit_help,
    jobs_option,
    make_output_dir,
    output_options,
    output_path_option,
    text_only,
    time_format_option,
)
from kdump.errors import EXIT_DATA, EXIT_USAGE

CHECK_EXIT_HELP = exit_help(ok=FAIL_ON_OK, data=FAIL_ON_EXIT)
REBUILD_EXIT_HELP = exit_help(ok="the indexes were written (and verified), or were already in place; a crash-cut "
                                 "tail that Kafka's recovery drops is reported as a warning",
                              data="written, but Kafka's recovery would also truncate the log at damage (reported); "
                                   "or nothing written because the file is not a Kafka log segment or Kafka's "
                                   "recovery itself would fail on this log (reported)",
                              usage="usage error, nothing to rebuild, a path missing or refused, no segment readable, "
                                    "an output that cannot be written, or an index exists that does not check clean "
                                    "against the log and --force was not given")
DUMP_EXIT_HELP = exit_help(ok="every file was dumped (Kafka's mismatch reports on stderr included, as Kafka exits 0)",
                           data="a file is damaged where Kafka's tool dies (each problem on stderr: file, byte "
                                "position, cause), or could not be read among readable ones",
                           usage="usage error; no index, snapshot or checkpoint file among the paths; a path "
                                 "missing or refused; no file readable")


@click.group("index")
def command():
    """Index, time-index, transaction-index, producer-snapshot and checkpoint files (docs/index.md).

    \b
    kdump index dump 00000000000000000000.log        every companion file of a segment, as Kafka prints them
    kdump index check /var/lib/kafka/data/orders-0   indexes, snapshots, checkpoints against the log
    kdump index rebuild -o /tmp/idx 00000000000000000000.log   what Kafka's recovery would write
    """


# --- dump ------------------------------------------------------------------------------------------------
def _companions_of(paths: list[str]) -> list[str]:
    """Companion files to dump: a segment gives its own; a directory all of them; a file itself."""
    from kdump.read.logdir import (
        COMPANION_KINDS,
        TEXT_KINDS,
        FileKind,
        named_kind,
        sibling,
    )
    from kdump.read.scan import scan
    out: list[str] = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(e.path for e in scan([p]).entries if e.kind in COMPANION_KINDS or e.kind in TEXT_KINDS)
        elif named_kind(p) is FileKind.LOG:
            out.extend(q for q in (sibling(p, k) for k in (FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX,
                                                            FileKind.PRODUCER_SNAPSHOT)) if os.path.exists(q))
        else:
            out.append(p)
    return out


@command.command("dump", epilog=DUMP_EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--verify-index-only", is_flag=True, help="Check index entries against the log; print only mismatches.")
@click.option("--index-sanity-check", is_flag=True, help="Only run Kafka's index sanity check.")
@click.option("--compat", type=click.Choice(["java", "scala"]), default="java", show_default=True,
              help="Text of the newest (Java) tool, or of the Scala tool of Kafka 2.x-3.9 (text format only).")
@time_format_option(shows="time-index and producer-snapshot timestamps")
@output_options(format_help="text: DumpLogSegments' lines. json: JSON Lines, one object per entry.")
def dump_command(paths, verify_index_only, index_sanity_check, compat, time_format, ui: Ui):
    """Print .index, .timeindex, .txnindex, .snapshot and checkpoint files as DumpLogSegments does (a
    readable form for the checkpoints it cannot read). PATHS: companion files, segments (their companion
    files), or partition directories. Same text as `kdump dump` on those files.

    \b
    Examples:
      kdump index dump 00000000000000000000.log
      kdump index dump --time-format iso 00000000000000000000.timeindex 00000000000000000042.snapshot
      kdump index dump --format json /var/lib/kafka/data/orders-0 | jq 'select(.kind == "snapshot")'
    """
    from kdump.commands.dump import run_dump
    from kdump.dump import DumpOptions

    if not paths:
        raise click.UsageError("no paths given")
    text_only(ui, "--compat")
    files = _companions_of(list(paths))
    if not files:
        ui.nothing(None, "no index, snapshot or checkpoint files found")
        ui.exit()
    run_dump(ui, files, DumpOptions(verify_index_only=verify_index_only, index_sanity_check=index_sanity_check,
                                    compat=compat, time_format=time_format))


# --- check -----------------------------------------------------------------------------------------------
@command.command("check", epilog=CHECK_EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--deep", is_flag=True,
              help="Also walk every segment as Kafka's recovery would: entries on batch boundaries, time entries "
                   "against the running max timestamp and the record timestamps, the transaction index against "
                   "the aborted transactions recomputed from the log, leader epochs against the batches.")
@click.option("--index-interval-bytes", type=click.IntRange(min=0), default=4096, show_default=True,
              help="The topic's index.interval.bytes, for --deep's comparison with what recovery would write.")
@output_options(format_help="text: a short summary for people. json: per file its status and every finding.",
                verbose_help="Also show info findings and every sound file.")
@time_format_option(shows="the times findings quote (time-index entries against the log)")
@fail_on_option
@jobs_option
def check_command(paths, deep, index_interval_bytes, ui: Ui, fail_on, jobs, time_format):
    """Check index, time-index, transaction-index, producer-snapshot and checkpoint files, on their own and
    against the log: every entry points where it claims, offsets and timestamps increase, entries lie inside
    the log, Kafka's own sanity checks hold.

    PATHS: a segment (.log or any of its companion files), a partition directory, or a log directory.

    \b
    Examples:
      kdump index check 00000000000000000000.log
      kdump index check --deep /var/lib/kafka/data/orders-0
      kdump index check --format json /var/lib/kafka/data | jq '.files[] | select(.status != "ok")'
      kdump index check --deep --time-format iso /var/lib/kafka/data/orders-0
    """
    from kdump.commands.findings import render_reports
    from kdump.commands.partition_paths import holds_one_of
    from kdump.commands.progress import with_progress
    from kdump.index.check import check_paths, check_work

    if not paths:
        raise click.UsageError("no paths given: name segments, partition directories or log directories")
    # Only --deep walks the logs; their bytes are the work (in this process or the workers, as they go).
    reports = with_progress(ui, (lambda: check_work(paths).total) if deep else 0, "checking",
                            lambda advance: check_paths(paths, deep=deep, index_interval_bytes=index_interval_bytes,
                                                        jobs=jobs, progress=advance, time_format=time_format))
    checked = [os.path.abspath(r.path) for r in reports]
    empty = [p for p in map(os.fspath, paths) if os.path.isdir(p) and not holds_one_of(p, checked)]
    for p in empty:  # a directory named that gave nothing to check: as every command says it (exit 2)
        ui.nothing(p, "nothing to check: no segments or companion files in this directory or below it")
    if not reports and not empty:
        ui.nothing(None, "nothing to check: no segments or companion files among the paths")
    render_reports(ui, reports, fail_on)


# --- rebuild ---------------------------------------------------------------------------------------------
@command.command("rebuild", epilog=REBUILD_EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--index-interval-bytes", type=click.IntRange(min=0), default=4096, show_default=True,
              help="Kafka's index.interval.bytes (log.index.interval.bytes) of the topic.")
@output_path_option("Write the files into this directory (created if missing) instead of next to the segment.",
                    old="--out")
@click.option("--force", is_flag=True, help="Replace existing index files that differ (each old one is kept as "
              "<name>.bak, replacing an older .bak).")
@output_options(format_help="text for people; json: one object per segment (files written, unchanged, kept).")
@fail_on_option
@jobs_option
def rebuild_command(paths, index_interval_bytes, output, force, ui: Ui, fail_on, jobs):
    """Write .index, .timeindex and .txnindex exactly as Kafka's segment recovery would (trimmed),
    atomically (temporary file, fsync, read back, rename), next to the segment or into -o/--output. The .log is
    never written. PATHS: segments (.log) or partition directories (every segment, in offset order).

    \b
    Examples:
      kdump index rebuild -o /tmp/rebuilt 00000000000000000000.log
      kdump index rebuild --force /var/lib/kafka/data/orders-0      (broker stopped!)
    """
    from kdump.commands.hints import force_hint
    from kdump.commands.progress import with_progress
    from kdump.errors import KdumpError, WriteError
    from kdump.index.check import CompanionChecks
    from kdump.index.rebuild import RebuildError, rebuild_directory, rebuild_segment
    from kdump.jobs import path_work
    from kdump.read.logdir import FileKind, named_kind
    from kdump.read.scan import scan

    if not paths:
        raise click.UsageError("no paths given: name .log segments or partition directories")
    ui.fail_on = fail_on
    for p in paths:
        if not os.path.isdir(p) and os.path.exists(p) and named_kind(p) is not FileKind.LOG:
            raise click.BadParameter(f"{p}: name the segment's .log file (or its directory)")
    if output is not None:
        make_output_dir(output)
    from kdump.render.rebuild import done_line
    report = ui.renderer.results(ui.stdout, ui.echo)
    already: list[str] = []  # per path, how much was already indexed (text)
    # Partition directories written next to their segments are independent: rebuilt in worker processes (not
    # with -o, where two partitions' files of the same name meet in one directory, first come first written).
    # Each path and the bytes of the segments it names, once: the --jobs map's sizes and the bar's total.
    work = path_work(paths)
    directories = work.only(lambda p: output is None and jobs > 1 and os.path.isdir(p))

    def rebuild_all(advance):
        from kdump.index.rebuild_jobs import rebuild_directories
        rebuilt = rebuild_directories(directories, index_interval_bytes=index_interval_bytes, force=force, jobs=jobs,
                                      progress=advance)
        for p in paths:
            counted = p in rebuilt  # its bytes were counted as its worker recovered each segment
            refused = None if os.path.isdir(p) else scan([p]).entries[0].refused
            if refused is not None:  # missing, a FIFO or device: never opened
                ui.cannot(p, refused.as_oserror())
                continue
            try:
                if os.path.isdir(p):
                    outcomes = rebuilt.pop(p) if p in rebuilt else rebuild_directory(
                        p, output, index_interval_bytes=index_interval_bytes, force=force,
                        existing=CompanionChecks())
                    if isinstance(outcomes, Exception):
                        raise outcomes
                    if not outcomes:
                        ui.nothing(p, "nothing to rebuild: no segments (<base offset>.log) in this directory")
                else:
                    outcomes = [rebuild_segment(p, output, index_interval_bytes=index_interval_bytes, force=force,
                                                existing=CompanionChecks())]
            except RebuildError as e:
                ui.problem(p, f"not rebuilt: {e.message}", code=EXIT_USAGE if e.code == "file-name-invalid"
                           else EXIT_DATA, error=e.code)
                continue
            except FileExistsError as e:
                ui.problem(p, f"not rebuilt: {e}{force_hint(e, force)}", code=EXIT_USAGE, error="output-exists")
                continue
            except WriteError as e:
                ui.cannot(e.filename, e, "write")
                continue
            except OSError as e:
                ui.cannot(e.filename or p, e, "read")
                continue
            except KdumpError as e:  # a written file did not read back as written: nothing was replaced
                ui.problem(p, f"not rebuilt: {e}", error="write-verification-failed")
                continue
            for o in outcomes:
                _report_outcome(ui, o, report)
                if advance is not None and not counted:
                    advance(o.recovery.valid_bytes + o.recovery.truncated_bytes)
            already.extend(filter(None, [done_line(p, outcomes)]))

    with_progress(ui, work.total, "rebuilding", rebuild_all)
    report.end(ui.error_fields(), already)
    ui.exit()


def _report_outcome(ui: Ui, o, report) -> None:
    from kdump.render.rebuild import outcome_doc, outcome_lines
    rec = o.recovery
    for note in o.notes:
        ui.note(None, note)
    report.result(outcome_doc(o), outcome_lines(o))
    ui.read(rec.log_path)
    for p in rec.problems:
        ui.warning(rec.log_path, p.message, position=p.position)
    if rec.stop_code is not None:
        # a crash-cut tail is Kafka's "Found N invalid bytes at the end" (exit 0): a warning, as in verify
        message = (f"{rec.stop_message}; the indexes cover the first {rec.valid_bytes} bytes and Kafka's recovery "
                   f"would truncate the log there ({rec.truncated_bytes} bytes; kdump did not touch it)")
        if rec.stop_code == "truncated-tail":
            ui.warning(rec.log_path, message, position=rec.valid_bytes)
        else:
            ui.problem(rec.log_path, message, position=rec.valid_bytes, error=rec.stop_code)
