"""Checks of a time index (``.timeindex``): Kafka's sanity check, timestamps and offsets increasing, each entry's
offset where the offset index says with the batch's max timestamp (deep: the running maximum of the record
timestamps as recovery builds it, and compared with what recovery would write)."""
from __future__ import annotations

import os

from kdump.errors import FormatError
from kdump.format.index_layout import TIME_INDEX_ENTRY_SIZE as TIME_ENTRY
from kdump.index.check.context import Context, Segment, log_name
from kdump.index.check.entries import check_index_file, compare_recovery, zero_tail
from kdump.index.check.report import Report
from kdump.read.locate import SegmentLocator
from kdump.read.segment import BatchHeader, Stop, first_offset, read_batch_at, walk_headers
from kdump.read.time_index import max_record_timestamp
from kdump.report.findings import FileReport

_KAFKA_VERSIONS_RECORD_OFFSET = ("written by a broker that stored the offset of the record with the max timestamp "
                                 "instead of its batch's last offset (Kafka 3.6.2-3.7.0, KAFKA-16342, undone by "
                                 "KAFKA-16310); time lookups still find the right batch")


def check_time_index(ctx: Context, path: str, base: int, seg: Segment | None) -> FileReport:
    from kdump.read.time_index import TimeIndex
    return check_index_file(ctx, path, "timeindex", TimeIndex, _time_index, base, seg)


def _time_index(ctx: Context, tidx, r: Report, base: int, seg: Segment | None) -> None:
    abs_path = os.path.abspath(tidx.path)
    if tidx.partial_bytes:
        r.add("timeindex-length-invalid",
              f"{tidx.partial_bytes} bytes at the end are not a whole {TIME_ENTRY}-byte entry; Kafka's sanity "
              f"check: Time index file {abs_path} is corrupt, found {tidx.length} bytes which is neither "
              f"positive nor a multiple of {TIME_ENTRY}", position=tidx.entries * TIME_ENTRY,
              length=tidx.partial_bytes)
    n = zero_tail(tidx, r, seg, "timeindex")
    entries = [e for _, e in tidx.iter_entries(0, n)]
    if entries:
        first, last = entries[0], entries[-1]
        if last.timestamp < first.timestamp:
            r.add("timeindex-sanity-timestamp",
                  f"Kafka's sanity check: Corrupt time index found, time index file ({abs_path}) has non-zero size "
                  f"but the last timestamp is {last.timestamp} which is less than the first timestamp "
                  f"{first.timestamp}", position=(n - 1) * TIME_ENTRY)
        if last.offset < base:
            r.add("timeindex-last-offset-below-base",
                  f"Kafka's sanity check: Corrupt time index found, time index file ({abs_path}) has non-zero size "
                  f"but the last offset is {last.offset} which is less than the first offset {base}",
                  position=(n - 1) * TIME_ENTRY)
    prev = None
    for i, e in enumerate(entries):
        where = dict(position=i * TIME_ENTRY, first_offset=e.offset)
        if e.offset < base:
            r.add("timeindex-offset-below-base", f"entry {i}: offset {e.offset} is below the base offset "
                  f"{base}", **where)
        if prev is not None:
            if e.timestamp < prev.timestamp:
                r.add("timeindex-timestamp-decreasing",
                      f"entry {i}: timestamp {ctx.when(e.timestamp)} is below the previous entry's "
                      f"{ctx.when(prev.timestamp)} (time lookups give wrong answers)", **where)
            elif e.timestamp == prev.timestamp:
                r.add("timeindex-timestamp-repeated",
                      f"entry {i}: timestamp {ctx.when(e.timestamp)} repeats the previous entry's (Kafka only "
                      "appends a larger one)", **where)
            if e.offset < prev.offset:
                r.add("timeindex-offset-decreasing",
                      f"entry {i}: offset {e.offset} is below the previous entry's {prev.offset}", **where)
            elif e.offset == prev.offset:
                r.add("timeindex-offset-repeated",
                      f"entry {i}: offset {e.offset} repeats the previous entry's", **where)
        prev = e
    if seg is None:
        r.add("timeindex-log-missing",
              f"no segment {log_name(tidx.path)} beside this time index (an orphan)")
        return
    if not entries:
        if ctx.deep and seg.recovery is not None and seg.recovery.time_index:
            r.add("timeindex-empty",
                  "the time index is empty but the log has timestamps: time lookups fall back to the segment "
                  "start (Kafka recreates an empty one when it is missing)", also=not seg.is_last)
        return
    _time_against_log(ctx, tidx, entries, r, base, seg)
    if ctx.deep:
        compare_recovery(ctx, tidx, n, r, seg, "timeindex")


