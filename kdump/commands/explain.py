"""``kdump explain``: a thin Click layer over :mod:`kdump.explain`."""
from __future__ import annotations

import io
import sys

import click

from kdump.commands.options import exit_help, output_options, output_path_option, say
from kdump.errors import EXIT_DATA, EXIT_OK, EXIT_USAGE

EXIT_HELP = exit_help(
    ok="every field explained follows Kafka's rules",
    data="a field breaks a rule (a CRC that does not match, a size that points past the file, a header rule, "
         "records that do not parse): the field is marked with the rule (a crash-cut tail, which Kafka's own tool "
         "passes, is marked but exits 0)")


@click.command("explain", epilog=EXIT_HELP)
@click.argument("path", type=click.Path(path_type=str))
@click.option("--position", type=click.IntRange(0), default=None, metavar="N",
              help="Explain the entry that starts at byte N (where verify or dump named damage).")
@click.option("--offset", type=int, default=None, metavar="N",
              help="Explain the batch that holds offset N (through the offset index where it checks out).")
@click.option("--to-offset", type=int, default=None, metavar="M",
              help="Explain consecutive batches through the one holding offset M (from --offset, --position or the "
                   "first batch), as dump's --to-offset stops after M.")
@click.option("--count", type=click.IntRange(1), default=None, metavar="N",
              help="Explain N consecutive entries (default 1; with --to-offset, at most N).")
@click.option("--records", is_flag=True,
              help="Expand the records too: each field of each record and header; a compressed payload decompressed "
                   "(positions in it marked +N); a wrapper's inner messages with their relative and absolute offsets.")
@output_path_option("Write to FILE instead of standard output (atomically: whole and read back, or not at all); "
                    "for --format html, the page to share.", metavar="FILE")
@click.option("--force", is_flag=True, help="Replace an existing -o FILE.")
@output_options(format_help="text: an annotated hex view; json: a tree of fields {name, start, length, value, "
                            "children}, start an absolute byte position; html: one self-contained page, the hex "
                            "beside the field tree, a field and its bytes lit together under the pointer.",
                page=True)
def command(path, position, offset, to_offset, count, records, output, force, ui):
    """A batch's bytes field by field, as the format articles draw them: each field's position, bytes, Kafka's
    name, value and meaning; varints with their raw bytes, unsigned and zig-zag values; the CRC with the bytes it
    covers, stored and computed; a size that points past the file; the first field that breaks a rule.

    PATH: a .log segment or a KRaft .checkpoint (default: its first batch); also a .index, .timeindex or .txnindex
    (its entries) or a producer .snapshot (the whole file).

    \b
    Examples:
      kdump explain 00000000000000000000.log
      kdump explain --position 150396 --records 00000000000000000000.log
      kdump explain --offset 4711 --format json 00000000000000000000.log | jq '.entries[0].children[]'
      kdump explain --offset 4711 --to-offset 4800 00000000000000000000.log
      kdump explain --count 5 00000000000000000000.index
      kdump explain --records --format html -o batch.html 00000000000000000000.log
    """
    from kdump.errors import UsageError
    from kdump.explain import explain
    from kdump.render import RENDERERS
    from kdump.render.explain import render_text

    if position is not None and offset is not None:
        raise click.UsageError("give --position or --offset, not both")
    if offset is not None and to_offset is not None and to_offset < offset:
        raise click.UsageError(f"--to-offset {to_offset} is below --offset {offset}")
    if count is None:
        count = 1 if to_offset is None else sys.maxsize
    try:
        found = explain(path, position=position, offset=offset, count=count, to_offset=to_offset, records=records)
    except UsageError as e:
        say(f"kdump: {e}")
        sys.exit(EXIT_USAGE)
    except OSError as e:
        say(f"kdump: {path}: cannot read: {e.strerror or e}")
        sys.exit(EXIT_USAGE)
    fmt = RENDERERS[ui.format]
    doc = found.to_dict(with_bytes=fmt.page)
    failing = found.failing()
    if output is None:
        fmt.document(ui.stdout, doc, lambda: render_text(doc, ui.echo))
    else:
        text = io.StringIO()
        fmt.document(text, doc, lambda: render_text(doc, lambda line: print(line, file=text)))
        _write(output, text.getvalue(), force, path)
    for entry in failing:  # (said on stderr too: the output may be a page or a pipe)
        area, first = entry.info.get("damagedArea"), entry.info.get("firstProblem")
        cause = area or first or {}
        why = f"{cause.get('code')}: {cause.get('message')}"
        field = f" (the first field that breaks a rule: {first['field']} at byte {first['start']})" if first else ""
        say(f"kdump: {path}: byte {entry.start}: {why}{field}")
    sys.exit(EXIT_DATA if failing else EXIT_OK)


def _write(output: str, text: str, force: bool, source: str) -> None:
    """``text`` into ``output`` atomically (never over the input); a refusal or a failed write is a usage error."""
    from kdump.commands.hints import force_hint
    from kdump.write.atomic import AtomicWriteError, write_atomic
    from kdump.write.guards import refuse_input
    try:
        refuse_input(source, output)
        write_atomic(output, text.encode("utf-8"), overwrite=force)
    except FileExistsError as e:  # (its message names the file)
        say(f"kdump: {f'{e.filename}: {e.strerror}' if e.filename else e}{force_hint(e, force)}")
        sys.exit(EXIT_USAGE)
    except (OSError, AtomicWriteError) as e:
        say(f"kdump: {output}: cannot write: {getattr(e, 'strerror', None) or e}")
        sys.exit(EXIT_USAGE)
