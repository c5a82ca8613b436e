# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twins of :func:`kdump.render.jsonl.records_json_py` (the records of a non-control batch as the inside
of a JSON list, ``--format json``, in UTF-8), of :func:`kdump.render.records.records_lines_py` (the same records
each a whole object on its own line, ``--format records``) and of
:func:`kdump.render.jsonl.render_legacy_run_json_py` (a run of plain magic 0/1 messages, each the batch object the
JSON dump writes for it). Same bytes as the UTF-8 of ``json.dumps`` of the pure path's objects, built in one C
buffer; ``tests/test_jsonl_speed.py`` and ``tests/test_jsonl_runs.py`` check that on generated input and the corpus.

How a record is written (the JSON dump writes 1.5 times the bytes of the text dump, from the same columns): the
room a record needs is reserved once, then each number is written in place (kdump/_bytebuf.pxd ``write_int``) and
the constant text between two values is one precomputed piece (``Piece``), copied in fixed-size chunks; a key or
value of printable ASCII (no quote, no backslash) is checked and copied in one pass (kdump/_bytescan.pxd
``json_plain_copy``: 16 bytes at a time with SSE2, else 8); other UTF-8 text is escaped as ``json.dumps`` escapes
it, in C too (``json_escape_copy``: where the processor has SSSE3, a block of 16 bytes whose only characters to
escape are quotes and backslashes, as in JSON documents, is escaped by a byte shuffle, without a branch per
quote). The last block of a key or value is read with the bytes after it where its buffer has them. Bytes that
are not UTF-8 (base64) and headers go through Python as the pure twin does."""

from cpython.buffer cimport PyBUF_READ
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.memoryview cimport PyMemoryView_FromMemory
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.stdint cimport int64_t
from libc.string cimport memcpy

from kdump._bytebuf cimport INT_MAX_CHARS, write_int
from kdump._bytescan cimport json_escape_best, json_escape_copy, json_escape_use, json_plain_copy
from kdump.format._plain cimport PlainMessage, plain_timestamp_type, read_plain  # compile-time only (inline functions)

from ._outbuf cimport Kept, Out, finish, put, put_bytes, release, reserve, start
from ._sequence cimport record_sequence  # compile-time only (inline functions)

import base64
from json.encoder import encode_basestring  # what json.dumps(..., ensure_ascii=False) quotes strings with

from kdump.format.names import TIMESTAMP_TYPE_JSON

# The pure twins, for buffers other than bytes and numbers beyond int64; handed over by kdump._backend.pick.
records_json_py = None
records_lines_py = None
render_legacy_run_json_py = None

cdef Kept _kept  # the buffer kept from call to call (kdump/render/_outbuf.pxd)

# The forms of the escaping of keys and values (kdump/_bytescan.pxd json_escape_copy), by their number there
ESCAPE_FORMS = ("words", "sse2", "ssse3")


def escape_forms():
    """The forms of escaping this build and processor can run (the best last): each writes the same bytes."""
    return ESCAPE_FORMS[:json_escape_best() + 1]


def use_escape_form(str form):
    """Escape keys and values with ``form`` (one of :func:`escape_forms`) from now on, for the tests that check each
    form against ``json.dumps``; the form used before is returned. The best form is used until this is called."""
    cdef int previous = json_escape_use(-1)
    if previous < 0:
        previous = json_escape_best()
    if form not in escape_forms():
        raise ValueError(f"this build or processor cannot escape with {form!r}: {escape_forms()}")
    json_escape_use(ESCAPE_FORMS.index(form))
    return ESCAPE_FORMS[previous]


# --- pieces: the constant text between two values ---------------------------------------------------------------
cdef enum:
    CHUNK = 32  # a piece is copied CHUNK bytes at a time (constant-size copies: a move or two each)
    RECORD_ROOM = 640  # a record's pieces (with a chunk's slack) and numbers, besides its key and value
    # with a writer, what is built is handed over every HAND_AT bytes: a batch's records (3 times the text's bytes
    # for --format records) then stay in the processor's cache between being written and being handed over
    HAND_AT = 128 << 10


cdef struct Piece:
    const char *text  # padded with zeros to whole chunks (the bytes past n are overwritten by what follows)
    Py_ssize_t n


cdef list _kept_pieces = []  # the padded bytes the module's pieces point into


cdef bytes _padded(bytes text):
    return text + bytes(-len(text) % CHUNK + CHUNK)


cdef Piece _piece_of(bytes text, list keep):
    """A piece of ``text`` (its padded bytes kept alive in ``keep``)."""
    cdef bytes padded = _padded(text)
    keep.append(padded)
    cdef Piece pc
    pc.text = PyBytes_AS_STRING(padded)
    pc.n = len(text)
    return pc


cdef inline char *_put_piece(char *d, Piece pc) noexcept nogil:
    """``pc`` at ``d`` (room reserved for it and a chunk more): the end of what it wrote."""
    cdef Py_ssize_t k = 0
    while True:
        memcpy(d + k, pc.text + k, CHUNK)
        k += CHUNK
        if k >= pc.n:
            return d + pc.n


cdef inline char *_put_null(char *d) noexcept nogil:
    memcpy(d, b"null", 4)
    return d + 4


cdef Piece _piece(bytes text):
    return _piece_of(text, _kept_pieces)


# A record's members in the order of kdump.render.jsonl.record_objects. Encodings (of keys, values): 0 null,
# 1 "utf8", 2 "base64"; timestamp types by Kafka's id + 1 (-1 NoTimestampType, 0 CreateTime, 1 LogAppendTime).
cdef Piece FIRST_RECORD = _piece(b'{"offset": ')
cdef Piece NEXT_RECORD = _piece(b', {"offset": ')
cdef Piece OFFSET = _piece(b'"offset": ')  # a record's first member after the head --format records gives
cdef Piece TIMESTAMP = _piece(b', "timestamp": ')
cdef Piece TIMESTAMP_TYPE_KEY_SIZE[3]  # , "timestampType": "CREATE_TIME", "keySize":
cdef Piece VALUE_SIZE = _piece(b', "valueSize": ')
cdef Piece SEQUENCE = _piece(b', "sequence": ')
cdef Piece SIZE = _piece(b', "sizeInBytes": ')
cdef Piece HEADER_KEYS = _piece(b', "headerKeys": [')
cdef Piece NO_SEQUENCE_SIZE = _piece(b', "sequence": -1, "sizeInBytes": ')  # a legacy message's
cdef Piece LEGACY_MAGIC = _piece(b', "legacyMagic": ')
cdef Piece LEGACY_CRC = _piece(b', "legacyCrc": ')
cdef Piece LEGACY_CRC_VALID = _piece(b', "legacyCrcValid": true')
cdef Piece LEGACY_CRC_INVALID = _piece(b', "legacyCrcValid": false')
cdef Piece KEY = _piece(b', "key": ')
cdef Piece KEY_ENCODING[3]  # , "keyEncoding": null, "value":
cdef Piece VALUE_ENCODING_HEADERS[3]  # , "valueEncoding": null, "headers": [
cdef Piece VALUE_ENCODING_END[3]  # , "valueEncoding": null}   (a legacy message's record ends there)
cdef Piece TIMESTAMP_TYPE_NAME[3]  # "CREATE_TIME" (a batch's timestampType)

cdef tuple _ENCODINGS = (b"null", b'"utf8"', b'"base64"')
cdef int _t
for _t in range(3):
    TIMESTAMP_TYPE_NAME[_t] = _piece(encode_basestring(TIMESTAMP_TYPE_JSON[_t - 1]).encode("utf-8"))
    TIMESTAMP_TYPE_KEY_SIZE[_t] = _piece(b', "timestampType": ' + encode_basestring(TIMESTAMP_TYPE_JSON[_t - 1])
                                         .encode("utf-8") + b', "keySize": ')
    KEY_ENCODING[_t] = _piece(b', "keyEncoding": ' + _ENCODINGS[_t] + b', "value": ')
    VALUE_ENCODING_HEADERS[_t] = _piece(b', "valueEncoding": ' + _ENCODINGS[_t] + b', "headers": [')
    VALUE_ENCODING_END[_t] = _piece(b', "valueEncoding": ' + _ENCODINGS[_t] + b'}')


# --- keys and values ---------------------------------------------------------------------------------------------
cdef inline char *_plain_string(char *d, const unsigned char *p, Py_ssize_t n, Py_ssize_t readable) noexcept nogil:
    """``p[:n]`` as a JSON string at ``d`` (room reserved for n + 2 bytes and a block more) where it is printable
    ASCII without quote or backslash, checked while copied (kdump/_bytescan.pxd; ``p[:readable]`` may be read): the
    end; NULL where it is not."""
    cdef char *end = json_plain_copy(d + 1, p, n, readable)
    if end == NULL:
        return NULL
    d[0] = end[0] = b'"'
    return end + 1


cdef int _put_text_or_base64(Out *o, const unsigned char *p, Py_ssize_t n) except -1:
    """A key or value that is not plain ASCII: its text quoted as json.dumps quotes it where it is UTF-8 (1), else
    its base64 (2); returns which."""
    cdef str text
    try:
        text = PyUnicode_DecodeUTF8(<const char*>p, n, NULL)
    except UnicodeDecodeError:
        put(o, b'"', 1)
        put_bytes(o, base64.b64encode((<const char*>p)[:n]))
        put(o, b'"', 1)
        return 2
    _put_str(o, encode_basestring(text))
    return 1


cdef inline char *_put_data(Out *o, char *d, const unsigned char *p, Py_ssize_t n, const unsigned char *limit,
                            Piece *encoding, Py_ssize_t room) except NULL:
    """A key or value (``n`` < 0: null) at ``d`` in ``o``, then its ``encoding`` piece (by which it is); ``limit``:
    the end of the buffer ``p`` points into (the bytes up to it may be read: the last block of a key or value is
    then read whole, with what follows it, rather than copied out); ``room``: what the record may still write after
    it, reserved again where the value went through Python. The end."""
    cdef char *end
    cdef int which
    if n < 0:
        return _put_piece(_put_null(d), encoding[0])
    end = _plain_string(d, p, n, limit - p)
    if end != NULL:
        return _put_piece(end, encoding[1])
    # text to escape (quotes: JSON documents as values; controls; non-ASCII UTF-8), in C; not UTF-8: base64
    o.len = d - o.data
    reserve(o, 6 * n + 32 + 2 + room)  # (json_escape_copy stores whole blocks: up to 32 bytes past its end)
    d = o.data + o.len
    end = json_escape_copy(d + 1, p, n, limit - p)
    if end != NULL:
        d[0] = end[0] = b'"'
        return _put_piece(end + 1, encoding[1])
    which = _put_text_or_base64(o, p, n)
    reserve(o, room)
    return _put_piece(o.data + o.len, encoding[which])


cdef inline int _put_str(Out *o, str text) except -1:
    return put_bytes(o, text.encode("utf-8", "surrogateescape"))


cdef str _header(tuple h):
    cdef object k = h[0], v = h[1]
    cdef str key = encode_basestring(k.decode("utf-8", "replace"))
    if v is None:
        return f'{{"key": {key}, "value": null, "valueEncoding": null}}'
    try:
        return f'{{"key": {key}, "value": {encode_basestring(v.decode("utf-8"))}, "valueEncoding": "utf8"}}'
    except UnicodeDecodeError:
        return f'{{"key": {key}, "value": "{base64.b64encode(v).decode("ascii")}", "valueEncoding": "base64"}}'


cdef inline Py_ssize_t _bytes_of(Py_ssize_t n) noexcept nogil:
    return n if n > 0 else 0


cdef inline char *_record_start(char *d, Piece opening, int64_t offset, int64_t timestamp, int ts_type, int64_t key_len,
                                int64_t value_len) noexcept nogil:
    """A record's object up to its valueSize (what magic 2 and magic 0/1 records share)."""
    d = _put_piece(d, opening)
    d = write_int(d, offset)
    d = _put_piece(d, TIMESTAMP)
    d = write_int(d, timestamp)
    d = _put_piece(d, TIMESTAMP_TYPE_KEY_SIZE[ts_type + 1])
    d = write_int(d, key_len)
    d = _put_piece(d, VALUE_SIZE)
    return write_int(d, value_len)


