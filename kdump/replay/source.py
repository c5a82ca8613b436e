"""What a replay reads: the partitions of one internal topic named on the command line, their segments in
offset order, record by record; and what could not be used (:class:`Skipped`), which never stops a replay.

A path may be a partition directory (``__consumer_offsets-12``), a log directory holding such partitions
(every one of that topic is read; other topics are passed over), a directory of segments whose name is no
Kafka partition name (a copy set aside for inspection: taken as the topic's), or segment / snapshot files.
A partition directory or file of another topic is refused (:class:`ReplayInputError`): replaying
``orders-0`` as group metadata would only give a screen of undecodable records.
"""
from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field

from kdump.errors import FormatError, error_object
from kdump.format.columns import RECORDS_PER_CHUNK
from kdump.read.damage import Damage, by_batch, foreign_start, readable
from kdump.read.logdir import FileKind, directory_state, named_kind, topic_partition
from kdump.read.partition import PartitionLog
from kdump.read.scan import scan
from kdump.read.segment import DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader, Stop


class ReplayInputError(Exception):
    """A path that cannot be replayed as the topic asked for (missing, unreadable, another topic's)."""


@dataclass(frozen=True)
class Skipped:
    """A record (or a stretch of a file) left out of a replay, and why: ``code`` names the kind of problem
    (``record-undecodable``, ``crc-mismatch``, ...), ``position`` the byte (of its batch) where it is."""
    file: str
    offset: int | None
    reason: str
    code: str = "record-undecodable"
    position: int | None = None
    kafka_tail: bool = False  # a crash-cut tail, which Kafka's recovery drops too: reported, not failing a run

    def to_json(self) -> dict:
        """kdump's error object (:func:`kdump.errors.error_object`), with the record's ``offset``."""
        return error_object(self.file, self.code, self.reason, self.position, offset=self.offset)

    def text(self) -> str:
        where = f"offset {self.offset}" if self.offset is not None else "file"
        return f"{self.file}: {where}: {self.reason}"


# The largest key or value an internal-topic record can hold, checked before the record is copied out of its batch
# (a record of a user topic replayed by mistake may be as large as the batch limit). KRaft writes
# __cluster_metadata (log and snapshots) in batches of at most 8 MiB (KafkaRaftClient.MAX_BATCH_SIZE_BYTES: a
# larger record is refused), so no metadata field is larger. The coordinators write __consumer_offsets and
# __transaction_state within the topic's max.message.bytes (1 MiB by default; a large group's metadata needs it
# raised): 64 times that default, far beyond any group or transaction, yet a copy that stays within the memory
# bound (docs/dump.md, "Memory").
MAX_METADATA_FIELD_BYTES = 8 << 20
MAX_COORDINATOR_FIELD_BYTES = 64 << 20

SKIPPED_LISTED = 1000  # skipped records and stretches listed per replay; the rest are counted


class SkipList:
    """What a replay left out: the first ``listed`` kept (:class:`Skipped`), every one counted, so that a log of
    millions of undecodable records does not take an object each. Iterating gives the kept ones; ``len`` counts
    all."""

    def __init__(self, listed: int = SKIPPED_LISTED):
        self.items: list[Skipped] = []
        self.total = 0
        self.tails = 0  # of them, crash-cut tails (Skipped.kafka_tail)
        self.listed = listed

    def append(self, skipped: Skipped) -> None:
        self.total += 1
        self.tails += skipped.kafka_tail
        if len(self.items) < self.listed:
            self.items.append(skipped)

    def __iter__(self) -> Iterator[Skipped]:
        return iter(self.items)

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, i: int) -> Skipped:
        return self.items[i]

    def __eq__(self, other) -> bool:
        """Equal to a list holding exactly what was skipped (nothing left unlisted)."""
        if isinstance(other, SkipList):
            return self.items == other.items and self.total == other.total
        if isinstance(other, list):
            return self.not_listed == 0 and self.items == other
        return NotImplemented

    # mutable: no hash
    __hash__ = None  # type: ignore[assignment]

    @property
    def not_listed(self) -> int:
        return self.total - len(self.items)

    def to_json(self) -> dict:
        """The JSON fields: ``skipped`` (the kept ones), and ``skippedNotListed`` when some were only counted."""
        out: dict = {"skipped": [s.to_json() for s in self.items]}
        if self.not_listed:
            out["skippedNotListed"] = self.not_listed
        return out


@dataclass(frozen=True)
class Record:
    """One record of a segment, with what a replay needs of its batch."""
    file: str
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    producer_id: int
    transactional: bool
    control: bool
    position: int | None = None  # the byte position of its batch (where a record that cannot be used is)


@dataclass
class Source:
    """One partition's files: ``logs`` (segments in offset order) and ``snapshots`` (KRaft ``.checkpoint``)."""
    directory: str
    logs: list[str] = field(default_factory=list)
    snapshots: list[str] = field(default_factory=list)


