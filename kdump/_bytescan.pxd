# cython: language_level=3
"""Tests of a byte run 8 bytes at a time, for the compiled modules that copy text without decoding it when
they can: the renderers (kdump/render/_outbuf.pxd) and the Avro-to-JSON program (kdump/format/_avro.pyx).
Compile-time only (inline functions). Each gives an exact yes/no for the word (which byte answers is not
needed): hasless/hasmore/haszero of "Bit Twiddling Hacks", the word read with memcpy (any alignment)."""
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

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


cdef inline bint json_plain_word(uint64_t w) noexcept nogil:
    """None of the 8 bytes of ``w`` is below 0x20, above 0x7e, a quote or a backslash."""
    cdef uint64_t q = w ^ (_LOW * 0x22)  # a zero byte where there is a quote
    cdef uint64_t b = w ^ (_LOW * 0x5C)  # ... a backslash
    return not ((((w - _LOW * 0x20) & ~w)  # a byte below 0x20
                 | ((w + _LOW) | w)  # a byte above 0x7e
                 | ((q - _LOW) & ~q) | ((b - _LOW) & ~b)) & _HIGH)


cdef inline bint json_plain_byte(unsigned char c) noexcept nogil:
    return 0x20 <= c <= 0x7e and c != 0x22 and c != 0x5c


cdef inline bint json_plain(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """Printable ASCII without quote or backslash: a JSON string of these bytes is them between quotes."""
    cdef uint64_t w
    cdef Py_ssize_t j = 0
    while j + 8 <= n:
        memcpy(&w, p + j, 8)
        if not json_plain_word(w):
            return False
        j += 8
    while j < n:
        if not json_plain_byte(p[j]):
            return False
        j += 1
    return True
