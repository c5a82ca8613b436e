"""The numbers of a log: per partition directory and in total, segments, batches, records, bytes, offset and
time ranges, and the mix of codecs and magics. One segment at a time (:func:`segment_stats`), merged with
:meth:`Stats.merge`, so that the same numbers come from one process or from Spark tasks.

A segment is read as ``dump`` and ``verify`` read it (:func:`kdump.read.damage.readable`): every intact batch
before and after damage, and each damaged area (a damaged size field, an entry that is no batch, a batch failing
its CRC, bytes that hold no entry, a tail) one error (:class:`kdump.report.findings.Problem`: file, byte position,
cause and the offsets it costs); a file that is no Kafka log (text renamed ``.log``) one error for the whole file; a
segment that cannot be read one ``cannot-read`` error, and the walk goes on with the next. A crash-cut tail that
Kafka itself reports with exit 0 (``Found N invalid bytes at the end``) is a note, not an error: the read layer's
one policy, :attr:`Damage.fails <kdump.read.damage.Damage.fails>`.

Counted as ``verify`` counts them: batches are the intact ones and those that fail their CRC (or lie above the batch
limit: their records are not read); records are the records read from intact batches (a batch whose records
cannot be decoded, in part or at all, counts those decoded, and is an error). Timestamps: the smallest and
largest record timestamp of the records read (not the batches' max timestamps: a batch of records from t to t+7
starts at t); -1 (no timestamp) is left out. Offsets: the first intact batch's first offset and the last one's
last offset; the total of several partitions has none (offsets of different partitions do not add up).
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from kdump.errors import FormatError, KdumpError, WriteError
from kdump.format.columns import RECORDS_PER_CHUNK
from kdump.format.legacy import LegacyRun
from kdump.format.names import codec_name
from kdump.read.damage import BATCH, LARGE, Damage, foreign_start, readable
from kdump.read.logdir import topic_partition
from kdump.read.scan import log_base_offset
from kdump.read.segment import DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader, Stop
from kdump.report.findings import Problem
from kdump.report.outcome import Outcome, label

DEFAULT_MEMORY = 256 << 20  # for the key digests of one partition (kdump stats --memory)


@dataclass
class Stats:
    segments: int = 0  # segments read (one that cannot be opened is an error, not a segment read)
    batches: int = 0
    records: int = 0
    bytes: int = 0  # file bytes (trailing bytes included)
    first_offset: int | None = None
    last_offset: int | None = None
    min_timestamp: int | None = None
    max_timestamp: int | None = None
    codecs: dict = field(default_factory=dict)  # codec name -> batches
    magics: dict = field(default_factory=dict)  # "0"/"1"/"2" -> batches
    damaged_segments: int = 0  # segments read with at least one error
    errors: list = field(default_factory=list)  # Problem: each damaged area, file not Kafka's, segment unreadable
    notes: list = field(default_factory=list)  # Problem: worth knowing, not damage (a tail Kafka reports with exit 0)

    def merge(self, other: Stats) -> Stats:
        def lo(a, b):
            return b if a is None else a if b is None else min(a, b)

        def hi(a, b):
            return b if a is None else a if b is None else max(a, b)
        out = Stats(segments=self.segments + other.segments, batches=self.batches + other.batches,
                    records=self.records + other.records, bytes=self.bytes + other.bytes,
                    first_offset=lo(self.first_offset, other.first_offset),
                    last_offset=hi(self.last_offset, other.last_offset),
                    min_timestamp=lo(self.min_timestamp, other.min_timestamp),
                    max_timestamp=hi(self.max_timestamp, other.max_timestamp), codecs=dict(self.codecs),
                    magics=dict(self.magics), damaged_segments=self.damaged_segments + other.damaged_segments,
                    errors=self.errors + other.errors, notes=self.notes + other.notes)
        for mine, theirs in ((out.codecs, other.codecs), (out.magics, other.magics)):
            for k, v in theirs.items():
                mine[k] = mine.get(k, 0) + v
        return out

    def to_dict(self) -> dict:
        """The numbers as JSON (camelCase, as every JSON kdump writes); the errors and notes are listed apart."""
        return {"segments": self.segments, "batches": self.batches, "records": self.records, "bytes": self.bytes,
                "firstOffset": self.first_offset, "lastOffset": self.last_offset,
                "minTimestamp": self.min_timestamp, "maxTimestamp": self.max_timestamp,
                "codecs": dict(sorted(self.codecs.items())), "magics": dict(sorted(self.magics.items())),
                "damagedSegments": self.damaged_segments}

    # --- what a walk adds ---------------------------------------------------------------------------------
    def add_batch(self, batch, records: int, times: tuple[int, int] | None = None) -> None:
        """An intact batch, of which ``records`` were read, their timestamps from ``times[0]`` to ``times[1]``."""
        self.add_header(batch.codec_id, batch.magic)
        self.records += records
        if self.first_offset is None:
            try:
                self.first_offset = batch.base_offset
            except KdumpError:  # a legacy wrapper that does not decompress: its own offset stands for it
                self.first_offset = batch.last_offset
        self.last_offset = batch.last_offset
        if times is not None:
            self._timestamps(*times)

    def add_run(self, run: LegacyRun) -> None:
        """A run of intact plain magic 0/1 messages: what :meth:`add_batch` makes of each, a batch of one record,
        from the run's :meth:`~kdump.format.legacy.LegacyRun.keys` (no Python object per message)."""
        keys = run.keys()
        n = run.count
        self.batches += n
        self.records += n
        codec = codec_name(0)
        self.codecs[codec] = self.codecs.get(codec, 0) + n
        for magic, count in (("0", keys.magic0), ("1", n - keys.magic0)):
            if count:
                self.magics[magic] = self.magics.get(magic, 0) + count
        if self.first_offset is None:
            self.first_offset = run.base_offset
        self.last_offset = run.last_offset
        lo, hi = keys.min_timestamp, keys.max_timestamp
        if lo is not None and hi is not None:
            self._timestamps(lo, hi)

    def _timestamps(self, lo: int, hi: int) -> None:
        """The range of record timestamps widened to hold ``lo``..``hi``."""
        self.min_timestamp = lo if self.min_timestamp is None else min(self.min_timestamp, lo)
        self.max_timestamp = hi if self.max_timestamp is None else max(self.max_timestamp, hi)

    def add_header(self, codec_id: int | None, magic: int) -> None:
        """A batch counted by its header (one failing its CRC or above the batch limit is no less a batch, as
        ``verify`` counts it; ``codec_id`` None where no header was read)."""
        self.batches += 1
        if codec_id is not None:
            codec = codec_name(codec_id)
            self.codecs[codec] = self.codecs.get(codec, 0) + 1
        self.magics[str(magic)] = self.magics.get(str(magic), 0) + 1

    def add_damage(self, path: str, damage: Damage) -> None:
        """A damaged area of the walk (:func:`kdump.read.damage.readable`): an error, or a note for a tail Kafka
        reports with exit 0. A batch failing its CRC, or above the batch limit, is counted by its header."""
        if damage.kind == BATCH and damage.batch is not None:
            self.add_header(damage.batch.codec_id, damage.batch.magic)
        elif damage.kind == LARGE and damage.large is not None:
            header = damage.large.header
            self.add_header(header.codec_id if header is not None else None, damage.large.magic)
        (self.errors if damage.fails else self.notes).append(Problem.of(path, damage))


