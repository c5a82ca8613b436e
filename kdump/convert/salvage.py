"""Salvage a damaged segment: copy every batch that verifies into a new segment, say exactly what was left out.

The input is walked with :func:`kdump.read.damage.readable` (Kafka's framing, going on after damage),
so the intact batches *after* a damaged region are kept too, not only those Kafka's own reader reaches before
it. A batch is kept when ``kdump verify --deep`` has no error for it: a whole entry with a valid CRC, a sane
header, records that decode and agree with the header, offsets above those of the batches kept before it
(:class:`BatchJudge` runs the verifier's own checks on it). Everything else is a :class:`Dropped` range:

* a batch that fails its CRC: its bytes, the offsets and record count its header *claims* (not trustworthy: the
  bytes are damaged); an entry that is no batch (unknown magic, ...): its bytes and the offsets lost around it;
* a damaged range (bytes that are no entry): its bytes and the offsets lost between the batches around it;
* a batch with a valid CRC whose records fail ``--deep`` (the errors are named), or one above
  ``max_batch_bytes`` (its records cannot be checked: raise the limit to keep it);
* what is after the last whole entry (a truncated tail; zero padding is reported, but holds no data).

Writing follows kdump's rules (:mod:`kdump.write.atomic`): the input is only ever opened read-only and is never the
output; the new segment goes to a temporary file, is read back and verified with ``kdump verify --deep``, and
is placed together with its rebuilt ``.index``/``.timeindex``/``.txnindex`` (Kafka's recovery,
:mod:`kdump.index.rebuild`) as one :class:`~kdump.write.group.AtomicGroup`. A partition directory is salvaged into a
new directory all or nothing (:func:`salvage_directory`).
"""
from __future__ import annotations

import errno
import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field

from kdump.errors import WriteError
from kdump.format.framing import Stop
from kdump.format.legacy import LegacyRun
from kdump.format.v2 import RecordBatch
from kdump.read.damage import BATCH, Damage, foreign_start, readable
from kdump.read.logdir import FileKind, Partition
from kdump.read.segment import DEFAULT_MAX_BATCH_BYTES, Batch, SegmentReader
from kdump.verify.walk import SegmentVerifier, VerifyOptions
from kdump.write.atomic import fsync_directory
from kdump.write.group import AtomicGroup
from kdump.write.guards import refuse_input, write_error
from kdump.write.killed import clean_leftovers
from kdump.write.lock import partition_lock
from kdump.write.segment import SegmentWriter, WriteVerificationError
from kdump.write.tempdir import TemporaryDirectory


@dataclass
class Dropped:
    """Bytes ``start``..``end`` (exclusive) of the input that are not in the output, and why."""

    start: int
    end: int
    code: str  # a finding code (docs/findings.md): crc-mismatch, damaged-range, truncated-tail, ...
    reason: str
    first_offset: int | None = None
    last_offset: int | None = None
    records: int | None = None  # records lost, when known (a bad entry's header claim)
    claimed: bool = False  # offsets/records come from a damaged header (not trustworthy)
    data: bool = True  # False for zero padding: nothing was lost
    fails: bool = True  # it fails the run (kdump.read.damage.Damage.fails): all but a crash-cut tail (Kafka drops it)

    def to_dict(self) -> dict:
        """A byte range as every JSON of kdump gives one: ``position`` and ``bytes``; the cause as an error's
        ``code`` and ``message``."""
        return {"position": self.start, "bytes": self.end - self.start, "code": self.code,
                "message": self.reason, "firstOffset": self.first_offset, "lastOffset": self.last_offset,
                "records": self.records, "claimed": self.claimed, "data": self.data}


@dataclass
class SalvageResult:
    source: str
    output: str
    input_bytes: int = 0
    kept_batches: int = 0
    kept_records: int = 0
    kept_bytes: int = 0
    first_offset: int | None = None
    last_offset: int | None = None
    dropped: list[Dropped] = field(default_factory=list)
    kept_positions: list[int] = field(default_factory=list)  # input byte position of every kept batch
    verified: str = ""
    indexes: list[str] = field(default_factory=list)  # index files written with the segment
    notes: list[str] = field(default_factory=list)

    @property
    def lost_data(self) -> bool:
        return any(d.data for d in self.dropped)

    def to_dict(self) -> dict:
        # the input is ``path`` and its size ``bytes``, as in every report of kdump; what was written ``outputPath``
        return {"path": self.source, "outputPath": self.output, "bytes": self.input_bytes,
                "kept": {"batches": self.kept_batches, "records": self.kept_records, "bytes": self.kept_bytes,
                         "firstOffset": self.first_offset, "lastOffset": self.last_offset},
                "dropped": [d.to_dict() for d in self.dropped], "verified": self.verified,
                "indexes": self.indexes, "notes": self.notes}


