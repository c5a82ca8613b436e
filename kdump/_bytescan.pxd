# cython: language_level=3
"""Tests of a byte run 8 bytes at a time, for the compiled modules that copy text without decoding it when
they can: the renderers (kdump/render/_outbuf.pxd) and the Avro-to-JSON program (kdump/format/_avro.pyx).
Compile-time only (inline functions). Each gives an exact yes/no for the word (which byte answers is not
needed): hasless/hasmore/haszero of "Bit Twiddling Hacks", the word read with memcpy (any alignment).
``json_plain_copy`` (the JSON renderer's keys and values) tests 16 bytes at a time where the machine has SSE2
(every x86-64), while it copies them; ``json_escape_copy`` escapes them, with a byte shuffle where the processor
has SSSE3."""
from libc.stdint cimport uint64_t
from libc.string cimport memcpy

cdef extern from *:
    """
    #define KDUMP_LOW 0x0101010101010101ULL
    #define KDUMP_HIGH 0x8080808080808080ULL

    /* None of the 8 bytes of w is below 0x20, above 0x7e, a quote or a backslash. */
    static inline int kdump_json_plain_word(uint64_t w) {
        uint64_t q = w ^ (KDUMP_LOW * 0x22);  /* a zero byte where there is a quote */
        uint64_t b = w ^ (KDUMP_LOW * 0x5C);  /* ... a backslash */
        return !((((w - KDUMP_LOW * 0x20) & ~w)  /* a byte below 0x20 */
                  | ((w + KDUMP_LOW) | w)  /* a byte above 0x7e */
                  | ((q - KDUMP_LOW) & ~q) | ((b - KDUMP_LOW) & ~b)) & KDUMP_HIGH);
    }

    #if defined(__SSE2__)
    #include <emmintrin.h>
    /* The same test of 16 bytes, a bit per byte that is not plain (bit i for byte i): as signed bytes, 0x80-0xff
       are below 0x20 and 0x7f is the only one above 0x7e. */
    static inline int kdump_json_bad16(__m128i v) {
        __m128i bad = _mm_or_si128(
            _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmpgt_epi8(v, _mm_set1_epi8(0x7e))),
            _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(0x22)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x5c))));
        return _mm_movemask_epi8(bad);
    }

    static inline int kdump_json_plain16(__m128i v) {
        return kdump_json_bad16(v) == 0;
    }

    /* The index of the lowest bit set in mask (not 0). */
    #if defined(_MSC_VER) && !defined(__clang__)
    #include <intrin.h>
    static inline int kdump_lowest_bit(int mask) {
        unsigned long i;
        _BitScanForward(&i, (unsigned long)mask);
        return (int)i;
    }
    #else
    static inline int kdump_lowest_bit(int mask) {
        return __builtin_ctz((unsigned int)mask);
    }
    #endif
    #endif

    /* p[:n] copied to d where every byte is plain JSON text (as kdump_json_plain_word): the end of the copy, else
       NULL (d's bytes then undefined). Reads p[:readable] at most (readable >= n: the bytes after the text that
       may be read, a block's worth: a short key's one test); writes d[:n], and up to 16 bytes from d where it
       read past p + n. The last block read overlaps the one before rather than going byte by byte. */
    static inline char *kdump_json_plain_copy(char *d, const unsigned char *p, Py_ssize_t n, Py_ssize_t readable) {
        Py_ssize_t j = 0;
        uint64_t w;
    #if defined(__SSE2__)
        __m128i v;
        for (; j + 16 <= n; j += 16) {
            v = _mm_loadu_si128((const __m128i *)(p + j));
            if (!kdump_json_plain16(v)) return NULL;
            _mm_storeu_si128((__m128i *)(d + j), v);
        }
        if (j < n && n >= 16) {
            v = _mm_loadu_si128((const __m128i *)(p + n - 16));
            if (!kdump_json_plain16(v)) return NULL;
            _mm_storeu_si128((__m128i *)(d + n - 16), v);
            return d + n;
        }
        if (j < n && readable >= 16) {  /* fewer than 16 bytes, more readable after them: one test, one store */
            v = _mm_loadu_si128((const __m128i *)p);
            if (kdump_json_bad16(v) & ((1 << n) - 1)) return NULL;
            _mm_storeu_si128((__m128i *)d, v);
            return d + n;
        }
    #endif
        for (; j + 8 <= n; j += 8) {
            memcpy(&w, p + j, 8);
            if (!kdump_json_plain_word(w)) return NULL;
            memcpy(d + j, &w, 8);
        }
        if (j < n && n >= 8) {
            memcpy(&w, p + n - 8, 8);
            if (!kdump_json_plain_word(w)) return NULL;
            memcpy(d + n - 8, &w, 8);
            return d + n;
        }
        for (; j < n; j++) {
            if (p[j] < 0x20 || p[j] > 0x7e || p[j] == 0x22 || p[j] == 0x5c) return NULL;
            d[j] = (char)p[j];
        }
        return d + n;
    }

    /* The character at p[*j] (of p[:n]) written at d as json.dumps writes it inside a string, *j moved past it: the
       end of what was written, else NULL where it is not UTF-8. */
    static inline char *kdump_json_escape_one(char *d, const unsigned char *p, Py_ssize_t n, Py_ssize_t *at) {
        static const char hex[] = "0123456789abcdef";
        Py_ssize_t j = *at, k;
        unsigned char c = p[j], c1;
        if (c >= 0x20 && c < 0x80 && c != 0x22 && c != 0x5c) { *d = (char)c; *at = j + 1; return d + 1; }
        if (c < 0x80) {
            d[0] = 0x5c;
            *at = j + 1;
            if (c == 0x22 || c == 0x5c) { d[1] = (char)c; return d + 2; }
            if (c == 0x08) { d[1] = 'b'; return d + 2; }
            if (c == 0x0c) { d[1] = 'f'; return d + 2; }
            if (c == 0x0a) { d[1] = 'n'; return d + 2; }
            if (c == 0x0d) { d[1] = 'r'; return d + 2; }
            if (c == 0x09) { d[1] = 't'; return d + 2; }
            d[1] = 'u'; d[2] = '0'; d[3] = '0'; d[4] = hex[c >> 4]; d[5] = hex[c & 15];
            return d + 6;
        }
        /* a multi-byte sequence: its length and the range of its second byte, as CPython's decoder checks */
        if (c >= 0xC2 && c <= 0xDF) k = 2;
        else if (c >= 0xE0 && c <= 0xEF) k = 3;
        else if (c >= 0xF0 && c <= 0xF4) k = 4;
        else return NULL;
        if (j + k > n) return NULL;
        c1 = p[j + 1];
        if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || (c == 0xF0 && c1 < 0x90)
                || (c == 0xF4 && c1 > 0x8F) || (c1 & 0xC0) != 0x80) return NULL;
        if (k > 2 && (p[j + 2] & 0xC0) != 0x80) return NULL;
        if (k > 3 && (p[j + 3] & 0xC0) != 0x80) return NULL;
        memcpy(d, p + j, k);
        *at = j + k;
        return d + k;
    }

    /* json_escape_copy's three forms, each writing p[:n] at d as the inside of a JSON string, as json.dumps(text,
       ensure_ascii=False) writes the text p[:n] decodes to (Python's strict UTF-8: no overlong form, no surrogate,
       nothing above U+10FFFF): a quote, a backslash and the C0 controls escaped (b, f, n, r and t after a
       backslash, the others as u00xx after one), everything else as it is. d has room for 6 * n + 32 bytes (blocks
       are stored whole, whatever is left). The end of what was written, else NULL where p[:n] is not UTF-8 (d's
       bytes then undefined). p[:readable] may be read (readable >= n): what is read past p + n is stored past the
       end returned. */

    /* 8 bytes at a time: a plain block at once, else the block character by character (machines without SSE2) */
    static inline char *kdump_json_escape_words(char *d, const unsigned char *p, Py_ssize_t n,
                                                 Py_ssize_t readable) {
        Py_ssize_t j = 0, stop;
        uint64_t w;
        while (j < n) {
            if (j + 8 <= n) {
                memcpy(&w, p + j, 8);
                if (kdump_json_plain_word(w)) {
                    memcpy(d, &w, 8);
                    d += 8;
                    j += 8;
                    continue;
                }
            }
            stop = j + 8 < n ? j + 8 : n;
            while (j < stop) {
                if ((d = kdump_json_escape_one(d, p, n, &j)) == NULL) return NULL;
            }
        }
        return d;
    }

    #if defined(__SSE2__)
    /* A block of 16 bytes (the last, fewer, padded with plain bytes that are not counted) is tested once: its
       bytes are stored at d at once, and where some are not plain, each of those is written on its own and the
       plain run after it stored again (from the input, or near its end from a padded copy of the block), the
       block's mask telling where the next one is: a branch per character escaped. */
    static inline char *kdump_json_escape_sse2(char *d, const unsigned char *p, Py_ssize_t n,
                                                Py_ssize_t readable) {
        Py_ssize_t j = 0;
        __m128i v;
        int bad;
        Py_ssize_t j0, k, t;
        unsigned char block[32];
        while (j < n) {
            j0 = j;
            if (j + 16 <= n) {
                v = _mm_loadu_si128((const __m128i *)(p + j));
                k = 16;
                bad = kdump_json_bad16(v);
            } else {
                k = n - j;
                memset(block, 'a', 16);
                memcpy(block, p + j, (size_t)k);
                v = _mm_loadu_si128((const __m128i *)block);
                bad = kdump_json_bad16(v) & ((1 << k) - 1);
            }
            _mm_storeu_si128((__m128i *)d, v);
            if (bad == 0) {
                d += k;
                j += k;
                continue;
            }
            _mm_storeu_si128((__m128i *)block, v);  /* the runs after the first, near the end, are stored from here */
            memset(block + 16, 'a', 16);
            for (;;) {
                t = j0 + kdump_lowest_bit(bad);  /* the next byte that is not plain; the run before it is at d */
                d += t - j;
                j = t;
                if (p[j] == 0x22 || p[j] == 0x5c) {  /* the common escape in JSON documents, without the tests */
                    d[0] = 0x5c;
                    d[1] = (char)p[j];
                    d += 2;
                    j++;
                } else if ((d = kdump_json_escape_one(d, p, n, &j)) == NULL) {
                    return NULL;
                }
                if (j - j0 >= k) break;  /* the block is written (a multi-byte character may end past it) */
                bad &= -(1 << (j - j0));  /* the bytes not yet written */
                /* (from the input where 16 bytes are left in it: a load from the copy just stored, at another
                   offset, would wait for the store to reach the cache) */
                _mm_storeu_si128((__m128i *)d, _mm_loadu_si128(
                    (const __m128i *)(j + 16 <= n ? p + j : block + (j - j0))));
                if (bad == 0) {  /* the rest of the block is plain: stored just now */
                    d += j0 + k - j;
                    j = j0 + k;
                    break;
                }
            }
        }
        return d;
    }
    #endif

    #if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #define KDUMP_SSSE3 1
    #include <tmmintrin.h>
    /* JSON documents as values hold a quote every few bytes, at places that move from record to record with the
       digits before them: a branch per quote is mispredicted often. With SSSE3 (a byte shuffle; compiled for it
       in this function only, used where the processor has it) a block whose only bytes to escape are quotes and
       backslashes is written without a branch per character: each half of 8 bytes is spread by a shuffle whose
       control comes from a table indexed by the half's mask (a backslash slid in before each byte marked), and the
       output moves on by 8 plus the marks. Blocks with a control character or a byte above 0x7e (non-ASCII UTF-8,
       to be validated) go character by character. */
    static unsigned char kdump_spread_control[256][16];  /* by mask: each output byte's source (8: a backslash) */
    static unsigned char kdump_spread_marks[256];  /* by mask: how many bits it has */
    static int kdump_spread_ready = 0;

    static inline void kdump_spread_init(void) {
        int m, i, k;
        if (kdump_spread_ready) return;
        for (m = 0; m < 256; m++) {
            k = 0;
            for (i = 0; i < 8; i++) {
                if ((m >> i) & 1) kdump_spread_control[m][k++] = 8;
                kdump_spread_control[m][k++] = (unsigned char)i;
            }
            for (; k < 16; k++) kdump_spread_control[m][k] = 0x80;  /* (a zero byte: written over or past the end) */
        }
        for (m = 0; m < 256; m++) {
            for (k = 0, i = 0; i < 8; i++) k += (m >> i) & 1;
            kdump_spread_marks[m] = (unsigned char)k;
        }
        kdump_spread_ready = 1;
    }

    __attribute__((target("ssse3")))
    static inline char *kdump_json_escape_ssse3(char *d, const unsigned char *p, Py_ssize_t n,
                                                 Py_ssize_t readable) {
        const __m128i backslash = _mm_set1_epi8(0x5c), quote = _mm_set1_epi8(0x22);
        __m128i v;
        int bad, marked, keep, lo, hi;
        Py_ssize_t j = 0, k, stop;
        unsigned char block[16];
        while (j < n) {
            k = n - j < 16 ? n - j : 16;
            if (j + 16 <= readable) {  /* (the last bytes with those after them, which are not counted) */
                v = _mm_loadu_si128((const __m128i *)(p + j));
            } else {  /* the last bytes, padded with plain ones, which are written past the end and not counted */
                memset(block, 'a', 16);
                memcpy(block, p + j, (size_t)k);
                v = _mm_loadu_si128((const __m128i *)block);
            }
            keep = k == 16 ? 0xffff : (1 << k) - 1;
            bad = kdump_json_bad16(v) & keep;
            marked = _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash))) & keep;
            if (bad == marked) {  /* nothing but quotes and backslashes to escape, if anything */
                lo = marked & 0xff;
                hi = marked >> 8;
                _mm_storeu_si128((__m128i *)d, _mm_shuffle_epi8(_mm_unpacklo_epi64(v, backslash),
                    _mm_loadu_si128((const __m128i *)kdump_spread_control[lo])));
                _mm_storeu_si128((__m128i *)(d + 8 + kdump_spread_marks[lo]), _mm_shuffle_epi8(
                    _mm_unpackhi_epi64(v, backslash), _mm_loadu_si128((const __m128i *)kdump_spread_control[hi])));
                d += k + kdump_spread_marks[lo] + kdump_spread_marks[hi];
                j += k;
                continue;
            }
            stop = j + k;  /* (a multi-byte character may end past the block: the next one starts after it) */
            while (j < stop) {
                if ((d = kdump_json_escape_one(d, p, n, &j)) == NULL) return NULL;
            }
        }
        return d;
    }
    #endif

    /* Which form json_escape_copy uses: 0 words, 1 SSE2, 2 SSSE3; -1 until the first call picks the best this
       processor runs (a test sets each in turn: kdump.render._jsonl.use_escape_form). */
    static int kdump_json_escape_form = -1;

    static inline int kdump_json_escape_best(void) {
    #if defined(KDUMP_SSSE3)
        __builtin_cpu_init();
        if (__builtin_cpu_supports("ssse3")) return 2;
    #endif
    #if defined(__SSE2__)
        return 1;
    #else
        return 0;
    #endif
    }

    /* Use ``form`` (as kdump_json_escape_form) where this build and processor can, else nothing changes: the form
       used. */
    static inline int kdump_json_escape_use(int form) {
        if (form >= 0 && form <= kdump_json_escape_best()) {
    #if defined(KDUMP_SSSE3)
            if (form == 2) kdump_spread_init();
    #endif
            kdump_json_escape_form = form;
        }
        return kdump_json_escape_form;
    }

    static inline char *kdump_json_escape_copy(char *d, const unsigned char *p, Py_ssize_t n, Py_ssize_t readable) {
        if (kdump_json_escape_form < 0) kdump_json_escape_use(kdump_json_escape_best());
    #if defined(KDUMP_SSSE3)
        if (kdump_json_escape_form == 2) return kdump_json_escape_ssse3(d, p, n, readable);
    #endif
    #if defined(__SSE2__)
        if (kdump_json_escape_form == 1) return kdump_json_escape_sse2(d, p, n, readable);
    #endif
        return kdump_json_escape_words(d, p, n, readable);
    }
    """
    const uint64_t _LOW "KDUMP_LOW"
    const uint64_t _HIGH "KDUMP_HIGH"
    bint json_plain_word "kdump_json_plain_word"(uint64_t w) noexcept nogil
    char *json_plain_copy "kdump_json_plain_copy"(char *d, const unsigned char *p, Py_ssize_t n,
                                                  Py_ssize_t readable) noexcept nogil
    char *json_escape_copy "kdump_json_escape_copy"(char *d, const unsigned char *p, Py_ssize_t n,
                                                    Py_ssize_t readable) noexcept nogil
    int json_escape_best "kdump_json_escape_best"() noexcept nogil
    int json_escape_use "kdump_json_escape_use"(int form) noexcept nogil


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
    cdef uint64_t w
    cdef Py_ssize_t j = 0
    while j + 8 <= n:
        memcpy(&w, p + j, 8)
        if not json_plain_word(w):
            return False
        j += 8
    while j < n:
        if p[j] < 0x20 or p[j] > 0x7e or p[j] == 0x22 or p[j] == 0x5c:
            return False
        j += 1
    return True
