"""``kdump stats``' (and ``kdump spark stats``') text for people: a line of numbers per partition read, with its
OK/FAIL label and the record analysis beneath it, then the total (:class:`kdump.stats.counts.Summary`)."""
from __future__ import annotations

from collections import Counter

from kdump.render.words import count
from kdump.stats.counts import RecordStats, Stats, Summary


def names(summary: Summary) -> dict[str, str]:
    """What each partition is called in text: ``<topic>-<partition>``, or its directory where two partitions
    shown share that name (the same partition in two log directories)."""
    shown = summary.shown
    seen = Counter(p.name for p in shown)
    return {p.path: p.name if seen[p.name] == 1 else p.path for p in shown}


def render_text(summary: Summary, when=str) -> str:
    """``when`` prints the time range (:func:`kdump.text.times.time_formatter`). A line per partition read, with its
    label, then the total."""
    called = names(summary)
    lines = []
    for p in summary.shown:
        lines.append(f"{p.label} {called[p.path]}: {_numbers(p.stats, when)}")
        lines.extend("  " + line for line in _record_lines(p.records, p.stats))
    lines.append(f"total: {_numbers(summary.total, when, several=len(summary.partitions) > 1)}")
    lines.extend("  " + line for line in _record_lines(summary.total_records, summary.total))
    return "\n".join(lines)


def _numbers(s: Stats, when, several: bool = False) -> str:
    """One line of numbers; ``several``: a total of several partitions (no offset range)."""
    offsets = (f", offsets {s.first_offset}-{s.last_offset}" if s.first_offset is not None
               else "" if several else ", no offsets")
    times = (f", timestamps {when(s.min_timestamp)} to {when(s.max_timestamp)}" if s.min_timestamp is not None
             else "")
    mix = ", ".join(f"{k} {v}" for k, v in sorted(s.codecs.items()))
    magics = ", ".join(f"v{k} {v}" for k, v in sorted(s.magics.items()))
    damaged = f", {s.damaged_segments} damaged" if s.damaged_segments else ""
    return (f"{count(s.segments, 'segment')}{damaged}, {count(s.batches, 'batch')}, {count(s.records, 'record')}, "
            f"{count(s.bytes, 'byte')}{offsets}"
            f"{times}; codecs: {mix or '-'}; magic: {magics or '-'}")


def _record_lines(r: RecordStats, s: Stats) -> list[str]:
    d = r.to_dict()
    ratios = ", ".join(f"{codec} {c['bytes']} -> {count(c['uncompressedBytes'], 'byte')} uncompressed (x{c['ratio']})"
                       for codec, c in d["compression"].items())
    k, c, t = d["keys"], d["compaction"], d["transactions"]
    lines = [f"compression: {ratios or '-'}",
             f"producers {r.producers}; transactions: {t['committed']} committed, {t['aborted']} aborted, "
             f"{t['open']} open; control records {r.control_records}",
             f"keys: {k['distinct']} distinct in {count(k['keyedRecords'], 'keyed record')}, "
             f"{k['keylessRecords']} without a key ({k['method']})",
             f"compaction would remove {count(c['supersededRecords'], 'superseded record')} "
             f"({count(c['supersededBytes'], 'byte')}); "
             f"tombstones {c['tombstones']}, {c['liveTombstones']} of them the last record of their key"]
    if r.unreadable_batches:
        lines.append(f"{count(r.unreadable_batches, 'batch')} whose records could not be decoded: only the records "
                     "decoded are in these numbers")
    if s.errors:
        lines.append(f"the numbers are of what could be read: {count(len(s.errors), 'error')} on stderr")
    return lines

