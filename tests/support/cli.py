"""``run_cli``: the command line as a user runs it, inside the test process.

It goes through :func:`kdump.cli.main` -- the entry point of the ``kdump`` script -- so a test sees main's exit
codes, its messages for bad usage, its handling of output errors and its "internal error" (exit 3) for a bug,
not Click's defaults (``CliRunner.invoke`` on the group would give exit 1 and a traceback object instead).
Click's test runner is used only to capture standard output and error (and to set ``env`` and ``input``).
A test that needs Click itself (its parsing context, ``standalone_mode``) says why where it does.
"""
from __future__ import annotations

from click.testing import CliRunner, Result


class _Entry:
    """:func:`kdump.cli.main` in the shape :meth:`CliRunner.invoke` calls (``main(args=..., prog_name=...)``);
    main ends with ``sys.exit(code)``, which the runner turns into ``Result.exit_code``."""

    name = "kdump"

    def main(self, args, prog_name=None, **extra):
        from kdump.cli import main
        main(list(args))


def run_cli(*args, env: dict | None = None, input=None) -> Result:
    """``kdump ARGS`` (each argument ``str()``-ed) through :func:`kdump.cli.main`: a Click ``Result`` with
    ``exit_code``, ``stdout``, ``stderr`` and ``output``. ``env``: variables to set (None removes one) for the
    run; ``input``: standard input. An exception that escapes main (only with ``KDUMP_DEBUG`` set) is raised."""
    return CliRunner().invoke(_Entry(), [str(a) for a in args], input=input, env=env,  # type: ignore[arg-type]
                              catch_exceptions=False)
