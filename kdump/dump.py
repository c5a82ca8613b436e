"""``kdump dump`` as a library: walk files and directories, decode batches, hand them to a renderer.

The walk is DumpLogSegments' (spec §1.2-§2.7): a ``Dumping <path>`` line per file, a header line by
file kind, one batch line per batch, record lines with deep iteration, "Found N invalid bytes" for a
trailing partial batch, and the non-consecutive offset report after all files. Where Kafka's tool dies
(a size field below 14, a zero-filled tail, undecodable data) kdump reports the problem through
``on_error`` with the file, byte position and cause, and goes on with what it can still read.

Companion files (indexes, producer snapshots, text checkpoints) are dumped by :mod:`kdump.index.dump`;
seeking (``from_offset``/``to_offset``/``from_time``) uses the segment's indexes (:mod:`kdump.index.seek`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Callable

from kdump.errors import FormatError
from kdump.index.names import TEXT_CHECKPOINT_NAMES
from kdump.segment import (DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader,
                           base_offset_from_name)

_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# Companion files a directory dump passes over quietly (they are dumped when named explicitly, or in
# directory dumps with ``companions``).
COMPANION_SUFFIXES = (".index", ".timeindex", ".txnindex", ".snapshot")
COMPANION_KINDS = ("index", "timeindex", "txnindex", "snapshot")
_SUFFIX_ORDER = {".log": 0, ".index": 1, ".timeindex": 2, ".txnindex": 3, ".snapshot": 4}


@dataclass
class DumpOptions:
    deep_iteration: bool = False
    print_data: bool = False
    skip_record_metadata: bool = False
    max_bytes: int | None = None
    compat: str = "java"  # "java" (newest Kafka) or "scala" (Kafka 2.x-3.9)
    max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES
    max_decompressed_bytes: int = DEFAULT_MAX_DECOMPRESSED_BYTES
    # companion files (kdump.index.dump)
    verify_index_only: bool = False
    index_sanity_check: bool = False
    companions: bool = False  # directory dumps include index, snapshot and checkpoint files
    # seeking (kdump.index.seek): batches whose last offset >= from_offset, or from the first batch whose max
    # timestamp >= from_time; up to the last batch starting at or before to_offset
    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    # internal-topic decoders (kdump.decoders): a decoder name, "auto" (by partition directory) or None
    record_decoder: str | None = None

    @property
    def seeking(self) -> bool:
        return self.from_offset is not None or self.from_time is not None or self.to_offset is not None

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


def text_checkpoint_kind(path: str) -> bool:
    """Kafka's text checkpoints (leader-epoch-checkpoint, replication-offset-checkpoint, ..., partition.metadata),
    which DumpLogSegments cannot read; kdump dumps them in a readable form."""
    return os.path.basename(path) in TEXT_CHECKPOINT_NAMES


def _next_segment_bases(paths: list[str]) -> dict[str, int | None]:
    """For each .log, the base offset of the next .log of the same directory among ``paths`` (None if last)."""
    by_dir: dict[str, list[tuple[int, str]]] = {}
    for p in paths:
        if file_kind(p) == "log":
            base = base_offset_from_name(p)
            if base is not None:
                by_dir.setdefault(os.path.dirname(os.path.abspath(p)), []).append((base, p))
    out: dict[str, int | None] = {}
    for items in by_dir.values():
        items.sort()
        for (base, p), nxt in zip(items, items[1:] + [(None, None)]):
            out[p] = nxt[0]
    return out


def expand_paths(paths, *, companions: bool = False) -> list[str]:
    """Files to dump. Directories give their segments in offset order (recursively, partition
    directories in name order); unknown files in them are still listed so that they can be named and
    skipped, while index-like companions are left out (they are dumped when named) unless ``companions``
    (then each segment is followed by its .index, .timeindex, .txnindex and the snapshot of its offset)."""
    return [p for p, _ in expand_paths_marked(paths, companions=companions)]


def expand_paths_marked(paths, *, companions: bool = False) -> list[tuple[str, bool]]:
    """(path, came from a directory) for every file to dump."""
    out = []
    for p in paths:
        p = os.fspath(p)
        if os.path.isdir(p):
            out.extend((q, True) for q in _expand_dir(p, companions))
        else:
            out.append((p, False))
    return out


def _expand_dir(d: str, companions: bool = False) -> list[str]:
    entries = sorted(os.listdir(d))
    files = [e for e in entries if not os.path.isdir(os.path.join(d, e))]
    subdirs = [e for e in entries if os.path.isdir(os.path.join(d, e))]

    def order(name):
        base = base_offset_from_name(name)
        dot = name.rfind(".")
        rank = _SUFFIX_ORDER.get(name[dot:], 5) if dot >= 0 else 5
        return (base is None, base if base is not None else 0, rank, name)

    out = []
    for name in sorted(files, key=order):
        path = os.path.join(d, name)
        if name.endswith(COMPANION_SUFFIXES) and not companions:
            continue
        out.append(path)
    for sub in subdirs:
        out.extend(_expand_dir(os.path.join(d, sub), companions))
    return out


class Dumper:
    """Runs a dump over files with one renderer. ``on_error(path, FormatError)`` reports problems."""

    def __init__(self, options: DumpOptions, renderer, *, on_error: Callable | None = None,
                 on_unknown: Callable | None = None, on_io_error: Callable | None = None,
                 on_note: Callable | None = None):
        from kdump.index.reports import IndexReports
        self.options = options
        self.renderer = renderer
        self.on_error = on_error or (lambda path, err: None)
        self.on_unknown = on_unknown or (lambda path: None)
        self.on_io_error = on_io_error  # (path, OSError); None: raise
        self.on_note = on_note or (lambda path, message: None)  # worth saying, not a problem
        self.results: list[FileResult] = []
        self.index_reports = IndexReports()  # Kafka's index mismatch reports, printed after all files
        self._seek_done: set = set()  # directories whose seek start has been passed

    def dump_paths(self, paths) -> list[FileResult]:
        """Dump files and directories in order; a file that cannot be opened is reported and skipped."""
        marked = expand_paths_marked(paths, companions=self.options.companions)
        self._next_base = _next_segment_bases([p for p, _ in marked])
        for path, from_dir in marked:
            try:
                self.dump_file(path, from_dir=from_dir)
            except BrokenPipeError:
                raise  # the reader of our output went away (`| head`): not a problem with this file
            except OSError as e:
                if self.on_io_error is None:
                    raise
                self.on_io_error(path, e)
        return self.results

    def dump_file(self, path: str, *, from_dir: bool = False) -> FileResult:
        result = FileResult(path)
        self.results.append(result)
        kind = file_kind(path)
        if kind in COMPANION_KINDS or (kind == "unknown" and text_checkpoint_kind(path)
                                       and (self.options.companions or not from_dir)):
            self.renderer.begin_file(_display_path(path), None)
            self._dump_companion(path, kind, result)
            return result
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

    def _dump_companion(self, path: str, kind: str, result: FileResult) -> None:
        from kdump.index.dump import CompanionDumper, CompanionOptions, emit_to
        opts = self.options
        dumper = CompanionDumper(
            CompanionOptions(opts.verify_index_only, opts.index_sanity_check, opts.compat, opts.max_decompressed_bytes),
            self.index_reports, emit=emit_to(self.renderer), error=lambda err: self._error(result, err),
            missing=lambda p, msg: self._missing(result, p, msg), note=lambda msg: self.on_note(path, msg))
        try:
            dumper.dump(path, kind)
        except FormatError as e:
            self._error(result, e)

    def _missing(self, result: FileResult, missing_path: str, message: str) -> None:
        err = OSError(message)
        err.strerror = message
        if self.on_io_error is None:
            raise FileNotFoundError(message)
        self.on_io_error(result.path, err)

    def _dump_batches(self, path: str, result: FileResult) -> None:
        opts = self.options
        deep = opts.deep
        limit = opts.max_decompressed_bytes
        r = self.renderer
        r.on_error = lambda err: self._error(result, err)
        if opts.record_decoder is not None:  # [internal-topic decoders hook]
            from kdump.decoders import record_decoder_for
            r.record_decoder = record_decoder_for(path, opts.record_decoder, opts.compat)
        last = None  # last record offset seen, for the non-consecutive report
        non_consecutive = result.non_consecutive
        window = _SeekWindow(opts) if opts.seeking else None
        start = 0
        if window is not None:
            start = self._seek_start(path, window)
            if start is None:
                return  # nothing of this segment is wanted
        reached_end = True
        with SegmentReader(path, start=start, max_bytes=opts.max_bytes, max_batch_bytes=opts.max_batch_bytes) as reader:
            for batch in reader:
                if window is not None:
                    verdict = window.batch_verdict(batch, limit)
                    if verdict == "skip":
                        continue
                    if verdict == "stop":
                        reached_end = False
                        break
                result.batches += 1
                if not deep:
                    r.batch(batch)
                    continue
                records, error = _decode(batch, limit)
                if window is not None:
                    records = window.filter_records(batch, records)
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
        if window is not None and window.started:
            self._seek_done.add(os.path.dirname(os.path.abspath(path)))
        if tail is None or not reached_end:
            return
        if tail.fatal:
            self._error(result, FormatError(tail.code, tail.message, position=tail.position))
        elif tail.kind in ("short", "truncated") and tail.length > 0:
            r.trailing(os.path.basename(path), tail)

    def _seek_start(self, path: str, window: "_SeekWindow") -> int | None:
        """Byte position to start reading a segment at, or None to skip it. Once a partition's start has
        been found, its later segments are read from their first byte."""
        opts = self.options
        directory = os.path.dirname(os.path.abspath(path))
        if directory in self._seek_done:
            window.started = True
            return 0
        next_base = getattr(self, "_next_base", {}).get(path)
        if opts.from_offset is not None and next_base is not None and next_base <= opts.from_offset:
            return None  # the next segment starts at or before the wanted offset
        if file_kind(path) != "log":
            return 0  # KRaft snapshots have no index: the window filters while reading
        from kdump.index import seek
        if opts.from_offset is not None:
            res = seek.seek_offset(path, opts.from_offset)
        elif opts.from_time is not None:
            res = seek.seek_time(path, opts.from_time)
        else:
            return 0
        if res.note:
            self.on_note(path, res.note)
        return res.position

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


class _SeekWindow:
    """Which batches and records a seeking dump shows: from the first batch reaching ``from_offset`` (records
    from that offset) or the first batch whose max timestamp reaches ``from_time`` (records from its first
    record at or after that time, and everything after it), up to ``to_offset`` (records up to it)."""

    def __init__(self, opts: DumpOptions):
        self.from_offset = opts.from_offset
        self.to_offset = opts.to_offset
        self.from_time = opts.from_time
        self.started = self.from_offset is None and self.from_time is None
        self.first_batch = None  # the batch the window starts in (records before the start are hidden)

    def batch_verdict(self, batch, limit: int) -> str:
        if self.to_offset is not None and batch.last_offset > self.to_offset and \
                _first_offset(batch, limit) > self.to_offset:
            return "stop"
        if self.started:
            return "show"
        if self.from_offset is not None and batch.last_offset < self.from_offset:
            return "skip"
        if self.from_time is not None and batch.max_timestamp < self.from_time:
            return "skip"
        self.started = True
        self.first_batch = batch
        return "show"

    def filter_records(self, batch, records):
        lo = hi = None
        n = records.count if batch.magic >= 2 else len(records)
        offsets = records.offsets if batch.magic >= 2 else [x.offset for x in records]
        if batch is self.first_batch:
            if self.from_offset is not None:
                lo = next((i for i in range(n) if offsets[i] >= self.from_offset), n)
            elif self.from_time is not None:
                times = records.timestamps if batch.magic >= 2 else [x.timestamp for x in records]
                lo = next((i for i in range(n) if times[i] >= self.from_time), 0)
        if self.to_offset is not None:
            hi = next((i for i in range(n) if offsets[i] > self.to_offset), n)
        if lo is None and hi is None:
            return records
        lo = lo or 0
        hi = n if hi is None else hi
        if lo == 0 and hi == n:
            return records
        if batch.magic >= 2:
            return _slice_columns(records, lo, hi)
        return records[lo:hi]


def _first_offset(batch, limit: int) -> int:
    if batch.magic >= 2:
        return batch.base_offset
    try:
        return batch.base_offset  # decompresses a legacy wrapper
    except FormatError:
        return batch.last_offset


def _slice_columns(cols, lo: int, hi: int):
    from kdump.format.v2 import RecordColumns
    out = RecordColumns(cols.buf)
    for name in ("offsets", "timestamps", "attributes", "key_pos", "key_len", "value_pos", "value_len", "headers",
                 "sizes"):
        setattr(out, name, getattr(cols, name)[lo:hi])
    out.count = max(0, min(hi, cols.count) - lo)
    out.error = cols.error
    return out


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
