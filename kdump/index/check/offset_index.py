"""Checks of an offset index (``.index``): Kafka's sanity check, entries increasing and not below the base offset,
each entry pointing at a batch that starts at or before its offset and ends at it (deep: on the chain of batches
walked from the start of the log, and compared with what recovery would write)."""
from __future__ import annotations

import os

from kdump.format.index_layout import OFFSET_INDEX_ENTRY_SIZE as OFFSET_ENTRY
from kdump.index.check.context import Context, Segment, log_name
from kdump.index.check.entries import check_index_file, compare_recovery, zero_tail
from kdump.index.check.report import Report
from kdump.read.segment import Stop, first_offset, header_at, walk_headers
from kdump.report.findings import FileReport


def check_offset_index(ctx: Context, path: str, base: int, seg: Segment | None) -> FileReport:
    from kdump.read.offset_index import OffsetIndex
    return check_index_file(ctx, path, "index", OffsetIndex, _offset_index, base, seg)


def _offset_index(ctx: Context, idx, r: Report, base: int, seg: Segment | None) -> None:
    if idx.partial_bytes:
        r.add("index-length-invalid",
              f"{idx.partial_bytes} bytes at the end are not a whole {OFFSET_ENTRY}-byte entry (a torn write); "
              f"Kafka's sanity check: Index file {os.path.abspath(idx.path)} is corrupt, found {idx.length} "
              f"bytes which is neither positive nor a multiple of {OFFSET_ENTRY}",
              position=idx.entries * OFFSET_ENTRY, length=idx.partial_bytes)
    n = zero_tail(idx, r, seg, "index")
    last = idx.entry(n - 1).offset if n else base
    if n and last < base:
        r.add("index-last-offset-below-base",
              f"Kafka's sanity check: Corrupt index found, index file {os.path.abspath(idx.path)} "
              f"has non-zero size but the last offset is {last} which is less than the base offset {base}",
              position=(n - 1) * OFFSET_ENTRY)
    if seg is None:
        r.add("index-log-missing", f"no segment {log_name(idx.path)} beside this index (an orphan: Kafka "
              "deletes it at startup)")
    log_size = ctx.log_size(seg)
    fd = None
    if seg is not None:
        try:
            fd = os.open(seg.log_path, os.O_RDONLY)
        except OSError as err:
            r.add("index-log-unreadable", f"cannot read {seg.log_path}: {err.strerror or err}")
        else:
            if log_size is None:  # the size could not be read before the open
                log_size = os.fstat(fd).st_size
    entries = []  # (slot, offset, position) of plausible entries, for the deep chain check
    try:
        prev = None
        for i, e in idx.iter_entries(0, n):
            where = dict(position=i * OFFSET_ENTRY, first_offset=e.offset)
            if e.offset < base:
                r.add("index-offset-below-base",
                      f"entry {i}: offset {e.offset} is below the base offset {base} (relative offset "
                      f"{e.offset - base})", **where)
            if prev is not None:
                if e.offset <= prev.offset:
                    r.add("index-offset-not-increasing",
                          f"entry {i}: offset {e.offset} is not above the previous entry's {prev.offset} "
                          "(binary search over the index gives wrong answers)", **where)
                if e.position <= prev.position:
                    r.add("index-position-not-increasing",
                          f"entry {i}: position {e.position} is not above the previous entry's {prev.position}",
                          **where)
            prev = e
            if fd is None or log_size is None:
                continue
            if e.position >= log_size:
                r.add("index-position-past-end",
                      f"entry {i}: offset {e.offset} points at position {e.position}, at or past the end of the "
                      f"log ({log_size} bytes)", **where)
                continue
            h = header_at(fd, e.position, log_size)
            if isinstance(h, Stop):
                r.add("index-position-not-batch",
                      f"entry {i}: offset {e.offset} points at position {e.position}, where no batch starts: "
                      f"{h.message}", log_position=e.position, **where)
                continue
            first = h.base_offset
            if first is None and h.last_offset > e.offset:
                first = first_offset(fd, h)
            if first is not None and first > e.offset:
                r.add("index-entry-skips-offsets",
                      f"entry {i}: offset {e.offset} points at a batch starting at offset {first}: a lookup of "
                      f"offsets {e.offset}-{first - 1} would start after them", **where)
            elif h.last_offset < e.offset and e.offset >= ctx.offset_bound(seg):
                r.add("index-offset-past-end",
                      f"entry {i}: offset {e.offset} lies past the segment's last offset (below "
                      f"{ctx.offset_bound(seg)}): no batch of this segment holds it, so a lookup of the offsets "
                      f"after {h.last_offset} starts at the wrong place", **where)
            elif h.last_offset != e.offset:
                why = (" (the entry names the last offset of a later batch: one entry for an append of several "
                       "batches, as followers before Kafka 4.0 wrote them)" if h.last_offset < e.offset else
                       " (the offset lies inside the batch)")
                r.add("index-offset-mismatch",
                      f"entry {i}: offset {e.offset}, but the batch at position {e.position} ends at offset "
                      f"{h.last_offset}{why}; DumpLogSegments reports this as a mismatch", **where)
            entries.append((i, e.offset, e.position))
        if fd is not None and log_size is not None and ctx.deep and entries:
            _offset_chain(fd, log_size, entries, r)
    finally:
        if fd is not None:
            os.close(fd)
    if ctx.deep and seg is not None:
        compare_recovery(ctx, idx, n, r, seg, "index")


def _offset_chain(fd: int, log_size: int, entries: list, r: Report) -> None:
    """Deep: every entry's position must be a batch boundary of the walk from the start of the log."""
    wanted = sorted(entries, key=lambda t: t[2])
    k = 0
    for h in walk_headers(fd, 0, log_size):
        pos = h.position
        while k < len(wanted) and wanted[k][2] < pos:
            i, off, p = wanted[k]
            r.add("index-position-not-batch",
                  f"entry {i}: position {p} is inside a batch of the log (not a batch boundary)",
                  position=i * OFFSET_ENTRY, first_offset=off)
            k += 1
        if isinstance(h, Stop):
            break
        while k < len(wanted) and wanted[k][2] == pos:
            k += 1
    for i, off, p in wanted[k:]:
        r.add("index-position-beyond-valid",
              f"entry {i}: position {p} lies after where the log stops being readable (Kafka's recovery would "
              "drop it)", position=i * OFFSET_ENTRY, first_offset=off)
