# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twins of the per-record encoders ``kdump convert`` runs millions of times:

* ``canonical_records``, twin of :func:`kdump.format.canonical.canonical_records_py` (kdump's canonical form of
  every record of a :class:`~kdump.format.columns.RecordColumns`, joined);
* ``encode_messages``, twin of :func:`kdump.format.legacy_builder.encode_messages_py` (every record as an
  uncompressed magic 0/1 entry, joined);
* ``encode_run_records``, twin of :func:`kdump.format.v2_builder.encode_run_records_py` (plain messages, or a
  wrapper's inner messages, as the records of a magic-2 batch).

Same contract, to the byte. What the fast path does not take (a buffer it cannot read as one C array, records
with headers, a key or value outside the buffer, a value Kafka refuses, a size that does not fit) is handed to
the pure twin whole, which then gives the same result or raises the same error. Each output is sized first and
written into one ``bytes`` object. ``tests/test_convert_speed.py`` checks them differentially.
"""

from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from libc.stdint cimport int64_t, uint32_t, int32_t
from libc.string cimport memcpy

from kdump.format._records import fast_buffer

from ._zcrc cimport crc32_setup, zlib_crc32  # compile-time only (inline functions)

crc32_setup()

# The pure twins (handed over by kdump._backend.pick: the pure modules import this one).
canonical_records_py = None
encode_messages_py = None
encode_run_records_py = None

cdef enum:
    CANON_HEAD = 29            # offset 8, timestamp 8, type 1, key length 4, value length 4, headers 4
    LOG_OVERHEAD = 12          # offset int64 + size int32
    TIMESTAMP_TYPE_MASK = 0x08 # magic 1 attributes: LogAppendTime
    NO_TIMESTAMP = -1

cdef int64_t INT32_MAX = 2147483647

# for tests/test_format_declare.py: held equal to kdump/format/layout.py's CANONICAL_RECORD and LOG_ENTRY
ENCODE_LAYOUT = {"CANON_HEAD": CANON_HEAD, "LOG_OVERHEAD": LOG_OVERHEAD, "TIMESTAMP_TYPE_MASK": TIMESTAMP_TYPE_MASK}


cdef inline void _put64(unsigned char *p, int64_t v) noexcept nogil:
    cdef unsigned long long u = <unsigned long long>v
    p[0] = u >> 56; p[1] = u >> 48; p[2] = u >> 40; p[3] = u >> 32
    p[4] = u >> 24; p[5] = u >> 16; p[6] = u >> 8; p[7] = u


cdef inline void _put32(unsigned char *p, int64_t v) noexcept nogil:
    cdef uint32_t u = <uint32_t>v
    p[0] = u >> 24; p[1] = u >> 16; p[2] = u >> 8; p[3] = u


cdef bint _spans_fit(list pos, list length, Py_ssize_t n, Py_ssize_t buf_len, int64_t *total):
    """Every (position, length) span lies inside the buffer (-1: null); adds the lengths to ``total``."""
    cdef Py_ssize_t i
    cdef int64_t p, k
    for i in range(n):
        k = length[i]
        if k < 0:
            if k != -1:
                return False
            continue
        p = pos[i]
        if p < 0 or p > buf_len or k > buf_len - p:
            return False
        total[0] += k
    return True


cdef int64_t _payload_bytes(object cols, Py_ssize_t n, Py_ssize_t src_len):
    """The bytes of the keys and values of the first ``n`` records; -1 when one lies outside the buffer."""
    cdef int64_t total = 0
    if not _spans_fit(cols.key_pos, cols.key_len, n, src_len, &total) or not _spans_fit(
            cols.value_pos, cols.value_len, n, src_len, &total):
        return -1
    return total


def canonical_records(cols, timestamp_type, timestamp=None, headers=True):
    """See :func:`kdump.format.canonical.canonical_records_py`."""
    buf = cols.buf
    if not fast_buffer(buf) or (timestamp_type is None and cols.magics is None):
        return canonical_records_py(cols, timestamp_type, timestamp, headers)
    cdef Py_ssize_t n = cols.count
    cdef list record_headers = cols.headers
    cdef Py_ssize_t i
    if headers:
        for i in range(n):
            if record_headers[i]:
                return canonical_records_py(cols, timestamp_type, timestamp, headers)
    out = _on_buffer(CANONICAL, cols, (timestamp_type, timestamp))
    return canonical_records_py(cols, timestamp_type, timestamp, headers) if out is None else out


cdef enum:  # the fast walks _on_buffer runs
    CANONICAL = 0
    MESSAGES = 1
    RUN_RECORDS = 2


cdef object _on_buffer(int walk, object cols, tuple a):
    """The fast ``walk`` over ``cols.buf`` held as one C array, with the arguments ``a``; None: the pure twin
    is to answer."""
    cdef Py_buffer view
    PyObject_GetBuffer(cols.buf, &view, PyBUF_SIMPLE)
    cdef const unsigned char *src = <const unsigned char *>view.buf
    try:
        if walk == CANONICAL:
            return _canonical(cols, src, view.len, cols.count, a[0], a[1])
        if walk == MESSAGES:
            return _messages(cols, src, view.len, a[0], a[1], a[2])
        return _run_records(cols, src, view.len, a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7])
    finally:
        PyBuffer_Release(&view)


cdef object _canonical(object cols, const unsigned char *src, Py_ssize_t src_len, Py_ssize_t n,
                       object timestamp_type, object timestamp):
    cdef list offsets = cols.offsets, timestamps = cols.timestamps, attributes = cols.attributes
    cdef list key_pos = cols.key_pos, key_len = cols.key_len, value_pos = cols.value_pos
    cdef list value_len = cols.value_len
    cdef list magics = cols.magics if timestamp_type is None else None
    cdef int64_t total = _payload_bytes(cols, n, src_len)
    if total < 0:
        return None
    total += n * CANON_HEAD
    cdef bint own_type = timestamp_type is None
    cdef int fixed_type = 0 if own_type else timestamp_type
    cdef bint own_time = timestamp is None
    cdef int64_t fixed_time = 0 if own_time else timestamp
    out = PyBytes_FromStringAndSize(NULL, total)
    cdef unsigned char *p = <unsigned char *>PyBytes_AS_STRING(out)
    cdef Py_ssize_t i
    cdef int64_t kl, vl
    cdef int ts_type
    for i in range(n):
        if own_type:
            if <int>magics[i] == 0:
                ts_type = -1
            elif <int>attributes[i] & TIMESTAMP_TYPE_MASK:
                ts_type = 1
            else:
                ts_type = 0
        else:
            ts_type = fixed_type
        kl = key_len[i]
        vl = value_len[i]
        _put64(p, offsets[i])
        _put64(p + 8, timestamps[i] if own_time else fixed_time)
        p[16] = <unsigned char>(<signed char>ts_type)
        _put32(p + 17, kl)
        _put32(p + 21, vl)
        _put32(p + 25, 0)
        p += CANON_HEAD
        if kl > 0:
            memcpy(p, src + <Py_ssize_t>key_pos[i], kl)
            p += kl
        if vl > 0:
            memcpy(p, src + <Py_ssize_t>value_pos[i], vl)
            p += vl
    return out


def encode_messages(cols, magic, timestamp_type, timestamp=None):
    """See :func:`kdump.format.legacy_builder.encode_messages_py`."""
    buf = cols.buf
    if not fast_buffer(buf) or magic not in (0, 1):
        return encode_messages_py(cols, magic, timestamp_type, timestamp)
    out = _on_buffer(MESSAGES, cols, (magic, timestamp_type, timestamp))
    return encode_messages_py(cols, magic, timestamp_type, timestamp) if out is None else out


cdef object _messages(object cols, const unsigned char *src, Py_ssize_t src_len, int magic, object timestamp_type,
                      object timestamp):
    cdef Py_ssize_t n = cols.count
    cdef list offsets = cols.offsets, timestamps = cols.timestamps
    cdef list key_pos = cols.key_pos, key_len = cols.key_len, value_pos = cols.value_pos
    cdef list value_len = cols.value_len
    # entry: prefix 12, crc 4, magic 1, attributes 1, [timestamp 8], key length 4, value length 4
    cdef int64_t head = LOG_OVERHEAD + 14 + (8 if magic == 1 else 0)
    cdef int64_t total = _payload_bytes(cols, n, src_len)
    if total < 0:
        return None
    total += n * head
    cdef bint own_time = timestamp is None
    cdef int64_t fixed_time = 0 if own_time else timestamp
    cdef int64_t ts
    cdef Py_ssize_t i
    for i in range(n):  # what Kafka refuses, and sizes that do not fit: the pure twin says so
        ts = timestamps[i] if own_time else fixed_time
        if ts < NO_TIMESTAMP:
            return None
        if head - LOG_OVERHEAD + max(<int64_t>key_len[i], 0) + max(<int64_t>value_len[i], 0) > INT32_MAX:
            return None
    cdef unsigned char attributes = TIMESTAMP_TYPE_MASK if magic == 1 and timestamp_type == 1 else 0
    out = PyBytes_FromStringAndSize(NULL, total)
    cdef unsigned char *p = <unsigned char *>PyBytes_AS_STRING(out)
    cdef unsigned char *start
    cdef unsigned char *q
    cdef int64_t kl, vl
    for i in range(n):
        kl = key_len[i]
        vl = value_len[i]
        start = p
        _put64(p, offsets[i])
        q = p + LOG_OVERHEAD + 4  # after the CRC: magic .. end is what it covers
        q[0] = magic
        q[1] = attributes
        q += 2
        if magic == 1:
            _put64(q, timestamps[i] if own_time else fixed_time)
            q += 8
        _put32(q, kl)
        q += 4
        if kl > 0:
            memcpy(q, src + <Py_ssize_t>key_pos[i], kl)
            q += kl
        _put32(q, vl)
        q += 4
        if vl > 0:
            memcpy(q, src + <Py_ssize_t>value_pos[i], vl)
            q += vl
        _put32(start + 8, q - start - LOG_OVERHEAD)
        _put32(start + LOG_OVERHEAD, zlib_crc32(start + LOG_OVERHEAD + 4, q - start - LOG_OVERHEAD - 4))
        p = q
    return out


cdef inline int _varint_size(int64_t v) noexcept nogil:
    cdef unsigned long long u = (<unsigned long long>v << 1) ^ <unsigned long long>(v >> 63)  # zig-zag
    cdef int n = 1
    while u >= 0x80:
        u >>= 7
        n += 1
    return n


cdef inline unsigned char *_put_varint(unsigned char *p, int64_t v) noexcept nogil:
    cdef unsigned long long u = (<unsigned long long>v << 1) ^ <unsigned long long>(v >> 63)
    while u >= 0x80:
        p[0] = <unsigned char>((u & 0x7F) | 0x80)
        u >>= 7
        p += 1
    p[0] = <unsigned char>u
    return p + 1


def encode_run_records(cols, start, base_offset, base_timestamp, last_offset, room, most, magic, append_time):
    """See :func:`kdump.format.v2_builder.encode_run_records_py`."""
    buf = cols.buf
    if (not fast_buffer(buf) or type(start) is not int or type(room) is not int or type(most) is not int
            or magic not in (0, 1, None) or cols.magics is None):
        return encode_run_records_py(cols, start, base_offset, base_timestamp, last_offset, room, most, magic,
                                     append_time)
    out = _on_buffer(RUN_RECORDS, cols, (start, base_offset, base_timestamp, last_offset, room, most,
                                         -1 if magic is None else magic, append_time))
    if out is None:
        return encode_run_records_py(cols, start, base_offset, base_timestamp, last_offset, room, most, magic,
                                     append_time)
    return out


cdef object _run_records(object cols, const unsigned char *src, Py_ssize_t src_len, Py_ssize_t start,
                         int64_t base_offset, int64_t base_timestamp, int64_t last_offset, int64_t room,
                         int64_t most, int magic, object append_time):
    # magic -1: records of any kind (no unit checks), see the pure twin
    cdef Py_ssize_t n = cols.count
    cdef list offsets = cols.offsets, timestamps = cols.timestamps, attributes = cols.attributes
    cdef list magics = cols.magics, sizes = cols.sizes
    cdef list key_pos = cols.key_pos, key_len = cols.key_len, value_pos = cols.value_pos
    cdef list value_len = cols.value_len
    cdef bint lat_unit = append_time is not None
    cdef int64_t lat_time = append_time if lat_unit else 0
    cdef int64_t overhead = LOG_OVERHEAD + (14 if magic == 0 else 22)
    cdef int64_t used = 0, max_ts = NO_TIMESTAMP, last = last_offset, offset, ts, kl, vl, kp, vp, body
    cdef bint lat
    cdef Py_ssize_t i, stop = start
    if start < 0 or start > n:
        return None
    # pass 1: how many records keep the batch one unit, and their bytes
    for i in range(start, n):
        offset = offsets[i]
        ts = timestamps[i]
        kl = key_len[i]
        vl = value_len[i]
        lat = magic == 1 and (<int>attributes[i] & TIMESTAMP_TYPE_MASK) != 0
        if (magic >= 0 and (<int>magics[i] != magic or lat != lat_unit or (lat_unit and ts != lat_time)
                            or <int64_t>sizes[i] != overhead + max(kl, 0) + max(vl, 0))
                or offset <= last or offset - base_offset > INT32_MAX or ts < NO_TIMESTAMP or i - start == most):
            break
        if kl < -1 or vl < -1:
            return None
        if kl >= 0:
            kp = key_pos[i]
            if kp < 0 or kp > src_len or kl > src_len - kp:
                return None
        if vl >= 0:
            vp = value_pos[i]
            if vp < 0 or vp > src_len or vl > src_len - vp:
                return None
        body = (1 + _varint_size(ts - base_timestamp) + _varint_size(offset - base_offset)
                + (_varint_size(kl) + kl if kl >= 0 else 1) + (_varint_size(vl) + vl if vl >= 0 else 1) + 1)
        body += _varint_size(body)
        if room >= 0 and used + body > room:
            break
        used += body
        last = offset
        if ts > max_ts:
            max_ts = ts
        stop = i + 1
    # pass 2: the records (DefaultRecord.writeTo)
    out = PyBytes_FromStringAndSize(NULL, used)
    cdef unsigned char *p = <unsigned char *>PyBytes_AS_STRING(out)
    for i in range(start, stop):
        offset = offsets[i]
        ts = timestamps[i]
        kl = key_len[i]
        vl = value_len[i]
        body = (1 + _varint_size(ts - base_timestamp) + _varint_size(offset - base_offset)
                + (_varint_size(kl) + kl if kl >= 0 else 1) + (_varint_size(vl) + vl if vl >= 0 else 1) + 1)
        p = _put_varint(p, body)
        p[0] = 0  # record attributes: unused, always 0
        p = _put_varint(p + 1, ts - base_timestamp)
        p = _put_varint(p, offset - base_offset)
        p = _put_varint(p, kl)
        if kl > 0:
            memcpy(p, src + <Py_ssize_t>key_pos[i], kl)
            p += kl
        p = _put_varint(p, vl)
        if vl > 0:
            memcpy(p, src + <Py_ssize_t>value_pos[i], vl)
            p += vl
        p[0] = 0  # no headers
        p += 1
    return out, stop - start, last, max_ts
