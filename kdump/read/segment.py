"""The segment reader: the one module that walks the offset/size framing of a ``.log`` (or KRaft
``.checkpoint``) file, driving the sans-I/O rules of :mod:`kdump.format.framing`.

It follows Kafka's own walk (``FileLogInputStream.nextBatch``, spec §3.9) so that what kdump calls a
batch is exactly what Kafka calls one, and it reports what Kafka would stop at instead of dying (a
:class:`~kdump.format.framing.Stop`). Three ways to walk a file:

* :meth:`SegmentReader.batches` (= iteration): whole batches, read with buffered sequential reads, one at a
  time; stops at the first thing that is not a whole entry, as Kafka does. The hot path of ``dump``.
* :meth:`SegmentReader.headers`: batch headers only (:class:`~kdump.format.framing.BatchHeader`), one
  positional read of at most 61 bytes per batch; what index work needs. :func:`header_at` and
  :func:`walk_headers` do the same on an open file descriptor.
* :meth:`SegmentReader.events`: a resynchronising walk that goes on after damage, yielding
  :class:`GoodBatch`, :class:`LargeEntry`, :class:`BadEntry`, :class:`DamagedRange` and finally the
  :class:`Stop` (:func:`kdump.read.damage.readable` turns them into batches and one
  :class:`~kdump.read.damage.Damage` per damaged area, what every command reports).
  After bytes that are no entry it scans forward for the next position where a whole entry
  checks out (header sane and CRC valid), so that one damaged batch does not hide every batch after it.

``live=True`` reads a file still being written: a partial last entry is ``incomplete``, not ``truncated``.

Memory: one batch at a time (a batch larger than ``max_batch_bytes`` is refused before it is read; the
event walk computes its CRC in chunks instead); the resynchronising scan holds a window of ``WINDOW`` bytes.
"""
from __future__ import annotations

import os
from collections.abc import Iterator

from kdump.errors import FormatError
from kdump.format import framing as F
from kdump.format import layout as L
from kdump.format.columns import RECORDS_PER_CHUNK
from kdump.format.framing import BatchHeader, Stop, entry_batch
from kdump.format.legacy import LegacyBatch, LegacyRun, checked_run, legacy_run
from kdump.format.limits import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED_BYTES  # noqa: F401  (re-exported)
from kdump.format.v2 import RecordBatch
from kdump.read.logdir import base_offset_from_name  # (kdump.index and spark import it from here too)

Batch = RecordBatch | LegacyBatch
Readable = RecordBatch | LegacyBatch | LegacyRun  # what the resynchronising walk hands on

WINDOW = 1 << 20  # bytes scanned at a time when resynchronising
CHUNK = 1 << 20  # bytes held at a time when computing the CRC of a large entry
# The shortest run of zero bytes inside a damaged range that is named as zeros (a range of its own): a disk sector,
# the least a disk or a file system loses at once (a lost write, a block zeroed by a crash). Shorter runs of zeros
# are common in intact batches (offset and length fields, binary values).
ZERO_RUN_LEAST = 512
RUN_WINDOW = (1 << 16, 1 << 20)  # bytes read at a time by runs(): first, at most (grows while runs fill them)
RUN_WINDOW_LEAST = 1 << 12  # the resynchronising walk's window shrinks to this while runs are short

# --- events of the resynchronising walk ----------------------------------------------------------------
class GoodBatch:
    """A whole entry with a valid CRC, or a :class:`~kdump.format.legacy.LegacyRun` of intact plain magic 0/1
    messages (each of them such an entry, read together: no object per message)."""

    __slots__ = ("batch",)

    def __init__(self, batch: Readable):
        self.batch = batch


class LargeEntry:
    """A CRC-valid entry above ``max_batch_bytes``: its CRC was computed in chunks, its records not read.
    ``header``: for magic 2 a RecordBatch over the 61 header bytes (header fields only), else None."""

    __slots__ = ("position", "size", "offset", "magic", "header")

    def __init__(self, position: int, size: int, offset: int, magic: int, header: RecordBatch | None):
        self.position, self.size, self.offset, self.magic, self.header = position, size, offset, magic, header


