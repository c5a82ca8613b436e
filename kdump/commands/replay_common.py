"""What ``kdump groups``, ``kdump metadata`` and ``kdump txn-state`` share: run a replay, print its state as
text or JSON, list the skipped records on stderr, exit 0 / 1 (records skipped) / 2 (wrong input)."""
from __future__ import annotations

import json
import os
import sys

import click

from kdump.errors import EXIT_DATA, EXIT_OK

EXIT_HELP = """\b
Exit codes:
  0  every record was replayed
  1  some records could not be decoded or applied: each is listed (file, offset, reason) on stderr
     and under "skipped" in JSON; the state shown is what the other records add up to
  2  usage error: a path is missing, unreadable, or not a partition of the topic replayed"""


def format_option(f):
    return click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
                        help="text: tables for people (coloured on a terminal). json: one JSON document.")(f)


def no_color_option(f):
    return click.option("--no-color", is_flag=True, help="Plain text on a terminal too (also: NO_COLOR=1).")(f)


def run(replay, paths, fmt: str, no_color: bool, to_json, to_blocks) -> None:
    """Run ``replay(paths)``, print ``to_json(result)`` as JSON or ``to_blocks(json)`` as text, and exit."""
    from kdump.replay.render import emit, skipped_lines
    from kdump.replay.source import ReplayInputError
    if not paths:
        raise click.UsageError("no paths given: name a partition directory, a log directory or segment files")
    try:
        result = replay(paths)
    except ReplayInputError as e:
        raise click.UsageError(str(e)) from None
    data = to_json(result)
    out = click.get_text_stream("stdout")
    if fmt == "json":
        json.dump(data, out, indent=2, ensure_ascii=False)
        out.write("\n")
    else:
        rich = out.isatty() and not no_color and not os.environ.get("NO_COLOR")
        emit(out, to_blocks(data), rich=rich)
    out.flush()
    for line in skipped_lines(result.skipped):
        click.echo(line, err=True)
    if result.skipped:
        click.echo(f"kdump: {len(result.skipped)} record(s) or stretch(es) skipped", err=True)
    sys.exit(EXIT_DATA if result.skipped else EXIT_OK)
