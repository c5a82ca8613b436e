"""Seed inputs for the fuzz targets (tests/fuzz/targets.py), from the corpus and fixtures, in each target's
input layout: whole files for the file targets, batches cut out of the segments for the record-level ones
(their records payloads and wrappers' inner sets decompressed), records of the internal-topic segments for
the decoders, and every message of the schema tables at every version for the schema target.

``seeds(target)`` yields ``(name, bytes)``; :func:`write_seeds` writes them into a directory (tools/fuzz.py's
working corpus).
"""
from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from tests.fuzz import targets as T

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"
SEED_DIRS = (FIXTURES / "corpus", FIXTURES / "generated", FIXTURES / "corrupt")
MAX_SEED = 64 << 10  # bytes kept of a file seed: fuzzing works on small inputs
MAX_PER_TARGET = 400
LIMIT = 1 << 20


def _files(pattern: str) -> list[Path]:
    found: list[Path] = []
    for d in SEED_DIRS:
        found.extend(sorted(d.rglob(pattern)))
    return found


def _batches(max_files: int | None = None):
    """(file, batch) for the batches of the fixture segments (Kafka's walk, to the first damage)."""
    from kdump.read.segment import SegmentReader
    for path in _files("*.log")[:max_files]:
        if path.stat().st_size > (8 << 20):
            continue
        with SegmentReader(path) as reader:
            for n, batch in enumerate(reader.batches()):
                if n >= 40:
                    break
                yield path, batch


def _entry_input(batch) -> bytes:
    entry = batch.entry_bytes()
    return entry[:8] + entry[12:]  # the offset, then the body (the target takes the size from the input)


def _segment() -> Iterator[tuple[str, bytes]]:
    for path in _files("*.log"):
        with open(path, "rb") as f:
            yield str(path.relative_to(ROOT)), f.read(MAX_SEED)


def _plain_run() -> Iterator[tuple[str, bytes]]:
    """The fixture segments that hold runs of plain magic 0/1 messages."""
    from kdump.format.legacy import LegacyRun
    from kdump.read.segment import SegmentReader
    for name, data in _segment():
        with SegmentReader(ROOT / name) as reader:
            if any(isinstance(item, LegacyRun) for item in reader.runs()):
                yield name, data


def _v2_batch() -> Iterator[tuple[str, bytes]]:
    for path, batch in _batches():
        if batch.magic == 2:
            yield f"{path.relative_to(ROOT)}@{batch.position}", _entry_input(batch)


def _legacy_entry() -> Iterator[tuple[str, bytes]]:
    for path, batch in _batches():
        if batch.magic < 2:
            yield f"{path.relative_to(ROOT)}@{batch.position}", _entry_input(batch)


def _v2_records() -> Iterator[tuple[str, bytes]]:
    from kdump.errors import KdumpError
    for path, batch in _batches():
        if batch.magic != 2 or not batch.records_count:
            continue
        try:
            buf, start, end = batch.records_payload(LIMIT)
        except KdumpError:
            continue
        head = T.V2_RECORDS_HEAD.pack(batch.records_count, 1 if batch.append_time is not None else 0,
                                      batch.base_offset, batch.base_timestamp)
        yield f"{path.relative_to(ROOT)}@{batch.position}", head + bytes(buf[start:end])


def _legacy_inner() -> Iterator[tuple[str, bytes]]:
    from kdump.errors import KdumpError
    for path, batch in _batches():
        if batch.magic == 2 or not batch.is_compressed:
            continue
        try:
            inner = batch.inner_set(LIMIT)
        except KdumpError:
            continue
        yield f"{path.relative_to(ROOT)}@{batch.position}", bytes([batch.magic]) + bytes(inner)


def _named(*patterns: str) -> Iterator[tuple[str, bytes]]:
    for pattern in patterns:
        for path in _files(pattern):
            yield str(path.relative_to(ROOT)), path.read_bytes()[:MAX_SEED]


def _offset_index() -> Iterator[tuple[str, bytes]]:
    from kdump.read.offset_index import encode_entry
    yield from _named("*.index")
    yield "built", b"".join(encode_entry(1000, 1000 + 7 * i, 4096 * i) for i in range(20)) + bytes(8 * 5)


def _time_index() -> Iterator[tuple[str, bytes]]:
    from kdump.read.time_index import encode_entry
    yield from _named("*.timeindex")
    yield "built", b"".join(encode_entry(1000, 1_700_000_000_000 + i, 1000 + 3 * i) for i in range(20)) + bytes(12 * 3)


def _txn_index() -> Iterator[tuple[str, bytes]]:
    from kdump.read.txn_index import AbortedTxn
    yield from _named("*.txnindex")
    txns = [AbortedTxn(producer_id=p, first_offset=1000 + p, last_offset=1100 + p, last_stable_offset=1200 + p)
            for p in range(4)]
    yield "built", b"".join(t.encode() for t in txns)


