"""Checks of a transaction index (``.txnindex``): Kafka's sanity check, its entries' own order and bounds, each
ABORT marker in the log (deep: the entries equal the aborted transactions recomputed from the log)."""
from __future__ import annotations

import os

from kdump.index.check.context import Context, Segment, log_name
from kdump.index.check.report import Report
from kdump.read.locate import SegmentLocator
from kdump.report.findings import FileReport


def check_txn_index(ctx: Context, path: str, base: int, seg: Segment | None) -> FileReport:
    from kdump.read.txn_index import CURRENT_VERSION, TxnIndexFile

    r = Report(path, "txnindex")
    try:
        f = TxnIndexFile(path)
    except OSError as e:
        r.report.io_error = f"cannot read: {e.strerror or e}"
        return r.report
    abs_path = os.path.abspath(path)
    txns = []
    with f:
        r.report.bytes = f.length
        if f.partial_bytes:
            r.add("txnindex-partial-entry",
                  f"{f.partial_bytes} bytes at the end are not a whole 34-byte entry (Kafka ignores them)",
                  position=f.count * 34, length=f.partial_bytes)
        prev = None
        for pos, t in f.entries():
            where = dict(position=pos, first_offset=t.first_offset, last_offset=t.last_offset)
            if t.version > CURRENT_VERSION:
                r.add("txnindex-version",
                      f"Unexpected aborted transaction version {t.version} in transaction index {abs_path}, "
                      f"current version is {CURRENT_VERSION} (Kafka cannot read this file past here)", **where)
                break
            txns.append((pos, t))
            if t.last_offset < base:
                r.add("txnindex-sanity",
                      f"Kafka's sanity check: Last offset of aborted transaction {t.kafka_repr()} in index "
                      f"{abs_path} is less than start offset {base}", **where)
            if seg is not None and seg.next_base is not None and t.last_offset >= seg.next_base:
                r.add("txnindex-outside-segment",
                      f"the ABORT marker offset {t.last_offset} belongs to a later segment (from "
                      f"{seg.next_base})", **where)
            if t.first_offset > t.last_offset:
                r.add("txnindex-first-after-last",
                      f"first offset {t.first_offset} is after the marker offset {t.last_offset}", **where)
            if t.last_stable_offset > t.last_offset + 1:
                r.add("txnindex-lso-invalid",
                      f"last stable offset {t.last_stable_offset} is above the marker offset + 1 "
                      f"({t.last_offset + 1})", **where)
            if prev is not None and t.last_offset <= prev.last_offset:
                r.add("txnindex-not-increasing",
                      f"marker offset {t.last_offset} is not above the previous entry's {prev.last_offset} (Kafka "
                      "appends them in increasing order)", **where)
            prev = t
    if seg is None:
        r.add("txnindex-log-missing", f"no segment {log_name(path)} beside this transaction index")
        return r.finish()
    if ctx.deep:
        _txn_deep(txns, r, seg)
    else:
        _txn_markers(txns, r, seg)
    return r.finish()


def _txn_markers(txns, r: Report, seg: Segment) -> None:
    try:
        loc = SegmentLocator(seg.log_path)
    except OSError as e:
        r.add("txnindex-log-unreadable", f"cannot read {seg.log_path}: {e.strerror or e}")
        return
    with loc:
        for pos, t in txns:
            where = dict(position=pos, first_offset=t.first_offset, last_offset=t.last_offset)
            h = loc.locate_offset(t.last_offset).batch
            if h is None or h.base_offset != t.last_offset or not h.is_control:
                r.add("txnindex-marker-missing",
                      f"no control batch at offset {t.last_offset} in the log, where this entry puts the ABORT "
                      "marker", **where)
            elif h.producer_id != t.producer_id:
                r.add("txnindex-marker-missing",
                      f"the control batch at offset {t.last_offset} belongs to producer {h.producer_id}, not "
                      f"{t.producer_id}", **where)


def _txn_deep(txns, r: Report, seg: Segment) -> None:
    if seg.recovery is None:
        if seg.recovery_error:
            r.add("txnindex-recovery-fails", f"Kafka's recovery of this segment would fail: "
                  f"{seg.recovery_error}")
        return
    expected = seg.recovery.aborted
    ours = [t for _, t in txns]
    exp_by_last = {t.last_offset: t for t in expected}
    ours_by_last = {t.last_offset: (pos, t) for pos, t in txns}
    for pos, t in txns:
        e = exp_by_last.get(t.last_offset)
        where = dict(position=pos, first_offset=t.first_offset, last_offset=t.last_offset)
        if e is None:
            r.add("txnindex-extra-entry",
                  f"the log has no aborted transaction ending at offset {t.last_offset} (producer "
                  f"{t.producer_id}): consumers reading committed data would skip committed records", **where)
        elif (e.producer_id, e.first_offset, e.last_stable_offset) != (t.producer_id, t.first_offset,
                                                                      t.last_stable_offset):
            r.add("txnindex-entry-differs",
                  f"entry {t.kafka_repr()}; recomputed from the log: {e.kafka_repr()}", **where)
    for e in expected:
        if e.last_offset not in ours_by_last:
            r.add("txnindex-missing-entry",
                  f"aborted transaction of producer {e.producer_id} (offsets {e.first_offset}-{e.last_offset}) is "
                  "not in the index: consumers reading committed data would see its records",
                  first_offset=e.first_offset, last_offset=e.last_offset)
    del ours
