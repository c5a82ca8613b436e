"""``kdump index rebuild``'s text for people: each segment's rebuilt indexes
(:class:`kdump.index.rebuild.RebuildOutcome`) and, per path, how much was already in place."""
from __future__ import annotations

from collections.abc import Iterator

from kdump.render.words import count


def outcome_doc(o) -> dict:
    """A segment's outcome for programs."""
    rec = o.recovery
    return {"path": rec.log_path, "batches": rec.batches,
            "offsetIndexEntries": rec.offset_entry_count,
            "timeIndexEntries": rec.time_entry_count,
            "abortedTransactions": len(rec.aborted), "written": o.written, "unchanged": o.unchanged,
            "kept": o.kept, "backups": o.backups,
            "truncatedBytes": rec.truncated_bytes if rec.stop_code is not None else 0}


def outcome_lines(o) -> Iterator[str]:
    """A segment's outcome for people: its counts, and each file written, left unchanged or kept."""
    rec = o.recovery
    n_off = rec.offset_entry_count
    n_time = rec.time_entry_count
    yield (f"{rec.log_path}: {count(rec.batches, 'batch')}, {count(n_off, 'offset index entry')}, "
           f"{count(n_time, 'time index entry')}, {count(len(rec.aborted), 'aborted transaction')}")
    for path in o.written:
        yield f"  wrote {path}"
    for path in o.unchanged:
        yield f"  unchanged {path} (already what recovery writes; not rewritten)"
    for path in o.kept:
        yield f"  kept {path} (differs from what recovery writes, but checks clean against the log)"
    for path in o.backups:
        yield f"  kept the old file as {path}"


def done_line(path: str, outcomes: list) -> str | None:
    """How much of ``path`` was already indexed, when some was: a rerun after a kill finishes the job, and a rerun
    on a finished partition says there was nothing to do."""
    done = sum(1 for o in outcomes if not o.written)
    if not done:
        return None
    if done == len(outcomes):
        return (f"{path}: nothing to do: the indexes of {_segments(done)} are already in place (what Kafka's "
                "recovery writes, or files that check clean against the log)")
    return f"{path}: {_segments(done)} already indexed, {_segments(len(outcomes) - done)} rebuilt"


def _segments(n: int) -> str:
    return count(n, "segment")