def _checkpoint() -> Iterator[tuple[str, bytes]]:
    for i, name in enumerate(T.CHECKPOINT_NAMES):
        for _, data in _named(name):
            yield f"{name}:{i}", bytes([i]) + data
    yield "offsets", bytes([1]) + b"0\n2\ntopic-a 0 17\ntopic-b 3 9000\n"
    yield "metadata", bytes([5]) + b"version: 0\ntopic_id: 5yqxN5E-TsWoXMMbZFHD_g\n"


def _decoders() -> Iterator[tuple[str, bytes]]:
    from kdump.read.segment import SegmentReader
    wanted = {"__consumer_offsets": (0, 1), "__transaction_state": (2, 3), "__share_group_state": (4, 5),
              "__cluster_metadata": (6,), "bootstrap": (6,), "__remote_log_metadata": (7,)}
    for path in _files("*"):
        if path.suffix not in (".log", ".checkpoint") or path.stat().st_size > (8 << 20):
            continue
        choices = next((c for topic, c in wanted.items() if topic in str(path)), None)
        if choices is None and "consumer-offsets" in str(path):
            choices = (0, 1)
        if choices is None and "kraft" in str(path):
            choices = (6,)
        if choices is None:
            continue
        with SegmentReader(path) as reader:
            n = 0
            for batch in reader.batches():
                try:
                    records = list(batch.records(LIMIT))
                except Exception:
                    continue
                for r in records:
                    if n >= 60:
                        break
                    n += 1
                    for c in choices:
                        key = b"" if r.key is None else bytes(r.key)
                        head = T.RECORD_HEAD.pack(c | (0x80 if r.value is None else 0),
                                                  -1 if r.key is None else len(key))
                        yield f"{path.relative_to(ROOT)}@{r.offset}:{c}", head + key + bytes(r.value or b"")


def _schema() -> Iterator[tuple[str, bytes]]:
    from kdump.decode.internal import tables
    from kdump.format.schema import default_struct, write_struct
    for i, (group, name) in enumerate(T.schema_messages()):
        schema = tables.schema(group, name)
        lo, hi = schema.versions
        for version in sorted({lo, hi, (lo + hi) // 2}):
            if version > 255:
                continue
            try:
                data = write_struct(default_struct(schema, version), schema, version)
            except (ValueError, KeyError):
                continue
            yield f"{group}.{name}.v{version}", T.SCHEMA_HEAD.pack(i, version) + data


AGREE_SEEDS = ("kafka-generated/v2-none", "kafka-generated/v1-gzip-createtime", "kafka-generated/v0-none",
               "kafka-generated/v2-transactional", "kafka-generated/mixed-magic")
AGREE_SEED_BYTES = 16 << 10  # every command runs on each input: small ones


def _agree() -> Iterator[tuple[str, bytes]]:
    """A few corpus segments of each magic (cut to 16 KiB), for the ``agree`` target, which runs every command on
    each input: kept few, so that the suite replays them in seconds."""
    for case in AGREE_SEEDS:
        path = FIXTURES / "corpus" / case / "00000000000000000000.log"
        with open(path, "rb") as f:
            yield case, f.read(AGREE_SEED_BYTES)


SEEDS = {
    "agree": _agree,
    "segment": _segment,
    "v2-records": _v2_records,
    "v2-batch": _v2_batch,
    "legacy-entry": _legacy_entry,
    "legacy-inner": _legacy_inner,
    "plain-run": _plain_run,
    "offset-index": _offset_index,
    "time-index": _time_index,
    "txn-index": _txn_index,
    "snapshot": lambda: _named("*.snapshot"),
    "checkpoint": _checkpoint,
    "decoders": _decoders,
    "schema": _schema,
}


def seeds(target: str) -> list[tuple[str, bytes]]:
    """The seeds of ``target``, deduplicated, at most :data:`MAX_PER_TARGET` (spread over the sources)."""
    unique: dict[bytes, str] = {}
    for name, data in SEEDS[target]():
        unique.setdefault(data, name)
    items = [(name, data) for data, name in unique.items()]
    if len(items) > MAX_PER_TARGET:
        step = len(items) / MAX_PER_TARGET
        items = [items[int(i * step)] for i in range(MAX_PER_TARGET)]
    return items


def write_seeds(target: str, directory: str) -> int:
    """Write ``target``'s seeds into ``directory`` (named by content hash, as libFuzzer names its corpus)."""
    os.makedirs(directory, exist_ok=True)
    items = seeds(target)
    for _, data in items:
        with open(os.path.join(directory, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
    return len(items)


