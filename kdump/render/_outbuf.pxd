# cython: language_level=3
"""Output buffers of the compiled renderers (kdump/render/_lines.pyx, _jsonl.pyx): a batch's output is
built in a growable C buffer (kdump/_bytebuf.pxd) and copied once into the bytes returned.

Each renderer module keeps one buffer from call to call (``cdef Kept _kept``): allocating and freeing a
fresh buffer per batch costs more in page faults than the copy. A call made while the kept buffer is in use
(another thread, while this one runs Python code) builds in a buffer of its own."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy

from kdump._bytebuf cimport ByteBuf, free_buffer, put, reserve

ctypedef ByteBuf Out


cdef struct Kept:
    ByteBuf buf
    bint busy


cdef enum:
    KEEP_AT_MOST = 16 << 20  # a bigger kept buffer (a huge chunk of records) is freed after use


cdef inline int put_bytes(Out *o, bytes b) except -1:
    return put(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))


cdef extern from *:
    """
    static const char kdump_digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    """
    const char *_PAIRS "kdump_digit_pairs"


cdef inline int put_int(Out *o, int64_t v) except -1:
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


# Tests of 8 bytes at a time (the word read with memcpy: any alignment). Each gives an exact yes/no for the
# word (which byte answers is not needed): hasless/hasmore/haszero of "Bit Twiddling Hacks".
cdef extern from *:
    """
    #define KDUMP_LOW 0x0101010101010101ULL
    #define KDUMP_HIGH 0x8080808080808080ULL
    """
    const uint64_t _LOW "KDUMP_LOW"
    const uint64_t _HIGH "KDUMP_HIGH"


cdef inline bint ascii_only(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """No byte of ``p[:n]`` has its high bit set."""
    cdef uint64_t w
    cdef Py_ssize_t j = 0
    while j + 8 <= n:
        memcpy(&w, p + j, 8)
        if w & _HIGH:
            return False
        j += 8
    while j < n:
        if p[j] & 0x80:
            return False
        j += 1
    return True


cdef inline bint json_plain(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """Printable ASCII without quote or backslash: a JSON string of these bytes is them between quotes."""
    cdef uint64_t w, q, b
    cdef Py_ssize_t j = 0
    cdef unsigned char c
    while j + 8 <= n:
        memcpy(&w, p + j, 8)
        q = w ^ (_LOW * 0x22)  # a zero byte where there is a quote
        b = w ^ (_LOW * 0x5C)  # ... a backslash
        if (((w - _LOW * 0x20) & ~w)  # a byte below 0x20
                | ((w + _LOW) | w)  # a byte above 0x7e
                | ((q - _LOW) & ~q) | ((b - _LOW) & ~b)) & _HIGH:
            return False
        j += 8
    while j < n:
        c = p[j]
        if c < 0x20 or c > 0x7e or c == 0x22 or c == 0x5c:
            return False
        j += 1
    return True


cdef inline Out *start(Kept *kept) except NULL:
    """The buffer to build one call's output in: the module's kept one, or a new one while it is in use."""
    cdef Out *o
    if not kept.busy:
        kept.busy = True
        kept.buf.len = 0
        return &kept.buf
    o = <Out *> PyMem_Malloc(sizeof(Out))
    if o == NULL:
        raise MemoryError()
    o.data = NULL
    o.len = o.cap = 0
    return o


cdef inline void release(Out *o, Kept *kept) noexcept:
    if o != &kept.buf:
        free_buffer(o)
        PyMem_Free(o)
        return
    kept.busy = False
    kept.buf.len = 0
    if kept.buf.cap > KEEP_AT_MOST:
        free_buffer(&kept.buf)


cdef inline bytes finish(Out *o, Kept *kept):
    """The bytes built, and the buffer released."""
    try:
        return PyBytes_FromStringAndSize(o.data, o.len)
    finally:
        release(o, kept)
