"""One record shape for every magic: :class:`RecordColumns` (a batch's records, column-wise) and
:class:`Record` (one record as an object, built from the columns).

Every batch gives its records this way (:meth:`kdump.format.v2.RecordBatch.columns`,
:meth:`kdump.format.legacy.LegacyBatch.columns`), so consumers (dump, renderers, convert, verify,
Arrow/Spark) read records without asking which magic they came from. Keys and values are positions into
one buffer rather than copied bytes: the batch body or decompressed payload for magic 2, the entry's
message body or the wrapper's decompressed inner message set for magic 0/1.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterator

from kdump.errors import FormatError
from kdump.format import layout as L
from kdump.format.types import TimestampType

# Records decoded (and rendered) at a time by whoever walks a batch in chunks: a few MB of columns.
RECORDS_PER_CHUNK = 16384


# The per-record columns of RecordColumns (the last three are None for magic 2).
_COLUMNS = ("offsets", "timestamps", "attributes", "key_pos", "key_len", "value_pos", "value_len", "headers", "sizes",
            "crcs", "magics", "valid")


class RecordColumns:
    """The records of one batch, column-wise.

    ``buf`` holds the records; ``key_pos``/``value_pos`` index into it and ``key_len``/``value_len`` are -1
    for null. ``timestamps`` are the effective ones (Kafka's rules for LogAppendTime applied),
    ``attributes`` the record's (magic 2) or message's (magic 0/1) attributes byte, ``sizes`` the record's
    size in bytes as Kafka's ``sizeInBytes`` says it. ``headers[i]`` is a tuple of
    ``(key_bytes, value_bytes_or_None)`` pairs (the shared empty tuple when the record has none; always for
    magic 0/1). ``count`` is the number of records decoded; if decoding stopped early, ``error`` says why
    and where (the records before it are still here).

    Magic 0/1 records also have ``crcs`` (the stored CRC-32), ``magics`` and ``valid`` (the CRC matches);
    for magic 2 these are None (the batch CRC covers its records).

    A batch's records may come in chunks (its ``column_chunks``: memory bounded by a record count, whatever
    the batch declares); ``resume_at`` is where in ``buf`` the next chunk starts, None after the last.
    """

    __slots__ = (
        "buf", "count", "offsets", "timestamps", "attributes", "key_pos", "key_len",
        "value_pos", "value_len", "headers", "sizes", "error", "crcs", "magics", "valid", "resume_at",
    )

    def __init__(self, buf):
        self.buf = buf
        self.count = 0
        self.offsets: list[int] = []
        self.timestamps: list[int] = []
        self.attributes: list[int] = []
        self.key_pos: list[int] = []
        self.key_len: list[int] = []
        self.value_pos: list[int] = []
        self.value_len: list[int] = []
        self.headers: list[tuple] = []
        self.sizes: list[int] = []
        self.error: FormatError | None = None
        self.crcs: list[int] | None = None
        self.magics: list[int] | None = None
        self.valid: list[bool] | None = None
        self.resume_at: int | None = None  # a chunk of a batch's records: where in ``buf`` the next chunk starts

    def key(self, i: int) -> bytes | None:
        n = self.key_len[i]
        if n < 0:
            return None
        p = self.key_pos[i]
        return bytes(self.buf[p:p + n])

    def value(self, i: int) -> bytes | None:
        n = self.value_len[i]
        if n < 0:
            return None
        p = self.value_pos[i]
        return bytes(self.buf[p:p + n])

    def slice(self, start: int, stop: int) -> RecordColumns:
        """Records ``start`` to ``stop`` (as ``range`` clips them), over the same buffer. The decoding
        error stays with the slice that reaches the end of what was decoded."""
        start, stop, _ = slice(start, stop).indices(self.count)
        stop = max(start, stop)
        out = RecordColumns(self.buf)
        for name in _COLUMNS:
            column = getattr(self, name)
            if column is not None:
                setattr(out, name, column[start:stop])
        out.count = stop - start
        out.error = self.error if stop == self.count else None
        return out

    def take(self, indices) -> RecordColumns:
        """The records at ``indices`` (ascending), over the same buffer; the decoding error stays with the
        result when it keeps the last record decoded."""
        out = RecordColumns(self.buf)
        for name in _COLUMNS:
            column = getattr(self, name)
            if column is not None:
                setattr(out, name, [column[i] for i in indices])
        out.count = len(indices)
        out.error = self.error if indices and indices[-1] == self.count - 1 else None
        return out

    def __repr__(self) -> str:
        return f"RecordColumns(count={self.count}, error={self.error!r})"


class RecordSummary:
    """What a check needs of a chunk of a magic-2 batch's records, without the records: their count, the
    decoding error and resume position as in :class:`RecordColumns`, and

    * ``first_offset``/``last_offset``: of the first and last record (None without records);
    * ``decreasing_at``: the index of the first record whose offset is not above the previous record's in
      this chunk (-1: none), with that offset and the previous one in ``decreasing_offsets``;
    * ``gap_after``: the offset of the record before the first gap in this chunk (None: no gap before
      ``decreasing_at``);
    * ``min_timestamp`` (and ``min_timestamp_at``, the first record holding it) and ``max_timestamp``;
    * ``attributes_at``: the index of the first record with attributes set (-1: none), and ``attributes``.

    Built by :func:`kdump.format.v2.summarize_records` (compiled when built: no Python object per record);
    :meth:`of` computes the same from decoded columns.
    """

    __slots__ = ("count", "error", "resume_at", "first_offset", "last_offset", "decreasing_at",
                 "decreasing_offsets", "gap_after", "min_timestamp", "min_timestamp_at", "max_timestamp",
                 "attributes_at", "attributes")

    def __init__(self) -> None:
        self.count = 0
        self.error: FormatError | None = None
        self.resume_at: int | None = None
        self.first_offset: int | None = None
        self.last_offset: int | None = None
        self.decreasing_at = -1
        self.decreasing_offsets: tuple[int, int] | None = None  # (the record's offset, the previous one's)
        self.gap_after: int | None = None
        self.min_timestamp: int | None = None
        self.min_timestamp_at = -1
        self.max_timestamp: int | None = None
        self.attributes_at = -1
        self.attributes = 0

    @classmethod
    def of(cls, cols: RecordColumns) -> RecordSummary:
        s = cls()
        s.count, s.error, s.resume_at = cols.count, cols.error, cols.resume_at
        if not cols.count:
            return s
        offsets, timestamps = cols.offsets, cols.timestamps
        s.first_offset, s.last_offset = offsets[0], offsets[cols.count - 1]
        prev = offsets[0]
        for i in range(1, cols.count):
            off = offsets[i]
            if off <= prev:
                s.decreasing_at, s.decreasing_offsets = i, (off, prev)
                break
            if off != prev + 1 and s.gap_after is None:
                s.gap_after = prev
            prev = off
        s.min_timestamp, s.max_timestamp = min(timestamps), max(timestamps)
        s.min_timestamp_at = timestamps.index(s.min_timestamp)
        s.attributes_at = next((i for i, a in enumerate(cols.attributes) if a), -1)
        if s.attributes_at >= 0:
            s.attributes = cols.attributes[s.attributes_at]
        return s

    def __eq__(self, other) -> bool:
        def error(s):
            return None if s.error is None else (s.error.code, s.error.message)
        names = [name for cls in type(self).__mro__ for name in getattr(cls, "__slots__", ())]  # a subclass's too
        return type(other) is type(self) and error(self) == error(other) and all(
            getattr(self, name) == getattr(other, name) for name in names if name != "error")

    def __repr__(self) -> str:
        return "RecordSummary(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


class RecordKeys:
    """What ``kdump stats`` counts of a chunk of a batch's records, without the records: their ``count``, the
    decoding ``error`` and ``resume_at`` as in :class:`RecordColumns`, and

    * ``record_bytes``: the sum of their sizes; ``keyless``: records without a key; ``tombstones``: records
      with a key and a null value;
    * ``entries``: one :data:`~kdump.format.layout.KEY_ENTRY` per record with a key, in order: the key's
      digest (``hash(key)`` and ``hash(key + b"\\0")``: Python's SipHash, keyed per process; 128 bits, so
      that two distinct keys share one with probability about n^2 / 2^129) and its record's size << 1 |
      tombstone: what :class:`kdump.stats.keytable.KeyTable` takes;
    * ``min_timestamp``/``max_timestamp``: the smallest and largest record timestamp that is not negative (None
      without one): the time range ``kdump stats`` reports, of records, not of batches' max timestamps.

    Built by :func:`kdump.format.v2.record_keys` (compiled when built: the same digests, from the bytes in
    the batch, without a Python object per record); :meth:`of` computes the same from decoded columns."""

    __slots__ = ("count", "error", "resume_at", "record_bytes", "keyless", "tombstones", "entries", "min_timestamp",
                 "max_timestamp")

    def __init__(self) -> None:
        self.count = 0
        self.error: FormatError | None = None
        self.resume_at: int | None = None
        self.record_bytes = 0
        self.keyless = 0
        self.tombstones = 0
        self.entries = b""
        self.min_timestamp: int | None = None
        self.max_timestamp: int | None = None

    @classmethod
    def of(cls, cols: RecordColumns) -> RecordKeys:
        s = cls()
        s.count, s.error, s.resume_at = cols.count, cols.error, cols.resume_at
        s.record_bytes = sum(cols.sizes)
        pack, buf = L.KEY_ENTRY.pack, cols.buf
        entries = []
        for kp, kl, vl, size in zip(cols.key_pos, cols.key_len, cols.value_len, cols.sizes, strict=True):
            if kl < 0:
                s.keyless += 1
                continue
            key = bytes(buf[kp:kp + kl])
            s.tombstones += vl < 0
            entries.append(pack(hash(key), hash(key + b"\0"), size << 1 | (vl < 0)))
        s.entries = b"".join(entries)
        stated = [t for t in cols.timestamps if t >= 0]
        if stated:
            s.min_timestamp, s.max_timestamp = min(stated), max(stated)
        return s

    __eq__ = RecordSummary.__eq__

    def __repr__(self) -> str:
        return "RecordKeys(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


class RunKeys(RecordKeys):
    """:class:`RecordKeys` of a run of plain magic 0/1 messages (each its own batch of one record), with what
    ``kdump stats`` counts of those batches: ``magic0`` (how many are magic 0; the others are magic 1) and
    ``min_timestamp``/``max_timestamp``, the smallest and largest timestamp that is not negative (None without
    one), as :class:`kdump.stats.counts.Stats` takes each batch's max timestamp.

    Built by :func:`kdump.format.legacy.run_keys` (compiled when built: no Python object per message); :meth:`of`
    computes the same from the run's columns."""

    __slots__ = ("magic0",)

    def __init__(self) -> None:
        super().__init__()
        self.magic0 = 0

    @classmethod
    def of(cls, cols: RecordColumns) -> RunKeys:
        s = super().of(cols)
        assert isinstance(s, RunKeys) and cols.magics is not None  # (a legacy walk's columns have magics)
        s.magic0 = cols.magics.count(0)
        return s

    def __repr__(self) -> str:
        names = (*RecordKeys.__slots__, *RunKeys.__slots__)
        return "RunKeys(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in names) + ")"


