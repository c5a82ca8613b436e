# cython: language_level=3
"""A growable C byte buffer, for the compiled modules that build output bytes without a Python object per
record: the Arrow columns (kdump/spark/_arrow.pyx) and the renderers' lines (kdump/render/_outbuf.pxd).
Compile-time only (inline functions); memory from the Python allocator, released with ``free_buffer``."""
from cpython.mem cimport PyMem_Free, PyMem_Realloc
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy


cdef struct ByteBuf:
    char *data
    Py_ssize_t len
    Py_ssize_t cap


cdef inline int reserve(ByteBuf *b, Py_ssize_t extra) except -1:
    """Room for ``extra`` more bytes (the capacity doubles, from 4 KiB)."""
    cdef Py_ssize_t want = b.len + extra
    cdef Py_ssize_t cap
    cdef char *p
    if want <= b.cap:
        return 0
    cap = b.cap * 2 if b.cap else 4096
    while cap < want:
        cap *= 2
    p = <char *>PyMem_Realloc(b.data, cap)
    if p == NULL:
        raise MemoryError()
    b.data = p
    b.cap = cap
    return 0


cdef inline int put(ByteBuf *b, const void *src, Py_ssize_t n) except -1:
    if b.len + n > b.cap:
        reserve(b, n)
    memcpy(b.data + b.len, src, n)
    b.len += n
    return 0


cdef inline int int_digits(int64_t v, char *tmp) noexcept nogil:
    """``v`` in decimal at the end of ``tmp`` (24 bytes): returns where it starts (a number written twice is
    formatted once)."""
    cdef int i = 24
    cdef uint64_t u = <uint64_t> (-(v + 1)) + 1 if v < 0 else <uint64_t> v
    while True:
        i -= 1
        tmp[i] = <char> (48 + u % 10)
        u //= 10
        if u == 0:
            break
    if v < 0:
        i -= 1
        tmp[i] = b'-'
    return i


cdef inline int put_int(ByteBuf *b, int64_t v) except -1:
    """``v`` in decimal (as Java's Long.toString and Python's str)."""
    cdef char tmp[24]
    cdef int i = int_digits(v, tmp)
    return put(b, tmp + i, 24 - i)


cdef inline void free_buffer(ByteBuf *b) noexcept:
    PyMem_Free(b.data)
    b.data = NULL
    b.len = b.cap = 0
