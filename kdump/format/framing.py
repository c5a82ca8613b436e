"""The framing of a log file, sans I/O: what an entry header says, and why a walk stops.

Kafka walks a ``.log`` file entry by entry (``FileLogInputStream.nextBatch``, spec §3.9): a 12-byte prefix
(offset, size), then ``size`` bytes whose 5th is the magic byte. This module holds the rules of that walk
on bytes already read; :mod:`kdump.read.segment` is the one module that reads files and drives them.

* :func:`parse_header`: the header of the entry at a position (prefix plus at most 61 bytes), as a
  :class:`BatchHeader`, or the :class:`Stop` that Kafka's walk would make there;
* :func:`entry_batch`: the batch object of a whole framed entry, by its magic byte;
* :func:`header_sane` and :func:`crc_span`: the cheap checks that tell an entry from random bytes, used
  to resynchronise after damage (no CRC is computed here);
* the rules themselves, each spelled once: an entry's size field (:func:`size_below_minimum`,
  :func:`size_beyond_end`, :func:`size_above_limit`, :func:`too_short`, and per format
  :func:`~kdump.format.v2.batch_too_small`, :func:`~kdump.format.legacy.message_too_small`: the messages every
  walk and command gives) and a magic 2 batch header's fields (:data:`V2_HEADER_RULES`, with
  :func:`v2_header_fast_ok`, the same rules in one expression for verify's hot path);
* :class:`Stop` with one set of kinds (``END`` .. ``INCOMPLETE``): why a walk ended, for every walk.
"""
from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from kdump.codec import CODECS
from kdump.errors import FormatError
from kdump.format import layout as L
from kdump.format.crc import crc32c
from kdump.format.legacy import LegacyBatch, message_too_small
from kdump.format.limits import DEFAULT_MAX_DECOMPRESSED_BYTES
from kdump.format.v2 import RecordBatch, batch_too_small

# --- why a walk stops ------------------------------------------------------------------------------------
END = "end"  # nothing left
SHORT = "short"  # fewer than 18 bytes left: Kafka's trailing bytes
TRUNCATED = "truncated"  # the last entry runs past the end (a crash-cut tail: Kafka's trailing bytes)
INCOMPLETE = "incomplete"  # a live file: the last entry is not written yet (not corruption)
ZEROS = "zeros"  # zero-filled from here to the end (a preallocated tail)
CORRUPT = "corrupt"  # bytes that are no entry: a size below 14, an unknown magic, too small for its header
TOO_LARGE = "too-large"  # an entry above max_batch_bytes
LIMIT = "limit"  # stopped at the byte limit the reader was given
BEYOND = "beyond"  # the position asked for lies past the end of the file
KINDS = (END, SHORT, TRUNCATED, INCOMPLETE, ZEROS, CORRUPT, TOO_LARGE, LIMIT, BEYOND)
TRAILING = (SHORT, TRUNCATED)  # what Kafka's DumpLogSegments reports as "Found N invalid bytes at the end"


@dataclass(frozen=True)
class Stop:
    """What ended a walk (or why no entry starts at a position): ``kind`` is one of :data:`KINDS`.

    ``length``: bytes from ``position`` to the end of what was read; ``declared``: the entry's declared
    length (prefix included) where its size is what stopped the walk; ``code``: the finding code for it;
    ``fatal``: True where Kafka's DumpLogSegments dies instead of reporting trailing bytes."""

    kind: str
    position: int
    length: int = 0
    message: str = ""
    code: str = ""
    fatal: bool = False
    declared: int | None = None


# --- the rules of an entry's size field, each spelled once --------------------------------------------------
MIN_ENTRY_SIZE = L.LEGACY_RECORD_OVERHEAD_V0  # 14: a magic 0 message with no key and no value, Kafka's minimum


def size_below_minimum(size: int) -> str:
    """A size field below :data:`MIN_ENTRY_SIZE` (Kafka throws CorruptRecordException)."""
    return (f"entry size field is {size}, below the minimum of {MIN_ENTRY_SIZE}: a log entry is at least "
            f"{MIN_ENTRY_SIZE} bytes (Kafka: CorruptRecordException)")


