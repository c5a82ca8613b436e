"""How ``verify`` and ``index check`` show their reports (:mod:`kdump.findings`) and end: text for people (coloured
on a terminal) or JSON, then the exit code the findings give (or a higher one a problem already gave)."""
from __future__ import annotations

from kdump.commands.options import Ui


def render_reports(ui: Ui, reports) -> None:
    from kdump.findings import exit_code, render_json, render_text
    out = ui.stdout
    if ui.format == "json":
        render_json(reports, out)
    else:
        if ui.styled(out):
            from rich.console import Console
            console = Console(file=out, highlight=False, soft_wrap=True)
        else:  # piped, or --no-color: plain lines (and no rich to import)
            from kdump.findings import PlainConsole
            console = PlainConsole(out)
        render_text(reports, console, verbose=ui.verbose, list_ok=ui.verbose or len(reports) <= 20)
    out.flush()
    ui.exit(exit_code(reports))
