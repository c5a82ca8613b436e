# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twin of :func:`kdump.format.legacy.inner_columns_py`: the walk of a decompressed magic 0/1
inner message set into :class:`~kdump.format.columns.RecordColumns` (spec §3.2-3.3).

Same contract, to the value: the same columns (stored inner offsets and timestamps, key/value positions,
sizes, CRCs, magics, CRC validity), the same place to resume, the same error. Errors are rare, so they
are not rebuilt here: at the first message the fast walk cannot take (too small, unparseable, itself
compressed) the pure twin walks that one message and its error is used as it is, which makes the
messages identical by construction. ``tests/test_speedups.py`` checks the whole contract differentially.

Every byte read is preceded by a bounds check against ``end = len(data)`` (the message's own ``stop``,
itself checked ``<= end``, inside a message), which is what makes the directives above safe.
"""

from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t, int32_t, uint64_t

from kdump._bytebuf cimport ByteBuf, free_buffer  # compile-time only

from kdump.format._records import fast_buffer
from kdump.format.columns import InnerSummary, RecordColumns, RunKeys  # leaf module (no kdump import back here)

from ._keyentry cimport put_key_entry  # compile-time only
from ._plain cimport *  # compile-time only (inline functions, and the PLAIN_ constants exported below)
from ._zcrc cimport crc32_setup, zlib_crc32

crc32_setup()

# The pure twins (handed over by kdump._backend.pick: kdump.format.legacy imports this module).
inner_columns_py = None
inner_summary_py = None
run_keys_py = None
crc32_py = None


def crc32(data):
    """zlib's ``crc32(data)`` (kdump/format/_zcrc.pxd: folded by carry-less multiplication where the processor
    has it, several times zlib's speed on a wrapper); the pure twin is ``zlib.crc32``."""
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        return zlib_crc32(<const unsigned char *>view.buf, view.len)
    finally:
        PyBuffer_Release(&view)

cdef enum:
    LOG_OVERHEAD = 12          # offset int64 + size int32
    CRC_START = 4              # the CRC covers magic .. end

# The offsets and sizes this C code reads messages with, for tests/test_format_declare.py to hold them equal to the
# declarations in kdump/format/layout.py (C constants cannot be derived from them at compile time).
PLAIN_LAYOUT = {
    "LOG_OVERHEAD": LOG_OVERHEAD, "CRC_START": CRC_START, "SIZE_AT": PLAIN_SIZE_AT, "BODY_AT": PLAIN_OVERHEAD,
    "MAGIC_AT": PLAIN_MAGIC_AT, "ATTRIBUTES_AT": PLAIN_ATTRIBUTES_AT, "TIMESTAMP_AT": PLAIN_TIMESTAMP_AT,
    "V0_KEY_LENGTH_AT": PLAIN_V0_KEY_LENGTH_AT, "V1_KEY_LENGTH_AT": PLAIN_V1_KEY_LENGTH_AT,
    "V0_MIN_SIZE": PLAIN_V0_MIN_SIZE, "V1_MIN_SIZE": PLAIN_V1_MIN_SIZE, "LENGTH_SIZE": PLAIN_LENGTH_SIZE,
    "CODEC_MASK": PLAIN_CODEC_MASK, "TIMESTAMP_TYPE_MASK": PLAIN_TIMESTAMP_TYPE_MASK,
}

# What _walk makes of the messages: their columns, an InnerSummary, or RunKeys.
cdef enum:
    COLUMNS = 0
    SUMMARY = 1
    KEYS = 2


cdef bint _fast_args(data, start_at, max_count, first_index):
    return (fast_buffer(data) and type(start_at) is int and type(first_index) is int
            and (max_count is None or type(max_count) is int))


def inner_columns(data, pos0, start_at=0, max_count=None, first_index=0):
    """See :func:`kdump.format.legacy.inner_columns_py`."""
    if not _fast_args(data, start_at, max_count, first_index):
        return inner_columns_py(data, pos0, start_at, max_count, first_index)
    return _walk_view(data, pos0, start_at, max_count, first_index, COLUMNS, 0, True)


