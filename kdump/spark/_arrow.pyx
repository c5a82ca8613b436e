# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twin of :class:`kdump.spark.builder.PyColumnBuilder`: magic-2 records straight into Arrow buffers.

:meth:`ColumnBuilder.add_v2` decodes a batch's serialized records (spec §3.5) into typed, growable C
buffers -- int64 offsets, int64 microsecond timestamps, 32-bit binary offsets plus one data buffer for
keys and for values with validity flags, and the header list -- without creating a Python object per
record; :meth:`ColumnBuilder.finish` hands them over, without a copy, to :mod:`kdump.spark.record_arrays`,
which makes the arrays of both builders.

It accepts only well-formed input. At the first thing it is not written for (any decoding error, a
varint wider than 64 bits, an offset beyond int64, a header key that is not valid UTF-8) it undoes the
batch's (or chunk's) records and returns -1, and the caller hands them to kdump's own record decoder instead
(:meth:`add_record` per record). So on damaged data the result is the pure path's by construction, and
the checks below only need to be safe (every byte read is bounds-checked), not to name the error.
``tests/test_spark_arrow.py`` compares this class with the pure builder on the corpus and fuzzed input.
"""

from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.mem cimport PyMem_Free
from libc.stdint cimport int32_t, int64_t, INT64_MAX, INT64_MIN

from kdump._bytebuf cimport ByteBuf as GBuf, put as gb_put, reserve as gb_reserve  # compile-time only
from kdump.format._plain cimport PlainMessage, plain_timestamp_type, read_plain  # compile-time only
from kdump.format._varint cimport VI_OK, read_field  # compile-time only
from kdump.format.limits import MAX_RECORD_HEADERS

cdef int64_t US_LIMIT = INT64_MAX // 1000  # |ms| above this has no int64 microsecond value
cdef Py_ssize_t BINARY_LIMIT = 2147483647  # Arrow binary offsets are int32


# Fixed-width values appended in the machine's byte order (Arrow's, on the little-endian machines Spark runs on);
# a memcpy of a constant size compiles to one store.
cdef inline int gb_i64(GBuf *b, int64_t v) except -1:
    return gb_put(b, &v, 8)


cdef inline int gb_i32(GBuf *b, int32_t v) except -1:
    return gb_put(b, &v, 4)


cdef inline int gb_u8(GBuf *b, unsigned char v) except -1:
    return gb_put(b, &v, 1)


cdef inline bint read_varint(const unsigned char *p, Py_ssize_t *ppos, Py_ssize_t end, int max_bytes,
                             int64_t *out) noexcept nogil:
    """Zig-zag varint of at most ``max_bytes`` (<= 9, so it fits in 63 bits) ending before ``end``: False
    (nothing read) when it does not, and the caller hands the batch to kdump's own decoder."""
    return read_field(p, ppos, end, max_bytes, out) == VI_OK


cdef bint utf8_valid(const unsigned char *s, Py_ssize_t n) noexcept nogil:
    """Strict UTF-8 (no overlongs, no surrogates, at most U+10FFFF): what Java decodes without replacing."""
    cdef Py_ssize_t i = 0, k, more
    cdef unsigned char c, lo, hi
    while i < n:
        c = s[i]
        if c < 0x80:
            i += 1
            continue
        # a lead byte: how many continuation bytes follow, and the range of the first of them (narrower than
        # 0x80-0xBF after E0 and F0, which would be overlong, after ED, a surrogate, and after F4, above U+10FFFF)
        if c < 0xC2 or c > 0xF4:
            return False
        more = 1 if c < 0xE0 else (2 if c < 0xF0 else 3)
        lo = 0xA0 if c == 0xE0 else (0x90 if c == 0xF0 else 0x80)
        hi = 0x9F if c == 0xED else (0x8F if c == 0xF4 else 0xBF)
        if i + more >= n or not lo <= s[i + 1] <= hi:
            return False
        for k in range(i + 2, i + more + 1):
            if (s[k] & 0xC0) != 0x80:
                return False
        i += more + 1
    return True


