"""Segments to ``pyarrow.RecordBatch`` es in the ``kafka-log`` schema (a library: no Spark needed).

>>> from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices     # doctest: +SKIP
>>> for rb in read_slices([SegmentSlice("orders-0/00000000000000000000.log", "orders", 0)], ReadOptions()):
...     print(rb.num_rows)

Per-record columns (offset, timestamp, key, value, headers) come from a column builder
(:mod:`kdump.spark.builder`: compiled when built, or its pure twin) that takes a magic-2 batch's records as
they are serialized, and every record it does not take (magic 0/1, damage) from kdump's own decoder.
Columns that are constant within a Kafka batch (topic, partition, magic, codec, ...) are kept as runs and
expanded once per Arrow batch. An Arrow batch is cut at ``max_rows`` rows or when its keys, values and
headers reach ``max_bytes`` (binary offsets are 32-bit), between Kafka batches; a Kafka batch's records are
added 16,384 at a time (``RECORDS_PER_CHUNK``), so one declaring more (a hostile batch of millions of empty
records) is cut between those chunks: an Arrow batch holds at most ``max_rows`` + 16,384 rows, and memory is
bounded by the decompressed batch and that, not by the count a batch declares. Small segments read by one task share
Arrow batches.

Damage: in ``failfast`` mode (failOnDataLoss=true) the first damaged region raises :class:`DamagedData` naming the
file, the bytes and the offsets lost (zero padding at a segment's end loses nothing and does not); otherwise damaged
regions are skipped, each reported once through ``on_damage(location, FormatError)`` (the readable records
are still returned). A batch whose CRC does not match is damage when ``check_crcs`` (Kafka's consumer
default); a truncated tail of the active segment is not.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa

from kdump.format.columns import RECORDS_PER_CHUNK
from kdump.format.legacy import LegacyRun
from kdump.format.v2 import parse_records
from kdump.read.damage import Damage
from kdump.spark import _source
from kdump.spark.builder import add_columns, make_builder
from kdump.spark.schema import DECODED_FROM, KAFKA_COLUMNS, RECORD_COLUMNS, arrow_schema

log = logging.getLogger("kdump.spark")

if TYPE_CHECKING:
    from kdump.spark.txn import TxnFilter


class DamagedData(_source.KdumpError):
    """A damaged region met in FAILFAST mode."""


@dataclass(frozen=True)
class SegmentSlice:
    """A byte range of one segment: the unit a task reads. ``end`` None = to the end of the file."""

    location: str  # local path or a URI pyarrow.fs opens (s3://, hdfs://)
    topic: str | None
    partition: int | None
    start: int = 0
    end: int | None = None
    size: int = 0  # bytes in the slice (for planning)
    active: bool = False  # ends at the end of the active segment: a partial last entry is still being written
    txns: TxnFilter | None = None  # read_committed: the partition's filter
    offsets: tuple[int, int] | None = None  # only records with first <= offset < end (the read's bounds)

    @property
    def name(self) -> str:
        return self.location.rstrip("/").rsplit("/", 1)[-1]


@dataclass
class ReadOptions:
    columns: tuple = tuple(KAFKA_COLUMNS)
    include_control: bool = False
    failfast: bool = False
    check_crcs: bool = True
    max_rows: int = 1 << 17
    max_bytes: int = 64 << 20
    max_batch_bytes: int = _source.DEFAULT_MAX_DECOMPRESSED_BYTES
    live: bool = False
    isolation: str = "read_uncommitted"  # or read_committed (kdump.spark.txn)
    backend: str = "auto"  # "auto" (compiled when built), "compiled", "python"
    storage_options: dict = field(default_factory=dict)
    schemas: str | None = None  # where the keyJson/valueJson/...SchemaId columns' schemas are (kdump.spark.decoded)


# Batch-constant columns: name -> how to get it from the batch fields (and the slice).
def _constant(name, fields, sl):
    if name == "topic":
        return sl.topic
    if name == "partition":
        return sl.partition
    if name == "segment":
        return sl.location
    return fields[name]


class ArrowAssembler:
    """Collects the records of consecutive Kafka batches and cuts them into Arrow batches."""

    def __init__(self, options: ReadOptions):
        self.options = options
        self.columns = list(options.columns)
        self.schema = arrow_schema(self.columns)
        self.builder = make_builder(self.columns, options.backend)
        self.constant_names = [c for c in self.columns if c not in RECORD_COLUMNS and c not in DECODED_FROM]
        self.decoded_names = [c for c in self.columns if c in DECODED_FROM]
        self.runs: list[tuple[tuple, int]] = []  # (constant values, records)
        self.records = 0  # total records added (all Arrow batches)
        # a batch-level column that differs from one plain message to the next, whatever their kind
        self.per_message = any(c in self.constant_names for c in _PER_MESSAGE_COLUMNS)

    def add_batch(self, batch, sl: SegmentSlice, on_damage) -> Iterator[pa.RecordBatch]:
        """Add one Kafka batch's records, a chunk of at most ``RECORDS_PER_CHUNK`` at a time (skipping the rest,
        with a report, if they cannot be read); yields an Arrow batch whenever the builder is full after a chunk,
        so that a Kafka batch declaring millions of records is cut into Arrow batches of bounded rows. A run of
        plain magic 0/1 messages (:class:`~kdump.format.legacy.LegacyRun`) is added as its messages one by one
        would be (:meth:`_add_run`)."""
        if type(batch) is LegacyRun:
            yield from self._add_run(batch, sl)
            return
        pending = 0  # records of this batch added since its last run was recorded
        fields = None  # the batch-constant values (from the first chunk)
        first_offset = last_offset = error = None
        try:
            for k, (added, first, last, error) in enumerate(self._chunks(batch, sl.offsets)):
                if k == 0:
                    first_offset = first
                if last is not None:
                    last_offset = last
                pending += added
                self.records += added
                if self.full and error is None:
                    fields = self._run(batch, sl, fields, first_offset, pending)
                    pending = 0
                    yield self._flush()
        except _source.FormatError as e:
            error = e.at(batch.position).detached()  # kept past the handler: no traceback holding this frame
        if error is not None:
            on_damage(sl, Damage.of_batch(batch, error, None if last_offset is None else last_offset + 1))
        if pending:
            self._run(batch, sl, fields, first_offset, pending)

    def _add_run(self, run: LegacyRun, sl: SegmentSlice) -> Iterator[pa.RecordBatch]:
        """A run of intact plain magic 0/1 messages, from its bytes (the builder's ``add_plain``: in compiled code
        when built, no Python object per message), with what the messages one by one would give: only those in
        the read's offset bounds and below a read_committed read's last stable offset (what ``slice_batches``
        drops of a legacy message), an Arrow batch cut after the message that fills it, and the batch-level
        columns of the first message of each stretch of one magic and timestamp type (of each message where a
        column differs for each: ``position``, ``baseOffset``)."""
        b, options = self.builder, self.options
        lo, hi = sl.offsets if sl.offsets is not None else (None, None)
        lso = sl.txns.last_stable_offset if sl.txns is not None else None
        if lso is not None:
            hi = lso if hi is None else min(hi, lso)
        at, left = 0, run.count
        while left:
            rows = b.rows
            walked = b.add_plain(run.data, at, left, lo, hi, options.max_rows, options.max_bytes, self.per_message)
            assert walked > 0  # (every message of a run reads: its walk read them)
            added = b.rows - rows
            if added:
                self.records += added
                first = run.message_from(b.first_at)
                self._run(first, sl, None, first.base_offset, added)
            at, left = b.resume_at, left - walked
            if self.full:
                yield self._flush()

    def _chunks(self, batch, offsets: tuple[int, int] | None = None) -> Iterator[tuple]:
        """(records added, first offset, last offset, error) per chunk of ``batch``'s records (first offset None
        where the builder took them): a magic-2 batch through the builder's ``add_v2`` chunk by chunk, every other
        batch, a chunk that ``add_v2`` does not take, and a batch that reaches past ``offsets`` (the read's
        bounds: only its records inside them are added), through kdump's record decoder."""
        b = self.builder
        limit = self.options.max_batch_bytes
        if not (batch.magic >= 2 and batch.records_count) or _straddles(batch, offsets):
            for cols in batch.column_chunks(limit, RECORDS_PER_CHUNK):
                added = add_columns(b, cols, b.want_headers, offsets)
                yield (added, cols.offsets[0] if cols.count else None, cols.offsets[-1] if cols.count else None,
                       cols.error)
            return
        buf, start, end = batch.records_payload(limit)
        count, base, base_ts, append = batch.records_count, batch.base_offset, batch.base_timestamp, batch.append_time
        i, at = 0, start
        while i < count and at is not None:
            stop = min(i + RECORDS_PER_CHUNK, count)
            n = b.add_v2(buf, start, end, count, base, base_ts, append, i, stop, at)
            if n >= 0:
                at = b.resume_at if b.resume_at >= 0 else None
                i += n  # the pure builder's decoder may end a chunk early (its header and byte budgets)
                yield n, None, b.last_offset if n else None, None
                continue
            # not plainly well formed: kdump's decoder for this chunk (the same records, and the error if any)
            cols = parse_records(buf, start, end, count, base, base_ts, append, i, stop, at)
            if cols.error is not None:
                cols.error.at(batch.position)
            add_columns(b, cols, b.want_headers)
            at = cols.resume_at
            i += cols.count
            yield (cols.count, cols.offsets[0] if cols.count else None, cols.offsets[-1] if cols.count else None,
                   cols.error)
            if cols.error is not None:
                return

    def _run(self, batch, sl: SegmentSlice, fields, first_offset, records: int):
        """Record that the builder's last ``records`` rows are ``batch``'s (its constant columns); returns the
        constant values, computed once per batch."""
        if self.constant_names:
            if fields is None:
                values = _source.batch_fields(batch, first_offset, "crcValid" in self.constant_names)
                fields = tuple(_constant(c, values, sl) for c in self.constant_names)
            self.runs.append((fields, records))
        return fields

    @property
    def full(self) -> bool:
        return self.builder.rows >= self.options.max_rows or self.builder.nbytes >= self.options.max_bytes

    def flush(self) -> pa.RecordBatch | None:
        return self._flush() if self.builder.rows else None

    def _flush(self) -> pa.RecordBatch:
        arrays = self.builder.finish()
        if self.decoded_names:
            from kdump.spark.decoded import decoded_arrays
            arrays.update(decoded_arrays(arrays, self.decoded_names, self.options.schemas))
        if self.constant_names:
            arrays.update(_expand_runs(self.runs, self.constant_names, self.schema))
        self.runs = []
        return pa.RecordBatch.from_arrays([arrays[c] for c in self.columns], schema=self.schema)


