"""The reports DumpLogSegments prints on stderr after all files (spec §2.7), for index files.
Kept apart (no dependencies) because every ``kdump dump`` creates one."""
from __future__ import annotations


class IndexReports:
    """What DumpLogSegments accumulates while dumping indexes, keyed by the index file's absolute path."""

    def __init__(self):
        self.offset_mismatches: dict = {}  # path -> [(index offset, log last offset)]
        self.time_mismatches: dict = {}  # path -> [(index ts, log max ts)]
        self.time_out_of_order: dict = {}  # path -> [(index ts, previous ts)]
        self.time_not_found: dict = {}  # path -> [(index offset, found log offset or -1)]

    def lines(self, compat: str = "java") -> list[str]:
        """The stderr blocks, in Kafka's order: offset index mismatches, timestamp mismatches, out-of-order
        timestamps, offsets not found (the non-consecutive report follows, from kdump.dump). Files come in
        the order they were dumped (Kafka: hash-map order). Within a file the Java tool sorts offset
        mismatches by index offset, descending, one per offset (a reversed TreeMap); the Scala tool listed
        them in reverse discovery order."""
        out = []
        for path, pairs in self.offset_mismatches.items():
            out.append(f"Mismatches in :{path}")
            if compat == "scala":
                ordered = list(reversed(pairs))
            else:
                ordered = sorted(dict(pairs).items(), reverse=True)
            out.extend(f"  Index offset: {a}, log offset: {b}" for a, b in ordered)
        for path, pairs in self.time_mismatches.items():
            out.append(f"Found timestamp mismatch in :{path}")
            out.extend(f"  Index timestamp: {a}, log timestamp: {b}" for a, b in pairs)
        for path, pairs in self.time_out_of_order.items():
            out.append(f"Found out of order timestamp in :{path}")
            out.extend(f"  Index timestamp: {a}, Previously indexed timestamp: {b}" for a, b in pairs)
        for pairs in self.time_not_found.values():
            out.append("The following indexed offsets are not found in the log.")
            out.extend(f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs)
        return out