def _time_against_log(ctx: Context, tidx, entries, r: Report, base: int, seg: Segment) -> None:
    log_size = ctx.log_size(seg)
    try:
        # Each offset-index entry is judged once, against its own offset; CRCs are the log checks' business.
        loc = SegmentLocator(seg.log_path, base_offset=base, verify_crc=False, strict_entries=True)
    except OSError as err:
        r.add("timeindex-log-unreadable", f"cannot read {seg.log_path}: {err.strerror or err}")
        return
    with loc:
        if log_size is None:  # the size could not be read before the open
            log_size = loc.size
        if ctx.deep:
            _time_deep(ctx, loc.fd, log_size, entries, r, seg)
            return
        for i, e in enumerate(entries):
            where = dict(position=i * TIME_ENTRY, first_offset=e.offset)
            start = loc.index_start(e.offset)
            if start is None:
                # After one misleading entry the index is not used again for this file (its own report says
                # what is wrong with it): findings about the time index must come from the log.
                loc.distrust_index()
                start = 0
            found = loc.walk.reaching(e.offset, start)
            if not isinstance(found, BatchHeader) and start:  # the index led past the batches: ask the log
                loc.distrust_index()
                found = loc.walk.reaching(e.offset, 0)
            _time_entry_vs_batch(ctx, loc.fd, i, e, found if isinstance(found, BatchHeader) else None, r, where,
                                      decode=False)


def _time_entry_vs_batch(ctx: Context, fd, i, e, found: BatchHeader | None, r: Report, where: dict, *,
                         decode: bool) -> None:
    if found is None:
        r.add("timeindex-offset-past-end",
              f"entry {i}: offset {e.offset} is beyond the last batch of the log", **where)
        return
    first = found.base_offset if found.base_offset is not None else first_offset(fd, found)
    if found.last_offset != e.offset:
        if first is not None and first <= e.offset and found.max_timestamp == e.timestamp:
            r.add("timeindex-record-offset",
                  f"entry {i}: offset {e.offset} lies inside the batch {first}-{found.last_offset} (at byte "
                  f"{found.position}) whose max timestamp it names: {_KAFKA_VERSIONS_RECORD_OFFSET}; "
                  "DumpLogSegments reports it as not found", **where)
        else:
            r.add("timeindex-offset-not-found",
                  f"entry {i}: no batch ends at offset {e.offset} (the next batch ends at {found.last_offset}, "
                  f"at byte {found.position})", **where)
        return
    ts = found.max_timestamp
    what = "max timestamp"
    if decode:
        try:
            ts = max_record_timestamp(read_batch_at(fd, found), 256 * 1024 * 1024)
            what = "largest record timestamp"
        except FormatError as err:
            r.add("timeindex-batch-unreadable",
                  f"entry {i}: the batch at byte {found.position} cannot be decoded: {err.message}", **where)
            return
    if ts != e.timestamp:
        r.add("timeindex-timestamp-mismatch",
              f"entry {i}: timestamp {ctx.when(e.timestamp)}, but the {what} of the batch ending at offset "
              f"{e.offset} (at byte {found.position}) is {ctx.when(ts)}", **where)


def _time_deep(ctx: Context, fd: int, log_size: int, entries, r: Report, seg: Segment) -> None:
    """One header walk: each entry against the running max timestamp, as recovery builds it."""
    k = 0
    running = -1
    for h in walk_headers(fd, 0, log_size):
        if isinstance(h, Stop):
            break
        before = running
        if h.max_timestamp > running:
            running = h.max_timestamp
        first = h.base_offset
        while k < len(entries) and entries[k].offset <= h.last_offset:
            e = entries[k]
            where = dict(position=k * TIME_ENTRY, first_offset=e.offset)
            if first is None:
                first = first_offset(fd, h)
            if first is not None and e.offset < first:
                r.add("timeindex-offset-not-found",
                      f"entry {k}: offset {e.offset} is not in the log (the next batch starts at {first})", **where)
            else:
                _time_entry_vs_batch(ctx, fd, k, e, h, r, where, decode=True)
                if running != e.timestamp:
                    r.add("timeindex-not-max-so-far",
                          f"entry {k}: timestamp {ctx.when(e.timestamp)}, but the largest batch timestamp up to "
                          f"offset {e.offset} is {ctx.when(running)}: a time lookup could skip records", **where)
                elif before >= e.timestamp:
                    r.add("timeindex-not-first-offset",
                          f"entry {k}: timestamp {ctx.when(e.timestamp)} was already reached before offset "
                          f"{e.offset}", **where)
            k += 1
    for j in range(k, len(entries)):
        r.add("timeindex-offset-past-end",
              f"entry {j}: offset {entries[j].offset} is beyond the last readable batch of the log",
              position=j * TIME_ENTRY, first_offset=entries[j].offset)
    if entries and running > entries[-1].timestamp:
        r.add("timeindex-incomplete",
              f"the last entry's timestamp {ctx.when(entries[-1].timestamp)} is below the segment's largest "
              f"batch timestamp {ctx.when(running)}: the segment was not closed cleanly (a clean close or "
              "recovery appends it)"
              + ("" if seg.is_last else "; a time lookup between the two skips this segment"), also=not seg.is_last)
