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

Offsets are always kept. Memory holds one source batch (or one run, bounded by ``max_batch_bytes``)
at a time. Every record handed to the output is also fed, in a canonical form, to a digest that the
read-back verification recomputes from the written file (:mod:`kdump.convert.output`).
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field
from typing import Mapping

from kdump import codec as _codec
from kdump._crc import crc32c as _crc32c
from kdump.errors import EXIT_DATA, FormatError, KdumpError
from kdump.format import layout as L
from kdump.format import v2 as _v2
from kdump.format.types import TimestampType
from kdump.format.varint import encode_varint
from kdump.segment import DEFAULT_MAX_DECOMPRESSED_BYTES
from kdump.writer import RecordBatchBuilder, legacy_message

from .losses import Losses

# Kafka's broker default for message.max.bytes: the largest batch a broker accepts (1 MiB + LOG_OVERHEAD).
KAFKA_MESSAGE_MAX_BYTES = 1048588
NO_PARTITION_LEADER_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH: what a builder writes for new batches
INT32_MAX = 2**31 - 1

CT = TimestampType.CREATE_TIME
LAT = TimestampType.LOG_APPEND_TIME
NTT = TimestampType.NO_TIMESTAMP_TYPE

_LEGACY_ENTRY_HEAD = L.LEGACY_PREFIX_CRC  # offset, size, crc
_INT32 = L.INT32
_INT64 = L.INT64
_NULL_LENGTH = b"\xff\xff\xff\xff"


