"""The walk of a dump (:class:`Dumper`): files and directories, their batches decoded and handed to a renderer.

The walk is DumpLogSegments' (spec §1.2-§2.7): a ``Dumping <path>`` line per file, a header line by
file kind, one batch line per batch, record lines with deep iteration, "Found N invalid bytes" for a
trailing partial batch, and the non-consecutive offset report after all files. Where Kafka's tool dies
(a size field below 14, a zero-filled tail, undecodable data) kdump reports the problem through
``on_error`` with the file, byte position and cause, and goes on with what it can still read.

Companion files (indexes, producer snapshots, text checkpoints) are dumped by :mod:`kdump.index.dump`;
seeking (``from_offset``/``to_offset``/``from_time``) uses the segment's indexes (:mod:`kdump.read.locate`).
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from kdump.decode.records import decode_records
from kdump.dump.plan import PRE_08_SUFFIX, next_segment_bases, outside_range, passed_over
from kdump.dump.results import FileResult, follow_offsets, follow_run
from kdump.dump.window import SeekWindow, before_window
from kdump.errors import FormatError
from kdump.format import columns as _columns
from kdump.format.columns import RecordColumns
from kdump.format.framing import Stop
from kdump.format.legacy import LegacyRun
from kdump.read.damage import BATCH, RANGE, TAIL, Damage, foreign_start, readable
from kdump.read.logdir import (
    BOOTSTRAP_CHECKPOINT,
    COMPANION_KINDS,
    TEXT_KINDS,
    Entry,
    FileKind,
    kraft_snapshot_id,
    named_base_offset,
    read_kind,
    segment_base_offset,
)
from kdump.read.scan import as_scan
from kdump.read.segment import SegmentReader

if TYPE_CHECKING:
    from kdump.dump.options import DumpOptions
    from kdump.read.locate import Located


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
        self.passed_over: list[tuple[str, FileKind]] = []  # files of a directory not dumped, and their kinds
        self.outside_window: list[str] = []  # segments not dumped: nothing in them is in the seek's range
        # each planned segment's next segment's base offset (plan()): what bounds a seek; a worker dumping part of
        # a plan is handed its planner's
        self.next_bases: dict[str, int | None] = {}
        self._located: dict[str, Located] = {}  # each segment's seek lookup, made once
        self.unreadable: set[str] = set()  # files that could not be read (not counted as read by the outcome)

    def dump_paths(self, paths) -> list[FileResult]:
        """Dump files and directories in order (``paths``, or the :class:`~kdump.read.scan.Scan` of them the
        command made once); a file that cannot be opened is reported and skipped."""
        for entry in self.plan(paths):
            self.dump_entry(entry)
        return self.results

    def plan(self, paths) -> list[Entry]:
        """The entries :meth:`dump_paths` dumps, in order (the others noted in ``passed_over``)."""
        everything = as_scan(paths).entries
        entries = []
        for e in everything:
            kind = passed_over(e, self.options.companions)
            if kind is None:
                entries.append(e)
            else:
                self.passed_over.append((e.path, kind))
        self.next_bases = next_segment_bases(entries)
        return entries

    def dump_entry(self, entry: Entry) -> None:
        """One entry of :meth:`plan` (after it: the next segment's base offset bounds a seek)."""
        path = entry.path
        if self.options.seeking and outside_range(entry, self.next_bases.get(path), self.options):
            self.outside_window.append(path)
            return
        try:
            if entry.refused is not None:  # missing, a symlink loop, a FIFO: never opened
                raise entry.refused.as_oserror()
            self.dump_file(path, from_dir=entry.from_dir, kind=entry.kind)
        except BrokenPipeError:
            raise  # the reader of our output went away (`| head`): not a problem with this file
        except OSError as e:
            if self.on_io_error is None:
                raise
            self.unreadable.add(path)
            self.on_io_error(path, e)

    def dump_file(self, path: str, *, from_dir: bool = False, kind: FileKind | None = None) -> FileResult:
        """Dump one file as its kind says (:func:`kdump.read.logdir.read_kind` when not given)."""
        result = FileResult(path)
        self.results.append(result)
        if kind is None:
            kind = read_kind(path)
        if path.endswith(PRE_08_SUFFIX) and not from_dir:
            kind = FileKind.UNKNOWN  # said to be Kafka 0.7's below, not read as a later log
        if kind in COMPANION_KINDS or (kind in TEXT_KINDS and (self.options.companions or not from_dir)):
            self.renderer.begin_file(_display_path(path), None)
            self._dump_companion(path, kind.value, result)
            return result
        header = None
        if kind is FileKind.LOG:
            base = named_base_offset(path) if not from_dir else segment_base_offset(path)
            if base is not None:
                header = f"Log starting offset: {base}"
        elif kind is FileKind.KRAFT_CHECKPOINT:
            snapshot_id = kraft_snapshot_id(path)
            if os.path.basename(path) == BOOTSTRAP_CHECKPOINT:
                header = "KRaft bootstrap snapshot"
            elif snapshot_id is not None:
                header = f"Snapshot end offset: {snapshot_id[0]}, epoch: {snapshot_id[1]}"
        if kind is FileKind.LOG and self._wholly_before_start(path):
            self.outside_window.append(path)  # as DumpLogSegments would if it seeked: not even a header
            return result
        self.renderer.begin_file(_display_path(path), header)
        if kind not in (FileKind.LOG, FileKind.KRAFT_CHECKPOINT):
            result.skipped = True
            if path.endswith(PRE_08_SUFFIX):
                self._error(result, FormatError("pre-0.8-format", "a Kafka 0.7 segment (.kafka): pre-0.8 format, "
                                                "not supported (its messages carry no offsets)"))
            else:
                self.on_unknown(path)
            return result
        if header is None:  # named by the user: read by its bytes, whatever its name (not a problem of the data)
            what = ("<20-digit base offset>.log" if kind is FileKind.LOG
                    else "<20-digit end offset>-<10-digit epoch>.checkpoint or bootstrap.checkpoint")
            self.on_note(path, f"the file name is not {what}, so its base offset is not known from it; "
                               "read by its bytes")
        self._dump_batches(path, result)
        return result

    def _error(self, result: FileResult, err: FormatError) -> None:
        result.add_error(err)
        self.on_error(result.path, err)

    def _dump_companion(self, path: str, kind: str, result: FileResult) -> None:
        from kdump.index.dump import CompanionDumper, CompanionOptions
        opts = self.options
        dumper = CompanionDumper(
            CompanionOptions(opts.verify_index_only, opts.index_sanity_check, opts.compat, opts.max_decompressed_bytes),
            self.index_reports, emit=self.renderer.companion, error=lambda err: self._error(result, err),
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
        self.unreadable.add(result.path)
        self.on_io_error(result.path, err)

    def _dump_batches(self, path: str, result: FileResult) -> None:
        opts = self.options
        deep = opts.deep
        limit = opts.max_decompressed_bytes
        r = self.renderer
        r.errors_to(lambda err: self._error(result, err))
        record_decoder = None
        if opts.record_decoder is not None:
            from kdump.decode.internal import record_decoder_for
            record_decoder = record_decoder_for(path, opts.record_decoder, opts.compat)
        last = None  # last record offset seen, for the non-consecutive report
        window = SeekWindow(opts) if opts.seeking else None
        filters = opts.filters
        walk = _DamageWalk(self, result, path)
        reached_end = True
        with SegmentReader(path, max_bytes=opts.max_bytes, max_batch_bytes=opts.max_batch_bytes) as reader:
            foreign = foreign_start(reader)
            if foreign is not None:
                self._error(result, foreign)
                return
            if window is not None:
                found = self._seek_start(path, window)
                if found is None:
                    return  # nothing of this segment is wanted
                reader.start = found  # read when the walk begins
            whole_runs = window is None and filters is None and record_decoder is None
            for item in walk.batches(reader, window):
                if type(item) is LegacyRun:  # intact plain magic 0/1 messages, each a batch of one record
                    if whole_runs and self._whole_run(item, result):
                        if deep:
                            last = follow_run(item, last, result)
                        continue
                    batches: Iterable = item.messages()  # what this dump shows of each depends on the message
                else:
                    batches = (item,)
                for batch in batches:
                    if window is not None:
                        verdict = window.batch_verdict(batch, limit)
                        if verdict == "skip":
                            continue
                        if verdict == "stop":
                            reached_end = False
                            break
                    walk.invalid_shown(batch)
                    if filters is not None and not filters.batch_may_match(batch):
                        last = batch.last_offset  # passed over by its header: not decompressed
                        continue
                    if not deep:
                        result.batches += 1
                        r.batch(batch)
                        continue
                    last = self._dump_records(batch, result, window, filters, record_decoder, last)
                if not reached_end:
                    break
        if window is not None and window.started:
            self._seek_done.add(os.path.dirname(os.path.abspath(path)))
        tail = walk.tail  # (None: the walk ended cleanly, or in a damaged range reported where it was met)
        if tail is None or not reached_end:
            return
        # the read layer's one policy, as every command: Kafka's crash-cut tail is its "Found N invalid bytes at
        # the end" (exit 0); any other tail (zeros of 18 bytes or more, a file that shrank while read) fails
        if tail.fails:
            self._error(result, FormatError(tail.code, tail.message, position=tail.start))
        elif tail.length and tail.stop is not None:
            r.trailing(os.path.basename(path), tail.stop)

    def _whole_run(self, run: LegacyRun, result: FileResult) -> bool:
        """Render a run of plain messages at once where the renderer can (:meth:`legacy_run` of the text and JSON
        renderers: every message's batch line or object, and its record when deep); False when it cannot."""
        render = getattr(self.renderer, "legacy_run", None)
        if render is None or not render(run, self.options.deep):
            return False
        result.batches += run.count
        if self.options.deep:
            result.records += run.count
        return True

    def _dump_records(self, batch, result: FileResult, window, filters, record_decoder, last):
        """Render one batch with its records; returns the last record offset seen.

        In chunks of records: a batch may declare millions (memory stays bounded by the chunk). The next
        chunk is decoded before the current one is rendered, so that a batch of one chunk is rendered whole,
        and a renderer is told when a batch goes on (open_batch .. close_batch). With record filters, a batch
        is shown from its first chunk holding a match, and not at all without one."""
        r = self.renderer
        chunks = _decode(batch, self.options.max_decompressed_bytes)
        current = next(chunks)
        following = next(chunks, None)
        opened = shown = False
        while current is not None:
            records, error = current
            last_chunk = following is None
            if window is not None:
                records = window.filter_records(batch, records, last_chunk=last_chunk)
            last = follow_offsets(records, last, result)  # of every record read, matching or not
            if filters is not None:
                records = filters.select(records)
            if records.count or (last_chunk and not shown and (filters is None or not filters.record_level)):
                decoded = decode_records(batch, records, record_decoder)
                if not shown and last_chunk:
                    r.batch(batch, records, decoded)
                elif not shown:
                    r.open_batch(batch, records, decoded)
                    opened = True
                else:
                    r.more_records(batch, records, decoded)
                shown = True
                result.records += records.count
            if error is not None:
                self._error(result, error.at(batch.position))
            current = following
            following = None if following is None else next(chunks, None)
        if opened:
            r.close_batch(batch)
        if shown:
            result.batches += 1
        return last

    def _seek_start(self, path: str, window: SeekWindow) -> int | None:
        """Byte position to start reading a segment at, or None to skip it. Once a partition's start has
        been found, its later segments are read from their first byte."""
        opts = self.options
        directory = os.path.dirname(os.path.abspath(path))
        if directory in self._seek_done:
            window.started = True
            return 0
        next_base = self.next_bases.get(path)
        if opts.from_offset is not None and next_base is not None and next_base <= opts.from_offset:
            return None  # the next segment starts at or before the wanted offset
        if read_kind(path) is not FileKind.LOG:
            return 0  # KRaft snapshots have no index: the window filters while reading
        res = self._locate(path)
        if res is None:
            return 0
        if res.note:
            self.on_note(path, res.note)
        return res.position

    def _locate(self, path: str) -> Located | None:
        """Where the seek (``--from-offset``/``--from-time``) lands in segment ``path``; looked up once."""
        opts = self.options
        if path not in self._located:
            from kdump.read.locate import locate_offset, locate_time
            if opts.from_offset is not None:
                self._located[path] = locate_offset(path, opts.from_offset)
            elif opts.from_time is not None:
                self._located[path] = locate_time(path, opts.from_time)
            else:
                return None
        return self._located[path]

    def _wholly_before_start(self, path: str) -> bool:
        """Does the seek want nothing of segment ``path``: the walk reached its end cleanly without a batch at or
        after the start (damage, or a file that is not a segment, is read and reported as without a seek)?"""
        opts = self.options
        if (opts.from_offset is None and opts.from_time is None) or \
                os.path.dirname(os.path.abspath(path)) in self._seek_done:
            return False
        res = self._locate(path)
        return res is not None and res.batch is None and res.position >= os.path.getsize(path)


class _DamageWalk:
    """The batches a dump shows, from the resynchronising walk (:func:`kdump.read.damage.readable`): every intact
    batch before and after damage, and a batch that parsed but fails its CRC (Kafka prints it with ``isvalid:
    false``). Each damaged area (that batch; an entry that is not a batch, skipped by its size; bytes that hold no
    entry; an entry above ``--max-batch-bytes``) is one error, its :meth:`~kdump.read.damage.Damage.describe`
    (byte range, cause, offsets lost). The tail is reported after the walk, in Kafka's words where Kafka has some."""

    def __init__(self, dumper: Dumper, result: FileResult, path: str):
        self.dumper, self.result, self.path = dumper, result, path
        self.invalid: Damage | None = None  # the CRC damage of the batch just yielded, if it failed its CRC
        self.tail: Damage | None = None  # what the walk stopped at before the end of the file, once it has ended

    def invalid_shown(self, batch) -> None:
        """``batch`` is shown: if it failed its CRC, that is an error (Kafka's line says isvalid: false)."""
        damage = self.invalid
        if damage is not None and damage.batch is batch:
            self.invalid = None
            self.dumper._error(self.result, FormatError(
                damage.code, f"{damage.message}; the batch is shown with isvalid: false (its header and records "
                "cannot be trusted)", position=damage.start, extent=damage.covered()))

    def batches(self, reader: SegmentReader, window: SeekWindow | None):
        for item in readable(reader, show_invalid=False):
            if isinstance(item, Damage):
                if item.kind == BATCH and item.batch is not None:  # it fails its CRC: shown, as Kafka shows it
                    self.invalid = item  # an error once the batch is in the window (invalid_shown)
                    yield item.batch
                    continue
                if item.kind == RANGE and item.batch is not None:  # a damaged range that starts at a batch failing
                    yield item.batch  # its CRC: the batch is shown as Kafka shows it, the range is the error
                if item.kind == TAIL:
                    self.tail = item  # said after the walk, in Kafka's words where Kafka has some
                elif not before_window(item, window):
                    self.dumper._error(self.result, FormatError(item.code, item.describe(), position=item.start,
                                                                extent=item.covered()))
            elif isinstance(item, Stop):  # the Stop that ends every walk (also in reader.tail)
                return
            else:
                yield item


def _decode(batch, limit):
    """(records, error) per chunk of the batch's records: RecordColumns, plus the error that stopped
    decoding (or None). A batch that cannot be decoded at all is one empty chunk with its error."""
    chunks = batch.column_chunks(limit, _columns.RECORDS_PER_CHUNK)
    try:
        cols = next(chunks)
    except FormatError as e:
        yield RecordColumns(b""), e
        return
    yield cols, cols.error
    for cols in chunks:
        yield cols, cols.error


def _display_path(path: str) -> str:
    """Java's File.toString: the path as given, without a trailing separator (escaped where it is not
    printable: :func:`kdump.text.escape.printable_path`)."""
    from kdump.text.escape import printable_path
    return printable_path(path.rstrip("/") or path)