class BatchJudge:
    """``kdump verify --deep``'s checks of one CRC-valid batch, in the context of the batches kept before it
    (offsets increasing, producer epochs). It drives a :class:`~kdump.verify.walk.SegmentVerifier` batch by
    batch, so "verifies" means exactly what ``verify --deep`` means; a rejected batch is taken back out of the
    offset context, so that the batches after it are judged against the ones actually kept."""

    def __init__(self, path: str, max_batch_bytes: int):
        options = VerifyOptions(deep=True, max_batch_bytes=max_batch_bytes, max_findings_per_code=sys.maxsize)
        self.verifier = SegmentVerifier(path, options)

    def errors(self, batch) -> list:
        """The error findings of ``batch`` (empty: it verifies and is now part of the context)."""
        return self.verifier.judge(batch)  # the verifier's own per-batch checks, in the kept batches' context

    def damage(self) -> None:
        self.verifier.after_damage = True

    def records_of_last(self, before: int) -> int:
        return self.verifier.report.records - before


def _dropped(d: Damage) -> Dropped:
    """A damaged area (:class:`kdump.read.damage.Damage`) as what salvage leaves out: its bytes, its cause, the
    offsets it costs (for a batch that fails its CRC, the offsets and record count its header claims)."""
    lost = d.lost_offsets()
    first, last = (None, None) if lost.none else tuple(lost)
    records = max(d.batch.records_count, 0) if d.kind == BATCH and isinstance(d.batch, RecordBatch) else None
    if d.large is not None and d.large.header is not None:
        records = d.large.header.records_count
    end = d.end if d.end is not None else d.start
    return Dropped(d.start, end, d.code, d.message, first, last, records, claimed=lost.claimed, data=not d.zeros,
                   fails=d.fails)


def _first_offset_stated(batch) -> int | None:
    """The first offset a dropped batch holds, if it can be told (not for a legacy wrapper that cannot be read:
    its base offset is then only its own, last, offset)."""
    first = batch.base_offset
    return None if getattr(batch, "records_error", None) is not None else first


def plan(source: str, *, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES, on_batch=None,
         progress=None) -> SalvageResult:
    """Walk ``source`` and decide, batch by batch, what is kept; ``on_batch(batch)`` is called with each kept
    batch, in order (the writer; a run of plain magic 0/1 messages kept whole is one call with the
    :class:`~kdump.format.legacy.LegacyRun`, its ``entry_bytes()`` the messages' bytes). Nothing is written here."""
    result = SalvageResult(source, "")
    judge = BatchJudge(source, max_batch_bytes)
    with SegmentReader(source, max_batch_bytes=max_batch_bytes) as reader:
        result.input_bytes = reader.file_size
        foreign = foreign_start(reader)
        if foreign is not None:  # e.g. text renamed .log: said as such, not as an incomplete last batch
            result.dropped.append(Dropped(0, reader.file_size, foreign.code, foreign.message))
            return result
        for item in readable(reader, show_invalid=False):
            if isinstance(item, Damage):
                result.dropped.append(_dropped(item))
                judge.damage()
                continue
            if isinstance(item, Stop):
                continue
            if type(item) is LegacyRun and judge.verifier.judge_run(item):  # intact plain messages kept whole
                _keep(result, item, item.count, item.count, item.positions())
                if on_batch is not None:
                    on_batch(item)
                if progress is not None:
                    progress(item.end)
                continue
            # plain magic 0/1 messages the run's check leaves to each: each judged (kept or dropped) as the batch it is
            batches: Iterable[Batch] = item.messages() if isinstance(item, LegacyRun) else (item,)
            for batch in batches:
                before = judge.verifier.report.records
                errors = judge.errors(batch)
                if errors:
                    first = errors[0]
                    result.dropped.append(Dropped(
                        batch.position, batch.position + batch.size, first.code,
                        "; ".join(f"{f.code}: {f.message}" for f in errors[:3]), _first_offset_stated(batch),
                        batch.last_offset, batch.records_count))
                    continue
                _keep(result, batch, 1, judge.records_of_last(before), (batch.position,))
                if on_batch is not None:
                    on_batch(batch)
                if progress is not None:
                    progress(batch.position + batch.size)
    return result


def _keep(result: SalvageResult, kept, batches: int, records: int, positions) -> None:
    """``kept`` (a batch, or a run of plain messages kept whole: ``batches`` entries at ``positions``) counted in
    ``result``."""
    result.kept_batches += batches
    result.kept_records += records
    result.kept_bytes += kept.size
    result.kept_positions.extend(positions)
    if result.first_offset is None:
        result.first_offset = kept.base_offset
    result.last_offset = kept.last_offset


class _SalvagedSegmentWriter(SegmentWriter):
    """A :class:`~kdump.write.segment.SegmentWriter` whose check also runs ``kdump verify --deep`` on the new file."""

    def __init__(self, path, *, overwrite: bool, record_limit: int):
        super().__init__(path, overwrite=overwrite, deep_verify=True, record_limit=record_limit)
        self.verified = ""

    def verify(self, path: str) -> None:
        from kdump.convert.output import deep_verify
        super().verify(path)
        self.verified = deep_verify(path, self.path, self.record_limit)


