"""``kdump convert``'s text for people: each converted segment (:class:`kdump.convert.ConvertResult`) and each
``--dry-run`` measurement, as lines (the command writes them, escaped on a terminal)."""
from __future__ import annotations

import os
from collections.abc import Iterator

from kdump.format.names import CODEC_NAMES
from kdump.render.words import count


def result_lines(result, hinted) -> Iterator[str]:
    """A converted segment: what went in and came out, what was dropped, verified and indexed (``hinted(code,
    note)``: a note with the command line's hint for its code)."""
    s = result.stats
    magics = "/".join(str(m) for m in sorted(s.source_magics)) or "-"
    yield f"converted {result.source} (magic {magics}) -> {result.output} (magic {s.to_magic})"
    yield (f"  in:  {count(s.source_batches, 'batch', grouped=True)}, {count(s.source_records, 'record', grouped=True)}"
           f", {count(s.source_bytes, 'byte', grouped=True)}")
    yield (f"  out: {count(s.output_batches, 'batch', grouped=True)}, "
           f"{count(s.output_records, 'record', grouped=True)}, {count(s.output_bytes, 'byte', grouped=True)} "
           f"({count(s.copied_batches, 'source batch', grouped=True)} copied as they were, {s.converted_batches:,} "
           "re-encoded)")
    for (a, b), n in sorted(s.recompressed.items()):
        yield f"  recompressed: {count(n, f'{CODEC_NAMES[a]} batch', grouped=True)} written as {CODEC_NAMES[b]}"
    yield f"  dropped: {', '.join(s.losses.lines())}" if s.losses else "  nothing dropped"
    for note in s.notes:
        yield f"  note: {hinted(getattr(note, 'code', None), note)}"
    for v in result.verified:
        yield f"  verified: {v}"
    if result.indexes is not None:
        if result.indexes.rebuilt:
            files = ", ".join(os.path.basename(f) for f in result.indexes.files) or "done"
            yield f"  indexes rebuilt: {files}"
        elif not result.indexes.problem:  # (a problem is said on stderr)
            yield f"  note: {result.indexes.note}"


def estimate_lines(path, size: int, estimates, magics, codecs) -> Iterator[str]:
    """``--dry-run``: a segment's size in each magic (rows) and codec (columns), what each magic drops, and why a
    cell was refused."""
    labels = ["keep" if c is None else CODEC_NAMES[c] for c in codecs]
    yield f"{path}: {count(size, 'byte', grouped=True)} now; size in each format (nothing written):"
    yield "           " + "".join(f"{label:>13}" for label in labels)
    by_magic = {m: [e for e in estimates if e.to_magic == m] for m in magics}
    refusals = []
    for m in magics:
        cells = []
        for e in by_magic[m]:
            if e.refused:
                cells.append(f"{'refused':>13}")
                if e.refused not in refusals:
                    refusals.append(e.refused)
            else:
                cells.append(f"{e.bytes:>13,}")
        yield f"  magic {m}  " + "".join(cells)
    for m in magics:
        done = [e for e in by_magic[m] if not e.refused]
        if done:
            losses = done[0].stats.losses
            yield f"  magic {m} drops: {', '.join(losses.lines())}" if losses else f"  magic {m} drops nothing"
    for reason in refusals:
        yield f"  refused: {reason}"