def _count_records(batch) -> tuple[int, KdumpError | None, tuple[int, int] | None]:
    """The records read from ``batch`` (in bounded chunks), the error that stopped reading them (None: all) and
    their time range (:func:`_times`)."""
    if type(batch) is LegacyRun:
        return batch.count, None, None  # intact messages, each its own record (their times: the run's keys)
    n = 0
    times = None
    try:
        for cols in batch.key_chunks(DEFAULT_MAX_DECOMPRESSED_BYTES, RECORDS_PER_CHUNK):
            n += cols.count  # counted up to the damage, as a reader would deliver them
            times = _times(times, cols)
            if cols.error is not None:
                return n, cols.error, times
    except KdumpError as e:
        return n, e, times
    return n, None, times


def _times(times: tuple[int, int] | None, keys) -> tuple[int, int] | None:
    """``times`` (smallest, largest record timestamp so far) widened by a chunk's (:class:`RecordKeys`)."""
    lo, hi = keys.min_timestamp, keys.max_timestamp
    if lo is None or hi is None:
        return times
    return (lo, hi) if times is None else (min(times[0], lo), max(times[1], hi))


def segment_stats(path: str, size: int | None = None, observe=None, *, next_base: int | None = None) -> Stats:
    """The numbers of one segment file, read past damage as ``dump`` and ``verify`` read it (see the module
    docstring). ``observe(batch)``, if given, reads each intact batch's records (or a run of plain magic 0/1
    messages, :class:`~kdump.format.legacy.LegacyRun`, whole) and returns (records read, the error that stopped it
    or None) (:meth:`RecordAnalysis.batch`, the record-level pass in the same walk); without it they are counted
    here. ``next_base``: the next segment's base offset (bounds the offsets lost at the end).
    A file that cannot be read (or stops reading: EIO) is an error (``cannot-read``), never an exception."""
    s = Stats()
    count = _count_records if observe is None else observe
    try:
        with SegmentReader(path) as reader:
            s.segments = 1
            s.bytes = reader.file_size if size is None else size
            foreign = foreign_start(reader)
            if foreign is not None:
                s.errors.append(Problem.of(path, foreign))
            else:
                for item in readable(reader, show_invalid=False, next_base=next_base):
                    if type(item) is LegacyRun:  # plain magic 0/1 messages, counted whole (each a batch of one)
                        count(item)
                        s.add_run(item)
                    elif isinstance(item, Damage):
                        s.add_damage(path, item)
                    elif not isinstance(item, Stop):
                        records, error, times = count(item)
                        s.add_batch(item, records, times)
                        if error is not None:
                            s.errors.append(Problem.of(path, _at(error, item.position)))
    except WriteError:  # the key digests could not be spilled: no fault of the segment's
        raise
    except OSError as e:
        s.errors.append(Problem.of(path, e))
    s.damaged_segments = 1 if s.errors and s.segments else 0
    return s


