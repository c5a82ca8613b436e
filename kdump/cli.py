"""The ``kdump`` command: the group, its static command registry, and :func:`main`, which turns what escapes a
command (a closed or full standard output, Ctrl-C, a bug) into a message and an exit code. Each command lives in
its own module under :mod:`kdump.commands`, imported only when it runs (or when ``--help`` lists it)."""
from __future__ import annotations

import errno
import io
import os
import sys

import click

from kdump.commands.options import GroupOptions, exit_help, say, version_line
from kdump.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    MissingExtra,
    OutputError,
    missing_extra,
)

# (command name, module, attribute): one line per command.
COMMANDS = [
    ("dump", "kdump.commands.dump", "command"),
    ("verify", "kdump.commands.verify", "command"),
    ("index", "kdump.commands.index", "command"),
    ("convert", "kdump.commands.convert", "command"),
    ("groups", "kdump.commands.groups", "command"),
    ("metadata", "kdump.commands.metadata", "command"),
    ("txn-state", "kdump.commands.txn_state", "command"),
    ("txn", "kdump.commands.txn", "command"),
    ("stats", "kdump.commands.stats", "command"),
    ("salvage", "kdump.commands.salvage", "command"),
    ("spark", "kdump.commands.spark", "command"),
    ("explain", "kdump.commands.explain", "command"),
    ("replicas", "kdump.commands.replicas", "command"),
]


class KdumpGroup(click.Group):
    """A group whose commands come from :data:`COMMANDS`, each imported when first needed."""

    def list_commands(self, ctx):
        return sorted({name for name, _module, _attr in COMMANDS} | set(self.commands))

    def get_command(self, ctx, name):
        if name not in self.commands:
            for cmd_name, module, attr in COMMANDS:
                if cmd_name == name:
                    import importlib
                    self.add_command(getattr(importlib.import_module(module), attr), name)
        return self.commands.get(name)


def _version(ctx, _param, value):
    if not value or ctx.resilient_parsing:
        return
    click.echo(version_line())
    ctx.exit()


@click.group(cls=KdumpGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
             epilog=exit_help())
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
              help="Show the version, and whether the compiled fast path is in use.")
@click.option("--no-color", is_flag=True, help="No colour on a terminal, for every command (also: NO_COLOR=1).")
@click.option("-v", "--verbose", is_flag=True, help="Every command says more.")
@click.option("-q", "--quiet", is_flag=True, help="Every command: only problems on stderr (no notes, hints, progress).")
@click.pass_context
def cli(ctx, no_color, verbose, quiet):
    """Read, check and convert Apache Kafka log segments without a broker.

    \b
    kdump dump 00000000000000000000.log              what DumpLogSegments prints
    kdump dump --print-data-log /var/kafka/topic-0   every segment of a partition, with keys and values
    kdump dump --format json --deep-iteration F.log  JSON Lines, one object per batch
    kdump verify --deep /var/kafka/topic-0           where and how the files are damaged
    """
    ctx.obj = GroupOptions(no_color=no_color, verbose=verbose, quiet=quiet)


STDOUT, STDERR = "standard output", "standard error"


class _Output(io.RawIOBase):
    """File descriptor 1 or 2, whose write errors are :class:`OutputError` (never an OSError a command could
    take for a problem with its input, nor one Click's own broken-pipe handling, exit 1, would take)."""

    def __init__(self, fd: int):
        self.fd = fd

    def writable(self):
        return True

    def fileno(self):
        return self.fd

    def isatty(self):
        return os.isatty(self.fd)

    def write(self, data):
        try:
            return os.write(self.fd, data)
        except OSError as e:
            raise OutputError(STDOUT if self.fd == 1 else STDERR, e) from None