# --- the records of a batch --------------------------------------------------------------------------------------
def records_json(batch, cols, bint print_data, write=None):
    """The records of ``cols`` (a non-control batch's, no decoded objects: magic 2, or magic 0/1 messages with
    their own magic and CRC) as JSON objects separated by ``", "``, as ``json.dumps`` writes the inside of a list,
    in UTF-8; with ``write``, handed to it as :func:`records_lines` hands them (None returned)."""
    if not isinstance(cols.buf, bytes):
        return records_json_py(batch, cols, print_data, write)
    base_seq = batch.base_sequence
    try:
        # (without a producer sequence the base offset is not needed: a wrapper's would mean decompressing it again)
        return _render(cols, batch.timestamp_type, batch.base_offset if base_seq >= 0 else 0, base_seq, print_data,
                       None, None, write)
    except OverflowError:  # an offset, timestamp or sequence beyond int64 (hostile input): the pure path copes
        return records_json_py(batch, cols, print_data, write)


def records_lines(batch, cols, bytes head not None, bytes tail not None, write=None):
    """``--format records``: each record of ``cols`` (as :func:`records_json` takes them, keys and values printed)
    on a line of its own, ``head`` + its members as :func:`records_json` writes them + ``tail``: ``head`` opens the
    object with the members before the record's own (topic, partition), ``tail`` holds those after them (the
    batch's, the path, the position) and closes the object and the line. Both are the same for every record of a
    batch, so they are given once, already JSON. Twin of :func:`kdump.render.records.records_lines_py`.

    With ``write`` (a binary stream's ``write``), the bytes are handed to it instead of returned, as a memoryview
    of the buffer they were built in (released when it returns: it must copy what it keeps), saving the copy into
    a bytes object: the records' lines are 3 times the text dump's bytes."""
    if not isinstance(cols.buf, bytes):
        return records_lines_py(batch, cols, head, tail, write)
    base_seq = batch.base_sequence
    try:
        return _render(cols, batch.timestamp_type, batch.base_offset if base_seq >= 0 else 0, base_seq, True,
                       head, tail, write)
    except OverflowError:  # as records_json
        return records_lines_py(batch, cols, head, tail, write)


