"""Fuzz targets: one function per reader, ``target(data: bytes) -> None``, for atheris (tools/fuzz.py) and for
the plain replay in the suite (tests/test_fuzz_replay.py).

The invariant every target checks: whatever the bytes, the only exceptions that may leave kdump's readers are
kdump's own data errors (:class:`kdump.errors.KdumpError` and its subclasses, FormatError, CodecError ...);
anything else (IndexError, OverflowError, struct.error, MemoryError, RecursionError, UnicodeError ...) escapes
the target and is a crash. Each target runs the input on the compiled and on the pure-Python backend
(:func:`kdump._backend.use`) and is differential: both must give the same result, or both raise kdump's error
with the same class and code (:class:`Mismatch` otherwise). Decompression is bounded by :data:`LIMIT` and a
segment's entries by :data:`MAX_BATCH`, so memory per input stays small.

Inputs that are not a file's bytes as they are carry a small header, documented on each target; :mod:`tests.fuzz.seeds`
builds seeds in the same layout from the corpus and fixtures.
"""
from __future__ import annotations

import os
import struct
import tempfile
import zlib
from collections.abc import Callable

from kdump import _backend
from kdump.errors import KdumpError
from kdump.format import legacy as LG
from kdump.format import v2 as V2
from kdump.format.legacy import LegacyBatch
from kdump.format.v2 import RecordBatch

LIMIT = 1 << 20  # decompressed bytes per batch: a bomb is refused, not inflated
MAX_BATCH = 1 << 18  # entries above it take the segment reader's large-entry path
CHUNK = 3  # small record chunks, so that chunked decoding (resume_at) is exercised on small inputs
BACKENDS = ("compiled", "python") if _backend.COMPILED_AVAILABLE else ("python",)


class Mismatch(AssertionError):
    """The compiled and the pure-Python backend disagree on one input."""


# --- comparing results --------------------------------------------------------------------------------------
def freeze(obj, depth: int = 0):
    """A comparable value for a reader's result: slotted and plain objects become tuples of their fields
    (buffers left out: where they point is compared instead), errors become (class, code)."""
    if depth > 8:
        return "..."
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, BaseException):
        return (type(obj).__name__, getattr(obj, "code", None))
    if isinstance(obj, (list, tuple)):
        return tuple(freeze(x, depth + 1) for x in obj)
    if isinstance(obj, dict):
        return tuple(sorted((str(k), freeze(v, depth + 1)) for k, v in obj.items()))
    names = getattr(type(obj), "__slots__", None) or sorted(getattr(obj, "__dict__", {}))
    fields = [(n, freeze(getattr(obj, n, None), depth + 1)) for n in names if n not in ("buf", "body", "message")]
    return (type(obj).__name__, tuple(fields))


def outcome(fn: Callable, *args):
    """``("ok", frozen result)`` or ``("error", class, code)`` for kdump's own errors; any other exception
    propagates (a crash)."""
    try:
        return ("ok", freeze(fn(*args)))
    except KdumpError as e:
        return ("error", type(e).__name__, getattr(e, "code", None))


def differential(fn: Callable, *args):
    """Run ``fn(*args)`` on every backend; the outcomes must be equal. Returns the last."""
    results = []
    previous = _backend.BACKEND
    try:
        for name in BACKENDS:
            _backend.use(name)
            results.append((name, outcome(fn, *args)))
    finally:
        _backend.use(previous)
    first = results[0][1]
    for name, result in results[1:]:
        if result != first:
            raise Mismatch(f"{results[0][0]}: {_short(first)}\n{name}: {_short(result)}")
    return first


def _short(value) -> str:
    text = repr(value)
    return text if len(text) < 2000 else text[:2000] + "..."


# --- record-level targets -------------------------------------------------------------------------------------
V2_RECORDS_HEAD = struct.Struct(">iBqq")  # count, flags (bit 0: LogAppendTime), base offset, base timestamp


