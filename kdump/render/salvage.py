"""``kdump salvage``'s text for people: per segment what was kept and each byte range left out."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from kdump.render.words import count


def _offsets(first, last) -> str:
    if first is None and last is None:
        return ""
    if last is None:
        return f", offsets from {first}"
    if first is None or first == last:
        return f", offset {last}"
    return f", offsets {first}-{last}"


def salvage_lines(r, plain: Callable[[str], str] = str) -> Iterator[str]:
    """A segment's salvage (:class:`kdump.convert.salvage.SalvageResult`): what was kept, each range dropped or
    skipped and why (``plain``: the reason without terminal styling), the indexes written, notes, and what the
    verification of the output found."""
    yield (f"{r.source} -> {r.output}: kept {count(r.kept_batches, 'batch')}, {count(r.kept_records, 'record')}, "
           f"{r.kept_bytes} of {count(r.input_bytes, 'byte')}{_offsets(r.first_offset, r.last_offset)}")
    for d in r.dropped:
        what = "claimed by its damaged header" if d.claimed else "lost"
        offsets = _offsets(d.first_offset, d.last_offset)
        records = f", {count(d.records, 'record')}" if d.records is not None else ""
        note = f" ({what}{offsets}{records})" if offsets or records else ""
        kind = "dropped" if d.data else "skipped (no data)"
        yield f"  {kind} bytes {d.start}-{d.end - 1} [{d.code}]{note}: {plain(d.reason)}"
    if r.indexes:
        yield f"  indexes: {', '.join(os.path.basename(p) for p in r.indexes)}"
    for note in r.notes:
        yield f"  note: {note}"
    yield f"  {r.verified}"
