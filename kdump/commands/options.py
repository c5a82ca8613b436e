"""What every kdump command shares: the output options (``--format``, ``--no-color``, ``-v``/``-q``; as
sqlite-utils shares ``output_options``), the ``-o/--output`` option, renamed options kept as hidden aliases, the
exit-code epilog, and :class:`Ui`, the one place that turns problems into ``kdump: FILE: ...`` lines on stderr
and into the exit code.

``--no-color``, ``-v`` and ``-q`` are also options of the ``kdump`` group (``kdump --no-color dump F.log``); a
command's own flag and the group's add up.
"""
from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from typing import NoReturn

import click

from kdump.errors import EXIT_DATA, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, error_object
from kdump.render import RENDERERS, formats_for
from kdump.report.outcome import REFUSAL_ERRNOS, Outcome
from kdump.text.escape import escape, is_terminal
from kdump.text.escape import printable_path as shown

# The meaning of each exit code shared by every command; a command's epilog may say more about 0 and 1.
EXIT_MEANINGS = {
    EXIT_OK: "success: everything named was read and is sound (warnings below --fail-on, and a crash-cut tail that "
             "Kafka reports as \"Found N invalid bytes at the end\", included; where asked, written and verified)",
    EXIT_DATA: "something read is damaged or not a Kafka file, or a path could not be read among readable ones (each "
               "problem on stderr: file, byte position, cause); every other path was still read",
    EXIT_USAGE: "usage error; nothing to read (an empty directory, no segments); a path missing or refused (a FIFO, "
                "device or symlink loop); no path could be read; an output that cannot be written (disk full, ...)",
    EXIT_INTERNAL: "a bug in kdump (rerun with KDUMP_DEBUG=1 for the traceback)",
}


def exit_help(**meanings: str) -> str:
    """The ``Exit codes:`` epilog of a command: the shared meanings, with a command's own words for some codes
    (keyword ``ok=`` for 0, ``data=`` for 1, ``usage=`` for 2)."""
    own = {EXIT_OK: meanings.get("ok"), EXIT_DATA: meanings.get("data"), EXIT_USAGE: meanings.get("usage")}
    lines = ["\b", "Exit codes:"]
    for code, text in EXIT_MEANINGS.items():
        text = own.get(code) or text
        first, *rest = _wrap(text, 88)
        lines.append(f"  {code:<3}{first}")
        lines.extend(f"     {more}" for more in rest)
    lines.append("  A broken pipe (| head) ends quietly with 0.")
    return "\n".join(lines)


def _wrap(text: str, width: int) -> list[str]:
    out, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return [*out, line]


@dataclass
class GroupOptions:
    """The ``kdump`` group's own output options (``ctx.obj``)."""

    no_color: bool = False
    verbose: bool = False
    quiet: bool = False


ERRORS_LISTED = 1000  # error objects a Ui keeps for a JSON document; the rest are counted