cdef class _Owned:
    """Memory taken over from a builder buffer, exposed through the buffer protocol (so that
    ``pyarrow.py_buffer`` wraps it without a copy) and freed with the last reference."""

    cdef char *data
    cdef Py_ssize_t size

    def __dealloc__(self):
        PyMem_Free(self.data)

    def __getbuffer__(self, Py_buffer *view, int flags):
        view.buf = self.data
        view.obj = self
        view.len = self.size
        view.readonly = 1
        view.itemsize = 1
        view.format = NULL
        view.ndim = 1
        view.shape = NULL
        view.strides = NULL
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer *view):
        pass


cdef enum:
    NBUF = 16

# Indexes of the growable buffers.
cdef enum:
    B_OFF = 0
    B_TS = 1
    B_TS_VALID = 2
    B_KEY_OFF = 3
    B_KEY_DATA = 4
    B_KEY_VALID = 5
    B_VAL_OFF = 6
    B_VAL_DATA = 7
    B_VAL_VALID = 8
    B_H_LIST_OFF = 9
    B_H_LIST_VALID = 10
    B_H_KEY_OFF = 11
    B_H_KEY_DATA = 12
    B_H_VAL_OFF = 13
    B_H_VAL_DATA = 14
    B_H_VAL_VALID = 15


