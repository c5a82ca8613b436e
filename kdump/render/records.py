"""``--format records``: JSON Lines, one object per record, as kcat ``-J`` users expect: ``jq '.value'`` needs no
``.records[]``.

Each record object holds the partition it belongs to (``topic`` and ``partition`` from its directory's name, null
when the directory is not named ``<topic>-<partition>``), the record's own members as ``--format json`` writes
them inside a batch (offset, timestamp, timestampType, key and value with their encodings, headers, ...), and the
members of its batch that a record inherits (:data:`INHERITED`: magic, codec, producer, transaction and control
flags, the batch's CRC check), then the segment's ``path`` and the batch's ``position`` in it. Files' tails,
errors and companion entries are the typed objects of ``--format json`` (``"type": "tail"`` ...).

The common case (no decoder, no control batch, no large field) writes a batch's records in one call
(:func:`records_lines`, compiled in kdump/render/_jsonl.pyx): each record's object whole, between the head and
the batch's members given once per batch as JSON bytes.
"""
from __future__ import annotations

import os
from collections.abc import Iterator

from kdump.format import names as N
from kdump.read.logdir import topic_partition
from kdump.render.jsonl import JsonLinesRenderer, _json, batch_object, record_objects
from kdump.render.large_fields import json_pieces, records_with_large_fields

# The batch members every record object carries, after its own (the batch's field table: kdump.format.names).
INHERITED = ("magic", "codec_id", "producer_id", "producer_epoch", "is_transactional", "is_control",
             "partition_leader_epoch", "is_valid")


class RecordsRenderer(JsonLinesRenderer):
    """The renderer ``kdump dump --format records`` drives: the JSON Lines renderer's walk, one line per record."""

    def __init__(self, out, **kwargs):
        kwargs.update(print_data=True, deep=True)
        super().__init__(out, **kwargs)
        self._head = b"{"
        self._partition_json = b""

    def begin_file(self, display_path: str, header: str | None) -> None:
        super().begin_file(display_path, header)
        named = topic_partition(os.path.basename(os.path.dirname(os.path.abspath(display_path))))
        topic, partition = named if named is not None else (None, None)
        # what every record of the file starts with, and the offset member's name after it
        self._head = _json({"topic": topic, "partition": partition})[:-1] + b", "

    def legacy_run(self, run, deep: bool) -> bool:
        return False  # each message is handed over as its own batch with its record

    def batch(self, batch, records=None, decoded=None) -> None:
        if records is not None:
            self._records(batch, records, decoded)

    def open_batch(self, batch, records, decoded=None) -> None:
        self._records(batch, records, decoded)

    def more_records(self, batch, records, decoded=None) -> None:
        self._records(batch, records, decoded)

    def close_batch(self, batch) -> None:
        pass

    def _tail(self, batch) -> bytes:
        """The members after a record's own: its batch's (:data:`INHERITED`), the path and the batch's position."""
        obj = batch_object(batch, self.path)
        tail = {N.BATCH_FIELD[attr].json: obj[N.BATCH_FIELD[attr].json] for attr in INHERITED}
        tail["path"] = self.path
        tail["position"] = batch.position
        return b", " + _json(tail)[1:] + b"\n"

    def _records(self, batch, records, decoded) -> None:
        if not records.count:
            return
        tail = self._tail(batch)
        plain = decoded is None and not batch.is_control
        large = set(records_with_large_fields(records, header_values=self.header_decoder is None)) if plain else set()
        if (plain and not large and self.when is None and self.header_decoder is None and self.key_decoder is None
                and self.value_decoder is None):
            if self._raw is None:  # text (a terminal): escaped as it is written
                self._emit(records_lines(batch, records, self._head, tail))
                return
            self.out.flush()  # what was written as text goes first
            records_lines(batch, records, self._head, tail, self._raw.write)  # written from where it was built
            return
        objects = None if large else record_objects(batch, records, True, decoded, self.when, self.header_decoder,
                                                    self.key_decoder, self.value_decoder)
        for i in range(records.count):
            if objects is not None:
                self._emit(self._head, _json(objects[i])[1:-1], tail)
            elif i in large:  # its large fields written a slice at a time, as --format json writes them
                self._emit(self._head, _inside(json_pieces(self._large_record_object(batch, records, i))), tail)
            else:
                one = record_objects(batch, records.slice(i, i + 1), True, None, self.when, self.header_decoder,
                                     self.key_decoder, self.value_decoder)[0]
                self._emit(self._head, _json(one)[1:-1], tail)


def records_lines_py(batch, cols, head: bytes, tail: bytes, write=None) -> bytes | None:
    """The records of ``cols`` (a non-control batch's, no decoded objects), each on its own line: ``head``, the
    record's members as ``--format json`` writes them (:func:`kdump.render.jsonl.record_objects`, keys and values
    printed), then ``tail`` (the members after them, the object's closing brace and the newline); with ``write``,
    handed to it and None returned. The compiled twin in kdump/render/_jsonl.pyx must give the same bytes."""
    data = b"".join([head + _json(obj)[1:-1] + tail for obj in record_objects(batch, cols, True)])
    if write is None:
        return data
    write(data)
    return None


def _inside(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """The pieces of a JSON object's text without its braces."""
    previous = None
    first = True
    for piece in pieces:
        if previous is not None:
            yield previous[1:] if first else previous
            first = False
        previous = piece
    if previous is not None:
        yield (previous[1:] if first else previous)[:-1]


def _select(name, pure):
    from kdump import _backend
    return _backend.pick(name, pure)


records_lines = _select("records_lines", records_lines_py)
