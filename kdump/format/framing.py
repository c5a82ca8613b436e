"""The framing of a log file, sans I/O: what an entry header says, and why a walk stops.

Kafka walks a ``.log`` file entry by entry (``FileLogInputStream.nextBatch``, spec §3.9): a 12-byte prefix
(offset, size), then ``size`` bytes whose 5th is the magic byte. This module holds the rules of that walk
on bytes already read; :mod:`kdump.read.segment` is the one module that reads files and drives them.

* :func:`parse_header`: the header of the entry at a position (prefix plus at most 61 bytes), as a
  :class:`BatchHeader`, or the :class:`Stop` that Kafka's walk would make there;
* :func:`entry_batch`: the batch object of a whole framed entry, by its magic byte;
* :func:`header_sane` and :func:`crc_span`: the cheap checks that tell an entry from random bytes, used
  to resynchronise after damage (no CRC is computed here);
* :class:`Stop` with one set of kinds (``END`` .. ``INCOMPLETE``): why a walk ended, for every walk.
"""
from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

from kdump._crc import crc32c
from kdump.errors import FormatError
from kdump.format import layout as L
from kdump.format.legacy import LegacyBatch
from kdump.format.v2 import RecordBatch

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


def end_stop(position: int) -> Stop:
    return Stop(END, position)


def short_stop(position: int, remaining: int) -> Stop:
    return Stop(SHORT, position, remaining,
                f"{remaining} bytes at the end are too few for an entry header (17 bytes needed)",
                code="truncated-tail")


def truncated_stop(position: int, size: int, remaining: int) -> Stop:
    total = L.LOG_OVERHEAD + size
    return Stop(TRUNCATED, position, remaining,
                f"entry declares {total} bytes but only {remaining} remain (an incomplete last batch)",
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
    return Stop(CORRUPT, position, remaining,
                f"found record size {size} smaller than minimum record overhead ({L.LEGACY_RECORD_OVERHEAD_V0})",
                code="size-below-minimum", fatal=True, declared=L.LOG_OVERHEAD + size)


def too_large_stop(position: int, size: int, remaining: int, max_batch_bytes: int) -> Stop:
    return Stop(TOO_LARGE, position, remaining,
                f"entry declares {size} bytes, above the memory limit of {max_batch_bytes} bytes per batch "
                "(a higher limit reads it)", code="batch-too-large", fatal=True,
                declared=L.LOG_OVERHEAD + size)


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
def entry_batch(position: int, offset: int, size: int, body: bytes):
    """The batch object for one framed entry (``body`` = the ``size`` bytes after the size field), by its
    magic byte. Raises FormatError for an unknown magic or an entry too small for its format."""
    magic = body[L.BODY_MAGIC]
    if magic == 2:
        return RecordBatch(position, offset, size, body)
    if magic <= 1:
        return LegacyBatch(position, offset, body)
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
        return Stop(SHORT, position, len(head),
                    f"only {len(head)} bytes at position {position}, too few for a batch header (17 needed)",
                    code="truncated-tail")
    offset, size = L.PREFIX.unpack_from(head, 0)
    if size < L.LEGACY_RECORD_OVERHEAD_V0:
        return Stop(CORRUPT, position, remaining,
                    f"record size {size} at position {position} is smaller than the minimum record overhead (14)",
                    code="size-below-minimum", fatal=True, declared=L.LOG_OVERHEAD + size)
    total = L.LOG_OVERHEAD + size
    if total > remaining:
        return Stop(TRUNCATED, position, remaining,
                    f"the entry at position {position} declares {total} bytes but only {remaining} remain",
                    code="truncated-tail", declared=total)
    magic = head[L.MAGIC_AT]
    if magic == 2:
        if size < L.V2_BODY_HEAD_SIZE or len(head) < L.V2_RECORD_BATCH_OVERHEAD:
            return Stop(CORRUPT, position, remaining,
                        f"magic 2 batch at position {position} declares {total} bytes, less than its 61-byte header",
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
            return Stop(CORRUPT, position, remaining,
                        f"magic 1 message at position {position} is {size} bytes, less than 22",
                        code="message-too-small", fatal=True, declared=total)
        (ts,) = L.INT64.unpack_from(head, L.LEGACY_TIMESTAMP_AT)
    compressed = attrs & L.LEGACY_CODEC_MASK
    return BatchHeader(position, total, magic, offset, None if compressed else offset, ts, attrs & 0xFF)


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
        (base, size, _ple, _m, _crc, attrs, lod, _bts, _mts, pid, epoch, seq, count) = L.V2_HEAD.unpack_from(head)
        if size < L.V2_BODY_HEAD_SIZE or size > max_batch_bytes:
            return False
        # attributes: bit 7 and the high byte are never set; codec ids above 4 do not exist
        if base < 0 or attrs < 0 or attrs > 0x7F or (attrs & 7) > 4:
            return False
        if lod < 0 or count < 0 or count > lod + 1 or pid < -1 or epoch < -1 or seq < -1:
            return False
        if (attrs & 7) == 0 and size - L.V2_BODY_HEAD_SIZE < L.V2_MIN_RECORD_SIZE * count:
            return False
    elif magic <= 1:
        if n < L.LEGACY_ENTRY_HEAD.size:
            return False
        offset, size, _crc, _m, attrs = L.LEGACY_ENTRY_HEAD.unpack_from(head)
        overhead = L.LEGACY_RECORD_OVERHEAD_V0 if magic == 0 else L.LEGACY_RECORD_OVERHEAD_V1
        if offset < 0 or size < overhead or size > max_batch_bytes or (attrs & 7) > 3:
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