class ConversionRefused(KdumpError):
    """The input cannot be converted as asked: damaged data, zstd below magic 2, or a loss under --strict.

    ``code`` is a stable name (``crc-mismatch``, ``zstd-below-v2``, ``loss``, ...), ``position`` the byte
    position in the input where the problem is, when there is one.
    """

    exit_code = EXIT_DATA

    def __init__(self, code: str, message: str, position: int | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.position = position
        self.source: str | None = None  # the input file, filled in by convert_segment

    def __str__(self) -> str:
        return self.message if self.position is None else f"at byte {self.position}: {self.message}"


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

    def __post_init__(self):
        if self.to_magic not in (0, 1, 2):
            raise ValueError(f"the target magic must be 0, 1 or 2, not {self.to_magic!r}")
        codecs = [] if self.compression is None else [self.compression]
        codecs += list(self.recompress.values())
        for c in codecs + list(self.recompress):
            if c not in _codec.CODEC_NAMES:
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

    def to_dict(self) -> dict:
        return {
            "toMagic": self.to_magic,
            "source": {"batches": self.source_batches, "records": self.source_records, "bytes": self.source_bytes,
                       "magics": sorted(self.source_magics)},
            "output": {"batches": self.output_batches, "records": self.output_records, "bytes": self.output_bytes},
            "copiedBatches": self.copied_batches, "convertedBatches": self.converted_batches,
            "downConversion": self.down_conversion, "keptBelowTargetMagic": self.kept_below_target,
            "recompressed": [{"from": _codec.CODEC_NAMES[a], "to": _codec.CODEC_NAMES[b], "batches": n}
                             for (a, b), n in sorted(self.recompressed.items())],
            "dropped": self.losses.to_dict(),
            "notes": list(self.notes),
        }


# --- canonical record form (what the verification compares) --------------------------------------
_CANON_HEAD = struct.Struct(">qqbiii")  # offset, timestamp, timestamp type, key length, value length, headers


def canonical_record(offset: int, timestamp: int, timestamp_type: int, key, value, headers=()) -> bytes:
    """A record as a reader of the output should see it, in one unambiguous byte string."""
    parts = [_CANON_HEAD.pack(offset, timestamp, timestamp_type, -1 if key is None else len(key),
                              -1 if value is None else len(value), len(headers))]
    if key is not None:
        parts.append(key)
    if value is not None:
        parts.append(value)
    for hkey, hvalue in headers:
        parts.append(_INT32.pack(len(hkey)))
        parts.append(hkey)
        parts.append(_INT32.pack(-1 if hvalue is None else len(hvalue)))
        if hvalue is not None:
            parts.append(hvalue)
    return b"".join(parts)


# --- one legacy message (the seed's 0 <-> 1 steps) ----------------------------------------------------
def legacy_entry(offset: int, magic: int, timestamp_type: TimestampType, timestamp: int, key, value) -> bytes:
    """One uncompressed magic 0/1 entry (``LegacyRecord.write`` behind the offset/size prefix).

    ``key``/``value`` may be any bytes-like object (memoryview slices are not copied first).
    Attributes: codec none, plus the LogAppendTime bit for magic 1; magic 0 stores no timestamp.
    """
    if magic == 0:
        head = b"\x00\x00"
    else:
        head = (b"\x01\x08" if timestamp_type == LAT else b"\x01\x00") + _INT64.pack(timestamp)
    parts = [head]
    if key is None:
        parts.append(_NULL_LENGTH)
    else:
        parts.append(_INT32.pack(len(key)))
        parts.append(key)
    if value is None:
        parts.append(_NULL_LENGTH)
    else:
        parts.append(_INT32.pack(len(value)))
        parts.append(value)
    message = b"".join(parts)
    return _LEGACY_ENTRY_HEAD.pack(offset, len(message) + 4, zlib.crc32(message)) + message


def convert_legacy_message(offset: int, body, to_magic: int) -> bytes:
    """Rewrite one uncompressed magic 0/1 message (``body`` = the bytes after the size field) as ``to_magic``.

    The steps of the seed, as Kafka's builder does them: a new magic byte; attributes with codec none
    and the timestamp type (CreateTime: 0 -> 1 has no time to call LogAppendTime; 1 -> 0 has no type);
    for 0 -> 1 the timestamp -1 (NO_TIMESTAMP) inserted after the attributes, for 1 -> 0 the timestamp
    removed; the key and value section copied byte for byte; the CRC-32 recomputed over magic..end; the
    size field set to the new length. Bytes after the value (tolerated by readers) are not copied.
    """
    body = memoryview(body)
    magic = body[L.BODY_MAGIC]
    if magic not in (0, 1) or to_magic not in (0, 1):
        raise ValueError(f"converts between magic 0 and 1, not {magic} -> {to_magic}")
    if body[L.LEGACY_BODY_ATTRIBUTES_AT] & L.LEGACY_CODEC_MASK:
        raise ValueError("a compressed wrapper is re-encoded as a whole, not converted message by message")
    start = L.LEGACY_V0_KEY_SIZE_AT if magic == 0 else L.LEGACY_V1_KEY_SIZE_AT
    end = _key_value_end(body, start)
    if to_magic == 0:
        head = b"\x00\x00"
    elif magic == 0:
        head = b"\x01\x00" + _INT64.pack(L.NO_TIMESTAMP)
    else:
        # 1 -> 1: keep the stored timestamp and its type bit
        ts_at = L.LEGACY_BODY_TIMESTAMP_AT
        head = (bytes((1, body[L.LEGACY_BODY_ATTRIBUTES_AT] & L.LEGACY_TIMESTAMP_TYPE_MASK))
                + bytes(body[ts_at:ts_at + L.LEGACY_TIMESTAMP.size]))
    message = head + bytes(body[start:end])
    return _LEGACY_ENTRY_HEAD.pack(offset, len(message) + 4, zlib.crc32(message)) + message


def _key_value_end(body, start: int) -> int:
    """End of the value of a legacy message whose key length field is at ``start`` (already validated)."""
    pos = start
    for _ in range(2):
        n = _INT32.unpack_from(body, pos)[0]
        pos += 4 + max(n, 0)
    return pos


# --- magic 2 records and batches, encoded directly (the hot path of up-conversion) ---------------------------
_SMALL = 1 << 13
_SMALL_VARINTS = [encode_varint(n) for n in range(-_SMALL, _SMALL)]  # 1- and 2-byte varints, precomputed


def _varint(n: int) -> bytes:
    if -_SMALL <= n < _SMALL:
        return _SMALL_VARINTS[n + _SMALL]
    return encode_varint(n)


def v2_record(offset_delta: int, timestamp_delta: int, key, value) -> bytes:
    """One record without headers as ``DefaultRecord.writeTo`` writes it (length, attributes 0, deltas, key,
    value, header count 0). ``key``/``value``: bytes-like or None."""
    parts = [b"\x00", _varint(timestamp_delta), _varint(offset_delta)]
    if key is None:
        parts.append(b"\x01")  # varint -1
    else:
        parts.append(_varint(len(key)))
        parts.append(key)
    if value is None:
        parts.append(b"\x01")
    else:
        parts.append(_varint(len(value)))
        parts.append(value)
    parts.append(b"\x00")
    body = b"".join(parts)
    return _varint(len(body)) + body


_V2_BEFORE_CRC = L.V2_BEFORE_CRC  # baseOffset, length, partitionLeaderEpoch, magic
_V2_AFTER_CRC = L.V2_AFTER_CRC  # attributes .. recordsCount
_UINT32 = L.UINT32


def v2_batch(base_offset: int, attributes: int, last_offset_delta: int, base_timestamp: int, max_timestamp: int,
             count: int, payload: bytes) -> bytes:
    """A new magic-2 batch as ``MemoryRecordsBuilder`` closes it for converted legacy data: no producer
    (id, epoch, sequence -1), partition leader epoch -1, CRC-32C over attributes..end."""
    after = _V2_AFTER_CRC.pack(attributes, last_offset_delta, base_timestamp, max_timestamp, L.NO_PRODUCER_ID,
                               L.NO_PRODUCER_EPOCH, L.NO_SEQUENCE, count)
    length = L.V2_BODY_HEAD_SIZE + len(payload)
    if length > INT32_MAX:
        raise ValueError(f"a batch of {length + L.LOG_OVERHEAD} bytes does not fit Kafka's int32 size field")
    crc = _crc32c(payload, _crc32c(after))
    return b"".join((_V2_BEFORE_CRC.pack(base_offset, length, NO_PARTITION_LEADER_EPOCH, 2), _UINT32.pack(crc),
                     after, payload))


class _OpenBatch:
    """One output batch being filled: a magic-2 batch or a compressed magic 0/1 wrapper.

    Each record is encoded when it is offered (:meth:`encode`), so the batch's size before compression is
    known exactly before the record is taken (:meth:`add`); that is what cuts runs at ``max_batch_bytes``.
    The layout is ``MemoryRecordsBuilder``'s: v2 base timestamp = the first record's, deltas from it; magic 1
    inner offsets relative to the first record's offset, magic 0 absolute; wrapper offset = the last
    record's; LogAppendTime puts the append time on every legacy record and in the v2 max timestamp.
    """

    __slots__ = ("magic", "codec", "ts_type", "append_time", "base_offset", "base_timestamp", "parts", "count",
                 "size", "last_offset", "max_timestamp", "canon")

    def __init__(self, magic: int, codec: int, ts_type: TimestampType, append_time, base_offset: int,
                 base_timestamp: int, keep_canon: bool):
        self.magic = magic
        self.codec = codec
        self.ts_type = NTT if magic == 0 else ts_type
        self.append_time = append_time
        self.base_offset = base_offset
        self.base_timestamp = base_timestamp
        self.parts: list = []
        self.canon: list | None = [] if keep_canon else None
        self.count = 0
        self.last_offset = -1
        self.max_timestamp = L.NO_TIMESTAMP
        if magic == 2:
            self.size = L.V2_RECORD_BATCH_OVERHEAD
        else:  # the wrapper message around the inner set
            self.size = L.LOG_OVERHEAD + (L.LEGACY_RECORD_OVERHEAD_V0 if magic == 0 else L.LEGACY_RECORD_OVERHEAD_V1)

    def encode(self, offset: int, timestamp: int, key, value) -> bytes:
        """The record's bytes in this batch; ValueError where Kafka's builder refuses the record."""
        ts = timestamp if self.append_time is None or self.magic == 2 else self.append_time
        if ts < L.NO_TIMESTAMP:
            raise ValueError(f"Invalid negative timestamp {ts}")
        if offset <= self.last_offset:
            raise ValueError(f"Illegal offset {offset} following previous offset {self.last_offset} "
                             "(Offsets must increase monotonically).")
        delta = offset - self.base_offset
        if not 0 <= delta <= INT32_MAX:
            raise ValueError(f"offset {offset} is not within 2^31-1 above the batch's base offset {self.base_offset}")
        if self.magic == 2:
            return v2_record(delta, timestamp - self.base_timestamp, key, value)
        return legacy_entry(delta if self.magic == 1 else offset, self.magic, self.ts_type, ts, key, value)

    def add(self, offset: int, timestamp: int, key, value, encoded: bytes) -> None:
        self.parts.append(encoded)
        self.count += 1
        self.size += len(encoded)
        self.last_offset = offset
        if timestamp > self.max_timestamp:
            self.max_timestamp = timestamp
        if self.canon is not None:
            if self.magic == 0:
                self.canon.append(canonical_record(offset, L.NO_TIMESTAMP, NTT, key, value))
            else:
                self.canon.append(canonical_record(offset, timestamp if self.append_time is None else self.append_time,
                                                   self.ts_type, key, value))

    def build(self) -> bytes:
        records = b"".join(self.parts)
        if self.magic == 2:
            payload = records if self.codec == _codec.NONE else _codec.compress(self.codec, records, magic=2)
            attributes = self.codec | (L.V2_TIMESTAMP_TYPE_MASK if self.ts_type == LAT else 0)
            max_ts = self.append_time if self.append_time is not None else self.max_timestamp
            return v2_batch(self.base_offset, attributes, self.last_offset - self.base_offset, self.base_timestamp,
                            max_ts, self.count, payload)
        compressed = _codec.compress(self.codec, records, magic=self.magic)
        wrapper_ts = self.append_time if self.append_time is not None else self.max_timestamp
        return legacy_message(self.last_offset, self.magic, None, compressed, wrapper_ts,
                              CT if self.magic == 0 else self.ts_type, self.codec)


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
        self._keep_below = False  # copy batches below the target magic (set by convert for a down-conversion)

    # --- entry point --------------------------------------------------------------------------------
    def convert(self, reader) -> ConversionStats:
        """Walk ``reader`` (a :class:`kdump.segment.SegmentReader`, walked twice) to its end.

        Kafka has two conversion paths. Down-conversion (``RecordsUtil.downConvert``, for an old
        consumer) copies batches whose magic is at or below the target as they are; up-conversion
        (``LogValidator``) writes everything in the target magic. A first pass over the batch headers
        (no record is decoded) decides: the segment is down-converted when one of its batches is above
        the target magic. Only a target of 1 can have batches on both sides.
        """
        stats = self.stats
        stats.down_conversion = self._has_batches_above_target(reader)
        self._keep_below = stats.down_conversion and not self.options.all_in_target_magic
        for batch in reader:
            stats.source_batches += 1
            stats.source_bytes += batch.size
            stats.source_magics.add(batch.magic)
            if not batch.is_valid():
                what = "record batch" if batch.magic == 2 else f"magic {batch.magic} message"
                raise ConversionRefused(
                    "crc-mismatch",
                    f"the {what} is corrupt (stored crc = {batch.crc}, computed crc = {batch.compute_crc()}); "
                    "kdump converts only intact data (`kdump dump` shows what is readable)",
                    batch.position)
            if batch.magic == 2:
                self._flush_run()
                self._v2_batch(batch)
            elif batch.is_compressed:
                self._flush_run()
                self._wrapper(batch)
            else:
                self._message(batch)
        self._flush_run()
        self._tail(reader.tail)
        if stats.kept_below_target:
            n = stats.kept_below_target
            stats.notes.append(f"a down-conversion (the input has batches above magic {self.options.to_magic}): "
                               f"{n:,} {'batch' if n == 1 else 'batches'} below magic {self.options.to_magic} "
                               "kept as they were, as Kafka does (--all-in-target-magic rewrites them)")
        return stats

    def _has_batches_above_target(self, reader) -> bool:
        target = self.options.to_magic
        if target == 2:
            return False
        batches = iter(reader)
        try:
            return any(batch.magic > target for batch in batches)  # stops at the first one
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()

    def _copy_below_target(self, magic: int) -> bool:
        """A batch below the target magic is copied as it is (when its codec stays): Kafka's down-conversion."""
        return self._keep_below and magic < self.options.to_magic

    def _tail(self, tail) -> None:
        if tail is None or tail.kind == "end":
            return
        if tail.kind in ("short", "truncated"):
            # Kafka's readers stop there too ("Found N invalid bytes at the end"); the bytes are not copied.
            self.stats.losses.add("trailing-bytes", tail.length, tail.position)
            self.stats.notes.append(f"the input ends in {tail.length:,} bytes that are no whole batch (at byte "
                                    f"{tail.position}): {tail.message}; `kdump verify` tells a crash-cut tail "
                                    "from a damaged size field with batches after it")
        elif tail.kind == "zeros":
            self.stats.notes.append(f"{tail.length:,} zero bytes of padding at byte {tail.position} (a "
                                    "preallocated tail, no data) were not copied")
        else:
            raise ConversionRefused(tail.code or "corrupt", f"{tail.message}; nothing after it can be read, "
                                    "so the segment is not converted", tail.position)

    # --- output helpers -------------------------------------------------------------------------------
    def _write(self, data: bytes, entries: int, records: int, canon: list | None) -> None:
        self.sink.write(data, entries)
        self.stats.output_batches += entries
        self.stats.output_records += records
        self.stats.output_bytes += len(data)
        if canon:
            self.digest.update(b"".join(canon))

    def _write_batch(self, batch: _OpenBatch) -> None:
        self._write(batch.build(), 1, batch.count, batch.canon)

    def _codec_for(self, source_codec: int, position: int, what: str, batches: int = 1) -> int:
        codec = self.options.target_codec(source_codec)
        if codec == _codec.ZSTD and self.options.to_magic < 2:
            # Kafka: UnsupportedCompressionTypeException "Down-conversion of zstandard-compressed batches
            # is not supported" -- zstd arrived with magic 2 (KIP-110) and old clients cannot read it.
            raise ConversionRefused(
                "zstd-below-v2",
                f"{what} is zstd-compressed, and magic {self.options.to_magic} has no zstd (it came with magic 2; "
                "Kafka refuses this down-conversion too); add --recompress zstd=lz4 (or gzip, snappy, none) "
                "to write it with another codec",
                position)
        if codec != source_codec:
            key = (source_codec, codec)
            self.stats.recompressed[key] = self.stats.recompressed.get(key, 0) + batches
        return codec

    def _refuse_bad_value(self, e: ValueError, position: int, what: str):
        # The encoders refuse what Kafka's MemoryRecordsBuilder refuses (e.g. a negative timestamp other
        # than -1, offsets that do not increase): the input holds something no Kafka writer produces.
        raise ConversionRefused("unconvertible", f"{what} cannot be written in magic {self.options.to_magic}: {e}",
                                position) from None

    def _read_failed(self, e: FormatError, position: int):
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
                canon = [] if keep_canon else None
                out_type = NTT if target == 0 else ts_type
                for offset, ts, key, value in records:
                    if append_time is not None:
                        ts = append_time  # LegacyRecord under LogAppendTime carries the append time
                    if ts < L.NO_TIMESTAMP:
                        raise ValueError(f"Invalid negative timestamp {ts} (offset {offset})")
                    parts.append(legacy_entry(offset, target, out_type, ts, key, value))
                    if keep_canon:
                        canon.append(canonical_record(offset, ts if target else L.NO_TIMESTAMP, out_type, key, value))
                self._write(b"".join(parts), len(parts), len(parts), canon)
                return
            batch = None
            for offset, ts, key, value in records:
                if batch is None:
                    batch = _OpenBatch(target, codec, ts_type, append_time, offset, ts, keep_canon)
                batch.add(offset, ts, key, value, batch.encode(offset, ts, key, value))
            if batch is not None:
                self._write_batch(batch)
        except ValueError as e:
            self._refuse_bad_value(e, pos, what)

    # --- magic 2 --------------------------------------------------------------------------------------
    def _v2_columns(self, batch):
        """Records with their *stored* timestamps (base + delta, also under LogAppendTime)."""
        if batch.records_count == 0:
            return _v2.RecordColumns(b"")
        try:
            buf, start, end = batch.records_payload(self.options.record_limit)
        except FormatError as e:
            self._read_failed(e, batch.position)
        cols = _v2.parse_records(buf, start, end, batch.records_count, batch.base_offset, batch.base_timestamp, None)
        if cols.error is not None:
            self._read_failed(cols.error.at(batch.position), batch.position)
        return cols

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
        cols = self._v2_columns(batch)
        n = cols.count
        stats.source_records += n
        append_time = batch.max_timestamp if batch.attributes & L.V2_TIMESTAMP_TYPE_MASK else None
        ts_type = batch.timestamp_type
        if target == 2:
            self._v2_to_v2(batch, cols, append_time)
            return

        # magic 2 -> 0/1 (RecordsUtil.convertRecordBatch): records kept with their offsets, the rest counted
        codec = self._codec_for(batch.codec_id, pos, what)
        stats.converted_batches += 1
        offsets, timestamps = cols.offsets, cols.timestamps
        nheaders = header_records = 0
        for h in cols.headers:
            if h:
                nheaders += len(h)
                header_records += 1
        if nheaders:
            losses.add("headers", nheaders, pos)
            losses.header_records += header_records
        if batch.producer_id != L.NO_PRODUCER_ID or batch.producer_epoch != L.NO_PRODUCER_EPOCH \
                or batch.base_sequence != L.NO_SEQUENCE:
            losses.add("producer-state", 1, pos)
        if batch.is_transactional:
            losses.add("transactional", 1, pos)
        if batch.partition_leader_epoch != NO_PARTITION_LEADER_EPOCH:
            losses.add("leader-epoch", 1, pos)
        if batch.delete_horizon_ms is not None:
            losses.add("delete-horizon", 1, pos)
        if n and offsets[n - 1] != batch.last_offset:
            losses.add("last-offsets", 1, pos)
        if append_time is not None:
            losses.add("hidden-timestamps", sum(1 for t in timestamps if t != append_time), pos)
        if target == 0:
            visible = [append_time] * n if append_time is not None else timestamps
            losses.add("timestamps", sum(1 for t in visible if t != L.NO_TIMESTAMP), pos)
            if append_time is not None:
                losses.add("log-append-time", n, pos)
        mv = memoryview(cols.buf)
        key_pos, key_len, value_pos, value_len = cols.key_pos, cols.key_len, cols.value_pos, cols.value_len
        # keys and values as slices of the decompressed payload: no copy per record
        records = ((offsets[i], timestamps[i],
                    None if key_len[i] < 0 else mv[key_pos[i]:key_pos[i] + key_len[i]],
                    None if value_len[i] < 0 else mv[value_pos[i]:value_pos[i] + value_len[i]]) for i in range(n))
        self._records_out(pos, what, ts_type, append_time, codec, records)

    def _v2_to_v2(self, batch, cols, append_time) -> None:
        """A v2 batch stays a v2 batch: copied, or rebuilt with another codec keeping every header field."""
        stats = self.stats
        n = cols.count
        codec = batch.codec_id
        if not (batch.is_control or n == 0):  # Kafka never compresses control or empty batches
            codec = self._codec_for(batch.codec_id, batch.position,
                                    f"the batch of offsets {batch.base_offset}-{batch.last_offset}")
        canon = None
        if self.digest is not None:
            ts_type = batch.timestamp_type
            canon = [canonical_record(cols.offsets[i], cols.timestamps[i] if append_time is None else append_time,
                                      ts_type, cols.key(i), cols.value(i), cols.headers[i]) for i in range(n)]
        if codec == batch.codec_id:
            stats.copied_batches += 1
            self._write(batch.entry_bytes(), 1, n, canon)
            return
        stats.converted_batches += 1
        try:
            builder = RecordBatchBuilder(
                batch.base_offset, codec, batch.timestamp_type, log_append_time=append_time,
                producer_id=batch.producer_id, producer_epoch=batch.producer_epoch,
                base_sequence=batch.base_sequence, is_transactional=batch.is_transactional,
                partition_leader_epoch=batch.partition_leader_epoch, delete_horizon_ms=batch.delete_horizon_ms)
            for i in range(n):
                builder.append(cols.offsets[i], cols.timestamps[i], cols.key(i), cols.value(i), cols.headers[i])
            if batch.last_offset != builder.last_offset:
                builder.override_last_offset(batch.last_offset)
            data = builder.build()
        except ValueError as e:
            self._refuse_bad_value(e, batch.position, f"the batch of offsets {batch.base_offset}-{batch.last_offset}")
        self._write(data, 1, n, canon)

    # --- compressed legacy wrappers ---------------------------------------------------------------------
    def _wrapper(self, batch) -> None:
        stats = self.stats
        target = self.options.to_magic
        pos = batch.position
        wrapper = batch.message
        what = f"the magic {wrapper.magic} wrapper at offset {wrapper.offset}"
        limit = self.options.record_limit
        try:
            cols = batch.columns(limit)
        except FormatError as e:
            self._read_failed(e, pos)
        if cols.error is not None:
            self._read_failed(cols.error, pos)
        n = cols.count
        stats.source_records += n
        if not all(cols.valid):
            # Kafka checks inner CRCs when it converts a compressed legacy set (LogValidator).
            i = cols.valid.index(False)
            stored = batch.inner_messages(limit)[0][i]
            raise ConversionRefused(
                "crc-mismatch",
                f"the inner message at offset {cols.offsets[i]} of {what} is corrupt (stored crc = {cols.crcs[i]}, "
                f"computed crc = {stored.compute_crc()})", pos)
        ts_type = wrapper.timestamp_type
        append_time = wrapper.timestamp if ts_type == LAT else None
        source_codec = wrapper.codec_id
        codec = self._codec_for(source_codec, pos, what)
        offsets, timestamps = cols.offsets, cols.timestamps
        if (wrapper.magic == target or self._copy_below_target(wrapper.magic)) and codec == source_codec:
            stats.copied_batches += 1
            if wrapper.magic != target:
                stats.kept_below_target += 1
            canon = None
            if self.digest is not None:
                canon = [canonical_record(offsets[i], timestamps[i], ts_type, cols.key(i), cols.value(i))
                         for i in range(n)]
            self._write(batch.entry_bytes(), 1, n, canon)
            return
        stats.converted_batches += 1
        if append_time is not None:
            # Kafka converts what readers see: the append time, not the create times stored inside.
            stored = batch.inner_messages(limit)[0]
            stats.losses.add("hidden-timestamps", sum(1 for m in stored if m.timestamp != append_time), pos)
        self._count_lost_timestamps(wrapper.magic, ts_type, timestamps, pos)
        self._records_out(pos, what, _ts_type_of_unit(wrapper.magic, ts_type), append_time, codec,
                          [(offsets[i], timestamps[i], cols.key(i), cols.value(i)) for i in range(n)])

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
        if run is not None and (run_key != self._run_key or offset <= run.last_offset
                                or offset - run.base_offset > INT32_MAX
                                or (opts.max_batch_records and run.count >= opts.max_batch_records)):
            self._flush_run()
            run = None
        try:
            if run is not None:
                encoded = run.encode(offset, ts, key, value)
                if opts.max_batch_bytes and run.size + len(encoded) > opts.max_batch_bytes:
                    self._flush_run()
                    run = None
            if run is None:
                run = self._open_run(run_key, magic, LAT if log_append_time else CT,
                                     ts if log_append_time else None, batch, codec)
                encoded = run.encode(offset, ts, key, value)
        except ValueError as e:
            self._refuse_bad_value(e, batch.position, f"the magic {magic} message at offset {offset}")
        run.add(offset, ts, key, value, encoded)
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
            self._refuse_bad_value(e, self._run_position, f"the messages at offsets {run.base_offset}-{run.last_offset}")

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
