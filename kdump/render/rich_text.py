"""Colour for DumpLogSegments text on a terminal. The words stay Kafka's; only styles are added, so
what a user copies from the screen is what a pipe would have received."""
from __future__ import annotations

from rich.console import Console
from rich.highlighter import RegexHighlighter
from rich.theme import Theme


class DumpHighlighter(RegexHighlighter):
    base_style = "kdump."
    highlights = [  # noqa: RUF012 -- rich's RegexHighlighter declares highlights as a mutable list
        r"(?P<field>\b[A-Za-z]+:)(?= )",
        r"(?P<bad>isvalid: false|isValid: false)",
        r"(?P<good>isvalid: true|isValid: true)",
        r"(?P<data> (key|payload): .*$)",
        r"^(?P<dumping>Dumping .*)$",
        r"(?P<control>(endTxnMarker|controlType|LeaderChange:|SnapshotHeader|SnapshotFooter|KRaftVersion|KRaftVoters).*)$",
    ]


THEME = Theme({
    "kdump.field": "dim",
    "kdump.bad": "bold red",
    "kdump.good": "green",
    "kdump.data": "cyan",
    "kdump.dumping": "bold",
    "kdump.control": "magenta",
})


class RichTextOut:
    """A text stream that prints each line through rich with the highlighter above."""

    def __init__(self, console: Console | None = None):
        self.console = console or Console(theme=THEME, highlighter=DumpHighlighter(), soft_wrap=True)
        self._pending = ""

    def write(self, text: str) -> None:
        text = self._pending + text
        lines = text.split("\n")
        self._pending = lines.pop()
        for line in lines:
            self.console.print(line, markup=False, emoji=False, highlight=True)

    def flush(self) -> None:
        if self._pending:
            self.console.print(self._pending, markup=False, emoji=False)
            self._pending = ""

    def isatty(self) -> bool:
        return True
