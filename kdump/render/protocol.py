"""The one renderer protocol: what every output format (:data:`kdump.render.RENDERERS`) implements, and what every
command hands its output to.

An output format is a class with four methods, one per kind of output (:class:`OutputFormat`): ``batches`` (a
:class:`BatchRenderer` the dump walk drives), ``findings`` (the reports of verify and index check), ``document``
(a command's one report: a JSON-ready dict, and its text for people) and ``results`` (a :class:`ResultStream`: a
report written result by result as a command's work goes on, convert's and index rebuild's). A command never asks
which format it writes: the text renderer takes errors too (they are on stderr already, so it writes nothing),
and a progress bar wraps a renderer (:class:`CountingRenderer`) instead of patching it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol


class BatchRenderer(Protocol):
    """What :class:`kdump.dump.Dumper` drives: a file's batches, records, companion entries, tail and errors."""

    out: Any  # the text stream written to (the dump's workers write their files beneath it)

    def begin_file(self, display_path: str, header: str | None) -> None:
        """A file begins (``header``: the line after its name, if any)."""

    def companion(self, item) -> None:
        """An entry of an index, snapshot or checkpoint file (:class:`kdump.index.dump.CompanionDumper`)."""

    def trailing(self, file_name: str, tail) -> None:
        """What lies after the last whole batch (:class:`kdump.read.segment.Tail`)."""

    def batch(self, batch, records=None, decoded=None) -> None:
        """A batch, and with ``records`` (RecordColumns) its records (``decoded``: the decode layer's objects)."""

    def legacy_run(self, run, deep: bool) -> bool:
        """A run of plain legacy messages at once; False, writing nothing, to have them one by one."""

    def open_batch(self, batch, records, decoded=None) -> None:
        """A batch whose records come in chunks: the first chunk (then :meth:`more_records`, :meth:`close_batch`)."""

    def more_records(self, batch, records, decoded=None) -> None:
        """The next chunk of records of the batch opened."""

    def close_batch(self, batch) -> None:
        """The batch opened is complete."""

    def error(self, path: str, err) -> None:
        """A problem found in a file (a :class:`kdump.errors.FormatError`; said on stderr too, for people)."""

    def io_error(self, path: str, message: str) -> None:
        """A file that could not be read (said on stderr too)."""

    def errors_to(self, listener: Callable[[Any], None] | None) -> None:
        """Where a problem the renderer finds itself goes (a control record Kafka's tool would die on): the walk
        sets it per file."""


class ResultStream(Protocol):
    """A report written result by result: text as each result arrives, or one JSON document at the end."""

    def result(self, doc: dict, lines: Iterable[str]) -> None:
        """One result: ``doc`` for programs, ``lines`` (read only by the text form) for people."""

    def end(self, doc: dict, lines: Iterable[str] = ()) -> None:
        """The report is complete: ``doc``'s members beside the results, ``lines`` after them."""


class OutputFormat(Protocol):
    """One ``--format`` (a row of :data:`kdump.render.RENDERERS`)."""

    per_record: bool  # one object per record: offered by the commands that print records only (dump)
    findings_only: bool  # findings only: offered by the commands whose output is findings only (verify)
    # a format for people (the text options --compat, ... apply); else for programs, errors in its stream too
    for_people: bool
    page: bool  # a page of fields beside their bytes (HTML): offered by the commands that explain bytes only

    @staticmethod
    def batches(out, opts, key_decoder, value_decoder, *, no_color: bool, header_decoder=None) -> BatchRenderer:
        ...

    @staticmethod
    def findings(out, reports, *, styled: bool, fail_on: str = "error", verbose: bool = False,
                 list_ok: bool = True, run=None) -> None:
        ...

    @staticmethod
    def document(out, doc: Any, text: Callable[[], None], *, time_format: str = "epoch",
                 ensure_ascii: bool = True, indent: int | None = 2) -> None:
        ...

    @staticmethod
    def results(out, echo: Callable[[str], None], key: str = "results") -> ResultStream:
        ...


class CountingRenderer:
    """A :class:`BatchRenderer` that tells ``advance`` the bytes of each batch handed on to ``inner`` (a progress
    bar's count), and is otherwise ``inner``."""

    def __init__(self, inner: BatchRenderer, advance: Callable[[int], None]):
        self.inner = inner
        self.advance = advance
        self.out = inner.out

    def begin_file(self, display_path: str, header: str | None) -> None:
        self.inner.begin_file(display_path, header)

    def companion(self, item) -> None:
        self.inner.companion(item)

    def trailing(self, file_name: str, tail) -> None:
        self.inner.trailing(file_name, tail)

    def batch(self, batch, records=None, decoded=None) -> None:
        self.inner.batch(batch, records, decoded)
        self.advance(batch.size)

    def legacy_run(self, run, deep: bool) -> bool:
        return self.inner.legacy_run(run, deep)

    def open_batch(self, batch, records, decoded=None) -> None:
        self.inner.open_batch(batch, records, decoded)

    def more_records(self, batch, records, decoded=None) -> None:
        self.inner.more_records(batch, records, decoded)

    def close_batch(self, batch) -> None:
        self.inner.close_batch(batch)
        self.advance(batch.size)

    def error(self, path: str, err) -> None:
        self.inner.error(path, err)

    def io_error(self, path: str, message: str) -> None:
        self.inner.io_error(path, message)

    def errors_to(self, listener) -> None:
        self.inner.errors_to(listener)


class TextResults:
    """:class:`ResultStream` for people: each result's lines as it arrives (through ``echo``, which escapes them on
    a terminal)."""

    def __init__(self, echo: Callable[[str], None]):
        self.echo = echo

    def result(self, doc: dict, lines: Iterable[str]) -> None:
        for line in lines:
            self.echo(line)

    def end(self, doc: dict, lines: Iterable[str] = ()) -> None:
        for line in lines:
            self.echo(line)


class JsonResults:
    """:class:`ResultStream` for programs: one JSON document, ``{key: [each result's doc], ...end's members}``."""

    def __init__(self, out, key: str):
        self.out = out
        self.key = key
        self.docs: list[dict] = []

    def result(self, doc: dict, lines: Iterable[str]) -> None:
        self.docs.append(doc)

    def end(self, doc: dict, lines: Iterable[str] = ()) -> None:
        import json
        self.out.write(json.dumps({self.key: self.docs, **doc}, indent=2) + "\n")
