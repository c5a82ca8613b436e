"""The column builder: records into the Arrow buffers of the per-record columns (offset, timestamp, key, value,
headers) of the ``kafka-log`` schema, any number of Kafka batches until :meth:`~PyColumnBuilder.finish`.

:data:`ColumnBuilder` is the compiled :class:`kdump.spark._arrow.ColumnBuilder` when it is built (chosen by
:mod:`kdump._backend`; ``KDUMP_PURE_PYTHON=1`` forces the pure path), :class:`PyColumnBuilder` otherwise.
Both have the same methods and fill the same buffers, which :mod:`kdump.spark.record_arrays` turns into arrays:

* :meth:`~PyColumnBuilder.add_v2` takes a chunk of a magic-2 batch's serialized records and returns how many it
  added, or -1 (nothing added) when they are not plainly well formed; the caller then hands them to kdump's
  record decoder and :func:`add_columns` (its error is damage to report). The compiled builder decodes the
  bytes itself, without a Python object per record, and gives up on more than damage (a 10-byte timestamp
  varint, a header key that is not UTF-8): what it does not take gets the pure path's answer by construction.
  The pure one decodes with :func:`kdump.format.v2.parse_records` (the one record decoder, whose
  :class:`~kdump.format.columns.RecordColumns` it copies into the buffers), so it gives up only on damage.
* :meth:`~PyColumnBuilder.add_plain` takes plain magic 0/1 messages as a run of them holds them
  (:class:`~kdump.format.legacy.LegacyRun`, each message its own record): the compiled builder reads them from the
  run's bytes (``kdump/format/_plain.pxd``, the one reader of a plain message in C), the pure one walks them with
  :func:`kdump.format.legacy.inner_columns`.
* :meth:`~PyColumnBuilder.add_record` takes one record as Python values (magic 0/1 records of wrappers, and the
  records ``add_v2`` did not take).

``tests/test_spark_arrow.py`` compares the two builders, and both with :func:`add_columns`, on every corpus
segment and on fuzzed records.
"""
from __future__ import annotations

from array import array

from kdump import _backend
from kdump.format import legacy, v2
from kdump.format.canonical import message_timestamp_type
from kdump.format.columns import RECORDS_PER_CHUNK, RecordColumns
from kdump.format.text import java_utf8
from kdump.spark import record_arrays
from kdump.spark.schema import DECODED_FROM, RECORD_COLUMNS

_US_LIMIT = (2**63 - 1) // 1000  # |ms| above this has no int64 microsecond value


def header_key(k: bytes) -> str:
    """A header key as Spark's Kafka source has it: a Java String (invalid UTF-8 replaced as Java does)."""
    try:
        return k.decode("utf-8")
    except UnicodeDecodeError:
        return java_utf8(k)


class _BinaryColumn:
    """One binary (or string) column's buffers: int32 end offsets after a leading 0, the bytes, a flag per value."""

    __slots__ = ("ends", "data", "flags", "nulls")

    def __init__(self) -> None:
        self.ends = array("i", [0])
        self.data = bytearray()
        self.flags = bytearray()
        self.nulls = 0

    def append(self, value) -> None:
        if value is None:
            self.flags.append(0)
            self.nulls += 1
        else:
            self.data += value
            self.flags.append(1)
        self.ends.append(len(self.data))

    def extend(self, buf, positions, lengths) -> None:
        """The values ``buf[p:p + n]`` for ``p, n`` in ``positions, lengths`` (``n`` = -1: null)."""
        view = memoryview(buf)
        data, flags, ends = self.data, self.flags, self.ends
        for p, n in zip(positions, lengths, strict=True):
            if n < 0:
                flags.append(0)
                self.nulls += 1
            else:
                data += view[p:p + n]
                flags.append(1)
            ends.append(len(data))

    def array(self, n: int, typ=None):
        return record_arrays.binary_array(n, self.ends, self.data, self.flags, self.nulls, typ)


def _plain_chunks(data, at: int, count: int, size: int):
    """The columns and offsets of ``count`` plain magic 0/1 messages from byte ``at`` of ``data`` (a run's), at most
    ``size`` at a time."""
    pos, left = at, count
    while left > 0:
        cols, offsets, _ = legacy.inner_columns(data, 0, pos, min(size, left))
        if not cols.count:
            return
        yield cols, offsets
        left -= cols.count
        pos += sum(cols.sizes)


