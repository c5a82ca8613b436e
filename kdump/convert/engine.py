"""The conversion engine: walk a segment batch by batch, group it into units, re-encode each unit.

A *unit* is what becomes one output batch (spec §6, corpus README "Conversion references"):

* a magic-2 batch;
* a compressed legacy wrapper;
* a *run* of consecutive uncompressed legacy messages with the same magic and timestamp type (and, for
  LogAppendTime, the same time), cut where ``max_batch_records`` / ``max_batch_bytes`` would be
  exceeded or where offsets stop increasing.

Each unit is then written in the target magic and codec:

* a unit already at the target magic and codec is **copied byte for byte** (Kafka: "batches already at
  the target magic are copied"); in a *down-conversion* (the segment has batches above the target
  magic: ``RecordsUtil.downConvert``) so is a unit below the target magic whose codec stays, unless
  ``all_in_target_magic``; an up-conversion (``LogValidator``) writes every unit in the target magic;
* to magic 2: one v2 batch per unit (``MemoryRecordsBuilder``: base offset = first record's offset,
  partition leader epoch -1 for new batches, magic-0 timestamps -1 under CreateTime, LogAppendTime
  kept with its time);
* to magic 0/1: a compressed unit becomes one wrapper with the same codec, an uncompressed one a
  message per record (``RecordsUtil.downConvert``); control batches, empty batches, headers and the
  producer/transaction fields are dropped and counted (:mod:`kdump.convert.losses`).

Offsets are always kept. Memory holds one source batch (or one run, bounded by ``max_batch_bytes``, and
never above ``record_limit``) at a time, its records decoded a chunk at a time, and one output batch, which is
refused once its records outgrow ``record_limit`` (what a reader takes; issue 22 item 2). Every record
handed to the output is also fed, in a canonical form, to a digest that the read-back verification recomputes
from the written file (:mod:`kdump.convert.output`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import NoReturn

from kdump import codec as _codec
from kdump.errors import EXIT_DATA, FormatError, KdumpError
from kdump.format import framing as F
from kdump.format import layout as L
from kdump.format import v2 as _v2
from kdump.format.canonical import canonical_record, canonical_records, update_canonical
from kdump.format.columns import RECORDS_PER_CHUNK
from kdump.format.legacy import LegacyMessage, LegacyRun, inner_columns
from kdump.format.legacy_builder import LegacyMessageBuilder, convert_message, encode_message, encode_messages
from kdump.format.names import CODEC_NAMES
from kdump.format.pieces import Pieces
from kdump.format.types import TimestampType
from kdump.format.v2_builder import RecordBatchBuilder, encode_run_records
from kdump.read.damage import Damage, foreign_start, readable
from kdump.read.segment import DEFAULT_MAX_DECOMPRESSED_BYTES, Stop

from .losses import Losses

# Kafka's broker default for message.max.bytes: the largest batch a broker accepts (1 MiB + LOG_OVERHEAD).
KAFKA_MESSAGE_MAX_BYTES = 1048588
NO_PARTITION_LEADER_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH: what a builder writes for new batches
INT32_MAX = 2**31 - 1

CT = TimestampType.CREATE_TIME
LAT = TimestampType.LOG_APPEND_TIME
NTT = TimestampType.NO_TIMESTAMP_TYPE


# the reason of a refusal for damaged input, which ConvertOptions.skip_damaged converts around (the command line's hint)
DAMAGED_INPUT = "damaged-input"


class ConversionRefused(KdumpError):
    """The input cannot be converted as asked: damaged data, zstd below magic 2, or a loss under --strict.

    ``code`` is a stable name (``crc-mismatch``, ``zstd-below-v2``, ``loss``, ...), ``position`` the byte
    position in the input where the problem is, when there is one.
    """

    exit_code = EXIT_DATA

    def __init__(self, code: str, message: str, position: int | None = None, *, reason: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or code  # the situation, for the command line's hint (kdump.commands.hints)
        self.position = position
        self.source: str | None = None  # the input file, filled in by convert_segment

    def __str__(self) -> str:
        return self.message if self.position is None else f"at byte {self.position}: {self.message}"


class Note(str):
    """A note of a conversion (its text, for people) with ``code``, the situation it tells of, by which the command
    line adds what a flag would change (:mod:`kdump.commands.hints`)."""

    code: str | None

    def __new__(cls, code: str | None, text: str) -> Note:
        note = super().__new__(cls, text)
        note.code = code
        return note

    def __getnewargs__(self):
        return self.code, str(self)


@dataclass(frozen=True)
class ConvertOptions:
    """What to convert to. ``compression`` None keeps each batch's codec (mapped by ``recompress``)."""

    to_magic: int
    compression: int | None = None
    recompress: Mapping[int, int] = field(default_factory=dict)
    max_batch_records: int = 0  # 0: no limit
    max_batch_bytes: int = KAFKA_MESSAGE_MAX_BYTES  # 0: no limit
    strict: bool = False
    record_limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES  # largest decompressed payload read from the input
    # In a down-conversion (the input has batches above the target magic) batches below the target are
    # copied as they are, as Kafka's RecordsUtil.downConvert does; True writes them in the target magic too.
    all_in_target_magic: bool = False
    # Damaged areas (other than a crash-cut tail or zero padding) are left out, counted and reported, and the
    # intact batches around them converted; False refuses such an input, as Kafka's converter does.
    skip_damaged: bool = False

    def __post_init__(self):
        if self.to_magic not in (0, 1, 2):
            raise ValueError(f"the target magic must be 0, 1 or 2, not {self.to_magic!r}")
        codecs = [] if self.compression is None else [self.compression]
        codecs += list(self.recompress.values())
        for c in codecs + list(self.recompress):
            if c not in range(len(CODEC_NAMES)):
                raise ValueError(f"unknown compression type id {c!r}")
        if self.to_magic < 2 and _codec.ZSTD in codecs:
            raise ValueError(f"zstd needs magic 2: magic {self.to_magic} messages cannot be zstd-compressed")
        if self.max_batch_records < 0 or self.max_batch_bytes < 0:
            raise ValueError("batch limits must be 0 (no limit) or positive")

    def target_codec(self, source_codec: int) -> int:
        if self.compression is not None:
            return self.compression
        return self.recompress.get(source_codec, source_codec)


