"""Pushed filters (``pyspark.sql.datasource.Filter``) turned into pruning bounds.

Only conjuncts on ``topic``, ``partition``, ``offset`` and ``timestamp`` are used: topics and partitions
choose directories, an offset range skips segments (by file name) and batches (by header), a lower
timestamp bound skips magic-2 batches whose max timestamp is below it. Everything is conservative:
Spark evaluates every filter again on the records.
"""
from __future__ import annotations

import datetime as _dt


def _ms(value) -> int | None:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:  # Spark hands session-local naive datetimes; no bound is safer than a wrong one
            return None
        return int(value.timestamp() * 1000)
    return None


def apply_filters(filters, pruning, options) -> None:
    from pyspark.sql.datasource import EqualTo, GreaterThan, GreaterThanOrEqual, In, LessThan, LessThanOrEqual

    def narrow(current, values):
        values = set(values)
        return values if current is None else current & values

    for f in filters:
        attribute: tuple = getattr(f, "attribute", ())  # Not(...) has a child filter instead
        col = attribute[0] if len(attribute) == 1 else None
        if col == "topic" and isinstance(f, EqualTo):
            pruning.topics = narrow(pruning.topics, [f.value])
        elif col == "topic" and isinstance(f, In):
            pruning.topics = narrow(pruning.topics, f.value)
        elif col == "partition" and isinstance(f, EqualTo):
            pruning.partitions = narrow(pruning.partitions, [f.value])
        elif col == "partition" and isinstance(f, In):
            pruning.partitions = narrow(pruning.partitions, f.value)
        elif col == "offset" and isinstance(getattr(f, "value", None), int):
            v = f.value
            lo = {EqualTo: v, GreaterThan: v + 1, GreaterThanOrEqual: v}.get(type(f))
            hi = {EqualTo: v, LessThan: v - 1, LessThanOrEqual: v}.get(type(f))
            if lo is not None:
                pruning.min_offset = lo if pruning.min_offset is None else max(pruning.min_offset, lo)
            if hi is not None:
                pruning.max_offset = hi if pruning.max_offset is None else min(pruning.max_offset, hi)
        elif col == "timestamp" and isinstance(f, (GreaterThan, GreaterThanOrEqual, EqualTo)):
            ms = _ms(f.value)
            if ms is not None:
                ms = ms - 1  # microseconds are truncated to ms in the header: stay one below
                pruning.min_timestamp = ms if pruning.min_timestamp is None else max(pruning.min_timestamp, ms)
    options.min_offset = pruning.min_offset
    options.max_offset = pruning.max_offset
    options.min_timestamp = pruning.min_timestamp
