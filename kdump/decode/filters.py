"""Which batches and records a command shows (``kdump dump``'s filters; usable by any command that walks
batches): every filter given must hold (AND).

Two levels, so that the cheap one runs first:

* :meth:`RecordFilter.batch_may_match` looks at a batch's header only (producer id, transactional and
  control flags, codec, magic). A batch it rejects is never decompressed or decoded. When a record-level
  filter is given, control batches are rejected here too: their records are markers, not data.
* :meth:`RecordFilter.select` keeps the records of a decoded chunk whose key, value and headers match.
  Keys, values and header values are compared in their decoded form (the decoders of ``--key-decoder``,
  ``--value-decoder``, ``--header-decoder``; Java's UTF-8 by default): ``key`` and a header's value
  exactly, ``key_match`` and ``value_match`` as a regular expression found anywhere in the text
  (``re.search``; anchor with ``^``/``$``). A null key, value or header value matches nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from kdump.decode.payload import DecoderError


@dataclass(frozen=True)
class RecordFilter:
    # header level
    producer_id: int | None = None
    transactional: bool | None = None  # True: transactional batches only; False: non-transactional only
    control_only: bool = False
    codec_id: int | None = None
    magic: int | None = None
    # record level (decoded form)
    key: str | None = None
    key_match: re.Pattern | None = None
    value_match: re.Pattern | None = None
    headers: tuple = ()  # (key text, value text or None for "any value") pairs; each must be present
    key_decoder: object = None
    value_decoder: object = None
    header_decoder: object = None

    @property
    def record_level(self) -> bool:
        """Are records filtered (so that a batch must be decoded to know whether it matches)?"""
        return (self.key is not None or self.key_match is not None or self.value_match is not None
                or bool(self.headers))

    def batch_may_match(self, batch) -> bool:
        """Can any record of ``batch`` match, by its header alone (nothing decompressed)?"""
        if self.magic is not None and batch.magic != self.magic:
            return False
        if self.codec_id is not None and batch.codec_id != self.codec_id:
            return False
        if self.producer_id is not None and batch.producer_id != self.producer_id:
            return False
        if self.transactional is not None and bool(batch.is_transactional) != self.transactional:
            return False
        if batch.is_control:
            return not self.record_level
        return not self.control_only

    def select(self, cols):
        """The records of ``cols`` (:class:`~kdump.format.columns.RecordColumns`) that match, as columns."""
        if not self.record_level:
            return cols
        candidates: range | list[int] = range(cols.count)
        check_key = self.key is not None or self.key_match is not None
        raw_key = self._raw_key()
        if raw_key is not None:  # an exact key in Java's UTF-8: compared as bytes, nothing decoded
            n, buf, key_pos, key_len = len(raw_key), cols.buf, cols.key_pos, cols.key_len
            candidates = [i for i in candidates if key_len[i] == n and buf[key_pos[i]:key_pos[i] + n] == raw_key]
            check_key = self.key_match is not None
        keep = [i for i in candidates if self._record_matches(cols, i, check_key)]
        if len(keep) == cols.count:
            return cols
        return cols.take(keep)

    def _raw_key(self) -> bytes | None:
        """The bytes an exact ``key`` must be when keys are decoded as Java's UTF-8 (one text, one encoding:
        valid UTF-8 decodes one way, and text without U+FFFD cannot come from invalid bytes); else None."""
        if self.key is None or getattr(self.key_decoder or _STRING, "name", None) != "string" or "\ufffd" in self.key:
            return None
        try:
            return self.key.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: no bytes decode to it
            return None

    def _record_matches(self, cols, i: int, check_key: bool = True) -> bool:
        if check_key:
            text = _decoded(self.key_decoder, cols.key(i))
            if text is None or (self.key is not None and text != self.key) or \
                    (self.key_match is not None and self.key_match.search(text) is None):
                return False
        if self.value_match is not None:
            text = _decoded(self.value_decoder, cols.value(i))
            if text is None or self.value_match.search(text) is None:
                return False
        for name, wanted in self.headers:
            if not any(self._header_matches(k, v, name, wanted) for k, v in cols.headers[i]):
                return False
        return True

    def _header_matches(self, key: bytes, value, name: str, wanted: str | None) -> bool:
        if _decoded(_STRING, key) != name:
            return False
        return wanted is None or _decoded(self.header_decoder, value) == wanted


class _JavaUtf8:
    name = "string"

    @staticmethod
    def decode(data: bytes) -> str:
        from kdump.format.text import java_utf8
        return java_utf8(data)


_STRING = _JavaUtf8()


def _decoded(decoder, data) -> str | None:
    """``data`` decoded for comparison; None for null bytes or bytes the decoder refuses (they match nothing)."""
    if data is None:
        return None
    try:
        return (decoder or _STRING).decode(data)
    except DecoderError:
        return None


def parse_header_filter(text: str) -> tuple[str, str | None]:
    """``KEY`` or ``KEY=VALUE`` (split at the first ``=``) as a (key, value or None) pair."""
    key, sep, value = text.partition("=")
    return key, (value if sep else None)


def compile_pattern(text: str, flag: str) -> re.Pattern:
    """A regular expression from the command line; ValueError naming ``flag`` if it does not compile."""
    try:
        return re.compile(text)
    except re.error as e:
        raise ValueError(f"{flag}: {text!r} is not a regular expression: {e}") from None