@dataclass
class ConversionStats:
    """What one conversion read, wrote and left out."""

    to_magic: int
    source_batches: int = 0
    source_records: int = 0
    source_bytes: int = 0  # bytes of the whole batches read
    source_magics: set = field(default_factory=set)
    output_batches: int = 0  # entries written: v2 batches, legacy messages and wrappers
    output_records: int = 0
    output_bytes: int = 0
    copied_batches: int = 0  # source batches copied byte for byte
    down_conversion: bool = False  # the input has batches above the target magic (see Converter.convert)
    kept_below_target: int = 0  # of the copied batches, those left in a magic below the target
    converted_batches: int = 0  # source batches re-encoded (a run of n legacy messages counts n)
    recompressed: dict = field(default_factory=dict)  # (source codec, output codec) -> source batches
    losses: Losses = field(default_factory=Losses)
    notes: list = field(default_factory=list)
    # damaged areas of the input (kdump.read.damage.Damage) left out: the conversion fails (exit 1) as verify does
    damage: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "toMagic": self.to_magic,
            "input": {"batches": self.source_batches, "records": self.source_records, "bytes": self.source_bytes,
                       "magics": sorted(self.source_magics)},
            "output": {"batches": self.output_batches, "records": self.output_records, "bytes": self.output_bytes},
            "copiedBatches": self.copied_batches, "convertedBatches": self.converted_batches,
            "downConversion": self.down_conversion, "keptBelowTargetMagic": self.kept_below_target,
            "recompressed": [{"from": CODEC_NAMES[a], "to": CODEC_NAMES[b], "batches": n}
                             for (a, b), n in sorted(self.recompressed.items())],
            "dropped": self.losses.to_dict(),
            "notes": list(self.notes),
            "errors": [d.to_dict() for d in self.damage],  # the damaged areas left out (--skip-damaged)
        }


# --- the encoders: kdump.format's, with the names convert's callers and tests know ----------------------
legacy_entry = encode_message  # one uncompressed magic 0/1 entry (looked up per call: tests replace it)
legacy_entries = encode_messages  # records as uncompressed magic 0/1 entries, one each (the same)
convert_legacy_message = convert_message  # one uncompressed message rewritten 0 <-> 1


# Records decoded and encoded at a time where a unit holds more (the tests make it small to exercise the path).
CHUNK = RECORDS_PER_CHUNK


def _hidden_timestamps(batch, append_time: int, limit: int) -> int:
    """How many of a LogAppendTime wrapper's inner messages store another time than the append time, read a
    chunk at a time."""
    data = batch.inner_set(limit)
    hidden, at, n = 0, 0, 0
    while at is not None:
        cols, _, at = inner_columns(data, batch.position, at, CHUNK, n)
        hidden += cols.count - cols.timestamps.count(append_time)
        n += cols.count
    return hidden


class _OpenBatch:
    """One output batch being filled: a magic-2 batch or a compressed magic 0/1 wrapper, built by
    :mod:`kdump.format`'s builders, plus the records it holds for the verification digest (:attr:`canon`).

    Each record is encoded when it is offered (:meth:`encode`), so the batch's size before compression is
    known exactly before the record is taken (:meth:`add`); that is what cuts runs at ``max_batch_bytes``.
    The layout is ``MemoryRecordsBuilder``'s: v2 base timestamp = the first record's, deltas from it; magic 1
    inner offsets relative to the first record's offset, magic 0 absolute; wrapper offset = the last
    record's; LogAppendTime puts the append time on every legacy record and in the v2 max timestamp.
    The converter's per-record loops call :attr:`take` and append to :attr:`canon` themselves (what
    :meth:`add` does, without the call).
    """

    __slots__ = ("magic", "ts_type", "append_time", "base_offset", "builder", "encode", "take", "canon", "canon_time")

    def __init__(self, magic: int, codec: int, ts_type: TimestampType, append_time, base_offset: int,
                 base_timestamp: int, keep_canon: bool):
        self.magic = magic
        self.ts_type = NTT if magic == 0 else ts_type
        self.append_time = append_time
        self.base_offset = base_offset
        self.canon: list | None = [] if keep_canon else None  # canonical_record of each record taken
        # the timestamp a reader of the output sees: the record's own (None), or one for the whole batch
        self.canon_time = L.NO_TIMESTAMP if magic == 0 else append_time
        self.builder: RecordBatchBuilder | LegacyMessageBuilder
        self.encode: Callable[..., bytes | Pieces]
        if magic == 2:
            self.builder = RecordBatchBuilder(base_offset, codec, ts_type, log_append_time=append_time,
                                              partition_leader_epoch=NO_PARTITION_LEADER_EPOCH)
            self.encode = self.builder.encode  # bound once: no call in between on the hot path
        else:
            self.builder = LegacyMessageBuilder(magic, codec, ts_type, append_time, base_offset=base_offset)
            if append_time is not None:
                # Kafka refuses by the time the record carries: the append time under LogAppendTime.
                self.encode = self._encode_at_append_time
            else:
                self.encode = self.builder.encode
        self.take = self.builder.take

    def _encode_at_append_time(self, offset: int, timestamp: int, key, value) -> bytes | Pieces:
        return self.builder.encode(offset, self.append_time, key, value)

    def add(self, offset: int, timestamp: int, key, value, encoded: bytes | Pieces) -> None:
        self.take(offset, timestamp, encoded)
        if self.canon is not None:
            self.canon.append(canonical_record(offset, timestamp if self.canon_time is None else self.canon_time,
                                               self.ts_type, key, value))

    @property
    def codec(self) -> int:
        return self.builder.codec

    @property
    def count(self) -> int:
        return self.builder.record_count

    @property
    def size(self) -> int:
        return self.builder.size

    @property
    def last_offset(self) -> int | None:
        return self.builder.last_record_offset

    def build(self) -> bytes:
        return self.builder.build()

    def build_pieces(self) -> bytes | Pieces:
        """:meth:`build`; a magic-2 batch as its pieces, written without joining them."""
        builder = self.builder
        return builder.build_pieces() if isinstance(builder, RecordBatchBuilder) else builder.build()


