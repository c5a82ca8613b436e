"""Finding batches by their contents: header sanity checks and CRCs at arbitrary file positions.

Used in two places:

* **resynchronisation**: after bytes that are no entry, :meth:`Prober.find_next` scans forward for the
  next position where a whole entry checks out (header sane and CRC valid), so that one damaged batch
  does not hide every batch after it;
* **framing trust**: after an entry that fails its CRC, :meth:`Prober.plausible` says whether the next
  entry (where the damaged entry's size field points) looks like an entry. If it does, the size field is
  trusted; if not, the size field is probably what was damaged and verify resynchronises instead.

Efficiency: candidates are found with ``bytes.find`` on the magic byte (``memchr`` speed), then rejected
by cheap header checks (size within bounds, magic-2 attributes/counts/producer fields, legacy key and value
lengths that add up to the message size) before any CRC is computed. Zero-filled stretches are skipped in
64 KiB steps. Memory is bounded: the file is scanned in windows of ``WINDOW`` bytes and a candidate's CRC
is computed over chunks read one at a time, never more than ``CHUNK`` bytes held.
"""
from __future__ import annotations

import os
import struct
import zlib

from kdump._crc import crc32c
from kdump.format import layout as L

WINDOW = 1 << 20
CHUNK = 1 << 20
_OVERLAP = L.V2_RECORD_BATCH_OVERHEAD + 8  # a candidate's header must lie wholly in the window being scanned
_ZEROS = bytes(1 << 16)
_V2_HEAD = struct.Struct(">qiibIhiqqqhii")  # the whole 61-byte header, prefix included
_I32 = struct.Struct(">i")
_LEGACY_HEAD = struct.Struct(">qiIbb")  # offset, size, crc, magic, attributes
_MIN_V2_RECORD = 7  # length, attributes, timestamp delta, offset delta, key length, value length, header count


