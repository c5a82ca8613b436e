"""``kdump index``: dump, check and rebuild a segment's index, snapshot and checkpoint files.
A thin Click layer over :mod:`kdump.index`."""
from __future__ import annotations

import os
import sys

import click

CHECK_EXIT_HELP = """\b
Exit codes:
  0  no error (warnings and info findings are reported; --fail-on warning makes warnings fail)
  1  findings: at least one error, or warning with --fail-on warning (each with file, byte position, cause)
  2  usage error, or a path is missing or unreadable
  70 a bug in kdump (rerun with KDUMP_DEBUG=1 for the traceback)"""

REBUILD_EXIT_HELP = """\b
Exit codes:
  0  the indexes were written (and verified)
  1  written, but Kafka's recovery would also truncate the log (damaged tail, reported); or
     nothing written because Kafka's recovery itself would fail on this log (reported)
  2  usage error, unreadable input, or an index exists and --force was not given
  70 a bug in kdump (rerun with KDUMP_DEBUG=1 for the traceback)"""

DUMP_EXIT_HELP = """\b
Exit codes:
  0  success
  1  a file is damaged (each problem on stderr: file, byte position, cause)
  2  usage error, or a file is missing or unreadable"""


@click.group("index")
def command():
    """Index, time-index, transaction-index, producer-snapshot and checkpoint files (docs/index.md).

    \b
    kdump index dump 00000000000000000000.log        every companion file of a segment, as Kafka prints them
    kdump index check /var/lib/kafka/data/orders-0   indexes, snapshots, checkpoints against the log
    kdump index rebuild --out /tmp/idx 00000000000000000000.log   what Kafka's recovery would write
    """


# --- dump ------------------------------------------------------------------------------------------------
def _companions_of(paths: list[str]) -> list[str]:
    """Companion files to dump: a segment gives its own; a directory all of them; a file itself."""
    from kdump.logdir import COMPANION_KINDS, TEXT_KINDS, FileKind, expand, named_kind, sibling
    out = []
    for p in paths:
        if os.path.isdir(p):
            out.extend(e.path for e in expand([p]) if e.kind in COMPANION_KINDS or e.kind in TEXT_KINDS)
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
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--compat", type=click.Choice(["java", "scala"]), default="java", show_default=True)
def dump_command(paths, verify_index_only, index_sanity_check, fmt, compat):
    """Print .index, .timeindex, .txnindex, .snapshot and checkpoint files as DumpLogSegments does (a
    readable form for the checkpoints it cannot read). PATHS: companion files, segments (their companion
    files), or partition directories. Same text as `kdump dump` on those files."""
    if not paths:
        raise click.UsageError("no paths given")
    files = _companions_of(list(paths))
    if not files:
        click.echo("kdump: no index, snapshot or checkpoint files found", err=True)
        sys.exit(0)
    from kdump.cli import dump
    click.get_current_context().invoke(dump, paths=tuple(files), verify_index_only=verify_index_only,
                                       index_sanity_check=index_sanity_check, fmt=fmt, compat=compat)


# --- check -----------------------------------------------------------------------------------------------
@command.command("check", epilog=CHECK_EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--deep", is_flag=True,
              help="Also walk every segment as Kafka's recovery would: entries on batch boundaries, time entries "
                   "against the running max timestamp and the record timestamps, the transaction index against "
                   "the aborted transactions recomputed from the log, leader epochs against the batches.")
@click.option("--index-interval-bytes", type=click.IntRange(min=0), default=4096, show_default=True,
              help="The topic's index.interval.bytes, for --deep's comparison with what recovery would write.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: a short summary for people. json: per file its status and every finding.")
@click.option("-v", "--verbose", is_flag=True, help="Also show info findings and every sound file.")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True,
              help="Lowest severity that makes the exit code 1 (as linters and fsck: warnings are reported, "
                   "and fail the run only with --fail-on warning).")
@click.option("--no-color", is_flag=True, help="No colour on a terminal (also: NO_COLOR=1).")
def check_command(paths, deep, index_interval_bytes, fmt, verbose, fail_on, no_color):
    """Check index, time-index, transaction-index, producer-snapshot and checkpoint files, on their own and
    against the log: every entry points where it claims, offsets and timestamps increase, entries lie inside
    the log, Kafka's own sanity checks hold.

    PATHS: a segment (.log or any of its companion files), a partition directory, or a log directory.

    \b
    Examples:
      kdump index check 00000000000000000000.log
      kdump index check --deep /var/lib/kafka/data/orders-0
      kdump index check --format json /var/lib/kafka/data | jq '.files[] | select(.status != "ok")'
    """
    from kdump.findings import exit_code, render_json, render_text
    from kdump.index.check import check_paths

    if not paths:
        raise click.UsageError("no paths given: name segments, partition directories or log directories")
    reports = check_paths(paths, deep=deep, index_interval_bytes=index_interval_bytes)
    out = click.get_text_stream("stdout")
    if fmt == "json":
        render_json(reports, out, fail_on)
    else:
        from rich.console import Console
        color = not no_color and not os.environ.get("NO_COLOR")
        console = Console(file=out, no_color=not color, highlight=False, soft_wrap=True)
        try:
            render_text(reports, console, verbose=verbose, list_ok=verbose or len(reports) <= 20)
        except TypeError:  # findings.render_text without list_ok
            render_text(reports, console, verbose=verbose)
    out.flush()
    sys.exit(exit_code(reports, fail_on))


