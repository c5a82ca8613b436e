"""A key, value or header value too large to render whole, written in slices (issue 22 item 2).

A record may be as large as a batch (256 MiB by default). Rendered whole, one value of bytes that are not UTF-8
takes several times its size: Java's decoding gives a U+FFFD per bad byte (3 bytes of UTF-8 each, and a str of
4 bytes a character on the way), JSON base64 or escapes. So the text and JSON renderers hand a record holding a
field above :data:`LARGE_FIELD_BYTES` to the functions here, which write that field a slice of about
:data:`SLICE_BYTES` at a time (the per-byte work stays in the C codecs), and render every other record as
before. The slices are cut where no UTF-8 sequence is in progress (:func:`kdump.format.text.utf8_slices`), so
the output is byte for byte what the whole field gives.

A field a decoder prints (``--key-decoder``, ``--value-decoder``, ``--header-decoder``, the Schema Registry) is
not one of these: a decoder is asked for the whole value's text, and that text is held whole.
"""
from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from json.encoder import encode_basestring  # what json.dumps(..., ensure_ascii=False) quotes strings with

from kdump.format.text import java_utf8, utf8_slices

# A key, value or header value longer than this is written in slices (tests lower it).
LARGE_FIELD_BYTES = 1 << 20
# The bytes of a field rendered at a time: a few times this in memory, whatever the field's size.
SLICE_BYTES = 1 << 20


def is_large(length: int) -> bool:
    return length > LARGE_FIELD_BYTES


def records_with_large_fields(cols, header_values: bool) -> list[int]:
    """The indices of the records of ``cols`` holding a key or value (with ``header_values``, a header value too)
    above :data:`LARGE_FIELD_BYTES`. Every field is inside ``cols.buf`` and a record is at least as long as its
    fields: the common chunk is passed by the buffer's length, or else by one ``max`` over the record sizes (a
    ``max`` per batch alone was 4 % of a text dump)."""
    if not cols.count or len(cols.buf) <= LARGE_FIELD_BYTES or max(cols.sizes) <= LARGE_FIELD_BYTES:
        return []
    key_len, value_len, headers = cols.key_len, cols.value_len, cols.headers
    return [i for i, size in enumerate(cols.sizes) if size > LARGE_FIELD_BYTES and (
        is_large(key_len[i]) or is_large(value_len[i])
        or (header_values and any(v is not None and is_large(len(v)) for _, v in headers[i])))]


def _slices(data, pos: int, n: int) -> Iterator[memoryview]:
    view = memoryview(data)
    for a, b in utf8_slices(view, pos, pos + n, SLICE_BYTES):
        yield view[a:b]


# --- Kafka's text: Java's decoding of the bytes -------------------------------------------------------------

def java_text_pieces(data, pos: int, n: int) -> Iterator[str]:
    """``java_utf8(data[pos:pos + n])`` in pieces (their concatenation is the whole's text)."""
    for piece in _slices(data, pos, n):
        yield java_utf8(piece)


# --- JSON: UTF-8 text where the whole field is, else base64 -------------------------------------------------

def is_utf8(data, pos: int, n: int) -> bool:
    """Whether ``data[pos:pos + n]`` is valid UTF-8, checked a slice at a time."""
    try:
        for piece in _slices(data, pos, n):
            str(piece, "utf-8")
    except UnicodeDecodeError:
        return False
    return True


class JsonString:
    """A JSON string written in pieces: ``pieces`` gives the UTF-8 bytes between its quotes."""

    __slots__ = ("pieces",)

    def __init__(self, pieces: Iterator[bytes]):
        self.pieces = pieces


def json_field(data, pos: int, n: int) -> tuple[JsonString, str]:
    """A field's JSON string and its encoding (``"utf8"`` or ``"base64"``), as :func:`kdump.render.jsonl`
    renders a field whole: its text escaped as ``json.dumps`` escapes it where it is UTF-8, else base64."""
    if is_utf8(data, pos, n):
        return JsonString(_escaped_pieces(data, pos, n)), "utf8"
    return JsonString(_base64_pieces(data, pos, n)), "base64"


def _escaped_pieces(data, pos: int, n: int) -> Iterator[bytes]:
    for piece in _slices(data, pos, n):
        yield encode_basestring(str(piece, "utf-8"))[1:-1].encode("utf-8")


def _base64_pieces(data, pos: int, n: int) -> Iterator[bytes]:
    view = memoryview(data)
    step = SLICE_BYTES - SLICE_BYTES % 3  # whole groups of 3 bytes: the pieces' base64 is the whole's
    for a in range(pos, pos + n, step):
        yield base64.b64encode(view[a:min(a + step, pos + n)])


def json_pieces(value) -> Iterator[bytes]:
    """``json.dumps(value, ensure_ascii=False)`` in UTF-8, in pieces, where ``value`` (dicts, lists, scalars) may
    hold :class:`JsonString` s, each written as its pieces come."""
    if isinstance(value, JsonString):
        yield b'"'
        yield from value.pieces
        yield b'"'
    elif isinstance(value, dict):
        yield b"{"
        for i, (name, item) in enumerate(value.items()):
            yield (b", " if i else b"") + _dumped(name) + b": "
            yield from json_pieces(item)
        yield b"}"
    elif isinstance(value, list):
        yield b"["
        for i, item in enumerate(value):
            if i:
                yield b", "
            yield from json_pieces(item)
        yield b"]"
    else:
        yield _dumped(value)


def _dumped(value) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogateescape")