def inner_summary(data, pos0, magic, start_at=0, max_count=None, first_index=0, why=True):
    """See :func:`kdump.format.legacy.inner_summary_py`: the same walk, summarized without the messages."""
    if not _fast_args(data, start_at, max_count, first_index) or type(magic) is not int:
        return inner_summary_py(data, pos0, magic, start_at, max_count, first_index, why)
    return _walk_view(data, pos0, start_at, max_count, first_index, SUMMARY, magic, why)


def run_keys(data, pos0, count):
    """See :func:`kdump.format.legacy.run_keys_py`: the same walk, the keys' digests without the messages."""
    if not _fast_args(data, 0, count, 0) or type(count) is not int:
        return run_keys_py(data, pos0, count)
    return _walk_view(data, pos0, 0, count, 0, KEYS, 0, False)


cdef object _walk_view(data, pos0, start_at, max_count, first_index, int mode, int expect_magic, bint why):
    cdef Py_buffer view
    PyObject_GetBuffer(data, &view, PyBUF_SIMPLE)
    try:
        return _walk(data, <const unsigned char *>view.buf, view.len, pos0, start_at, max_count, first_index,
                     mode, expect_magic, why)
    finally:
        PyBuffer_Release(&view)


cdef object _pure(object data, object pos0, object start_at, object max_count, object first_index, int mode,
                  int expect_magic, bint why):
    """The pure twin of the walk ``mode`` asks for (what raises the errors, and takes what the fast walk does not)."""
    if mode == SUMMARY:
        return inner_summary_py(data, pos0, expect_magic, start_at, max_count, first_index, why)
    if mode == KEYS:
        return run_keys_py(data, pos0, max_count)
    return inner_columns_py(data, pos0, start_at, max_count, first_index)


