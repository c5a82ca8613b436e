# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Avro binary straight to compact JSON text, for the Schema Registry decoder's text (issue 24's speed).

The pure path reads a value with fastavro into Python objects and encodes them with ``json``
(kdump/decode/schema_registry/avro.py): per small record that costs twice fastavro's read alone. Here a schema
is compiled once into an :class:`AvroProgram` (a tree of nodes), which walks the Avro bytes and writes the JSON
text in one C buffer, with no Python object per field.

Same text as the pure path, always: a program is made only for schemas whose every type it reads exactly as
fastavro does (logical types included), and wherever the data is anything but a plain well-formed value
(truncated or trailing bytes, a union or enum index out of range, a boolean byte other than 0 or 1, an int
beyond 32 bits, a float that is not finite, a string that is not UTF-8, a map with a key twice, a date or time
beyond what Python's datetime holds, a uuid spelt otherwise than its canonical text, a decimal of more than 8
bytes or digits beyond its precision, nesting deeper than ``_MAX_DEPTH``) the program answers None and the
caller decodes that value on the pure path, which gives the value or the reason. ``tests/test_schema_registry_speed.py`` checks the two
differentially, on random schemas, values and corruptions.

Twins (``kdump._backend.pick``): :func:`avro_program` of ``avro.avro_program_py`` (which makes no program),
:func:`framed_texts` of ``decoder.framed_texts_py``.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free
from cpython.unicode cimport PyUnicode_DecodeUTF8
from libc.math cimport isfinite
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy, strlen

from kdump._bytebuf cimport ByteBuf, free_buffer, put, put_int, reserve
from kdump._bytescan cimport json_plain
from kdump.format._varint cimport VI_OK, read_raw

import sys
from json.encoder import encode_basestring  # what json's encoder (ensure_ascii=False) quotes strings with

from kdump.format.schema_registry import HEADER_SIZE, MAGIC

cdef extern from "Python.h":
    char *PyOS_double_to_string(double val, char format_code, int precision, int flags, int *ptype) except NULL
    int Py_DTSF_ADD_DOT_0

# The pure twins, handed over by kdump._backend.pick.
avro_program_py = None
framed_texts_py = None

cdef enum Kind:
    K_NULL, K_BOOLEAN, K_INT, K_LONG, K_FLOAT, K_DOUBLE, K_BYTES, K_STRING, K_RECORD, K_ENUM, K_ARRAY, K_MAP, \
        K_UNION, K_FIXED, \
        K_TIMESTAMP_MILLIS, K_TIMESTAMP_MICROS, K_LOCAL_TIMESTAMP_MILLIS, K_LOCAL_TIMESTAMP_MICROS, K_DATE, \
        K_TIME_MILLIS, K_TIME_MICROS, K_UUID, K_DECIMAL

cdef enum:
    _MAX_DEPTH = 100  # deeper data (a recursive type) goes to the pure path, which has Python's own limit
    _MAP_KEYS = 32  # a map's keys are checked to be distinct among this many; a bigger map goes to the pure path

# The logical types read here, by fastavro's key (underlying type, logical type): fastavro's conversions
# written as their readable forms (docs/schema-registry.md); decimal (on bytes or fixed) besides. Others leave
# the schema to fastavro.
_LOGICAL = {"long-timestamp-millis": K_TIMESTAMP_MILLIS, "long-timestamp-micros": K_TIMESTAMP_MICROS,
            "long-local-timestamp-millis": K_LOCAL_TIMESTAMP_MILLIS,
            "long-local-timestamp-micros": K_LOCAL_TIMESTAMP_MICROS, "int-date": K_DATE,
            "int-time-millis": K_TIME_MILLIS, "long-time-micros": K_TIME_MICROS, "string-uuid": K_UUID}

_PRIMITIVES = {"null": K_NULL, "boolean": K_BOOLEAN, "int": K_INT, "long": K_LONG, "float": K_FLOAT,
               "double": K_DOUBLE, "bytes": K_BYTES, "string": K_STRING}

cdef const char *_B64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


class _Unsupported(Exception):
    """A schema (part) the program does not read as fastavro does: the pure path reads it."""


