"""The text (DumpLogSegments' lines, spec §2.5-§2.9) and the JSON objects of companion files: index, time-index
and transaction-index entries, producer-snapshot entries, text checkpoints, and the reports Kafka's tool prints on
stderr after all files (§2.7). The library (:mod:`kdump.index`) hands over the entries; only this module words them."""
from __future__ import annotations

import os

from kdump.index.dump import Empty, SanityPassed
from kdump.index.reports import IndexReports
from kdump.read.checkpoints import OFFSET_CHECKPOINTS, CheckpointFile, topic_uuid
from kdump.read.offset_index import OffsetPosition
from kdump.read.snapshot import ProducerEntry
from kdump.read.time_index import TimestampOffset
from kdump.read.txn_index import AbortedTxn
from kdump.text.times import add_formatted


def txn_line(txn: AbortedTxn) -> str:
    """The line DumpLogSegments prints for a transaction-index entry (§2.8)."""
    return (f"version: {txn.version} producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
            f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}")


def snapshot_line(e: ProducerEntry, compat: str = "java", when=str) -> str:
    """DumpLogSegments' line for a producer-snapshot entry (§2.9); the Scala tool left a space after
    lastTimestamp. ``when`` prints the timestamps (:func:`kdump.text.times.time_formatter`)."""
    txn = "OptionalLong.empty" if e.current_txn_first_offset < 0 else f"OptionalLong[{e.current_txn_first_offset}]"
    line = (f"producerId: {e.producer_id} producerEpoch: {e.epoch} coordinatorEpoch: "
            f"{e.coordinator_epoch} currentTxnFirstOffset: {txn} lastTimestamp: {when(e.timestamp)}")
    sep = " "
    if compat == "scala":
        line += " "
        sep = ""
    if e.has_batch_metadata:
        line += (f"{sep}firstSequence: {e.first_sequence} lastSequence: {e.last_sequence} "
                 f"lastOffset: {e.last_offset} offsetDelta: {e.offset_delta} timestamp: {when(e.timestamp)}")
    return line


def checkpoint_lines(cp: CheckpointFile) -> list[str]:
    """kdump's readable dump of a text checkpoint (docs/index.md): a header line, then one line per entry, in
    DumpLogSegments' ``name: value`` style."""
    if cp.kind == "partition-metadata":
        lines = [f"Partition metadata version: {cp.version}"] if cp.version is not None else []
        if cp.topic_id is not None:
            lines.append(f"topicId: {cp.topic_id} uuid: {topic_uuid(cp)}")
        return lines
    if cp.version is None:
        return []
    head = "Leader epoch checkpoint" if cp.kind == "leader-epoch-checkpoint" else \
        f"Offset checkpoint ({OFFSET_CHECKPOINTS.get(os.path.basename(cp.path), 'offset per partition')})"
    count = "?" if cp.declared_count is None else cp.declared_count
    lines = [f"{head} version: {cp.version} entries: {count}"]
    for e in cp.entries:
        if cp.kind == "leader-epoch-checkpoint":
            lines.append(f"epoch: {e[0]} startOffset: {e[1]}")
        else:
            lines.append(f"topic: {e[0]} partition: {e[1]} offset: {e[2]}")
    return lines


def companion_lines(item, compat: str = "java", when=str) -> list[str]:
    """The text lines of one item a companion dump yields (:class:`kdump.index.dump.CompanionDumper`); ``when``
    prints timestamps (Kafka's epoch ms by default)."""
    if isinstance(item, OffsetPosition):
        return [f"offset: {item.offset} position: {item.position}"]
    if isinstance(item, TimestampOffset):
        return [f"timestamp: {when(item.timestamp)} offset: {item.offset}"]
    if isinstance(item, AbortedTxn):
        return [txn_line(item)]
    if isinstance(item, ProducerEntry):
        return [snapshot_line(item, compat, when)]
    if isinstance(item, CheckpointFile):
        return checkpoint_lines(item)
    if isinstance(item, Empty):
        return [f"{item.path} is empty."]
    if isinstance(item, SanityPassed):
        return [f"{item.path} passed sanity check."]
    raise TypeError(f"no text form for {type(item).__name__}")


