"""kdump's canonical record form (not a Kafka format): a record as a reader of it sees it, in one unambiguous
byte string. ``kdump convert`` feeds the canonical form of every record it writes to a digest, and its
verification recomputes the digest from the records read back from the written file.

* :func:`canonical_record` -- one record;
* :func:`canonical_records` -- every record of a :class:`~kdump.format.columns.RecordColumns`, joined (compiled
  twin: ``kdump.format._encode.canonical_records``, chosen by :mod:`kdump._backend`).
"""
from __future__ import annotations

from kdump.format import layout as L
from kdump.format.pieces import LARGE_RECORD_BYTES

_CANON_HEAD = L.CANONICAL_RECORD_HEAD  # offset, timestamp, timestamp type, key length, value length, headers
_INT32 = L.INT32
NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME = -1, 0, 1  # TimestampType's values, as ints


def canonical_record(offset: int, timestamp: int, timestamp_type: int, key, value, headers=()) -> bytes:
    """A record as a reader of the output should see it, in one unambiguous byte string."""
    if not headers:  # every legacy record and most v2 ones: one join, no list
        head = _CANON_HEAD.pack(offset, timestamp, timestamp_type, -1 if key is None else len(key),
                                -1 if value is None else len(value), 0)
        return b"".join((head, key or b"", value or b""))
    return b"".join(_canonical_parts(offset, timestamp, timestamp_type, key, value, headers))


def _canonical_parts(offset: int, timestamp: int, timestamp_type: int, key, value, headers) -> list:
    """:func:`canonical_record` as the pieces that, one after the other, are its bytes (key and value as given)."""
    head = _CANON_HEAD.pack(offset, timestamp, timestamp_type, -1 if key is None else len(key),
                            -1 if value is None else len(value), len(headers))
    parts = [head]
    if key is not None:
        parts.append(key)
    if value is not None:
        parts.append(value)
    for hkey, hvalue in headers:
        parts.append(_INT32.pack(len(hkey)))
        parts.append(hkey)
        parts.append(_INT32.pack(-1 if hvalue is None else len(hvalue)))
        if hvalue is not None:
            parts.append(hvalue)
    return parts


def message_timestamp_type(magic: int, attributes: int) -> int:
    """The timestamp type of a magic 0/1 message (``LegacyRecord.timestampType``), as an int."""
    if magic == 0:
        return NO_TIMESTAMP_TYPE
    return LOG_APPEND_TIME if attributes & L.LEGACY_TIMESTAMP_TYPE_MASK else CREATE_TIME


def canonical_records_py(cols, timestamp_type: int | None, timestamp: int | None = None, headers: bool = True) -> bytes:
    """:func:`canonical_record` of every record of ``cols`` (a :class:`~kdump.format.columns.RecordColumns`),
    joined. ``timestamp_type``: every record's, or None for each magic 0/1 message's own (from ``magics`` and
    ``attributes``); ``timestamp``: every record's (a LogAppendTime batch's, or -1 written in magic 0), or None
    for each record's own; ``headers`` False: the records as written where headers are not (magic 0/1).

    Compiled twin: ``kdump.format._encode.canonical_records``."""
    out = []
    offsets, timestamps = cols.offsets, cols.timestamps
    record_headers = cols.headers if headers else [()] * cols.count
    for i in range(cols.count):
        ts_type = timestamp_type if timestamp_type is not None else \
            message_timestamp_type(cols.magics[i], cols.attributes[i])
        out.append(canonical_record(offsets[i], timestamps[i] if timestamp is None else timestamp, ts_type,
                                    cols.key(i), cols.value(i), record_headers[i]))
    return b"".join(out)


def update_canonical(update, cols, timestamp_type: int | None, timestamp: int | None = None,
                     headers: bool = True) -> None:
    """``update`` (a digest's) with :func:`canonical_records` of ``cols``, the same bytes; a chunk holding a record
    above :data:`~kdump.format.pieces.LARGE_RECORD_BYTES` a piece at a time, its keys and values as views of the
    batch read (joined, the canonical form of a 255 MiB value would hold it twice more)."""
    if max(cols.sizes, default=0) <= LARGE_RECORD_BYTES:  # no record above it: joined, the faster way
        update(canonical_records(cols, timestamp_type, timestamp, headers))
        return
    buf = memoryview(cols.buf)
    offsets, timestamps = cols.offsets, cols.timestamps
    key_pos, key_len, value_pos, value_len = cols.key_pos, cols.key_len, cols.value_pos, cols.value_len
    for i in range(cols.count):
        ts_type = timestamp_type if timestamp_type is not None else \
            message_timestamp_type(cols.magics[i], cols.attributes[i])
        key = None if key_len[i] < 0 else buf[key_pos[i]:key_pos[i] + key_len[i]]
        value = None if value_len[i] < 0 else buf[value_pos[i]:value_pos[i] + value_len[i]]
        for part in _canonical_parts(offsets[i], timestamps[i] if timestamp is None else timestamp, ts_type, key,
                                     value, cols.headers[i] if headers else ()):
            update(part)


def _select():
    # Chosen at import (the compiled twin when built, see kdump/_backend.py).
    from kdump import _backend
    return _backend.pick("canonical_records", canonical_records_py)


canonical_records = _select()