class InnerSummary:
    """What ``verify --deep`` checks of a chunk of a magic 0/1 wrapper's inner messages, without the
    messages: their ``count``, the walk's ``error`` and ``resume`` position as
    :func:`kdump.format.legacy.inner_columns` gives them, ``end`` (the byte after the last message read),
    and for the messages read:

    * ``first_offset``/``last_offset``: stored inner offsets of the first and last;
    * ``decreasing_at``: the first whose offset is not above the one before it in the chunk (-1: none),
      with ``decreasing_offsets`` = (its offset, the one before);
    * ``magic_mismatch_at``: the first whose magic is not ``magic`` (the wrapper's; -1: none) and its magic;
    * ``bad_crc_at``: the first whose CRC-32 does not match (-1: none), with ``bad_crc`` = (stored,
      computed);
    * ``min_timestamp``/``max_timestamp``: of the magic-1 messages (None without one);
    * ``attributes_at``: the first whose attributes are not 0 (-1: none);
    * ``last_start``: where the last one starts (its offset field), in ``data``.

    Built by :func:`kdump.format.legacy.inner_summary` (compiled when built: no Python object per
    message); :meth:`of` computes the same from :func:`~kdump.format.legacy.inner_columns`' result."""

    __slots__ = ("count", "error", "resume", "end", "first_offset", "last_offset", "decreasing_at",
                 "decreasing_offsets", "magic_mismatch_at", "mismatched_magic", "bad_crc_at", "bad_crc",
                 "min_timestamp", "max_timestamp", "attributes_at", "last_start")

    def __init__(self) -> None:
        self.count = 0
        self.error: FormatError | None = None
        self.resume: int | None = None
        self.end = 0
        self.first_offset: int | None = None
        self.last_offset: int | None = None
        self.decreasing_at = -1
        self.decreasing_offsets: tuple[int, int] | None = None
        self.magic_mismatch_at = -1
        self.mismatched_magic = 0
        self.bad_crc_at = -1
        self.bad_crc: tuple[int, int] | None = None
        self.min_timestamp: int | None = None
        self.max_timestamp: int | None = None
        self.attributes_at = -1
        self.last_start = 0

    @classmethod
    def of(cls, data, start_at: int, cols: RecordColumns, inner_offsets: list[int], resume: int | None,
           magic: int) -> InnerSummary:
        s = cls()
        k = cols.count
        s.count, s.error, s.resume, s.end = k, cols.error, resume, start_at + sum(cols.sizes)
        if not k:
            return s
        s.first_offset, s.last_offset = inner_offsets[0], inner_offsets[-1]
        s.last_start = s.end - cols.sizes[-1]
        s.attributes_at = next((i for i, a in enumerate(cols.attributes) if a), -1)
        for i in range(1, k):
            if inner_offsets[i] <= inner_offsets[i - 1]:
                s.decreasing_at, s.decreasing_offsets = i, (inner_offsets[i], inner_offsets[i - 1])
                break
        magics = cols.magics or []
        s.magic_mismatch_at = next((i for i, m in enumerate(magics) if m != magic), -1)
        if s.magic_mismatch_at >= 0:
            s.mismatched_magic = magics[s.magic_mismatch_at]
        valid = cols.valid or []
        s.bad_crc_at = next((i for i, ok in enumerate(valid) if not ok), -1)
        if s.bad_crc_at >= 0:
            i = s.bad_crc_at
            stop = start_at + sum(cols.sizes[:i + 1])
            begin = stop - cols.sizes[i] + L.LOG_OVERHEAD + L.LEGACY_CRC_START
            s.bad_crc = ((cols.crcs or [])[i], zlib.crc32(memoryview(data)[begin:stop]))
        ts = [t for t, m in zip(cols.timestamps, magics, strict=True) if m == 1]
        if ts:
            s.min_timestamp, s.max_timestamp = min(ts), max(ts)
        return s

    __eq__ = RecordSummary.__eq__

    def __repr__(self) -> str:
        return "InnerSummary(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