def _v2_records(data: bytes):
    count, flags, base_offset, base_timestamp = V2_RECORDS_HEAD.unpack_from(data, 0)
    start, end = V2_RECORDS_HEAD.size, len(data)
    append_time = base_timestamp if flags & 1 else None
    whole = V2.parse_records(data, start, end, count, base_offset, base_timestamp, append_time)
    summary = V2.summarize_records(data, start, end, count, base_offset, base_timestamp, append_time)
    chunks = []
    first, at = 0, start
    for _ in range(count if count > 0 else 1):
        part = V2.parse_records(data, start, end, count, base_offset, base_timestamp, append_time, first,
                                first + CHUNK, at)
        chunks.append(part)
        if part.resume_at is None or part.error is not None:
            break
        first += part.count
        at = part.resume_at
    return whole, summary, chunks


def fuzz_v2_records(data: bytes) -> None:
    """The v2 record decoder (``parse_records``/``summarize_records``, whole and in chunks) on a records
    payload. Layout: :data:`V2_RECORDS_HEAD` (21 bytes), then the serialized records."""
    if len(data) < V2_RECORDS_HEAD.size:
        return
    differential(_v2_records, data)


def _batch_records(batch) -> tuple:
    """Everything a batch gives from its records: whole, in chunks, summaries (v2), its first offset and
    inner messages (legacy)."""
    out: list = [outcome(batch.columns, LIMIT)]
    out.append(outcome(lambda: list(batch.column_chunks(LIMIT, CHUNK))))
    out.append(outcome(lambda: list(batch.records(LIMIT))))
    if isinstance(batch, RecordBatch):
        out.append(outcome(lambda: list(batch.summary_chunks(LIMIT, CHUNK))))
        out.append((batch.is_valid(), batch.last_offset, batch.last_sequence, batch.timestamp_type))
    else:
        fresh = LegacyBatch(batch.position, batch.message.offset, batch.message.body)
        out.append(outcome(lambda: fresh.base_offset))
        out.append((batch.is_valid(), batch.last_offset, batch.timestamp_type, batch.is_compressed))
        if batch.is_compressed:
            out.append(outcome(batch.inner_messages, LIMIT))
    return tuple(out)


ENTRY_HEAD = struct.Struct(">q")  # the entry's offset; the body follows (its size is the input's length)


def _entry(data: bytes, want: type):
    (offset,) = ENTRY_HEAD.unpack_from(data, 0)
    body = data[ENTRY_HEAD.size:]
    batch = want(0, offset, len(body), body) if want is RecordBatch else want(0, offset, body)
    return _batch_records(batch)


def fuzz_v2_batch(data: bytes) -> None:
    """A magic-2 batch (every codec): ``RecordBatch`` and its records. Layout: the 8-byte base offset, then
    the batch from its length-excluded body (partition leader epoch, magic, CRC ...)."""
    if len(data) <= ENTRY_HEAD.size + 4:
        return
    differential(_entry, data, RecordBatch)


def fuzz_legacy_entry(data: bytes) -> None:
    """A magic 0/1 entry: a plain message or a wrapper (every codec, nested wrappers): ``LegacyBatch``, its
    records, first offset and inner messages. Layout: the 8-byte offset, then the message from its CRC."""
    if len(data) <= ENTRY_HEAD.size + 4:
        return
    differential(_entry, data, LegacyBatch)


def _inner(data: bytes):
    magic = data[0] & 1
    inner = data[1:]
    whole = LG.inner_columns(inner, 0)
    parts = []
    pos, n = 0, 0
    while pos is not None and len(parts) < 1000:
        cols, offsets, pos = LG.inner_columns(inner, 0, pos, CHUNK, n)
        n += cols.count
        parts.append((cols, offsets, pos))
    summary = outcome(LG.inner_summary, inner, 0, magic)
    return whole, parts, summary


def fuzz_legacy_inner(data: bytes) -> None:
    """The inner message set of a wrapper, decompressed (``inner_columns``/``inner_summary``, whole and in
    chunks). Layout: one byte (bit 0: the wrapper's magic), then the inner messages."""
    if len(data) < 2:
        return
    differential(_inner, data)