cdef object _render(cols, timestamp_type, base_offset, base_seq, bint print_data, bytes head, bytes tail,
                    write=None):
    """The records as :func:`records_json` writes them; with ``head`` (and ``tail``), as :func:`records_lines`
    (with ``write``: handed to it, None returned)."""
    cdef Py_ssize_t i, n = cols.count
    cdef Py_ssize_t kl, vl
    cdef int64_t off, bo = base_offset
    cdef int64_t bs = base_seq
    cdef int ts_type = timestamp_type
    cdef list offsets = cols.offsets, timestamps = cols.timestamps, key_pos = cols.key_pos
    cdef list key_len = cols.key_len, value_pos = cols.value_pos, value_len = cols.value_len
    cdef list headers = cols.headers, sizes = cols.sizes
    cdef list crcs = cols.crcs, magics = cols.magics, valid = cols.valid
    cdef bint legacy = crcs is not None  # magic 0/1 messages: their own magic and CRC, no headers
    cdef bytes buf = cols.buf
    cdef const unsigned char* base = <const unsigned char*> PyBytes_AS_STRING(buf)
    cdef const unsigned char* limit = base + PyBytes_GET_SIZE(buf)
    cdef tuple hdrs
    cdef char *d
    cdef bint lines = head is not None
    cdef const char *head_p = NULL
    cdef const char *tail_p = NULL
    cdef Py_ssize_t head_n = 0, tail_n = 0
    if lines:
        head_p = PyBytes_AS_STRING(head)
        head_n = PyBytes_GET_SIZE(head)
        tail_p = PyBytes_AS_STRING(tail)
        tail_n = PyBytes_GET_SIZE(tail)
    if not -1 <= ts_type <= 1:
        raise OverflowError("no such timestamp type")  # (the pure path says what it is)
    cdef Out *o = start(&_kept)
    try:
        # a first guess; the records grow the buffer as needed
        reserve(o, n * ((320 if print_data else 200) + head_n + tail_n))
        for i in range(n):
            kl = key_len[i]
            vl = value_len[i]
            off = offsets[i]
            reserve(o, RECORD_ROOM + head_n + _bytes_of(kl) + _bytes_of(vl))
            d = o.data + o.len
            if lines:
                memcpy(d, head_p, head_n)
                d = _record_start(d + head_n, OFFSET, off, timestamps[i], ts_type, kl, vl)
            else:
                d = _record_start(d, FIRST_RECORD if i == 0 else NEXT_RECORD, off, timestamps[i], ts_type, kl, vl)
            d = _put_piece(d, SEQUENCE)
            d = write_int(d, record_sequence(bs, off, bo))
            d = _put_piece(d, SIZE)
            d = write_int(d, sizes[i])
            if legacy:
                d = write_int(_put_piece(d, LEGACY_MAGIC), magics[i])
                d = write_int(_put_piece(d, LEGACY_CRC), crcs[i])
                d = _put_piece(d, LEGACY_CRC_VALID if valid[i] else LEGACY_CRC_INVALID)
                if print_data:
                    d = _put_data(o, _put_piece(d, KEY), base + <Py_ssize_t>key_pos[i], kl, limit, KEY_ENCODING,
                                  RECORD_ROOM + _bytes_of(vl))
                    d = _put_data(o, d, base + <Py_ssize_t>value_pos[i], vl, limit, VALUE_ENCODING_END, RECORD_ROOM)
                else:
                    d[0] = b'}'
                    d += 1
                o.len = d - o.data
            else:
                hdrs = headers[i]
                if print_data:
                    d = _put_data(o, _put_piece(d, KEY), base + <Py_ssize_t>key_pos[i], kl, limit, KEY_ENCODING,
                                  RECORD_ROOM + _bytes_of(vl))
                    d = _put_data(o, d, base + <Py_ssize_t>value_pos[i], vl, limit, VALUE_ENCODING_HEADERS,
                                  RECORD_ROOM)
                    o.len = d - o.data
                    if hdrs:
                        _put_str(o, ", ".join([_header(h) for h in hdrs]))
                else:
                    o.len = _put_piece(d, HEADER_KEYS) - o.data
                    if hdrs:
                        _put_str(o, ", ".join([encode_basestring(h[0].decode("utf-8", "replace")) for h in hdrs]))
                put(o, b"]}", 2)
            if lines:  # the record's closing brace gives way to the batch's members, which close the object
                o.len -= 1
                put(o, tail_p, tail_n)
            if write is not None and o.len >= HAND_AT:
                _hand(o, write)
        if write is not None:
            _hand(o, write)
    except BaseException:
        release(o, &_kept)
        raise
    if write is None:
        return finish(o, &_kept)
    release(o, &_kept)
    return None