def _at(error: KdumpError, position: int) -> KdumpError:
    """A record-level error at the position of the batch it came from (where it has none of its own)."""
    return error.at(position) if isinstance(error, FormatError) else FormatError("records-unreadable", str(error),
                                                                                 position=position)


@dataclass
class PartitionStats:
    """One partition directory's numbers: ``path`` (the directory), ``topic`` and ``partition`` (None when it is not
    named ``<topic>-<n>``), the header numbers (:class:`Stats`, with the errors and notes) and the record-level
    ones (:class:`RecordStats`)."""

    path: str
    topic: str | None
    partition: int | None
    stats: Stats
    records: RecordStats

    @property
    def name(self) -> str:
        """``<topic>-<partition>``, or the directory."""
        return f"{self.topic}-{self.partition}" if self.topic is not None else self.path

    @property
    def read(self) -> bool:
        """Anything of it was read (a partition whose every segment is unreadable has no numbers to show)."""
        return self.stats.segments > 0

    @property
    def label(self) -> str:
        """OK, or FAIL with an error (stats has no warnings: a note never fails a run)."""
        return label(len(self.stats.errors), 0)


@dataclass
class Summary:
    """What ``kdump stats`` (and ``kdump spark stats``) report: the partitions in name order, the totals, and the
    errors of the run that belong to no partition (a path missing or refused: set by the command)."""

    partitions: list[PartitionStats]
    total: Stats
    total_records: RecordStats
    errors: list = field(default_factory=list)

    @property
    def shown(self) -> list[PartitionStats]:
        """The partitions with numbers (something of them was read)."""
        return [p for p in self.partitions if p.read]

    def outcome(self, outcome: Outcome | None = None) -> Outcome:
        """What the run saw, into ``outcome`` (a new one when None), by :mod:`kdump.report.outcome`'s rules: a partition
        read is one line (its label), one whose segments are all unreadable is unreadable; every other segment
        that cannot be read makes the run fail too."""
        outcome = Outcome() if outcome is None else outcome
        for p in self.partitions:
            if p.read:
                outcome.file(errors=len(p.stats.errors))
            else:
                outcome.cannot_read()
        return outcome


