# cython: language_level=3
"""Kafka's legacy message checksum, CRC-32 (the zlib/IEEE polynomial), over a C array of any length, for the
compiled modules of kdump/format (the magic 0/1 walk in _legacy.pyx, the encoders in _encode.pyx).
Compile-time only (inline functions); the modules link zlib (setup.py LIBRARIES).

Legacy messages are short (a hundred bytes or so each), and zlib's ``crc32`` is slow to start on a short
array (about 117 ns for 134 bytes here, 1.1 GB/s, against 4 GB/s over a long one), so arrays below
``SHORT`` bytes are computed by slicing-by-8 (eight tables of 256 entries, eight bytes a step: about half
zlib's time on a message) and longer ones by zlib. Both give zlib's value; ``tests/test_legacy_speedups.py``
compares them on every length up to past ``SHORT``."""
from libc.stdint cimport uint32_t

cdef extern from "zlib.h":
    unsigned long crc32(unsigned long crc, const unsigned char *buf, unsigned int length) nogil

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* CRC-32 by slicing-by-8 (reflected polynomial 0xEDB88320): table[0] is the byte-at-a-time table,
       table[t][i] the CRC of byte i followed by t zero bytes. Filled once, on first use. */
    static uint32_t kdump_crc32_table[8][256];
    static int kdump_crc32_ready = 0;

    static void kdump_crc32_fill(void) {
        uint32_t i, c;
        int k, t;
        for (i = 0; i < 256; i++) {
            c = i;
            for (k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            kdump_crc32_table[0][i] = c;
        }
        for (i = 0; i < 256; i++) {
            c = kdump_crc32_table[0][i];
            for (t = 1; t < 8; t++) {
                c = kdump_crc32_table[0][c & 0xffu] ^ (c >> 8);
                kdump_crc32_table[t][i] = c;
            }
        }
        kdump_crc32_ready = 1;
    }

    static uint32_t kdump_crc32_short(const unsigned char *p, size_t n) {
        const uint32_t (*T)[256] = kdump_crc32_table;
        uint32_t c = 0xFFFFFFFFu;
        if (!kdump_crc32_ready) kdump_crc32_fill();
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        while (n >= 8) {
            uint64_t w;
            uint32_t lo, hi;
            memcpy(&w, p, 8);
            lo = (uint32_t)w ^ c;
            hi = (uint32_t)(w >> 32);
            c = T[7][lo & 0xffu] ^ T[6][(lo >> 8) & 0xffu] ^ T[5][(lo >> 16) & 0xffu] ^ T[4][lo >> 24]
              ^ T[3][hi & 0xffu] ^ T[2][(hi >> 8) & 0xffu] ^ T[1][(hi >> 16) & 0xffu] ^ T[0][hi >> 24];
            p += 8;
            n -= 8;
        }
    #endif
        while (n--) c = T[0][(c ^ *p++) & 0xffu] ^ (c >> 8);
        return c ^ 0xFFFFFFFFu;
    }
    """
    uint32_t kdump_crc32_short(const unsigned char *p, size_t n) nogil

cdef enum:
    SHORT = 512  # below this slicing-by-8 is the faster, above it zlib (measured: equal at 512 bytes, 2 GB/s)


cdef inline unsigned long zlib_crc32(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    cdef unsigned long c
    if n < SHORT:
        return kdump_crc32_short(p, <size_t>n)
    c = crc32(0, NULL, 0)
    while n > 0x40000000:  # zlib takes an unsigned int length
        c = crc32(c, p, 0x40000000)
        p += 0x40000000
        n -= 0x40000000
    return crc32(c, p, <unsigned int>n)
