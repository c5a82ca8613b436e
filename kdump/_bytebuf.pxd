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
    static const uint64_t kdump_pow10[20] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
        10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL, 1000000000000ULL,
        10000000000000ULL, 100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
        1000000000000000000ULL, 10000000000000000000ULL};

    /* The number of decimal digits of u: log2 (from the leading zeros) times log10(2) ~ 1233/4096, corrected by one
       comparison (no loop of divisions, each waiting for the one before). */
    static inline int kdump_decimal_len(uint64_t u) {
        int t = ((64 - __builtin_clzll(u | 1)) * 1233) >> 12;
        return t + 1 - ((u | 1) < kdump_pow10[t]);
    }

    /* u's digits written to end before ``end``: eight at a time in 32-bit arithmetic (two independent halves of
       four), then two at a time. */
    static inline void kdump_write_decimal(char *end, uint64_t u) {
        uint32_t v, hi, lo;
        while (u >= 100000000ULL) {
            v = (uint32_t)(u % 100000000ULL);
            u /= 100000000ULL;
            hi = v / 10000; lo = v % 10000;
            end -= 8;
            memcpy(end, kdump_digit_pairs + 2 * (hi / 100), 2);
            memcpy(end + 2, kdump_digit_pairs + 2 * (hi % 100), 2);
            memcpy(end + 4, kdump_digit_pairs + 2 * (lo / 100), 2);
            memcpy(end + 6, kdump_digit_pairs + 2 * (lo % 100), 2);
        }
        v = (uint32_t)u;
        while (v >= 100) {
            end -= 2;
            memcpy(end, kdump_digit_pairs + 2 * (v % 100), 2);
            v /= 100;
        }
        if (v >= 10) {
            memcpy(end - 2, kdump_digit_pairs + 2 * v, 2);
        } else {
            end[-1] = (char)('0' + v);
        }
    }
    """
    int decimal_len "kdump_decimal_len"(uint64_t u) noexcept nogil
    void write_decimal "kdump_write_decimal"(char *end, uint64_t u) noexcept nogil


cdef enum:
    INT_MAX_CHARS = 20  # the longest int64 in decimal: "-9223372036854775808"


cdef inline char *write_int(char *d, int64_t v) noexcept nogil:
    """``v`` in decimal (as Java's Long.toString and Python's str) at ``d``, which has room for
    INT_MAX_CHARS bytes; returns the end of what it wrote. For writers that reserve a record's room once."""
    cdef uint64_t u = <uint64_t> (-(v + 1)) + 1 if v < 0 else <uint64_t> v
    cdef int n = decimal_len(u)
    if v < 0:
        d[0] = b'-'
        d += 1
    write_decimal(d + n, u)
    return d + n


cdef inline int put_int(ByteBuf *o, int64_t v) except -1:
    """``v`` in decimal (as Java's Long.toString and Python's str), written in place: the renderers write several
    numbers a record."""
    if o.len + INT_MAX_CHARS > o.cap:
        reserve(o, INT_MAX_CHARS)
    o.len = write_int(o.data + o.len, v) - o.data
    return 0


cdef inline void free_buffer(ByteBuf *b) noexcept:
    PyMem_Free(b.data)
    b.data = NULL
    b.len = b.cap = 0