def summary_doc(summary: Summary) -> dict:
    """The summary as a JSON document (``kdump stats --format json``, written by :data:`kdump.render.RENDERERS`,
    which adds the time range in a non-epoch ``--time-format`` beside the epoch ms): ``partitions`` (those read, each
    with its ``path``, ``topic``, ``partition``, ``label``, numbers, ``errors`` and ``notes``), ``total`` (null when
    nothing was read: no report of zeros), and
    ``errors`` (those of no partition shown: a path refused, a partition none of whose segments could be read)."""
    def entry(p: PartitionStats) -> dict:
        return {"path": p.path, "topic": p.topic, "partition": p.partition, "label": p.label,
                **p.stats.to_dict(), **p.records.to_dict(),
                "errors": [e.to_dict() for e in p.stats.errors], "notes": [n.to_dict("note") for n in p.stats.notes]}
    unshown = [e for p in summary.partitions if not p.read for e in p.stats.errors]
    shown = summary.shown
    return {"partitions": [entry(p) for p in shown],
            "total": {**summary.total.to_dict(), **summary.total_records.to_dict()} if shown else None,
            "errors": [e.to_dict() for e in [*summary.errors, *unshown]]}


def partition_stats(logs, *, memory_bytes: int = DEFAULT_MEMORY, spill_dir: str | None = None,
                    progress=None) -> tuple[Stats, RecordStats]:
    """The numbers of one partition's segments (paths in offset order; an iterator is walked one path at a time),
    header and record level in one walk. Given as a list, each segment's damage at its end is bounded by the next
    segment's base offset."""
    analysis = RecordAnalysis(memory_bytes, spill_dir=spill_dir, progress=progress)
    bases = [log_base_offset(p) for p in logs] if isinstance(logs, Sequence) else None
    st = Stats()
    for i, log in enumerate(logs):
        next_base = bases[i + 1] if bases is not None and i + 1 < len(bases) else None
        st = st.merge(segment_stats(log, observe=analysis.batch, next_base=next_base))
    return st, analysis.finish()


def partition_where(directory: str) -> tuple[str, str | None, int | None]:
    """(path, topic, partition) of a partition directory (topic and partition None when it is not named so)."""
    named = topic_partition(os.path.basename(os.path.abspath(directory)))
    return (directory, *named) if named is not None else (directory, None, None)


def stats_paths(groups, *, memory_bytes: int = DEFAULT_MEMORY, spill_dir: str | None = None, progress=None,
                jobs: int = 1) -> Summary:
    """:func:`merge_partitions` of :func:`partition_stats` over the :class:`kdump.read.scan.SegmentGroup` s (or
    their :func:`kdump.jobs.group_work`, made once for a progress bar's total). One
    partition at a time: ``memory_bytes`` bounds each. ``jobs`` > 1: the partitions in that many worker processes
    (:func:`kdump.jobs.ordered_map`; ``progress`` advances as the workers report), the same summary."""
    from kdump.jobs import group_work
    work = group_work(groups)
    groups = work.units
    if jobs <= 1 or len(groups) <= 1:
        return merge_partitions((partition_where(g.directory), *partition_stats(
            g.logs, memory_bytes=memory_bytes, spill_dir=spill_dir, progress=progress)) for g in groups)
    from kdump.jobs import ordered_map
    counted = ordered_map(_partition_stats, [(g.logs, memory_bytes, spill_dir) for g in groups], jobs,
                          sizes=work.sizes, progress=progress)
    return merge_partitions((partition_where(g.directory), *numbers)
                            for g, numbers in zip(groups, counted, strict=True))


def _partition_stats(logs, memory_bytes: int, spill_dir: str | None, *, progress=None) -> tuple[Stats, RecordStats]:
    """:func:`partition_stats` in a worker of :func:`stats_paths` (positional arguments, a module-level name:
    what a worker process is handed)."""
    return partition_stats(logs, memory_bytes=memory_bytes, spill_dir=spill_dir, progress=progress)


