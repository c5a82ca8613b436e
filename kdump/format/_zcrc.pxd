# cython: language_level=3
"""zlib's CRC-32 (Kafka's legacy message checksum) over a C array of any length, for the compiled modules of
kdump/format (the magic 0/1 walk in _legacy.pyx, the encoders in _encode.pyx). Compile-time only (an inline
function); the modules link zlib (setup.py LIBRARIES)."""

cdef extern from "zlib.h":
    unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned int length) nogil


cdef inline unsigned long zlib_crc32(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    cdef unsigned long c = crc32(0, NULL, 0)
    while n > 0x40000000:  # zlib takes an unsigned int length
        c = crc32(c, p, 0x40000000)
        p += 0x40000000
        n -= 0x40000000
    return crc32(c, p, <unsigned int>n)