cdef object _walk(object data, const unsigned char *p, Py_ssize_t end, object pos0, object start_at_obj,
                  object max_count_obj, object first_index, int mode, int expect_magic, bint why):
    if start_at_obj < 0 or start_at_obj > end:
        return _pure(data, pos0, start_at_obj, max_count_obj, first_index, mode, expect_magic, why)
    cdef bint summarize = mode == SUMMARY
    cdef Py_ssize_t start_at = start_at_obj
    cdef Py_ssize_t max_count = -1 if max_count_obj is None else max_count_obj
    if max_count_obj is not None and max_count_obj < 0:
        max_count = -1  # as in the pure walk, a count never equals a negative limit
    cols = RecordColumns(data)
    cdef list offsets = [], timestamps = cols.timestamps, attributes = cols.attributes, sizes = cols.sizes
    cdef list headers = cols.headers, key_pos = cols.key_pos, key_len = cols.key_len
    cdef list value_pos = cols.value_pos, value_len = cols.value_len
    cdef list crcs = [], magics = [], valid = []
    cols.crcs, cols.magics, cols.valid = crcs, magics, valid
    no_headers = ()
    cdef PlainMessage m
    cdef Py_ssize_t pos = start_at, start, stop, kp, vp, k = 0
    cdef int32_t size, klen, vlen
    cdef int64_t ts
    cdef uint32_t crc
    cdef int magic, attrs
    # the summary, kept in C while the messages are walked
    cdef int64_t off, prev_off = 0, first_off = 0, min_ts = 0, max_ts = 0
    cdef Py_ssize_t decreasing_at = -1, magic_at = -1, crc_at = -1, attributes_at = -1, last_start = 0
    cdef int64_t decreasing_off = 0, decreasing_prev = 0
    cdef int mismatched = 0
    cdef uint32_t bad_stored = 0, bad_computed = 0, computed
    cdef bint has_ts = False
    # the keys (KEYS), kept in C too
    cdef ByteBuf entries
    entries.data = NULL
    entries.len = entries.cap = 0
    cdef Py_ssize_t keyless = 0, tombstones = 0, record_bytes = 0, magic0 = 0
    cdef int64_t min_stated = 0, max_stated = 0
    cdef bint has_stated = False
    error = None
    resume = None
    while end - pos >= LOG_OVERHEAD:
        if k == max_count:
            resume = pos
            break
        # The fast walk: an uncompressed magic 0/1 message whose key and value fit (else the pure twin says why).
        stop = read_plain(p, pos, end, &m)
        if stop == PLAIN_TRUNCATED:
            break  # Kafka ends the inner set silently at a truncated last entry
        if stop < 0:
            if why or k == 0:  # (the error of a first message is raised: see below)
                error = _error_at(data, pos0, pos, first_index + k)
            break
        start = pos + LOG_OVERHEAD
        size, magic, attrs, ts, crc = m.size, m.magic, m.attributes, m.timestamp, m.crc
        kp, klen, vp, vlen = m.key_pos, m.key_len, m.value_pos, m.value_len
        if mode == KEYS:
            record_bytes += LOG_OVERHEAD + size
            magic0 += magic == 0
            if ts >= 0:
                _widen(ts, &has_stated, &min_stated, &max_stated)
            if klen < 0:
                keyless += 1
            else:
                tombstones += vlen < 0
                try:
                    put_key_entry(&entries, p + kp, klen, <uint64_t>(LOG_OVERHEAD + size) << 1 | (vlen < 0))
                except BaseException:
                    free_buffer(&entries)
                    raise
            k += 1
            pos = stop
            continue
        if summarize:
            off = m.offset
            if k == 0:
                first_off = off
            elif decreasing_at < 0 and off <= prev_off:
                decreasing_at, decreasing_off, decreasing_prev = k, off, prev_off
            prev_off = off
            if magic != expect_magic and magic_at < 0:
                magic_at, mismatched = k, magic
            if crc_at < 0:
                computed = <uint32_t>zlib_crc32(p + start + CRC_START, size - CRC_START)
                if computed != crc:
                    crc_at, bad_stored, bad_computed = k, crc, computed
            if magic == 1:
                _widen(ts, &has_ts, &min_ts, &max_ts)
            if attrs != 0 and attributes_at < 0:
                attributes_at = k
            last_start = pos
            k += 1
            pos = stop
            continue
        offsets.append(m.offset)
        timestamps.append(ts)
        attributes.append(attrs)
        key_pos.append(kp)
        key_len.append(klen)
        value_pos.append(vp)
        value_len.append(vlen)
        headers.append(no_headers)
        sizes.append(LOG_OVERHEAD + size)
        crcs.append(crc)
        magics.append(magic)
        valid.append(zlib_crc32(p + start + CRC_START, size - CRC_START) == crc)
        k += 1
        pos = stop
    if k == 0 and start_at == 0:
        free_buffer(&entries)
        return _pure(data, pos0, start_at_obj, max_count_obj, first_index, mode, expect_magic, why)  # raises its error
    if mode == KEYS:
        keys = RunKeys()
        keys.count, keys.error, keys.resume_at = k, error, resume
        keys.record_bytes, keys.keyless, keys.tombstones, keys.magic0 = record_bytes, keyless, tombstones, magic0
        if has_stated:
            keys.min_timestamp, keys.max_timestamp = min_stated, max_stated
        try:
            keys.entries = PyBytes_FromStringAndSize(entries.data, entries.len) if entries.len else b""
        finally:
            free_buffer(&entries)
        return keys
    if summarize:
        summary = InnerSummary()
        summary.count, summary.error, summary.resume, summary.end = k, error, resume, pos
        if k:
            summary.first_offset, summary.last_offset = first_off, prev_off
            summary.attributes_at, summary.last_start = attributes_at, last_start
            if decreasing_at >= 0:
                summary.decreasing_at, summary.decreasing_offsets = decreasing_at, (decreasing_off, decreasing_prev)
            if magic_at >= 0:
                summary.magic_mismatch_at, summary.mismatched_magic = magic_at, mismatched
            if crc_at >= 0:
                summary.bad_crc_at, summary.bad_crc = crc_at, (bad_stored, bad_computed)
            if has_ts:
                summary.min_timestamp, summary.max_timestamp = min_ts, max_ts
        return summary
    cols.count = k
    cols.error = error
    return cols, offsets, resume


cdef inline void _widen(int64_t ts, bint *seen, int64_t *lo, int64_t *hi) noexcept nogil:
    """The range ``[lo, hi]`` widened to hold ``ts`` (the first one sets it: ``seen``)."""
    if not seen[0]:
        lo[0] = hi[0] = ts
        seen[0] = True
    elif ts < lo[0]:
        lo[0] = ts
    elif ts > hi[0]:
        hi[0] = ts


cdef object _error_at(object data, object pos0, Py_ssize_t pos, Py_ssize_t index):
    """The pure twin's error for the message at ``pos`` (the ``index``-th of the walk)."""
    return inner_columns_py(data, pos0, pos, 1, index)[0].error
