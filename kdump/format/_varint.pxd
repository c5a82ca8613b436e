# cython: language_level=3
"""Kafka's varints (unsigned LEB128; zig-zag for signed values) read from a C array, for the compiled readers
(kdump/format/_records.pyx, kdump/spark/_arrow.pyx). Compile-time only (inline functions); every byte read is
bounds-checked against ``end``."""
from libc.stdint cimport int64_t, uint64_t


cdef enum:
    VI_OK = 0
    VI_TRUNCATED = 1   # ran into the end of the batch / record
    VI_TOO_LONG = 2    # more than max_bytes bytes, all with the continuation bit
    VI_BIG = 3         # a varlong whose unsigned value needs more than 64 bits (10th byte > 1)


cdef inline int read_raw(const unsigned char *p, Py_ssize_t *ppos, Py_ssize_t end, int max_bytes,
                         uint64_t *out) noexcept nogil:
    """Unsigned LEB128 at ppos[0], reading no byte at or after ``end``. On VI_OK/VI_BIG advances ppos."""
    cdef Py_ssize_t pos = ppos[0]
    cdef uint64_t value = 0
    cdef unsigned int shift = 0
    cdef int k
    cdef unsigned char b
    cdef bint big = False
    for k in range(max_bytes):  # max_bytes <= 10, so shift <= 63
        if pos >= end:
            return VI_TRUNCATED
        b = p[pos]
        pos += 1
        if shift < 63:
            value |= (<uint64_t>(b & 0x7F)) << shift
        else:
            value |= (<uint64_t>(b & 0x01)) << 63
            if b & 0x7E:
                big = True
        if b < 0x80:
            ppos[0] = pos
            out[0] = value
            return VI_BIG if big else VI_OK
        shift += 7
    return VI_TOO_LONG


cdef inline int read_field(const unsigned char *p, Py_ssize_t *ppos, Py_ssize_t end, int max_bytes,
                           int64_t *out) noexcept nogil:
    """Zig-zag varint at ppos[0] (one-byte fast path first). ``out`` is valid for VI_OK only."""
    cdef Py_ssize_t pos = ppos[0]
    cdef uint64_t raw
    cdef int st
    cdef unsigned char b
    if pos < end:
        b = p[pos]
        if b < 0x80:
            out[0] = <int64_t>(b >> 1) ^ -<int64_t>(b & 1)
            ppos[0] = pos + 1
            return VI_OK
    st = read_raw(p, ppos, end, max_bytes, &raw)
    if st == VI_OK or st == VI_BIG:
        # raw < 2**64: raw >> 1 fits in int64_t and the result equals Python's (n >> 1) ^ -(n & 1). A varlong
        # above 64 bits keeps its low 64, as Java's readVarlong does (the pure path masks it the same way).
        out[0] = <int64_t>(raw >> 1) ^ -<int64_t>(raw & 1)
        return VI_OK
    return st
