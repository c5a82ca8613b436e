# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twin of :class:`kdump.stats.keytable.PyKeyTable`: the same counts (keys, superseded records and bytes, live
tombstones) from the same entries (:data:`~kdump.format.layout.KEY_SPILL_ENTRY`, 24 bytes: digest, size << 1 |
tombstone), the same spill to 256 bucket files by a byte of the digest, and the same split of a bucket that does not
fit; ``tests/test_stats_speed.py`` checks that differentially.

The table is open addressing over the 24-byte entries themselves (linear probing, at most half full, its slot
chosen by a multiplicative hash of the whole digest: a bucket's entries share the byte that chose the bucket), so
that a key costs no Python object. ``memory_bytes`` bounds the table: it grows (by four, then by two) up to the largest
power of two of slots that fits, and spills when half of that is full. A slot's value keeps bit 63 set when it is used
(a record's size is far below 2^62)."""

from cpython.buffer cimport PyBUF_SIMPLE, PyBuffer_Release, PyObject_GetBuffer
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free

from kdump._bytebuf cimport ByteBuf, free_buffer, put  # compile-time only

import os

from kdump.format.layout import KEY_SPILL_ENTRY

DEF ENTRY = 24  # KEY_SPILL_ENTRY.size, checked at import below
DEF FANOUT = 256  # one byte of the digest picks a bucket
DEF FLUSH = 1 << 16  # bytes a bucket gathers before they are written
cdef uint64_t USED = 1ULL << 63
cdef Py_ssize_t MAX_LEVEL = KEY_SPILL_ENTRY.size - 9  # the pure twin's bound: past it a bucket is counted in memory
if KEY_SPILL_ENTRY.size != ENTRY:
    raise ImportError("kdump.stats._keytable is built for 24-byte key entries")

PyKeyTable = None  # the pure twin, handed over by kdump._backend.pick: its count_buckets recounts spilled buckets


cdef extern from *:
    """
    #include <stdlib.h>
    #include <string.h>
    #if defined(__unix__) || defined(__APPLE__)
    #include <sys/mman.h>
    #endif
    /* Zeroed memory for the table: anonymous pages (zero and not touched until used), asked to be huge pages
       where the system has them: a table of millions of slots is read at random, one slot a record, and 4 KiB
       pages would cost a TLB miss on nearly every one. */
    static void *kt_table_alloc(size_t bytes) {
    #if defined(MAP_ANONYMOUS)
        void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
    #if defined(MADV_HUGEPAGE)
        madvise(p, bytes, MADV_HUGEPAGE);
    #endif
        return p;
    #else
        return calloc(bytes, 1);
    #endif
    }
    static void kt_table_free(void *p, size_t bytes) {
        if (p == NULL) return;
    #if defined(MAP_ANONYMOUS)
        munmap(p, bytes);
    #else
        free(p);
    #endif
    }
    #define kt_prefetch(p) __builtin_prefetch(p)
    """
    void *kt_table_alloc(size_t bytes) nogil
    void kt_table_free(void *p, size_t bytes) nogil
    void kt_prefetch(const void *p) nogil

DEF AHEAD = 8  # entries whose slots are fetched while the current one is placed


cdef struct Slot:
    uint64_t h1
    uint64_t h2
    uint64_t value  # USED | size << 1 | tombstone


cdef inline uint64_t _load(const unsigned char *p) noexcept nogil:
    """A little-endian uint64 (KEY_SPILL_ENTRY's byte order)."""
    cdef uint64_t v = 0
    cdef int k
    for k in range(8):
        v |= (<uint64_t>p[k]) << (8 * k)
    return v


cdef class KeyTable:
    cdef Slot *slots
    cdef Py_ssize_t cap  # a power of two
    cdef Py_ssize_t used
    cdef Py_ssize_t max_cap
    cdef int shift  # 64 - log2(cap)
    cdef readonly Py_ssize_t max_keys, memory_bytes, level
    cdef readonly object spill_dir
    cdef public Py_ssize_t superseded, superseded_bytes, keys, live_tombstones, spilled_buckets
    cdef object _dir
    cdef list _files
    cdef ByteBuf *_buckets

    def __cinit__(self):
        self.slots = NULL
        self._buckets = NULL

    def __init__(self, memory_bytes, *, spill_dir=None, level=0):
        self.memory_bytes = memory_bytes
        self.spill_dir = spill_dir
        self.level = level  # which byte of the digest picks a bucket
        self.max_cap = 128
        while self.max_cap * 2 * ENTRY <= memory_bytes:
            self.max_cap *= 2
        self.max_keys = self.max_cap // 2
        self.superseded = self.superseded_bytes = self.keys = self.live_tombstones = self.spilled_buckets = 0
        self.used = 0
        self._files = None
        self._alloc(min(self.max_cap, 1024))

    def __dealloc__(self):
        self._free_slots()
        self._free_buckets()

    cdef void _free_buckets(self) noexcept:
        cdef int b
        if self._buckets != NULL:
            for b in range(FANOUT):
                free_buffer(&self._buckets[b])
            free(self._buckets)
            self._buckets = NULL

    cdef void _free_slots(self) noexcept:
        kt_table_free(self.slots, self.cap * sizeof(Slot))
        self.slots, self.cap, self.used = NULL, 0, 0

    cdef int _alloc(self, Py_ssize_t cap) except -1:
        """An empty table of ``cap`` slots in place of the current one (which the caller has kept or freed)."""
        cdef Slot *slots = <Slot *>kt_table_alloc(cap * sizeof(Slot))
        cdef int bits = 0
        if slots == NULL:
            raise MemoryError()
        self.slots, self.cap = slots, cap
        while (<Py_ssize_t>1 << bits) < cap:
            bits += 1
        self.shift = 64 - bits
        return 0

    cdef inline Py_ssize_t _home(self, uint64_t h1, uint64_t h2) noexcept:
        return <Py_ssize_t>(((h1 ^ (h2 * 0x9E3779B97F4A7C15ULL)) * 0xC2B2AE3D27D4EB4FULL) >> self.shift)

    cdef int _grow(self) except -1:
        cdef Slot *old = self.slots
        cdef Py_ssize_t old_cap = self.cap, i, j, mask
        # four times as large while that fits: every table on the way is new memory the kernel zeroes (half of a
        # large count's time, measured), and a quadrupling leaves a third as much behind as doublings would
        self._alloc(old_cap * (4 if old_cap * 4 <= self.max_cap else 2))  # on MemoryError the old table stays
        mask = self.cap - 1
        for i in range(old_cap):
            if old[i].value:
                j = self._home(old[i].h1, old[i].h2)
                while self.slots[j].value:
                    j = (j + 1) & mask
                self.slots[j] = old[i]
        kt_table_free(old, old_cap * sizeof(Slot))
        return 0

    def add(self, digest, size, tombstone):
        """One record: its key's 16-byte digest, its size, whether it is a tombstone."""
        self.add_entries(KEY_SPILL_ENTRY.pack(digest, size << 1 | bool(tombstone)))

    def add_entries(self, entries):
        """Every 24-byte entry of ``entries`` (a bytes-like object), in order."""
        cdef Py_buffer view
        PyObject_GetBuffer(entries, &view, PyBUF_SIMPLE)
        try:
            self._add(<const unsigned char *>view.buf, view.len // ENTRY)
        finally:
            PyBuffer_Release(&view)

    cdef int _add(self, const unsigned char *p, Py_ssize_t n) except -1:
        cdef Py_ssize_t i, j, mask = self.cap - 1
        cdef uint64_t h1, h2, value
        cdef Slot *s
        for i in range(n):
            if self._buckets != NULL:
                self._spill_entry(p)
                p += ENTRY
                continue
            if i + AHEAD < n:
                kt_prefetch(&self.slots[self._home(_load(p + AHEAD * ENTRY), _load(p + AHEAD * ENTRY + 8))])
            h1, h2, value = _load(p), _load(p + 8), _load(p + 16) | USED
            j = self._home(h1, h2)
            while True:
                s = &self.slots[j]
                if not s.value:
                    s.h1, s.h2, s.value = h1, h2, value
                    self.used += 1
                    if self.used > self.max_keys and self.level < MAX_LEVEL:
                        self._spill()
                    elif self.used * 2 > self.cap:  # beyond max_cap only past MAX_LEVEL, as the pure dict grows
                        self._grow()
                        mask = self.cap - 1
                    break
                if s.h1 == h1 and s.h2 == h2:
                    self.superseded += 1
                    self.superseded_bytes += (s.value & ~USED) >> 1
                    s.value = value
                    break
                j = (j + 1) & mask
            p += ENTRY
        return 0

    cdef int _spill_entry(self, const unsigned char *entry) except -1:
        cdef int b = entry[self.level]
        put(&self._buckets[b], entry, ENTRY)
        if self._buckets[b].len >= FLUSH:
            self._flush(b)
        return 0

    cdef int _flush(self, int b) except -1:
        cdef ByteBuf *buf = &self._buckets[b]
        if buf.len:
            self._files[b].write(PyBytes_FromStringAndSize(buf.data, buf.len))
            buf.len = 0
        return 0

    cdef int _spill(self) except -1:
        cdef Py_ssize_t i
        cdef unsigned char entry[ENTRY]
        cdef int k
        import tempfile  # only when keys spill (kdump._backend imports this module in every command)
        self._dir = tempfile.TemporaryDirectory(prefix=".kdump-keys.", dir=self.spill_dir)
        # the buckets stay open across add_entries() calls; finish() closes them
        self._files = [open(os.path.join(self._dir.name, f"{i:03d}"), "wb") for i in range(FANOUT)]  # noqa: SIM115
        self._buckets = <ByteBuf *>calloc(FANOUT, sizeof(ByteBuf))
        if self._buckets == NULL:
            raise MemoryError()
        for i in range(self.cap):  # each key once, and before every record still to come
            if self.slots[i].value:
                for k in range(8):
                    entry[k] = (self.slots[i].h1 >> (8 * k)) & 0xFF
                    entry[8 + k] = (self.slots[i].h2 >> (8 * k)) & 0xFF
                    entry[16 + k] = ((self.slots[i].value & ~USED) >> (8 * k)) & 0xFF
                self._spill_entry(entry)
        self._free_slots()
        return 0

    def finish(self):
        """Count what is left (the buckets on disk, if any); the table is empty afterwards."""
        cdef Py_ssize_t i
        cdef int b
        if self._files is None:
            self.keys += self.used
            for i in range(self.cap):
                if self.slots[i].value & 1:
                    self.live_tombstones += 1
            self._free_slots()
            return self
        try:
            for b in range(FANOUT):
                self._flush(b)
                self._files[b].close()
            self._free_buckets()
            self.spilled_buckets = FANOUT
            PyKeyTable.count_buckets(self, [f.name for f in self._files])  # the pure twin's: no record work there
        finally:
            for f in self._files:
                f.close()
            self._free_buckets()
            self._files = None
            self._dir.cleanup()
        return self

    @property
    def spilled(self):
        return self._files is not None
