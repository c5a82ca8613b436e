# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twins of :func:`kdump.render.kafka_text.render_v2_lines_py` (DumpLogSegments record lines of a
non-control magic-2 batch, keys and values printed by the default string decoder or handed over decoded) and of ``render_legacy_lines_py`` (the same for magic
0/1 messages). Both give the lines as UTF-8 bytes, each ended by a newline: the bytes kdump writes to a file
or a pipe, built in one C buffer (numbers formatted in C, ASCII keys and values copied without being decoded
and encoded again). Same bytes as the pure functions; ``tests/test_speedups.py`` and
``tests/test_legacy_speedups.py`` check that differentially."""

from cpython.bytes cimport PyBytes_AS_STRING
from cpython.unicode cimport PyUnicode_AsUTF8AndSize
from libc.stdint cimport int64_t

from kdump.format._plain cimport PlainMessage, plain_timestamp_type, read_plain  # compile-time only (inline functions)

from ._outbuf cimport Kept, Out, ascii_only, finish, int_digits, put, put_bytes, put_int, release, reserve, start
from ._sequence cimport record_sequence  # compile-time only (inline functions)

from kdump.format.names import TIMESTAMP_TYPE_TEXT
from kdump.format.text import java_utf8

# The pure twins, for buffers other than bytes and numbers beyond int64. kdump.render.kafka_text imports
# this module (through kdump._backend), so they are handed over by kdump._backend.pick rather than imported.
render_v2_lines_py = None
render_legacy_lines_py = None
render_legacy_run_py = None


cdef inline int _put_text(Out *o, const unsigned char *p, object buf, Py_ssize_t pos, Py_ssize_t n) except -1:
    """A key or value as Java's ``new String(bytes, UTF_8)`` prints it, in UTF-8: ASCII bytes as they are,
    anything else decoded as Java does (invalid sequences become U+FFFD) and encoded again."""
    if ascii_only(p + pos, n):
        return put(o, <const char *> p + pos, n)
    try:
        text = buf[pos:pos + n].decode("utf-8")
    except UnicodeDecodeError:
        text = java_utf8(bytes(buf[pos:pos + n]))
    return put_bytes(o, text.encode("utf-8", "surrogateescape"))


cdef int _put_decoded(Out *o, str text) except -1:
    """A key or value decoded (the text a decoder gave) in UTF-8, as the pure twin encodes it."""
    cdef Py_ssize_t n
    cdef const char *utf8
    try:
        utf8 = PyUnicode_AsUTF8AndSize(text, &n)  # no copy for ASCII text
    except UnicodeEncodeError:  # a surrogate: written as kdump's standard output writes it
        return put_bytes(o, text.encode("utf-8", "surrogateescape"))
    return put(o, utf8, n)


cdef int _put_data(Out *o, const unsigned char *p, object buf, bint skip_metadata, Py_ssize_t kp, Py_ssize_t kl,
                   Py_ssize_t vp, Py_ssize_t vl, list key_texts, list value_texts, Py_ssize_t i) except -1:
    """``--print-data-log``'s part of a line: `` key: K payload: V`` (``| `` first without metadata); record
    ``i``'s key and value from ``key_texts``/``value_texts`` where given, else as Java's StringDecoder."""
    cdef const char *prefix = b"| " if skip_metadata else b" "
    cdef Py_ssize_t plen = 2 if skip_metadata else 1
    if kl >= 0:
        put(o, prefix, plen)
        put(o, b"key: ", 5)
        if key_texts is None:
            _put_text(o, p, buf, kp, kl)
        else:
            _put_decoded(o, key_texts[i])
        prefix, plen = b" ", 1
    if vl >= 0:
        put(o, prefix, plen)
        put(o, b"payload: ", 9)
        if value_texts is None:
            _put_text(o, p, buf, vp, vl)
        else:
            _put_decoded(o, value_texts[i])
    return 0


cdef Kept _kept  # the buffer kept from call to call (kdump/render/_outbuf.pxd)


def render_v2_lines(cols, str ts_name, base_offset, base_seq, bint print_data, bint skip_metadata,
                    list key_texts=None, list value_texts=None):
    """The DumpLogSegments record lines of a non-control magic-2 batch (newest tool's text; keys and values
    from ``key_texts``/``value_texts`` where given, else as the default string decoder prints them) as UTF-8
    bytes, a newline after each. Same bytes as the pure function."""
    if isinstance(cols.buf, bytes):
        try:
            return _render(cols, ts_name, False, "", base_offset, base_seq, print_data, skip_metadata, key_texts,
                           value_texts)
        except OverflowError:  # an offset or sequence beyond int64 (hostile input): the pure path copes
            pass
    return render_v2_lines_py(cols, ts_name, base_offset, base_seq, print_data, skip_metadata, key_texts,
                              value_texts)


def render_legacy_lines(cols, str ts_name, str brace, bint print_data, bint skip_metadata, list key_texts=None,
                        list value_texts=None):
    """The DumpLogSegments record lines of magic 0/1 messages (keys and values as for ``render_v2_lines``) as
    UTF-8 bytes, a newline after each. Same bytes as the pure function."""
    if isinstance(cols.buf, bytes):
        try:
            return _render(cols, ts_name, True, brace, 0, -1, print_data, skip_metadata, key_texts, value_texts)
        except OverflowError:
            pass
    return render_legacy_lines_py(cols, ts_name, brace, print_data, skip_metadata, key_texts, value_texts)


cdef bytes _render(cols, str ts_name, bint legacy, str brace, base_offset, base_seq, bint print_data,
                   bint skip_metadata, list key_texts, list value_texts):
    """Record lines: magic 2 (``sequence: ... headerKeys: [...]``) or magic 0/1 (``isValid: ... crc: ...``
    and the Scala tool's ``brace``) after the fields they share."""
    cdef Py_ssize_t i, n = cols.count
    cdef Py_ssize_t kl, vl
    cdef int64_t off, bo = base_offset
    cdef int64_t bs = base_seq
    cdef list offsets = cols.offsets, timestamps = cols.timestamps, key_pos = cols.key_pos
    cdef list key_len = cols.key_len, value_pos = cols.value_pos, value_len = cols.value_len
    cdef list headers = cols.headers, valid = cols.valid, crcs = cols.crcs
    cdef bytes buf = cols.buf
    cdef const unsigned char *p = <const unsigned char *> PyBytes_AS_STRING(buf)
    cdef bytes ts = f" {ts_name}: ".encode("utf-8")
    cdef bytes end = brace.encode("utf-8")
    cdef tuple hdrs
    cdef Out *o = start(&_kept)
    try:
        reserve(o, n * (224 if print_data else 128))  # a first guess; put grows the buffer as needed
        for i in range(n):
            kl = key_len[i]
            vl = value_len[i]
            if not skip_metadata:
                off = offsets[i]
                put(o, b"| offset: ", 10)
                put_int(o, off)
                put_bytes(o, ts)
                put_int(o, timestamps[i])
                put(o, b" keySize: ", 10)
                put_int(o, kl)
                put(o, b" valueSize: ", 12)
                put_int(o, vl)
                if legacy:
                    if valid[i]:
                        put(o, b" isValid: true crc: ", 20)
                    else:
                        put(o, b" isValid: false crc: ", 21)
                    put_int(o, crcs[i])
                    put_bytes(o, end)
                else:
                    put(o, b" sequence: ", 11)
                    put_int(o, record_sequence(bs, off, bo))
                    put(o, b" headerKeys: [", 14)
                    hdrs = headers[i]
                    if hdrs:
                        put_bytes(o, ",".join([java_utf8(h[0]) for h in hdrs]).encode("utf-8", "surrogateescape"))
                    put(o, b"]", 1)
            if print_data:
                _put_data(o, p, buf, skip_metadata, key_pos[i], kl, value_pos[i], vl, key_texts, value_texts, i)
            put(o, b"\n", 1)
    except BaseException:
        release(o, &_kept)
        raise
    return finish(o, &_kept)


def render_legacy_run(run, tuple labels, str brace, bint deep, bint print_data, bint skip_metadata):
    """Every message of a :class:`~kdump.format.legacy.LegacyRun` of intact messages (one the resynchronising
    walk found: ``run.summary`` set) as DumpLogSegments prints a plain magic 0/1 message: its batch line
    (``labels``: what goes before each value of the line, from kdump.format.names' table, by
    :func:`kdump.render.kafka_text.run_line_labels`), and with ``deep`` its record line (default string
    decoders, epoch timestamps), as UTF-8 bytes. The messages are read from ``run.data`` here (no Python object
    per message). Same bytes as the pure twin, which renders the messages one by one as batches."""
    data = run.data
    if run.summary is not None and isinstance(data, bytes) and type(run.position) is int and \
            type(run.count) is int and 0 <= run.count:
        try:
            return _render_run(data, run.position, run.count, labels, brace, deep, print_data, skip_metadata)
        except (OverflowError, ValueError):  # a position beyond int64, data that is not the run's: the pure path
            pass
    return render_legacy_run_py(run, labels, brace, deep, print_data, skip_metadata)


cdef bytes _render_run(bytes data, int64_t position, Py_ssize_t n, tuple labels, str brace, bint deep,
                       bint print_data, bint skip_metadata):
    cdef Py_ssize_t i, pos = 0, end = len(data), nxt
    cdef PlainMessage m
    cdef const unsigned char *p = <const unsigned char *> PyBytes_AS_STRING(data)
    cdef bytes close = brace.encode("utf-8")
    # labels: offset, position, (the timestamp's: its type's name, per message), size, magic, codec, crc, valid
    cdef bytes l_offset = labels[0], l_position = labels[1], l_ts = labels[2], l_size = labels[3]
    cdef bytes l_magic = labels[4], l_codec = labels[5], l_crc = labels[6], l_valid = labels[7]
    cdef bytes name
    cdef char off_digits[24]
    cdef char ts_digits[24]
    cdef char crc_digits[24]
    cdef int off_at, ts_at, crc_at
    cdef Out *o = start(&_kept)
    try:
        reserve(o, n * ((352 if print_data else 256) if deep else 128))
        for i in range(n):
            nxt = read_plain(p, pos, end, &m)
            if nxt < 0:
                raise ValueError("no plain message where the run has one")
            name = _TS_NAMES[plain_timestamp_type(&m) + 1]
            off_at = int_digits(m.offset, off_digits)
            ts_at = int_digits(m.timestamp, ts_digits)
            crc_at = int_digits(m.crc, crc_digits)
            put_bytes(o, l_offset)
            put(o, off_digits + off_at, 24 - off_at)
            put_bytes(o, l_position)
            put_int(o, position + pos)
            put_bytes(o, l_ts)
            put_bytes(o, name)
            put(o, b": ", 2)
            put(o, ts_digits + ts_at, 24 - ts_at)
            put_bytes(o, l_size)
            put_int(o, nxt - pos)
            put_bytes(o, l_magic)
            put_int(o, m.magic)
            put_bytes(o, l_codec)
            put_bytes(o, l_crc)
            put(o, crc_digits + crc_at, 24 - crc_at)
            put_bytes(o, l_valid)
            put(o, b"true\n", 5)  # (the walk that found the run checked every CRC)
            pos = nxt
            if not deep:
                continue
            if not skip_metadata:
                put(o, b"| offset: ", 10)
                put(o, off_digits + off_at, 24 - off_at)
                put(o, b" ", 1)
                put_bytes(o, name)
                put(o, b": ", 2)
                put(o, ts_digits + ts_at, 24 - ts_at)
                put(o, b" keySize: ", 10)
                put_int(o, m.key_len)
                put(o, b" valueSize: ", 12)
                put_int(o, m.value_len)
                put(o, b" isValid: true crc: ", 20)
                put(o, crc_digits + crc_at, 24 - crc_at)
                put_bytes(o, close)
            if print_data:
                _put_data(o, p, data, skip_metadata, m.key_pos, m.key_len, m.value_pos, m.value_len,
                          None, None, 0)  # no record decoder on this path: bytes as Java prints them
            put(o, b"\n", 1)
    except BaseException:
        release(o, &_kept)
        raise
    return finish(o, &_kept)


# The names of the timestamp types -1, 0, 1 (by plain_timestamp_type + 1).
cdef tuple _TS_NAMES = tuple(TIMESTAMP_TYPE_TEXT[t].encode() for t in (-1, 0, 1))
