"""``kdump verify``: a thin Click layer over :mod:`kdump.verify` (options in, reports out, exit code)."""
from __future__ import annotations

import os
import sys

import click

from kdump.segment import DEFAULT_MAX_BATCH_BYTES

EXIT_HELP = """\b
Exit codes:
  0  no error (warnings and info findings are reported; --fail-on warning makes warnings fail)
  1  findings: at least one error, or warning with --fail-on warning (each with file, byte position, cause)
  2  usage error, or a path is missing or unreadable
  70 a bug in kdump (rerun with KDUMP_DEBUG=1 for the traceback)"""

# A progress bar is worth its noise only when a run takes a while.
PROGRESS_MIN_BYTES = 256 << 20


@click.command("verify", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--deep", is_flag=True,
              help="Also decompress every batch and check every record against its batch header "
                   "(counts, offsets, timestamps, control records, legacy wrappers).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: a short summary for people. json: per file its status, counts and every finding.")
@click.option("--max-batch-bytes", type=click.IntRange(min=1024), default=DEFAULT_MAX_BATCH_BYTES,
              show_default=True,
              help="Largest batch, or decompressed payload, read into memory; a larger one is a finding "
                   "(its CRC is still checked, in chunks).")
@click.option("-v", "--verbose", is_flag=True, help="Also show info findings (offset gaps, ...) and every sound file.")
@click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True,
              help="Lowest severity that makes the exit code 1 (as linters and fsck: warnings are reported, "
                   "and fail the run only with --fail-on warning).")
@click.option("--no-color", is_flag=True, help="No colour on a terminal (also: NO_COLOR=1).")
def command(paths, deep, fmt, max_batch_bytes, verbose, fail_on, no_color):
    """Check Kafka log segments, partition directories or whole log directories, and say exactly where
    and how they are damaged.

    \b
    Shallow (default): framing and sizes, magic bytes, the CRC of every batch, batch headers, offsets
    increasing and not below the segment's base offset, producer epochs and duplicates, what lies after
    the last whole batch (truncated tail, zero padding). After damage in the middle of a file, verify
    finds the next valid batch, reports the damaged byte range and the offsets lost, and goes on.
    --deep: every record too. Partition directories: segments in offset order, without overlaps.

    \b
    Examples:
      kdump verify 00000000000000000000.log
      kdump verify --deep /var/lib/kafka/data/orders-0
      kdump verify --format json /var/lib/kafka/data | jq '.files[] | select(.status != "ok")'
    """
    from kdump.findings import exit_code, render_json, render_text
    from kdump.verify import VerifyOptions, total_bytes, verify_paths

    if not paths:
        raise click.UsageError("no paths given: name segment files, partition directories or log directories")
    options = VerifyOptions(deep=deep, max_batch_bytes=max_batch_bytes)
    color = not no_color and not os.environ.get("NO_COLOR")
    progress_bar = None
    if _stderr_is_terminal():
        total = total_bytes(paths)
        if total >= PROGRESS_MIN_BYTES:
            progress_bar = _progress(total, color)
    if progress_bar is None:
        reports = verify_paths(paths, options)
    else:
        with progress_bar as (bar, task):
            reports = verify_paths(paths, options, progress=lambda n: bar.advance(task, n))
    out = click.get_text_stream("stdout")
    if fmt == "json":
        render_json(reports, out, fail_on)
    else:
        if color and (out.isatty() or os.environ.get("FORCE_COLOR")):
            from rich.console import Console
            console = Console(file=out, highlight=False, soft_wrap=True)
        else:  # piped, or --no-color: plain lines (and no rich to import)
            from kdump.findings import PlainConsole
            console = PlainConsole(out)
        render_text(reports, console, verbose=verbose, list_ok=verbose or len(reports) <= 20)
    out.flush()
    sys.exit(exit_code(reports, fail_on))


def _stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


class _progress:
    """A rich progress bar on stderr (bytes verified out of the total)."""

    def __init__(self, total: int, color: bool):
        self.total = total
        self.color = color

    def __enter__(self):
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn, TransferSpeedColumn
        self.bar = Progress("verifying", BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                            console=Console(stderr=True, **({} if self.color else {"color_system": None})),
                            transient=True)
        self.bar.__enter__()
        return self.bar, self.bar.add_task("verify", total=self.total)

    def __exit__(self, *exc):
        self.bar.__exit__(*exc)
