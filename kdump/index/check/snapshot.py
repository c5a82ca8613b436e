"""Checks of a producer snapshot (``.snapshot``): version and CRC (the reader's), its entries against the
snapshot's offset and the log end offset."""
from __future__ import annotations

from kdump.index.check.context import Context
from kdump.index.check.report import Report
from kdump.report.findings import FileReport


def check_snapshot(ctx: Context, path: str, offset: int) -> FileReport:
    from kdump.read.snapshot import read_snapshot

    r = Report(path, "snapshot")
    try:
        snap = read_snapshot(path)
    except OSError as err:
        r.report.io_error = f"cannot read: {err.strerror or err}"
        return r.report
    r.report.bytes = snap.size
    if snap.error is not None:
        assert snap.error_code is not None  # read_snapshot sets both
        r.add(snap.error_code, snap.error + " (Kafka deletes the snapshot and rebuilds producer state "
              "from the log)", position=snap.error_position)
        return r.finish()
    if snap.trailing_bytes:
        r.add("snapshot-trailing-bytes",
              f"{snap.trailing_bytes} bytes after the {len(snap.entries)} entries (Kafka ignores them; the CRC "
              "covers them)", position=snap.size - snap.trailing_bytes, length=snap.trailing_bytes)
    seen: dict[int, int] = {}  # producer id -> position of its entry
    for e in snap.entries:
        where = dict(position=e.position)
        if e.producer_id in seen:
            r.add("snapshot-duplicate-producer",
                  f"producer {e.producer_id} appears twice (entries at bytes {seen[e.producer_id]} and "
                  f"{e.position}); Kafka keeps the last", **where)
        seen[e.producer_id] = e.position
        if e.last_offset >= offset:
            r.add("snapshot-entry-after-offset",
                  f"producer {e.producer_id}: last offset {e.last_offset} is not below the snapshot's offset "
                  f"{offset} (a snapshot covers the offsets before its name)", first_offset=e.last_offset, **where)
        if e.current_txn_first_offset >= offset:
            r.add("snapshot-entry-after-offset",
                  f"producer {e.producer_id}: open transaction from offset {e.current_txn_first_offset}, not "
                  f"below the snapshot's offset {offset}", first_offset=e.current_txn_first_offset, **where)
    if ctx.segments:
        end = ctx.log_end_offset()
        if end is not None and offset > end:
            r.add("snapshot-beyond-log-end",
                  f"the snapshot's offset {offset} is above the log end offset {end}: Kafka deletes it when "
                  "loading the log")
    return r.finish()