cdef class ColumnBuilder:
    """Accumulates the per-record columns (``offset``, ``timestamp``, ``key``, ``value``, ``headers``) of
    any number of batches until :meth:`finish`. Only the wanted columns are built."""

    cdef GBuf bufs[NBUF]
    cdef Py_ssize_t last_cap[NBUF]  # capacities before the last finish(): the next batch's likely needs
    cdef public bint want_key, want_value, want_headers, want_offset, want_timestamp
    cdef public Py_ssize_t rows
    cdef public Py_ssize_t resume_at  # after add_v2 of a chunk: where the next chunk starts (-1: none)
    cdef public int64_t last_offset  # after add_v2: the offset of the last record it added
    cdef public Py_ssize_t first_at  # after add_plain: where the first message it added starts (-1: none added)
    cdef Py_ssize_t ts_nulls, key_nulls, val_nulls, hdr_nulls, hval_nulls, n_headers

    def __cinit__(self, want_key=True, want_value=True, want_headers=False, want_offset=True,
                  want_timestamp=True):
        cdef int k
        for k in range(NBUF):
            self.bufs[k].data = NULL
            self.bufs[k].len = 0
            self.bufs[k].cap = 0
            self.last_cap[k] = 0
        self.want_key = want_key
        self.want_value = want_value
        self.want_headers = want_headers
        self.want_offset = want_offset
        self.want_timestamp = want_timestamp
        self._reset()

    def __dealloc__(self):
        cdef int k
        for k in range(NBUF):
            PyMem_Free(self.bufs[k].data)

    cdef void _reset(self):
        cdef int k
        for k in range(NBUF):
            self.bufs[k].len = 0
            if self.bufs[k].data == NULL and self.last_cap[k]:
                gb_reserve(&self.bufs[k], self.last_cap[k])
        self.rows = 0
        self.ts_nulls = self.key_nulls = self.val_nulls = self.hdr_nulls = self.hval_nulls = 0
        self.n_headers = 0
        gb_i32(&self.bufs[B_KEY_OFF], 0)
        gb_i32(&self.bufs[B_VAL_OFF], 0)
        gb_i32(&self.bufs[B_H_LIST_OFF], 0)
        gb_i32(&self.bufs[B_H_KEY_OFF], 0)
        gb_i32(&self.bufs[B_H_VAL_OFF], 0)

    @property
    def nbytes(self):
        """Bytes of variable-length data held (keys, values, headers): what the 2 GiB Arrow limit counts."""
        return self.bufs[B_KEY_DATA].len + self.bufs[B_VAL_DATA].len + self.bufs[B_H_KEY_DATA].len \
            + self.bufs[B_H_VAL_DATA].len

    # --- records ---------------------------------------------------------------------------------
    def add_v2(self, buf, Py_ssize_t start, Py_ssize_t end, Py_ssize_t count, base_offset, base_timestamp,
               append_time, Py_ssize_t first=0, Py_ssize_t stop=-1, Py_ssize_t at=-1):
        """Decode ``count`` records from ``buf[start:end]``; the number added, or -1 (nothing added) when
        the batch is not plainly well formed.

        In chunks (memory bounded by the chunk, whatever count a batch declares): records ``first`` up to
        ``stop`` (-1: ``count``), starting at byte ``at`` (-1: ``start``) where the chunk before ended;
        ``resume_at`` is then where the next chunk starts, -1 after the chunk reaching ``count`` (which also
        checks that the records fill ``buf[start:end]`` exactly), as ``kdump.format.v2.parse_records``."""
        cdef Py_buffer view
        cdef int64_t c_base_off, c_base_ts, c_append = 0
        cdef bint use_append = append_time is not None
        try:
            c_base_off = base_offset
            c_base_ts = base_timestamp
            if use_append:
                c_append = append_time
        except (OverflowError, TypeError):
            return -1
        if stop < 0 or stop > count:
            stop = count
        if at < 0:
            at = start
        if count < 0 or not (0 <= start <= at <= end) or not (0 <= first <= stop):
            return -1
        PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
        try:
            if end > view.len:
                return -1
            return self._decode(<const unsigned char *>view.buf, at, end, count, first, stop, c_base_off,
                                c_base_ts, use_append, c_append)
        finally:
            PyBuffer_Release(&view)

    cdef Py_ssize_t _decode(self, const unsigned char *p, Py_ssize_t start, Py_ssize_t end, Py_ssize_t count,
                            Py_ssize_t first, Py_ssize_t stop, int64_t base_off, int64_t base_ts, bint use_append,
                            int64_t append_ts) except -2:
        cdef Py_ssize_t saved[NBUF]
        cdef Py_ssize_t saved_rows = self.rows, s_ts = self.ts_nulls, s_k = self.key_nulls
        cdef Py_ssize_t s_v = self.val_nulls, s_h = self.hdr_nulls, s_hv = self.hval_nulls, s_n = self.n_headers
        cdef int k
        for k in range(NBUF):
            saved[k] = self.bufs[k].len
        if self._decode_records(p, start, end, count, first, stop, base_off, base_ts, use_append, append_ts):
            return stop - first
        for k in range(NBUF):
            self.bufs[k].len = saved[k]
        self.rows = saved_rows
        self.ts_nulls, self.key_nulls, self.val_nulls = s_ts, s_k, s_v
        self.hdr_nulls, self.hval_nulls, self.n_headers = s_h, s_hv, s_n
        return -1

    cdef bint _decode_records(self, const unsigned char *p, Py_ssize_t start, Py_ssize_t end, Py_ssize_t count,
                              Py_ssize_t first, Py_ssize_t stop, int64_t base_off, int64_t base_ts, bint use_append,
                              int64_t append_ts) except -1:
        """True when records ``first`` to ``stop`` decoded from ``start`` on and, if ``stop`` is ``count``,
        exactly filled ``[start, end)``."""
        cdef Py_ssize_t pos = start, body_end, i, h
        cdef int64_t length, ts_delta, off_delta, nheaders, hk, hv, ts, offset = 0
        cdef bint want_key = self.want_key, want_value = self.want_value, want_headers = self.want_headers
        cdef bint want_offset = self.want_offset, want_ts = self.want_timestamp
        cdef GBuf *bufs = self.bufs
        for i in range(first, stop):
            if not read_varint(p, &pos, end, 5, &length):
                return False
            if length < 1 or length > end - pos:
                return False
            body_end = pos + length
            pos += 1  # attributes
            if not read_varint(p, &pos, body_end, 9, &ts_delta):
                return False  # a 10-byte varlong: the pure path decides
            if not read_varint(p, &pos, body_end, 5, &off_delta):
                return False
            if not self._binary(p, &pos, body_end, want_key, B_KEY_OFF, B_KEY_DATA, B_KEY_VALID, &self.key_nulls):
                return False
            if not self._binary(p, &pos, body_end, want_value, B_VAL_OFF, B_VAL_DATA, B_VAL_VALID, &self.val_nulls):
                return False
            if not read_varint(p, &pos, body_end, 5, &nheaders):
                return False
            if nheaders < 0 or nheaders > body_end - pos or nheaders > MAX_RECORD_HEADERS:
                return False  # the pure twin reports it (above the limit: refused, kdump.format.limits)
            for h in range(nheaders):
                if not read_varint(p, &pos, body_end, 5, &hk):
                    return False
                if hk < 0 or hk > body_end - pos:
                    return False
                if want_headers:
                    if not utf8_valid(p + pos, hk):
                        return False
                    gb_put(&bufs[B_H_KEY_DATA], p + pos, hk)
                    gb_i32(&bufs[B_H_KEY_OFF], <int32_t>bufs[B_H_KEY_DATA].len)
                pos += hk
                if not read_varint(p, &pos, body_end, 5, &hv):
                    return False
                if hv >= 0:
                    if hv > body_end - pos:
                        return False
                    if want_headers:
                        gb_put(&bufs[B_H_VAL_DATA], p + pos, hv)
                        gb_u8(&bufs[B_H_VAL_VALID], 1)
                    pos += hv
                elif want_headers:
                    gb_u8(&bufs[B_H_VAL_VALID], 0)
                    self.hval_nulls += 1
                if want_headers:
                    gb_i32(&bufs[B_H_VAL_OFF], <int32_t>bufs[B_H_VAL_DATA].len)
            if want_headers:
                if bufs[B_H_KEY_DATA].len > BINARY_LIMIT or bufs[B_H_VAL_DATA].len > BINARY_LIMIT:
                    return False
                self.n_headers += nheaders
                gb_i32(&bufs[B_H_LIST_OFF], <int32_t>self.n_headers)
                if nheaders == 0:
                    gb_u8(&bufs[B_H_LIST_VALID], 0)  # Spark's Kafka source: null, not an empty array
                    self.hdr_nulls += 1
                else:
                    gb_u8(&bufs[B_H_LIST_VALID], 1)
            if pos != body_end:
                return False
            if off_delta > 0 and base_off > INT64_MAX - off_delta:
                return False
            if off_delta < 0 and base_off < INT64_MIN - off_delta:
                return False
            offset = base_off + off_delta
            if want_offset:
                gb_i64(&bufs[B_OFF], offset)
            if want_ts:
                if use_append:
                    ts = append_ts
                else:
                    if (ts_delta > 0 and base_ts > INT64_MAX - ts_delta) or \
                            (ts_delta < 0 and base_ts < INT64_MIN - ts_delta):
                        return False
                    ts = base_ts + ts_delta
                self._add_timestamp(ts, -US_LIMIT <= ts <= US_LIMIT)
            self.rows += 1
        if stop > first:
            self.last_offset = offset
        if stop < count:
            self.resume_at = pos
            return True
        self.resume_at = -1
        return pos == end

    cdef inline int _add_timestamp(self, int64_t ms, bint valid) except -1:
        """A record's timestamp in microseconds, or null when ``ms`` has no int64 microsecond value (not valid)."""
        if valid:
            gb_i64(&self.bufs[B_TS], ms * 1000)
            gb_u8(&self.bufs[B_TS_VALID], 1)
        else:
            gb_i64(&self.bufs[B_TS], 0)
            gb_u8(&self.bufs[B_TS_VALID], 0)
            self.ts_nulls += 1
        return 0

    cdef inline bint _binary(self, const unsigned char *p, Py_ssize_t *ppos, Py_ssize_t body_end, bint want,
                             int off_i, int data_i, int valid_i, Py_ssize_t *nulls) except -1:
        """A record's key or value (varint length, -1 = null, then the bytes) into buffers ``*_i``."""
        cdef int64_t n
        cdef Py_ssize_t pos
        cdef GBuf *bufs = self.bufs
        if not read_varint(p, ppos, body_end, 5, &n):
            return False
        pos = ppos[0]
        if n >= 0:
            if n > body_end - pos:
                return False
            if want:
                if bufs[data_i].len + n > BINARY_LIMIT:
                    return False
                gb_put(&bufs[data_i], p + pos, n)
                gb_u8(&bufs[valid_i], 1)
            ppos[0] = pos + n
        elif want:
            gb_u8(&bufs[valid_i], 0)
            nulls[0] += 1
        if want:
            gb_i32(&bufs[off_i], <int32_t>bufs[data_i].len)
        return True

    def add_plain(self, data, Py_ssize_t at, Py_ssize_t count, lo, hi, Py_ssize_t max_rows, Py_ssize_t max_bytes,
                  bint one_each):
        """Plain magic 0/1 messages (a :class:`~kdump.format.legacy.LegacyRun`'s, each its own record) from byte
        ``at`` of ``data``, at most ``count``: those whose offset is in ``[lo, hi)`` (None: no bound) added as
        :meth:`add_record` adds them, up to the first that fills the builder (``max_rows`` rows or ``max_bytes``
        bytes), before the first whose magic or timestamp type is not the first added one's, or after the first
        added with ``one_each``. The messages walked; ``resume_at`` is where the next starts, ``first_at`` where
        the first added starts (-1: none). The same as :meth:`PyColumnBuilder.add_plain
        <kdump.spark.builder.PyColumnBuilder.add_plain>`."""
        cdef Py_buffer view
        cdef bint has_lo = lo is not None, has_hi = hi is not None
        cdef int64_t c_lo = lo if has_lo else 0, c_hi = hi if has_hi else 0
        PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
        try:
            return self._plain(<const unsigned char *>view.buf, view.len, at, count, has_lo, c_lo, has_hi, c_hi,
                               max_rows, max_bytes, one_each)
        finally:
            PyBuffer_Release(&view)

    cdef Py_ssize_t _plain(self, const unsigned char *p, Py_ssize_t end, Py_ssize_t pos, Py_ssize_t count,
                           bint has_lo, int64_t lo, bint has_hi, int64_t hi, Py_ssize_t max_rows,
                           Py_ssize_t max_bytes, bint one_each) except -1:
        cdef PlainMessage m
        cdef Py_ssize_t k = 0, stop
        cdef int magic = -1, ts_type = -2
        cdef bint valid
        cdef GBuf *bufs = self.bufs
        self.first_at = -1
        while k < count:
            stop = read_plain(p, pos, end, &m)
            if stop < 0:
                break  # (not in a run: its walk read every message of it)
            if (has_lo and m.offset < lo) or (has_hi and m.offset >= hi):
                k += 1
                pos = stop
                continue
            if self.first_at < 0:
                self.first_at, magic, ts_type = pos, m.magic, plain_timestamp_type(&m)
            elif m.magic != magic or plain_timestamp_type(&m) != ts_type:
                break  # the batch-level columns change here
            if self.want_offset:
                gb_i64(&bufs[B_OFF], m.offset)
            if self.want_timestamp:
                valid = -US_LIMIT <= m.timestamp <= US_LIMIT
                self._add_timestamp(m.timestamp if valid else 0, valid)
            if self.want_key:
                self._plain_binary(p, m.key_pos, m.key_len, B_KEY_OFF, B_KEY_DATA, B_KEY_VALID, &self.key_nulls)
            if self.want_value:
                self._plain_binary(p, m.value_pos, m.value_len, B_VAL_OFF, B_VAL_DATA, B_VAL_VALID,
                                   &self.val_nulls)
            if self.want_headers:  # none: null, as add_record has it
                gb_i32(&bufs[B_H_LIST_OFF], <int32_t>self.n_headers)
                gb_u8(&bufs[B_H_LIST_VALID], 0)
                self.hdr_nulls += 1
            self.rows += 1
            self.last_offset = m.offset
            k += 1
            pos = stop
            if one_each or self.rows >= max_rows or bufs[B_KEY_DATA].len + bufs[B_VAL_DATA].len \
                    + bufs[B_H_KEY_DATA].len + bufs[B_H_VAL_DATA].len >= max_bytes:  # (nbytes)
                break
        self.resume_at = pos
        return k

    cdef inline int _plain_binary(self, const unsigned char *p, Py_ssize_t at, int32_t n, int off_i, int data_i,
                                  int valid_i, Py_ssize_t *nulls) except -1:
        """A message's key or value (``n`` bytes at ``at``, -1: null), as :meth:`_add_binary` adds it."""
        if n < 0:
            gb_u8(&self.bufs[valid_i], 0)
            nulls[0] += 1
        else:
            gb_put(&self.bufs[data_i], p + at, n)
            gb_u8(&self.bufs[valid_i], 1)
        gb_i32(&self.bufs[off_i], <int32_t>self.bufs[data_i].len)
        return 0

    def add_record(self, offset, timestamp_ms, key, value, headers):
        """One record given as Python values (the fallback and legacy path): ``headers`` a sequence of
        ``(key str, value bytes or None)`` pairs, or empty."""
        cdef GBuf *bufs = self.bufs
        cdef bytes kb, hkb
        if self.want_offset:
            gb_i64(&bufs[B_OFF], offset)
        if self.want_timestamp:
            valid = -US_LIMIT <= timestamp_ms <= US_LIMIT
            self._add_timestamp(timestamp_ms if valid else 0, valid)
        if self.want_key:
            self._add_binary(key, B_KEY_OFF, B_KEY_DATA, B_KEY_VALID, 0)
        if self.want_value:
            self._add_binary(value, B_VAL_OFF, B_VAL_DATA, B_VAL_VALID, 1)
        if self.want_headers:
            for hk, hv in headers:
                hkb = hk.encode("utf-8")
                gb_put(&bufs[B_H_KEY_DATA], <const char *>hkb, len(hkb))
                gb_i32(&bufs[B_H_KEY_OFF], <int32_t>bufs[B_H_KEY_DATA].len)
                self._add_binary(hv, B_H_VAL_OFF, B_H_VAL_DATA, B_H_VAL_VALID, 2)
            self.n_headers += len(headers)
            gb_i32(&bufs[B_H_LIST_OFF], <int32_t>self.n_headers)
            if len(headers):
                gb_u8(&bufs[B_H_LIST_VALID], 1)
            else:
                gb_u8(&bufs[B_H_LIST_VALID], 0)
                self.hdr_nulls += 1
        self.rows += 1

    cdef int _add_binary(self, data, int off_i, int data_i, int valid_i, int which) except -1:
        cdef Py_buffer view
        if data is None:
            gb_u8(&self.bufs[valid_i], 0)
            if which == 0:
                self.key_nulls += 1
            elif which == 1:
                self.val_nulls += 1
            else:
                self.hval_nulls += 1
        else:
            PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
            try:
                gb_put(&self.bufs[data_i], view.buf, view.len)
            finally:
                PyBuffer_Release(&view)
            gb_u8(&self.bufs[valid_i], 1)
        gb_i32(&self.bufs[off_i], <int32_t>self.bufs[data_i].len)
        return 0

    # --- output ----------------------------------------------------------------------------------
    cdef object _bytes(self, int k):
        """Buffer ``k``'s bytes, handed over without a copy (the builder starts a new one, of the same
        capacity, on its next use)."""
        if self.bufs[k].data == NULL:
            return b""  # never written (e.g. no key was non-null): pyarrow needs a real pointer
        cdef _Owned owned = _Owned.__new__(_Owned)
        owned.data = self.bufs[k].data
        owned.size = self.bufs[k].len
        self.bufs[k].data = NULL
        self.bufs[k].len = 0
        self.bufs[k].cap = 0
        return owned

    cdef object _flags(self, int k, Py_ssize_t nulls):
        """Buffer ``k`` of validity flags, handed over only when there is a null (else Arrow needs no bitmap,
        and the buffer stays for the next use)."""
        return self._bytes(k) if nulls else None

    def finish(self):
        """The built columns as ``{name: pyarrow.Array}`` (wanted ones only); the builder is then empty."""
        import pyarrow as pa
        from kdump.spark import record_arrays as arrays
        cdef int k
        for k in range(NBUF):
            self.last_cap[k] = self.bufs[k].cap
        n = self.rows
        out = {}
        if self.want_offset:
            out["offset"] = arrays.int64_array(n, self._bytes(B_OFF))
        if self.want_timestamp:
            out["timestamp"] = arrays.timestamp_array(n, self._bytes(B_TS), self._flags(B_TS_VALID, self.ts_nulls),
                                                      self.ts_nulls)
        if self.want_key:
            out["key"] = arrays.binary_array(n, self._bytes(B_KEY_OFF), self._bytes(B_KEY_DATA),
                                             self._flags(B_KEY_VALID, self.key_nulls), self.key_nulls)
        if self.want_value:
            out["value"] = arrays.binary_array(n, self._bytes(B_VAL_OFF), self._bytes(B_VAL_DATA),
                                               self._flags(B_VAL_VALID, self.val_nulls), self.val_nulls)
        if self.want_headers:
            m = self.n_headers
            keys = arrays.binary_array(m, self._bytes(B_H_KEY_OFF), self._bytes(B_H_KEY_DATA), None, 0, pa.string())
            values = arrays.binary_array(m, self._bytes(B_H_VAL_OFF), self._bytes(B_H_VAL_DATA),
                                         self._flags(B_H_VAL_VALID, self.hval_nulls), self.hval_nulls)
            out["headers"] = arrays.headers_array(n, self._bytes(B_H_LIST_OFF),
                                                  self._flags(B_H_LIST_VALID, self.hdr_nulls), self.hdr_nulls,
                                                  keys, values)
        self._reset()
        return out