def sources(paths, topic: str) -> list[Source]:
    """The partitions of ``topic`` that ``paths`` name (see the module's docstring for what a path may be)."""
    out: list[Source] = []
    named_files: dict[str, Source] = {}
    for path in paths:
        path = os.fspath(path)
        try:
            st = os.stat(path)
        except OSError as e:
            raise ReplayInputError(f"{path}: cannot open: {e.strerror or e}") from None
        if stat.S_ISDIR(st.st_mode):
            out.extend(_directory_sources(path, topic))
            continue
        if not stat.S_ISREG(st.st_mode):
            raise ReplayInputError(f"{path}: not a regular file: not opened (reading it could block)")
        directory = os.path.dirname(os.path.abspath(path))
        _check_topic(directory, topic, path)
        kind = named_kind(path)  # by suffix for copies: bootstrap.checkpoint and other snapshot copies
        if kind not in (FileKind.LOG, FileKind.KRAFT_CHECKPOINT):
            raise ReplayInputError(f"{path}: not a log segment (.log) or KRaft snapshot (.checkpoint)")
        src = named_files.get(directory)
        if src is None:
            src = named_files[directory] = Source(directory)
            out.append(src)
        (src.logs if kind is FileKind.LOG else src.snapshots).append(path)
    return out


def _check_topic(directory: str, topic: str, path: str) -> None:
    named = topic_partition(directory)
    if named is not None and named[0] != topic:
        raise ReplayInputError(f"{path}: is in a partition of topic {named[0]!r}, not {topic}")


def _directory_sources(directory: str, topic: str) -> list[Source]:
    found = scan([directory])
    if not found.directories:
        raise ReplayInputError(f"{directory}: {found.refused[0].reason}")
    top = PartitionLog(found.directories[0])
    if top.is_partition or top.topic == topic:
        if top.topic is not None:
            _check_topic(directory, topic, directory)
        return [_source(top)]
    partitions = [_source(p) for p in found.partitions if p.topic == topic and directory_state(p.directory) is None]
    if not partitions:
        raise ReplayInputError(f"{directory}: holds no {topic} partition (give a {topic}-N directory, a log "
                               "directory holding them, or segment files)")
    return partitions


def _source(part: PartitionLog) -> Source:
    return Source(part.directory, [s.log for s in part.segments], list(part.files.kraft_snapshots))


def read_records(path: str, skipped: SkipList, *, limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                 max_field_bytes: int = MAX_COORDINATOR_FIELD_BYTES, progress=None) -> Iterator[Record]:
    """Every record of one segment or snapshot file; batches and records that cannot be read are added to
    ``skipped`` (a batch failing its CRC is left out whole: Kafka would have truncated the log there; a record
    whose key or value is above ``max_field_bytes``, no record of the topic, is left out before it is copied).
    ``progress(bytes)``, if given, as each batch is taken."""
    try:
        reader = SegmentReader(path)
    except OSError as e:  # said, and the other files still replayed
        skipped.append(Skipped(path, None, f"cannot read: {e.strerror or e}"))
        return
    with reader:
        foreign = foreign_start(reader)
        if foreign is not None:  # e.g. text renamed .log: said as such, not as an incomplete last batch
            skipped.append(Skipped(path, None, foreign.message))
            return
        # past damage, as every command reads (kdump.read.damage): each damaged area skipped and said, the intact
        # batches after it replayed; runs of plain magic 0/1 messages one message at a time
        for batch in by_batch(readable(reader)):
            if isinstance(batch, Damage):
                lost = batch.lost_offsets()
                skipped.append(Skipped(path, lost.first, f"at byte {batch.start}: {batch.describe()}", batch.code,
                                       batch.start, kafka_tail=not batch.fails))
                continue
            if isinstance(batch, Stop):
                break
            if progress is not None:
                progress(batch.size)
            span = f"batch at byte {batch.position} (offsets {batch.base_offset}..{batch.last_offset})"
            if not batch.is_valid():
                skipped.append(Skipped(path, batch.base_offset, f"{span} fails its CRC check; its records are "
                                                                "left out", "crc-mismatch", batch.position))
                continue
            chunks = batch.column_chunks(limit, RECORDS_PER_CHUNK)  # bounded memory, whatever the count declared
            try:
                cols = next(chunks)
            except FormatError as e:
                skipped.append(Skipped(path, batch.base_offset, f"{span}: {e.message}; its records are left out",
                                       e.code, batch.position))
                continue
            producer_id, transactional, control = batch.producer_id, batch.is_transactional, batch.is_control
            while True:
                for i in range(cols.count):
                    if cols.valid is not None and not cols.valid[i]:
                        skipped.append(Skipped(path, cols.offsets[i], "message fails its CRC check",
                                               "inner-crc-mismatch", batch.position))
                        continue
                    largest = max(cols.key_len[i], cols.value_len[i])
                    if largest > max_field_bytes:
                        skipped.append(Skipped(path, cols.offsets[i], f"a key or value of {largest:,} bytes, above "
                                               f"the {max_field_bytes:,} bytes a record of this topic can hold; "
                                               "left out unread", "record-too-large", batch.position))
                        continue
                    yield Record(path, cols.offsets[i], cols.timestamps[i], cols.key(i), cols.value(i),
                                 producer_id, transactional, control, batch.position)
                following = next(chunks, None)
                if following is None:
                    break
                cols = following
            if cols.error is not None:
                skipped.append(Skipped(path, batch.base_offset, f"{span}: {cols.error.message}; the records "
                                                                "after it are left out", cols.error.code,
                                       batch.position))
