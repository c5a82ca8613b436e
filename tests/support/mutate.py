"""Hostile inputs for fuzzing ``verify``: deterministic mutations of a sound segment's bytes.

Used by ``tests/test_fuzz.py`` (a short run in the suite) and ``bench/fuzz_verify.py`` (the large
campaign); entries are found by kdump's framing walk (:func:`kdump.read.segment.entries_in`). Every mutation says whether a finding is *mandatory* for its result: it is when bytes
protected by a CRC changed and the CRC was not recomputed (including the CRC field itself and the size
field, which moves the range the CRC covers), or when the file was cut or spliced away from an entry
boundary. Mutations that recompute the CRC (to reach the record-level checks of ``--deep``) or that
only touch fields no CRC covers (base offset, partition leader epoch) make no such promise: their
result may be a sound file.
"""
from __future__ import annotations

import random
import zlib
from dataclasses import dataclass

from kdump import codec as _codec
from kdump.format.names import CODEC_NAMES
from kdump.format.crc import crc32c
from kdump.format import layout as L
from kdump.read.segment import entries_in


@dataclass(frozen=True)
class Entry:
    position: int
    size: int  # whole entry, prefix included
    magic: int

    @property
    def protected(self) -> tuple[int, int]:
        """Bytes whose change the entry's CRC (or its size field) must reveal: from the size field on
        for magic 0/1 (the CRC covers magic..end), for magic 2 from the size field too, except the
        partition leader epoch (bytes 12-15), which Kafka keeps outside the CRC on purpose."""
        return self.position + L.SIZE_AT, self.position + self.size


def entries(data: bytes) -> list[Entry]:
    """The whole entries of a sound file, by its framing (stops at the first thing that is not one)."""
    found, _stop = entries_in(data)
    return [Entry(pos, L.LOG_OVERHEAD + size, data[pos + L.MAGIC_AT]) for pos, _offset, size in found]


@dataclass
class Mutant:
    kind: str
    data: bytes
    mandatory: bool  # a finding must be reported for it
    detail: str = ""
    expect_code: str | None = None  # with --deep and max_batch_bytes below Mutator.bomb_bytes: this code


def _changed_protected(original: bytes, mutated: bytes, ents: list[Entry]) -> bool:
    """Same-length mutation: did a protected byte change?"""
    for e in ents:
        a, b = e.protected
        if original[a:b] != mutated[a:b]:
            if e.magic == 2:
                # the v2 leader epoch (12-15) is unprotected: compare without it
                epoch_at, epoch_end = e.position + L.V2_LEADER_EPOCH_AT, e.position + L.MAGIC_AT
                if original[a:epoch_at] != mutated[a:epoch_at] or original[epoch_end:b] != mutated[epoch_end:b]:
                    return True
            else:
                return True
    return False


def _refresh_crc(buf: bytearray, e: Entry) -> None:
    p = e.position
    if buf[p + L.MAGIC_AT] == 2:
        L.UINT32.pack_into(buf, p + L.V2_CRC_AT, crc32c(bytes(buf[p + L.V2_CRC_FROM:p + e.size])))
    elif buf[p + L.MAGIC_AT] <= 1:
        L.UINT32.pack_into(buf, p + L.LEGACY_CRC_AT, zlib.crc32(bytes(buf[p + L.LEGACY_CRC_FROM:p + e.size])))