# --- rebuild ---------------------------------------------------------------------------------------------
@command.command("rebuild", epilog=REBUILD_EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--index-interval-bytes", type=click.IntRange(min=0), default=4096, show_default=True,
              help="Kafka's index.interval.bytes (log.index.interval.bytes) of the topic.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=str), default=None,
              help="Write the files into this directory instead of next to the segment.")
@click.option("--force", is_flag=True, help="Replace existing index files that differ (each old one is kept as "
              "<name>.bak, replacing an older .bak).")
def rebuild_command(paths, index_interval_bytes, out_dir, force):
    """Write .index, .timeindex and .txnindex exactly as Kafka's segment recovery would (trimmed),
    atomically (temporary file, fsync, read back, rename), next to the segment or into --out. The .log is
    never written. PATHS: segments (.log) or partition directories (every segment, in offset order).

    \b
    Examples:
      kdump index rebuild --out /tmp/rebuilt 00000000000000000000.log
      kdump index rebuild --force /var/lib/kafka/data/orders-0      (broker stopped!)
    """
    from kdump.errors import KdumpError
    from kdump.index.rebuild import RebuildError, rebuild_directory, rebuild_segment

    if not paths:
        raise click.UsageError("no paths given: name .log segments or partition directories")
    if out_dir is not None and not os.path.isdir(out_dir):
        raise click.BadParameter(f"{out_dir} is not a directory", param_hint="--out")
    code = 0
    for p in paths:
        if not os.path.exists(p):
            click.echo(f"kdump: {p}: cannot read: no such file or directory", err=True)
            code = max(code, 2)
            continue
        try:
            if os.path.isdir(p):
                outcomes = rebuild_directory(p, out_dir, index_interval_bytes=index_interval_bytes, force=force)
                if not outcomes:
                    click.echo(f"kdump: {p}: no segments (<base offset>.log) in this directory", err=True)
                    code = max(code, 2)
            else:
                if not p.endswith(".log"):
                    raise click.BadParameter(f"{p}: name the segment's .log file (or its directory)")
                outcomes = [rebuild_segment(p, out_dir, index_interval_bytes=index_interval_bytes, force=force)]
        except RebuildError as e:
            click.echo(f"kdump: {p}: not rebuilt: {e.message}", err=True)
            code = max(code, 2 if e.code == "file-name-invalid" else 1)
            continue
        except FileExistsError as e:
            click.echo(f"kdump: {p}: not rebuilt: {e}", err=True)
            code = max(code, 2)
            continue
        except OSError as e:
            click.echo(f"kdump: {p}: cannot read: {e.strerror or e}", err=True)
            code = max(code, 2)
            continue
        except KdumpError as e:  # a written file did not read back as written: nothing was replaced
            click.echo(f"kdump: {p}: not rebuilt: {e}", err=True)
            code = max(code, 1)
            continue
        for o in outcomes:
            code = max(code, _report_outcome(o))
    sys.exit(code)


def _report_outcome(o) -> int:
    rec = o.recovery
    for note in o.notes:
        click.echo(f"kdump: note: {note}", err=True)
    n_off = len(rec.offset_index) // 8
    n_time = len(rec.time_index) // 12
    click.echo(f"{rec.log_path}: {rec.batches} batches, {n_off} offset index entries, {n_time} time index entries, "
               f"{len(rec.aborted)} aborted transactions")
    for path in o.written:
        click.echo(f"  wrote {path}")
    for path in o.unchanged:
        click.echo(f"  unchanged {path} (already what recovery writes; not rewritten)")
    for path in o.backups:
        click.echo(f"  kept the old file as {path}")
    for p in rec.problems:
        click.echo(f"kdump: {rec.log_path}: at byte {p.position}: {p.message}", err=True)
    if rec.stop_code is not None:
        click.echo(f"kdump: {rec.log_path}: at byte {rec.valid_bytes}: {rec.stop_message}; the indexes cover the "
                   f"first {rec.valid_bytes} bytes and Kafka's recovery would truncate the log there "
                   f"({rec.truncated_bytes} bytes; kdump did not touch it)", err=True)
        return 1
    return 0
