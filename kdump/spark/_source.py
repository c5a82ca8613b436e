"""Where the Spark pipeline walks segments with kdump's reader, and the few batch facts it shows.

* :func:`walk` -- the batches of ``[start, end)`` of one local segment file, then how the walk ended
  (damage, or a live file's last entry still being written: ``SegmentReader(live=True)``);
* :func:`batch_fields` -- the batch-level values the metadata columns show;
* :func:`offset_index_positions` -- the byte positions the offset index names;
* :func:`batch_headers` -- the batch headers of a segment, walked without reading bodies (planning's cut points
  where no offset index says them, and offset-sized tasks).

Records come from the batches themselves (``batch.columns(limit)`` for every magic, a magic-2 batch's
``records_payload(limit)`` for the compiled Arrow path, a run of plain magic 0/1 messages' bytes, ``run.data``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from kdump import SegmentReader
from kdump.errors import FormatError, KdumpError
from kdump.format import framing
from kdump.format.legacy import LegacyRun
from kdump.format.names import BATCH_FIELDS, codec_name, compile_projection
from kdump.read.damage import CLEAN_STOPS, RANGE, Damage, foreign_start, readable
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED_BYTES

__all__ = ["walk", "Walk", "Damage", "batch_fields", "offset_index_positions", "batch_headers",
           "DEFAULT_MAX_DECOMPRESSED_BYTES", "FormatError", "KdumpError"]

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
            # a whole file that cannot start a Kafka log (text renamed .log...) is said as such, as every command
            # says it, not read as a crash-cut tail that fails nothing
            foreign = foreign_start(self.reader) if self.reader.start == 0 else None
            if foreign is not None:
                if self.on_damage is None:
                    self.result.damage = foreign
                else:
                    self.on_damage(foreign)
                return
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
        if tail is None or tail.kind in CLEAN_STOPS:
            self.result.incomplete = tail is not None and tail.kind == framing.INCOMPLETE
            return
        self.result.damage = FormatError(tail.code or tail.kind, tail.message or tail.kind, position=tail.position)

    def _events(self):
        """The resynchronising walk (:func:`kdump.read.damage.readable`), as ``kdump dump`` reads: every intact
        batch before and after damage, a batch that fails its CRC too (the caller decides); each damaged area
        (an entry that is no batch, bytes that hold none, a damaged tail) goes to ``on_damage`` as a
        :class:`~kdump.read.damage.Damage`. Consecutive intact plain magic 0/1 messages come as one
        :class:`~kdump.format.legacy.LegacyRun`."""
        reader, report = self.reader, self.on_damage
        stop = None
        for item in readable(reader):
            if isinstance(item, Damage):
                if item.kind == RANGE and item.batch is not None:
                    # a damaged range that starts at a batch failing its CRC: the batch comes as any batch failing
                    # its CRC does (shown with checkCrcs=false, as dump shows it), the range is the damage
                    yield item.batch
                report(item)
            elif isinstance(item, framing.Stop):
                stop = item
            elif type(item) is LegacyRun:  # intact plain magic 0/1 messages: the Arrow builder takes them whole
                self.result.end = item.end
                yield item
            else:
                self.result.end = item.position + item.size
                yield item
        if stop is not None and stop.code != "damaged-range":  # a damaged range was reported where it was met
            self._tail(stop)


def walk(path: str, start: int = 0, end: int | None = None, *, live: bool = False,
         max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES, on_damage=None) -> _Batches:
    """Batches of a local segment file from byte ``start`` (a batch boundary) up to byte ``end``
    (a batch boundary, or None for the end of the file). After iterating, ``.result`` is a :class:`Walk`.
    With ``live``, a partial last entry is the writer's, not damage. With ``on_damage``, the walk goes on
    after damage (``kdump dump``'s resynchronising walk, intact plain magic 0/1 messages as
    :class:`~kdump.format.legacy.LegacyRun` s) and reports each damaged region to it; without, it
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



def batch_headers(path: str, start: int = 0):
    """``(position, end, last offset)`` of each batch of a local segment from byte ``start``, by the header walk
    (:meth:`SegmentReader.headers`: one positional read per batch, no bodies), then ``(position, None, None)`` where
    the walk stopped before the end of the file (damage: what follows is found by the resynchronising read)."""
    with SegmentReader(path, start=start) as reader:
        for header in reader.headers():
            yield header.position, header.end, header.last_offset
        tail = reader.tail
        if tail is not None and tail.kind != framing.END:
            yield tail.position, None, None
