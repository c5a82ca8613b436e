"""Where the Spark pipeline walks segments with kdump's reader, and the few batch facts it shows.

* :func:`walk` -- the batches of ``[start, end)`` of one local segment file, then how the walk ended
  (damage, or a live file's last entry still being written: ``SegmentReader(live=True)``);
* :func:`batch_fields` -- the batch-level values the metadata columns show;
* :func:`offset_index_positions` -- the byte positions the offset index names.

Records come from the batches themselves (``batch.columns(limit)`` for every magic, a magic-2 batch's
``records_payload(limit)`` for the compiled Arrow path).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from kdump import SegmentReader
from kdump.errors import FormatError, KdumpError
from kdump.format import framing
from kdump.format.names import BATCH_FIELDS, codec_name, compile_projection
from kdump.read.logdir import segment_base_offset
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED_BYTES, Damage, readable

__all__ = ["walk", "Walk", "DamagedRegion", "batch_fields", "offset_index_positions",
           "DEFAULT_MAX_DECOMPRESSED_BYTES", "FormatError", "KdumpError"]

# Tails that are not damage: the end of the file, the end of the range asked for, and (live) an entry
# still being written.
_CLEAN_KINDS = (framing.END, framing.LIMIT, framing.INCOMPLETE)


class DamagedRegion(FormatError):
    """Bytes ``position``..``end`` (exclusive; ``end`` None: to the end of the file) of a segment that gave no
    records, and the offsets lost with them (``first_offset``..``last_offset``, None where the bytes do not
    tell)."""

    def __init__(self, code: str, message: str, *, position: int, end: int | None,
                 first_offset: int | None = None, last_offset: int | None = None):
        super().__init__(code, message, position=position)
        self.end, self.first_offset, self.last_offset = end, first_offset, last_offset

    @classmethod
    def of_batch(cls, batch, error, first_offset: int | None = None) -> DamagedRegion:
        """The records of ``batch`` from ``first_offset`` on (its first record when None) were not read."""
        if first_offset is None:
            try:
                first_offset = batch.base_offset
            except FormatError:  # a legacy wrapper that does not decompress: its first offset is unknown
                pass
        return cls(error.code, error.message, position=batch.position, end=batch.position + batch.size,
                   first_offset=first_offset, last_offset=batch.last_offset)

    def offsets_lost(self) -> str:
        first, last = self.first_offset, self.last_offset
        if first is not None and last is not None and last < first:  # a header whose last offset is wrong
            last = None
        if first is None and last is None:
            return "offsets unknown"
        if last is None:
            return f"offsets from {first} on"
        if first is None:
            return f"offsets up to {last}"
        return f"offset {first}" if first == last else f"offsets {first}-{last}"

    def to_dict(self, location: str) -> dict:
        return {"file": location, "start": self.position, "end": self.end, "code": self.code,
                "message": self.message, "first_offset": self.first_offset, "last_offset": self.last_offset}

    def describe(self, location: str) -> str:
        """One line for a terminal: the file, the byte range, what was wrong, the offsets lost."""
        span = f"bytes {self.position}-{self.end}" if self.end is not None else f"bytes {self.position}-end"
        return f"{location}: {span} skipped ({self.code}: {self.message}); {self.offsets_lost()} lost"


@dataclass
class Walk:
    """How a walk ended: ``end`` (the byte after the last whole batch read), ``damage`` (a FormatError-like
    description of what stopped it early, None when nothing did), ``incomplete`` (a live file's last entry
    is still being written: not damage, read it next time)."""

    end: int
    damage: FormatError | None = None
    incomplete: bool = False


class _Batches:
    """Iterator over batches that fills in a :class:`Walk` when exhausted."""

    def __init__(self, path, start, end, live, max_batch_bytes, on_damage):
        self.reader = SegmentReader(path, start=start, max_bytes=end, max_batch_bytes=max_batch_bytes, live=live)
        self.result = Walk(start)
        self.on_damage = on_damage
        self.path = path

    def __iter__(self):
        try:
            if self.on_damage is None:
                yield from self._batches()
            else:
                yield from self._events()
        finally:
            self.reader.close()

    def _batches(self):
        reader = self.reader
        for batch in reader:
            self.result.end = batch.position + batch.size
            yield batch
        self._tail(reader.tail)

    def _tail(self, tail) -> None:
        if tail is None or tail.kind in _CLEAN_KINDS:
            self.result.incomplete = tail is not None and tail.kind == framing.INCOMPLETE
            return
        self.result.damage = FormatError(tail.code or tail.kind, tail.message or tail.kind, position=tail.position)

    def _events(self):
        """The resynchronising walk (:meth:`SegmentReader.events`), as ``kdump dump`` reads: every intact batch
        before and after damage, a batch that fails its CRC too (the caller decides); each entry that is no
        batch and each region of bytes that hold none goes to ``on_damage`` as a :class:`DamagedRegion`."""
        reader, report = self.reader, self.on_damage
        self._next = None  # the offset after the last batch walked: where the offsets lost at the end begin
        stop = None
        for item in readable(reader.events()):
            if isinstance(item, Damage):
                report(self._region(item, reader.max_batch_bytes))
            elif isinstance(item, framing.Stop):
                stop = item
            else:
                self.result.end = item.position + item.size
                self._next = item.last_offset + 1
                yield item
        if stop is not None and stop.code != "damaged-range":  # a damaged range was reported where it was met
            self._tail(stop)
            if self.result.damage is not None:
                end = reader.end
                report(DamagedRegion(stop.code or stop.kind, stop.message or stop.kind, position=stop.position,
                                     end=end, first_offset=self._next_offset(stop.position)))

    def _region(self, damage: Damage, max_batch_bytes: int) -> DamagedRegion:
        entry, event = damage.entry, damage.damaged
        if damage.large is not None:
            return DamagedRegion("batch-too-large", f"an entry of {damage.large.size} bytes is above the limit of "
                                 f"{max_batch_bytes}", position=damage.start, end=damage.end)
        if event is None:
            assert entry is not None  # a Damage is a large entry, a damaged range, or a bad entry
            return DamagedRegion(damage.code, f"{entry.error.message}; skipped this entry", position=damage.start,
                                 end=damage.end)
        cause = event.cause if entry is None else f"{entry.error.message}, and {event.cause}"
        first = None if event.last_good_offset is None else event.last_good_offset + 1
        if first is None and event.start == 0:
            first = segment_base_offset(self.path)
        last = event.next_good_offset - 1 if event.resumed and event.next_good_offset is not None else None
        return DamagedRegion(damage.code, cause, position=event.start, end=event.end, first_offset=first,
                             last_offset=last)

    def _next_offset(self, position):
        if self._next is not None:
            return self._next
        return segment_base_offset(self.path) if position == 0 else None


def walk(path: str, start: int = 0, end: int | None = None, *, live: bool = False,
         max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES, on_damage=None) -> _Batches:
    """Batches of a local segment file from byte ``start`` (a batch boundary) up to byte ``end``
    (a batch boundary, or None for the end of the file). After iterating, ``.result`` is a :class:`Walk`.
    With ``live``, a partial last entry is the writer's, not damage. With ``on_damage``, the walk goes on
    after damage (``kdump dump``'s resynchronising walk) and reports each damaged region to it; without, it
    stops at the first thing that is not a whole batch, as Kafka's reader does (``result.damage``)."""
    return _Batches(os.fspath(path), start, end, live, max_batch_bytes, on_damage)


# The value of a metadata column where it is not the batch attribute itself: a legacy batch's first record
# offset (``first_offset``, which only its records tell), the CRC check only when its column is read, the
# codec's name, the timestamp type's id (as Spark's Kafka source has it).
_COLUMN_VALUES = {
    "base_offset": "batch.base_offset if batch.magic >= 2 else first_offset",
    "is_valid": "batch.is_valid() if check_crc else None",
    "codec_id": "codec_name(batch.codec_id)",
    "timestamp_type": "int(batch.timestamp_type)",
}
# batch_fields(batch, first_offset, check_crc) -> dict: the values of the batch-level columns for one batch
batch_fields = compile_projection(
    "batch_fields", "batch, first_offset, check_crc",
    ((f.column, _COLUMN_VALUES.get(f.attr, f"batch.{f.attr}")) for f in BATCH_FIELDS if f.column is not None),
    line=False, env={"codec_name": codec_name})


def offset_index_positions(index_path: str, base_offset: int) -> list[tuple[int, int]]:
    """``(offset, position)`` of every entry of an offset index, in order; empty if it is unreadable."""
    from kdump.read.offset_index import OffsetIndex
    try:
        with OffsetIndex(index_path, base_offset=base_offset) as idx:
            n = idx.valid_entry_count_fast()
            return [(e.offset, e.position) for _, e in idx.iter_entries(0, n)]
    except (OSError, KdumpError):
        return []

