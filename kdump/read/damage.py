"""Damage in a segment, described once: what every command and the Spark source say about bytes they could not read.

A :class:`Damage` is one damaged area of one file: its byte range (``start``..``end``, exclusive), its cause (a
finding ``code`` and a ``message`` naming what was expected) and the offsets it costs (:meth:`Damage.lost_offsets`:
from the last good batch before it to the first good batch after it, or to the next segment's base offset, or
open-ended, when nothing good follows). :meth:`Damage.describe` is the one sentence every command prints for it
(``dump``'s error lines, ``verify``'s findings, ``salvage``'s dropped ranges and the Spark source's skip reports).

:func:`readable` is what a reader that goes on past damage sees of a file: the batches of the resynchronising walk
(:meth:`kdump.read.segment.SegmentReader.events`) and one :class:`Damage` per damaged area, of a ``kind``:

* ``entry``: a framed entry that is no batch (an unknown magic byte, too small for its format), skipped by its size;
* ``range``: bytes that hold no entry (a size field below 14 or past the end, or an entry whose size field points
  where no entry begins: then the range starts at that entry, and the entry's cause is part of the range's);
* ``large``: a CRC-valid entry above ``max_batch_bytes`` (not damage on disk: a higher limit reads it);
* ``batch``: a batch that parsed but fails its CRC, or whose records cannot be read (only where the caller does
  not show such batches: ``dump`` shows them as Kafka does, ``isvalid: false``);
* ``tail``: what a walk stopped at before the end of the file (a truncated last entry, a tail too short for an
  entry, zero padding);
* ``other``: an error a reader met that names no byte range (:meth:`Damage.of_error`).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import pairwise

from kdump.errors import FormatError, error_object
from kdump.format import framing as F
from kdump.format import layout as L
from kdump.format.legacy import LegacyRun
from kdump.read.segment import (
    DEFAULT_MAX_BATCH_BYTES,
    BadEntry,
    DamagedRange,
    GoodBatch,
    LargeEntry,
    Readable,
    SegmentReader,
    Stop,
    crc_message,
)

ENTRY, RANGE, LARGE, BATCH, TAIL, OTHER = "entry", "range", "large", "batch", "tail", "other"
KINDS = (ENTRY, RANGE, LARGE, BATCH, TAIL, OTHER)
# Stops that are no damage: the end of the file, the end of the range asked for, a live file's entry still being
# written, and the stop after a damaged range that runs to the end (the range is the damage, already said).
CLEAN_STOPS = (F.END, F.LIMIT, F.INCOMPLETE)


class LostOffsets:
    """The offsets a damaged area costs: ``first``..``last`` (inclusive; None where the bytes do not tell, ``last``
    None: open-ended). ``claimed``: they are what a damaged header says (not trustworthy); ``walk_start``: the walk
    began at this byte, past the segment's start, so the offsets before the damage were not read (``first`` None)."""

    __slots__ = ("first", "last", "claimed", "walk_start")

    def __init__(self, first: int | None, last: int | None, *, claimed: bool = False, walk_start: int | None = None):
        self.first, self.last, self.claimed, self.walk_start = first, last, claimed, walk_start

    def __iter__(self):  # (first, last), for unpacking
        return iter((self.first, self.last))

    def __eq__(self, other) -> bool:
        return tuple(self) == tuple(other)

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"LostOffsets({self.first}, {self.last})"

    @property
    def none(self) -> bool:
        """No offset is lost: the good batches around the damage follow each other."""
        return self.first is not None and self.last is not None and self.last < self.first

    def describe(self) -> str:
        first, last = self.first, self.last
        claimed = " (as its header claims)" if self.claimed else ""
        if first is None and last is not None and self.walk_start is not None:
            return (f"the offsets lost before {last + 1} are not known (the walk started at byte "
                    f"{self.walk_start})")
        if first is None and last is None:
            return "the offsets lost are not known"
        if self.none:
            return "no offsets are lost (the batches around it follow each other)"
        if last is None:
            return f"offsets from {first} on are lost{claimed}"
        if first is None:
            return f"offsets up to {last} are lost{claimed}"
        if first == last:
            return f"offset {first} is lost{claimed}"
        return f"offsets {first}-{last} are lost{claimed}"


