# cython: language_level=3
"""Kafka's legacy message checksum, CRC-32 (zlib's, the IEEE polynomial), over a C array of any length, for the
compiled modules of kdump/format (the magic 0/1 walk in _legacy.pyx, the encoders in _encode.pyx).
Compile-time only (inline functions).

Legacy messages are short (a hundred bytes or so each), and zlib's ``crc32`` is slow on them: measured here,
1.1 GB/s on 134-byte arrays against 4 GB/s on long ones. So:

* on x86-64 processors with carry-less multiplication (PCLMULQDQ, checked at run time), the whole 16-byte
  blocks of an array of at least 64 bytes are folded with it (the method of Intel's paper "Fast CRC
  Computation for Generic Polynomials Using PCLMULQDQ Instruction": 12-13 GB/s on long arrays, 2.5-4 on a
  message);
* the rest, and everything elsewhere, by slicing-by-8 (eight tables of 256 entries, eight bytes a step, about
  2 GB/s whatever the length; big-endian machines a byte a step).

Both give zlib's value: ``tests/test_legacy_speedups.py`` compares them with ``zlib.crc32`` on every length up
to past the switches, and on random lengths."""
from libc.stdint cimport uint32_t

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>

    /* Slicing-by-8 tables (reflected polynomial 0xEDB88320): [0] is the byte-at-a-time table, [t][i] the
       CRC of byte i followed by t zero bytes. Filled on first use. */
    static uint32_t kdump_crc32_tables[8][256];
    static int kdump_crc32_filled = 0;

    static void kdump_crc32_fill(void) {
        uint32_t i, c;
        int k, t;
        for (i = 0; i < 256; i++) {
            c = i;
            for (k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
            kdump_crc32_tables[0][i] = c;
        }
        for (i = 0; i < 256; i++) {
            c = kdump_crc32_tables[0][i];
            for (t = 1; t < 8; t++) {
                c = kdump_crc32_tables[0][c & 0xffu] ^ (c >> 8);
                kdump_crc32_tables[t][i] = c;
            }
        }
        kdump_crc32_filled = 1;
    }

    /* The CRC register (not inverted) after p[0:n], by slicing-by-8. */
    static uint32_t kdump_crc32_sliced(uint32_t c, const unsigned char *p, size_t n) {
        const uint32_t (*T)[256] = (const uint32_t (*)[256])kdump_crc32_tables;
        if (!kdump_crc32_filled) kdump_crc32_fill();
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
        return c;
    }

    #if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    #include <immintrin.h>
    /* The register after p[0:len], len >= 64 and a multiple of 16, folded by carry-less multiplication: four
       128-bit lanes folded 64 bytes at a time (constants x^(4*128+32) and x^(4*128-32) mod P), the lanes
       folded into one (x^(128+32), x^(128-32)), the rest 16 bytes at a time, then 128 bits reduced to 64 (x^64)
       and to 32 by Barrett reduction (P and floor(x^64 / P)), all bit-reflected. */
    __attribute__((target("pclmul,sse4.1")))
    static uint32_t kdump_crc32_folded(uint32_t crc, const unsigned char *p, size_t len) {
        const __m128i k1k2 = _mm_set_epi64x(0x01c6e41596LL, 0x0154442bd4LL);
        const __m128i k3k4 = _mm_set_epi64x(0x00ccaa009eLL, 0x01751997d0LL);
        const __m128i k5 = _mm_set_epi64x(0, 0x0163cd6124LL);
        const __m128i poly = _mm_set_epi64x(0x01f7011641LL, 0x01db710641LL);
        const __m128i low32 = _mm_setr_epi32(~0, 0, ~0, 0);
        __m128i x1, x2, x3, x4, y1, y2, y3, y4;
        x1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)crc));
        x2 = _mm_loadu_si128((const __m128i *)(p + 16));
        x3 = _mm_loadu_si128((const __m128i *)(p + 32));
        x4 = _mm_loadu_si128((const __m128i *)(p + 48));
        p += 64;
        len -= 64;
        while (len >= 64) {
            y1 = _mm_clmulepi64_si128(x1, k1k2, 0x00);
            y2 = _mm_clmulepi64_si128(x2, k1k2, 0x00);
            y3 = _mm_clmulepi64_si128(x3, k1k2, 0x00);
            y4 = _mm_clmulepi64_si128(x4, k1k2, 0x00);
            x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k1k2, 0x11), y1),
                               _mm_loadu_si128((const __m128i *)p));
            x2 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x2, k1k2, 0x11), y2),
                               _mm_loadu_si128((const __m128i *)(p + 16)));
            x3 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x3, k1k2, 0x11), y3),
                               _mm_loadu_si128((const __m128i *)(p + 32)));
            x4 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x4, k1k2, 0x11), y4),
                               _mm_loadu_si128((const __m128i *)(p + 48)));
            p += 64;
            len -= 64;
        }
        x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), _mm_clmulepi64_si128(x1, k3k4, 0x00)), x2);
        x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), _mm_clmulepi64_si128(x1, k3k4, 0x00)), x3);
        x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11), _mm_clmulepi64_si128(x1, k3k4, 0x00)), x4);
        while (len >= 16) {
            x1 = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x1, k3k4, 0x11),
                                             _mm_clmulepi64_si128(x1, k3k4, 0x00)),
                               _mm_loadu_si128((const __m128i *)p));
            p += 16;
            len -= 16;
        }
        x2 = _mm_clmulepi64_si128(x1, k3k4, 0x10);
        x1 = _mm_xor_si128(_mm_srli_si128(x1, 8), x2);
        x2 = _mm_srli_si128(x1, 4);
        x1 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x1, low32), k5, 0x00), x2);
        x2 = _mm_clmulepi64_si128(_mm_and_si128(x1, low32), poly, 0x10);
        x2 = _mm_clmulepi64_si128(_mm_and_si128(x2, low32), poly, 0x00);
        return (uint32_t)_mm_extract_epi32(_mm_xor_si128(x1, x2), 1);
    }

    static int kdump_crc32_can_fold = -1;  /* unknown until first asked */

    static int kdump_crc32_fold_ok(void) {
        if (kdump_crc32_can_fold < 0) {
            __builtin_cpu_init();
            kdump_crc32_can_fold = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1");
        }
        return kdump_crc32_can_fold;
    }
    #else
    static uint32_t kdump_crc32_folded(uint32_t crc, const unsigned char *p, size_t len) { return crc; }
    static int kdump_crc32_fold_ok(void) { return 0; }
    #endif

    /* zlib's crc32(0, p, n). */
    static uint32_t kdump_crc32(const unsigned char *p, size_t n) {
        uint32_t c = 0xFFFFFFFFu;
        if (n >= 64 && kdump_crc32_fold_ok()) {
            size_t blocks = n & ~(size_t)15;
            c = kdump_crc32_folded(c, p, blocks);
            p += blocks;
            n -= blocks;
        }
        return kdump_crc32_sliced(c, p, n) ^ 0xFFFFFFFFu;
    }
    """
    uint32_t kdump_crc32(const unsigned char *p, size_t n) nogil
    void kdump_crc32_fill() nogil
    int kdump_crc32_fold_ok() nogil


cdef inline unsigned long zlib_crc32(const unsigned char *p, Py_ssize_t n) noexcept nogil:
    """zlib's ``crc32(0, p, n)``."""
    return kdump_crc32(p, <size_t>n)


cdef inline void crc32_setup() noexcept nogil:
    """Fill the tables and ask the processor, once, when a module using this is imported (so that threads
    never race to do it)."""
    kdump_crc32_fill()
    kdump_crc32_fold_ok()
