"""Untrusted text made safe for a terminal: the one escaping function of kdump (:func:`escape`), used for
record data on a terminal, file names in messages (:func:`printable_path`) and the replays' tables.

Keys, values, header values, file names and messages quoting them come from the data; written raw to a
terminal, their control characters and escape sequences act (``ESC ] 52`` writes the clipboard, ``ESC ] 0``
sets the title, ``ESC [ 2J`` clears the screen, ``\\r`` overwrites a line, bidi overrides reorder what is
shown). On a terminal kdump shows them escaped, as ``less`` and ``cat -v`` do; a pipe gets the bytes
unchanged (Kafka's text exactly), so only output that reaches a terminal goes through :func:`escape`.

Escaped, as ``\\xNN`` (``\\uNNNN`` above U+00FF): C0 controls (U+0000-U+001F) except tab, DEL (U+007F), C1
controls (U+0080-U+009F, which some terminals obey in UTF-8 too), every invisible format character
(Unicode categories Cf, Zl and Zp: zero-width space and joiners, LRM/RLM/ALM, the bidi embeddings, overrides and
isolates, BOM, word joiner, soft hyphen, line and paragraph separators; and the tag block U+E0000-U+E007F, as
``\\U000e0041``), and lone surrogates (bytes that were not UTF-8, carried by
``surrogateescape``; shown as the byte they stand for). A tab is kept unless ``keep_tab=False`` (aligned
columns).
"""
from __future__ import annotations

import os
import re

__all__ = ["escape", "escape_json", "for_stream", "is_terminal", "printable_path"]

# Every invisible format character: Unicode's general categories Cf (format: soft hyphen, zero-width space,
# joiner and non-joiner, LRM/RLM/ALM, the bidi embeddings, overrides and isolates, word joiner, BOM, interlinear
# annotation, the Arabic number signs, ...), Zl and Zp (line and paragraph separators), and the whole tag block
# U+E0000-U+E007F. Spelled out (a class built from unicodedata at import would cost every command's start);
# tests/test_terminal_safety.py checks it against unicodedata. U+13439-U+1343F became Cf in Unicode 15.
_FORMAT_CLASS = ("\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
                 "\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
                 "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f")
_UNSAFE_CLASS = f"\x00-\x08\x0a-\x1f\x7f-\x9f{_FORMAT_CLASS}\ud800-\udfff"
_UNSAFE = re.compile(f"[{_UNSAFE_CLASS}]")
_UNSAFE_OR_TAB = re.compile(f"[\t{_UNSAFE_CLASS}]")
# In JSON text the C0 controls are already escaped by the encoder; these are the rest a terminal would obey.
_JSON_UNSAFE = re.compile(f"[\x7f-\x9f{_FORMAT_CLASS}\ud800-\udfff]")


def _shown(m: re.Match) -> str:
    c = ord(m.group())
    if 0xDC80 <= c <= 0xDCFF:  # surrogateescape: a byte that was not UTF-8
        return f"\\x{c - 0xDC00:02x}"
    if c > 0xFFFF:  # a tag character: Python's (and JSON5's) 8-digit form
        return f"\\U{c:08x}"
    return f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}"


def _json_shown(m: re.Match) -> str:
    c = ord(m.group())
    if c > 0xFFFF:  # JSON has \u escapes of UTF-16 units only: a surrogate pair, the same JSON value
        c -= 0x10000
        return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"
    return f"\\u{c:04x}"


def escape(text: str, *, keep_tab: bool = True) -> str:
    """``text`` with every character a terminal would act on shown escaped (see the module docstring)."""
    pattern = _UNSAFE if keep_tab else _UNSAFE_OR_TAB
    if pattern.search(text) is None:  # the common case: nothing to do, no copy
        return text
    return pattern.sub(_shown, text)


def escape_json(text: str) -> str:
    """JSON text (``json.dumps`` output) with DEL, C1 controls, bidi characters and lone surrogates written as
    ``\\uXXXX`` escapes: the same JSON values, nothing a terminal obeys."""
    if _JSON_UNSAFE.search(text) is None:
        return text
    return _JSON_UNSAFE.sub(_json_shown, text)


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a closed or exotic stream
        return False


def for_stream(text: str, stream) -> str:
    """``text`` escaped when ``stream`` is a terminal, unchanged otherwise (a pipe or a file gets the bytes)."""
    return escape(text) if is_terminal(stream) else text


def printable_path(path) -> str:
    """A file name as it can be printed anywhere: a name is bytes to the kernel, and may be neither UTF-8 nor
    free of control characters; undecodable bytes (kept as surrogates by ``os.fsdecode``) and control
    characters appear as backslash escapes (``\\xff``), tabs too."""
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    return escape(str(path), keep_tab=False)
