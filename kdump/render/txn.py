"""``kdump txn``'s text for people: per partition its counts, then each producer's transactions, the files that
disagree and the notes."""
from __future__ import annotations

import os
from collections.abc import Iterator

from kdump.render.words import count


def partition_lines(r, open_only: bool, when) -> Iterator[str]:
    """A partition's transactions (:class:`kdump.txn.PartitionTxns`), per producer; ``open_only``: only
    those still open (the counts stay complete); ``when`` prints a time (:func:`kdump.text.times.time_formatter`)."""
    from kdump.txn import OPEN, format_ms
    newest = f", newest timestamp {when(r.newest_timestamp)}" if r.newest_timestamp is not None else ""
    yield (f"{r.label} {r.key}: {count(r.segments, 'segment')}, log end offset {r.log_end_offset}, last stable "
           f"offset {r.last_stable_offset}{newest}; {count(len(r.transactions), 'transaction')}: "
           f"{r.count('COMMIT')} committed, "
           f"{r.count('ABORT')} aborted, {r.count(OPEN)} open, {len(r.hanging)} hanging")
    by_producer: dict = {}
    for t in r.transactions:
        if not open_only or t.outcome == OPEN:
            by_producer.setdefault((t.producer_id, t.producer_epoch), []).append(t)
    for (pid, epoch), txns in sorted(by_producer.items()):
        yield f"  producer {pid} epoch {epoch}:"
        for t in txns:
            began = f", first timestamp {when(t.start_time)}" if t.start_time is not None else ""
            age = f", age {format_ms(t.age_ms)}" if t.age_ms is not None else ""
            end = f" (marker at {t.marker_offset})" if t.marker_offset is not None else ""
            flag = f"  HANGING: {'; '.join(t.hanging)}" if t.hanging else ""
            yield (f"    offsets {t.first_offset}-{t.last_offset} {t.outcome}{end}, {count(t.records, 'record')}"
                   f"{began}{age}{flag}")
    for d in r.disagreements:
        yield f"  DISAGREES {os.path.basename(d.path)}: {d.message}"
    for n in r.notes:
        where = "" if n.position is None else f"at byte {n.position}: "
        yield f"  note: {os.path.basename(n.path)}: {where}{n.message}"
    if r.errors:
        yield f"  the transactions are of what could be read: {count(len(r.errors), 'error')} on stderr"
