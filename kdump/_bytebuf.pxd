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


cdef extern from *:
    """
    static const char kdump_digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    """
    const char *_PAIRS "kdump_digit_pairs"


cdef inline int put_int(ByteBuf *o, int64_t v) except -1:
    """``v`` in decimal (as Java's Long.toString and Python's str), written in place two digits at a time: the
    renderers write several numbers a record."""
    cdef uint64_t u = <uint64_t> (-(v + 1)) + 1 if v < 0 else <uint64_t> v
    cdef uint64_t t = u
    cdef int n = 1
    cdef char *d
    while t >= 10:
        t //= 10
        n += 1
    if o.len + n + 1 > o.cap:
        reserve(o, n + 1)
    d = o.data + o.len
    if v < 0:
        d[0] = b'-'
        d += 1
        o.len += 1
    o.len += n
    while u >= 100:
        n -= 2
        memcpy(d + n, _PAIRS + 2 * (u % 100), 2)
        u //= 100
    if u >= 10:
        memcpy(d + n - 2, _PAIRS + 2 * u, 2)
    else:
        d[n - 1] = <char> (48 + u)
    return 0


cdef inline void free_buffer(ByteBuf *b) noexcept:
    PyMem_Free(b.data)
    b.data = NULL
    b.len = b.cap = 0