def size_beyond_end(size: int, remaining: int) -> str:
    """A size field that runs past the end of the file (``remaining``: bytes from the entry's start)."""
    return f"entry size field is {size}: the entry declares {L.LOG_OVERHEAD + size} bytes but only {remaining} remain"


def too_short(remaining: int) -> str:
    """Fewer bytes left than an entry's header up to its magic byte: Kafka's walk reads no entry there."""
    return (f"{remaining} bytes at the end are too few for an entry (at least {L.HEADER_SIZE_UP_TO_MAGIC + 1} are "
            "needed)")


def size_above_limit(size: int, max_batch_bytes: int) -> str:
    """A size field above the memory limit a reader was given (not damage: a higher limit reads it)."""
    return f"an entry of {L.LOG_OVERHEAD + size} bytes is above the limit of {max_batch_bytes} bytes per batch"


def end_stop(position: int) -> Stop:
    return Stop(END, position)


def short_stop(position: int, remaining: int) -> Stop:
    return Stop(SHORT, position, remaining, too_short(remaining), code="truncated-tail")


def truncated_stop(position: int, size: int, remaining: int) -> Stop:
    total = L.LOG_OVERHEAD + size
    return Stop(TRUNCATED, position, remaining, f"{size_beyond_end(size, remaining)} (an incomplete last batch)",
                code="truncated-tail", declared=total)


def shrank_stop(position: int, remaining: int) -> Stop:
    """The file ended before what its size promised: it shrank while being read."""
    return Stop(TRUNCATED, position, remaining,
                f"the file ended at byte {position} while being read (was it truncated meanwhile?)",
                code="truncated-tail", fatal=True)


def zeros_stop(position: int, remaining: int) -> Stop:
    return Stop(ZEROS, position, remaining,
                f"{remaining} zero bytes from here to the end (a preallocated or zero-filled tail)",
                code="zero-padding", fatal=True)


def size_stop(position: int, size: int, remaining: int) -> Stop:
    """A size field below Kafka's minimum (what it throws CorruptRecordException for)."""
    return Stop(CORRUPT, position, remaining, size_below_minimum(size), code="size-below-minimum", fatal=True,
                declared=L.LOG_OVERHEAD + size)


def too_large_stop(position: int, size: int, remaining: int, max_batch_bytes: int) -> Stop:
    return Stop(TOO_LARGE, position, remaining, size_above_limit(size, max_batch_bytes), code="batch-too-large",
                fatal=True, declared=L.LOG_OVERHEAD + size)


def corrupt_stop(position: int, remaining: int, error: FormatError) -> Stop:
    return Stop(CORRUPT, position, remaining, error.message, code=error.code, fatal=True)


def settle(stop: Stop, *, limited: bool = False, live: bool = False) -> Stop:
    """A stop at the end of what was read, in its context: when the reader was given a byte limit, the
    end (or an entry cut by it) is the limit's; in a live file a partial last entry is not written yet."""
    if stop.kind in TRAILING and not stop.fatal:
        if limited:
            return Stop(LIMIT, stop.position, stop.length, "stopped at the byte limit given")
        if live:
            return Stop(INCOMPLETE, stop.position, stop.length,
                        f"{stop.length} bytes of an entry that is not completely written yet", declared=stop.declared)
    elif stop.kind == END and limited:
        return Stop(LIMIT, stop.position, 0, "stopped at the byte limit given")
    return stop


# --- one entry -------------------------------------------------------------------------------------------
def entry_batch(position: int, offset: int, size: int, body: bytes, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES):
    """The batch object for one framed entry (``body`` = the ``size`` bytes after the size field), by its
    magic byte; ``limit`` bounds the decompression a legacy wrapper's first offset needs (the reader's).
    Raises FormatError for an unknown magic or an entry too small for its format."""
    magic = body[L.BODY_MAGIC]
    if magic == 2:
        return RecordBatch(position, offset, size, body)
    if magic <= 1:
        return LegacyBatch(position, offset, body, limit)
    raise FormatError("magic-unknown",
                      f"unknown magic byte {magic} (expected 0, 1 or 2) in an entry declaring {size} bytes",
                      position=position)