cdef class _Node:
    cdef int kind
    cdef list children  # record: its fields' types; union: its branches; array: [items]; map: [values]
    cdef list labels  # record: b'{"name":', b',"next":' ...; enum: each symbol as a JSON string
    cdef Py_ssize_t size  # fixed: its size; a decimal: its fixed size, -1 on bytes
    cdef int precision, scale  # a decimal's

    def __cinit__(self, int kind):
        self.kind = kind
        self.children = []
        self.labels = []


cdef bytes _json_string(str text):
    return encode_basestring(text).encode("utf-8")


cdef _Node _compile(object schema, dict named, dict done):
    """The node reading ``schema`` (fastavro's parsed form: named types referred to by full name)."""
    cdef _Node node
    if isinstance(schema, str):
        kind = _PRIMITIVES.get(schema)
        if kind is not None:
            return _Node(kind)
        node = done.get(schema)
        if node is not None:
            return node
        if schema not in named:
            raise _Unsupported(schema)
        return _compile(named[schema], named, done)
    if isinstance(schema, list):
        node = _Node(K_UNION)
        node.children = [_compile(branch, named, done) for branch in schema]
        return node
    if not isinstance(schema, dict):
        raise _Unsupported(schema)
    kind_name = schema.get("type")
    if schema.get("logicalType") == "decimal" and kind_name in ("bytes", "fixed"):
        return _decimal(schema, done)
    if "logicalType" in schema:
        kind = _LOGICAL.get(f"{kind_name}-{schema['logicalType']}") if isinstance(kind_name, str) else None
        if kind is None:
            raise _Unsupported(schema)
        return _Node(kind)
    if isinstance(kind_name, str) and kind_name in _PRIMITIVES:
        return _Node(_PRIMITIVES[kind_name])
    if kind_name in ("record", "error"):
        node = done[schema["name"]] = _Node(K_RECORD)  # before its fields: a field may be of this type
        for i, f in enumerate(schema["fields"]):
            node.labels.append((b"{" if i == 0 else b",") + _json_string(f["name"]) + b":")
            node.children.append(_compile(f["type"], named, done))
        return node
    if kind_name == "enum":
        node = done[schema["name"]] = _Node(K_ENUM)
        node.labels = [_json_string(symbol) for symbol in schema["symbols"]]
        return node
    if kind_name == "fixed":
        node = done[schema["name"]] = _Node(K_FIXED)
        node.size = schema["size"]
        return node
    if kind_name == "array":
        node = _Node(K_ARRAY)
        node.children = [_compile(schema["items"], named, done)]
        return node
    if kind_name == "map":
        node = _Node(K_MAP)
        node.children = [_compile(schema["values"], named, done)]
        return node
    raise _Unsupported(schema)


cdef _Node _decimal(dict schema, dict done):
    """A decimal on bytes or fixed; its precision and scale as fastavro's reader takes them (its context's
    precision, the value scaled by 10**-scale)."""
    cdef _Node node = _Node(K_DECIMAL)
    precision, scale = schema.get("precision"), schema.get("scale", 0)
    if type(precision) is not int or type(scale) is not int or not 0 <= scale <= precision <= 1000:
        raise _Unsupported(schema)
    node.precision, node.scale = precision, scale
    node.size = -1
    if schema["type"] == "fixed":
        node.size = schema["size"]
        done[schema["name"]] = node
    return node


def avro_program(schema, dict named):
    """The program writing values of ``schema`` (parsed by fastavro; ``named``: its named types) as JSON text,
    or None where the schema holds a type the program leaves to fastavro (a logical type it does not read)."""
    if sys.byteorder != "little":  # the program copies Avro's little-endian floats as they are
        return None
    try:
        return AvroProgram(_compile(schema, named, {}))
    except _Unsupported:
        return None


cdef inline int _long(const unsigned char *p, Py_ssize_t *at, Py_ssize_t end, int64_t *out) noexcept:
    """Avro's long (a zig-zag varint, as Kafka's) at ``at``; -1 when it runs past ``end`` or beyond 64 bits."""
    cdef uint64_t raw
    if read_raw(p, at, end, 10, &raw) != VI_OK:
        return -1
    out[0] = <int64_t> (raw >> 1) ^ -<int64_t> (raw & 1)
    return 0