class Ui:
    """A command's view of its user: the output options, standard output, and the problems reported so far.

    Every ``kdump: FILE: ...`` line goes through :meth:`problem`, :meth:`cannot` or :meth:`note`; each problem,
    and each file read (:meth:`read`), is recorded in :attr:`outcome` (:class:`kdump.report.outcome.Outcome`, the one
    exit-code policy), and :meth:`exit` ends the command with the code it decides."""

    def __init__(self, fmt: str = "text", *, no_color: bool = False, verbose: bool = False, quiet: bool = False):
        self.format = fmt
        self.color = not no_color and not os.environ.get("NO_COLOR")
        self.verbose = verbose
        self.quiet = quiet
        self.outcome = Outcome()
        # the problems said, as kdump's JSON error objects, for a command's JSON document (error_fields): the
        # first ERRORS_LISTED, the others counted (a dump of a hostile file may say millions)
        self.errors: list[dict] = []
        self.errors_not_listed = 0

    @property
    def renderer(self):
        """The ``--format`` chosen: how every kind of output is written (:mod:`kdump.render.protocol`)."""
        return RENDERERS[self.format]

    @property
    def stdout(self):
        return sys.stdout  # looked up on use: main() guards it, CliRunner replaces it

    def styled(self, stream=None) -> bool:
        """Whether to colour ``stream`` (standard output): on a terminal (or FORCE_COLOR), unless --no-color."""
        stream = self.stdout if stream is None else stream
        return self.color and (stream.isatty() or bool(os.environ.get("FORCE_COLOR")))

    @property
    def fail_on(self) -> str:
        return self.outcome.fail_on

    @fail_on.setter
    def fail_on(self, severity: str) -> None:
        """The run's ``--fail-on`` (error unless the command offers the option)."""
        self.outcome.fail_on = severity

    def read(self, path) -> None:
        """``path`` was read (its problems, if any, are reported with :meth:`problem` or :meth:`warning`)."""
        self.outcome.saw(path)

    def problem(self, path, message: str, *, position: int | None = None, code: int = EXIT_DATA,
                error: str = "damaged") -> None:
        """A problem with the file ``path`` (``None``: with the run as a whole): ``code`` EXIT_DATA (the default)
        is damage in what was read; EXIT_USAGE a use kdump refuses (an output that exists, a name it cannot
        take); EXIT_OK a warning (see :meth:`warning`). ``error``: its code in JSON."""
        if code == EXIT_DATA:
            self.outcome.saw(path, errors=1)
        elif code == EXIT_USAGE:
            self.outcome.bad_usage()
        else:
            self.outcome.saw(path, warnings=1)
        self._error(path, error, message, position)
        self._said(f"{_prefix(path)}{_where(position)}{message}")

    def warning(self, path, message: str, *, position: int | None = None) -> None:
        """A problem below ``--fail-on`` error (Kafka's recovery would repair it, e.g. a crash-cut tail): shown
        on stderr, and failing the run only with ``--fail-on warning``."""
        self.outcome.saw(path, warnings=1)
        self._said(f"{_prefix(path)}{_where(position)}warning: {message}")

    def _error(self, path, code: str, message: str, position: int | None = None) -> None:
        if len(self.errors) < ERRORS_LISTED:
            self.errors.append(error_object(path, code, message, position))
        else:
            self.errors_not_listed += 1

    def _said(self, line: str) -> None:
        # The data printed so far goes out first: with stdout and stderr in one pipe (`2>&1 | less`) each error
        # then sits beside the data it concerns, not before all of it (a piped stdout is block-buffered).
        self.stdout.flush()
        _say(line)

    def error_fields(self) -> dict:
        """The problems said so far, as a JSON document's ``errors`` (and ``errorsNotListed``, when some were
        only counted)."""
        return {"errors": self.errors, **({"errorsNotListed": self.errors_not_listed} if self.errors_not_listed
                                          else {})}

    def cannot(self, path, error: OSError, doing: str = "read") -> None:
        """``path`` could not be read (or written, listed, ...): a path missing or refused before reading
        (a FIFO, a symlink loop) exits 2, one that could not be read 1 when other paths were read (else 2), an
        output that cannot be written 2."""
        if doing == "write":
            self.outcome.cannot_write()
        elif getattr(error, "errno", None) in REFUSAL_ERRNOS:
            self.outcome.refused()
        else:
            self.outcome.cannot_read()
        message = f"cannot {doing}: {error.strerror or error}"
        self._error(path, f"cannot-{doing}", message)
        self._said(f"{_prefix(path)}{message}")

    def refused(self, path, reason: str) -> None:
        """``path`` missing, or refused before reading (a FIFO, a symlink loop): exit 2, and never counted as
        read or checked."""
        self.outcome.refused()
        self._error(path, "cannot-read", f"cannot read: {reason}")
        self._said(f"{_prefix(path)}cannot read: {reason}")

    def nothing(self, path, message: str) -> None:
        """Nothing to read where the user pointed: never a success (exit 2)."""
        self.outcome.empty()
        self._error(path, "nothing-to-read", message)
        self._said(f"{_prefix(path)}{message}")

    def note(self, path, message: str) -> None:
        """Worth knowing, not a problem (left out with --quiet)."""
        if not self.quiet:
            _say(f"kdump: {shown(path) + ': ' if path is not None else ''}note: {message}")

    def info(self, message: str) -> None:
        """A line on stderr for people (hints; left out with --quiet)."""
        if not self.quiet:
            _say(message)

    def say(self, line: str) -> None:
        """A line on stderr that is always shown (a report, a message already worded): escaped on a terminal."""
        _say(line)

    def echo(self, line: str = "") -> None:
        """A line of a text report on standard output: escaped on a terminal (it quotes file names and data),
        unchanged when piped."""
        click.echo(_safe_for(line, self.stdout), file=self.stdout)

    def exit(self, code: int | None = None) -> NoReturn:
        """End the command with the exit code its :attr:`outcome` decides (``code``: one a command that keeps an
        :class:`~kdump.report.outcome.Outcome` of its own decided with it)."""
        sys.exit(self.outcome.exit_code() if code is None else code)