class BatchHeader:
    """The header fields of the batch at ``position`` (plain slotted class: cheap to create)."""

    __slots__ = ("position", "size", "magic", "last_offset", "base_offset", "max_timestamp", "attributes",
                 "partition_leader_epoch", "producer_id", "producer_epoch", "records_count")

    def __init__(self, position: int, size: int, magic: int, last_offset: int, base_offset: int | None,
                 max_timestamp: int, attributes: int, partition_leader_epoch: int = -1, producer_id: int = -1,
                 producer_epoch: int = -1, records_count: int | None = None):
        self.position = position
        self.size = size  # whole entry, prefix included
        self.magic = magic
        self.last_offset = last_offset
        self.base_offset = base_offset  # None for a compressed legacy wrapper (needs decompression)
        self.max_timestamp = max_timestamp
        self.attributes = attributes
        self.partition_leader_epoch = partition_leader_epoch
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.records_count = records_count

    def __repr__(self) -> str:
        return (f"BatchHeader(position={self.position}, size={self.size}, magic={self.magic}, "
                f"base_offset={self.base_offset}, last_offset={self.last_offset})")

    @property
    def end(self) -> int:
        return self.position + self.size

    @property
    def is_control(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & L.V2_CONTROL_MASK)

    @property
    def is_transactional(self) -> bool:
        return self.magic >= 2 and bool(self.attributes & L.V2_TRANSACTIONAL_MASK)


PEEK_BYTES = L.V2_RECORD_BATCH_OVERHEAD  # 61: enough of an entry for every header field


def parse_header(head: bytes, position: int, remaining: int) -> BatchHeader | Stop:
    """The header of the entry at ``position`` from ``head`` (its first bytes, up to :data:`PEEK_BYTES`;
    ``remaining``: bytes from ``position`` to the end of the file), or the stop Kafka's walk makes there.
    Messages name the position: they are quoted where the position is not otherwise said."""
    if len(head) <= L.HEADER_SIZE_UP_TO_MAGIC:
        return Stop(SHORT, position, len(head), f"at position {position}: {too_short(len(head))}",
                    code="truncated-tail")
    offset, size = L.PREFIX.unpack_from(head, 0)
    if size < MIN_ENTRY_SIZE:
        return Stop(CORRUPT, position, remaining, f"at position {position}: {size_below_minimum(size)}",
                    code="size-below-minimum", fatal=True, declared=L.LOG_OVERHEAD + size)
    total = L.LOG_OVERHEAD + size
    if total > remaining:
        return Stop(TRUNCATED, position, remaining, f"at position {position}: {size_beyond_end(size, remaining)}",
                    code="truncated-tail", declared=total)
    magic = head[L.MAGIC_AT]
    if magic == 2:
        if size < L.V2_BODY_HEAD_SIZE or len(head) < L.V2_RECORD_BATCH_OVERHEAD:
            return Stop(CORRUPT, position, remaining, f"at position {position}: {batch_too_small(total)}",
                        code="batch-too-small", fatal=True, declared=total)
        (base, _size, ple, _magic, _crc, attrs, last_delta, _base_ts, max_ts, pid, epoch, _seq,
         count) = L.V2_HEAD.unpack_from(head, 0)
        return BatchHeader(position, total, 2, base + last_delta, base, max_ts, attrs & 0xFFFF, ple, pid, epoch,
                           count)
    if magic > 2:
        return Stop(CORRUPT, position, remaining,
                    f"invalid magic byte {magic} at position {position} (expected 0, 1 or 2)",
                    code="magic-unknown", fatal=True, declared=total)
    _off, _size, _crc, _magic, attrs = L.LEGACY_ENTRY_HEAD.unpack_from(head, 0)
    ts = L.NO_TIMESTAMP
    if magic == 1:
        if size < L.LEGACY_RECORD_OVERHEAD_V1:
            why = message_too_small("magic 1 message", size, L.LEGACY_RECORD_OVERHEAD_V1)
            return Stop(CORRUPT, position, remaining, f"at position {position}: {why}", code="message-too-small",
                        fatal=True, declared=total)
        (ts,) = L.INT64.unpack_from(head, L.LEGACY_TIMESTAMP_AT)
    compressed = attrs & L.LEGACY_CODEC_MASK
    return BatchHeader(position, total, magic, offset, None if compressed else offset, ts, attrs & 0xFF)


