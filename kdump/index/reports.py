"""What DumpLogSegments collects for its stderr reports after all files (spec §2.7), for index files; the text
is :func:`kdump.render.companions.index_report_lines`. Kept apart (no dependencies): every ``kdump dump``
creates one."""
from __future__ import annotations


class IndexReports:
    """What DumpLogSegments accumulates while dumping indexes, keyed by the index file's absolute path."""

    def __init__(self):
        self.offset_mismatches: dict = {}  # path -> [(index offset, log last offset)]
        self.time_mismatches: dict = {}  # path -> [(index ts, log max ts)]
        self.time_out_of_order: dict = {}  # path -> [(index ts, previous ts)]
        self.time_not_found: dict = {}  # path -> [(index offset, found log offset or -1)]