def _guard_outputs() -> None:
    """Standard output and standard error through :class:`_Output` (stderr unbuffered, as Python's own)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        try:
            fd = stream.fileno()
        except (AttributeError, OSError, ValueError):  # not a real file (embedded, or replaced by a caller)
            continue
        stream.flush()
        if name == "stdout":
            setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(_Output(fd)), encoding="utf-8",
                                                errors="surrogateescape", line_buffering=os.isatty(fd)))
        else:
            setattr(sys, name, io.TextIOWrapper(io.BufferedWriter(_Output(fd)), encoding="utf-8",
                                                errors="backslashreplace", line_buffering=True, write_through=True))


def _silence(fd: int) -> None:
    """After a failed write: point ``fd`` at /dev/null so that the flush at exit cannot fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    stream = io.TextIOWrapper(io.BufferedWriter(_Output(fd)), encoding="utf-8")
    if fd == 1:
        sys.stdout = stream
    else:
        sys.stderr = stream


def _output_failed(e: OutputError) -> int:
    """The exit code when writing kdump's output failed: a reader gone (``| head``, EPIPE) ends quietly with 0;
    a full or failing standard output is said on stderr, exit 2."""
    if e.name == STDERR:  # messages cannot be shown; what was written to stdout still goes out
        _silence(2)
        try:
            sys.stdout.flush()
        except OutputError:
            _silence(1)
        return EXIT_OK if e.errno == errno.EPIPE else EXIT_USAGE
    _silence(1)
    if e.errno == errno.EPIPE:
        return EXIT_OK  # the reader went away: what it wanted was written
    try:
        say(f"kdump: {e}")
    except OutputError:
        _silence(2)
    return EXIT_USAGE


def _show(e: click.ClickException) -> None:
    """Click's usage message, its text escaped on a terminal (it may quote a file name given)."""
    from kdump.text.escape import escape, is_terminal
    if not is_terminal(sys.stderr):
        e.show()
        return
    # Click's exceptions are not ours to change (``message`` is Final in Click 8.5): what show() would write is
    # taken whole, usage line and hint included, and escaped line by line on its way to the terminal.
    shown = io.StringIO()
    e.show(file=shown)
    sys.stderr.write("\n".join(escape(line) for line in shown.getvalue().split("\n")))
    sys.stderr.flush()


def _command_name(argv) -> str:
    """The command named in ``argv`` (the process's arguments without one), for a message."""
    args = sys.argv[1:] if argv is None else list(argv)
    return next((a for a in args if not a.startswith("-")), "")


def main(argv=None):
    """Entry point: never shows a traceback for bad input; a broken pipe (``| head``) ends quietly with 0; a full
    or failing standard output is named, exit 2."""
    from kdump.jobs import raise_malloc_thresholds
    raise_malloc_thresholds()
    _guard_outputs()
    try:
        try:
            code = cli.main(args=argv, prog_name="kdump", standalone_mode=False)
            code = code if isinstance(code, int) else EXIT_OK
        except click.ClickException as e:
            _show(e)
            code = e.exit_code
        except click.Abort:
            click.echo("kdump: interrupted", err=True)
            code = EXIT_INTERRUPTED
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (EXIT_OK if e.code is None else EXIT_INTERNAL)
        sys.stdout.flush()
    except OutputError as e:
        code = _output_failed(e)
    except KeyboardInterrupt:
        click.echo("kdump: interrupted", err=True)
        code = EXIT_INTERRUPTED
    except MissingExtra as e:
        say(f"kdump: {e}")
        code = EXIT_USAGE
    except Exception as e:  # a bug in kdump: say so briefly; KDUMP_DEBUG=1 shows the traceback
        # except an optional part that is not installed: the environment's, not a bug (its pip line, exit 2)
        missing = missing_extra(e, f"kdump {_command_name(argv)}".rstrip()) if isinstance(e, ImportError) else None
        if missing is None and os.environ.get("KDUMP_DEBUG"):
            raise
        if missing is not None:
            say(f"kdump: {missing}")
            code = EXIT_USAGE
        else:
            say(f"kdump: internal error: {type(e).__name__}: {e} (this is a bug in kdump; rerun with "
                "KDUMP_DEBUG=1 for details and please report it)")
            code = EXIT_INTERNAL
    sys.exit(code)