# --- the rules of a magic 2 batch header, one table -----------------------------------------------------------
class V2HeaderFields(NamedTuple):
    """The header fields the rules read, as plain integers (a :class:`~kdump.format.v2.RecordBatch` has the same
    names, so the rules read either)."""

    attributes: int
    last_offset_delta: int
    records_count: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    max_timestamp: int


SOUND_V2_HEADER = V2HeaderFields(0, 0, 1, -1, -1, -1, 0)  # a header that breaks no rule (the rules' examples vary it)


@dataclass(frozen=True)
class HeaderRule:
    """One rule of a magic 2 batch header: ``code`` (the finding), ``broken(header)`` (True when the header breaks
    it), ``message(header)`` (what is wrong, naming the fields), ``sanity`` (also one of the checks that tell a
    header from random bytes when resynchronising), ``example``: field values (over :data:`SOUND_V2_HEADER`) that
    break it and no other rule -- what the test of :func:`v2_header_fast_ok` feeds it."""

    code: str
    broken: Callable[[Any], bool]
    message: Callable[[Any], str]
    sanity: bool
    example: dict


def _producer_problem(h) -> str | None:
    """Without a producer id the epoch and sequence fields mean nothing, and real writers leave various values
    there (the group coordinator and pre-idempotence Java producers write sequence 0, some clients epoch 0), so
    only contradictions that matter are rules."""
    pid, epoch, seq = h.producer_id, h.producer_epoch, h.base_sequence
    if pid < -1:
        return "a producer id below -1"
    if pid == -1 and h.attributes & L.V2_TRANSACTIONAL_MASK:
        return "transactional without a producer id"
    if pid >= 0 and (epoch < 0 or seq < -1):
        return "a producer id with " + ("no epoch" if epoch < 0 else "a sequence below -1")
    return None


V2_HEADER_RULES: tuple[HeaderRule, ...] = (
    HeaderRule("codec-invalid", lambda h: h.attributes & L.V2_CODEC_MASK >= len(CODECS),
               lambda h: f"unknown compression codec id {h.attributes & 7} (attributes {h.attributes})",
               True, {"attributes": 5}),
    # bit 7 and the high byte are never set
    HeaderRule("attributes-invalid", lambda h: h.attributes < 0 or h.attributes & 0x80 or h.attributes > 0xFF,
               lambda h: f"attributes {h.attributes & 0xFFFF:#06x} set bits Kafka never uses "
                         "(only bits 0-6 have a meaning)",
               True, {"attributes": 0x80}),
    HeaderRule("last-offset-delta-invalid", lambda h: h.last_offset_delta < 0,
               lambda h: f"lastOffsetDelta is {h.last_offset_delta} (negative)",
               True, {"last_offset_delta": -1, "records_count": 0}),
    HeaderRule("record-count-invalid",
               lambda h: h.records_count < 0
               or (h.last_offset_delta >= 0 and h.records_count > h.last_offset_delta + 1),
               lambda h: f"record count {h.records_count} does not fit the batch's offset range "
                         f"({h.last_offset_delta + 1} offsets)",
               True, {"records_count": 2}),
    HeaderRule("producer-fields-invalid", lambda h: _producer_problem(h) is not None,
               lambda h: f"producer id {h.producer_id}, epoch {h.producer_epoch}, base sequence {h.base_sequence}: "
                         f"{_producer_problem(h)}",
               False, {"producer_id": 5, "producer_epoch": -1, "base_sequence": 0}),
    # (a control batch -- a transaction marker -- has no sequence)
    HeaderRule("producer-sequence-missing",
               lambda h: h.producer_id >= 0 and h.producer_epoch >= 0 and h.base_sequence == -1
               and not h.attributes & L.V2_CONTROL_MASK,
               lambda h: f"data batch of producer {h.producer_id} (epoch {h.producer_epoch}) has no base sequence",
               False, {"producer_id": 5, "producer_epoch": 0, "base_sequence": -1}),
    HeaderRule("timestamp-invalid", lambda h: h.max_timestamp < -1,
               lambda h: f"max timestamp {h.max_timestamp} is below -1",
               False, {"max_timestamp": -2}),
    HeaderRule("timestamp-invalid",
               lambda h: h.max_timestamp == -1 and h.attributes & L.V2_TIMESTAMP_TYPE_MASK and h.records_count > 0,
               lambda h: "LogAppendTime batch without an append time (max timestamp -1)",
               False, {"max_timestamp": -1, "attributes": L.V2_TIMESTAMP_TYPE_MASK}),
)
SANITY_RULES = tuple(rule for rule in V2_HEADER_RULES if rule.sanity)