class BadEntry:
    """A framed entry whose contents are bad (``error.code``: ``crc-mismatch``, ``magic-unknown``, an entry
    too small for its format...). ``size``: the whole entry, prefix included; ``offset``: its offset field;
    ``batch``: the parsed batch when it parsed but failed its CRC. The walk goes on after it (by its size
    when the framing after it looks sound, else with a :class:`DamagedRange` from its position)."""

    __slots__ = ("position", "size", "offset", "error", "batch")

    def __init__(self, position: int, size: int, offset: int, error: FormatError, batch: Batch | None = None):
        self.position, self.size, self.offset, self.error, self.batch = position, size, offset, error, batch


class DamagedRange:
    """Bytes ``start``..``end`` (exclusive) hold no entry. ``resumed``: a good entry starts at ``end`` (else
    the range runs to the end of the file). ``last_good_offset``: the last offset of the last good batch before
    it; ``next_good_offset``: the first offset of the entry at ``end`` (None if unknown): the offsets between
    are lost. ``code``/``cause``: what broke the framing (``code`` None: the :class:`BadEntry` just before,
    whose size field is not trusted); ``zeros``: the range is all zero bytes."""

    __slots__ = ("start", "end", "last_good_offset", "next_good_offset", "resumed", "code", "cause", "zeros")

    def __init__(self, start: int, end: int, last_good_offset: int | None, next_good_offset: int | None, *,
                 resumed: bool, code: str | None, cause: str, zeros: bool = False):
        self.start, self.end = start, end
        self.last_good_offset, self.next_good_offset = last_good_offset, next_good_offset
        self.resumed, self.code, self.cause, self.zeros = resumed, code, cause, zeros

    def __repr__(self) -> str:
        return (f"DamagedRange({self.start}, {self.end}, last_good_offset={self.last_good_offset}, "
                f"next_good_offset={self.next_good_offset}, code={self.code!r})")


Event = GoodBatch | LargeEntry | BadEntry | DamagedRange | Stop