class Damage(FormatError):
    """One damaged area of one file (see the module's docstring for the ``kind`` s). A :class:`FormatError`:
    ``code``, ``message`` (the cause, naming what was expected) and ``position`` (= ``start``), so that callers that
    report errors report it as one.

    ``last_good_offset``: the last offset of the last good batch before it (None: none was read);
    ``next_good_offset``: the first offset of the first good batch after it (None: none follows, or unknown);
    ``resumed``: a good entry follows it in the file; ``base_offset``: the segment's (from its name) and
    ``walk_start`` the byte the walk began at, which bound the offsets lost when no good batch came before;
    ``next_base``: the next segment's base offset, which bounds them when none follows (set by
    :meth:`kdump.read.partition.PartitionLog.damage`); ``claimed``: (first, last) offsets of the entry itself where
    its own header says them (``large`` and ``batch``); ``zeros``: the bytes are all zero. The walk's own events
    stay reachable: ``entry`` (:class:`BadEntry`), ``damaged`` (:class:`DamagedRange`), ``large``
    (:class:`LargeEntry`), ``batch``, ``stop``."""

    def __init__(self, kind: str, code: str, message: str, start: int, end: int | None, *, file: str | None = None,
                 last_good_offset: int | None = None, next_good_offset: int | None = None, resumed: bool = False,
                 base_offset: int | None = None, walk_start: int = 0, next_base: int | None = None,
                 claimed: tuple[int | None, int | None] | None = None, zeros: bool = False,
                 entry: BadEntry | None = None, damaged: DamagedRange | None = None, large: LargeEntry | None = None,
                 batch=None, stop: Stop | None = None, area_start: int | None = None, continued: bool = False):
        super().__init__(code, message, position=start)
        self.kind, self.file, self.start, self.end = kind, file, start, end
        self.last_good_offset, self.next_good_offset, self.resumed = last_good_offset, next_good_offset, resumed
        self.base_offset, self.walk_start, self.next_base = base_offset, walk_start, next_base
        self.claimed, self.zeros = claimed, zeros
        # a damaged area cut in parts (a run of zeros inside it is a part of its own): ``area_start`` where the
        # area begins, for the parts after its first (whose offsets lost are said once, by the first part);
        # ``continued``: another part of the area follows this one
        self.area_start, self.continued = area_start, continued
        self.entry, self.damaged, self.large, self.batch, self.stop = entry, damaged, large, batch, stop

    def __repr__(self) -> str:
        return f"Damage({self.kind!r}, {self.code!r}, {self.start}, {self.end})"

    def __str__(self) -> str:
        return f"at byte {self.start}: {self.describe()}"

    # --- the offsets it costs ---------------------------------------------------------------------------------
    def lost_offsets(self, next_base: int | None = None) -> LostOffsets:
        """The offsets this damage costs a reader (``next_base``: the next segment's base offset, which bounds
        them when no good batch follows in this file; default: :attr:`next_base`)."""
        if self.kind == OTHER or (self.kind == TAIL and self.zeros) or self.area_start is not None:
            return LostOffsets(None, None)  # (zero padding holds no data; a later part's are the first part's)
        if self.claimed is not None:
            first, last = self.claimed
            if first is not None and last is not None and last < first:  # a damaged header's last offset
                last = None
            return LostOffsets(first, last, claimed=self.kind == BATCH)
        start: int | None = None
        if self.last_good_offset is not None:
            start = self.last_good_offset + 1
        elif self.walk_start == 0:
            start = self.base_offset  # nothing good before it in the file: from the segment's first offset
        if self.resumed:
            last = self.next_good_offset - 1 if self.next_good_offset is not None else None
        else:
            bound = next_base if next_base is not None else self.next_base
            last = bound - 1 if bound is not None else None
        unread = self.walk_start if self.last_good_offset is None and self.walk_start > 0 else None
        return LostOffsets(start, last, walk_start=unread)

    def covered(self) -> dict:
        """What it covers, as a finding and an error carry it: ``length`` (bytes from :attr:`start`; None: to
        the end of the file), and ``first_offset``/``last_offset`` lost where any are."""
        where: dict = {"length": self.length}
        lost = self.lost_offsets()
        if not lost.none:
            where.update(first_offset=lost.first, last_offset=lost.last)
        return where

    # --- what it is called ------------------------------------------------------------------------------------
    @property
    def length(self) -> int | None:
        return None if self.end is None else self.end - self.start

    def describe(self, cause: str | None = None) -> str:
        """The one sentence every command says for this damage (the byte position aside: callers say it as
        their output does): the bytes, the cause, the offsets lost, where reading goes on. ``cause`` replaces
        the cause (``verify`` names a finding reported beside it)."""
        cause = self.message if cause is None else cause
        lost = self.lost_offsets().describe()
        if self.area_start is not None:
            lost = f"its offsets lost are said at byte {self.area_start}, where the damaged area begins"
        if self.kind == RANGE:
            what = "are all zero" if self.zeros else "hold no valid entry"
            if self.continued:
                return f"{self.length} bytes (to byte {self.end}) {what}: {cause}; {lost}; the damaged area goes on"
            if not self.resumed:
                return (f"{self.length} bytes (to byte {self.end}, the end of the file) {what}: {cause}; "
                        f"no intact batch follows: {lost}")
            return f"{self.length} bytes (to byte {self.end}) {what}: {cause}; {lost}; resumed at byte {self.end}"
        if self.kind == ENTRY:
            assert self.entry is not None  # an entry damage keeps its BadEntry
            return f"{cause}; skipped this entry of {self.length} bytes (offset field {self.entry.offset}); {lost}"
        if self.kind in (LARGE, BATCH):
            what = "entry" if self.kind == LARGE else "batch"
            return f"{cause}; skipped this {what} of {self.length} bytes (to byte {self.end}); {lost}"
        if self.kind == TAIL and self.zeros:
            return cause  # zero padding: what a preallocated segment leaves, no data lost
        return f"{cause}; {lost}"  # a tail (its cause says its bytes), or an error met elsewhere

    def to_dict(self, location: str | None = None) -> dict:
        """The damage as kdump's JSON error object (:func:`kdump.errors.error_object`): ``path``, ``position``
        (its first byte), ``bytes`` (None: to the end of the file), ``code``, ``message`` (the cause),
        ``firstOffset``/``lastOffset`` (the offsets lost, None where not known or none is), ``description``."""
        lost = self.lost_offsets()
        first, last = (None, None) if lost.none else tuple(lost)
        return error_object(location if location is not None else self.file, self.code, self.message, self.start,
                            bytes=self.length, firstOffset=first, lastOffset=last, description=self.describe())

    @property
    def kafka_tail(self) -> bool:
        """A crash-cut tail that Kafka's DumpLogSegments reports as ``Found N invalid bytes at the end of F`` and
        exits 0 (spec §2.4, §3.9): 17 bytes or fewer after the last entry (whatever they hold, zeros too), or a
        last entry declaring more bytes than remain. Not a file that shrank while being read, nor a longer zero
        tail (Kafka throws on its size field of 0)."""
        stop = self.stop
        if self.kind != TAIL or stop is None:
            return False
        if stop.kind == F.ZEROS:
            return stop.length <= L.HEADER_SIZE_UP_TO_MAGIC
        return stop.kind in (F.SHORT, F.TRUNCATED) and not stop.fatal

    @property
    def fails(self) -> bool:
        """The one policy of which damage fails a run (exit 1) and which is only a note, that every consumer
        (``verify``, ``dump``, ``stats``, ``txn``, ``salvage``, ``convert``, the replays, the Spark source) takes:
        everything fails except Kafka's crash-cut tail (:attr:`kafka_tail`), which Kafka's own tool reports with
        exit 0 and its recovery drops. A run of zeros fails wherever it is (in the middle of the file, or 18 or more
        bytes at its end: Kafka's tool dies on a size field of 0), though it holds no data (:attr:`zeros`): the
        bytes after it are not what Kafka reads, and ``verify`` fails it (``zero-padding``, ``damaged-range``)."""
        return not self.kafka_tail

    # --- damage that is no event of the walk ------------------------------------------------------------------
    @classmethod
    def of_batch(cls, batch, error: FormatError, first_offset: int | None = None, *, file: str | None = None
                 ) -> Damage:
        """The records of ``batch`` from ``first_offset`` on (its first record when None) could not be read, for
        ``error`` (a CRC mismatch, records that do not decode)."""
        if first_offset is None:
            try:
                first_offset = batch.base_offset
            except FormatError:  # a legacy wrapper that does not decompress: its first offset is unknown
                pass
        return cls(BATCH, error.code, error.message, batch.position, batch.position + batch.size, file=file,
                   claimed=(first_offset, batch.last_offset), batch=batch)

    @classmethod
    def of_error(cls, error: FormatError, *, file: str | None = None) -> Damage:
        """An error a reader met, as damage: its position, no byte range, the offsets lost unknown."""
        if isinstance(error, Damage):
            return error
        position = error.position if error.position is not None else 0
        return cls(OTHER, error.code, error.message, position, None, file=file)

    @classmethod
    def invalid_batch(cls, batch, *, file: str | None = None) -> Damage:
        """A batch whose stored CRC does not match its contents."""
        return cls.of_batch(batch, FormatError("crc-mismatch", crc_message(batch)), file=file)


