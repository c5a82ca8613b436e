"""Every finding code kdump reports: one registry, with a stable name, severity, one line of meaning and where it
is documented.

Codes are part of kdump's interface: CI jobs match on them, so a code is never renamed or reused for
something else (add a new one instead). Each has one severity (the few companion-file codes whose severity
depends on the segment, e.g. a zero tail on the active segment, name the other one in ``also``), so a job can
rely on "this code makes the command exit 1" without reading messages. ``doc`` names the page listing the
code (docs/findings.md for ``verify``'s log checks, docs/index.md for the companion-file checks of
``index check`` and ``verify`` on a partition); tests/test_findings.py fails if one is missing there.

Where the problem is exactly what Kafka's own reader throws for, the code is the one kdump's reader
already uses for it (``kdump.errors.FormatError.code``), so ``dump`` and ``verify`` name a problem alike;
:data:`kdump.report.findings.READER_CODES` maps the others.
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR = "error"  # the data is damaged or inconsistent
WARNING = "warning"  # suspicious, or something Kafka tolerates but should not be there
INFO = "info"  # worth knowing, not a defect (e.g. offset gaps left by compaction)
SEVERITIES = (ERROR, WARNING, INFO)
FINDINGS_DOC = "docs/findings.md"
INDEX_DOC = "docs/index.md"


@dataclass(frozen=True)
class Code:
    name: str
    severity: str
    meaning: str
    deep: bool = False  # only found with --deep
    doc: str = FINDINGS_DOC
    also: str | None = None  # the other severity a code may take, where the situation decides


_VERIFY = [
    # --- framing: where entries are and whether they are whole (shallow) -------------------------------
    Code("crc-mismatch", ERROR, "a batch's (magic 2: CRC-32C) or message's (magic 0/1: CRC-32) stored CRC does not "
         "match its bytes; its header fields and records cannot be trusted"),
    Code("truncated-tail", WARNING, "the last entry is incomplete (it declares more bytes than the file has, or "
         "fewer than 18 bytes remain, zero or not), as a crash leaves it: Kafka's DumpLogSegments reports it as "
         "`Found N invalid bytes at the end` with exit 0 and its recovery truncates the file there; an error when "
         "the file shrank while being read", also=ERROR),
    Code("not-a-kafka-log", ERROR, "the file's first bytes cannot start a Kafka log: the first entry's size field "
         "does not fit the file and its magic byte is not 0, 1 or 2 (e.g. a text file renamed .log); nothing else "
         "is checked in it"),
    Code("zero-padding", ERROR, "the file ends in 18 or more zero bytes (a preallocated or zero-filled tail): "
         "Kafka's DumpLogSegments dies there (a size field of 0: CorruptRecordException) and its recovery truncates "
         "them; fewer are Kafka's trailing bytes (`truncated-tail`)"),
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
    Code("batch-too-large", WARNING, "a batch (or, with the deep checks, its decompressed records) is "
         "larger than the batch limit (max_batch_bytes): its CRC was checked but its records were not decoded (raise "
         "the limit to check them); with the deep checks, records that decompress beyond it (a decompression bomb) "
         "are an error, as `dump` fails them", also=ERROR),
    # --- batch headers (shallow) ----------------------------------------------------------------------
    Code("codec-invalid", ERROR, "unknown compression codec id, or zstd in a magic 0/1 message"),
    Code("last-offset-delta-invalid", ERROR, "a magic 2 batch's lastOffsetDelta is negative"),
    Code("record-count-invalid", ERROR, "a magic 2 batch's record count is negative or larger than its offset "
         "range (lastOffsetDelta + 1); with the deep checks also: the records do not match the count"),
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
    Code("offset-gap", INFO, "offsets missing between batches or inside batches; normal in "
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
    Code("segment-gap", WARNING, "offsets between two segments are in no segment: a segment is missing (deleted, "
         "or lost in a copy), or compaction removed the last records of the one before"),
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
    # --- values against the Schema Registry's schemas (verify --deep --value-decoder schema-registry) ----------
    Code("value-undecodable", WARNING, "values of the segment do not decode with the Schema Registry's schemas "
         "(not framed, unknown schema id, or bytes that do not match the schema); the finding counts them and "
         "names the first", deep=True),
    # --- records of Kafka's internal topics against Kafka's definitions (verify --deep) ------------------------
    Code("internal-record-partly-decoded", WARNING, "records of an internal topic (__consumer_offsets, "
         "__transaction_state, __share_group_state, __cluster_metadata) that decode only in part: unknown "
         "tagged fields, bytes after the key or value message, a value version the definitions do not have, a "
         "record type they do not know, or a record that does not decode; Kafka's DumpLogSegments drops the "
         "first three without a word; the finding counts them and names the first", deep=True),
    # --- kdump's own crash leftovers (kdump.write.killed; verify and index check of a directory) ----------------------
    Code("kdump-temporary-left", WARNING, "a temporary file or directory of a kdump write that no running process "
         "holds: left by an interrupted kdump run (the next run of the same command removes it; or delete it)"),
    Code("kdump-write-interrupted", ERROR, "the journal of a kdump group write (a segment and its indexes) that no "
         "running process holds: the run was interrupted between renames, so the files it lists are part old, part "
         "new (the segment's .index is absent meanwhile); rerun the command"),
]


def _companion(name: str, severity: str, meaning: str, also: str | None = None) -> Code:
    return Code(name, severity, meaning, doc=INDEX_DOC, also=also)


_COMPANION_FILES = [
    _companion("index-length-invalid", ERROR, "length not a multiple of 8 (a torn write); Kafka's sanity check fails"),
    _companion("index-last-offset-below-base", ERROR, "Kafka's sanity check: last entry below the base offset"),
    _companion("index-zero-tail", INFO, "preallocated zero entries after the real ones, or a file of two or more "
        "slots all zero (no real entry yet): info on the active (last) segment, warning on a rolled one (it should "
        "have been trimmed)", also=WARNING),
    _companion("entry-in-damaged-log", INFO, "an index or time-index entry names an offset lost in, or a position "
        "inside, a damaged area of its log that the log's own findings report: a consequence of that damage, not a "
        "fault of this file"),
    _companion("index-offset-below-base", ERROR, "entry order broken: lookups by binary search give wrong answers"),
    _companion("index-offset-not-increasing", ERROR, "entry order broken: lookups by binary search give wrong answers"),
    _companion("index-position-not-increasing", ERROR, "entry order broken: lookups by binary search give wrong "
        "answers"),
    _companion("index-position-past-end", ERROR, "entry points at or past the end of the log"),
    _companion("index-position-not-batch", ERROR, "no batch starts at the entry's position (shallow: the header "
        "there is not a batch; deep: not on the chain of batches)"),
    _companion("index-entry-skips-offsets", ERROR, "the batch at the position starts after the entry's offset: "
        "lookups of the offsets in between would miss them"),
    _companion("index-offset-mismatch", WARNING, "the batch at the position does not end at the entry's offset "
        "(DumpLogSegments' Mismatches); harmless for lookups; written by pre-4.0 followers for multi-batch appends"),
    _companion("index-position-beyond-valid", WARNING, "entry after the point where the log stops being readable "
        "(recovery would drop it)"),
    _companion("index-missing", WARNING, "a segment without `.index` (Kafka recovers the segment at startup)"),
    _companion("index-log-missing", ERROR, "no segment .log beside this index (an orphan: Kafka deletes it)"),
    _companion("index-log-unreadable", ERROR, "the segment .log beside this index cannot be read"),
    _companion("index-differs-from-recovery", INFO, "deep: not what recovery would write (append-time and "
        "recovery-time indexing legitimately differ)"),
    _companion("timeindex-differs-from-recovery", INFO, "deep: not what recovery would write (append-time "
        "and recovery-time indexing legitimately differ)"),
    _companion("index-recovery-fails", ERROR, "deep: Kafka's recovery of the segment would throw (offset overflow, "
        "offsets going backwards, full index)"),
    _companion("timeindex-recovery-fails", ERROR, "deep: Kafka's recovery of the segment would throw (offset "
        "overflow, offsets going backwards, full index)"),
    _companion("txnindex-recovery-fails", ERROR, "deep: Kafka's recovery of the segment would throw (offset "
        "overflow, offsets going backwards, full index)"),
    _companion("timeindex-length-invalid", ERROR, "Kafka's sanity checks (a zero tail makes the timestamp check "
        "fail; that case is reported as `timeindex-zero-tail` only)"),
    _companion("timeindex-sanity-timestamp", ERROR, "Kafka's sanity checks (a zero tail makes the timestamp check "
        "fail; that case is reported as `timeindex-zero-tail` only)"),
    _companion("timeindex-last-offset-below-base", ERROR, "Kafka's sanity checks (a zero tail makes the timestamp "
        "check fail; that case is reported as `timeindex-zero-tail` only)"),
    _companion("timeindex-zero-tail", INFO, "as for `.index`", also=WARNING),
    _companion("timeindex-timestamp-decreasing", ERROR, "order broken: time lookups give wrong answers"),
    _companion("timeindex-offset-decreasing", ERROR, "order broken: time lookups give wrong answers"),
    _companion("timeindex-offset-below-base", ERROR, "order broken: time lookups give wrong answers"),
    _companion("timeindex-timestamp-repeated", WARNING, "Kafka only appends strictly larger timestamps"),
    _companion("timeindex-offset-repeated", WARNING, "Kafka only appends strictly larger timestamps"),
    _companion("timeindex-offset-past-end", ERROR, "entry offset beyond the last batch"),
    _companion("index-offset-past-end", ERROR, "entry offset beyond the segment's last offset (the next segment's "
        "base offset or above): no batch of this segment holds it, so lookups past it go wrong"),
    _companion("timeindex-offset-not-found", ERROR, "no batch ends at the entry's offset (and it is not a "
        "record-level offset, below)"),
    _companion("timeindex-record-offset", INFO, 'the offset lies inside the batch whose max timestamp it names: '
        'brokers around Kafka 3.6.2-3.7.0 stored the offset of the record with the max timestamp (KAFKA-16342, '
        'undone by KAFKA-16310). Lookups still work; DumpLogSegments reports it as "not found"'),
    _companion("timeindex-timestamp-mismatch", ERROR, "the timestamp is not the batch's max (shallow: header; deep: "
        "largest record timestamp)"),
    _companion("timeindex-not-max-so-far", ERROR, "deep: not the largest timestamp up to that offset: a time lookup "
        "could skip records"),
    _companion("timeindex-not-first-offset", WARNING, "deep: that timestamp was reached by an earlier batch"),
    _companion("timeindex-incomplete", INFO, "deep: the last entry is below the segment's max timestamp (not closed "
        "cleanly; warning on rolled segments: lookups between the two skip the segment)", also=WARNING),
    _companion("timeindex-empty", INFO, "deep: empty time index for a log with timestamps", also=WARNING),
    _companion("timeindex-batch-unreadable", ERROR, "deep: the batch a time-index entry points at cannot be read"),
    _companion("timeindex-log-missing", ERROR, "no segment .log beside this time index (an orphan)"),
    _companion("timeindex-log-unreadable", ERROR, "the segment .log beside this time index cannot be read"),
    _companion("txnindex-version", ERROR, "version byte above 0 (Kafka's message; Kafka cannot read past it)"),
    _companion("txnindex-sanity", ERROR, "Kafka's sanity check: an entry's last offset below the base offset"),
    _companion("txnindex-partial-entry", WARNING, "bytes after the last whole 34-byte entry (Kafka ignores them)"),
    _companion("txnindex-first-after-last", ERROR, "layout rules of spec §5.4"),
    _companion("txnindex-lso-invalid", ERROR, "layout rules of spec §5.4"),
    _companion("txnindex-not-increasing", ERROR, "layout rules of spec §5.4"),
    _companion("txnindex-outside-segment", ERROR, "layout rules of spec §5.4"),
    _companion("txnindex-marker-missing", ERROR, "no control batch of that producer at the entry's last offset"),
    _companion("txnindex-missing", ERROR, "deep: the index does not list exactly the aborted transactions of the "
        "log (consumers reading committed data would see aborted records, or skip committed ones); a warning where "
        "the offset index is missing too: Kafka then recovers the segment at startup, which writes it "
        "(LogLoader: a missing offset index is recovered)", also=WARNING),
    _companion("txnindex-missing-entry", ERROR, "deep: the index does not list exactly the aborted transactions of "
        "the log (consumers reading committed data would see aborted records, or skip committed ones)"),
    _companion("txnindex-extra-entry", ERROR, "deep: the index does not list exactly the aborted transactions of "
        "the log (consumers reading committed data would see aborted records, or skip committed ones)"),
    _companion("txnindex-entry-differs", ERROR, "deep: the index does not list exactly the aborted transactions of "
        "the log (consumers reading committed data would see aborted records, or skip committed ones)"),
    _companion("snapshot-schema", ERROR, "Kafka's `CorruptSnapshotException` messages; Kafka deletes the snapshot "
        "and rebuilds the state from the log"),
    _companion("snapshot-version", ERROR, "Kafka's `CorruptSnapshotException` messages; Kafka deletes the snapshot "
        "and rebuilds the state from the log"),
    _companion("snapshot-crc", ERROR, "Kafka's `CorruptSnapshotException` messages; Kafka deletes the snapshot and "
        "rebuilds the state from the log"),
    _companion("snapshot-trailing-bytes", WARNING, "bytes after the last whole producer entry of a snapshot"),
    _companion("snapshot-duplicate-producer", WARNING, "a producer id listed twice in a snapshot"),
    _companion("snapshot-entry-after-offset", ERROR, "an entry's last offset or open transaction at or after the "
        "snapshot's own offset"),
    _companion("snapshot-beyond-log-end", WARNING, "snapshot offset above the log end offset (Kafka deletes it at "
        "load)"),
    _companion("checkpoint-malformed", ERROR, "Kafka's `CheckpointFile` errors (and invalid UTF-8, where Kafka's "
        "reader throws)"),
    _companion("checkpoint-version", ERROR, "Kafka's `CheckpointFile` errors (and invalid UTF-8, where Kafka's "
        "reader throws)"),
    _companion("checkpoint-count", ERROR, "Kafka's `CheckpointFile` errors (and invalid UTF-8, where Kafka's reader "
        "throws)"),
    _companion("checkpoint-encoding", ERROR, "Kafka's `CheckpointFile` errors (and invalid UTF-8, where Kafka's "
        "reader throws)"),
    _companion("checkpoint-duplicate", WARNING, "a partition listed twice in a log-directory checkpoint"),
    _companion("checkpoint-negative", ERROR, "a negative partition or offset in a log-directory checkpoint"),
    _companion("leader-epoch-negative", ERROR, "a negative epoch or start offset in the leader epoch checkpoint"),
    _companion("leader-epoch-not-increasing", ERROR, "epochs or start offsets of the leader epoch checkpoint do not "
        "increase"),
    _companion("leader-epoch-beyond-log-end", WARNING, "a start offset beyond the log end offset"),
    _companion("leader-epoch-missing", WARNING, "deep: an epoch found in the batches is not in the checkpoint"),
    _companion("leader-epoch-differs", WARNING, "deep: the checkpoint's start offset of an epoch is not where the "
        "batches have it"),
    _companion("partition-metadata-topic-id", ERROR, "not a 22-character base64 UUID, or the zero UUID (Kafka "
        "refuses it)"),
    _companion("index-too-large", WARNING, "more than 5,242,880 entries (4x Kafka's default maximum): only that "
        "many are checked, memory stays bounded"),
    _companion("timeindex-too-large", WARNING, "more than 5,242,880 entries (4x Kafka's default maximum): only that "
        "many are checked, memory stays bounded"),
    _companion("index-truncated", ERROR, "the file shrank while being read"),
    _companion("file-name-invalid", ERROR, "a companion file name without a base offset"),
    _companion("txnindex-log-missing", ERROR, "no segment .log beside this transaction index"),
    _companion("txnindex-log-unreadable", ERROR, "the segment .log beside this transaction index cannot be read"),
]

CODES: dict[str, Code] = {c.name: c for c in _VERIFY + _COMPANION_FILES}
assert len(CODES) == len(_VERIFY) + len(_COMPANION_FILES), "a code is registered twice"