def merge_partitions(per_partition) -> Summary:
    """The :class:`Summary` of ``((path, topic, partition), Stats, RecordStats)`` per partition directory (``kdump
    stats`` and ``kdump spark stats``), the partitions in name order."""
    partitions = [PartitionStats(path, topic, partition, st, rs) for (path, topic, partition), st, rs in per_partition]
    partitions.sort(key=lambda p: (p.name, p.path))
    total, total_records = Stats(), RecordStats()
    for p in partitions:
        total = total.merge(p.stats)
        total_records = total_records.merge(p.records)
    if len(partitions) > 1:  # each partition numbers its own offsets: a range across them would mean nothing
        total.first_offset = total.last_offset = None
    return Summary(partitions, total, total_records)


# --- record-level numbers (kdump stats) -------------------------------------------------------------------


@dataclass
class RecordStats:
    """What only the records tell, per partition (summed over partitions for the total): compression, producers,
    transactions, control records, keys and what a compaction would remove (:mod:`kdump.stats.keytable`)."""

    compression: dict = field(default_factory=dict)  # codec -> [batches, bytes, uncompressed bytes]
    producers: int = 0
    committed: int = 0
    aborted: int = 0
    open_transactions: int = 0
    control_records: int = 0
    keyed_records: int = 0
    keyless_records: int = 0
    tombstones: int = 0
    distinct_keys: int = 0
    superseded_records: int = 0
    superseded_bytes: int = 0
    live_tombstones: int = 0
    spilled_partitions: int = 0  # partitions whose keys did not fit --memory and were counted on disk
    unreadable_batches: int = 0  # batches whose records could not be decoded (left out of these numbers)

    def merge(self, other: RecordStats) -> RecordStats:
        out = RecordStats(**{k: v for k, v in asdict(self).items() if k != "compression"})
        for k, v in asdict(other).items():
            if k != "compression":
                setattr(out, k, getattr(out, k) + v)
        for mine in (self.compression, other.compression):
            for codec, counts in mine.items():
                have = out.compression.setdefault(codec, [0, 0, 0])
                for i, n in enumerate(counts):
                    have[i] += n
        return out

    def to_dict(self) -> dict:
        return {
            "compression": {codec: {"batches": b, "bytes": n, "uncompressedBytes": u,
                                    "ratio": round(u / n, 3) if n else None}
                            for codec, (b, n, u) in sorted(self.compression.items())},
            "producers": self.producers,
            "transactions": {"committed": self.committed, "aborted": self.aborted, "open": self.open_transactions},
            "controlRecords": self.control_records,
            "keys": {"distinct": self.distinct_keys, "keyedRecords": self.keyed_records,
                     "keylessRecords": self.keyless_records,
                     "method": "exact, key digests in memory" if not self.spilled_partitions else
                     f"exact, key digests spilled to disk in {self.spilled_partitions} partition(s)"},
            "compaction": {"supersededRecords": self.superseded_records, "supersededBytes": self.superseded_bytes,
                           "tombstones": self.tombstones, "liveTombstones": self.live_tombstones},
            "unreadableBatches": self.unreadable_batches,
        }