class Mutator:
    """Mutations of one sound file. ``bomb_bytes``: size of the decompression bombs made (keep it above
    the ``max_batch_bytes`` used when verifying them)."""

    KINDS = ("bitflip", "byteset", "truncate", "zerofill", "hugesize", "smallsize", "splice", "delete",
             "header-fixcrc", "records-fixcrc", "bomb", "unprotected", "duplicate", "append-garbage")

    def __init__(self, data: bytes, *, bomb_bytes: int = 8 << 20):
        self.data = data
        self.entries = entries(data)
        self.boundaries = {0, len(data)} | {e.position for e in self.entries}
        self.bomb_bytes = bomb_bytes

    def mutate(self, rnd: random.Random, kind: str | None = None) -> Mutant:
        kind = kind or rnd.choice(self.KINDS)
        return getattr(self, "_" + kind.replace("-", "_"))(rnd)

    # --- byte-level ------------------------------------------------------------------------------------
    def _bitflip(self, rnd):
        buf = bytearray(self.data)
        for _ in range(rnd.choice((1, 1, 1, 2, 3, 8))):
            i = rnd.randrange(len(buf))
            buf[i] ^= 1 << rnd.randrange(8)
        out = bytes(buf)
        return Mutant("bitflip", out, _changed_protected(self.data, out, self.entries))

    def _byteset(self, rnd):
        buf = bytearray(self.data)
        i = rnd.randrange(len(buf))
        buf[i] = rnd.choice((0, 1, 2, 0x7F, 0x80, 0xFF, rnd.randrange(256)))
        out = bytes(buf)
        return Mutant("byteset", out, _changed_protected(self.data, out, self.entries))

    def _truncate(self, rnd):
        cut = rnd.randrange(len(self.data))
        return Mutant("truncate", self.data[:cut], cut not in self.boundaries, f"at {cut}")

    def _zerofill(self, rnd):
        a = rnd.randrange(len(self.data))
        b = min(len(self.data), a + rnd.choice((1, 4, 17, 100, 4096, 1 << 20)))
        out = self.data[:a] + bytes(b - a) + self.data[b:]
        return Mutant("zerofill", out, _changed_protected(self.data, out, self.entries), f"{a}-{b}")

    def _splice(self, rnd):
        at = rnd.randrange(len(self.data) + 1)
        junk = rnd.randbytes(rnd.choice((1, 5, 17, 61, 300)))
        return Mutant("splice", self.data[:at] + junk + self.data[at:], True, f"{len(junk)} bytes at {at}")

    def _delete(self, rnd):
        a = rnd.randrange(len(self.data))
        b = min(len(self.data), a + rnd.choice((1, 3, 12, 100, 1000)))
        whole = a in self.boundaries and b in self.boundaries
        return Mutant("delete", self.data[:a] + self.data[b:], not whole, f"{a}-{b}")

    def _append_garbage(self, rnd):
        junk = rnd.randbytes(rnd.choice((1, 17, 18, 60, 1000)))
        return Mutant("append-garbage", self.data + junk, True)

    # --- entry-level -----------------------------------------------------------------------------------
    def _pick(self, rnd) -> Entry | None:
        return rnd.choice(self.entries) if self.entries else None

    def _hugesize(self, rnd):
        e = self._pick(rnd)
        if e is None:
            return self._bitflip(rnd)
        buf = bytearray(self.data)
        value = rnd.choice((0x7FFFFFFF, 0x40000000, len(self.data), e.size + rnd.randrange(1, 1 << 16)))
        L.INT32.pack_into(buf, e.position + L.SIZE_AT, value)
        return Mutant("hugesize", bytes(buf), True, f"entry at {e.position} size {value}")

    def _smallsize(self, rnd):
        e = self._pick(rnd)
        if e is None:
            return self._bitflip(rnd)
        buf = bytearray(self.data)
        value = rnd.choice((-1, 0, 5, 13, 14, 48, max(14, e.size - 12 - rnd.randrange(1, 64))))
        L.INT32.pack_into(buf, e.position + L.SIZE_AT, value)
        out = bytes(buf)
        return Mutant("smallsize", out, out != self.data, f"entry at {e.position} size {value}")

    def _unprotected(self, rnd):
        """Change only what no CRC covers: the base offset or the partition leader epoch."""
        e = self._pick(rnd)
        if e is None:
            return self._bitflip(rnd)
        buf = bytearray(self.data)
        if e.magic == 2 and rnd.random() < 0.5:
            L.INT32.pack_into(buf, e.position + L.V2_LEADER_EPOCH_AT, rnd.choice((-1, 0, 7, 0x7FFFFFFF)))
        else:
            L.INT64.pack_into(buf, e.position + L.OFFSET_AT, rnd.choice((-1, 0, 2**31, 2**62, rnd.randrange(1 << 20))))
        return Mutant("unprotected", bytes(buf), False)

    def _duplicate(self, rnd):
        e = self._pick(rnd)
        if e is None:
            return self._bitflip(rnd)
        chunk = self.data[e.position:e.position + e.size]
        return Mutant("duplicate", self.data + chunk, False)

    def _header_fixcrc(self, rnd):
        """Random values in a header field, CRC recomputed: the deep checks must cope."""
        e = self._pick(rnd)
        if e is None:
            return self._bitflip(rnd)
        buf = bytearray(self.data)
        p = e.position
        if e.magic == 2 and e.size >= L.V2_RECORD_BATCH_OVERHEAD:
            fields = list(L.V2_AFTER_CRC.unpack_from(buf, p + L.V2_CRC_FROM))
            i = rnd.randrange(len(fields))
            limits = [(-2**15, 2**15 - 1), (-2**31, 2**31 - 1), (-2**63, 2**63 - 1), (-2**63, 2**63 - 1),
                      (-2**63, 2**63 - 1), (-2**15, 2**15 - 1), (-2**31, 2**31 - 1), (-2**31, 2**31 - 1)]
            lo, hi = limits[i]
            fields[i] = rnd.choice((lo, hi, -1, 0, 1, fields[i] + 1, fields[i] - 1, rnd.randint(lo, hi)))
            fields[i] = max(lo, min(hi, fields[i]))
            L.V2_AFTER_CRC.pack_into(buf, p + L.V2_CRC_FROM, *fields)
        else:
            at = L.LEGACY_ATTRIBUTES_AT
            j = p + at + rnd.randrange(max(1, min(e.size - at, 30)))
            buf[j] = rnd.randrange(256)
        _refresh_crc(buf, e)
        return Mutant("header-fixcrc", bytes(buf), False)

    def _records_fixcrc(self, rnd):
        """Bytes inside the records (or a wrapper's value) changed, CRC recomputed."""
        e = self._pick(rnd)
        if e is None:
            return self._bitflip(rnd)
        start = e.position + (L.V2_RECORD_BATCH_OVERHEAD if e.magic == 2 else L.LEGACY_ENTRY_HEAD.size)
        if start >= e.position + e.size:
            return self._header_fixcrc(rnd)
        buf = bytearray(self.data)
        for _ in range(rnd.choice((1, 2, 5))):
            j = rnd.randrange(start, e.position + e.size)
            buf[j] = rnd.choice((0, 1, 0x7F, 0x80, 0xFF, rnd.randrange(256)))
        _refresh_crc(buf, e)
        return Mutant("records-fixcrc", bytes(buf), False)

    def _bomb(self, rnd):
        """A v2 batch whose payload decompresses to ``bomb_bytes`` of zeros, CRC valid."""
        codec = rnd.choice((_codec.GZIP, _codec.LZ4, _codec.ZSTD, _codec.SNAPPY))
        payload = _bomb_payload(codec, self.bomb_bytes)
        base = self.entries[-1].position + self.entries[-1].size if self.entries else 0
        after = L.V2_AFTER_CRC.pack(codec, 0, 0, 0, -1, -1, -1, 1) + payload
        before = L.V2_BEFORE_CRC.pack(10**9, L.V2_BODY_HEAD_SIZE + len(payload), 0, 2)
        batch = before + L.UINT32.pack(crc32c(after)) + after
        return Mutant("bomb", self.data[:base] + batch + self.data[base:], False, CODEC_NAMES[codec],
                      expect_code="batch-too-large")


_BOMBS: dict = {}


def _bomb_payload(codec: int, n: int) -> bytes:
    key = (codec, n)
    if key not in _BOMBS:
        _BOMBS[key] = _codec.compress(codec, bytes(n), magic=2)
    return _BOMBS[key]