def v2_header_problems(header) -> list[tuple[str, str]]:
    """``(code, message)`` of every rule of :data:`V2_HEADER_RULES` that ``header`` breaks, in table order."""
    return [(rule.code, rule.message(header)) for rule in V2_HEADER_RULES if rule.broken(header)]


_CODEC_MASK, _CODEC_COUNT = L.V2_CODEC_MASK, len(CODECS)  # (module constants: this runs once per batch)
_ALLOWED = tuple(frozenset(c.id for c in CODECS if c.min_magic <= magic) for magic in range(3))  # codecs by magic


def v2_header_fast_ok(b) -> bool:
    """True when ``b`` breaks no rule of :data:`V2_HEADER_RULES`: the common case in one expression, so that a
    walk over millions of small batches stays fast. It must say exactly what the table says (tests/test_framing.py
    holds it to every rule's example and to a grid of field values): a rule added to the table alone is caught
    there, not silently skipped by the walks that trust this."""
    attrs = b.attributes
    lod = b.last_offset_delta
    count = b.records_count
    pid = b.producer_id
    mts = b.max_timestamp
    return (0 <= attrs <= 0x7F and (attrs & _CODEC_MASK) < _CODEC_COUNT and lod >= 0
            and 0 <= count <= lod + 1 and mts >= -1
            and ((pid == -1 and not attrs & L.V2_TRANSACTIONAL_MASK)
                 or (pid >= 0 and b.producer_epoch >= 0
                     and (b.base_sequence >= 0 or (b.base_sequence == -1 and attrs & L.V2_CONTROL_MASK))))
            and not (mts < 0 and attrs & L.V2_TIMESTAMP_TYPE_MASK and count > 0))