# --- whole segment files --------------------------------------------------------------------------------------
class _Scratch:
    """One file per process under /dev/shm (tmpfs), rewritten for each input, named as Kafka names it."""

    def __init__(self):
        base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        self.dir = tempfile.mkdtemp(prefix="kdump-fuzz-", dir=base)

    def write(self, name: str, data: bytes) -> str:
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data)
        return path


_scratch: _Scratch | None = None


def scratch(name: str, data: bytes) -> str:
    global _scratch
    if _scratch is None:
        _scratch = _Scratch()
    return _scratch.write(name, data)


SEGMENT = "00000000000000000000.log"


def _segment(path: str):
    from kdump.read.segment import BadEntry, GoodBatch, SegmentReader

    out = []
    with SegmentReader(path, max_batch_bytes=MAX_BATCH) as reader:
        for event in reader.events():
            if isinstance(event, GoodBatch) and isinstance(event.batch, LG.LegacyRun):  # intact plain messages
                run = event.batch
                out.append(("run", run.position, run.size, freeze(run.summary), freeze(run.columns),
                            tuple(_batch_records(m) for m in run.messages()), *_run_consumers(run)))
            elif isinstance(event, GoodBatch):
                out.append(("good", event.batch.position, event.batch.size, _batch_records(event.batch)))
            elif isinstance(event, BadEntry):
                deep = _batch_records(event.batch) if event.batch is not None else None
                out.append(("bad", event.position, event.size, freeze(event.error), deep))
            else:
                out.append(freeze(event))
    with SegmentReader(path, max_batch_bytes=MAX_BATCH) as reader:
        out.append(tuple((b.position, b.magic) for b in reader.batches()))
        out.append(freeze(reader.tail))
    with SegmentReader(path, max_batch_bytes=MAX_BATCH) as reader:
        out.append(tuple(freeze(r) if isinstance(r, LG.LegacyRun) else (r.position, r.magic)
                         for r in reader.runs(CHUNK)))
        out.append(freeze(reader.tail))
    with SegmentReader(path, max_batch_bytes=MAX_BATCH) as reader:
        out.append(tuple(freeze(h) for h in reader.headers()))
        out.append(freeze(reader.tail))
    return out


def _run_consumers(run) -> tuple:
    """What the commands that take a run whole make of it, each with a compiled twin: stats' key digests and
    counts (``run.keys()``), the text dump's lines and the JSON dump's objects, deep with data."""
    from kdump.render import jsonl, kafka_text

    return (freeze(run.keys()),
            kafka_text.render_legacy_run(run, kafka_text.RUN_LINE_LABELS, "", True, True, False),
            jsonl.render_legacy_run_json(run, SEGMENT, jsonl.run_object_pieces(SEGMENT, True), True, True))


def fuzz_segment(data: bytes) -> None:
    """A ``.log`` file: ``SegmentReader``'s resynchronising walk (``events``) with every batch's records
    decoded and every run of plain messages taken whole as stats and the dumps take it, Kafka's walk
    (``batches``), the legacy-run walk (``runs``) and the header walk."""
    differential(_segment, scratch(SEGMENT, data))


def plain_messages(data: bytes) -> bytes:
    """``data`` made a segment of plain magic 0/1 messages as far as its entries' sizes frame it: each message's
    codec bits cleared and its CRC recomputed, so that mutated keys, values, lengths and timestamps pass the
    walk's CRC check and reach what takes a run of intact messages whole (a random mutation almost never
    keeps a CRC right)."""
    buf = bytearray(data)
    pos = 0
    while pos + PLAIN_HEAD.size + 6 <= len(buf):
        _, size = PLAIN_HEAD.unpack_from(buf, pos)
        message = pos + PLAIN_HEAD.size
        if size < 6 or message + size > len(buf):
            break
        buf[message + 5] &= 0xF8  # attributes: no codec (a wrapper is legacy-entry's)
        struct.pack_into(">I", buf, message, zlib.crc32(buf[message + 4:message + size]))
        pos = message + size
    return bytes(buf)