cdef int _put_double(ByteBuf *o, double v) except -1:
    """``v`` as ``float.__repr__`` writes it (what json's encoder writes for a finite float)."""
    cdef char *text = PyOS_double_to_string(v, b'r', 0, Py_DTSF_ADD_DOT_0, NULL)
    try:
        put(o, text, strlen(text))
    finally:
        PyMem_Free(text)
    return 0


cdef enum:
    _EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()
    _MAX_ORDINAL = 3652059  # date(9999, 12, 31).toordinal()

cdef const int64_t _DAY_MICROS = 86400000000


cdef inline void _two(char *d, int v) noexcept:
    d[0] = <char> (48 + v // 10)
    d[1] = <char> (48 + v % 10)


cdef int _put_date(ByteBuf *o, int64_t days) except -2:
    """``YYYY-MM-DD`` of the day ``days`` after 1970-01-01 (as ``date.isoformat``); -1 beyond years 1-9999."""
    cdef int64_t z, era, doe, yoe, doy, mp, y, m, d
    cdef char text[10]
    if days + _EPOCH_ORDINAL < 1 or days + _EPOCH_ORDINAL > _MAX_ORDINAL:
        return -1
    # the civil date of a day number (Howard Hinnant's days_from_civil, inverted)
    z = days + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    if m <= 2:
        y += 1
    _two(text, <int> (y // 100))
    _two(text + 2, <int> (y % 100))
    text[4] = b'-'
    _two(text + 5, <int> m)
    text[7] = b'-'
    _two(text + 8, <int> d)
    return put(o, text, 10)


cdef int _put_clock(ByteBuf *o, int64_t micros) noexcept:
    """``HH:MM:SS`` and ``.ffffff`` when there are microseconds (as ``time.isoformat``), of a time of day."""
    cdef char text[15]
    cdef int64_t seconds = micros // 1000000, fraction = micros % 1000000
    cdef int i
    _two(text, <int> (seconds // 3600))
    text[2] = b':'
    _two(text + 3, <int> (seconds // 60 % 60))
    text[5] = b':'
    _two(text + 6, <int> (seconds % 60))
    if fraction == 0:
        return put(o, text, 8)
    text[8] = b'.'
    for i in range(6):
        text[14 - i] = <char> (48 + fraction % 10)
        fraction //= 10
    return put(o, text, 15)


cdef int _put_timestamp(ByteBuf *o, int64_t micros, bint utc) except -2:
    """``"YYYY-MM-DDTHH:MM:SS[.ffffff][+00:00]"``: the time ``micros`` after the epoch as ``isoformat`` writes
    fastavro's datetime (``utc``: aware, in UTC); -1 beyond years 1-9999 (fastavro fails, and says why)."""
    cdef int64_t days = micros // _DAY_MICROS
    if micros % _DAY_MICROS < 0:  # C division truncates; days count down before the epoch
        days -= 1
    put(o, b'"', 1)
    if _put_date(o, days) < 0:
        return -1
    put(o, b"T", 1)
    _put_clock(o, micros - days * _DAY_MICROS)
    return put(o, b'+00:00"', 7) if utc else put(o, b'"', 1)


cdef int _put_decimal(ByteBuf *o, const unsigned char *p, Py_ssize_t n, int precision, int scale) except -2:
    """``"<digits>"``: ``str`` of fastavro's Decimal of the big-endian two's-complement integer ``p[:n]`` scaled
    by 10**-scale (plain notation, or Python's scientific one when more than 6 zeros would lead); -1 for more than
    8 bytes or more digits than the precision (fastavro's context would round)."""
    cdef int64_t v = 0
    cdef uint64_t u
    cdef char digits[24]
    cdef int count = 0, i, dot, left
    if n > 8:
        return -1
    if n:
        v = -1 if p[0] & 0x80 else 0
        for i in range(n):
            v = <int64_t> ((<uint64_t> v << 8) | p[i])
    u = <uint64_t> (-(v + 1)) + 1 if v < 0 else <uint64_t> v
    while True:
        digits[23 - count] = <char> (48 + u % 10)
        count += 1
        u //= 10
        if u == 0:
            break
    if count > precision:
        return -1
    put(o, b'"-' if v < 0 else b'"', 2 if v < 0 else 1)
    left = count - scale  # the digits before the point (Decimal's "leftdigits")
    dot = left if left > -6 else 1  # Decimal.__str__: plain unless the number is that small
    if dot <= 0:
        put(o, b"0.", 2)
        for i in range(-dot):
            put(o, b"0", 1)
        put(o, digits + 24 - count, count)
    elif dot >= count:
        put(o, digits + 24 - count, count)  # dot == count: scale 0, no point
    else:
        put(o, digits + 24 - count, dot)
        put(o, b".", 1)
        put(o, digits + 24 - count + dot, count - dot)
    if left != dot:
        put(o, b"E", 1)
        put_int(o, left - dot)  # always negative here: the sign is written by the number
    return put(o, b'"', 1)


cdef bint _canonical_uuid(const unsigned char *p, Py_ssize_t n) noexcept:
    """Whether ``p[:n]`` is a UUID as ``str(uuid.UUID(...))`` writes it (lowercase, hyphens at 8-4-4-4-12)."""
    cdef Py_ssize_t i
    cdef unsigned char c
    if n != 36:
        return False
    for i in range(36):
        c = p[i]
        if i == 8 or i == 13 or i == 18 or i == 23:
            if c != b'-':
                return False
        elif not (48 <= c <= 57 or 97 <= c <= 102):
            return False
    return True


cdef int _put_base64(ByteBuf *o, const unsigned char *p, Py_ssize_t n) except -1:
    """``"<standard base64, padded>"``: how the text shows bytes and fixed."""
    cdef Py_ssize_t i = 0
    cdef uint32_t w
    cdef char *d
    reserve(o, (n + 2) // 3 * 4 + 2)
    d = o.data + o.len
    d[0] = b'"'
    d += 1
    while i + 3 <= n:
        w = (<uint32_t> p[i] << 16) | (<uint32_t> p[i + 1] << 8) | p[i + 2]
        d[0] = _B64[w >> 18]
        d[1] = _B64[(w >> 12) & 63]
        d[2] = _B64[(w >> 6) & 63]
        d[3] = _B64[w & 63]
        d += 4
        i += 3
    if n - i == 1:
        w = <uint32_t> p[i] << 16
        d[0] = _B64[w >> 18]
        d[1] = _B64[(w >> 12) & 63]
        d[2] = b'='
        d[3] = b'='
        d += 4
    elif n - i == 2:
        w = (<uint32_t> p[i] << 16) | (<uint32_t> p[i + 1] << 8)
        d[0] = _B64[w >> 18]
        d[1] = _B64[(w >> 12) & 63]
        d[2] = _B64[(w >> 6) & 63]
        d[3] = b'='
        d += 4
    d[0] = b'"'
    o.len = d + 1 - o.data
    return 0


cdef int _length(const unsigned char *p, Py_ssize_t *at, Py_ssize_t end, Py_ssize_t *n) noexcept:
    """The length before bytes or a string: -1 when it is negative or runs past ``end``."""
    cdef int64_t v
    if _long(p, at, end, &v) < 0 or v < 0 or v > end - at[0]:
        return -1
    n[0] = <Py_ssize_t> v
    return 0


cdef int _put_string(ByteBuf *o, const unsigned char *p, Py_ssize_t n) except -2:
    """A UTF-8 string as a JSON string; -1 when it is not UTF-8 (fastavro's strict decoding refuses it)."""
    cdef str text
    if json_plain(p, n):
        put(o, b'"', 1)
        put(o, p, n)
        return put(o, b'"', 1)
    try:
        text = PyUnicode_DecodeUTF8(<const char *> p, n, NULL)
    except UnicodeDecodeError:
        return -1
    b = _json_string(text)
    return put(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))


cdef int _block(const unsigned char *p, Py_ssize_t *at, Py_ssize_t end, int64_t *count) noexcept:
    """The item count of the next block of an array or map (its byte size, after a negative count, skipped);
    -1 for a count that cannot be right: more items than bytes left (the pure path judges those)."""
    cdef int64_t size
    if _long(p, at, end, count) < 0:
        return -1
    if count[0] < 0:
        if count[0] == -count[0] or _long(p, at, end, &size) < 0:  # the most negative int64
            return -1
        count[0] = -count[0]
    return -1 if count[0] > end - at[0] else 0


cdef int _write(_Node node, const unsigned char *p, Py_ssize_t *at, Py_ssize_t end, ByteBuf *o,
                int depth) except -2:
    """The JSON text of one value of ``node`` at ``at`` (moved past it); -1: leave this value to the pure path."""
    cdef int64_t v, count
    cdef Py_ssize_t n, i, j, keys = 0
    cdef double d
    cdef float f
    cdef const unsigned char *key_at[_MAP_KEYS]
    cdef Py_ssize_t key_len[_MAP_KEYS]
    cdef int kind = node.kind
    cdef list children
    if depth > _MAX_DEPTH:
        return -1
    if kind == K_NULL:
        return put(o, b"null", 4)
    if kind == K_BOOLEAN:
        if at[0] >= end or p[at[0]] > 1:
            return -1
        at[0] += 1
        return put(o, b"true", 4) if p[at[0] - 1] else put(o, b"false", 5)
    if kind == K_INT or kind == K_LONG:
        if _long(p, at, end, &v) < 0 or (kind == K_INT and v != <int32_t> v):
            return -1
        return put_int(o, v)
    if kind >= K_TIMESTAMP_MILLIS and kind <= K_TIME_MICROS:
        if _long(p, at, end, &v) < 0:
            return -1
        if kind == K_DATE:
            if v != <int32_t> v:
                return -1
            put(o, b'"', 1)
            if _put_date(o, v) < 0:
                return -1
            return put(o, b'"', 1)
        if kind == K_TIME_MILLIS or kind == K_TIME_MICROS:
            if kind == K_TIME_MILLIS:
                if v != <int32_t> v or v < 0 or v >= 86400000:
                    return -1  # fastavro's time() of it fails, or wraps: it decides
                v *= 1000
            elif v < 0 or v >= _DAY_MICROS:
                return -1
            put(o, b'"', 1)
            _put_clock(o, v)
            return put(o, b'"', 1)
        if kind == K_TIMESTAMP_MILLIS or kind == K_LOCAL_TIMESTAMP_MILLIS:
            if v > 9223372036854775 or v < -9223372036854775:
                return -1
            v *= 1000
        return _put_timestamp(o, v, kind == K_TIMESTAMP_MILLIS or kind == K_TIMESTAMP_MICROS)
    if kind == K_DECIMAL:
        if node.size < 0:
            if _length(p, at, end, &n) < 0:
                return -1
        elif end - at[0] < node.size:
            return -1
        else:
            n = node.size
        at[0] += n
        return _put_decimal(o, p + at[0] - n, n, node.precision, node.scale)
    if kind == K_UUID:
        if _length(p, at, end, &n) < 0 or not _canonical_uuid(p + at[0], n):
            return -1  # another spelling: uuid.UUID() rewrites it, or refuses it
        at[0] += n
        put(o, b'"', 1)
        put(o, p + at[0] - n, n)
        return put(o, b'"', 1)
    if kind == K_DOUBLE or kind == K_FLOAT:
        n = 8 if kind == K_DOUBLE else 4
        if end - at[0] < n:
            return -1
        if kind == K_DOUBLE:
            memcpy(&d, p + at[0], 8)  # Avro's doubles and floats are little-endian, as this machine's
        else:
            memcpy(&f, p + at[0], 4)
            d = f
        if not isfinite(d):
            return -1
        at[0] += n
        return _put_double(o, d)
    if kind == K_STRING or kind == K_BYTES:
        if _length(p, at, end, &n) < 0:
            return -1
        at[0] += n
        return _put_string(o, p + at[0] - n, n) if kind == K_STRING else _put_base64(o, p + at[0] - n, n)
    if kind == K_FIXED:
        if end - at[0] < node.size:
            return -1
        at[0] += node.size
        return _put_base64(o, p + at[0] - node.size, node.size)
    if kind == K_RECORD:
        children = node.children
        if not children:
            return put(o, b"{}", 2)
        for i in range(len(children)):
            b = node.labels[i]
            put(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))
            if _write(<_Node> children[i], p, at, end, o, depth + 1) < 0:
                return -1
        return put(o, b"}", 1)
    if kind == K_ENUM or kind == K_UNION:
        if _long(p, at, end, &v) < 0:
            return -1
        n = len(node.labels) if kind == K_ENUM else len(node.children)
        if v < 0 or v >= n:
            return -1
        if kind == K_UNION:
            return _write(<_Node> node.children[v], p, at, end, o, depth + 1)
        b = node.labels[v]
        return put(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))
    if kind == K_ARRAY or kind == K_MAP:
        put(o, b"[" if kind == K_ARRAY else b"{", 1)
        n = 0
        while True:
            if _block(p, at, end, &count) < 0:
                return -1
            if count == 0:
                break
            for i in range(count):
                if n:
                    put(o, b",", 1)
                n += 1
                if kind == K_MAP:
                    if keys == _MAP_KEYS or _length(p, at, end, &key_len[keys]) < 0:
                        return -1
                    key_at[keys] = p + at[0]
                    at[0] += key_len[keys]
                    for j in range(keys):  # a key twice: fastavro's dict keeps the last value in the first place
                        if key_len[j] == key_len[keys] and memcmp(key_at[j], key_at[keys], key_len[j]) == 0:
                            return -1
                    if _put_string(o, key_at[keys], key_len[keys]) < 0:
                        return -1
                    keys += 1
                    put(o, b":", 1)
                if _write(<_Node> node.children[0], p, at, end, o, depth + 1) < 0:
                    return -1
        return put(o, b"]" if kind == K_ARRAY else b"}", 1)
    return -1


cdef ByteBuf _out  # kept from call to call; a call while it is in use (another thread) builds in its own
cdef bint _busy = False


cdef class AvroProgram:
    """Writes the values of one Avro schema as compact JSON text (see the module's doc)."""

    cdef _Node root

    def __cinit__(self, _Node root):
        self.root = root

    cdef object _text(self, const unsigned char *p, Py_ssize_t start, Py_ssize_t end):
        """The text of the one value filling ``p[start:end]``, or None (the pure path decides)."""
        global _busy
        cdef ByteBuf own
        cdef ByteBuf *o = &_out
        cdef Py_ssize_t at = start
        cdef int done
        if _busy:
            own.data = NULL
            own.len = own.cap = 0
            o = &own
        else:
            _busy = True
        o.len = 0
        try:
            done = _write(self.root, p, &at, end, o, 0)
            if done < 0 or at != end:
                return None
            return PyUnicode_DecodeUTF8(o.data, o.len, NULL)
        finally:
            if o == &_out:
                _busy = False
                if _out.cap > (1 << 20):
                    free_buffer(&_out)
            else:
                free_buffer(o)

    def text(self, bytes framed, Py_ssize_t start):
        """The JSON text of the value in ``framed`` from ``start``, or None: the pure path decides."""
        if start < 0 or start > PyBytes_GET_SIZE(framed):
            return None
        return self._text(<const unsigned char *> PyBytes_AS_STRING(framed), start, PyBytes_GET_SIZE(framed))


def framed_texts(buf, list positions, list lengths, dict programs, fallback):
    """The text of each payload ``buf[positions[i]:positions[i] + lengths[i]]`` (None for length -1, a null):
    by the program of its schema id in ``programs`` where there is one and it reads the value, else
    ``fallback(payload bytes)`` (which gives the text or the reason)."""
    cdef Py_ssize_t i, pos, n
    cdef const unsigned char *p
    cdef uint32_t sid
    cdef list out = []
    cdef object text
    cdef AvroProgram program
    if not isinstance(buf, bytes):
        return framed_texts_py(buf, positions, lengths, programs, fallback)
    cdef Py_ssize_t size = PyBytes_GET_SIZE(buf)
    cdef const unsigned char *base = <const unsigned char *> PyBytes_AS_STRING(buf)
    cdef Py_ssize_t header = HEADER_SIZE
    cdef int magic = MAGIC
    for i in range(len(lengths)):
        n = lengths[i]
        if n < 0:
            out.append(None)
            continue
        pos = positions[i]
        text = None
        if programs and n >= header and 0 <= pos <= size - n:
            p = base + pos
            if p[0] == magic:
                # the registry's schema id: 4 bytes, big-endian, signed (kdump.format.schema_registry)
                sid = (<uint32_t> p[1] << 24) | (<uint32_t> p[2] << 16) | (<uint32_t> p[3] << 8) | p[4]
                found = programs.get(<int32_t> sid)
                if found is not None:
                    program = <AvroProgram> found
                    text = program._text(p, header, n)
        if text is None:
            text = fallback(buf[pos:pos + n])
        out.append(text)
    return out