# --- telling an entry from random bytes (resynchronisation) ----------------------------------------------
def header_sane(head: bytes, max_batch_bytes: int, room: int, *, need_fit: bool = True,
                read_int32: Callable[[int], int | None] | None = None) -> bool:
    """Cheap sanity checks on the entry whose first bytes are ``head`` (up to 61; fewer where the file
    ends). No CRC. ``room``: bytes from the entry's start to the end of the file; with ``need_fit`` the
    entry must end inside them. ``read_int32(at)`` gives the int32 at ``at`` bytes from the entry's start
    when it lies beyond ``head`` (a legacy value length after a long key), or None."""
    n = len(head)
    if n < L.HEADER_SIZE_UP_TO_MAGIC:
        return False
    magic = head[L.MAGIC_AT]
    if magic == 2:
        if n < L.V2_RECORD_BATCH_OVERHEAD:
            return False
        (base, size, _ple, _m, _crc, attrs, lod, _bts, mts, pid, epoch, seq, count) = L.V2_HEAD.unpack_from(head)
        if size < L.V2_BODY_HEAD_SIZE or size > max_batch_bytes or base < 0:
            return False
        fields = V2HeaderFields(attrs, lod, count, pid, epoch, seq, mts)
        if any(rule.broken(fields) for rule in SANITY_RULES):
            return False
        # No writer puts a value below -1 in these, with or without a producer id (the producer rules of the
        # table are about combinations real writers do leave, so they are findings, not signs of random bytes).
        if pid < -1 or epoch < -1 or seq < -1:
            return False
        if (attrs & 7) == 0 and size - L.V2_BODY_HEAD_SIZE < L.V2_MIN_RECORD_SIZE * count:
            return False
    elif magic <= 1:
        if n < L.LEGACY_ENTRY_HEAD.size:
            return False
        offset, size, _crc, _m, attrs = L.LEGACY_ENTRY_HEAD.unpack_from(head)
        overhead = L.LEGACY_RECORD_OVERHEAD_V0 if magic == 0 else L.LEGACY_RECORD_OVERHEAD_V1
        if (offset < 0 or size < overhead or size > max_batch_bytes
                or (attrs & L.LEGACY_CODEC_MASK) not in _ALLOWED[magic]):
            return False
        # The key and value lengths must add up to the message size exactly. Kafka's reader would
        # tolerate bytes after the value, but no Kafka writer produces them, and this check is what
        # makes random bytes almost never pass as a message.
        key_at = L.LOG_OVERHEAD + (L.LEGACY_V0_KEY_SIZE_AT if magic == 0 else L.LEGACY_V1_KEY_SIZE_AT)
        key_len = _int32(head, key_at, room, read_int32)
        if key_len is None or key_len < -1 or key_len > size - overhead:
            return False
        value_len = _int32(head, key_at + L.INT32.size + max(key_len, 0), room, read_int32)
        if value_len is None or value_len < -1:
            return False
        if overhead + max(key_len, 0) + max(value_len, 0) != size:
            return False
    else:
        return False
    return not need_fit or L.LOG_OVERHEAD + size <= room


def _int32(head: bytes, at: int, room: int, read_int32) -> int | None:
    if at + L.INT32.size <= len(head):
        return L.INT32.unpack_from(head, at)[0]
    if at + L.INT32.size > room or read_int32 is None:
        return None
    return read_int32(at)


def crc_span(head: bytes) -> tuple[int, int, int, Callable]:
    """(stored CRC, first covered byte, end, CRC function) of the entry whose header is ``head``; the
    positions are relative to the entry's start. Magic 2: CRC-32C from the attributes; 0/1: CRC-32 from
    the magic byte."""
    size = L.INT32.unpack_from(head, L.SIZE_AT)[0]
    if head[L.MAGIC_AT] == 2:
        return L.UINT32.unpack_from(head, L.V2_CRC_AT)[0], L.V2_CRC_FROM, L.LOG_OVERHEAD + size, crc32c
    return L.UINT32.unpack_from(head, L.LEGACY_CRC_AT)[0], L.LEGACY_CRC_FROM, L.LOG_OVERHEAD + size, zlib.crc32


def foreign_start(head: bytes, file_size: int) -> str | None:
    """Why the first bytes of a file cannot start a Kafka log (0.8 or later), or None if they can: the first
    entry's size field does not fit the file (or is below the smallest entry) *and* its magic byte is not 0, 1 or
    2. Damage inside a real segment leaves at least one of the two plausible; text renamed ``.log`` does not.
    ``head``: the file's first bytes (at least 17 to judge)."""
    if len(head) < L.MAGIC_AT + 1 or file_size < L.MAGIC_AT + 1:
        return None
    _offset, size = L.PREFIX.unpack_from(head, 0)
    magic = head[L.MAGIC_AT]
    if magic <= 2 or L.LEGACY_RECORD_OVERHEAD_V0 <= size <= file_size - L.LOG_OVERHEAD:
        return None
    start = head[:16]
    text = start.decode("ascii", "replace")
    looks = f"; it starts with text: {text!r}" if text.isprintable() else ""
    return (f"the first entry declares {L.LOG_OVERHEAD + size} bytes (the file has {file_size}) and magic byte "
            f"{magic} (Kafka writes 0, 1 or 2){looks}")
