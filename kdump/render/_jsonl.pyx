# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twin of :func:`kdump.render.jsonl.records_json_py` (the records of a non-control magic-2 batch
as the inside of a JSON list, ``--format json``). Same text, character for character, as ``json.dumps`` of
the pure path's record objects; ``tests/test_jsonl_speed.py`` checks that on generated batches and the corpus."""

from cpython.unicode cimport PyUnicode_DecodeUTF8, PyUnicode_DecodeASCII
from libc.stdint cimport int64_t

from ._sequence cimport record_sequence  # compile-time only (an inline function)

import base64
from json.encoder import encode_basestring  # what json.dumps(..., ensure_ascii=False) quotes strings with

from kdump.format.types import TimestampType

# The pure twin, for buffers other than bytes and numbers beyond int64; handed over by kdump._backend.pick.
records_json_py = None


def records_json(batch, cols, bint print_data):
    """The records of ``cols`` (a non-control magic-2 batch: no per-record magic or CRC, no decoded objects)
    as JSON objects separated by ``", "``, as ``json.dumps`` writes the inside of a list."""
    cdef list out = []
    if not isinstance(cols.buf, bytes):
        return records_json_py(batch, cols, print_data)
    try:
        _render(cols, batch.timestamp_type, batch.base_offset, batch.base_sequence, print_data, out)
    except OverflowError:  # an offset, timestamp or sequence beyond int64 (hostile input): the pure path copes
        return records_json_py(batch, cols, print_data)
    return ", ".join(out)


cdef inline bint _plain(const unsigned char* p, Py_ssize_t n):
    """Printable ASCII without quote or backslash: its JSON string is the bytes between two quotes."""
    cdef Py_ssize_t j
    cdef unsigned char c
    for j in range(n):
        c = p[j]
        if c < 0x20 or c > 0x7e or c == 0x22 or c == 0x5c:
            return False
    return True


cdef str _data(const unsigned char* base, Py_ssize_t pos, Py_ssize_t n, str name):
    """``"name": <text or base64>, "nameEncoding": <"utf8"|"base64"|null>`` for a key or value."""
    cdef const unsigned char* p
    cdef str text
    if n < 0:
        return f'"{name}": null, "{name}Encoding": null'
    p = base + pos
    if _plain(p, n):
        return f'"{name}": "{PyUnicode_DecodeASCII(<const char*>p, n, NULL)}", "{name}Encoding": "utf8"'
    try:
        text = PyUnicode_DecodeUTF8(<const char*>p, n, NULL)
    except UnicodeDecodeError:
        text = base64.b64encode((<const char*>p)[:n]).decode("ascii")
        return f'"{name}": "{text}", "{name}Encoding": "base64"'
    return f'"{name}": {encode_basestring(text)}, "{name}Encoding": "utf8"'


cdef str _header(tuple h):
    cdef object k = h[0], v = h[1]
    cdef str key = encode_basestring(k.decode("utf-8", "replace"))
    if v is None:
        return f'{{"key": {key}, "value": null, "valueEncoding": null}}'
    try:
        return f'{{"key": {key}, "value": {encode_basestring(v.decode("utf-8"))}, "valueEncoding": "utf8"}}'
    except UnicodeDecodeError:
        return f'{{"key": {key}, "value": "{base64.b64encode(v).decode("ascii")}", "valueEncoding": "base64"}}'


cdef _render(cols, timestamp_type, base_offset, base_seq, bint print_data, list out):
    cdef Py_ssize_t i, n = cols.count
    cdef Py_ssize_t kl, vl
    cdef int64_t off, bo = base_offset
    cdef int64_t seq, bs = base_seq
    cdef int64_t ts, size
    cdef list offsets = cols.offsets, timestamps = cols.timestamps, key_pos = cols.key_pos
    cdef list key_len = cols.key_len, value_pos = cols.value_pos, value_len = cols.value_len
    cdef list headers = cols.headers, sizes = cols.sizes
    cdef bytes buf = cols.buf
    cdef const unsigned char* base = buf
    cdef str ts_json = encode_basestring(TimestampType(timestamp_type).name), meta, tail
    cdef tuple hdrs
    for i in range(n):
        kl = key_len[i]
        vl = value_len[i]
        off = offsets[i]
        ts = timestamps[i]
        size = sizes[i]
        seq = record_sequence(bs, off, bo)
        meta = (f'{{"offset": {off}, "timestamp": {ts}, "timestampType": {ts_json}, "keySize": {kl}, '
                f'"valueSize": {vl}, "sequence": {seq}, "sizeInBytes": {size}, ')
        hdrs = headers[i]
        if print_data:
            if hdrs:
                tail = ", ".join([_header(h) for h in hdrs])
            else:
                tail = ""
            out.append(f'{meta}{_data(base, key_pos[i], kl, "key")}, {_data(base, value_pos[i], vl, "value")}, '
                       f'"headers": [{tail}]}}')
        else:
            if hdrs:
                tail = ", ".join([encode_basestring(h[0].decode("utf-8", "replace")) for h in hdrs])
            else:
                tail = ""
            out.append(f'{meta}"headerKeys": [{tail}]}}')