class PyColumnBuilder:
    """Pure-Python twin of :class:`kdump.spark._arrow.ColumnBuilder` (same methods, same buffers, same arrays).
    Only the wanted columns are built."""

    def __init__(self, want_key=True, want_value=True, want_headers=False, want_offset=True, want_timestamp=True):
        self.want_key, self.want_value, self.want_headers = want_key, want_value, want_headers
        self.want_offset, self.want_timestamp = want_offset, want_timestamp
        self.resume_at = -1  # after add_v2 of a chunk: where the next chunk starts (-1: none)
        self.last_offset = 0  # after add_v2: the offset of the last record it added
        self.first_at = -1  # after add_plain: where the first message it added starts (-1: none added)
        self._reset()

    def _reset(self) -> None:
        self.rows = 0
        self.offsets = array("q")
        self.timestamps, self.timestamp_flags, self.timestamp_nulls = array("q"), bytearray(), 0
        self.keys, self.values = _BinaryColumn(), _BinaryColumn()
        self.header_ends, self.header_flags, self.header_nulls = array("i", [0]), bytearray(), 0
        self.header_keys, self.header_values = _BinaryColumn(), _BinaryColumn()

    @property
    def nbytes(self) -> int:
        """Bytes of variable-length data held (keys, values, headers): what the 2 GiB Arrow limit counts."""
        return len(self.keys.data) + len(self.values.data) + len(self.header_keys.data) + \
            len(self.header_values.data)

    # --- records ---------------------------------------------------------------------------------
    def add_v2(self, buf, start: int, end: int, count: int, base_offset: int, base_timestamp: int,
               append_time: int | None, first: int = 0, stop: int = -1, at: int = -1) -> int:
        """Records ``first`` up to ``stop`` (-1: ``count``) of the ``count`` in ``buf[start:end]``, starting at
        byte ``at`` (-1: ``start``); the number added, or -1 (nothing added) when they do not decode.
        ``resume_at`` is then where the next chunk starts (-1 after the chunk reaching ``count``)."""
        cols = v2.parse_records(buf, start, end, count, base_offset, base_timestamp, append_time, first,
                                None if stop < 0 else stop, None if at < 0 else at)
        if cols.error is not None:
            return -1
        self._add_columns(cols)
        self.resume_at = -1 if cols.resume_at is None else cols.resume_at
        if cols.count:
            self.last_offset = cols.offsets[-1]
        return cols.count

    def add_plain(self, data, at: int, count: int, lo: int | None, hi: int | None, max_rows: int, max_bytes: int,
                  one_each: bool) -> int:
        """Plain magic 0/1 messages (a :class:`~kdump.format.legacy.LegacyRun`'s, each its own record) from byte
        ``at`` of ``data``, at most ``count``: those whose offset is in ``[lo, hi)`` (None: no bound) added as
        :meth:`add_record` adds them, up to the first that fills the builder (``max_rows`` rows or ``max_bytes``
        bytes), before the first whose magic or timestamp type is not the first added one's, or after the first
        added with ``one_each``. The messages walked; ``resume_at`` is where the next starts, ``first_at`` where
        the first added starts (-1: none)."""
        self.first_at = -1
        kind = None
        pos, k = at, 0
        # the messages read a chunk at a time (one with ``one_each``): a call that stops early, as most do with
        # ``one_each``, reads no more than it takes (the whole rest each time would make a run quadratic)
        for cols, offsets in _plain_chunks(data, at, count, 1 if one_each else RECORDS_PER_CHUNK):
            assert cols.magics is not None  # (a legacy walk's columns have them)
            for j in range(cols.count):
                offset, size = offsets[j], cols.sizes[j]
                if (lo is not None and offset < lo) or (hi is not None and offset >= hi):
                    pos += size
                    k += 1
                    continue
                this = (cols.magics[j], message_timestamp_type(cols.magics[j], cols.attributes[j]))
                if kind is None:
                    self.first_at, kind = pos, this
                elif this != kind:
                    self.resume_at = pos  # the batch-level columns change here
                    return k
                self.add_record(offset, cols.timestamps[j], cols.key(j), cols.value(j), ())
                self.last_offset = offset
                pos += size
                k += 1
                if one_each or self.rows >= max_rows or self.nbytes >= max_bytes:
                    self.resume_at = pos
                    return k
        self.resume_at = pos
        return k

    def _add_columns(self, cols: RecordColumns) -> None:
        """Every record of ``cols``, column by column from the positions into its buffer."""
        if self.want_offset:
            self.offsets.extend(cols.offsets)
        if self.want_timestamp:
            for ts in cols.timestamps:
                self._add_timestamp(ts)
        if self.want_key:
            self.keys.extend(cols.buf, cols.key_pos, cols.key_len)
        if self.want_value:
            self.values.extend(cols.buf, cols.value_pos, cols.value_len)
        if self.want_headers:
            for headers in cols.headers:
                self._add_headers([(header_key(k).encode("utf-8"), v) for k, v in headers])
        self.rows += cols.count

    def add_record(self, offset: int, timestamp_ms: int, key, value, headers) -> None:
        """One record given as Python values: ``headers`` a sequence of ``(key str, value bytes or None)``
        pairs, or empty."""
        if self.want_offset:
            self.offsets.append(offset)
        if self.want_timestamp:
            self._add_timestamp(timestamp_ms)
        if self.want_key:
            self.keys.append(key)
        if self.want_value:
            self.values.append(value)
        if self.want_headers:
            self._add_headers([(k.encode("utf-8"), v) for k, v in headers])
        self.rows += 1

    def _add_timestamp(self, ms: int) -> None:
        if -_US_LIMIT <= ms <= _US_LIMIT:
            self.timestamps.append(ms * 1000)
            self.timestamp_flags.append(1)
        else:
            self.timestamps.append(0)
            self.timestamp_flags.append(0)
            self.timestamp_nulls += 1

    def _add_headers(self, headers: list[tuple[bytes, bytes | None]]) -> None:
        for k, v in headers:
            self.header_keys.append(k)
            self.header_values.append(v)
        self.header_ends.append(len(self.header_keys.flags))
        if headers:
            self.header_flags.append(1)
        else:  # Spark's Kafka source: null, not an empty array
            self.header_flags.append(0)
            self.header_nulls += 1

    # --- output ----------------------------------------------------------------------------------
    def finish(self) -> dict:
        """The built columns as ``{name: pyarrow.Array}`` (wanted ones only); the builder is then empty."""
        import pyarrow as pa
        n = self.rows
        out = {}
        if self.want_offset:
            out["offset"] = record_arrays.int64_array(n, self.offsets)
        if self.want_timestamp:
            out["timestamp"] = record_arrays.timestamp_array(n, self.timestamps, self.timestamp_flags,
                                                             self.timestamp_nulls)
        if self.want_key:
            out["key"] = self.keys.array(n)
        if self.want_value:
            out["value"] = self.values.array(n)
        if self.want_headers:
            m = len(self.header_keys.flags)
            out["headers"] = record_arrays.headers_array(n, self.header_ends, self.header_flags, self.header_nulls,
                                                         self.header_keys.array(m, pa.string()),
                                                         self.header_values.array(m))
        self._reset()
        return out


