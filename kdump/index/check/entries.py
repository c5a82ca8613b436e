"""What the checks of the two fixed-entry indexes (``.index``, ``.timeindex``) share: opening the file with damage
as a finding, the preallocated zero tail, the comparison with what Kafka's recovery would write."""
from __future__ import annotations

from kdump.errors import FormatError
from kdump.index.check.context import Context, Segment
from kdump.index.check.report import Report
from kdump.report.findings import FileReport

# Entries checked against the log per index file: 4x what Kafka's default segment.index.bytes (10 MiB) holds.
# Bounds memory (the deep checks keep entries in a list); larger files are checked up to here, and said so.
MAX_CHECK_ENTRIES = 4 * 1310720


def check_index_file(ctx: Context, path: str, kind: str, index_class, check, base: int,
                     seg: Segment | None) -> FileReport:
    """Open an offset or time index, run ``check`` on it; damage becomes a finding, not an exception."""
    r = Report(path, kind, log_damage=None if seg is None else lambda: ctx.log_damage(seg))
    try:
        idx = index_class(path, base_offset=base)
    except OSError as e:
        r.report.io_error = f"cannot read: {e.strerror or e}"
        return r.report
    with idx:
        r.report.bytes = idx.length
        try:
            check(ctx, idx, r, base, seg)
        except FormatError as e:
            r.add(e.code, e.message, position=e.position)
    return r.finish()


def zero_tail(idx, r: Report, seg: Segment | None, kind: str) -> int:
    """Number of entries to check; reports a preallocated zero tail (and a file too large to check whole)."""
    n = _zero_tail_count(idx, r, seg, kind)
    if n > MAX_CHECK_ENTRIES:
        r.add(f"{kind}-too-large",
              f"{n} entries, more than kdump checks against the log ({MAX_CHECK_ENTRIES}, four times what Kafka's "
              "default segment.index.bytes holds); the first ones were checked", position=MAX_CHECK_ENTRIES
              * idx.entry_size)
        return MAX_CHECK_ENTRIES
    return n


def _zero_tail_count(idx, r: Report, seg: Segment | None, kind: str) -> int:
    valid = idx.zero_tail_start()
    if valid < idx.entries:
        active = seg is not None and seg.is_last
        extra = ""
        if kind == "timeindex":
            extra = (" Kafka's index sanity check (DumpLogSegments) fails on it (the zero timestamp of the last "
                     "slot).")
        r.add(f"{kind}-zero-tail",
              f"{idx.entries - valid} preallocated zero entries "
              + (f"after the {valid} real ones " if valid else "and no real one yet ")
              + f"({(idx.entries - valid) * idx.entry_size} bytes): the segment was "
              + ("active, or the broker did not shut down cleanly" if active else
                 "not closed cleanly (a rolled segment's index is trimmed); Kafka's recovery trims it") + "."
              + extra, position=valid * idx.entry_size, length=(idx.entries - valid) * idx.entry_size,
              also=not active)
        return valid
    return idx.entries


def compare_recovery(ctx: Context, idx, n: int, r: Report, seg: Segment, kind: str) -> None:
    """Deep: the first ``n`` entries of ``idx`` against what Kafka's recovery of ``seg`` would write (info)."""
    if seg.recovery is None:
        if seg.recovery_error:
            r.add(f"{kind}-recovery-fails", f"Kafka's recovery of this segment would fail: "
                  f"{seg.recovery_error}")
        return
    rec = seg.recovery
    ours = [e for _, e in idx.iter_entries(0, n)]
    theirs = rec.offset_entries() if kind == "index" else rec.time_entries()
    if ours == theirs:
        return
    k = next((j for j, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), min(len(ours), len(theirs)))
    def shown(entries) -> str:
        if k >= len(entries):
            return "nothing"
        if kind == "index":
            return str(tuple(entries[k]))
        return f"(timestamp {ctx.when(entries[k].timestamp)}, offset {entries[k].offset})"
    at = f"first difference at entry {k}: here {shown(ours)}, recovery {shown(theirs)}"
    r.add(f"{kind}-differs-from-recovery",
          f"{len(ours)} entries, Kafka's recovery (index.interval.bytes={rec.index_interval_bytes}) would write "
          f"{len(theirs)}; {at}. Normal for indexes written at append time by brokers before Kafka 4.0, by "
          "followers, or across broker restarts (docs/index.md)", position=k * idx.entry_size)