def _ts_type_of_unit(source_magic: int, ts_type: TimestampType) -> TimestampType:
    """Magic 0 has no timestamp type; written in magic 1 or 2 it becomes CreateTime (Kafka: timestamp -1)."""
    return CT if source_magic == 0 else ts_type


# --- the walk -------------------------------------------------------------------------------------------
class Converter:
    """Converts the batches of one segment and hands whole entries to ``sink.write(data, entries)``.

    ``digest``: a hashlib object fed with :func:`canonical_record` of every record written (None: skip,
    as a dry run does).
    """

    def __init__(self, options: ConvertOptions, sink, digest=None):
        self.options = options
        self.sink = sink
        self.digest = digest
        self.stats = ConversionStats(options.to_magic)
        self._run: _OpenBatch | None = None  # the run of uncompressed legacy messages being collected
        self._run_key = None  # (magic, timestamp type, append time or None) of its messages
        self._run_sources = 0
        self._run_position = 0
        # codec of runs of uncompressed legacy messages; None: written message by message (below magic 2, none)
        run_codec = options.target_codec(_codec.NONE)
        self._run_codec = None if options.to_magic < 2 and run_codec == _codec.NONE else run_codec
        self._to_zero = options.to_magic == 0
        # where runs are cut: at --split-batch-bytes, and never above what a batch's records may take when read
        # (0, no limit, would otherwise gather a whole file of plain messages into one batch in memory)
        self._run_cut = min(options.max_batch_bytes or options.record_limit, options.record_limit)
        self._keep_below = False  # copy batches below the target magic (set by convert for a down-conversion)

    # --- entry point --------------------------------------------------------------------------------
    def convert(self, reader) -> ConversionStats:
        """Walk ``reader`` (a :class:`kdump.read.segment.SegmentReader`, walked twice) to its end.

        Kafka has two conversion paths. Down-conversion (``RecordsUtil.downConvert``, for an old
        consumer) copies batches whose magic is at or below the target as they are; up-conversion
        (``LogValidator``) writes everything in the target magic. A first pass over the batch headers
        (no record is decoded) decides: the segment is down-converted when one of its batches is above
        the target magic. Only a target of 1 can have batches on both sides.
        """
        stats = self.stats
        foreign = foreign_start(reader)
        if foreign is not None:  # e.g. text renamed .log: said as such, not as an incomplete last batch
            raise ConversionRefused(foreign.code, foreign.message, 0)
        stats.down_conversion = self._has_batches_above_target(reader)
        self._keep_below = stats.down_conversion and not self.options.all_in_target_magic
        # The read layer's walk past damage (what dump, verify, stats and salvage see): every intact batch is
        # converted, and each damaged area is counted and said, never taken for the end of the file.
        for item in readable(reader):  # (a batch failing its CRC comes as the batch: _entry refuses it)
            if type(item) is LegacyRun:
                self._legacy_run(item)
            elif isinstance(item, Damage):
                self._damage(item)
            elif not isinstance(item, Stop):
                self._entry(item)
        self._flush_run()
        if stats.kept_below_target:
            n = stats.kept_below_target
            stats.notes.append(Note("kept-below-target",
                                    f"a down-conversion (the input has batches above magic {self.options.to_magic}): "
                               f"{n:,} {'batch' if n == 1 else 'batches'} below magic {self.options.to_magic} "
                               "kept as they were, as Kafka does"))
        return stats

    def _entry(self, batch) -> None:
        """One entry of the input: a magic-2 batch, a compressed legacy wrapper or one plain legacy message."""
        stats = self.stats
        if not batch.is_valid() and self.options.skip_damaged:
            self._damage(Damage.invalid_batch(batch))
            return
        stats.source_batches += 1
        stats.source_bytes += batch.size
        stats.source_magics.add(batch.magic)
        if not batch.is_valid():
            what = "record batch" if batch.magic == 2 else f"magic {batch.magic} message"
            raise ConversionRefused(
                "crc-mismatch",
                f"the {what} is corrupt (stored crc = {batch.crc}, computed crc = {batch.compute_crc()}); "
                "kdump converts only intact data (`kdump dump` shows what is readable)",
                batch.position, reason=DAMAGED_INPUT)
        if batch.magic == 2:
            self._flush_run()
            self._v2_batch(batch)
        elif batch.is_compressed:
            self._flush_run()
            self._wrapper(batch)
        else:
            self._message(batch)

    def _legacy_run(self, run: LegacyRun) -> None:
        """Plain magic 0/1 messages read as one set of columns (:meth:`kdump.read.segment.SegmentReader.runs`). Where a
        whole stretch of them is handled alike (copied as they are, or appended to an open magic-2 batch) it is
        handled at once; everything else goes message by message through :meth:`_entry`, which is the authority
        on every rule (opening and cutting batches, losses, refusals)."""
        if all(run.valid):
            if self._run_codec is None and self._copies_all(run.magics):
                self._copy_run(run)
                return
            if self.options.to_magic == 2 and self._run_codec is not None:
                self._pack_run(run)
                return
        for batch in run.messages():
            self._entry(batch)

    def _copies_all(self, magics: list) -> bool:
        target = self.options.to_magic
        if self._keep_below:
            return all(m <= target for m in magics)
        return magics.count(target) == len(magics)

    def _copy_run(self, run: LegacyRun) -> None:
        """Plain messages that stay as they are (their magic is the target, or below it in a down-conversion)."""
        stats = self.stats
        cols = run.columns
        n = cols.count
        stats.source_batches += n
        stats.source_bytes += run.size
        stats.source_records += n
        stats.source_magics.update(set(run.magics))
        stats.copied_batches += n
        stats.kept_below_target += n - run.magics.count(self.options.to_magic)
        canon = [canonical_records(cols, None)] if self.digest is not None else None
        self._write(bytes(memoryview(cols.buf)[:run.size]), n, n, canon)

    def _pack_run(self, run: LegacyRun) -> None:
        """Plain messages written in magic 2: :meth:`_message` opens (and cuts) each batch; the messages after it
        that keep it one unit are appended to it a stretch at a time (:func:`encode_run_records`)."""
        stats = self.stats
        cols = run.columns
        n = cols.count
        i = 0
        entered = 0  # bytes of the messages that went through _entry (which counts them itself)
        while i < n:
            open_run = self._run
            if open_run is not None and isinstance(open_run.builder, RecordBatchBuilder):
                builder = open_run.builder
                opts = self.options
                key = self._run_key
                magic, append_time = (key[0], key[1]) if isinstance(key, tuple) else (key, None)
                room = max(self._run_cut - builder.size, 0)
                most = max(opts.max_batch_records - builder.record_count, 0) if opts.max_batch_records else -1
                data, taken, last, max_ts = encode_run_records(
                    cols, i, builder.base_offset, builder.base_timestamp, builder.last_record_offset, room, most,
                    magic, append_time)
                if taken:
                    builder.take_records(data, taken, last, max_ts)
                    if open_run.canon is not None:
                        part = cols.slice(i, i + taken)
                        open_run.canon.append(canonical_records(part, open_run.ts_type, open_run.canon_time))
                    stats.source_batches += taken
                    stats.source_records += taken
                    self._run_sources += taken
                    i += taken
                    continue
            batch = run.message_at(i)
            entered += batch.size
            self._entry(batch)
            i += 1
        stats.source_bytes += run.size - entered
        stats.source_magics.update(set(run.magics))

    def _has_batches_above_target(self, reader) -> bool:
        target = self.options.to_magic
        if target == 2:
            return False
        for item in readable(reader, show_invalid=False):  # plain messages a run at a time: no object each
            if isinstance(item, LegacyRun):
                if max(item.magics) > target:
                    return True
            elif not isinstance(item, (Damage, Stop)) and item.magic > target:
                return True  # (the walk stops at the first one)
        return False

    def _copy_below_target(self, magic: int) -> bool:
        """A batch below the target magic is copied as it is (when its codec stays): Kafka's down-conversion."""
        return self._keep_below and magic < self.options.to_magic

    def _damage(self, damage: Damage) -> None:
        """A damaged area of the input (:mod:`kdump.read.damage`), never taken for the end of the file. A crash-cut
        tail (where Kafka's readers stop too) is a loss without damage. Any other damaged area (a zero tail of 18
        bytes or more too, on which Kafka's tool dies: :attr:`Damage.fails`) refuses the conversion, as Kafka's
        converter refuses a corrupt record, unless ``skip_damaged``: then its bytes are left out, counted, and the
        run fails (exit 1) as ``verify`` does of the same bytes."""
        self._flush_run()
        stats = self.stats
        stop = damage.stop
        # the file shrank while it was read: nothing to skip to (Kafka's "fatal" stops, zeros too, can be skipped)
        shrank = stop is not None and stop.kind == F.TRUNCATED and stop.fatal
        length = damage.length or 0
        if not damage.fails:  # the read layer's one policy: Kafka's crash-cut tail
            # Kafka's readers stop there too ("Found N invalid bytes at the end"); the bytes are not copied.
            stats.losses.add("trailing-bytes", length, damage.start)
            stats.notes.append(f"the input ends in {length:,} bytes that are no whole batch (at byte "
                               f"{damage.start}): {damage.message}; no intact batch follows them")
        elif self.options.skip_damaged and not shrank:
            stats.losses.add("damaged-bytes", length, damage.start)
            stats.damage.append(damage)
        else:
            raise ConversionRefused(damage.code, f"{damage.message}; {damage.lost_offsets().describe()}; kdump "
                                    "converts only intact data", damage.start,
                                    reason=None if shrank else DAMAGED_INPUT)

    # --- output helpers -------------------------------------------------------------------------------
    def _write(self, data: bytes | Pieces, entries: int, records: int, canon: list | None) -> None:
        if isinstance(data, Pieces):  # a batch as its header and records, written one after the other, not joined
            for i, part in enumerate(data.parts):
                self.sink.write(part, entries if i == 0 else 0)
        else:
            self.sink.write(data, entries)
        self.stats.output_batches += entries
        self.stats.output_records += records
        self.stats.output_bytes += len(data)
        if canon:
            update = self.digest.update
            for part in canon:  # no join: a chunk's canonical records come as one piece already
                update(part)

    def _write_batch(self, batch: _OpenBatch) -> None:
        self._write(batch.build_pieces(), 1, batch.count, batch.canon)

    def _codec_for(self, source_codec: int, position: int, what: str, batches: int = 1) -> int:
        codec = self.options.target_codec(source_codec)
        if codec == _codec.ZSTD and self.options.to_magic < 2:
            # Kafka: UnsupportedCompressionTypeException "Down-conversion of zstandard-compressed batches
            # is not supported" -- zstd arrived with magic 2 (KIP-110) and old clients cannot read it.
            raise ConversionRefused(
                "zstd-below-v2",
                f"{what} is zstd-compressed, and magic {self.options.to_magic} has no zstd (it came with magic 2; "
                "Kafka refuses this down-conversion too)",
                position)
        if codec != source_codec:
            key = (source_codec, codec)
            self.stats.recompressed[key] = self.stats.recompressed.get(key, 0) + batches
        return codec

    def _refuse_bad_value(self, e: ValueError, position: int, what: str) -> NoReturn:
        # The encoders refuse what Kafka's MemoryRecordsBuilder refuses (e.g. a negative timestamp other
        # than -1, offsets that do not increase): the input holds something no Kafka writer produces.
        raise ConversionRefused("unconvertible", f"{what} cannot be written in magic {self.options.to_magic}: {e}",
                                position) from None

    def _read_failed(self, e: FormatError, position: int) -> NoReturn:
        raise ConversionRefused(e.code, f"{e.message}; the batch cannot be read, so it cannot be converted",
                                e.position if e.position is not None else position) from None

    def _records_out(self, pos: int, what: str, ts_type: TimestampType, append_time, codec: int, records) -> None:
        """Write ``records`` = [(offset, timestamp as stored, key, value)] of one unit in the target magic:
        one batch (magic 2, or a compressed wrapper), or below magic 2 without a codec one message each."""
        target = self.options.to_magic
        keep_canon = self.digest is not None
        try:
            if target < 2 and codec == _codec.NONE:
                parts = []
                canon: list | None = [] if keep_canon else None
                out_type = NTT if target == 0 else ts_type
                for offset, ts, key, value in records:
                    if append_time is not None:
                        ts = append_time  # LegacyRecord under LogAppendTime carries the append time
                    if ts < L.NO_TIMESTAMP:
                        raise ValueError(f"Invalid negative timestamp {ts} (offset {offset})")
                    parts.append(legacy_entry(offset, target, out_type, ts, key, value))
                    if canon is not None:
                        canon.append(canonical_record(offset, ts if target else L.NO_TIMESTAMP, out_type, key, value))
                self._write(b"".join(parts), len(parts), len(parts), canon)
                return
            batch = None
            for offset, ts, key, value in records:
                if batch is None:
                    batch = _OpenBatch(target, codec, ts_type, append_time, offset, ts, keep_canon)
                batch.take(offset, ts, batch.encode(offset, ts, key, value))
                if batch.canon is not None:
                    batch.canon.append(canonical_record(offset, ts if batch.canon_time is None else batch.canon_time,
                                                        batch.ts_type, key, value))
            if batch is not None:
                self._write_batch(batch)
        except ValueError as e:
            self._refuse_bad_value(e, pos, what)

    # --- magic 2 --------------------------------------------------------------------------------------
    def _v2_batch(self, batch) -> None:
        stats = self.stats
        losses = stats.losses
        target = self.options.to_magic
        pos = batch.position
        what = f"the batch of offsets {batch.base_offset}-{batch.last_offset}"
        if target < 2 and batch.is_control:
            # RecordsUtil.downConvert skips control batches: old clients know no control records.
            stats.source_records += batch.records_count
            losses.add("control-batches", 1, pos)
            losses.control_records += max(batch.records_count, 0)
            return
        if target < 2 and batch.records_count == 0:
            losses.add("empty-batches", 1, pos)  # Kafka: an empty batch converts to nothing
            return
        append_time = batch.max_timestamp if batch.attributes & L.V2_TIMESTAMP_TYPE_MASK else None
        ts_type = batch.timestamp_type
        if target == 2:
            self._v2_to_v2(batch, append_time)
            return

        # magic 2 -> 0/1 (RecordsUtil.convertRecordBatch): records kept with their offsets, the rest counted
        codec = self._codec_for(batch.codec_id, pos, what)
        stats.converted_batches += 1
        if batch.producer_id != L.NO_PRODUCER_ID or batch.producer_epoch != L.NO_PRODUCER_EPOCH \
                or batch.base_sequence != L.NO_SEQUENCE:
            losses.add("producer-state", 1, pos)
        if batch.is_transactional:
            losses.add("transactional", 1, pos)
        if batch.partition_leader_epoch != NO_PARTITION_LEADER_EPOCH:
            losses.add("leader-epoch", 1, pos)
        if batch.delete_horizon_ms is not None:
            losses.add("delete-horizon", 1, pos)
        if codec == _codec.NONE:  # a message per record: written a chunk of records at a time
            cols = None
            for cols in self._v2_chunks(batch):
                self._records_lost(cols, append_time, pos)
                self._messages_out(cols, pos, what, ts_type, append_time)
        else:  # one wrapper for the whole batch, its records taken a chunk at a time
            cols = self._wrapper_of_chunks(batch, pos, what, ts_type, append_time, codec)
        if cols is not None and cols.count and cols.offsets[-1] != batch.last_offset:
            losses.add("last-offsets", 1, pos)

    def _wrapper_of_chunks(self, batch, pos: int, what: str, ts_type: TimestampType, append_time, codec: int):
        """A compressed magic-2 batch written as one compressed magic 0/1 wrapper. Its records are decoded and
        encoded a chunk at a time, and each chunk's canonical form is digested at once (a refusal ends the
        whole conversion, so nothing digested is left unwritten): memory holds the wrapper's inner messages,
        not an object per record. Returns the last chunk."""
        target = self.options.to_magic
        wrapper = cols = None
        try:
            for cols in self._v2_chunks(batch):
                self._records_lost(cols, append_time, pos)
                if not cols.count:
                    continue
                wrapper = self._take_chunk(wrapper, cols, target, codec, ts_type, append_time, pos)
        except ValueError as e:
            self._refuse_bad_value(e, pos, what)
        if wrapper is not None:
            self._write_batch(wrapper)
        return cols

    def _take_chunk(self, unit, cols, target: int, codec: int, ts_type: TimestampType, append_time, pos: int):
        """A chunk of records taken into ``unit`` (a compressed output batch or wrapper; made for the first chunk
        if None), and its canonical form digested at once (a refusal ends the whole conversion, so nothing
        digested is left unwritten). Returns the unit."""
        offsets, timestamps = cols.offsets, cols.timestamps
        mv = memoryview(cols.buf)
        key_pos, key_len, value_pos, value_len = cols.key_pos, cols.key_len, cols.value_pos, cols.value_len
        if unit is None:
            unit = _OpenBatch(target, codec, ts_type, append_time, offsets[0], timestamps[0], False)
        encode, take = unit.encode, unit.take
        for i in range(cols.count):  # keys and values as slices of the payload: no copy per record
            key = None if key_len[i] < 0 else mv[key_pos[i]:key_pos[i] + key_len[i]]
            value = None if value_len[i] < 0 else mv[value_pos[i]:value_pos[i] + value_len[i]]
            take(offsets[i], timestamps[i], encode(offsets[i], timestamps[i], key, value))
        if unit.size > self.options.record_limit:
            self._refuse_too_large(unit, cols, pos)
        if self.digest is not None:
            update_canonical(self.digest.update, cols, int(unit.ts_type), unit.canon_time, False)
        return unit

    def _refuse_too_large(self, unit: _OpenBatch, cols, pos: int) -> NoReturn:
        """A batch or wrapper being written outgrew the limit a batch's records may take when read (a magic-2
        record of a few bytes is a magic 0/1 message of 26 or more): refused before it takes more memory, as no
        reader kdump runs (its own read-back first) would read it."""
        limit = self.options.record_limit
        raise ConversionRefused(
            "unconvertible",
            f"the records from offset {unit.base_offset} to {cols.offsets[cols.count - 1]} take {unit.size:,} bytes "
            f"before compression in magic {self.options.to_magic}, above the limit of {limit:,} bytes a batch's "
            f"records may take when read", pos, reason="records-above-limit")

    def _v2_chunks(self, batch):
        """The records of a batch in chunks of :data:`RECORDS_PER_CHUNK`, with their *stored* timestamps (base +
        delta, also under LogAppendTime): memory bounded by the chunk, however many records the batch holds."""
        try:
            buf, start, end = batch.records_payload(self.options.record_limit)
        except FormatError as e:
            self._read_failed(e, batch.position)
        count, first, at = batch.records_count, 0, start
        while at is not None:
            cols = _v2.parse_records(buf, start, end, count, batch.base_offset, batch.base_timestamp, None, first,
                                     first + CHUNK, at)
            if cols.error is not None:
                self._read_failed(cols.error.at(batch.position), batch.position)
            yield cols
            first += cols.count
            at = cols.resume_at

    def _records_lost(self, cols, append_time, pos: int) -> None:
        """What of the records of a magic-2 batch written below magic 2 is lost: headers, timestamps."""
        stats = self.stats
        losses = stats.losses
        n = cols.count
        headers = cols.headers
        header_records = n - headers.count(())
        if header_records:
            losses.add("headers", sum(map(len, headers)), pos)
            losses.header_records += header_records
        stats.source_records += n
        timestamps = cols.timestamps
        if append_time is not None:
            losses.add("hidden-timestamps", n - timestamps.count(append_time), pos)
        if self.options.to_magic == 0:
            losses.add("timestamps", n - timestamps.count(L.NO_TIMESTAMP) if append_time is None else
                       (n if append_time != L.NO_TIMESTAMP else 0), pos)
            if append_time is not None:
                losses.add("log-append-time", n, pos)

    def _messages_out(self, cols, pos: int, what: str, ts_type: TimestampType, append_time) -> None:
        """Records written below magic 2 without a codec: one message each (``RecordsUtil.downConvert``)."""
        target = self.options.to_magic
        out_type = NTT if target == 0 else ts_type
        try:
            data = legacy_entries(cols, target, out_type, append_time)
        except ValueError as e:
            self._refuse_bad_value(e, pos, what)
        if self.digest is not None:  # digested a piece at a time: a large value not copied (format/canonical.py)
            update_canonical(self.digest.update, cols, out_type, append_time if target else L.NO_TIMESTAMP, False)
        self._write(data, cols.count, cols.count, None)

    def _v2_to_v2(self, batch, append_time) -> None:
        """A v2 batch stays a v2 batch: copied, or rebuilt with another codec keeping every header field; its
        records are read a chunk at a time (memory bounded by the chunk, whatever count it declares)."""
        stats = self.stats
        what = f"the batch of offsets {batch.base_offset}-{batch.last_offset}"
        codec = batch.codec_id
        if not (batch.is_control or batch.records_count == 0 or self.options.target_codec(codec) == codec):
            codec = self._codec_for(codec, batch.position, what)  # Kafka never compresses control or empty batches
        if codec == batch.codec_id:  # copied: its records are read only for the digest
            n = 0
            # an empty batch is not decompressed (Kafka does not even look at it)
            for chunk in self._v2_chunks(batch) if batch.records_count else ():
                n += chunk.count
                if self.digest is not None:
                    update_canonical(self.digest.update, chunk, batch.timestamp_type, append_time)
            stats.source_records += n
            stats.copied_batches += 1
            self._write(Pieces(list(batch.entry_parts())), 1, n, None)  # not joined: not a copy
            return
        stats.converted_batches += 1
        n = 0
        try:
            builder = RecordBatchBuilder(
                batch.base_offset, codec, batch.timestamp_type, log_append_time=append_time,
                producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                base_sequence=batch.base_sequence, is_transactional=batch.is_transactional,
                partition_leader_epoch=batch.partition_leader_epoch, delete_horizon_ms=batch.delete_horizon_ms)
            for cols in self._v2_chunks(batch):  # a chunk at a time, digested at once (a refusal ends it all)
                n += cols.count
                mv = memoryview(cols.buf)
                key_pos, key_len, value_pos, value_len = cols.key_pos, cols.key_len, cols.value_pos, cols.value_len
                for i in range(cols.count):  # keys and values as slices of the payload: not copied to be written
                    key = None if key_len[i] < 0 else mv[key_pos[i]:key_pos[i] + key_len[i]]
                    value = None if value_len[i] < 0 else mv[value_pos[i]:value_pos[i] + value_len[i]]
                    offset, timestamp = cols.offsets[i], cols.timestamps[i]
                    builder.take(offset, timestamp, builder.encode(offset, timestamp, key, value, cols.headers[i]))
                if self.digest is not None:
                    update_canonical(self.digest.update, cols, batch.timestamp_type, append_time)
            if batch.last_offset != builder.last_offset:
                builder.override_last_offset(batch.last_offset)
            data = builder.build_pieces()
        except ValueError as e:
            self._refuse_bad_value(e, batch.position, what)
        stats.source_records += n
        self._write(data, 1, n, None)

    # --- compressed legacy wrappers ---------------------------------------------------------------------
    def _wrapper(self, batch) -> None:
        """A compressed legacy wrapper: copied (its records digested), or converted. Its inner messages come a
        chunk at a time; one of a single chunk (every ordinary wrapper) is converted as one unit, with the
        compiled v2 encoder where it applies, a bigger one (an enormous or a hostile wrapper) chunk by chunk,
        so that memory holds the output unit, not an object per message."""
        stats = self.stats
        target = self.options.to_magic
        pos = batch.position
        wrapper = batch.message
        what = f"the magic {wrapper.magic} wrapper at offset {wrapper.offset}"
        limit = self.options.record_limit
        chunks = self._inner_chunks(batch, limit)
        first = next(chunks)
        following = next(chunks, None)
        every_chunk = chain((first,) if following is None else (first, following), chunks)
        ts_type = wrapper.timestamp_type
        append_time = wrapper.timestamp if ts_type == LAT else None
        source_codec = wrapper.codec_id
        codec = self._codec_for(source_codec, pos, what)
        if (wrapper.magic == target or self._copy_below_target(wrapper.magic)) and codec == source_codec:
            n = 0
            for cols in every_chunk:
                n += cols.count
                if self.digest is not None:
                    update_canonical(self.digest.update, cols, ts_type)
            stats.source_records += n
            stats.copied_batches += 1
            if wrapper.magic != target:
                stats.kept_below_target += 1
            self._write(Pieces(list(batch.entry_parts())), 1, n, None)  # not joined: not a copy
            return
        stats.converted_batches += 1
        if append_time is not None:
            # Kafka converts what readers see: the append time, not the create times stored inside.
            stats.losses.add("hidden-timestamps", _hidden_timestamps(batch, append_time, limit), pos)
        unit_type = _ts_type_of_unit(wrapper.magic, ts_type)
        if following is None:
            cols = first
            stats.source_records += cols.count
            self._count_lost_timestamps(wrapper.magic, ts_type, cols.timestamps, pos)
            if target == 2 and self._wrapper_to_v2(cols, unit_type, append_time, codec):
                return
            offsets, timestamps = cols.offsets, cols.timestamps
            self._records_out(pos, what, unit_type, append_time, codec,
                              [(offsets[i], timestamps[i], cols.key(i), cols.value(i)) for i in range(cols.count)])
            return
        unit = None
        try:
            for cols in every_chunk:
                stats.source_records += cols.count
                self._count_lost_timestamps(wrapper.magic, ts_type, cols.timestamps, pos)
                if target < 2 and codec == _codec.NONE:
                    self._messages_out(cols, pos, what, unit_type, append_time)
                else:
                    unit = self._take_chunk(unit, cols, target, codec, unit_type, append_time, pos)
        except ValueError as e:
            self._refuse_bad_value(e, pos, what)
        if unit is not None:
            self._write_batch(unit)

    def _inner_chunks(self, batch, limit: int):
        """A wrapper's records a chunk at a time (:meth:`LegacyBatch.column_chunks`), each checked as Kafka
        checks inner messages when it converts a compressed legacy set (``LogValidator``): readable, CRCs valid."""
        pos = batch.position
        chunks = batch.column_chunks(limit, CHUNK)
        at = 0  # where the chunk starts in the decompressed inner set
        while True:
            try:
                cols = next(chunks, None)
            except FormatError as e:
                self._read_failed(e, pos)
            if cols is None:
                return
            if cols.error is not None:
                self._read_failed(cols.error, pos)
            if not all(cols.valid):
                i = cols.valid.index(False)
                start = at + sum(cols.sizes[:i]) + L.LOG_OVERHEAD
                computed = LegacyMessage(cols.offsets[i], cols.buf[start:start + cols.sizes[i] - L.LOG_OVERHEAD])
                raise ConversionRefused(
                    "crc-mismatch",
                    f"the inner message at offset {cols.offsets[i]} of the magic {batch.magic} wrapper at offset "
                    f"{batch.message.offset} is corrupt (stored crc = {cols.crcs[i]}, computed crc = "
                    f"{computed.compute_crc()})", pos)
            yield cols
            at = cols.resume_at if cols.resume_at is not None else at + sum(cols.sizes)

    def _wrapper_to_v2(self, cols, ts_type: TimestampType, append_time, codec: int) -> bool:
        """A wrapper's records as one v2 batch, all at once (:func:`encode_run_records`): what
        :meth:`_records_out` writes. False (nothing written) when a record is one the builder refuses or the batch
        cannot be built: :meth:`_records_out` then says why."""
        offsets, timestamps = cols.offsets, cols.timestamps
        n = cols.count
        if not n or timestamps[0] < L.NO_TIMESTAMP:
            return False
        batch = _OpenBatch(2, codec, ts_type, append_time, offsets[0], timestamps[0], False)
        builder = batch.builder
        assert isinstance(builder, RecordBatchBuilder)
        try:
            first = builder.encode(offsets[0], timestamps[0], cols.key(0), cols.value(0))
            builder.take(offsets[0], timestamps[0], first)
            data, taken, last, max_ts = encode_run_records(cols, 1, builder.base_offset, builder.base_timestamp,
                                                           offsets[0], -1, -1, None, None)
            if taken != n - 1:
                return False
            builder.take_records(data, taken, last, max_ts)
            entry = batch.build()
        except ValueError:
            return False
        canon = [canonical_records(cols, ts_type, append_time, headers=False)] if self.digest is not None else None
        self._write(entry, 1, n, canon)
        return True

    def _count_lost_timestamps(self, source_magic: int, ts_type: TimestampType, timestamps, pos: int) -> None:
        if self.options.to_magic == 0 and source_magic == 1:
            self.stats.losses.add("timestamps", sum(1 for t in timestamps if t != L.NO_TIMESTAMP), pos)
            if ts_type == LAT:
                self.stats.losses.add("log-append-time", len(timestamps), pos)

    # --- uncompressed legacy messages ---------------------------------------------------------------------
    def _message(self, batch) -> None:
        # Called once per uncompressed legacy message (millions in a large magic 0/1 segment), so the
        # properties of LegacyMessage are read once into locals and the common case has no extra calls.
        stats = self.stats
        msg = batch.message
        stats.source_records += 1
        magic, key, value, offset, ts = msg.magic, msg.key, msg.value, msg.offset, msg.timestamp
        # bytes after the value: the message size minus header, two length fields, key and value
        padding = len(msg.body) - (L.LEGACY_V0_KEY_SIZE_AT if magic == 0 else L.LEGACY_V1_KEY_SIZE_AT) - 8 \
            - (0 if key is None else len(key)) - (0 if value is None else len(value))
        codec = self._run_codec
        if codec is None:  # below magic 2 without a codec: message by message
            self._single_message(batch, padding)
            return
        if padding:
            stats.losses.add("message-padding", padding, batch.position)
        log_append_time = magic == 1 and msg.attributes & L.LEGACY_TIMESTAMP_TYPE_MASK
        run_key = (magic, ts) if log_append_time else magic  # LogAppendTime runs share their time too
        opts = self.options
        run = self._run
        # the builder's plain attributes, not _OpenBatch's properties: this runs once per message
        if run is not None and (run_key != self._run_key or offset <= run.builder.last_record_offset
                                or offset - run.base_offset > INT32_MAX
                                or (opts.max_batch_records and run.builder.record_count >= opts.max_batch_records)):
            self._flush_run()
            run = None
        try:
            if run is not None:
                encoded = run.encode(offset, ts, key, value)
                if run.builder.size + len(encoded) > self._run_cut:
                    self._flush_run()
                    run = None
            if run is None:
                run = self._open_run(run_key, magic, LAT if log_append_time else CT,
                                     ts if log_append_time else None, batch, codec)
                encoded = run.encode(offset, ts, key, value)
        except ValueError as e:
            self._refuse_bad_value(e, batch.position, f"the magic {magic} message at offset {offset}")
        run.take(offset, ts, encoded)
        if run.canon is not None:
            run.canon.append(canonical_record(offset, ts if run.canon_time is None else run.canon_time, run.ts_type,
                                              key, value))
        self._run_sources += 1
        if self._to_zero and magic == 1:
            self._count_lost_timestamps(1, LAT if log_append_time else CT, (ts,), batch.position)

    def _open_run(self, run_key, magic: int, ts_type: TimestampType, append_time, batch, codec: int) -> _OpenBatch:
        msg = batch.message
        self._run = _OpenBatch(self.options.to_magic, codec, _ts_type_of_unit(magic, ts_type), append_time,
                               msg.offset, msg.timestamp, self.digest is not None)
        self._run_key = run_key
        self._run_sources = 0
        self._run_position = batch.position
        return self._run

    def _flush_run(self) -> None:
        run = self._run
        if run is None:
            return
        self._run = None
        n = self._run_sources
        self.stats.converted_batches += n
        if run.codec != _codec.NONE:
            key = (_codec.NONE, run.codec)
            self.stats.recompressed[key] = self.stats.recompressed.get(key, 0) + n
        try:
            self._write_batch(run)
        except ValueError as e:
            self._refuse_bad_value(e, self._run_position,
                                   f"the messages at offsets {run.base_offset}-{run.last_offset}")

    def _single_message(self, batch, padding: int) -> None:
        """An uncompressed legacy message written below magic 2 without compression: copied, or converted
        0 <-> 1 on its own (:func:`convert_legacy_message`)."""
        stats = self.stats
        msg = batch.message
        target = self.options.to_magic
        canon = None
        if msg.magic == target or self._copy_below_target(msg.magic):
            stats.copied_batches += 1
            if msg.magic != target:
                stats.kept_below_target += 1
            if self.digest is not None:
                canon = [canonical_record(msg.offset, msg.timestamp, msg.timestamp_type, msg.key, msg.value)]
            self._write(batch.entry_bytes(), 1, 1, canon)
            return
        stats.converted_batches += 1
        pos = batch.position
        stats.losses.add("message-padding", padding, pos)
        self._count_lost_timestamps(msg.magic, msg.timestamp_type, (msg.timestamp,), pos)
        data = convert_legacy_message(msg.offset, msg.body, target)
        if self.digest is not None:
            canon = [canonical_record(msg.offset, L.NO_TIMESTAMP, NTT if target == 0 else CT, msg.key, msg.value)]
        self._write(data, 1, 1, canon)