class SegmentReader:
    """Walk the entries of one log file.

    >>> with SegmentReader("00000000000000000000.log") as reader:   # doctest: +SKIP
    ...     for batch in reader:
    ...         print(batch.base_offset, batch.is_valid())
    ...     print(reader.tail)

    ``start`` begins the walk at a byte position (an index lookup); ``max_bytes`` reads only that many
    bytes from the start of the file, like DumpLogSegments' ``--max-bytes``; ``live``: the file is still
    being written, so a partial last entry is ``incomplete``. After a walk, ``tail`` is its :class:`Stop`.
    """

    def __init__(self, path, *, start: int = 0, max_bytes: int | None = None,
                 max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES, live: bool = False):
        self.path = os.fspath(path)
        self.start = start
        self.max_batch_bytes = max_batch_bytes
        self.live = live
        self._file = open(self.path, "rb", buffering=1 << 20)  # noqa: SIM115 -- read-only, always; closed by close()
        self.file_size = os.fstat(self._file.fileno()).st_size
        self.end = self.file_size if max_bytes is None else min(self.file_size, max_bytes)
        self.limited = max_bytes is not None and max_bytes < self.file_size
        self.base_offset = base_offset_from_name(self.path)
        self.tail: Stop | None = None
        self.bytes_read = 0  # sum of the sizes of the whole batches walked

    def close(self) -> None:
        self._file.close()

    def zero_runs(self, start: int, stop: int, least: int = ZERO_RUN_LEAST) -> list[tuple[int, int]]:
        """The runs of at least ``least`` zero bytes in bytes ``start``..``stop`` (exclusive), as (start, end)
        pairs, wherever they start (no alignment assumed). Read a chunk at a time: memory stays flat."""
        import re
        pattern = re.compile(b"\\x00{%d,}" % least)
        fd = self._file.fileno()
        runs: list[tuple[int, int]] = []
        open_at: int | None = None  # a run of zeros reaching the end of the previous chunk
        pos = start
        while pos < stop:
            chunk = os.pread(fd, min(CHUNK, stop - pos), pos)
            if not chunk:
                break
            n, i = len(chunk), 0
            if open_at is not None:
                i = n - len(chunk.lstrip(b"\0"))
                if i == n:
                    pos += n
                    continue
                if pos + i - open_at >= least:
                    runs.append((open_at, pos + i))
                open_at = None
            for m in pattern.finditer(chunk, i):
                if m.end() == n:
                    open_at = pos + m.start()
                else:
                    runs.append((pos + m.start(), pos + m.end()))
            if open_at is None:
                trailing = n - len(chunk.rstrip(b"\0"))
                if trailing:  # shorter than ``least`` here: it may go on in the next chunk
                    open_at = pos + n - trailing
            pos += n
        if open_at is not None and pos - open_at >= least:
            runs.append((open_at, pos))
        return runs

    def foreign_start(self) -> str | None:
        """Why the file's first bytes cannot start a Kafka log (:func:`kdump.format.framing.foreign_start`:
        e.g. text renamed ``.log``), or None if they can."""
        return F.foreign_start(os.pread(self._file.fileno(), 64, 0), self.file_size)

    def __enter__(self) -> SegmentReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __iter__(self) -> Iterator[Batch]:
        return self.batches()

    def _stop(self, stop: Stop) -> Stop:
        self.tail = stop = F.settle(stop, limited=self.limited, live=self.live)
        return stop

    # --- whole batches, Kafka's walk -----------------------------------------------------------------------
    def batches(self) -> Iterator[Batch]:
        f = self._file
        pos = self.start
        end = self.end
        f.seek(pos)
        prefix = L.PREFIX
        while True:
            remaining = end - pos
            if remaining <= L.HEADER_SIZE_UP_TO_MAGIC:
                self._stop(F.end_stop(pos) if remaining <= 0 else F.short_stop(pos, remaining))
                return
            head = f.read(L.LOG_OVERHEAD)
            offset, size = prefix.unpack(head)
            if size < F.MIN_ENTRY_SIZE:
                zeros = not any(head) and _all_zero(self._file.fileno(), pos + L.LOG_OVERHEAD, end)
                self._stop(F.zeros_stop(pos, remaining) if zeros else F.size_stop(pos, size, remaining))
                return
            if pos + L.LOG_OVERHEAD + size > end:
                self._stop(F.truncated_stop(pos, size, remaining))
                return
            if size > self.max_batch_bytes:
                self._stop(F.too_large_stop(pos, size, remaining, self.max_batch_bytes))
                return
            body = f.read(size)
            if len(body) != size:  # the file shrank under us
                self._stop(F.shrank_stop(pos, remaining))
                return
            try:
                batch = entry_batch(pos, offset, size, body, self.max_batch_bytes)
            except FormatError as e:
                self._stop(F.corrupt_stop(pos, remaining, e))
                return
            pos += L.LOG_OVERHEAD + size
            self.bytes_read = pos - self.start
            yield batch

    # --- runs of plain legacy messages, batches otherwise -----------------------------------------------
    def runs(self, max_count: int = RECORDS_PER_CHUNK) -> Iterator[Batch | LegacyRun]:
        """Kafka's walk (:meth:`batches`), except that consecutive uncompressed magic 0/1 messages come as
        :class:`~kdump.format.legacy.LegacyRun` s of at most ``max_count`` (one set of columns read straight from
        the file, no object per message) instead of one :class:`LegacyBatch` each. Everything else, and where and
        why the walk stops (``tail``), is :meth:`batches`' own: the walk hands over to it at the first entry a run
        does not take, and takes over again at the next plain message after it."""
        start0 = self.start
        fd = self._file.fileno()
        window, most = RUN_WINDOW[0], min(RUN_WINDOW[1], self.max_batch_bytes)  # no entry in a run is too large
        pos = start0
        try:
            while True:
                while pos < self.end:
                    data = os.pread(fd, min(window, most, self.end - pos), pos)
                    run = legacy_run(data, pos, max_count)
                    if run is None:
                        break
                    if run.size > len(data) // 2:
                        window = min(window * 2, most)
                    pos = run.end
                    self.bytes_read = pos - start0
                    yield run
                window = RUN_WINDOW[0]
                self.start = pos  # batches() walks from here; it reads and yields the entry the run did not take
                taken = False
                for batch in self.batches():
                    if taken and isinstance(batch, LegacyBatch) and not batch.is_compressed:
                        pos = batch.position
                        break
                    taken = True
                    self.bytes_read = batch.position + batch.size - start0
                    yield batch
                else:
                    self.bytes_read = (self.tail.position if self.tail is not None else pos) - start0
                    return
        finally:
            self.start = start0

    # --- headers only ----------------------------------------------------------------------------------------
    def headers(self) -> Iterator[BatchHeader]:
        """The batch headers from ``start`` (one positional read each); ``tail`` says where and why it ended."""
        fd = self._file.fileno()
        for item in walk_headers(fd, self.start, self.end):
            if isinstance(item, Stop):
                self._stop(item)
                return
            self.bytes_read = item.end - self.start
            yield item

    # --- resynchronising walk --------------------------------------------------------------------------------
    def events(self) -> Iterator[Event]:
        """Every entry from ``start``, going on after damage; the last event is the :class:`Stop` (also in
        ``tail``). Stops of kind ``corrupt`` only follow a :class:`DamagedRange` that runs to the end; an
        entry above ``max_batch_bytes`` is a :class:`LargeEntry` or a :class:`BadEntry`, never a stop."""
        f = self._file
        end = self.end
        max_batch = self.max_batch_bytes
        probe = Prober(f.fileno(), end, max_batch)
        last_good: Readable | LargeEntry | None = None  # the last good batch (or LargeEntry): where offsets lost start
        pos = self.start
        f.seek(pos)
        read = f.read
        unpack_prefix = L.PREFIX.unpack
        # Plain magic 0/1 messages are taken as runs (checked_run: framing, parsing and CRC of each, in compiled
        # code) wherever one may start: at the start, after a plain message and after damage. A run ends before
        # anything it does not take (a batch, a wrapper, a damaged or too large message, the end of what it
        # read), which the entry-by-entry walk below then reads and reports exactly as before.
        fd = f.fileno()
        window, most = RUN_WINDOW[0], min(RUN_WINDOW[1], max_batch)  # no message in a run is too large
        try_run = True
        no_run_at = -1  # where the last attempt found no run
        single = False  # the last run was one message between batches: plain messages alternate with them
        while True:
            if try_run:
                try_run = False
                while pos < end:
                    data = os.pread(fd, min(window, most, end - pos), pos)
                    run = checked_run(data, pos, RECORDS_PER_CHUNK)
                    if run is None:
                        need = L.LOG_OVERHEAD + L.PREFIX.unpack_from(data)[1] if len(data) >= L.LOG_OVERHEAD else 0
                        if len(data) < need <= min(most, end - pos):  # a message larger than the window: widen it
                            window = need
                            continue
                        no_run_at = pos
                        break
                    if run.size > len(data) // 2:
                        window = min(window * 2, most)
                    elif run.size < len(data) // 8:  # short runs between batches: read less for each
                        window = max(RUN_WINDOW_LEAST, window // 2)
                    single = run.count == 1
                    last_good = run
                    yield GoodBatch(run)
                    pos = run.end
                f.seek(pos)
            remaining = end - pos
            if remaining <= L.HEADER_SIZE_UP_TO_MAGIC:
                # Kafka's trailing bytes, zero or not: its walk stops before reading a size field there (spec §3.9)
                yield self._stop(F.end_stop(pos) if remaining <= 0 else F.short_stop(pos, remaining))
                return
            head = read(L.LOG_OVERHEAD)
            if len(head) < L.LOG_OVERHEAD:
                yield self._stop(F.shrank_stop(pos, remaining))
                return
            offset, size = unpack_prefix(head)
            nxt = pos + L.LOG_OVERHEAD + size
            if size < F.MIN_ENTRY_SIZE:
                if probe.all_zero(pos, end):
                    yield self._stop(F.zeros_stop(pos, remaining))
                    return
                damage = _damaged(probe, pos, probe.find_next(pos + 1), last_good, "size-below-minimum",
                                  F.size_below_minimum(size))
            elif size > remaining - L.LOG_OVERHEAD:
                q = probe.find_next(pos + 1)
                if q is None:
                    yield self._stop(F.truncated_stop(pos, size, remaining))
                    return
                cause = f"{F.size_beyond_end(size, remaining)}, yet valid batches follow: its size field is damaged"
                damage = _damaged(probe, pos, q, last_good, "size-beyond-end", cause)
            else:
                if size <= max_batch:
                    body = read(size)
                    if len(body) < size:
                        yield self._stop(F.shrank_stop(pos, remaining))
                        return
                    try:
                        batch = entry_batch(pos, offset, size, body, self.max_batch_bytes)
                    except FormatError as e:
                        event = BadEntry(pos, L.LOG_OVERHEAD + size, offset, e)
                    else:
                        if batch.is_valid():  # the common case, kept short: verify walks millions of batches
                            if batch.magic < 2 and not batch.is_compressed and pos != no_run_at and not single:
                                try_run = True  # a plain message after a batch: read it with those after it
                                f.seek(pos)
                                continue
                            last_good = batch
                            yield GoodBatch(batch)
                            pos = nxt
                            try_run = batch.magic < 2 and not batch.is_compressed
                            continue
                        event = BadEntry(pos, L.LOG_OVERHEAD + size, offset,
                                         FormatError("crc-mismatch", crc_message(batch), position=pos), batch)
                else:
                    event = self._large_entry(probe, pos, offset, size)
                    f.seek(nxt)
                    if type(event) is LargeEntry:
                        last_good = event
                yield event
                if probe.plausible(nxt):
                    pos = nxt
                    try_run = True
                    continue
                cause = (f"the entry at byte {pos} points past itself to byte {nxt}, where no entry begins: its "
                         "size field is probably damaged too")
                damage = _damaged(probe, pos, probe.find_next(pos + 1), last_good, None, cause)
            yield damage
            if not damage.resumed:
                yield self._stop(Stop(F.CORRUPT, pos, remaining, damage.cause, code="damaged-range", fatal=True))
                return
            pos = damage.end
            f.seek(pos)
            try_run = True

    def _large_entry(self, probe: Prober, pos: int, offset: int, size: int):
        """An entry above max_batch_bytes: magic and CRC checked (in chunks), the body not read."""
        total = L.LOG_OVERHEAD + size
        head = probe.read(pos, L.V2_RECORD_BATCH_OVERHEAD)
        magic = head[L.MAGIC_AT]
        if magic > 2:
            return BadEntry(pos, total, offset, FormatError(
                "magic-unknown", f"unknown magic byte {magic} (expected 0, 1 or 2)", position=pos))
        if not probe.crc_ok(pos, head):
            return BadEntry(pos, total, offset, FormatError(
                "crc-mismatch", f"stored CRC does not match the {size}-byte entry (checked in chunks: it is above "
                f"the limit of {self.max_batch_bytes} bytes per batch)", position=pos))
        header = RecordBatch(pos, offset, size, head[L.LOG_OVERHEAD:]) if magic == 2 else None
        return LargeEntry(pos, total, offset, magic, header)


def _damaged(probe: Prober, start: int, q: int | None, last_good, code: str | None, cause: str) -> DamagedRange:
    """Bytes from ``start`` are no entry; ``q``: where the next good entry starts (None: none does);
    ``last_good``: the last good batch (or LargeEntry) before them."""
    if last_good is None:
        last = None
    elif type(last_good) is LargeEntry:
        last = last_good.header.last_offset if last_good.header is not None else last_good.offset
    else:
        last = last_good.last_offset
    if q is None:
        return DamagedRange(start, probe.end, last, None, resumed=False, code=code, cause=cause)
    return DamagedRange(start, q, last, probe.first_offset_at(q), resumed=True, code=code, cause=cause,
                        zeros=probe.all_zero(start, q))


def crc_message(batch) -> str:
    """What a batch whose stored CRC does not match its contents is told (every command says it so)."""
    kind = "CRC-32C" if batch.magic == 2 else "CRC-32"
    return (f"stored {kind} {batch.crc} does not match the computed {batch.compute_crc()} "
            f"(magic {batch.magic} entry of {batch.size} bytes)")


def _all_zero(fd: int, pos: int, stop: int) -> bool:
    while pos < stop:
        chunk = os.pread(fd, min(CHUNK, stop - pos), pos)
        if not chunk:
            break
        if chunk.count(0) != len(chunk):
            return False
        pos += len(chunk)
    return True


# --- entries at arbitrary positions: resynchronisation ---------------------------------------------------------
_OVERLAP = L.V2_RECORD_BATCH_OVERHEAD + 8  # a candidate's header must lie wholly in the window being scanned
_ZEROS = bytes(1 << 16)


class Prober:
    """Checks entries at arbitrary positions of one open file (read with ``os.pread``, never modified).

    * :meth:`find_next` scans forward for the next position where a whole, CRC-valid entry begins;
    * :meth:`plausible` says whether the entry framing continues sensibly at a position (after an entry that
      failed its CRC: is its size field still to be trusted?).

    Efficiency: candidates are found with ``bytes.find`` on the magic byte (``memchr`` speed), then rejected
    by :func:`~kdump.format.framing.header_sane` before any CRC is computed. Zero-filled stretches are skipped
    in 64 KiB steps. Memory is bounded: the file is scanned in windows of ``WINDOW`` bytes and a candidate's
    CRC is computed over chunks read one at a time, never more than ``CHUNK`` bytes held.
    """

    def __init__(self, fd: int, end: int, max_batch_bytes: int):
        self.fd = fd
        self.end = end
        self.max_batch_bytes = max_batch_bytes

    def read(self, pos: int, n: int) -> bytes:
        return os.pread(self.fd, n, pos)

    def header_ok(self, pos: int, head: bytes, *, need_fit: bool = True) -> bool:
        def read_int32(at: int) -> int:
            return L.INT32.unpack(self.read(pos + at, L.INT32.size))[0]
        return F.header_sane(head, self.max_batch_bytes, self.end - pos, need_fit=need_fit, read_int32=read_int32)

    def crc_ok(self, pos: int, head: bytes) -> bool:
        """The entry at ``pos`` (header already ``header_ok``) has a valid CRC; read in bounded chunks."""
        stored, start, stop, fn = F.crc_span(head)
        return self.crc_range(pos + start, pos + stop, fn) == stored

    def crc_range(self, start: int, stop: int, fn) -> int:
        value = 0
        pos = start
        while pos < stop:
            chunk = self.read(pos, min(CHUNK, stop - pos))
            if not chunk:
                break  # the file shrank: the CRC will not match
            value = fn(chunk, value)
            pos += len(chunk)
        return value

    def entry_ok(self, pos: int) -> bool:
        """A whole, CRC-valid entry starts at ``pos``."""
        head = self.read(pos, L.V2_RECORD_BATCH_OVERHEAD)
        return self.header_ok(pos, head) and self.crc_ok(pos, head)

    def plausible(self, pos: int) -> bool:
        """Does the entry framing continue sensibly at ``pos``? True at the end of the file, before a tail
        too short for an entry, before zeros to the end, or before a sane header (it may be cut off by
        the end of the file: a truncated tail after a damaged batch is still a tail)."""
        if pos >= self.end - L.HEADER_SIZE_UP_TO_MAGIC:
            return True
        head = self.read(pos, L.V2_RECORD_BATCH_OVERHEAD)
        if self.header_ok(pos, head, need_fit=False):
            return True
        return self.zeros_to_end(pos)

    def zeros_to_end(self, pos: int) -> bool:
        return self.all_zero(pos, self.end)

    def all_zero(self, pos: int, stop: int) -> bool:
        return _all_zero(self.fd, pos, stop)

    def first_offset_at(self, q: int) -> int | None:
        """First offset of the (valid) entry at ``q``: the header's, or for a compressed legacy wrapper
        its first inner message's (None if that cannot be read)."""
        head = self.read(q, L.V2_RECORD_BATCH_OVERHEAD)
        offset, size = L.PREFIX.unpack_from(head)
        if head[L.MAGIC_AT] == 2 or (head[L.LEGACY_ATTRIBUTES_AT] & L.LEGACY_CODEC_MASK) == 0:
            return offset
        if size > self.max_batch_bytes:
            return None
        try:
            batch = LegacyBatch(q, offset, self.read(q + L.LOG_OVERHEAD, size), self.max_batch_bytes)
            for record in batch.records(self.max_batch_bytes):
                return record.offset
        except FormatError:
            pass
        return None

    # --- scanning --------------------------------------------------------------------------------------
    def find_next(self, start: int) -> int | None:
        """The first position >= ``start`` where a whole, CRC-valid entry begins, or None."""
        w = start
        while w < self.end - L.HEADER_SIZE_UP_TO_MAGIC:
            buf = self.read(w, WINDOW + _OVERLAP)
            limit = min(WINDOW, len(buf))  # candidates q in [w, w + limit)
            found = None
            for magic in (b"\x02", b"\x01", b"\x00"):
                # the later passes only need to look before what an earlier pass found
                stop = limit if found is None else found - w
                q = self._scan(buf, w, magic, stop)
                if q is not None:
                    found = q
            if found is not None:
                return found
            w += limit
        return None

    def _scan(self, buf: bytes, w: int, magic: bytes, stop: int) -> int | None:
        """First q in [w, w + stop) with ``magic`` at q + MAGIC_AT that is a whole valid entry."""
        find = buf.find
        unpack_size = L.INT32.unpack_from
        at = L.MAGIC_AT
        i = find(magic, at, stop + at)
        while i >= 0:
            q = i - at
            size = unpack_size(buf, q + L.SIZE_AT)[0]
            if F.MIN_ENTRY_SIZE <= size <= self.max_batch_bytes:
                head = buf[q:q + L.V2_RECORD_BATCH_OVERHEAD]
                if len(head) < L.V2_RECORD_BATCH_OVERHEAD:
                    head = self.read(w + q, L.V2_RECORD_BATCH_OVERHEAD)
                if self.header_ok(w + q, head) and self.crc_ok(w + q, head):
                    return w + q
                nxt = i + 1
            elif size == 0 and magic == b"\x00":
                # inside zeros: the next candidate needs a non-zero size byte, so jump past the run
                nxt = max(i + 1, _skip_zeros(buf, q + L.SIZE_AT) + L.INT32.size + 1)
            else:
                nxt = i + 1
            if nxt >= stop + at:
                return None
            i = find(magic, nxt, stop + at)
        return None


def _skip_zeros(buf: bytes, j: int) -> int:
    """The position of the first non-zero byte at or after ``j`` (or ``len(buf)``)."""
    n = len(buf)
    step = len(_ZEROS)
    while j + step <= n and buf[j:j + step] == _ZEROS:
        j += step
    chunk = buf[j:j + step]
    return j + (len(chunk) - len(chunk.lstrip(b"\x00")))


# --- entries of bytes in memory ----------------------------------------------------------------------------
def entries_in(data) -> tuple[list[tuple[int, int, int]], Stop]:
    """The whole entries of ``data`` (bytes of a log, e.g. what a writer is given): ``(position, offset field,
    size field)`` of each, and the :class:`Stop` after the last (``end`` when ``data`` is whole entries)."""
    out: list[tuple[int, int, int]] = []
    pos = 0
    n = len(data)
    unpack = L.PREFIX.unpack_from
    while True:
        remaining = n - pos
        if remaining <= L.HEADER_SIZE_UP_TO_MAGIC:
            return out, F.end_stop(pos) if remaining <= 0 else F.short_stop(pos, remaining)
        offset, size = unpack(data, pos)
        if size < F.MIN_ENTRY_SIZE:
            return out, F.size_stop(pos, size, remaining)
        if L.LOG_OVERHEAD + size > remaining:
            return out, F.truncated_stop(pos, size, remaining)
        out.append((pos, offset, size))
        pos += L.LOG_OVERHEAD + size


# --- headers at positions of an open file (index work) --------------------------------------------------------
def header_at(fd: int, position: int, file_size: int) -> BatchHeader | Stop:
    """The batch starting at ``position`` of the open file ``fd`` (one pread of at most 61 bytes), or why
    there is none."""
    if position < 0 or position > file_size:
        return Stop(F.BEYOND, position, 0, f"position {position} is outside the log ({file_size} bytes)")
    remaining = file_size - position
    if remaining == 0:
        return Stop(F.END, position, 0, f"position {position} is the end of the log")
    want = min(F.PEEK_BYTES, remaining)
    head = os.pread(fd, want, position)
    if len(head) < want:  # the file shrank since its size was taken
        return F.shrank_stop(position, remaining)
    return F.parse_header(head, position, remaining)


def walk_headers(fd: int, start: int, end: int) -> Iterator[BatchHeader | Stop]:
    """Batch headers from ``start`` to ``end`` (bytes); the last item is always a :class:`Stop`."""
    pos = start
    while True:
        item = header_at(fd, pos, end)
        yield item
        if isinstance(item, Stop):
            return
        pos = item.end


def read_batch_at(fd: int, header: BatchHeader, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> Batch:
    """The whole batch a header describes, as a RecordBatch/LegacyBatch (bodies are read only here).

    Raises FormatError for a batch above ``max_batch_bytes`` or one whose bytes do not parse."""
    if header.size > max_batch_bytes:
        raise FormatError("batch-too-large", F.size_above_limit(header.size - L.LOG_OVERHEAD, max_batch_bytes),
                          position=header.position)
    data = os.pread(fd, header.size, header.position)
    if len(data) != header.size:
        raise FormatError("truncated-tail", "the log ended while reading a batch (was it truncated?)",
                          position=header.position)
    offset, size = L.PREFIX.unpack_from(data, 0)
    return entry_batch(header.position, offset, size, data[L.LOG_OVERHEAD:], max_batch_bytes)


def first_offset(fd: int, header: BatchHeader, limit: int = DEFAULT_MAX_BATCH_BYTES) -> int | None:
    """The first offset of a batch: from the header, or by decompressing a legacy wrapper (None if that fails)."""
    if header.base_offset is not None:
        return header.base_offset
    try:
        return read_batch_at(fd, header, limit).base_offset
    except FormatError:
        return None


def iter_batches(path, **kwargs) -> Iterator[Batch]:
    """Convenience: the batches of one file (the tail is not reported; use SegmentReader for that)."""
    with SegmentReader(path, **kwargs) as reader:
        yield from reader
