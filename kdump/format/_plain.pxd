# cython: language_level=3
"""One plain (uncompressed) magic 0/1 message read from a C array (spec §3.2): its entry prefix and fields, for
the compiled walks of messages (kdump/format/_legacy.pyx) and the compiled renderers of runs of them
(kdump/render/_lines.pyx, _jsonl.pyx), which then read no Python object per message. Compile-time only (an inline
function); every byte read is bounds-checked against ``end``."""
from libc.stdint cimport int32_t, int64_t, uint32_t


# Where read_plain finds a message's fields: kdump.format.layout's LEGACY_V0_MESSAGE / LEGACY_V1_MESSAGE, as C
# constants (_legacy.pyx exports them as PLAIN_LAYOUT; tests/test_format_declare.py holds them to the declarations).
cdef enum:
    PLAIN_SIZE_AT = 8           # entry: offset int64 | messageSize int32 | body
    PLAIN_OVERHEAD = 12         # where the body starts
    PLAIN_MAGIC_AT = 4          # body: crc uint32 | magic | attributes | [timestamp int64] | keyLength int32 | ...
    PLAIN_ATTRIBUTES_AT = 5
    PLAIN_TIMESTAMP_AT = 6      # magic 1
    PLAIN_V0_KEY_LENGTH_AT = 6
    PLAIN_V1_KEY_LENGTH_AT = 14
    PLAIN_V0_MIN_SIZE = 14      # a body with a null key and value
    PLAIN_V1_MIN_SIZE = 22
    PLAIN_LENGTH_SIZE = 4       # keyLength / valueLength int32
    PLAIN_CODEC_MASK = 0x07
    PLAIN_TIMESTAMP_TYPE_MASK = 0x08


cdef enum:
    PLAIN_TRUNCATED = -1  # the entry does not end before ``end`` (where an inner set ends silently)
    PLAIN_REFUSED = -2    # no plain message: too small, unparseable, compressed (the pure walk says why)


cdef struct PlainMessage:
    int64_t offset        # the entry's offset field
    int32_t size          # its size field (the message's bytes after it)
    uint32_t crc          # stored CRC-32 (of magic .. end)
    int magic
    int attributes        # as a signed byte, as Kafka reads it
    int64_t timestamp     # -1 for magic 0
    Py_ssize_t key_pos, value_pos
    int32_t key_len, value_len  # -1: null


cdef inline int64_t _i64(const unsigned char *p) noexcept nogil:
    return <int64_t>((<unsigned long long>p[0] << 56) | (<unsigned long long>p[1] << 48) |
                     (<unsigned long long>p[2] << 40) | (<unsigned long long>p[3] << 32) |
                     (<unsigned long long>p[4] << 24) | (<unsigned long long>p[5] << 16) |
                     (<unsigned long long>p[6] << 8) | <unsigned long long>p[7])


cdef inline uint32_t _u32(const unsigned char *p) noexcept nogil:
    return (<uint32_t>p[0] << 24) | (<uint32_t>p[1] << 16) | (<uint32_t>p[2] << 8) | <uint32_t>p[3]


cdef inline Py_ssize_t _sized(const unsigned char *p, Py_ssize_t q, Py_ssize_t stop, Py_ssize_t *at,
                              int32_t *length) noexcept nogil:
    """An int32-length-prefixed byte string at ``q`` (-1: null): its position and length, and the position
    after it; -1 when it does not fit before ``stop``."""
    if stop - q < PLAIN_LENGTH_SIZE:
        return -1
    cdef int32_t n = <int32_t>_u32(p + q)
    q += PLAIN_LENGTH_SIZE
    at[0] = q
    if n < 0:
        length[0] = -1
        return q
    if n > stop - q:
        return -1
    length[0] = n
    return q + n


cdef inline Py_ssize_t read_plain(const unsigned char *p, Py_ssize_t pos, Py_ssize_t end,
                                  PlainMessage *m) noexcept nogil:
    """The plain message whose entry starts at ``pos``: its fields into ``m``, and the position after it;
    PLAIN_TRUNCATED or PLAIN_REFUSED when there is none."""
    if end - pos < PLAIN_OVERHEAD:
        return PLAIN_TRUNCATED
    cdef int32_t size = <int32_t>_u32(p + pos + PLAIN_SIZE_AT)
    cdef Py_ssize_t start = pos + PLAIN_OVERHEAD, stop, q
    if size < PLAIN_V0_MIN_SIZE:  # a magic 0 message with no key and no value
        return PLAIN_REFUSED
    if start + size > end:
        return PLAIN_TRUNCATED
    stop = start + size
    m.magic = p[start + PLAIN_MAGIC_AT]
    m.attributes = <signed char>p[start + PLAIN_ATTRIBUTES_AT]
    if m.magic == 0:
        m.timestamp = -1
        q = start + PLAIN_V0_KEY_LENGTH_AT
    elif m.magic == 1 and size >= PLAIN_V1_MIN_SIZE:
        m.timestamp = _i64(p + start + PLAIN_TIMESTAMP_AT)
        q = start + PLAIN_V1_KEY_LENGTH_AT
    else:
        return PLAIN_REFUSED
    q = _sized(p, q, stop, &m.key_pos, &m.key_len)
    if q >= 0:
        q = _sized(p, q, stop, &m.value_pos, &m.value_len)
    if q < 0 or m.attributes & PLAIN_CODEC_MASK:  # a key or value past the message, or a compressed wrapper
        return PLAIN_REFUSED
    m.offset = _i64(p + pos)
    m.size = size
    m.crc = _u32(p + start)
    return stop


cdef inline int plain_timestamp_type(PlainMessage *m) noexcept nogil:
    """Kafka's timestamp type id of a plain message: -1 for magic 0, else 1 (LogAppendTime) when its attributes
    say so, 0 (CreateTime) otherwise."""
    if m.magic == 0:
        return -1
    return 1 if m.attributes & PLAIN_TIMESTAMP_TYPE_MASK else 0
