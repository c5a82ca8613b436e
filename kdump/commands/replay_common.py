"""What ``kdump groups``, ``kdump metadata`` and ``kdump txn-state`` share: run a replay, print its state as
text or JSON, list the skipped records on stderr, exit 0 / 1 (records skipped; a crash-cut tail, which Kafka's
recovery drops too, is listed but does not fail the run) / 2 (wrong input)."""
from __future__ import annotations

import functools

import click

from kdump.commands.findings import fail_on_option
from kdump.commands.options import exit_help, output_options, time_format_option
from kdump.errors import EXIT_DATA

EXIT_HELP = exit_help(
    ok="every record was replayed (a crash-cut tail that Kafka's recovery drops is listed on stderr)",
    data='some records could not be decoded or applied, or a file could not be read: each is listed (file, offset, '
         'reason) on stderr and under "skipped" in JSON; the state shown is what the other records add up to',
    usage="usage error: a path missing or refused, nothing to replay, no file readable, or not a partition of the "
          "topic replayed")

_output_options = output_options(
    format_help="text: tables for people (coloured on a terminal). json: one JSON document.")
# The tables are for people: UTC ISO-8601 unless asked otherwise; the JSON keeps epoch ms only unless asked.
_time_format_option = time_format_option(None, shows="times (default: iso in text; in JSON epoch ms only)")


def replay_output_options(f):
    """The output options, ``--time-format`` and ``--fail-on`` of a replay command (which receives ``ui`` with
    its ``fail_on`` set)."""
    @functools.wraps(f)
    def command(*args, ui, fail_on, **kwargs):
        ui.fail_on = fail_on
        return f(*args, ui=ui, **kwargs)
    return _output_options(_time_format_option(fail_on_option(command)))


def run(replay, paths, ui, to_json, to_blocks, time_format: str | None = None) -> None:
    """Run ``replay(paths)``, print ``to_json(result)`` as JSON or ``to_blocks(json, form)`` as text (``form``
    prints times, :mod:`kdump.text.times`), and exit."""
    from kdump.commands.progress import with_progress
    from kdump.jobs import path_work
    from kdump.render import RENDERERS
    from kdump.render.replay import emit, skipped_lines
    from kdump.replay.source import ReplayInputError
    from kdump.text.times import time_formatter
    if not paths:
        raise click.UsageError("no paths given: name a partition directory, a log directory or segment files")
    try:
        result = with_progress(ui, lambda: path_work(paths).total, "replaying", lambda advance: replay(paths, advance))
    except ReplayInputError as e:
        raise click.UsageError(str(e)) from None
    data = to_json(result)
    out = ui.stdout
    RENDERERS[ui.format].document(  # JSON keeps the data's characters; the text's times are ISO by default
        out, data, lambda: emit(out, to_blocks(data, time_formatter(time_format or "iso")), rich=ui.styled(out)),
        time_format=time_format or "epoch", ensure_ascii=False)
    out.flush()
    for path in paths:  # the replay read them all (a path it cannot use is a ReplayInputError)
        ui.read(path)
    for line in skipped_lines(result.skipped):
        ui.say(line)
    tails = getattr(result.skipped, "tails", 0)  # crash-cut tails: Kafka's recovery drops them too (warnings)
    ui.outcome.saw(None, warnings=tails)
    if len(result.skipped) > tails:
        ui.problem(None, f"{len(result.skipped) - tails} record(s) or stretch(es) skipped", code=EXIT_DATA)
    ui.exit()