cdef int _hand(Out *o, write) except -1:
    """What ``o`` holds handed to ``write`` (a view of it, released after the call: a reference kept past it reads
    nothing, the buffer being reused), and ``o`` emptied."""
    view = PyMemoryView_FromMemory(o.data, o.len, PyBUF_READ)
    try:
        write(view)
    finally:
        view.release()
    o.len = 0
    return 0


# --- a run of plain magic 0/1 messages ---------------------------------------------------------------------------
def render_legacy_run_json(run, str path, tuple pieces, bint deep, bint print_data):
    """Every message of a :class:`~kdump.format.legacy.LegacyRun` of intact messages (one the resynchronising
    walk found: ``run.summary`` set) as the JSON dump writes a plain magic 0/1 message: its batch object (``pieces``:
    the text between the values that vary from message to message, from kdump.format.names' table, by
    :func:`kdump.render.jsonl.run_object_pieces`), with ``deep`` its record inside, each on a line, as UTF-8 bytes.
    The messages are read from ``run.data`` here (no Python object per message). Same bytes as the pure twin,
    which renders the messages one by one as batches (``path``: the file's, as the renderer shows it)."""
    data = run.data
    if run.summary is not None and isinstance(data, bytes) and type(run.position) is int and \
            type(run.count) is int and 0 <= run.count and len(pieces) == len(_RUN_FIELDS) + 1:
        try:
            return _render_run(data, run.position, run.count, pieces, deep, print_data)
        except (OverflowError, ValueError):  # a position beyond int64, data that is not the run's: the pure path
            pass
    return render_legacy_run_json_py(run, path, pieces, deep, print_data)