PLAIN_HEAD = struct.Struct(">qi")  # a log entry's offset and size


def _plain_runs(path: str):
    from kdump.read.segment import GoodBatch, SegmentReader

    out = []
    with SegmentReader(path, max_batch_bytes=MAX_BATCH) as reader:
        for event in reader.events():
            if isinstance(event, GoodBatch) and isinstance(event.batch, LG.LegacyRun):
                run = event.batch
                out.append((run.position, run.count, freeze(run.summary), freeze(run.columns),
                            *_run_consumers(run)))
            else:
                out.append((type(event).__name__, getattr(event, "position", None)))
    return out


def fuzz_plain_run(data: bytes) -> None:
    """Runs of plain magic 0/1 messages, their CRCs made right (:func:`plain_messages`): the run walk and what
    stats, the text dump and the JSON dump make of a run, compiled against pure. Layout: a ``.log`` file."""
    differential(_plain_runs, scratch(SEGMENT, plain_messages(data)))


# --- companion files ------------------------------------------------------------------------------------------
def _probe_targets(data: bytes) -> list[int]:
    """Lookup targets: the edges, and the first 8-byte words of the file (often near its entries)."""
    words = (int.from_bytes(data[i:i + 8], "big", signed=True) for i in range(0, min(len(data), 48), 8))
    return [0, -1, 1 << 62, *words]


def _index(path: str, kind: type, data: bytes):
    with kind(path) as index:
        out = [index.entries, index.partial_bytes, index.dump_entry_count(), index.valid_entry_count_fast(),
               index.last_entry(), index.sanity_problems(), list(index.iter_entries())]
        for target in _probe_targets(data):
            out.append(index.lookup(target))
            out.append(index.lookup(target, entries=index.dump_entry_count()))
        return out


def fuzz_offset_index(data: bytes) -> None:
    """A ``.index`` file: entries, Kafka's zero-tail rule, sanity check and lookups."""
    from kdump.read.offset_index import OffsetIndex
    differential(_index, scratch("00000000000000001000.index", data), OffsetIndex, data)


def fuzz_time_index(data: bytes) -> None:
    """A ``.timeindex`` file: entries, Kafka's zero-tail rule, sanity check and lookups."""
    from kdump.read.time_index import TimeIndex
    differential(_index, scratch("00000000000000001000.timeindex", data), TimeIndex, data)


def _txn_index(path: str):
    from kdump.read.txn_index import TxnIndexFile
    with TxnIndexFile(path) as index:
        return [index.count, index.partial_bytes,
                [(pos, txn, txn.kafka_repr(), txn.encode()) for pos, txn in index.entries()]]


def fuzz_txn_index(data: bytes) -> None:
    """A ``.txnindex`` file: its aborted-transaction entries."""
    differential(_txn_index, scratch("00000000000000001000.txnindex", data))


def _snapshot(path: str, data: bytes):
    from kdump.read.snapshot import parse_snapshot, read_snapshot
    return [read_snapshot(path), parse_snapshot(data)]


def fuzz_snapshot(data: bytes) -> None:
    """A producer-state ``.snapshot`` file."""
    differential(_snapshot, scratch("00000000000000001000.snapshot", data), data)


CHECKPOINT_NAMES = ("leader-epoch-checkpoint", "replication-offset-checkpoint", "recovery-point-offset-checkpoint",
                    "log-start-offset-checkpoint", "cleaner-offset-checkpoint", "partition.metadata")


def _checkpoint(path: str, data: bytes):
    from kdump.read.checkpoints import parse_any, topic_uuid
    cp = parse_any(path)
    return [cp, topic_uuid(cp), parse_any(path, data.decode("utf-8", "replace"))]


