"""Java's UTF-8 decoding (``new String(bytes, UTF_8)``), byte for byte: a byte-level text rule shared by the
schema reader (``kdump/format/schema.py``), the payload printers (``kdump/decode/payload.py``) and the
record-line renderers (``kdump/render/``), so it sits below all of them."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

_REPLACEMENT = "\ufffd"
_JAVA_ERROR_HANDLER = "kdump-java"

# An encoded UTF-16 surrogate as Java's decoder sees it: ED, A0-BF, and the
# following continuation byte if there is one.
_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]?")


def _java_replace(exc: UnicodeError) -> tuple[str, int]:
    """Codec error handler (``errors="kdump-java"``) substituting U+FFFD like Java.

    Python's ``errors="replace"`` and Java's decoder agree on every malformed
    sequence except one: an encoded UTF-16 surrogate, ``ED`` followed by
    ``A0``-``BF``.  Python's decoder rejects the ``ED`` at once (its second
    byte may only be ``80``-``9F``) and then each following byte on its own,
    giving one U+FFFD per byte.  Java's decoder first takes the bytes as a
    3-byte sequence and only then notices the result is a surrogate, so it
    emits a single U+FFFD for ``ED``, the ``A0``-``BF`` byte and one more
    continuation byte (``80``-``BF``) if one follows.  Verified against
    fixtures/java-utf8/vectors.txt (all 1-3 byte sequences and random strings
    run through Java).

    At an encoded surrogate the handler returns one U+FFFD covering it.  At
    any other error it returns what ``"replace"`` gives for everything up to
    the next encoded surrogate (or the end), not just for the one malformed
    sequence it was called for: the result is the same, but binary data is
    then handled by the C decoder in a few calls instead of one Python call
    per bad byte (about 20x faster on random bytes).  Cutting the input just
    before an ``ED`` is safe because ``ED`` is never a continuation byte, so
    both decoders always start a new sequence there.
    """
    if not isinstance(exc, UnicodeDecodeError):
        # Only meaningful for decoding; let encode/translate errors surface.
        raise exc
    data = exc.object
    start = exc.start
    match = _ENCODED_SURROGATE.search(data, start)
    if match is None:
        return str(data[start:], "utf-8", "replace"), len(data)
    if match.start() == start:
        return _REPLACEMENT, match.end()
    # Decoding resumes at the surrogate, which calls us again with it at start.
    return str(data[start : match.start()], "utf-8", "replace"), match.start()


codecs.register_error(_JAVA_ERROR_HANDLER, _java_replace)


def java_utf8(data: bytes | bytearray | memoryview) -> str:
    """Decode ``data`` exactly like Java's ``new String(data, UTF_8)``.

    Invalid UTF-8 becomes U+FFFD following Java's rules, which differ from
    Python's ``errors="replace"`` only for encoded surrogates (see
    :func:`_java_replace`).  The result never contains a surrogate code point,
    so it can always be encoded back to UTF-8 for output.

    Accepts any bytes-like object (``bytes``, ``bytearray``, ``memoryview``).
    """
    # Almost every real key and value is valid UTF-8: the strict C decoder is
    # the fastest way to handle it, and for valid input Java and Python agree.
    try:
        return str(data, "utf-8")
    except UnicodeDecodeError:
        pass
    # The error handler works on exc.object, which must be real bytes for the
    # slicing in it; copying is cheap next to decoding malformed input.
    return str(bytes(data), "utf-8", _JAVA_ERROR_HANDLER)


def _continuation(byte: int) -> bool:
    return 0x80 <= byte <= 0xBF


def utf8_slices(data, start: int, stop: int, size: int) -> Iterator[tuple[int, int]]:
    """``(a, b)`` bounds of consecutive slices of ``data[start:stop]``, each at most ``size`` bytes (at least
    ``size - 3`` but the last), cut where no UTF-8 sequence can be in progress, so that decoding the slices one
    by one gives what decoding the whole gives, valid or not (:func:`java_utf8`, and a strict decoder's verdict).

    A cut goes before a byte that is not a continuation byte (80-BF): neither Java's decoder nor Python's takes
    one into a sequence begun before it, malformed or not. Where the last bytes before the cut are all
    continuation bytes, the cut goes after three of them: a lead byte takes at most three (Java's encoded
    surrogate, ED A0-BF and one more, included), so none can still be waiting for more."""
    if size < 4:
        raise ValueError(f"a slice of UTF-8 is at least 4 bytes, not {size}")
    a = start
    while stop - a > size:
        b = a + size
        cut = next((c for c in range(b, b - 4, -1) if not _continuation(data[c])), b)
        yield a, cut
        a = cut
    if a < stop:
        yield a, stop
