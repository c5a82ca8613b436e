"""Helpers for the index tests (no tests here): segments built with kdump's writer, and an independent
restatement of Kafka's recovery-time indexing rule (spec §5.6) computed from Kafka's own view of a log
(the corpus ``.log.json``) or from a list of batch facts."""
from __future__ import annotations

import os
import struct

from kdump.write.segment import RecordBatchBuilder, empty_batch, end_txn_marker_batch, write_segment

T0 = 1_700_000_000_000


def data_batch(base: int, n: int = 1, *, ts: int = T0, pid: int = -1, epoch: int = -1, seq: int = -1,
               txn: bool = False, value: bytes = b"v" * 20, ple: int = 0, ts_step: int = 1) -> bytes:
    b = RecordBatchBuilder(base, producer_id=pid, producer_epoch=epoch, base_sequence=seq if pid >= 0 else -1,
                           is_transactional=txn, partition_leader_epoch=ple)
    for i in range(n):
        b.append(base + i, ts + i * ts_step, b"k%d" % (base + i), value)
    return b.build()


def marker(offset: int, pid: int, *, commit: bool, ts: int = T0, epoch: int = 0, ple: int = 0) -> bytes:
    return end_txn_marker_batch(offset, pid, epoch, commit, 3, ts, ple)


def cleaned_marker(offset: int, pid: int) -> bytes:
    """A control batch the cleaner emptied (count 0)."""
    return empty_batch(offset, offset, producer_id=pid, producer_epoch=0, is_transactional=True, is_control=True)


def write_log(directory, base: int, entries) -> str:
    os.makedirs(directory, exist_ok=True)
    return write_segment(os.path.join(directory, f"{base:020d}.log"), list(entries))


def recovery_rule(batches, base: int, interval: int = 4096):
    """Spec §5.6 restated: ``batches`` are dicts with position, size, lastOffset, maxTimestamp (Kafka's view,
    in file order). Returns (offset index bytes, time index bytes)."""
    off, tim = [], []
    valid = last_entry = 0
    max_ts, max_off = -1, base
    last_time_ts = -1
    for b in batches:
        if b["maxTimestamp"] > max_ts:
            max_ts, max_off = b["maxTimestamp"], b["lastOffset"]
        if valid - last_entry > interval:
            off.append(struct.pack(">ii", b["lastOffset"] - base, valid))
            if max_ts > last_time_ts:
                tim.append(struct.pack(">qi", max_ts, max_off - base))
                last_time_ts = max_ts
            last_entry = valid
        valid += b["size"]
    if max_ts > last_time_ts:
        tim.append(struct.pack(">qi", max_ts, max_off - base))
    return b"".join(off), b"".join(tim)


def batch_facts(log_path):
    """Kafka-view-like batch facts read with kdump's reader (for generated logs without a .json)."""
    from kdump.read.segment import SegmentReader
    with SegmentReader(log_path) as r:
        return [{"position": b.position, "size": b.size, "lastOffset": b.last_offset, "maxTimestamp": b.max_timestamp,
                 "baseOffset": b.base_offset if b.magic >= 2 else None} for b in r]
