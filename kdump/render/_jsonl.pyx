# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twin of :func:`kdump.render.jsonl.records_json_py` (the records of a non-control magic-2 batch
as the inside of a JSON list, ``--format json``, in UTF-8). Same bytes as the UTF-8 of ``json.dumps`` of
the pure path's record objects, built in one C buffer (numbers formatted in C, printable ASCII keys and
values copied as they are); ``tests/test_jsonl_speed.py`` checks that on generated batches and the corpus."""

from cpython.bytes cimport PyBytes_AS_STRING
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t

from ._outbuf cimport Kept, Out, finish, json_plain, put, put_bytes, put_int, release, reserve, start
from ._sequence cimport record_sequence  # compile-time only (inline functions)

import base64
from json.encoder import encode_basestring  # what json.dumps(..., ensure_ascii=False) quotes strings with

from kdump.format.names import TIMESTAMP_TYPE_JSON

# The pure twin, for buffers other than bytes and numbers beyond int64; handed over by kdump._backend.pick.
records_json_py = None

cdef Kept _kept  # the buffer kept from call to call (kdump/render/_outbuf.pxd)


def records_json(batch, cols, bint print_data):
    """The records of ``cols`` (a non-control magic-2 batch: no per-record magic or CRC, no decoded objects)
    as JSON objects separated by ``", "``, as ``json.dumps`` writes the inside of a list, in UTF-8."""
    if not isinstance(cols.buf, bytes):
        return records_json_py(batch, cols, print_data)
    try:
        return _render(cols, batch.timestamp_type, batch.base_offset, batch.base_sequence, print_data)
    except OverflowError:  # an offset, timestamp or sequence beyond int64 (hostile input): the pure path copes
        return records_json_py(batch, cols, print_data)


cdef inline int _put_str(Out *o, str text) except -1:
    return put_bytes(o, text.encode("utf-8", "surrogateescape"))


cdef int _put_data(Out *o, const unsigned char* base, Py_ssize_t pos, Py_ssize_t n, bytes name) except -1:
    """``"name": <text or base64>, "nameEncoding": <"utf8"|"base64"|null>`` for a key or value."""
    cdef const unsigned char* p
    cdef str text
    put(o, b'"', 1)
    put_bytes(o, name)
    if n < 0:
        put(o, b'": null, "', 10)
        put_bytes(o, name)
        return put(o, b'Encoding": null', 15)
    p = base + pos
    if json_plain(p, n):
        put(o, b'": "', 4)
        put(o, <const char*>p, n)
        put(o, b'", "', 4)
        put_bytes(o, name)
        return put(o, b'Encoding": "utf8"', 17)
    put(o, b'": ', 3)
    try:
        text = PyUnicode_DecodeUTF8(<const char*>p, n, NULL)
    except UnicodeDecodeError:
        put(o, b'"', 1)
        put_bytes(o, base64.b64encode((<const char*>p)[:n]))
        put(o, b'", "', 4)
        put_bytes(o, name)
        return put(o, b'Encoding": "base64"', 19)
    _put_str(o, encode_basestring(text))
    put(o, b', "', 3)
    put_bytes(o, name)
    return put(o, b'Encoding": "utf8"', 17)


cdef str _header(tuple h):
    cdef object k = h[0], v = h[1]
    cdef str key = encode_basestring(k.decode("utf-8", "replace"))
    if v is None:
        return f'{{"key": {key}, "value": null, "valueEncoding": null}}'
    try:
        return f'{{"key": {key}, "value": {encode_basestring(v.decode("utf-8"))}, "valueEncoding": "utf8"}}'
    except UnicodeDecodeError:
        return f'{{"key": {key}, "value": "{base64.b64encode(v).decode("ascii")}", "valueEncoding": "base64"}}'


cdef bytes _render(cols, timestamp_type, base_offset, base_seq, bint print_data):
    cdef Py_ssize_t i, n = cols.count
    cdef Py_ssize_t kl, vl
    cdef int64_t off, bo = base_offset
    cdef int64_t bs = base_seq
    cdef list offsets = cols.offsets, timestamps = cols.timestamps, key_pos = cols.key_pos
    cdef list key_len = cols.key_len, value_pos = cols.value_pos, value_len = cols.value_len
    cdef list headers = cols.headers, sizes = cols.sizes
    cdef bytes buf = cols.buf
    cdef const unsigned char* base = <const unsigned char*> PyBytes_AS_STRING(buf)
    cdef bytes ts_json = (f', "timestampType": {encode_basestring(TIMESTAMP_TYPE_JSON[timestamp_type])}, '
                          f'"keySize": ').encode("utf-8")
    cdef tuple hdrs
    cdef Out *o = start(&_kept)
    try:
        reserve(o, n * (320 if print_data else 200))  # a first guess; put grows the buffer as needed
        for i in range(n):
            kl = key_len[i]
            vl = value_len[i]
            off = offsets[i]
            if i:
                put(o, b", ", 2)
            put(o, b'{"offset": ', 11)
            put_int(o, off)
            put(o, b', "timestamp": ', 15)
            put_int(o, timestamps[i])
            put_bytes(o, ts_json)
            put_int(o, kl)
            put(o, b', "valueSize": ', 15)
            put_int(o, vl)
            put(o, b', "sequence": ', 14)
            put_int(o, record_sequence(bs, off, bo))
            put(o, b', "sizeInBytes": ', 17)
            put_int(o, sizes[i])
            put(o, b", ", 2)
            hdrs = headers[i]
            if print_data:
                _put_data(o, base, key_pos[i], kl, b"key")
                put(o, b", ", 2)
                _put_data(o, base, value_pos[i], vl, b"value")
                put(o, b', "headers": [', 14)
                if hdrs:
                    _put_str(o, ", ".join([_header(h) for h in hdrs]))
            else:
                put(o, b'"headerKeys": [', 15)
                if hdrs:
                    _put_str(o, ", ".join([encode_basestring(h[0].decode("utf-8", "replace")) for h in hdrs]))
            put(o, b"]}", 2)
    except BaseException:
        release(o, &_kept)
        raise
    return finish(o, &_kept)