def _write_entry(writer: SegmentWriter, batch) -> None:
    """``batch`` written as it was read, its prefix and body one after the other (not joined: not a copy); a run
    of intact plain messages as its bytes, each message an entry."""
    if type(batch) is LegacyRun:
        writer.write(batch.entry_bytes(), batch.count)
        return
    prefix, body = batch.entry_parts()
    writer.write(prefix, 1)
    writer.write(body, 0)


def salvage_segment(source, destination, *, overwrite: bool = False, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
                    rebuild_indexes: bool = True, progress=None) -> SalvageResult:
    """Copy the batches of ``source`` that verify into the new segment ``destination`` (a file path; an existing
    directory takes the source's name) with its indexes. Raises FileExistsError (the output or one of its index
    files exists and not ``overwrite``, or it is the input), OSError, and
    :class:`~kdump.write.segment.WriteVerificationError` if the new file does not read back clean."""
    from kdump.convert.files import output_path_for

    source = os.fspath(source)
    destination = os.path.abspath(output_path_for(source, destination))
    refuse_input(source, destination)
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    with partition_lock(os.path.dirname(destination)):
        return _salvage_segment(source, destination, overwrite, max_batch_bytes, rebuild_indexes, progress)


def _salvage_segment(source: str, destination: str, overwrite: bool, max_batch_bytes: int, rebuild_indexes: bool,
                     progress) -> SalvageResult:
    from kdump.convert.files import index_targets, place_segment
    group = AtomicGroup(os.path.dirname(destination), overwrite=overwrite, protect=[source])
    blocked = group.clean([destination, *index_targets(destination)])
    if blocked:
        raise FileExistsError(errno.EEXIST, "exists (not replaced unless asked to)", blocked[0])
    writer = _SalvagedSegmentWriter(destination, overwrite=group.may_replace(destination),
                                    record_limit=max_batch_bytes)
    try:
        result = plan(source, max_batch_bytes=max_batch_bytes, progress=progress,
                      on_batch=lambda b: _write_entry(writer, b))
        writer.atomic_file.prepare()  # read back and verified before its indexes are computed from it
    except BaseException:
        writer.abort()
        raise
    result.output = destination
    result.verified = writer.verified
    status = place_segment(group, writer, destination, indexes=rebuild_indexes)
    if status is not None:
        result.indexes = [p for p in status.files if p != destination]
        if status.note:
            result.notes.append(status.note)
    result.notes.extend(f"removed {p}: left by an interrupted kdump run" for p in group.cleaned)
    return result


def salvage_directory(source_dir, output_dir, *, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
                      progress=None) -> list[SalvageResult]:
    """Salvage every segment of a partition directory into the new directory ``output_dir`` (missing or empty),
    all or nothing: the segments (in offset order, each with its indexes, the producer state carried from one to
    the next) and ``partition.metadata``/``leader-epoch-checkpoint`` are written into a temporary directory that
    becomes ``output_dir`` in one rename. Producer snapshots are not copied: they may describe batches that were
    dropped, and Kafka rebuilds the producer state from the log without them."""
    source_dir = os.fspath(source_dir)
    output_dir = os.path.abspath(os.fspath(output_dir))
    partition = Partition(source_dir)
    refuse_input(source_dir, output_dir, directory=True)
    if not partition.segments:
        return []  # nothing to salvage: no output directory either
    if os.path.isdir(output_dir) and os.listdir(output_dir):
        raise FileExistsError(errno.EEXIST, "is not empty; salvage writes a partition into a new directory",
                              output_dir)
    try:
        os.makedirs(os.path.dirname(output_dir), exist_ok=True)
        clean_leftovers(os.path.dirname(output_dir), {os.path.basename(output_dir)})  # a killed run's staging
    except OSError as e:
        raise write_error(e, output_dir, "nothing was written") from None
    work = TemporaryDirectory(output_dir)
    try:
        results = [salvage_segment(seg.log, os.path.join(work.work, os.path.basename(seg.log)),
                                   max_batch_bytes=max_batch_bytes, progress=progress)
                   for seg in partition.segments]
        for kind in (FileKind.PARTITION_METADATA, FileKind.LEADER_EPOCH_CHECKPOINT):
            if kind in partition.checkpoints:
                path = partition.checkpoints[kind]
                target = os.path.join(work.work, os.path.basename(path))
                try:
                    shutil.copyfile(path, target)
                except OSError as e:  # reading the checkpoint, or writing its copy
                    raise e if e.filename == path else write_error(e, target) from None
        fsync_directory(work.work)
        if not work.publish():
            raise FileExistsError(errno.EEXIST, "was filled while salvaging; nothing was written", output_dir)
    except WriteError as e:  # named in the output directory, not in the staging directory that is removed now
        raise work.write_error(e) from None
    finally:
        work.remove()
    for r in results:
        r.output = os.path.join(output_dir, os.path.relpath(r.output, work.work))
        r.indexes = [os.path.join(output_dir, os.path.relpath(p, work.work)) for p in r.indexes]
    return results


__all__ = ["Dropped", "SalvageResult", "BatchJudge", "plan", "salvage_segment", "salvage_directory",
           "WriteVerificationError"]