def _prefix(path) -> str:
    return "kdump: " if path is None else f"kdump: {shown(path)}: "


def _where(position: int | None) -> str:
    return f"at byte {position}: " if position is not None else ""


def say(line: str) -> None:
    """A line on stderr; escaped when stderr is a terminal (messages quote names and bytes from the data). For
    code that has no :class:`Ui` at hand; :meth:`Ui.say` is the same."""
    _say(line)


def _say(line: str) -> None:
    """A line on stderr; escaped when stderr is a terminal (messages quote names and bytes from the data)."""
    click.echo(_safe_for(line, sys.stderr), err=True)


def _safe_for(text: str, stream) -> str:
    """``text`` escaped line by line when ``stream`` is a terminal (its line breaks kept), unchanged otherwise."""
    if not is_terminal(stream):
        return text
    return "\n".join(map(escape, text.split("\n")))


def _ui_from(ctx: click.Context, fmt: str, no_color: bool, verbose: bool, quiet: bool) -> Ui:
    group = ctx.find_root().obj if isinstance(ctx.find_root().obj, GroupOptions) else GroupOptions()
    verbose = verbose or group.verbose
    quiet = quiet or group.quiet
    if verbose and quiet:
        raise click.UsageError("-v/--verbose and -q/--quiet cannot be combined")
    return Ui(fmt, no_color=no_color or group.no_color, verbose=verbose, quiet=quiet)


def color_option(f):
    return click.option("--no-color", is_flag=True, help="No colour on a terminal (also: NO_COLOR=1).")(f)


def output_options(*, format_help: str = "text for people; json for programs.", verbose_help: str | None = None,
                   records: bool = False, findings: bool = False, page: bool = False):
    """``--format text|json``, ``--no-color``, ``-v/--verbose``, ``-q/--quiet``; the command receives one
    ``ui`` (:class:`Ui`) instead of the four."""
    def decorate(f):
        @functools.wraps(f)
        def command(*args, fmt, no_color, verbose, quiet, **kwargs):
            return f(*args, ui=_ui_from(click.get_current_context(), fmt, no_color, verbose, quiet), **kwargs)
        command = click.option("-q", "--quiet", is_flag=True,
                               help="Only problems on stderr: no notes, hints or progress.")(command)
        command = click.option("-v", "--verbose", is_flag=True, help=verbose_help or "Say more.")(command)
        command = color_option(command)
        return click.option("--format", "fmt",
                            type=FormatChoice("records" if records else "findings" if findings
                                              else "page" if page else "document"),
                            default="text",
                            show_default=True, help=format_help)(command)
    return decorate


class FormatChoice(click.Choice):
    """``--format``'s choices: the formats of :data:`kdump.render.RENDERERS` that fit the command's ``kind`` of
    output (:func:`kdump.render.formats_for`), read when used, so that a format is one registry row away."""

    def __init__(self, kind: str):
        self.kind = kind
        super().__init__(formats_for(kind))

    @property
    def choices(self):
        return formats_for(self.kind)

    @choices.setter
    def choices(self, value) -> None:
        pass  # (always the registry's)