def _expand_runs(runs, names, schema) -> dict:
    """Batch-constant columns from ``(values, records)`` runs: one repeated scalar where a column has a
    single value in all runs (the usual case), a ``take`` from the run values otherwise."""
    import numpy as np
    n = sum(count for _, count in runs)
    take = None
    out = {}
    for k, name in enumerate(names):
        typ = schema.field(name).type
        first = runs[0][0][k]
        if all(r[0][k] == first for r in runs):
            out[name] = pa.repeat(pa.scalar(first, typ), n)
            continue
        if take is None:
            counts = np.fromiter((c for _, c in runs), dtype=np.int64, count=len(runs))
            take = pa.array(np.repeat(np.arange(len(runs), dtype=np.int32), counts))
        out[name] = pa.array([r[0][k] for r in runs], typ).take(take)
    return out


def log_damage(sl, error):
    """The default ``on_damage``: one line on the task's stderr per damaged region skipped."""
    log.warning("kdump: %s: %s", sl.location, error)


def read_slices(slices: Iterable[SegmentSlice], options: ReadOptions,
                on_damage: Callable | None = None) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the records of ``slices``, in order (one task's work)."""
    asm = ArrowAssembler(options)
    report = on_damage or log_damage

    def damaged(sl, error):
        # the read layer's one policy (Damage.fails): a crash-cut tail, which Kafka drops too, never fails a read
        if options.failfast and (not isinstance(error, Damage) or error.fails):
            raise DamagedData(f"{sl.location}: {error} (failOnDataLoss=true, mode FAILFAST: "
                              "failOnDataLoss=false reads past it)")
        report(sl, error)

    for sl in slices:
        for batch in slice_batches(sl, options, damaged):
            yield from asm.add_batch(batch, sl, damaged)
            if asm.full:
                yield asm.flush()
    rb = asm.flush()
    if rb is not None:
        yield rb


def slice_batches(sl: SegmentSlice, options: ReadOptions, damaged) -> Iterator:
    """The Kafka batches of one slice that the options keep (control, CRC, pruning)."""
    from kdump.spark.remote import local_copy
    with local_copy(sl, options.storage_options) as path:
        # the resynchronising walk, as `kdump dump` reads: damage is skipped and reported, the walk goes on
        # a partial last entry is the writer's only for a stream (it waits for the rest), in the active segment
        # (``sl.active``); a batch read reports it as damage, as every kdump command does
        w = _source.walk(path, sl.start, sl.end, live=options.live and sl.active,
                         max_batch_bytes=options.max_batch_bytes, on_damage=lambda region: damaged(sl, region))
        for batch in w:
            if type(batch) is LegacyRun:  # intact plain messages: the assembler takes the offset bounds and LSO
                yield batch
                continue
            # the CRC first, as Kafka's consumer checks it before it skips a control batch: a batch whose
            # attributes say control may be a data batch whose attributes were damaged (its CRC says so)
            if options.check_crcs and not batch.is_valid():
                if not _outside(batch, sl.offsets):
                    damaged(sl, Damage.invalid_batch(batch))
                continue
            if batch.is_control and not options.include_control:
                continue
            if _outside(batch, sl.offsets):
                continue
            if sl.txns is not None and sl.txns.drops(batch):  # after the CRC check, as Kafka's consumer
                continue
            yield batch


# The batch-level columns whose value differs from one plain magic 0/1 message to the next.
_PER_MESSAGE_COLUMNS = ("position", "baseOffset")


def _outside(batch, offsets: tuple[int, int] | None) -> bool:
    """True when no record of ``batch`` lies in ``offsets`` ``[first, end)``, decided from its header alone (a
    compressed legacy wrapper's first offset needs decompression: only its last one is used)."""
    if offsets is None:
        return False
    first, end = offsets
    return batch.last_offset < first or (batch.magic >= 2 and batch.base_offset >= end)


def _straddles(batch, offsets: tuple[int, int] | None) -> bool:
    """True when ``batch`` holds records on both sides of a bound of ``offsets``."""
    return offsets is not None and (batch.base_offset < offsets[0] or batch.last_offset >= offsets[1])