def _first_offset(batch) -> int | None:
    try:
        return batch.base_offset
    except FormatError:  # a legacy wrapper that does not decompress
        return None


def _last_offset(good) -> int:
    if type(good) is LargeEntry:
        return good.header.last_offset if good.header is not None else good.offset
    return good.last_offset


def readable(reader: SegmentReader, *, show_invalid: bool = True, next_base: int | None = None
             ) -> Iterator[Readable | Damage | Stop]:
    """What a reader that goes on past damage sees of ``reader``'s file (:meth:`SegmentReader.events`, from
    ``reader.start``): every intact batch (consecutive intact plain magic 0/1 messages as a
    :class:`~kdump.format.legacy.LegacyRun`: every reader handles runs, with one object per run), one
    :class:`Damage` per damaged area (each said before the batch after it, whose first offset bounds the offsets it
    costs), and last the :class:`Stop`. A batch that parsed but fails
    its CRC is shown as a batch (Kafka shows it, ``isValid: false``; the caller decides) with ``show_invalid``,
    else it is a ``batch`` damage. An entry above ``max_batch_bytes`` is a ``large`` damage (``verify`` still
    checks its header: ``damage.large``). ``next_base``: the next segment's base offset (bounds the offsets lost
    when nothing good follows)."""
    where = {"file": reader.path, "base_offset": reader.base_offset, "walk_start": reader.start,
             "next_base": next_base}
    last_good: Readable | LargeEntry | None = None  # the last good batch or large entry: where the offsets lost start
    pending: list[Damage] = []  # damages waiting for what follows them (the first offset after them)
    # an entry that is no batch, or a batch failing its CRC: a damaged range may start at it (its size field then
    # points where no entry begins), and is then one damage with it, not a second one over the same bytes
    entry: BadEntry | None = None
    for event in reader.events():
        if isinstance(event, GoodBatch):  # the common case first, kept short: verify walks millions of batches
            if entry is not None:
                yield from _entry_alone(entry, pending, where, last_good, show_invalid)
                entry = None
            if pending:
                yield from _followed(pending, True, _first_offset(event.batch))
            last_good = event.batch
            yield event.batch
            continue
        if entry is not None and not (isinstance(event, DamagedRange) and event.start == entry.position):
            yield from _entry_alone(entry, pending, where, last_good, show_invalid)
            entry = None
        if isinstance(event, BadEntry):
            entry = event
        elif isinstance(event, DamagedRange):
            yield from _followed(pending, event.resumed, event.next_good_offset)
            yield from _range_damages(event, entry, where, reader)
            entry = None
        elif isinstance(event, LargeEntry):
            first = event.header.base_offset if event.header is not None else None
            yield from _followed(pending, True, first)
            yield Damage(LARGE, "batch-too-large",
                         F.size_above_limit(event.size - L.LOG_OVERHEAD, reader.max_batch_bytes), event.position,
                         event.position + event.size, claimed=(first, _last_offset(event)), large=event,
                         file=reader.path)
            last_good = event
        else:  # the Stop that ends every walk
            yield from _followed(pending, False, None)
            tail = _tail_damage(event, where, last_good)
            if tail is not None:
                yield tail
            yield event


