"""What a dump found, per file (:class:`FileResult`: batches, records, errors, non-consecutive offsets), and
the non-consecutive offset report DumpLogSegments prints after all files (spec §2.7)."""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from kdump.errors import FormatError
from kdump.format.layout import java_long
from kdump.format.legacy import LegacyRun

# A dump keeps at most this many errors and non-consecutive offset pairs per file for its end-of-run report
# (a damaged or compacted file could otherwise make the report, and memory, grow with the file); the rest
# are counted.
MAX_KEPT = 1000


@dataclass
class FileResult:
    path: str
    batches: int = 0
    records: int = 0
    errors: list = field(default_factory=list)  # the first MAX_KEPT FormatErrors, position set
    error_count: int = 0
    non_consecutive: list = field(default_factory=list)  # the first MAX_KEPT (previous offset, offset) pairs
    non_consecutive_count: int = 0  # all of them
    skipped: bool = False

    def add_error(self, err: FormatError) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_KEPT:
            self.errors.append(err.detached())  # kept for the report: not the batch its frames hold

    def non_consecutive_pair(self, previous: int, offset: int) -> None:
        self.non_consecutive_count += 1
        if len(self.non_consecutive) < MAX_KEPT:
            self.non_consecutive.append((previous, offset))


def follow_offsets(records, last, result: FileResult):
    """Report each record offset that does not follow the one before (``last``: the previous record's, None
    at the start); returns the last offset. A run of consecutive offsets (every batch not compacted) is
    recognised with one list comparison instead of a step per record."""
    n = records.count
    if not n:
        return last
    offsets = records.offsets
    first = offsets[0]
    if (last is None or first == last + 1) and offsets[n - 1] == first + n - 1 and (
            n < 3 or offsets[:n] == list(range(first, first + n))):
        return offsets[n - 1]
    for off in offsets[:n]:
        if last is not None and off != last + 1 and off != java_long(last + 1):  # Kafka's long: MAX + 1 = MIN
            result.non_consecutive_pair(last, off)
        last = off
    return last


def follow_run(run: LegacyRun, last, result: FileResult):
    """:func:`follow_offsets` over a run of plain messages: from the summary of its walk when its offsets follow
    each other and the offset before (its columns are then never built), else from its columns."""
    s = run.summary
    first, n = run.base_offset, run.count
    consecutive = s is not None and s.decreasing_at < 0 and run.last_offset - first == n - 1
    if consecutive and (last is None or first == last + 1):
        return run.last_offset
    return follow_offsets(run.columns, last, result)


def non_consecutive_report(results, compat: str = "java") -> list[str]:
    """The stderr block DumpLogSegments prints after all files (§2.7)."""
    lines = []
    for res in results:
        pairs = res.non_consecutive
        if not pairs:
            continue
        lines.append(f"Non-consecutive offsets in {os.path.abspath(res.path)}")
        if compat == "scala":
            ordered = list(reversed(pairs))
        else:  # Java keeps a TreeMap keyed by the previous offset: ascending, duplicates collapsed
            ordered = sorted(dict(pairs).items())
        lines.extend(f"  {a} is followed by {b}" for a, b in ordered)
        if res.non_consecutive_count > len(pairs):
            lines.append(f"  ... {res.non_consecutive_count - len(pairs)} more non-consecutive offsets not listed "
                         f"({res.non_consecutive_count} in all)")
    return lines
