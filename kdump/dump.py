"""``kdump dump`` as a library: walk files and directories, decode batches, hand them to a renderer.

The walk is DumpLogSegments' (spec §1.2-§2.7): a ``Dumping <path>`` line per file, a header line by
file kind, one batch line per batch, record lines with deep iteration, "Found N invalid bytes" for a
trailing partial batch, and the non-consecutive offset report after all files. Where Kafka's tool dies
(a size field below 14, a zero-filled tail, undecodable data) kdump reports the problem through
``on_error`` with the file, byte position and cause, and goes on with what it can still read.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable

from kdump.errors import FormatError
from kdump.segment import (DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader,
                           base_offset_from_name)

_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# Companion files a directory dump passes over quietly (they are dumped when named explicitly).
COMPANION_SUFFIXES = (".index", ".timeindex", ".txnindex", ".snapshot")


@dataclass
class DumpOptions:
    deep_iteration: bool = False
    print_data: bool = False
    skip_record_metadata: bool = False
    max_bytes: int | None = None
    compat: str = "java"  # "java" (newest Kafka) or "scala" (Kafka 2.x-3.9)
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES

    @property
    def deep(self) -> bool:
        return self.deep_iteration or self.print_data


@dataclass
class FileResult:
    path: str
    batches: int = 0
    records: int = 0
    errors: list = field(default_factory=list)  # FormatError, position set
    non_consecutive: list = field(default_factory=list)  # (previous offset, offset) in discovery order
    skipped: bool = False


def file_kind(path: str) -> str:
    """Kafka's dispatch on the suffix from the last dot of the file name (§1.2)."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    if dot < 0:
        return "unknown"
    suffix = name[dot:]
    return {
        ".log": "log", ".checkpoint": "checkpoint", ".index": "index", ".timeindex": "timeindex",
        ".snapshot": "snapshot", ".txnindex": "txnindex",
    }.get(suffix, "unknown")


def expand_paths(paths) -> list[str]:
    """Files to dump. Directories give their segments in offset order (recursively, partition
    directories in name order); unknown files in them are still listed so that they can be named and
    skipped, while index-like companions are left out (they are dumped when named)."""
    out = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            out.extend(_expand_dir(p))
        else:
            out.append(p)
    return out


def _expand_dir(d: str) -> list[str]:
    entries = sorted(os.listdir(d))
    files = [e for e in entries if not os.path.isdir(os.path.join(d, e))]
    subdirs = [e for e in entries if os.path.isdir(os.path.join(d, e))]

    def order(name):
        base = base_offset_from_name(name)
        return (base is None, base if base is not None else 0, name)

    out = []
    for name in sorted(files, key=order):
        path = os.path.join(d, name)
        if name.endswith(COMPANION_SUFFIXES):
            continue
        out.append(path)
    for sub in subdirs:
        out.extend(_expand_dir(os.path.join(d, sub)))
    return out


class Dumper:
    """Runs a dump over files with one renderer. ``on_error(path, FormatError)`` reports problems."""

    def __init__(self, options: DumpOptions, renderer, *, on_error: Callable | None = None,
                 on_unknown: Callable | None = None, on_io_error: Callable | None = None):
        self.options = options
        self.renderer = renderer
        self.on_error = on_error or (lambda path, err: None)
        self.on_unknown = on_unknown or (lambda path: None)
        self.on_io_error = on_io_error  # (path, OSError); None: raise
        self.results: list[FileResult] = []

    def dump_paths(self, paths) -> list[FileResult]:
        """Dump files and directories in order; a file that cannot be opened is reported and skipped."""
        for path in expand_paths(paths):
            try:
                self.dump_file(path)
            except BrokenPipeError:
                raise  # the reader of our output went away (`| head`): not a problem with this file
            except OSError as e:
                if self.on_io_error is None:
                    raise
                self.on_io_error(path, e)
        return self.results

    def dump_file(self, path: str) -> FileResult:
        result = FileResult(path)
        self.results.append(result)
        kind = file_kind(path)
        header = None
        if kind == "log":
            base = base_offset_from_name(path)
            if base is not None:
                header = f"Log starting offset: {base}"
        elif kind == "checkpoint":
            name = os.path.basename(path)
            m = _SNAPSHOT_NAME.match(name)
            if name == "bootstrap.checkpoint":
                header = "KRaft bootstrap snapshot"
            elif m:
                header = f"Snapshot end offset: {int(m.group(1))}, epoch: {int(m.group(2))}"
        self.renderer.begin_file(_display_path(path), header)
        if kind not in ("log", "checkpoint"):
            result.skipped = True
            self.on_unknown(path)
            return result
        if header is None:
            what = ("<20-digit base offset>.log" if kind == "log"
                    else "<20-digit end offset>-<10-digit epoch>.checkpoint or bootstrap.checkpoint")
            self._error(result, FormatError(
                "file-name-invalid", f"the file name is not {what}, so its offsets are not known; dumping it anyway"))
        self._dump_batches(path, result)
        return result

    def _error(self, result: FileResult, err: FormatError) -> None:
        result.errors.append(err)
        self.on_error(result.path, err)

    def _dump_batches(self, path: str, result: FileResult) -> None:
        opts = self.options
        deep = opts.deep
        limit = opts.max_decompressed_bytes
        r = self.renderer
        r.on_error = lambda err: self._error(result, err)
        last = None  # last record offset seen, for the non-consecutive report
        non_consecutive = result.non_consecutive
        with SegmentReader(path, max_bytes=opts.max_bytes, max_batch_bytes=opts.max_batch_bytes) as reader:
            for batch in reader:
                result.batches += 1
                if not deep:
                    r.batch(batch)
                    continue
                records, error = _decode(batch, limit)
                r.batch(batch, records)
                offsets = records.offsets[:records.count] if batch.magic >= 2 else [x.offset for x in records]
                result.records += len(offsets)
                for off in offsets:
                    if last is not None and off != last + 1:
                        non_consecutive.append((last, off))
                    last = off
                if error is not None:
                    self._error(result, error.at(batch.position))
            tail = reader.tail
        if tail is None:
            return
        if tail.fatal:
            self._error(result, FormatError(tail.code, tail.message, position=tail.position))
        elif tail.kind in ("short", "truncated") and tail.length > 0:
            r.trailing(os.path.basename(path), tail)


def _decode(batch, limit):
    """(records, error): RecordColumns for v2 or a list of LegacyRecords, plus the error that stopped decoding."""
    if batch.magic >= 2:
        try:
            cols = batch.columns(limit)
        except FormatError as e:
            from kdump.format.v2 import RecordColumns
            return RecordColumns(b""), e
        return cols, cols.error
    records = []
    try:
        for rec in batch.records(limit):
            records.append(rec)
    except FormatError as e:
        return records, e
    return records, None


def _display_path(path: str) -> str:
    """Java's File.toString: the path as given, without a trailing separator."""
    return path.rstrip("/") or path


def non_consecutive_report(results, compat: str = "java") -> list[str]:
    """The stderr block DumpLogSegments prints after all files (§2.7)."""
    lines = []
    for res in results:
        pairs = res.non_consecutive
        if not pairs:
            continue
        lines.append(f"Non-consecutive offsets in {os.path.abspath(res.path)}")
        if compat == "scala":
            ordered = list(reversed(pairs))
        else:  # Java keeps a TreeMap keyed by the previous offset: ascending, duplicates collapsed
            ordered = sorted(dict(pairs).items())
        lines.extend(f"  {a} is followed by {b}" for a, b in ordered)
    return lines