def _entry_alone(entry: BadEntry, pending: list[Damage], where: dict, last_good, show_invalid: bool) -> Iterator:
    """A bad entry that no damaged range starts at: an entry that is no batch waits in ``pending`` for what follows
    it; a batch failing its CRC is shown (``show_invalid``) or is a ``batch`` damage."""
    batch = entry.batch
    if batch is None:
        pending.append(_entry_damage(entry, where, last_good))
        return
    yield from _followed(pending, True, _first_offset(batch))
    if show_invalid:
        yield batch
    else:
        yield Damage(BATCH, entry.error.code, entry.error.message, entry.position, entry.position + entry.size,
                     claimed=(_first_offset(batch), batch.last_offset), entry=entry, batch=batch, file=where["file"])


def by_batch(items: Iterable) -> Iterator:
    """:func:`readable`'s items with each :class:`~kdump.format.legacy.LegacyRun` given message by message (each a
    batch of one record), for consumers that take batches one at a time (the replays of internal topics)."""
    for item in items:
        if isinstance(item, LegacyRun):
            yield from item.messages()
        else:
            yield item


def _followed(pending: list[Damage], resumed: bool, next_first: int | None) -> Iterator[Damage]:
    """The damages waiting in ``pending`` (emptied), told what follows them: ``resumed`` (an entry with offsets
    follows) and its first offset."""
    for damage in pending:
        damage.resumed, damage.next_good_offset = resumed, next_first
        yield damage
    pending.clear()


