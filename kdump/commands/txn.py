"""``kdump txn``: a thin Click layer over :mod:`kdump.txn`."""
from __future__ import annotations

import sys

import click

from kdump.commands.options import exit_help, jobs_option, output_options, time_format_option

EXIT_HELP = exit_help(
    ok="everything read, no hanging transaction",
    data="at least one hanging transaction (open longer than --timeout, or open across a segment roll), damage in "
         "what was read (each damaged area on stderr: file, byte position, cause), a file that is not a Kafka log "
         "segment, or a segment that could not be read")


def _duration(text: str) -> int:
    """``900``/``900s``, ``15m``, ``2h``, ``1d``, ``500ms`` -> milliseconds."""
    units = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
    t = text.strip().lower()
    for unit in ("ms", "s", "m", "h", "d"):
        if t.endswith(unit) and t[:-len(unit)].isdigit():
            return int(t[:-len(unit)]) * units[unit]
    if t.isdigit():
        return int(t) * 1000
    raise click.BadParameter(f"{text!r} is not a duration such as 900s, 15m, 2h or 1d", param_hint="--timeout")


@click.command("txn", epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, type=click.Path(path_type=str))
@click.option("--timeout", default="15m", show_default=True, metavar="DURATION",
              help="An open transaction older than this is hanging (Kafka's default transaction.max.timeout.ms). "
                   "Age: the newest timestamp in the partition minus the transaction's first timestamp.")
@click.option("--open-only", is_flag=True,
              help="List only the partitions with a transaction still open, and in them only the open "
                   "transactions (each partition's counts stay complete); says so when none is open.")
@time_format_option(shows="the first timestamp of each transaction and the newest of each partition")
@output_options()
@jobs_option
def command(paths, timeout, open_only, time_format, ui, jobs):
    """Every transaction in the log, per partition and producer: its first and last offset, its outcome
    (COMMIT, ABORT, or OPEN at the end of the log) and its age; hanging transactions flagged; the last stable
    offset; disagreements with the .txnindex files and producer .snapshot files.

    PATHS: segments, partition directories or log directories. A transaction is hanging when it is still open
    and older than --timeout, or was begun before the active segment (open across a segment roll): it holds
    the LSO, and every read_committed consumer, back.

    \b
    Examples:
      kdump txn /var/lib/kafka/data/payments-0
      kdump txn --timeout 1h /var/lib/kafka/data || alert "hanging transaction"
      kdump txn --format json payments-0/ | jq '.partitions[].transactions[] | select(.hanging)'
      kdump txn --time-format local --open-only /var/lib/kafka/data/payments-0
    """
    from kdump.commands.partition_paths import partition_groups, say_problems
    from kdump.commands.progress import with_progress
    from kdump.jobs import group_work
    from kdump.render import RENDERERS
    from kdump.render.txn import partition_lines
    from kdump.render.words import count
    from kdump.report.outcome import Outcome
    from kdump.text.times import time_formatter
    from kdump.txn import transactions

    timeout_ms = _duration(timeout)
    outcome = Outcome()
    groups, refused = partition_groups(paths, ui, outcome)
    work = group_work(groups)  # each partition's segments and their bytes: the --jobs map's sizes, the bar's total
    found = with_progress(ui, work.total, "reading transactions",
                          lambda advance: transactions(work, timeout_ms=timeout_ms, jobs=jobs, progress=advance))
    say_problems(ui, [e for r in found for e in r.errors])  # (notes are in the report)
    results = []
    for r in found:
        if r.read:
            outcome.file(errors=len(r.errors), warnings=len(r.disagreements))
            outcome.hanging_transactions(len(r.hanging))
            results.append(r)
        else:  # every segment unreadable: its errors are said, and no report of zeros
            outcome.cannot_read()
    hanging = sum(len(r.hanging) for r in results)
    errors = [*refused, *(e for r in found if not r.read for e in r.errors)]

    from kdump.txn import OPEN
    # --open-only answers "what holds the LSO back?": a partition with nothing open is not part of the answer
    listed = [r for r in results if not open_only or r.count(OPEN)]

    def text():
        when = time_formatter(time_format)
        for r in listed:
            for line in partition_lines(r, open_only, when):
                ui.echo(line)
        if open_only and results and not listed:
            ui.echo(f"no open transaction in the {count(len(results), 'partition')} read")
    doc = {"partitions": [_filtered(r.to_dict(), open_only) for r in listed], "hanging": hanging,
           "timeoutMs": timeout_ms, "errors": [e.to_dict() for e in errors]}
    # (nothing read: no report of zeros; text: nothing, JSON: the errors only)
    RENDERERS[ui.format].document(ui.stdout, doc, text, time_format=time_format)  # JSON: ASCII, safe anywhere
    sys.exit(outcome.exit_code())


def _filtered(doc: dict, open_only: bool) -> dict:
    if open_only:
        doc["transactions"] = [t for t in doc["transactions"] if t["outcome"] == "OPEN"]
    return doc
