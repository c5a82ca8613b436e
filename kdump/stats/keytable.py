"""What a log compaction would remove, counted exactly in bounded memory: :class:`KeyTable`.

Feed it the keyed records of one partition in offset order (:meth:`KeyTable.add_entries`: the
:class:`~kdump.format.columns.RecordKeys` entries of a batch's records, or :meth:`KeyTable.add`: a digest of the key,
the record's size, whether it is a tombstone). The log cleaner keeps the last record of each key and removes every
earlier one, so each record whose key comes again later is *superseded*; a key whose last record is a tombstone
(null value) is a *live tombstone*, removed in turn once ``delete.retention.ms`` has passed.

Keys are held as 16-byte digests (:class:`~kdump.format.columns.RecordKeys`), never the keys themselves (two distinct
keys share a digest with probability about n^2 / 2^129: nil for any real log). While the table fits ``memory_bytes``
it is a dict (:class:`PyKeyTable`; the compiled twin ``kdump.stats._keytable.KeyTable``, when built, an open-addressing
table of the 24-byte entries themselves, counting the same with no Python object per key); beyond
that, every entry so far and every later record go to ``FANOUT`` bucket files on disk by the digest's first byte
(the records of one key all land in one bucket, in offset order), and :meth:`finish` counts each bucket with a
dict of its own. A bucket that does not fit either is split again by the next byte of the digest, so memory
stays bounded and the counts stay exact at any size; the disk used is 24 bytes per keyed record.
"""
from __future__ import annotations

import os
import tempfile

from kdump import _backend
from kdump.format import layout as L

ENTRY_MEMORY = 128  # bytes a dict entry takes: a 16-byte bytes object, an int, and its slots (measured ~120)
FANOUT = 256
SPILL = L.KEY_SPILL_ENTRY  # digest, size << 1 | tombstone
_READ = SPILL.size * 8192


class PyKeyTable:
    def __init__(self, memory_bytes: int, *, spill_dir: str | None = None, level: int = 0):
        self.max_keys = max(64, memory_bytes // ENTRY_MEMORY)
        self.memory_bytes = memory_bytes
        self.spill_dir = spill_dir
        self.level = level  # which byte of the digest picks a bucket
        self.table: dict[bytes, int] = {}
        self.superseded = 0
        self.superseded_bytes = 0
        self.keys = 0
        self.live_tombstones = 0
        self.spilled_buckets = 0  # 0: counted in memory
        self._dir: tempfile.TemporaryDirectory | None = None
        self._files: list | None = None

    @property
    def spilled(self) -> bool:
        return self._files is not None

    def add_entries(self, entries) -> None:
        """Every :data:`~kdump.format.layout.KEY_SPILL_ENTRY` of ``entries`` (bytes), in order."""
        add = self._add
        for digest, value in SPILL.iter_unpack(entries):
            add(digest, value)

    def add(self, digest: bytes, size: int, tombstone: bool) -> None:
        self._add(digest, size << 1 | tombstone)

    def _add(self, digest: bytes, value: int) -> None:
        if self._files is not None:
            self._files[digest[self.level]].write(SPILL.pack(digest, value))
            return
        table = self.table
        prev = table.get(digest)
        if prev is not None:
            self.superseded += 1
            self.superseded_bytes += prev >> 1
        table[digest] = value
        if prev is None and len(table) > self.max_keys and self.level < SPILL.size - 9:
            self._spill()

    def _spill(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix=".kdump-keys.", dir=self.spill_dir)
        # the buckets stay open across add() calls; finish() closes them
        self._files = [open(os.path.join(self._dir.name, f"{i:03d}"), "wb", buffering=1 << 16)  # noqa: SIM115
                       for i in range(FANOUT)]
        table, self.table = self.table, {}
        for digest, value in table.items():  # each once, and before every record still to come
            self._files[digest[self.level]].write(SPILL.pack(digest, value))

    def finish(self) -> PyKeyTable:
        """Count what is left (the buckets on disk, if any); the table is empty afterwards."""
        if self._files is None:
            self.keys += len(self.table)
            self.live_tombstones += sum(v & 1 for v in self.table.values())
            self.table = {}
            return self
        try:
            for f in self._files:
                f.close()
            self.spilled_buckets = FANOUT
            self.count_buckets(self, [f.name for f in self._files])
        finally:
            self._files = None
            assert self._dir is not None  # made with _files, in _spill
            self._dir.cleanup()
        return self

    @staticmethod
    def count_buckets(table, paths) -> None:
        """Each bucket file of ``table`` (either twin) counted by a table of its own kind, one level down (the next
        byte of the digest picks its buckets), into ``table``'s counts; the files removed."""
        for path in paths:
            sub = type(table)(table.memory_bytes, spill_dir=table.spill_dir, level=table.level + 1)
            with open(path, "rb") as src:
                while chunk := src.read(_READ):
                    sub.add_entries(chunk)
            sub.finish()
            os.unlink(path)
            table.superseded += sub.superseded
            table.superseded_bytes += sub.superseded_bytes
            table.keys += sub.keys
            table.live_tombstones += sub.live_tombstones
            table.spilled_buckets += sub.spilled_buckets


KeyTable = _backend.pick("KeyTable", PyKeyTable)