def _entry_damage(entry: BadEntry, where: dict, last_good) -> Damage:
    return Damage(ENTRY, entry.error.code, entry.error.message, entry.position, entry.position + entry.size,
                  last_good_offset=None if last_good is None else _last_offset(last_good), entry=entry, **where)


def _range_damages(event: DamagedRange, entry: BadEntry | None, where: dict, reader: SegmentReader
                   ) -> Iterator[Damage]:
    """A damaged range as one damage, or, where runs of zeros lie inside it (:meth:`SegmentReader.zero_runs`), as
    its parts: each run of zeros a part called zeros wherever it starts, the bytes between them parts of their own,
    so that what the bytes are is named and no two parts overlap. The first part keeps the entry the range starts
    at and says the offsets lost; when the entry's own end lies in a run of zeros that begins inside it, the zeros
    explain both its failed check and the missing next entry: its size field is intact, and said so."""
    runs = [] if event.zeros else reader.zero_runs(event.start, event.end)
    if entry is None:
        code, cause = event.code or "damaged-range", event.cause
    else:  # the entry's size field is not trusted either: one damage, both causes
        code, cause = event.code or entry.error.code, f"{entry.error.message}, and {event.cause}"
        entry_end = entry.position + entry.size
        cut = next(((a, b) for a, b in runs if entry.position < a <= entry_end <= b), None)
        if event.code is None and cut is not None:
            cause = (f"{entry.error.message}: its bytes from {cut[0]} on are zeros, as are those after its end "
                     f"(byte {entry_end}), where the next entry would begin; its size field is intact")
    common = {"last_good_offset": event.last_good_offset, "next_good_offset": event.next_good_offset,
              "resumed": event.resumed, **where}
    bounds = [event.start]
    for a, b in runs:
        bounds += [a, b]
    bounds.append(event.end)
    parts = [(a, b) for a, b in pairwise(bounds) if b > a]
    for k, (a, b) in enumerate(parts):
        zeros = event.zeros or any(r == (a, b) for r in runs)
        more = k < len(parts) - 1
        if k == 0:
            yield Damage(RANGE, code, cause, a, b, zeros=zeros, entry=entry, damaged=event,
                         batch=None if entry is None else entry.batch, continued=more, **common)
        elif zeros:
            yield Damage(RANGE, "damaged-range", f"a run of {b - a} zero bytes (what a lost write or a zeroed disk "
                         "block leaves)", a, b, zeros=True, area_start=event.start, continued=more, **common)
        else:
            yield Damage(RANGE, "damaged-range", "bytes after a run of zeros that begin no entry", a, b,
                         area_start=event.start, continued=more, **common)