def companion_objects(item, when=None) -> list[dict]:
    """The JSON objects (same fields as the text) of one item a companion dump yields; ``when`` (not epoch):
    ``timestampIso``/``lastTimestampIso`` beside the epoch ms (:func:`kdump.text.times.add_formatted`)."""
    objs = _companion_objects(item)
    add_formatted(objs, when)
    return objs


def _companion_objects(item) -> list[dict]:
    if isinstance(item, OffsetPosition):
        return [{"kind": "index", "offset": item.offset, "position": item.position}]
    if isinstance(item, TimestampOffset):
        return [{"kind": "timeindex", "timestamp": item.timestamp, "offset": item.offset}]
    if isinstance(item, AbortedTxn):
        return [{"kind": "txnindex", "version": item.version, "producerId": item.producer_id,
                 "firstOffset": item.first_offset, "lastOffset": item.last_offset,
                 "lastStableOffset": item.last_stable_offset}]
    if isinstance(item, ProducerEntry):
        obj = {"kind": "snapshot", "producerId": item.producer_id, "producerEpoch": item.epoch,
               "coordinatorEpoch": item.coordinator_epoch,
               "currentTxnFirstOffset": None if item.current_txn_first_offset < 0 else item.current_txn_first_offset,
               "lastTimestamp": item.timestamp}
        if item.has_batch_metadata:
            obj.update(firstSequence=item.first_sequence, lastSequence=item.last_sequence, lastOffset=item.last_offset,
                       offsetDelta=item.offset_delta, timestamp=item.timestamp)
        return [obj]
    if isinstance(item, CheckpointFile):
        return [_checkpoint_object(item, line) for line in checkpoint_lines(item)]
    if isinstance(item, Empty):
        return [{"kind": item.kind, "empty": True}]
    if isinstance(item, SanityPassed):
        return [{"kind": item.kind, "sanityCheck": "passed"}]
    raise TypeError(f"no JSON form for {type(item).__name__}")


def _checkpoint_object(cp: CheckpointFile, line: str) -> dict:
    obj: dict[str, str | int] = {"kind": cp.kind}
    words = line.split()
    if words and words[0] in ("epoch:", "topic:", "topicId:"):
        for k, v in zip(words[::2], words[1::2], strict=False):
            k = k.rstrip(":")
            obj[k] = int(v) if v.lstrip("-").isdigit() and k != "topic" else v
    else:
        obj["header"] = line
    return obj


def index_report_lines(reports: IndexReports, compat: str = "java", when=str) -> list[str]:
    """The stderr blocks, in Kafka's order: offset index mismatches, timestamp mismatches, out-of-order
    timestamps, offsets not found (the non-consecutive report follows). Files come in the order they were
    dumped (Kafka: hash-map order). Within a file the Java tool sorts offset mismatches by index offset,
    descending, one per offset (a reversed TreeMap); the Scala tool listed them in reverse discovery order.
    ``when`` prints the timestamps."""
    out = []
    for path, pairs in reports.offset_mismatches.items():
        out.append(f"Mismatches in :{path}")
        ordered = list(reversed(pairs)) if compat == "scala" else sorted(dict(pairs).items(), reverse=True)
        out.extend(f"  Index offset: {a}, log offset: {b}" for a, b in ordered)
    for path, pairs in reports.time_mismatches.items():
        out.append(f"Found timestamp mismatch in :{path}")
        out.extend(f"  Index timestamp: {when(a)}, log timestamp: {when(b)}" for a, b in pairs)
    for path, pairs in reports.time_out_of_order.items():
        out.append(f"Found out of order timestamp in :{path}")
        out.extend(f"  Index timestamp: {when(a)}, Previously indexed timestamp: {when(b)}" for a, b in pairs)
    for pairs in reports.time_not_found.values():
        out.append("The following indexed offsets are not found in the log.")
        out.extend(f"Indexed offset: {a}, found log offset: {b}" for a, b in pairs)
    return out