# The batch members _render_run writes itself (kdump.render.jsonl.RUN_OBJECT_FIELDS: the pieces come between them)
_RUN_FIELDS = ("position", "size", "base_offset", "last_offset", "magic", "crc", "timestamp_type", "max_timestamp")


cdef bytes _render_run(bytes data, int64_t position, Py_ssize_t count, tuple pieces, bint deep, bint print_data):
    cdef Py_ssize_t i, pos = 0, end = len(data), nxt
    cdef PlainMessage m
    cdef const unsigned char *p = <const unsigned char *> PyBytes_AS_STRING(data)
    cdef list keep = []
    cdef Piece piece[9]
    cdef Py_ssize_t room = RECORD_ROOM, head = 0
    cdef char *d
    cdef int ts_type
    for i in range(9):
        piece[i] = _piece_of(pieces[i], keep)
        head += PyBytes_GET_SIZE(pieces[i])
        room += PyBytes_GET_SIZE(pieces[i]) + INT_MAX_CHARS
    cdef Out *o = start(&_kept)
    try:
        # a first guess (the numbers, a record, its key and value); the messages grow the buffer as needed
        reserve(o, count * (head + 64 + ((256 + (128 if print_data else 0)) if deep else 0)))
        for i in range(count):
            nxt = read_plain(p, pos, end, &m)
            if nxt < 0:
                raise ValueError("no plain message where the run has one")
            ts_type = plain_timestamp_type(&m)
            reserve(o, room + _bytes_of(m.key_len) + _bytes_of(m.value_len))
            d = _put_piece(o.data + o.len, piece[0])
            d = write_int(d, position + pos)
            d = write_int(_put_piece(d, piece[1]), nxt - pos)
            d = _put_piece(d, piece[2])
            d = write_int(d, m.offset) if deep else _put_null(d)  # (shallow: not read, as for any legacy entry)
            d = write_int(_put_piece(d, piece[3]), m.offset)
            d = write_int(_put_piece(d, piece[4]), m.magic)
            d = write_int(_put_piece(d, piece[5]), m.crc)
            d = _put_piece(_put_piece(d, piece[6]), TIMESTAMP_TYPE_NAME[ts_type + 1])
            d = write_int(_put_piece(d, piece[7]), m.timestamp)
            d = _put_piece(d, piece[8])
            if deep:
                d = _record_start(d, FIRST_RECORD, m.offset, m.timestamp, ts_type, m.key_len, m.value_len)
                d = write_int(_put_piece(d, NO_SEQUENCE_SIZE), nxt - pos)
                d = write_int(_put_piece(d, LEGACY_MAGIC), m.magic)
                d = write_int(_put_piece(d, LEGACY_CRC), m.crc)
                d = _put_piece(d, LEGACY_CRC_VALID)  # (the walk that found the run checked every CRC)
                if print_data:
                    d = _put_data(o, _put_piece(d, KEY), p + m.key_pos, m.key_len, p + end, KEY_ENCODING,
                                  RECORD_ROOM + _bytes_of(m.value_len))
                    d = _put_data(o, d, p + m.value_pos, m.value_len, p + end, VALUE_ENCODING_END, RECORD_ROOM)
                else:
                    d[0] = b'}'
                    d += 1
                memcpy(d, b"]}\n", 3)
                d += 3
            o.len = d - o.data
            pos = nxt
    except BaseException:
        release(o, &_kept)
        raise
    return finish(o, &_kept)
