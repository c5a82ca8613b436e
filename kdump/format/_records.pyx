# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twin of :func:`kdump.format.v2.parse_records_py` (magic-2 record decoding, spec §3.5).

Same contract, to the byte: the same :class:`~kdump.format.columns.RecordColumns` (same lists, same values),
the same validation and the same :class:`~kdump.errors.FormatError` (code and message) at the same
record index. ``tests/test_speedups.py`` checks that differentially.

The records are read through a raw pointer into the caller's buffer (no copy). Every byte read below is
preceded by an explicit bounds check (``pos < end``, ``pos < body_end`` with ``body_end <= end``, or
``pos < buflen``) and ``0 <= start <= end <= len(buf)`` is checked on entry, which is what makes the
``boundscheck=False`` / ``wraparound=False`` directives above safe (no Python-level indexing is done on
typed buffers anyway).

Integer semantics follow the pure path, which uses Python ints: 5-byte varints are not range-checked to
32 bits (35 significant bits, held exactly in ``int64_t``); a 10-byte varlong keeps its low 64 bits, as
Java's ``readVarlong`` does (a 10th byte above 1 does not make it a 70-bit number); ``base_offset + delta`` and
``base_timestamp + delta`` are computed in C only when the sum provably fits in ``int64_t`` and otherwise
with Python ints wrapped to a Java long (``layout.java_long``), as Kafka's long arithmetic and the pure path do. Inputs the fast path is not written for (other buffer types,
non-``int`` numbers, out-of-range ``start``/``end``) are handed to the pure function, so the results
are identical there by construction.
"""

from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint64_t, INT64_MAX, INT64_MIN

from kdump._bytebuf cimport ByteBuf, free_buffer, reserve  # compile-time only

from ._keyentry cimport put_key_entry  # compile-time only
from ._varint cimport VI_BIG, VI_OK, VI_TRUNCATED, read_field, read_raw

from kdump.errors import FormatError
from kdump.format.columns import RecordColumns, RecordKeys, RecordSummary  # leaf module (no kdump import back here)
from kdump.format.layout import java_long  # leaf module too
from kdump.format.limits import BYTES_PER_CHUNK, HEADERS_PER_CHUNK, MAX_RECORD_HEADERS, too_many_headers

# The pure twins, for the inputs the fast path is not written for. kdump.format.v2 imports this module
# (through kdump._backend), so they are handed over by kdump._backend.pick rather than imported from here.
parse_records_py = None
summarize_records_py = None
record_keys_py = None

# What _parse fills: the columns, a RecordSummary, or RecordKeys.
cdef enum:
    COLUMNS = 0
    SUMMARY = 1
    KEYS = 2


class _BeyondInt64(Exception):
    """A summary whose offsets or timestamps leave int64: the pure twin computes it with Python ints."""

cdef Py_ssize_t _SSIZE_MAX = <Py_ssize_t>(<size_t>-1 >> 1)


cdef inline bint _add_fits(int64_t a, int64_t b) noexcept nogil:
    """True when a + b does not overflow int64_t."""
    if b > 0:
        return a <= INT64_MAX - b
    return a >= INT64_MIN - b


cdef object _varint_error(int st, str what, Py_ssize_t i, int max_bytes):
    if st == VI_TRUNCATED:
        return FormatError("record-truncated", f"record {i}: {what} runs past the end of the batch")
    return FormatError("varint-too-long", f"record {i}: {what} is a varint longer than {max_bytes} bytes")


def fast_buffer(buf):
    """Whether the compiled walks take ``buf`` (else the pure twin does); for the other compiled modules."""
    return _fast_buffer(buf)


cdef bint _fast_buffer(object buf):
    """Buffers whose indexing (``buf[i]``) gives the i-th byte as an int, and which read as one C array."""
    t = type(buf)
    if t is bytes or t is bytearray:
        return True
    if t is memoryview:
        try:
            return buf.ndim == 1 and buf.format == "B" and buf.c_contiguous
        except ValueError:  # released: let the pure path fail (or not) exactly as it does
            return False
    return False


cdef bint _fast_args(buf, start, end, count, base_offset, base_timestamp, first, stop, at):
    """Inputs the fast path is written for (for the others the pure function decides, so results are
    identical)."""
    return (_fast_buffer(buf) and type(start) is int and type(end) is int and type(count) is int
            and type(base_offset) is int and type(base_timestamp) is int and type(first) is int
            and (stop is None or type(stop) is int) and (at is None or type(at) is int)
            and 0 <= start <= end <= len(buf) and (at is None or start <= at <= end)
            and 0 <= first <= _SSIZE_MAX and (stop is None or first <= stop <= _SSIZE_MAX))


def parse_records(buf, start, end, count, base_offset, base_timestamp, append_time, first=0, stop=None, at=None):
    """Decode ``count`` records from ``buf[start:end]``; see :func:`kdump.format.v2.parse_records_py`."""
    if not _fast_args(buf, start, end, count, base_offset, base_timestamp, first, stop, at):
        return parse_records_py(buf, start, end, count, base_offset, base_timestamp, append_time, first, stop, at)
    return _parse_view(buf, start, end, count, base_offset, base_timestamp, append_time, first, stop, at, COLUMNS)


def summarize_records(buf, start, end, count, base_offset, base_timestamp, append_time, first=0, stop=None,
                      at=None):
    """The :class:`RecordSummary` of the records :func:`parse_records` would decode (the same checks, the
    same error), without a Python object per record; see :func:`kdump.format.v2.summarize_records_py`."""
    if not _fast_args(buf, start, end, count, base_offset, base_timestamp, first, stop, at):
        return summarize_records_py(buf, start, end, count, base_offset, base_timestamp, append_time, first,
                                    stop, at)
    try:
        return _parse_view(buf, start, end, count, base_offset, base_timestamp, append_time, first, stop, at,
                           SUMMARY)
    except _BeyondInt64:
        return summarize_records_py(buf, start, end, count, base_offset, base_timestamp, append_time, first,
                                    stop, at)


def record_keys(buf, start, end, count, base_offset, base_timestamp, append_time, first=0, stop=None, at=None):
    """The :class:`RecordKeys` of the records :func:`parse_records` would decode (the same checks, the same
    error), without a Python object per record; see :func:`kdump.format.v2.record_keys_py`."""
    if not _fast_args(buf, start, end, count, base_offset, base_timestamp, first, stop, at):
        return record_keys_py(buf, start, end, count, base_offset, base_timestamp, append_time, first, stop, at)
    try:
        return _parse_view(buf, start, end, count, base_offset, base_timestamp, append_time, first, stop, at, KEYS)
    except _BeyondInt64:  # a record timestamp past a Java long: the pure twin wraps it as Java does
        return record_keys_py(buf, start, end, count, base_offset, base_timestamp, append_time, first, stop, at)


cdef object _parse_view(buf, start, end, count, base_offset, base_timestamp, append_time, first, stop, at,
                        int mode):
    cdef Py_buffer view
    PyObject_GetBuffer(buf, &view, PyBUF_SIMPLE)
    try:
        return _parse(buf, <const unsigned char *>view.buf, view.len, start, end, count, base_offset,
                      base_timestamp, append_time, first, stop, start if at is None else at, mode)
    finally:
        PyBuffer_Release(&view)


cdef object _parse(object buf, const unsigned char *p, Py_ssize_t buflen, Py_ssize_t start, Py_ssize_t end,
                   object count_obj, object base_offset, object base_timestamp, object append_time,
                   Py_ssize_t first, object stop, Py_ssize_t at, int mode):
    # Mirrors parse_records_py statement by statement; keep the two in step. In mode SUMMARY (KEYS) the same
    # walk and checks fill a RecordSummary (RecordKeys) as its ``of`` of the columns would, instead of the columns.
    cdef bint summarize = mode != COLUMNS  # no Python object per record
    cols = RecordColumns(buf) if mode == COLUMNS else RecordSummary() if mode == SUMMARY else RecordKeys()
    # the keys, kept in C while the records are walked
    cdef ByteBuf entries
    entries.data = NULL
    entries.len = entries.cap = 0
    cdef Py_ssize_t keyless = 0, tombstones = 0, record_bytes = 0
    cdef list offsets = None if summarize else cols.offsets
    cdef list timestamps = None if summarize else cols.timestamps
    cdef list attributes = None if summarize else cols.attributes
    cdef list key_pos = None if summarize else cols.key_pos
    cdef list key_len = None if summarize else cols.key_len
    cdef list value_pos = None if summarize else cols.value_pos
    cdef list value_len = None if summarize else cols.value_len
    cdef list headers = None if summarize else cols.headers
    cdef list sizes = None if summarize else cols.sizes
    # the summary, kept in C while the records are walked
    cdef int64_t last_off = 0
    cdef int64_t off, ts, first_off = 0, prev_off = 0, min_ts = 0, max_ts = 0
    cdef Py_ssize_t decreasing_at = -1, min_ts_at = -1, attr_at = -1
    cdef int64_t decreasing_off = 0, decreasing_prev = 0, gap_after = 0
    cdef bint has_gap = False
    # KEYS: the smallest and largest record timestamp that is not negative (RecordKeys.min_timestamp, max_timestamp)
    cdef int64_t stated_min = 0, stated_max = 0
    cdef bint stated = False
    cdef unsigned char first_attr = 0
    cdef tuple no_headers = ()
    cdef bint use_append_time = append_time is not None

    # The bases are exact ints (checked by the caller); the fast sums need them in int64_t.
    cdef bint off_small = -0x8000000000000000 <= base_offset <= 0x7FFFFFFFFFFFFFFF
    cdef bint ts_small = -0x8000000000000000 <= base_timestamp <= 0x7FFFFFFFFFFFFFFF
    cdef int64_t c_base_off = base_offset if off_small else 0
    cdef int64_t c_base_ts = base_timestamp if ts_small else 0

    cdef Py_ssize_t count
    cdef Py_ssize_t last
    cdef Py_ssize_t pos = at
    cdef Py_ssize_t i = first
    cdef Py_ssize_t rec_start, body_start, body_end, kpos, vpos, h
    cdef int64_t length, ts_delta, off_delta, klen, vlen, nheaders, hk, hv
    cdef uint64_t raw
    cdef int st
    cdef unsigned char b, attr
    cdef list hl
    cdef bint chunked
    cdef int64_t chunk_headers = 0, chunk_bytes = 0
    # the budgets of a chunk, read at each call (module globals: the tests make them small)
    cdef int64_t headers_budget = HEADERS_PER_CHUNK, bytes_budget = BYTES_PER_CHUNK
    try:
        if count_obj < 0:
            raise FormatError("record-count-invalid", f"invalid record count {count_obj}")
        # Every record takes at least one byte, so a count above _SSIZE_MAX can never be reached.
        count = _SSIZE_MAX if count_obj > _SSIZE_MAX else count_obj
        last = count if stop is None or stop > count else stop
        chunked = stop is not None  # a whole-batch read (columns()) is not cut
        while i < last:
            rec_start = pos
            if pos >= end:
                raise FormatError("record-truncated",
                                  f"record {i}: the batch ends before its record count ({count_obj}) is reached")
            b = p[pos]  # pos < end <= buflen
            if b < 0x80:
                length = (b >> 1) ^ -(b & 1)
                pos += 1
            else:
                st = read_raw(p, &pos, end, 5, &raw)
                if st != VI_OK:  # VI_BIG needs 10 bytes: impossible here
                    raise _varint_error(st, "length", i, 5)
                length = <int64_t>(raw >> 1) ^ -<int64_t>(raw & 1)
            body_start = pos
            # |length| < 2**35, so this cannot overflow
            body_end = pos + length
            if length < 0 or body_end > end:
                raise FormatError(
                    "record-size-invalid",
                    f"record {i} at payload byte {rec_start - start}: expected {length} bytes in record payload, "
                    f"but only {end - pos} remain",
                )
            # The pure path reads the attributes byte unchecked (buf[pos]); it can only fail when the
            # record is empty and ends the buffer, as an IndexError there.
            if pos >= buflen:
                raise FormatError("record-truncated", f"record {i}: invalid record structure (ran out of bytes)")
            attr = p[pos]
            pos += 1
            st = read_field(p, &pos, body_end, 10, &ts_delta)
            if st != VI_OK:
                raise _varint_error(st, "timestamp delta", i, 10)
            st = read_field(p, &pos, body_end, 5, &off_delta)
            if st != VI_OK:
                raise _varint_error(st, "offset delta", i, 5)
            st = read_field(p, &pos, body_end, 5, &klen)
            if st != VI_OK:
                raise _varint_error(st, "key length", i, 5)
            kpos = pos
            if klen >= 0:
                pos += klen
                if pos > body_end:
                    raise FormatError("record-size-invalid",
                                      f"record {i}: key of {klen} bytes runs past the end of the record")
            else:
                klen = -1
            st = read_field(p, &pos, body_end, 5, &vlen)
            if st != VI_OK:
                raise _varint_error(st, "value length", i, 5)
            vpos = pos
            if vlen >= 0:
                pos += vlen
                if pos > body_end:
                    raise FormatError("record-size-invalid",
                                      f"record {i}: value of {vlen} bytes runs past the end of the record")
            else:
                vlen = -1
            st = read_field(p, &pos, body_end, 5, &nheaders)
            if st != VI_OK:
                raise _varint_error(st, "header count", i, 5)
            if nheaders == 0:
                hdrs = no_headers
            else:
                if nheaders < 0:
                    raise FormatError("record-headers-invalid",
                                      f"record {i}: invalid number of record headers {nheaders}")
                if nheaders > body_end - pos:
                    raise FormatError("record-headers-invalid",
                                      f"record {i}: {nheaders} headers declared, more than the {body_end - pos} bytes left")
                if nheaders > MAX_RECORD_HEADERS:
                    raise FormatError("record-headers-invalid", too_many_headers(i, nheaders))
                hl = []
                for h in range(nheaders):
                    st = read_raw(p, &pos, body_end, 5, &raw)
                    if st != VI_OK:
                        raise _varint_error(st, "header key length", i, 5)
                    hk = <int64_t>(raw >> 1) ^ -<int64_t>(raw & 1)
                    if hk < 0:
                        raise FormatError("record-headers-invalid",
                                          f"record {i}: invalid negative header key size {hk}")
                    if pos + hk > body_end:
                        raise FormatError("record-size-invalid",
                                          f"record {i}: header key runs past the end of the record")
                    if not summarize:
                        hkey = PyBytes_FromStringAndSize(<const char *>(p + pos), <Py_ssize_t>hk)
                    pos += hk
                    st = read_raw(p, &pos, body_end, 5, &raw)
                    if st != VI_OK:
                        raise _varint_error(st, "header value length", i, 5)
                    hv = <int64_t>(raw >> 1) ^ -<int64_t>(raw & 1)
                    if hv >= 0:
                        if pos + hv > body_end:
                            raise FormatError("record-size-invalid",
                                              f"record {i}: header value runs past the end of the record")
                        if not summarize:
                            hval = PyBytes_FromStringAndSize(<const char *>(p + pos), <Py_ssize_t>hv)
                        pos += hv
                    else:
                        hval = None
                    if not summarize:
                        hl.append((hkey, hval))
                hdrs = no_headers if summarize else tuple(hl)
            if pos != body_end:
                raise FormatError(
                    "record-size-invalid",
                    f"record {i}: expected to read {length} bytes in record payload, "
                    f"but instead read {pos - body_start}",
                )
            if mode == KEYS:
                record_bytes += pos - rec_start
                if klen < 0:
                    keyless += 1
                else:
                    tombstones += vlen < 0
                    put_key_entry(&entries, p + kpos, klen, <uint64_t>(pos - rec_start) << 1 | (vlen < 0))
                if use_append_time:
                    if type(append_time) is not int or not -0x8000000000000000 <= append_time <= 0x7FFFFFFFFFFFFFFF:
                        raise _BeyondInt64()
                    ts = append_time
                elif ts_small and _add_fits(c_base_ts, ts_delta):
                    ts = c_base_ts + ts_delta
                else:
                    raise _BeyondInt64()
                if ts >= 0:  # the stated record timestamps' range (RecordKeys.min_timestamp, max_timestamp)
                    if not stated:
                        stated_min = stated_max = ts
                        stated = True
                    elif ts < stated_min:
                        stated_min = ts
                    elif ts > stated_max:
                        stated_max = ts
                i += 1
                if nheaders and chunked:
                    chunk_headers += nheaders
                    if chunk_headers >= HEADERS_PER_CHUNK and i < last:
                        last = i  # the chunk boundaries of the columns, which RecordKeys.of shares
                        break
                continue
            if summarize:
                if not (off_small and _add_fits(c_base_off, off_delta)):
                    raise _BeyondInt64()
                off = c_base_off + off_delta
                if use_append_time:
                    if type(append_time) is not int or not -0x8000000000000000 <= append_time <= 0x7FFFFFFFFFFFFFFF:
                        raise _BeyondInt64()
                    ts = append_time
                elif ts_small and _add_fits(c_base_ts, ts_delta):
                    ts = c_base_ts + ts_delta
                else:
                    raise _BeyondInt64()
                if i == first:
                    first_off = prev_off = off
                    min_ts = max_ts = ts
                    min_ts_at = 0
                else:
                    if decreasing_at < 0:
                        if off <= prev_off:
                            decreasing_at, decreasing_off, decreasing_prev = i - first, off, prev_off
                        else:
                            if off != prev_off + 1 and not has_gap:
                                has_gap, gap_after = True, prev_off
                            prev_off = off
                    if ts < min_ts:
                        min_ts, min_ts_at = ts, i - first
                    if ts > max_ts:
                        max_ts = ts
                if attr and attr_at < 0:
                    attr_at, first_attr = i - first, attr
                last_off = off
                i += 1
                if chunked:
                    chunk_headers += nheaders
                    chunk_bytes += pos - rec_start
                    if (chunk_headers >= headers_budget or chunk_bytes >= bytes_budget) and i < last:
                        last = i  # the chunk boundaries of the columns, which the pure summary shares
                        break
                continue
            if off_small and _add_fits(c_base_off, off_delta):
                offsets.append(c_base_off + off_delta)
            else:
                offsets.append(java_long(base_offset + off_delta))
            if use_append_time:
                timestamps.append(append_time)
            elif ts_small and _add_fits(c_base_ts, ts_delta):
                timestamps.append(c_base_ts + ts_delta)
            else:
                timestamps.append(java_long(base_timestamp + ts_delta))
            attributes.append(attr)
            key_pos.append(kpos)
            key_len.append(klen)
            value_pos.append(vpos)
            value_len.append(vlen)
            headers.append(hdrs)
            sizes.append(pos - rec_start)
            i += 1
            if chunked:
                chunk_headers += nheaders
                chunk_bytes += pos - rec_start
                if (chunk_headers >= headers_budget or chunk_bytes >= bytes_budget) and i < last:
                    last = i  # memory bounded by headers and bytes too: the next chunk goes on from here
                    break
        if last < count:
            cols.resume_at = pos
        elif pos != end:
            raise FormatError(
                "records-remaining",
                f"incorrect declared batch size: {end - pos} bytes remain after the {count_obj} records the header declares",
            )
    except FormatError as e:
        cols.error = e.detached()  # the columns keep it, as the pure twin's do
    except BaseException:
        free_buffer(&entries)
        raise
    cols.count = i - first
    if mode == KEYS:
        cols.record_bytes, cols.keyless, cols.tombstones = record_bytes, keyless, tombstones
        if stated:
            cols.min_timestamp, cols.max_timestamp = stated_min, stated_max
        try:
            cols.entries = PyBytes_FromStringAndSize(entries.data, entries.len) if entries.len else b""
        finally:
            free_buffer(&entries)
    elif summarize and cols.count:
        cols.first_offset, cols.last_offset = first_off, last_off
        if decreasing_at >= 0:
            cols.decreasing_at, cols.decreasing_offsets = decreasing_at, (decreasing_off, decreasing_prev)
        if has_gap:
            cols.gap_after = gap_after
        cols.min_timestamp, cols.min_timestamp_at, cols.max_timestamp = min_ts, min_ts_at, max_ts
        if attr_at >= 0:
            cols.attributes_at, cols.attributes = attr_at, first_attr
    return cols