def _tail_damage(stop: Stop, where: dict, last_good) -> Damage | None:
    if stop.kind in CLEAN_STOPS or stop.code == "damaged-range":
        return None
    return Damage(TAIL, stop.code or stop.kind, stop.message or stop.kind, stop.position, stop.position + stop.length,
                  last_good_offset=None if last_good is None else _last_offset(last_good), zeros=stop.kind == F.ZEROS,
                  stop=stop, **where)


class LogDamage:
    """The damage of one segment file that fails a run (:attr:`Damage.fails`), as the companion-file checks need
    it: whether an entry of an index, time index or checkpoint that names an offset or a log position lies in bytes
    the log's own findings already report, so that the consequence of one damaged area is not reported again as a
    fault of an intact file beside it. ``foreign``: the file is no Kafka log at all (then everything is)."""

    def __init__(self, path: str, max_batch_bytes: int | None = None):
        self.path = path
        self.areas: list[Damage] = []
        self.foreign = False
        limit = DEFAULT_MAX_BATCH_BYTES if max_batch_bytes is None else max_batch_bytes
        with SegmentReader(path, max_batch_bytes=limit) as reader:
            if foreign_start(reader) is not None:
                self.foreign = True
                return
            self.areas = [d for d in readable(reader, show_invalid=False) if isinstance(d, Damage) and d.fails]

    def __bool__(self) -> bool:
        return self.foreign or bool(self.areas)

    def covers(self, offset: int | None = None, position: int | None = None) -> Damage | None:
        """The damaged area that holds log byte ``position`` or costs ``offset`` (None: neither is in one)."""
        for d in self.areas:
            if position is not None and d.start <= position < (d.end if d.end is not None else position + 1):
                return d
            if offset is not None:
                first, last = d.lost_offsets() if d.area_start is None else (None, None)
                if first is not None and first <= offset and (last is None or offset <= last):
                    return d
        return None


def foreign_start(reader: SegmentReader) -> FormatError | None:
    """The error for a whole file whose first bytes cannot start a Kafka log (text renamed ``.log``...:
    :meth:`SegmentReader.foreign_start`), said as such rather than as damage or an incomplete last batch; None for
    a file that can be one. Checked before :func:`readable` walks the file."""
    why = reader.foreign_start()
    return None if why is None else FormatError("not-a-kafka-log", f"not a Kafka log segment: {why}", position=0)
