# cython: language_level=3
"""One :data:`~kdump.format.layout.KEY_ENTRY` (what ``kdump stats`` counts of a keyed record) written from the bytes
in place: the key's two digests as :meth:`kdump.format.columns.RecordKeys.of` computes them (``hash(key)`` and
``hash(key + b"\\0")``) and the record's size << 1 | tombstone. Compile-time only (an inline function), for the
compiled walks of magic-2 records (kdump/format/_records.pyx) and of plain magic 0/1 messages
(kdump/format/_legacy.pyx), which then build no Python object per record."""
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

from kdump._bytebuf cimport ByteBuf, reserve

cdef extern from "Python.h":
    # what hash(bytes) is (Objects/bytesobject.c): the digests of RecordKeys.of, from the bytes in place
    Py_hash_t _Py_HashBytes(const void *, Py_ssize_t)


cdef inline int put_key_entry(ByteBuf *out, const unsigned char *key, Py_ssize_t n, uint64_t value) except -1:
    """One KEY_ENTRY (layout.py: two int64 and a uint64, little-endian): hash(key), hash(key + b"\0"), value."""
    cdef unsigned char small[256]
    cdef unsigned char *tmp = small
    cdef uint64_t h1, h2
    cdef unsigned char *e
    cdef int k
    if n >= 256:
        tmp = <unsigned char *>PyMem_Malloc(n + 1)
        if tmp == NULL:
            raise MemoryError()
    try:
        memcpy(tmp, key, n)
        tmp[n] = 0
        h1 = <uint64_t>_Py_HashBytes(key, n)
        h2 = <uint64_t>_Py_HashBytes(tmp, n + 1)
    finally:
        if tmp != small:
            PyMem_Free(tmp)
    if out.len + 24 > out.cap:
        reserve(out, 24)
    e = <unsigned char *>out.data + out.len
    for k in range(8):
        e[k] = (h1 >> (8 * k)) & 0xFF
        e[8 + k] = (h2 >> (8 * k)) & 0xFF
        e[16 + k] = (value >> (8 * k)) & 0xFF
    out.len += 24
    return 0
