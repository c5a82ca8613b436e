"""``kdump dump`` as a library: walk files and directories, decode batches, hand them to a renderer.

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kdump.decode.records import decode_records
from kdump.errors import FormatError
from kdump.format import columns as _columns
from kdump.format.columns import RecordColumns
from kdump.format.framing import Stop
from kdump.format.layout import java_long
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
from kdump.read.segment import (
    DEFAULT_MAX_BATCH_BYTES,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    SegmentReader,
)

if TYPE_CHECKING:
    from kdump.decode.filters import RecordFilter
    from kdump.jobs import Work
    from kdump.read.locate import Located


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
    # seeking (kdump.read.locate): batches whose last offset >= from_offset, or from the first batch whose max
    # timestamp >= from_time; up to the last batch starting at or before to_offset
    from_offset: int | None = None
    to_offset: int | None = None
    from_time: int | None = None
    to_time: int | None = None  # up to the last batch starting at or before it
    # internal-topic decoders (kdump.decode.internal): a decoder name, "auto" (by partition directory) or None
    record_decoder: str | None = None
    # which batches and records are shown (kdump.decode.filters.RecordFilter), None: all
    filters: RecordFilter | None = None
    time_format: str = "epoch"  # how renderers print timestamps (kdump.text.times)

    @property
    def seeking(self) -> bool:
        return (self.from_offset is not None or self.from_time is not None or self.to_offset is not None
                or self.to_time is not None)

    @property
    def deep(self) -> bool:
        return self.deep_iteration or self.print_data or (self.filters is not None and self.filters.record_level)


# A dump keeps at most this many errors and non-consecutive offset pairs per file for its end-of-run report
# (a damaged or compacted file could otherwise make the report, and memory, grow with the file); the rest
# are counted.
MAX_KEPT = 1000


@dataclass
class FileResult:
    path: str
    batches: int = 0
    records: int = 0
    errors: list = field(default_factory=list)  # the first MAX_KEPT FormatErrors, position set
    error_count: int = 0
    non_consecutive: list = field(default_factory=list)  # the first MAX_KEPT (previous offset, offset) pairs
    non_consecutive_count: int = 0  # all of them
    skipped: bool = False

    def add_error(self, err: FormatError) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_KEPT:
            self.errors.append(err.detached())  # kept for the report: not the batch its frames hold

    def non_consecutive_pair(self, previous: int, offset: int) -> None:
        self.non_consecutive_count += 1
        if len(self.non_consecutive) < MAX_KEPT:
            self.non_consecutive.append((previous, offset))


# Files of Kafka's (and kdump's) own that a directory dump passes over without calling them unknown.
PASSED_OVER_KINDS = frozenset((FileKind.META_PROPERTIES, FileKind.BROKER_STATE, FileKind.DELETED, FileKind.SWAP,
                               FileKind.CLEANED, FileKind.KAFKA_TEMP, FileKind.KDUMP_TEMP, FileKind.KDUMP_BACKUP,
                               FileKind.KDUMP_LOCK))
PRE_08_SUFFIX = ".kafka"  # Kafka 0.7's segments: <offset>.kafka, messages without offsets


def entries_to_dump(paths, *, companions: bool = False) -> list[Entry]:
    """What a dump of ``paths`` (or of their :class:`~kdump.read.scan.Scan`) visits (:func:`kdump.read.scan.scan`):
    files as named; from directories, their
    segments in offset order and every other file (so that unknown files are named and skipped), but not the
    index-like companions and text checkpoints unless ``companions`` (then each segment is followed by its
    .index, .timeindex, .txnindex and the snapshot of its offset), nor Kafka's other files
    (:func:`passed_over`)."""
    return [e for e in as_scan(paths).entries if passed_over(e, companions) is None]


def passed_over(entry: Entry, companions: bool = False) -> FileKind | None:
    """The kind of a file found in a directory that a dump passes over quietly, or None."""
    if not entry.from_dir or entry.refused is not None:
        return None
    if entry.kind in PASSED_OVER_KINDS:
        return entry.kind
    if not companions and (entry.kind in COMPANION_KINDS or entry.kind in TEXT_KINDS):
        return entry.kind
    return None


def _outside_range(entry: Entry, next_base: int | None, opts: DumpOptions) -> bool:
    """A segment wholly outside ``from_offset``..``to_offset`` (by its base offset and the next segment's)."""
    if entry.kind is not FileKind.LOG or not entry.from_dir:
        return False  # a file named by the user is read (its name need not be its first offset)
    base = segment_base_offset(entry.path)
    if base is None:
        return False
    if opts.from_offset is not None and next_base is not None and next_base <= opts.from_offset:
        return True
    return opts.to_offset is not None and base > opts.to_offset


def _next_segment_bases(entries: list[Entry]) -> dict[str, int | None]:
    """For each segment, the base offset of the next segment of the same directory among ``entries``."""
    by_dir: dict[str, list[tuple[int, str]]] = {}
    for e in entries:
        base = segment_base_offset(e.path)
        if e.kind is FileKind.LOG and base is not None:
            by_dir.setdefault(os.path.dirname(os.path.abspath(e.path)), []).append((base, e.path))
    out: dict[str, int | None] = {}
    for items in by_dir.values():
        items.sort()
        for (_, p), nxt in zip(items, [*items[1:], (None, None)], strict=True):
            out[p] = nxt[0]
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
        self.next_bases = _next_segment_bases(entries)
        return entries

    def dump_entry(self, entry: Entry) -> None:
        """One entry of :meth:`plan` (after it: the next segment's base offset bounds a seek)."""
        path = entry.path
        if self.options.seeking and _outside_range(entry, self.next_bases.get(path), self.options):
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
        window = _SeekWindow(opts) if opts.seeking else None
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
                            last = _follow_run(item, last, result)
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
            last = _follow_offsets(records, last, result)  # of every record read, matching or not
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

    def _seek_start(self, path: str, window: _SeekWindow) -> int | None:
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

def _follow_offsets(records, last, result: FileResult):
    """Report each record offset that does not follow the one before (``last``: the previous record's, None
    at the start); returns the last offset. A run of consecutive offsets (every batch not compacted) is
    recognised with one list comparison instead of a step per record."""
    n = records.count
    if not n:
        return last
    offsets = records.offsets
    first = offsets[0]
    if (last is None or first == last + 1) and offsets[n - 1] == first + n - 1 and (
            n < 3 or offsets[:n] == list(range(first, first + n))):
        return offsets[n - 1]
    for off in offsets[:n]:
        if last is not None and off != last + 1 and off != java_long(last + 1):  # Kafka's long: MAX + 1 = MIN
            result.non_consecutive_pair(last, off)
        last = off
    return last


def _follow_run(run: LegacyRun, last, result: FileResult):
    """:func:`_follow_offsets` over a run of plain messages: from the summary of its walk when its offsets follow
    each other and the offset before (its columns are then never built), else from its columns."""
    s = run.summary
    first, n = run.base_offset, run.count
    consecutive = s is not None and s.decreasing_at < 0 and run.last_offset - first == n - 1
    if consecutive and (last is None or first == last + 1):
        return run.last_offset
    return _follow_offsets(run.columns, last, result)


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

    def batches(self, reader: SegmentReader, window: _SeekWindow | None):
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
                elif not _before_window(item, window):
                    self.dumper._error(self.result, FormatError(item.code, item.describe(), position=item.start,
                                                                extent=item.covered()))
            elif isinstance(item, Stop):  # the Stop that ends every walk (also in reader.tail)
                return
            else:
                yield item


def _before_window(damage: Damage, window: _SeekWindow | None) -> bool:
    """Does a seeking dump's window leave out every offset lost in a damaged range?"""
    if window is None or damage.kind != RANGE:
        return False
    if not window.started and window.from_offset is not None and damage.next_good_offset is not None:
        return damage.next_good_offset <= window.from_offset
    return window.to_offset is not None and damage.last_good_offset is not None and \
        damage.last_good_offset >= window.to_offset


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


class _SeekWindow:
    """Which batches and records a seeking dump shows: from the first batch reaching ``from_offset`` (records
    from that offset) or the first batch whose max timestamp reaches ``from_time`` (records from its first
    record at or after that time, and everything after it), up to ``to_offset`` (records up to it)."""

    def __init__(self, opts: DumpOptions):
        self.from_offset = opts.from_offset
        self.to_offset = opts.to_offset
        self.from_time = opts.from_time
        self.to_time = opts.to_time
        self.started = self.from_offset is None and self.from_time is None
        self.first_batch = None  # the batch the window starts in (records before the start are hidden)
        self.first_record_shown = False  # in that batch, read in chunks: the start has been found

    def batch_verdict(self, batch, limit: int) -> str:
        if self.to_offset is not None and batch.last_offset > self.to_offset and \
                _first_offset(batch, limit) > self.to_offset:
            return "stop"
        if self.to_time is not None and _first_timestamp(batch) > self.to_time:
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

    def filter_records(self, batch, records, *, last_chunk: bool = True):
        """The records of one chunk of ``batch`` to show (a batch comes in one or more chunks, in order)."""
        lo = hi = None
        n = records.count
        offsets = records.offsets
        if batch is self.first_batch and not self.first_record_shown:
            if self.from_offset is not None:
                lo = next((i for i in range(n) if offsets[i] >= self.from_offset), n)
            elif self.from_time is not None:
                times = records.timestamps
                # no record at or after the time in a whole batch (its max timestamp says there is): show it all
                lo = next((i for i in range(n) if times[i] >= self.from_time), 0 if last_chunk else n)
            self.first_record_shown = lo < n
        if self.to_offset is not None:
            hi = next((i for i in range(n) if offsets[i] > self.to_offset), n)
        if lo is None and hi is None:
            return records
        lo = lo or 0
        hi = n if hi is None else hi
        if lo == 0 and hi == n:
            return records
        return records.slice(lo, hi)


def _first_timestamp(batch) -> int:
    """The timestamp a batch starts with: a v2 batch's base timestamp (unless it holds a delete horizon), else
    its max timestamp (a legacy entry's, or every record's under LogAppendTime)."""
    if batch.magic >= 2 and batch.delete_horizon_ms is None and int(batch.timestamp_type) == 0:
        return batch.base_timestamp
    return batch.max_timestamp


def _first_offset(batch, limit: int) -> int:
    return batch.base_offset  # decompresses a legacy wrapper; one that cannot be read gives its own offset


def _display_path(path: str) -> str:
    """Java's File.toString: the path as given, without a trailing separator (escaped where it is not
    printable: :func:`kdump.text.escape.printable_path`)."""
    from kdump.text.escape import printable_path
    return printable_path(path.rstrip("/") or path)


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
        if res.non_consecutive_count > len(pairs):
            lines.append(f"  ... {res.non_consecutive_count - len(pairs)} more non-consecutive offsets not listed "
                         f"({res.non_consecutive_count} in all)")
    return lines


def dump_work(entries: list[Entry]) -> Work[list[Entry]]:
    """The entries of a dump (:func:`entries_to_dump`, :meth:`Dumper.plan`) cut into its units of work, the
    entries of each directory (a partition), each weighed by its files' bytes: what :func:`dump_in_workers`
    balances and a progress bar's total."""
    from kdump.jobs import weigh
    units: list[list[Entry]] = []
    for entry in entries:
        if units and os.path.dirname(units[-1][-1].path) == os.path.dirname(entry.path):
            units[-1].append(entry)
        else:
            units.append([entry])
    return weigh(units, lambda unit: [e.path for e in unit])


def dump_in_workers(dumper: Dumper, paths, jobs: int, worker_dumper: Callable, ui, *,
                    progress: Callable[[int], None] | None = None,
                    work: Work[list[Entry]] | None = None) -> list[FileResult]:
    """:meth:`Dumper.dump_paths`, the entries of each directory (a partition) in one of ``jobs`` forked workers
    (:func:`kdump.jobs.ordered_map`): each dumps them with ``worker_dumper(out, sink)`` (a Dumper like
    ``dumper`` writing to ``out``, a file of the worker's own, and calling ``sink`` where ``dumper`` calls ``ui``),
    and the parent writes the files in order beneath ``dumper.renderer.out`` and makes ``sink``'s calls on ``ui``:
    the same output and messages as one process (each stream; their interleaving is by partition). One process
    where a fork is not safe, or for a terminal (whose renderer differs from a file's). ``progress(bytes)``: the
    workers' batches as they show them (``worker_dumper(out, sink, progress)`` wraps its renderer in a
    :class:`kdump.render.protocol.CountingRenderer`; in one process, ``dumper``'s own counts them). ``work``: the
    :func:`dump_work` of the same entries, when the caller made it once already (for its progress bar)."""
    from kdump.jobs import can_fork, ordered_results
    out = dumper.renderer.out
    if jobs <= 1 or not can_fork() or out.isatty() or getattr(out, "buffer", None) is None:
        return dumper.dump_paths(paths)
    entries = dumper.plan(paths)
    if work is None:
        work = dump_work(entries)
    units = work.units
    if len(units) <= 1:
        for entry in entries:
            dumper.dump_entry(entry)
        return dumper.results
    next_bases = dumper.next_bases

    def dump_unit(i: int, *, progress=None):  # in a forked worker: the closure is not pickled
        import tempfile
        fd, path = tempfile.mkstemp(prefix=".kdump-dump.")
        sink = _Calls()
        with open(fd, "w", encoding=out.encoding, errors=out.errors) as own:
            worker = worker_dumper(own, sink, progress)  # (progress: through the worker's pipe as it goes)
            worker.next_bases = next_bases
            for entry in units[i]:
                worker.dump_entry(entry)
        return (path, sink.calls, worker.results, worker.index_reports, worker.passed_over, worker.unreadable,
                worker.outside_window)

    # each partition written out as soon as it and those before it are done, while the workers dump the next
    # (not all at the end: that was serial time, and every partition's file on disk at once)
    dumped = ordered_results(dump_unit, [(i,) for i in range(len(units))], jobs, sizes=work.sizes, progress=progress)
    try:
        for path, calls, results, index_reports, passed_over, unreadable, outside in dumped:
            try:
                _copy_into(out, path)
            finally:
                os.unlink(path)
            for name, args, kwargs in calls:
                getattr(ui, name)(*args, **kwargs)
            dumper.results.extend(results)
            dumper.passed_over.extend(passed_over)
            dumper.outside_window.extend(outside)
            dumper.unreadable |= unreadable
            for name, found in vars(index_reports).items():
                getattr(dumper.index_reports, name).update(found)
    finally:
        dumped.close()  # (an error writing out: the workers still running are ended)
    return dumper.results


def _copy_into(out, path: str) -> None:
    """The bytes of the file at ``path`` written beneath the text stream ``out``: by the kernel (``sendfile``) where
    ``out`` is a descriptor it writes to, else (or on any error: the buffered write then says it as kdump's
    output errors are said) through ``out``'s buffer."""
    out.flush()
    with open(path, "rb") as own:
        size, sent = os.fstat(own.fileno()).st_size, 0
        try:
            target = out.fileno()
            while sent < size and (n := os.sendfile(target, own.fileno(), sent, size - sent)):
                sent += n
        except (OSError, ValueError, AttributeError):
            pass
        own.seek(sent)
        while chunk := own.read(1 << 20):
            out.buffer.write(chunk)


class _Calls:
    """Records the calls made on it (``sink.problem(...)``), for :func:`dump_in_workers` to make them again."""

    def __init__(self):
        self.calls: list[tuple[str, tuple, dict]] = []

    def __getattr__(self, name: str):
        def record(*args, **kwargs):
            self.calls.append((name, args, kwargs))
        return record
