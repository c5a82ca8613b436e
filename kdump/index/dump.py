"""``kdump dump`` for the companion files of a segment: DumpLogSegments' lines where Kafka has them
(spec §2.5-§2.9), a readable form for the text checkpoints it cannot read, and the stderr reports
(index mismatches, time-index errors) that Kafka prints after all files (§2.7).

Where Kafka's tool dies kdump goes on: an index entry pointing past the end of the log or at no batch is
printed and reported (file, byte position of the entry, what is wrong); a ``.timeindex`` without its
``.index`` is verified by walking the log from its start (Kafka looks entries up in an empty index, i.e. from
position 0, then dies closing the index it had to create, losing its report); an index without its ``.log``
is printed unverified. Every such case is on stderr as ``kdump: FILE: ...``.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from kdump.errors import FormatError
from kdump.format.index_layout import OFFSET_INDEX_ENTRY_SIZE as OFFSET_ENTRY
from kdump.format.index_layout import TIME_INDEX_ENTRY_SIZE as TIME_ENTRY
from kdump.index.reports import IndexReports
from kdump.read import checkpoints as cps
from kdump.read.locate import ForwardWalk
from kdump.read.logdir import FileKind, sibling
from kdump.read.segment import Stop, base_offset_from_name, header_at, read_batch_at
from kdump.read.time_index import max_record_timestamp


@dataclass
class CompanionOptions:
    verify_index_only: bool = False
    index_sanity_check: bool = False
    compat: str = "java"
    max_decompressed_bytes: int = 256 * 1024 * 1024


@dataclass(frozen=True)
class Empty:
    """An index file with no entries (Kafka's tool prints ``<path> is empty.``)."""

    path: str
    kind: str


@dataclass(frozen=True)
class SanityPassed:
    """An index file that passed Kafka's sanity check (``--index-sanity-check``)."""

    path: str
    kind: str


class CompanionDumper:
    """Dumps one companion file. ``emit(item)`` hands each thing found to the renderer
    (:mod:`kdump.render.companions` words it): an index entry (``OffsetPosition``, ``TimestampOffset``), an
    ``AbortedTxn``, a ``ProducerEntry``, a parsed ``CheckpointFile``, :class:`Empty` or :class:`SanityPassed`;
    ``error(FormatError)`` reports damage (exit 1); ``missing(path, message)`` a missing or
    unreadable file the dump needed (exit 2); ``note(message)`` something worth knowing (no exit change)."""

    def __init__(self, options: CompanionOptions, reports: IndexReports, *, emit: Callable, error: Callable,
                 missing: Callable, note: Callable):
        self.options = options
        self.reports = reports
        self.emit = emit
        self.error = error
        self.missing = missing
        self.note = note

    def dump(self, path: str, kind: str) -> None:
        if kind == "index":
            self.dump_index(path)
        elif kind == "timeindex":
            self.dump_time_index(path)
        elif kind == "txnindex":
            self.dump_txn_index(path)
        elif kind == "snapshot":
            self.dump_snapshot(path)
        else:
            self.dump_text_checkpoint(path)

    # --- helpers --------------------------------------------------------------------------------
    def _base(self, path: str) -> int | None:
        base = base_offset_from_name(path)
        if base is None:
            self.error(FormatError("file-name-invalid", "the file name does not start with the segment's base offset "
                                   "(<20 digits>.index), so its relative offsets cannot be resolved; not dumped"))
        return base

    def _open_log(self, path: str, what: str):
        """(fd, size) of the segment's .log beside ``path``, or (None, 0) after reporting it missing."""
        log_path = sibling(path, FileKind.LOG)
        try:
            fd = os.open(log_path, os.O_RDONLY)
        except OSError as e:
            self.missing(log_path, f"the segment {os.path.basename(log_path)} beside it "
                                   f"({e.strerror or e}); {what}")
            return None, 0
        return fd, os.fstat(fd).st_size

    # --- .index ---------------------------------------------------------------------------------
    def dump_index(self, path: str) -> None:
        from kdump.read.offset_index import OffsetIndex

        base = self._base(path)
        if base is None:
            return
        opts = self.options
        with OffsetIndex(path, base_offset=base) as idx:
            if idx.entries == 0:
                self.emit(Empty(path, "index"))
                return
            if opts.index_sanity_check:
                self._sanity(path, "index", idx.sanity_problems())
                return
            log_fd, log_size = self._open_log(path, "index entries printed without checking them")
            try:
                mismatches = self.reports.offset_mismatches
                key = os.path.abspath(path)
                for i, entry in idx.iter_entries():
                    if i > 0 and entry.offset == base:
                        break  # DumpLogSegments: the start of a preallocated zero tail
                    if log_fd is not None:
                        h = header_at(log_fd, entry.position, log_size)
                        if isinstance(h, Stop):
                            self.error(FormatError(
                                "index-position-invalid",
                                f"entry {i} (offset {entry.offset}, position {entry.position}) points at no batch of "
                                f"the log: {h.message} (Kafka's tool dies here)", position=i * OFFSET_ENTRY))
                        elif h.last_offset != entry.offset:
                            mismatches.setdefault(key, []).append((entry.offset, h.last_offset))
                    if not opts.verify_index_only:
                        self.emit(entry)
            finally:
                if log_fd is not None:
                    os.close(log_fd)

    def _sanity(self, path: str, kind: str, problems: list[str]) -> None:
        if problems:
            for p in problems:
                self.error(FormatError(f"{kind}-sanity", f"fails Kafka's sanity check: {p}"))
            return
        self.emit(SanityPassed(path, kind))

    # --- .timeindex -----------------------------------------------------------------------------
    def dump_time_index(self, path: str) -> None:
        from kdump.read.offset_index import OffsetIndex
        from kdump.read.time_index import TimeIndex

        base = self._base(path)
        if base is None:
            return
        opts = self.options
        with TimeIndex(path, base_offset=base) as tidx:
            if opts.index_sanity_check:
                self._sanity(path, "timeindex", tidx.sanity_problems())
                return
            log_fd, log_size = self._open_log(path, "time index entries printed without checking them")
            index_path = sibling(path, FileKind.INDEX)
            oidx = None
            if log_fd is not None and tidx.entries:
                try:
                    oidx = OffsetIndex(index_path, base_offset=base)
                except OSError as e:
                    self.note(f"no offset index {os.path.basename(index_path)} beside it ({e.strerror or e}): "
                              "entries are located by walking the log from its start (Kafka's tool dies here)")
            try:
                self._time_entries(path, base, tidx, oidx, log_fd, log_size)
            finally:
                if oidx is not None:
                    oidx.close()
                if log_fd is not None:
                    os.close(log_fd)

    def _time_entries(self, path, base, tidx, oidx, log_fd, log_size) -> None:
        opts = self.options
        key = os.path.abspath(path)
        reports = self.reports
        prev_ts = -1
        walk = ForwardWalk(log_fd, log_size) if log_fd is not None else None
        for i, entry in tidx.iter_entries():
            if i > 0 and entry.offset == base:
                break
            if walk is not None:
                # Kafka's tool trusts its index: where OffsetIndex.lookup says, unverified (a bad entry is reported)
                start = oidx.lookup(entry.offset).position if oidx is not None else 0
                if start > log_size:
                    self.error(FormatError(
                        "timeindex-lookup-invalid",
                        f"entry {i} (offset {entry.offset}): the offset index gives position {start}, past the end of "
                        f"the log ({log_size} bytes); walking from the start instead (Kafka's tool dies here)",
                        position=i * TIME_ENTRY))
                    start = 0
                found = walk.reaching(entry.offset, start)
                if isinstance(found, Stop):
                    if found.kind == "corrupt":
                        self.error(FormatError("timeindex-walk-stopped",
                                               f"entry {i} (offset {entry.offset}): the log walk stopped at byte "
                                               f"{found.position}: {found.message}", position=i * TIME_ENTRY))
                    else:
                        reports.time_not_found.setdefault(key, []).append((entry.offset, -1))
                elif found.last_offset != entry.offset:
                    reports.time_not_found.setdefault(key, []).append((entry.offset, found.last_offset))
                else:
                    try:
                        log_ts = max_record_timestamp(read_batch_at(log_fd, found), opts.max_decompressed_bytes)
                    except FormatError as e:
                        self.error(FormatError(e.code, f"entry {i} (offset {entry.offset}): the batch at byte "
                                               f"{found.position} of the log cannot be read: {e.message}",
                                               position=i * TIME_ENTRY))
                    else:
                        if log_ts != entry.timestamp:
                            reports.time_mismatches.setdefault(key, []).append((entry.timestamp, log_ts))
                        if prev_ts >= entry.timestamp:
                            reports.time_out_of_order.setdefault(key, []).append((entry.timestamp, prev_ts))
            if not opts.verify_index_only:
                self.emit(entry)
            prev_ts = entry.timestamp

    # --- .txnindex --------------------------------------------------------------------------------
    def dump_txn_index(self, path: str) -> None:
        from kdump.read.txn_index import CURRENT_VERSION, TxnIndexFile

        with TxnIndexFile(path) as f:
            for pos, txn in f.entries():
                if txn.version > CURRENT_VERSION:
                    self.error(FormatError("txnindex-version",
                                           f"Unexpected aborted transaction version {txn.version} in transaction index "
                                           f"{os.path.abspath(path)}, current version is {CURRENT_VERSION} (Kafka's "
                                           "tool dies here, printing none of the entries)", position=pos))
                    return
                self.emit(txn)

    # --- .snapshot ----------------------------------------------------------------------------------
    def dump_snapshot(self, path: str) -> None:
        from kdump.read.snapshot import read_snapshot

        snap = read_snapshot(path)
        if snap.error is not None:
            # Kafka prints the CorruptSnapshotException message on stderr and goes on with the next file.
            assert snap.error_code is not None  # read_snapshot sets both
            self.error(FormatError(snap.error_code, snap.error, position=snap.error_position))
            return
        for e in snap.entries:
            self.emit(e)

    # --- text checkpoints ---------------------------------------------------------------------------
    def dump_text_checkpoint(self, path: str) -> None:
        try:
            cp = cps.parse_any(path)
        except ValueError as e:
            self.error(FormatError("checkpoint-too-large", str(e)))
            return
        self.emit(cp)
        for p in cp.problems:
            where = f"line {p.line}: " if p.line is not None else ""
            self.error(FormatError(p.code, f"{where}{p.message}", position=p.position))