class RecordAnalysis:
    """The record-level pass over one partition's batches, in offset order (:meth:`batch`, the ``observe`` of
    :func:`segment_stats`), then :meth:`finish`.

    * compression: per codec the batches' bytes on disk and what they would take uncompressed (magic 2: the
      61-byte header and the records; magic 0/1: the inner messages as plain entries); ratio = uncompressed / on disk;
    * producers: distinct producer ids of magic 2 batches; transactions: the COMMIT and ABORT markers that end one,
      and those still open, by the producer state machine (:mod:`kdump.read.producer_state`);
    * keys: every data record with a key (control records are not data); superseded: a record whose key comes again
      later in the partition (the cleaner removes it), its bytes its record size; tombstones: records with a key
      and a null value; live tombstones: the last record of their key (removed after ``delete.retention.ms``).
    """

    def __init__(self, memory_bytes: int = DEFAULT_MEMORY, *, spill_dir: str | None = None,
                 limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES, progress=None):
        from kdump.read.producers import PartitionProducers
        from kdump.stats.keytable import KeyTable
        self.stats = RecordStats()
        self.keys = KeyTable(memory_bytes, spill_dir=spill_dir)
        self.producers = PartitionProducers(keep_aborted=False)
        self.limit = limit
        self.progress = progress  # callable(bytes) per batch, or None

    def batch(self, batch) -> tuple[int, KdumpError | None, tuple[int, int] | None]:
        """One intact batch's records into the numbers; (records read, the error that stopped reading them, or
        None, their time range), what :func:`segment_stats` counts."""
        from kdump.format.layout import V2_RECORD_BATCH_OVERHEAD
        s = self.stats
        if self.progress is not None:
            self.progress(batch.size)
        if type(batch) is LegacyRun:
            return self._run(batch)
        # bounded memory, whatever the count declared; the keys as digests, no Python object per record
        chunks = batch.key_chunks(self.limit, RECORDS_PER_CHUNK)
        try:
            part = next(chunks)
        except KdumpError as e:
            s.unreadable_batches += 1
            return 0, e, None
        control = batch.magic == 2 and batch.is_control
        record_bytes = records = 0
        error = None
        times = None
        while part is not None:
            times = _times(times, part)
            if part.error is not None:
                error = part.error
            record_bytes += part.record_bytes
            records += part.count
            if not control:  # control records are not data: their keys are no keys of the topic
                self._count_keys(part)
            part = next(chunks, None)
        s.unreadable_batches += error is not None
        self._count_compression(batch.codec_id, 1, batch.size,
                                record_bytes + (V2_RECORD_BATCH_OVERHEAD if batch.magic == 2 else 0))
        if batch.magic == 2:
            self.producers.apply(batch, self.limit)
            if control:
                s.control_records += records
        return records, error, times

    def _run(self, run: LegacyRun) -> tuple[int, None, None]:
        """Intact plain magic 0/1 messages (no producer, no control record), from their key digests read whole in
        compiled code (:meth:`~kdump.format.legacy.LegacyRun.keys`): what :meth:`batch` makes of each message."""
        keys = run.keys()
        self._count_keys(keys)
        self._count_compression(0, run.count, run.size, keys.record_bytes)
        return run.count, None, None  # (the run's times: Stats.add_run, from the same keys)

    def _count_keys(self, keys) -> None:
        """The key digests and counts of a chunk of records, or of a run (a :class:`RecordKeys`)."""
        s = self.stats
        s.keyless_records += keys.keyless
        s.keyed_records += keys.count - keys.keyless
        s.tombstones += keys.tombstones
        try:
            self.keys.add_entries(keys.entries)
        except OSError as e:
            raise self._spill_failed(e) from None

    def _spill_failed(self, error: OSError) -> WriteError:
        """The key table's spill files could not be written (or read back): a :class:`~kdump.errors.WriteError`
        naming the spill directory, never the segment being read (the table removes its directory when it goes,
        with this analysis)."""
        import tempfile
        spill_dir = os.path.abspath(self.keys.spill_dir or tempfile.gettempdir())
        return WriteError(error.errno, f"{error.strerror or error} (spilling key digests); the spill files were "
                          "removed and nothing was left", spill_dir)

    def _count_compression(self, codec_id: int, batches: int, stored: int, record_bytes: int) -> None:
        """``batches`` of codec ``codec_id``, ``stored`` bytes as stored holding ``record_bytes`` of records."""
        counts = self.stats.compression.setdefault(codec_name(codec_id), [0, 0, 0])
        counts[0] += batches
        counts[1] += stored
        counts[2] += record_bytes

    def finish(self) -> RecordStats:
        s = self.stats
        try:
            keys = self.keys.finish()
        except OSError as e:
            raise self._spill_failed(e) from None
        s.distinct_keys = keys.keys
        s.superseded_records = keys.superseded
        s.superseded_bytes = keys.superseded_bytes
        s.live_tombstones = keys.live_tombstones
        s.spilled_partitions = 1 if keys.spilled_buckets else 0
        state = self.producers.state
        s.producers = len(state.producers)
        s.committed = self.producers.committed_count
        s.aborted = self.producers.aborted_count
        s.open_transactions = len(state.ongoing)
        return s
