"""Access to the reference corpus copied into fixtures/corpus (real Kafka files + Kafka's own answers).

The dumps there were printed by Kafka's Scala DumpLogSegments (commit 1eb7644349cb). kdump's default
text is the newest (Java) tool's; :func:`scala_to_java_stdout` / :func:`scala_to_java_stderr` apply the
documented differences (spec §2.3, §2.7, §10) so both forms can be compared with the same files.
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = FIXTURES / "corpus"

LOG_FILES = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".log", ".checkpoint") and p.is_file())

# which dump output goes with which flags
MODES = {
    "shallow": ([], "dumplog-shallow"),
    "deep": (["--deep-iteration"], "dumplog"),
    "data": (["--deep-iteration", "--print-data-log"], "dumplog-data"),
}


def case_id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


def expected(path: Path, stem: str) -> tuple[bytes, bytes | None]:
    """(stdout, stderr or None) Kafka printed for this file in that mode."""
    out = (path.parent / f"{path.name}.{stem}.txt").read_bytes()
    err_path = path.parent / f"{path.name}.{stem}.stderr.txt"
    return out, (err_path.read_bytes() if err_path.exists() else None)


def kafka_died(stderr: bytes | None) -> bool:
    return stderr is not None and b"Exception in thread" in stderr


_BRACE = re.compile(rb"(isValid: (?:true|false) crc: \d+)\}")


def scala_to_java_stdout(text: bytes) -> bytes:
    """The Java tool prints no stray '}' after the crc of legacy record lines."""
    return _BRACE.sub(rb"\1", text)


def scala_to_java_stderr(text: bytes) -> bytes:
    """Java sorts each file's non-consecutive pairs by the previous offset (a TreeMap); Scala printed them
    in reverse discovery order."""
    lines = text.decode().split("\n")
    out, block = [], []

    def flush():
        pairs = [tuple(int(x) for x in re.findall(r"-?\d+", b)) for b in block]
        out.extend(f"  {a} is followed by {b}" for a, b in sorted(dict(pairs).items()))
        block.clear()

    for line in lines:
        if line.startswith("  ") and "is followed by" in line:
            block.append(line)
        else:
            flush()
            out.append(line)
    flush()
    return "\n".join(out).encode()


def load_json(path: Path) -> dict:
    return json.loads((path.parent / f"{path.name}.json").read_text())


def abs_dir_placeholder(text: bytes, directory: Path) -> bytes:
    """The corpus writes the directory in 'Non-consecutive offsets in' reports as '<dir>/'."""
    return text.replace(os.fsencode(str(directory.resolve())) + b"/", b"<dir>/")


# --- kdump's objects in the shape of Kafka's field-level view (the corpus ``.json`` files) ----------------
TS_NAMES = {-1: "NO_TIMESTAMP_TYPE", 0: "CREATE_TIME", 1: "LOG_APPEND_TIME"}
CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]


def hexb(b):
    return None if b is None else b.hex()


def batch_view(batch) -> dict:
    """The fields of Kafka's ``.json`` for one batch (``raw`` = header fields straight from the bytes)."""
    v = {
        "position": batch.position, "size": batch.size, "baseOffset": batch.base_offset,
        "lastOffset": batch.last_offset, "magic": batch.magic, "codec": CODECS[batch.codec_id], "crc": batch.crc,
        "crcValid": batch.is_valid(), "timestampType": TS_NAMES[int(batch.timestamp_type)],
        "maxTimestamp": batch.max_timestamp, "isTransactional": batch.is_transactional,
        "isControl": batch.is_control, "producerId": batch.producer_id, "producerEpoch": batch.producer_epoch,
        "baseSequence": batch.base_sequence, "lastSequence": batch.last_sequence,
        "partitionLeaderEpoch": batch.partition_leader_epoch, "deleteHorizonMs": batch.delete_horizon_ms,
        "recordCount": batch.records_count, "valid": batch.is_valid(),
    }
    if batch.magic == 2:
        v["raw"] = {"batchLength": batch.length, "attributes": batch.attributes,
                    "lastOffsetDelta": batch.last_offset_delta, "baseTimestamp": batch.base_timestamp,
                    "maxTimestamp": batch.max_timestamp, "recordsCount": batch.records_count}
    else:
        m = batch.message
        v["raw"] = {"messageSize": m.size, "attributes": m.attributes}
        if m.magic == 1:
            v["raw"]["timestamp"] = m.timestamp
    return v


def record_view(batch, r) -> dict:
    """The fields of Kafka's ``.json`` for one record (transaction markers with their control part)."""
    from kdump.format.control import parse_control_key, parse_end_txn_marker
    from kdump.format.types import ControlRecordType
    v = {"offset": r.offset, "timestamp": r.timestamp, "timestampType": TS_NAMES[int(r.timestamp_type)],
         "key": hexb(r.key), "value": hexb(r.value),
         "headers": [{"key": k, "value": hexb(val)} for k, val in r.headers],
         "sequence": r.sequence, "sizeInBytes": r.size_in_bytes}
    if batch.magic < 2:
        v["legacyMagic"] = r.magic
        v["legacyCrc"] = r.crc
    if batch.is_control:
        ctype, _ = parse_control_key(r.key)
        if ctype in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
            v["control"] = {"type": ctype.name,
                            "coordinatorEpoch": parse_end_txn_marker(ctype, r.value).coordinator_epoch}
    return v