def output_path_option(help: str, *, metavar: str = "DIR", old: str | None = None):
    """``-o/--output`` (one spelling for every command that writes); ``old``: a former spelling kept as a hidden
    alias that says it is deprecated."""
    def decorate(f):
        if old is not None:
            f = renamed_option(old, "-o/--output", "output")(f)
        return click.option("-o", "--output", "output", default=None, metavar=metavar, help=help)(f)
    return decorate


def renamed_option(old: str, new: str, dest: str, **kwargs):
    """Keep ``old`` working as a hidden alias of the option ``new`` (parameter ``dest``), with a note on stderr."""
    alias = f"{dest}__{old.lstrip('-').replace('-', '_')}"

    def decorate(f):
        @functools.wraps(f)
        def command(*args, **kw):
            value = kw.pop(alias)
            if value is not None:
                _say(f"kdump: note: {old} is deprecated here; use {new}")
                if kw.get(dest) is None:
                    kw[dest] = value
            return f(*args, **kw)
        return click.option(old, alias, default=None, hidden=True, **kwargs)(command)
    return decorate


def make_output_dir(path: str) -> str:
    """An output directory, created (with its parents) if missing; a usage error if it is a file."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise click.BadParameter(f"{shown(path)} is a file, not a directory", param_hint="-o/--output")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise click.UsageError(f"-o/--output {shown(path)}: cannot create the directory: {e.strerror or e}") from None
    return path


def reject(flag: str, reason: str):
    """An option that does not apply: a usage error naming it."""
    raise click.UsageError(f"{flag} {reason}")


def text_only(ui: Ui, flag: str) -> None:
    """A text-only option given explicitly with ``--format json``: a usage error."""
    source = click.get_current_context().get_parameter_source(flag.lstrip("-").replace("-", "_"))
    if not ui.renderer.for_people and source is not click.core.ParameterSource.DEFAULT:
        reject(flag, f"shapes the text output; it does not apply to --format {ui.format}")


def time_format_option(default: str | None = "epoch", *, shows: str = "timestamps"):
    """``--time-format epoch|iso|local``: one spelling for every command that prints a time. ``shows``: what
    the command's times are, for its help; ``default``: the form it prints without the option."""
    from kdump.text.times import TIME_FORMATS
    return click.option(
        "--time-format", type=click.Choice(TIME_FORMATS), default=default, show_default=True,
        help=f"How {shows} are printed: epoch (milliseconds since 1970, as Kafka prints them), iso (UTC ISO-8601, "
             "2024-05-01T12:00:00.000Z) or local (this machine's time zone, with its UTC offset). JSON keeps the "
             "epoch ms and, with iso or local, adds the same instant beside each (maxTimestamp -> "
             "maxTimestampIso).")


def jobs_option(f=None, *, default=None, show_default="all cores", more=""):
    """``-j/--jobs N``: partitions checked in N worker processes (default: every core); same output as one job.
    ``@jobs_option(default=1, more=...)`` for a command whose one job does something more (dump streams)."""
    from kdump.jobs import default_jobs

    def option(command):
        return click.option("-j", "--jobs", type=click.IntRange(min=1), default=default or default_jobs,
                            show_default=show_default if default is None else True,
                            help="Worker processes for the partitions of a log directory (1: none). The report is "
                                 "the same, in the same order, whatever the number." + more)(command)
    return option if f is None else option(f)


def version_line() -> str:
    """``kdump --version``'s line: the version, and whether the compiled fast path is in use."""
    import platform

    from kdump import __version__, _backend
    modules = _backend.compiled_modules()
    if modules:
        path = f"compiled fast path in use: {', '.join(modules)}"
    elif _backend.COMPILED_AVAILABLE:
        path = "pure-Python path in use (KDUMP_PURE_PYTHON is set; the compiled modules are built)"
    else:
        path = "pure-Python path in use (the compiled modules are not built)"
    return f"kdump, version {__version__} ({path}; Python {platform.python_version()})"
