"""How ``verify`` and ``index check`` show their reports (:mod:`kdump.report.findings`) and end: text for people
(coloured on a terminal) or JSON, then the exit code the findings give (or a higher one a problem already gave)."""
from __future__ import annotations

import click

from kdump.commands.options import Ui

# ``--fail-on``: which findings fail the run (kdump.report.findings.exit_code), as linters and fsck offer it.
FAIL_ON_HELP = ("Lowest severity that makes the exit code 1: error (default; warnings are reported, not failing) "
                "or warning.")
FAIL_ON_EXIT = "findings: at least one error, or warning with --fail-on warning (each with file, byte position, cause)"
FAIL_ON_OK = "no error (warnings and info findings are reported; --fail-on warning makes warnings fail)"


def fail_on_option(f):
    return click.option("--fail-on", type=click.Choice(["error", "warning"]), default="error", show_default=True,
                        help=FAIL_ON_HELP)(f)


def render_reports(ui: Ui, reports, fail_on: str = "error") -> None:
    """Show ``reports`` and exit with the code :class:`kdump.report.outcome.Outcome` gives them (and the problems
    ``ui`` already recorded)."""
    import os

    from kdump.commands.hints import hint_reports
    from kdump.render import RENDERERS
    for report in reports:  # never opened, or a directory with nothing to read: said as every command says it,
        if report.refused:  # and not a file checked (exit 2); JSON lists it with its error object, uncounted
            (ui.nothing if os.path.isdir(report.path) else ui.refused)(report.path, report.io_error or "refused")
    if RENDERERS[ui.format].for_people:  # (a format for programs lists them with their error)
        reports = [r for r in reports if not r.refused]
        if not reports:
            ui.exit()  # (no "0 files checked" under the errors)
    hint_reports(reports)
    ui.fail_on = fail_on
    for report in reports:
        ui.outcome.report(report)
    out = ui.stdout
    RENDERERS[ui.format].findings(out, reports, styled=ui.styled(out), fail_on=fail_on, verbose=ui.verbose,
                                  list_ok=ui.verbose or len(reports) <= 20, run=ui.outcome)
    out.flush()
    ui.exit()