class Prober:
    """Checks entries at arbitrary positions of one open file (read with ``os.pread``, never modified)."""

    def __init__(self, fd: int, end: int, max_batch_bytes: int):
        self.fd = fd
        self.end = end
        self.max_batch_bytes = max_batch_bytes

    # --- single positions -------------------------------------------------------------------------
    def read(self, pos: int, n: int) -> bytes:
        return os.pread(self.fd, n, pos)

    def header_ok(self, pos: int, head: bytes, *, need_fit: bool = True) -> bool:
        """Cheap sanity checks on the entry header at ``pos`` (``head``: at least the bytes from ``pos``
        that exist, up to 61). No CRC. ``need_fit``: the entry must end inside the file."""
        n = len(head)
        if n < L.HEADER_SIZE_UP_TO_MAGIC:
            return False
        magic = head[16]
        if magic == 2:
            if n < L.V2_RECORD_BATCH_OVERHEAD:
                return False
            (base, size, _ple, _m, _crc, attrs, lod, _bts, _mts, pid, epoch, seq, count) = _V2_HEAD.unpack_from(head)
            if size < L.V2_BODY_HEAD_SIZE or size > self.max_batch_bytes:
                return False
            # attributes: bit 7 and the high byte are never set; codec ids above 4 do not exist
            if base < 0 or attrs < 0 or attrs > 0x7F or (attrs & 7) > 4:
                return False
            if lod < 0 or count < 0 or count > lod + 1 or pid < -1 or epoch < -1 or seq < -1:
                return False
            if (attrs & 7) == 0 and size - L.V2_BODY_HEAD_SIZE < _MIN_V2_RECORD * count:
                return False
        elif magic <= 1:
            if n < _LEGACY_HEAD.size:
                return False
            offset, size, _crc, _m, attrs = _LEGACY_HEAD.unpack_from(head)
            overhead = L.LEGACY_RECORD_OVERHEAD_V0 if magic == 0 else L.LEGACY_RECORD_OVERHEAD_V1
            if offset < 0 or size < overhead or size > self.max_batch_bytes or (attrs & 7) > 3:
                return False
            # The key and value lengths must add up to the message size exactly. Kafka's reader would
            # tolerate bytes after the value, but no Kafka writer produces them, and this check is what
            # makes random bytes almost never pass as a message.
            key_at = pos + L.LOG_OVERHEAD + (L.LEGACY_V0_KEY_SIZE_AT if magic == 0 else L.LEGACY_V1_KEY_SIZE_AT)
            key_len = self._int32(head, pos, key_at)
            if key_len is None or key_len < -1 or key_len > size - overhead:
                return False
            value_at = key_at + 4 + max(key_len, 0)
            value_len = self._int32(head, pos, value_at)
            if value_len is None or value_len < -1:
                return False
            if overhead + max(key_len, 0) + max(value_len, 0) != size:
                return False
        else:
            return False
        if need_fit and pos + L.LOG_OVERHEAD + size > self.end:
            return False
        return True

    def _int32(self, head: bytes, pos: int, at: int) -> int | None:
        rel = at - pos
        if rel + 4 <= len(head):
            return _I32.unpack_from(head, rel)[0]
        if at + 4 > self.end:
            return None
        return _I32.unpack(self.read(at, 4))[0]

    def crc_ok(self, pos: int, head: bytes) -> bool:
        """The entry at ``pos`` (header already ``header_ok``) has a valid CRC; read in bounded chunks."""
        size = _I32.unpack_from(head, 8)[0]
        stop = pos + L.LOG_OVERHEAD + size
        if head[16] == 2:
            stored = struct.unpack_from(">I", head, 17)[0]
            return self.crc_range(pos + 21, stop, crc32c) == stored
        stored = struct.unpack_from(">I", head, 12)[0]
        return self.crc_range(pos + 16, stop, zlib.crc32) == stored

    def crc_range(self, start: int, stop: int, fn) -> int:
        value = 0
        pos = start
        while pos < stop:
            chunk = self.read(pos, min(CHUNK, stop - pos))
            if not chunk:
                break  # the file shrank: the CRC will not match
            value = fn(chunk, value)
            pos += len(chunk)
        return value

    def entry_ok(self, pos: int) -> bool:
        """A whole, CRC-valid entry starts at ``pos``."""
        head = self.read(pos, L.V2_RECORD_BATCH_OVERHEAD)
        return self.header_ok(pos, head) and self.crc_ok(pos, head)

    def plausible(self, pos: int) -> bool:
        """Does the entry framing continue sensibly at ``pos``? True at the end of the file, before a tail
        too short for an entry, before zeros to the end, or before a sane header (it may be cut off by
        the end of the file: a truncated tail after a damaged batch is still a tail)."""
        if pos >= self.end - L.HEADER_SIZE_UP_TO_MAGIC:
            return True
        head = self.read(pos, L.V2_RECORD_BATCH_OVERHEAD)
        if self.header_ok(pos, head, need_fit=False):
            return True
        return self.zeros_to_end(pos)

    def zeros_to_end(self, pos: int) -> bool:
        return self.all_zero(pos, self.end)

    def all_zero(self, pos: int, stop: int) -> bool:
        while pos < stop:
            chunk = self.read(pos, min(CHUNK, stop - pos))
            if not chunk:
                break
            if chunk.count(0) != len(chunk):
                return False
            pos += len(chunk)
        return True

    # --- scanning --------------------------------------------------------------------------------------
    def find_next(self, start: int) -> int | None:
        """The first position >= ``start`` where a whole, CRC-valid entry begins, or None."""
        w = start
        while w < self.end - L.HEADER_SIZE_UP_TO_MAGIC:
            buf = self.read(w, WINDOW + _OVERLAP)
            limit = min(WINDOW, len(buf))  # candidates q in [w, w + limit)
            found = None
            for magic in (b"\x02", b"\x01", b"\x00"):
                # the later passes only need to look before what an earlier pass found
                stop = limit if found is None else found - w
                q = self._scan(buf, w, magic, stop)
                if q is not None:
                    found = q
            if found is not None:
                return found
            w += limit
        return None

    def _scan(self, buf: bytes, w: int, magic: bytes, stop: int) -> int | None:
        """First q in [w, w + stop) with ``magic`` at q + 16 that is a whole valid entry."""
        find = buf.find
        unpack_size = _I32.unpack_from
        i = find(magic, 16, stop + 16)
        while i >= 0:
            q = i - 16
            size = unpack_size(buf, q + 8)[0]
            if L.LEGACY_RECORD_OVERHEAD_V0 <= size <= self.max_batch_bytes:
                head = buf[q:q + L.V2_RECORD_BATCH_OVERHEAD]
                if len(head) < L.V2_RECORD_BATCH_OVERHEAD:
                    head = self.read(w + q, L.V2_RECORD_BATCH_OVERHEAD)
                if self.header_ok(w + q, head) and self.crc_ok(w + q, head):
                    return w + q
                nxt = i + 1
            elif size == 0 and magic == b"\x00":
                # inside zeros: the next candidate needs a non-zero size byte, so jump past the run
                nxt = max(i + 1, _skip_zeros(buf, q + 8) + 5)
            else:
                nxt = i + 1
            if nxt >= stop + 16:
                return None
            i = find(magic, nxt, stop + 16)
        return None


def _skip_zeros(buf: bytes, j: int) -> int:
    """The position of the first non-zero byte at or after ``j`` (or ``len(buf)``)."""
    n = len(buf)
    step = len(_ZEROS)
    while j + step <= n and buf[j:j + step] == _ZEROS:
        j += step
    chunk = buf[j:j + step]
    return j + (len(chunk) - len(chunk.lstrip(b"\x00")))