class Record:
    """One record of any magic, with its absolute offset and effective timestamp.

    ``crc``, ``magic`` and ``valid`` are the legacy message's (None for magic 2, whose CRC is the batch's).
    """

    __slots__ = ("offset", "timestamp", "timestamp_type", "key", "value", "headers", "sequence",
                 "size_in_bytes", "attributes", "crc", "magic", "valid")

    def __init__(self, offset, timestamp, timestamp_type, key, value, headers, sequence, size_in_bytes, attributes=0,
                 crc=None, magic=None, valid=None):
        self.offset = offset
        self.timestamp = timestamp
        self.timestamp_type = timestamp_type
        self.key = key
        self.value = value
        self.headers = headers
        self.sequence = sequence
        self.size_in_bytes = size_in_bytes
        self.attributes = attributes
        self.crc = crc
        self.magic = magic
        self.valid = valid

    @property
    def key_size(self) -> int:
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        return -1 if self.value is None else len(self.value)

    def is_valid(self) -> bool | None:
        """The legacy message's CRC check; None for a magic-2 record (see its batch's ``is_valid``)."""
        return self.valid

    def __repr__(self) -> str:
        magic = "" if self.magic is None else f", magic={self.magic}"
        return (f"Record(offset={self.offset}{magic}, timestamp={self.timestamp}, "
                f"key={self.key!r}, value={self.value!r})")