def fuzz_checkpoint(data: bytes) -> None:
    """A text checkpoint (leader-epoch, offset checkpoints, ``partition.metadata``). Layout: one byte
    choosing the file name (:data:`CHECKPOINT_NAMES`), then the file."""
    if not data:
        return
    name = CHECKPOINT_NAMES[data[0] % len(CHECKPOINT_NAMES)]
    differential(_checkpoint, scratch(name, data[1:]), data[1:])


# --- internal-topic decoders ----------------------------------------------------------------------------------
DECODERS = (("offsets", "java"), ("offsets", "scala"), ("transaction-log", "java"), ("transaction-log", "scala"),
            ("share-group-state", "java"), ("share-group-state", "scala"), ("cluster-metadata", "java"),
            ("remote-log-metadata", "java"))
RECORD_HEAD = struct.Struct(">Bi")  # decoder choice, key length (-1: null key); then key, then value


def _split_record(data: bytes):
    choice, key_len = RECORD_HEAD.unpack_from(data, 0)
    rest = data[RECORD_HEAD.size:]
    if key_len < 0:
        key = None
    else:
        key, rest = rest[:key_len], rest[key_len:]
    value = None if choice & 0x80 else rest
    return DECODERS[choice % len(DECODERS)], key, value


def _decode(data: bytes):
    from kdump.decode.internal import make_decoder
    (name, compat), key, value = _split_record(data)
    return make_decoder(name, compat).decode(7, key, value)


def fuzz_decoders(data: bytes) -> None:
    """The internal-topic record decoders (offsets, transaction log, share-group state, cluster and remote-log
    metadata, Java and Scala texts). Layout: :data:`RECORD_HEAD` (decoder in the low bits, bit 7: null value;
    key length, -1 for a null key), the key, the value."""
    if len(data) < RECORD_HEAD.size:
        return
    differential(_decode, data)


_STRUCTS: list | None = None


def schema_messages() -> list[tuple[str, str]]:
    """Every (group, message) of the generated schema tables, in a fixed order."""
    global _STRUCTS
    if _STRUCTS is None:
        from kdump.decode.internal import tables
        _STRUCTS = [(g, name) for g in tables.GROUPS for name in sorted(tables.module(g).MESSAGES)]
    return _STRUCTS


SCHEMA_HEAD = struct.Struct(">HB")  # message index (into schema_messages()), version; then the bytes


def _schema(data: bytes):
    from kdump.decode.internal import tables
    from kdump.format.schema import read_struct
    index, version = SCHEMA_HEAD.unpack_from(data, 0)
    messages = schema_messages()
    group, name = messages[index % len(messages)]
    return read_struct(data[SCHEMA_HEAD.size:], tables.schema(group, name), version)


def fuzz_schema(data: bytes) -> None:
    """``kdump.format.schema.read_struct`` on any message of the generated tables at any version. Layout:
    :data:`SCHEMA_HEAD`, then the message."""
    if len(data) < SCHEMA_HEAD.size:
        return
    differential(_schema, data)


def fuzz_agree(data: bytes) -> None:
    """The differential target across commands, in one process through the library calls behind them
    (:mod:`tests.fuzz.agree_lib`; :mod:`tests.fuzz.agree` is the slower form through the CLI): every command
    reads ``data`` (a ``.log`` file) alike."""
    from tests.fuzz.agree_lib import fuzz_agree_lib
    fuzz_agree_lib(data)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "agree": fuzz_agree,
    "segment": fuzz_segment,
    "v2-records": fuzz_v2_records,
    "v2-batch": fuzz_v2_batch,
    "legacy-entry": fuzz_legacy_entry,
    "legacy-inner": fuzz_legacy_inner,
    "plain-run": fuzz_plain_run,
    "offset-index": fuzz_offset_index,
    "time-index": fuzz_time_index,
    "txn-index": fuzz_txn_index,
    "snapshot": fuzz_snapshot,
    "checkpoint": fuzz_checkpoint,
    "decoders": fuzz_decoders,
    "schema": fuzz_schema,
}