ColumnBuilder = _backend.pick("ColumnBuilder", PyColumnBuilder)


def make_builder(columns, backend: str = "auto"):
    """A column builder for the per-record columns among ``columns``: ``backend`` "auto" takes the one
    :mod:`kdump._backend` chose, "compiled" insists on the compiled one (ImportError when not built), "python"
    the pure one."""
    wanted = {c: c in columns for c in RECORD_COLUMNS}
    for name, source in DECODED_FROM.items():  # the decoded columns are made from the key or value column
        wanted[source] = wanted[source] or name in columns
    kwargs = dict(want_key=wanted["key"], want_value=wanted["value"], want_headers=wanted["headers"],
                  want_offset=wanted["offset"], want_timestamp=wanted["timestamp"])
    if backend == "python":
        return PyColumnBuilder(**kwargs)
    if backend == "compiled":
        return _backend.compiled("ColumnBuilder")(**kwargs)
    return ColumnBuilder(**kwargs)


def add_columns(builder, cols: RecordColumns, headers_wanted: bool, bounds: tuple[int, int] | None = None) -> int:
    """Every record of ``cols`` into ``builder`` (only those with ``first <= offset < end`` when ``bounds`` are
    given), one :meth:`~PyColumnBuilder.add_record` call per record: the path of every record ``add_v2`` does
    not take. The number of records added."""
    offsets, timestamps, headers = cols.offsets, cols.timestamps, cols.headers
    added = 0
    for i in range(cols.count):
        if bounds is not None and not bounds[0] <= offsets[i] < bounds[1]:
            continue
        hdrs = [(header_key(k), v) for k, v in headers[i]] if headers_wanted and headers[i] else ()
        builder.add_record(offsets[i], timestamps[i], cols.key(i), cols.value(i), hdrs)
        added += 1
    return added