def iter_records(cols: RecordColumns, timestamp_type: TimestampType, sequences):
    """:class:`Record` objects for ``cols``; ``sequences(offset)`` gives each record's sequence number.
    Raises the decoding error after yielding the records before it."""
    crcs, magics, valid = cols.crcs, cols.magics, cols.valid
    for i in range(cols.count):
        off = cols.offsets[i]
        yield Record(off, cols.timestamps[i], timestamp_type, cols.key(i), cols.value(i),
                     tuple((k.decode("utf-8", "replace"), v) for k, v in cols.headers[i]),
                     sequences(off), cols.sizes[i], cols.attributes[i],
                     None if crcs is None else crcs[i], None if magics is None else magics[i],
                     None if valid is None else valid[i])
    if cols.error is not None:
        raise cols.error.fresh()  # a copy: raising the kept one would make a cycle that holds cols (and its buffer)


def iter_chunk_records(chunks: Iterator[RecordColumns], timestamp_type: TimestampType, sequences):
    """:func:`iter_records` over a batch's ``column_chunks``: a chunk is dropped before the next is decoded, so
    memory is bounded by the chunk, whatever count the batch declares (issue 22 item 2). The decoding error is
    raised after the records before it, as :func:`iter_records` does."""
    for cols in chunks:
        yield from iter_records(cols, timestamp_type, sequences)
