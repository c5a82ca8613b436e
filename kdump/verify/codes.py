"""The finding codes of ``kdump verify``: one stable name, one severity and one line of meaning each.

Codes are part of kdump's interface: CI jobs match on them, so a code is never renamed or reused for
something else (add a new one instead). Each has exactly one severity, so a job can rely on "this code
makes verify exit 1" without reading messages. ``docs/findings.md`` documents every code here;
``tests/test_verify.py`` fails if one is missing there.

Where the problem is exactly what Kafka's own reader throws for, the code is the one kdump's reader
already uses for it (``kdump.errors.FormatError.code``), so ``dump`` and ``verify`` name a problem alike.
"""
from __future__ import annotations

from dataclasses import dataclass

from kdump.findings import ERROR, INFO, WARNING


@dataclass(frozen=True)
class Code:
    name: str
    severity: str
    meaning: str
    deep: bool = False  # only found with --deep


_ALL = [
    # --- framing: where entries are and whether they are whole (shallow) -------------------------------
    Code("crc-mismatch", ERROR, "a batch's (magic 2: CRC-32C) or message's (magic 0/1: CRC-32) stored CRC does not "
         "match its bytes; its header fields and records cannot be trusted"),
    Code("truncated-tail", ERROR, "the last entry is incomplete (it declares more bytes than the file has, or fewer "
         "than 18 bytes remain), as a crash leaves it; Kafka's recovery would truncate the file there"),
    Code("zero-padding", WARNING, "the file ends in zero bytes (a preallocated or zero-filled tail); Kafka's reader "
         "stops there and its recovery truncates them"),
    Code("size-below-minimum", ERROR, "an entry's size field is below 14, the smallest entry Kafka accepts "
         "(Kafka: CorruptRecordException); the bytes from there are no entry"),
    Code("size-beyond-end", ERROR, "an entry declares more bytes than the file has, but valid batches follow it: "
         "its size field is damaged (not a truncated tail)"),
    Code("magic-unknown", ERROR, "an entry's magic byte is not 0, 1 or 2"),
    Code("batch-too-small", ERROR, "a magic 2 entry is smaller than the 61-byte record batch header"),
    Code("message-too-small", ERROR, "a magic 0/1 entry is smaller than its message header (14 / 22 bytes)"),
    Code("message-truncated", ERROR, "a magic 0/1 message's key or value length runs past the end of the message"),
    Code("damaged-range", ERROR, "bytes in the middle of the file that are no valid entry; verify resumed at the "
         "next valid batch (resynchronisation) and names the offsets lost between the last good batch and it"),
    Code("batch-too-large", WARNING, "a batch (or, with --deep, its decompressed records) is larger than "
         "--max-batch-bytes: its CRC was checked but its records were not decoded (raise the limit to check them)"),
    # --- batch headers (shallow) ----------------------------------------------------------------------
    Code("codec-invalid", ERROR, "unknown compression codec id, or zstd in a magic 0/1 message"),
    Code("last-offset-delta-invalid", ERROR, "a magic 2 batch's lastOffsetDelta is negative"),
    Code("record-count-invalid", ERROR, "a magic 2 batch's record count is negative or larger than its offset "
         "range (lastOffsetDelta + 1); with --deep also: the records do not match the count"),
    Code("attributes-invalid", WARNING, "attribute bits that Kafka never sets are set"),
    Code("timestamp-invalid", WARNING, "a timestamp below -1 (Kafka's writer refuses negative timestamps other than "
         "-1 = none), or a LogAppendTime batch without an append time"),
    Code("timestamp-type-invalid", WARNING, "the timestamp type bit is set on a magic 0 message (magic 0 has no "
         "timestamps)"),
    Code("producer-fields-invalid", ERROR, "producer fields of a magic 2 batch contradict each other: "
         "transactional without a producer id, a producer id without an epoch, values below -1"),
    Code("producer-sequence-missing", WARNING, "an idempotent data batch (producer id set) has no base sequence; "
         "Kafka refuses such a batch from a client"),
    # --- offsets and producer state across batches (shallow) ----------------------------------------------
    Code("offset-not-increasing", ERROR, "a batch's first offset is not above the previous batch's last offset "
         "(overlapping or repeated offsets)"),
    Code("offset-below-segment-base", ERROR, "a batch's first offset is below the base offset in the segment's "
         "file name"),
    Code("offset-overflow", ERROR, "a batch's last offset is more than 2^31-1 above the segment's base offset "
         "(Kafka: LogSegmentOffsetOverflowException; index entries cannot hold it)"),
    Code("offset-gap", INFO, "offsets missing between batches, inside batches or between segments; normal in "
         "compacted partitions (one summary per file)"),
    Code("sequence-duplicate", WARNING, "an idempotent producer's batch has the same epoch, first and last "
         "sequence as one of its previous 5 batches: a duplicate write (Kafka's broker detects these)"),
    Code("producer-epoch-decreasing", WARNING, "a producer's epoch is lower than in an earlier batch of the partition"),
    Code("leader-epoch-decreasing", WARNING, "a batch's partition leader epoch is lower than an earlier batch's "
         "(leader epochs never decrease along a partition's log)"),
    Code("base-offset-unknown", INFO, "the file name carries no base offset (<20 digits>.log), so the offsets could "
         "not be checked against it"),
    Code("segment-too-large", WARNING, "the segment is larger than 2 GiB - 1 bytes; Kafka refuses to load it"),
    Code("findings-capped", INFO, "more findings of one code than are listed for a file; the message says how many"),
    # --- partition directories ----------------------------------------------------------------------------
    Code("segment-overlap", ERROR, "a segment's base offset is not above the previous segment's last offset: "
         "segments overlap"),
    # --- kdump's own crash leftovers (kdump.atomic; verify and index check of a directory) ----------------------
    Code("kdump-temporary-left", WARNING, "a temporary file or directory of a kdump write that no running process "
         "holds: left by an interrupted kdump run (the next run of the same command removes it; or delete it)"),
    Code("kdump-write-interrupted", ERROR, "the journal of a kdump group write (a segment and its indexes) that no "
         "running process holds: the run was interrupted between renames, so the files it lists are part old, part "
         "new (the segment's .index is absent meanwhile); rerun the command"),
    # --- records (--deep) ---------------------------------------------------------------------------------
    Code("decompress-failed", ERROR, "a compressed batch or wrapper cannot be decompressed", deep=True),
    Code("record-truncated", ERROR, "the records end before the batch's record count is reached", deep=True),
    Code("records-remaining", ERROR, "bytes remain after the number of records the batch header declares",
         deep=True),
    Code("record-size-invalid", ERROR, "a record's length field does not match what its fields take, or a key, "
         "value or header runs past the record", deep=True),
    Code("varint-too-long", ERROR, "a varint of a record is longer than 5 (varlong: 10) bytes", deep=True),
    Code("record-headers-invalid", ERROR, "a record's header count or a header key length is negative, or more "
         "headers are declared than bytes remain", deep=True),
    Code("record-offset-invalid", ERROR, "record offset deltas are not strictly increasing, the first is negative, "
         "or the last is above the batch's lastOffsetDelta", deep=True),
    Code("max-timestamp-mismatch", ERROR, "a CreateTime batch's max timestamp (magic 1 wrapper: its timestamp) "
         "differs from the largest record timestamp", deep=True),
    Code("record-attributes-nonzero", INFO, "a magic 2 record's attributes byte is not 0 (unused by Kafka)",
         deep=True),
    Code("control-batch-invalid", ERROR, "a control batch holds a transaction marker next to other records, "
         "or a marker batch is not transactional or has no producer id", deep=True),
    Code("control-key-invalid", ERROR, "a control record's key is shorter than 4 bytes or has a negative version",
         deep=True),
    Code("end-txn-marker-invalid", ERROR, "a COMMIT/ABORT marker's value is shorter than 6 bytes or has a "
         "negative version", deep=True),
    Code("control-value-invalid", ERROR, "a KRaft control record's value does not parse with its schema",
         deep=True),
    Code("control-type-unknown", INFO, "a control record of a type id this kdump does not know (a newer Kafka "
         "may write it; Kafka's readers skip unknown types)", deep=True),
    Code("wrapper-invalid", ERROR, "a compressed magic 0/1 wrapper has a null value", deep=True),
    Code("wrapper-empty", ERROR, "a compressed magic 0/1 wrapper holds no inner messages", deep=True),
    Code("wrapper-offset-invalid", ERROR, "a compressed wrapper's offset is not its last inner message's "
         "offset", deep=True),
    Code("wrapper-offset-zero", INFO, "a magic 1 wrapper has offset 0 with relative inner offsets (as librdkafka "
         "wrote in requests); Kafka reads the inner offsets as absolute", deep=True),
    Code("inner-message-too-small", ERROR, "an inner message of a wrapper declares a size below 14", deep=True),
    Code("inner-message-invalid", ERROR, "an inner message of a wrapper is malformed (too small for its header, "
         "key or value past its end, unknown magic)", deep=True),
    Code("inner-compressed", ERROR, "an inner message of a wrapper is itself compressed", deep=True),
    Code("inner-magic-mismatch", ERROR, "an inner message's magic differs from its wrapper's (Kafka's broker "
         "refuses it)", deep=True),
    Code("inner-crc-mismatch", ERROR, "an inner message's CRC-32 does not match its bytes", deep=True),
    Code("inner-offset-invalid", ERROR, "inner message offsets of a wrapper are not strictly increasing",
         deep=True),
    Code("inner-trailing-bytes", WARNING, "bytes after the last whole inner message of a wrapper (Kafka's reader "
         "ignores them silently)", deep=True),
]

CODES: dict[str, Code] = {c.name: c for c in _ALL}


def severity(code: str) -> str:
    return CODES[code].severity
