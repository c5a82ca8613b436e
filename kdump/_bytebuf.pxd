# cython: language_level=3
"""A growable C byte buffer, for the compiled modules that build output bytes without a Python object per
record: the Arrow columns (kdump/spark/_arrow.pyx) and the renderers' lines (kdump/render/_outbuf.pxd).
Compile-time only (inline functions); memory from the Python allocator, released with ``free_buffer``."""
from cpython.mem cimport PyMem_Free, PyMem_Realloc
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


cdef inline void free_buffer(ByteBuf *b) noexcept:
    PyMem_Free(b.data)
    b.data = NULL
    b.len = b.cap = 0
