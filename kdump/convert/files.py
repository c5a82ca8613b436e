"""File-level conversion: one segment or a partition directory in, verified segments out; dry runs.

The input is only ever opened read-only, and an output that is the input itself is refused. Each
output goes through :class:`~kdump.convert.output.ConvertedSegmentWriter` (temporary file, read back
and compared; never over an existing file unless ``overwrite``); its indexes are computed from the verified
temporary by kdump's index rebuild (:func:`kdump.index.rebuild.add_recovery`) and the segment and its indexes are
placed together (:class:`kdump.write.group.AtomicGroup`). A partition directory is converted all or nothing through a
temporary directory. Nothing is left behind when a conversion is refused.
"""
from __future__ import annotations

import errno
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from kdump import codec as _codec
from kdump.errors import WriteError
from kdump.format.names import CODEC_NAMES
from kdump.read.logdir import SEGMENT_COMPANIONS, FileKind, classify, segment_base_offset, sibling
from kdump.read.partition import PartitionLog
from kdump.read.segment import SegmentReader
from kdump.write.atomic import AtomicFile, crash_point, fsync_directory
from kdump.write.group import AtomicGroup
from kdump.write.guards import refuse_input, refuse_irreplaceable, write_error
from kdump.write.killed import clean_leftovers
from kdump.write.lock import partition_lock
from kdump.write.tempdir import TemporaryDirectory

from .engine import ConversionRefused, ConversionStats, Converter, ConvertOptions
from .output import ByteCounter, ConvertedSegmentWriter, DeepVerifyFailed, deep_verify_findings
from .proof import INDEX_INTERVAL_BYTES


@dataclass
class IndexStatus:
    rebuilt: bool
    files: list = field(default_factory=list)  # paths written
    note: str = ""
    problem: bool = False  # the rebuild was attempted and failed: the segment is written, its indexes are not


@dataclass
class ConversionResult:
    source: str
    output: str | None  # None for a dry run
    stats: ConversionStats
    verified: list = field(default_factory=list)  # what the output was checked with
    indexes: IndexStatus | None = None

    def to_dict(self) -> dict:
        # the paths: "path" the segment read, "outputPath" the one written ("input" and "output" are the
        # statistics of each side, ConversionStats.to_dict)
        d = {"path": self.source, "outputPath": self.output, **self.stats.to_dict(),
             "verified": list(self.verified)}
        if self.indexes is not None:
            d["indexes"] = {"rebuilt": self.indexes.rebuilt, "files": self.indexes.files, "note": self.indexes.note,
                            "problem": self.indexes.problem}
        return d


def segments_in(directory) -> list[str]:
    """The segments (``<base offset>.log``, :mod:`kdump.read.logdir`) of a partition directory, in offset order."""
    return [s.log for s in PartitionLog(directory).segments]


def output_path_for(source, output) -> str:
    """Where the converted ``source`` goes: ``output`` itself, or ``output/<source name>`` when ``output``
    is an existing directory or ends with a path separator (which keeps Kafka's 20-digit segment name)."""
    source = os.fspath(source)
    output = os.fspath(output)
    if os.path.isdir(output) or output.endswith(os.sep) or (os.altsep and output.endswith(os.altsep)):
        return os.path.join(output, os.path.basename(source))
    return output


def convert_segment(source, destination, options: ConvertOptions, *, overwrite: bool = False,
                    rebuild_indexes: bool = True) -> ConversionResult:
    """Convert one segment file to ``destination`` (a file path) as ``options`` say.

    The segment and its rebuilt indexes are placed as one :class:`~kdump.write.group.AtomicGroup` (the ``.index``
    last): they appear together, or a crash leaves a state recognisably incomplete. Raises
    :class:`ConversionRefused` (damaged input, zstd below magic 2 without ``recompress``, a loss under
    ``strict``), :class:`FileExistsError` (``destination`` or one of its index files exists and not
    ``overwrite``, or ``destination`` is the input), :class:`OSError` (unreadable input, unwritable output), and
    :class:`kdump.write.segment.WriteVerificationError` if the written file does not read back as intended.
    """
    source = os.fspath(source)
    destination = os.path.abspath(os.fspath(destination))
    refuse_input(source, destination)
    with partition_lock(os.path.dirname(destination)):
        return _convert_segment(source, destination, options, overwrite, rebuild_indexes)


def _convert_segment(source: str, destination: str, options: ConvertOptions, overwrite: bool,
                     rebuild_indexes: bool) -> ConversionResult:
    base = segment_base_offset(destination) if rebuild_indexes else None
    group = AtomicGroup(os.path.dirname(destination), overwrite=overwrite, protect=[source])
    companions = index_targets(destination) if base is not None else []
    blocked = group.clean([destination, *companions])
    for path in companions:  # an index file that may not be replaced even so: refused before converting
        refuse_irreplaceable(path)
    if blocked:
        why = ("exists (not replaced unless asked to)" if blocked[0] == destination else
               "exists and does not belong to the new segment (not replaced unless asked to)")
        raise FileExistsError(errno.EEXIST, why, blocked[0])
    with SegmentReader(source) as reader:
        writer = ConvertedSegmentWriter(destination, overwrite=group.may_replace(destination),
                                        record_limit=options.record_limit, base_offset=base)
        try:
            stats = Converter(options, writer, writer.records_digest).convert(reader)
            if options.strict and stats.losses:
                raise strict_refusal(stats)
            writer.atomic_file.prepare()  # read back and verified before its indexes are computed from it
        except DeepVerifyFailed as e:
            writer.abort()
            raise _input_damage(source, options, e) from e
        except BaseException as e:
            writer.abort()
            if isinstance(e, ConversionRefused):
                e.source = source
            raise
    indexes = place_segment(group, writer, destination, indexes=rebuild_indexes, plain_indexes=writer.plain_indexes)
    result = ConversionResult(source, destination, stats, verified=list(writer.verified), indexes=indexes)
    result.stats.notes.extend(f"removed {p}: left by an interrupted kdump run" for p in group.cleaned)
    return result


def _input_damage(source: str, options: ConvertOptions, failure: Exception) -> Exception:
    """The output failed ``kdump verify --deep``. A copied batch carries the input's own inconsistencies
    (e.g. a max timestamp its records do not have, under a valid CRC): if the input has errors too, the
    conversion is refused for damaged input; otherwise the failure stands (it would be a kdump bug)."""
    found = deep_verify_findings(source, options.record_limit)
    if not found or not found[0]:
        return failure
    first = found[0][0]
    refused = ConversionRefused(first.code, f"verify's deep checks find the input damaged: {first.message}; "
                                "kdump converts only intact data", first.position)
    refused.source = source
    return refused


def strict_refusal(stats: ConversionStats) -> ConversionRefused:
    losses = stats.losses
    first = min(losses.first_position.values()) if losses.first_position else None
    return ConversionRefused("loss", f"the output would lose {'; '.join(losses.lines())} "
                             f"(the first at byte {first})", first)


def index_targets(log_path: str) -> list[str]:
    """The index files a new segment at ``log_path`` gets (``.index``, ``.timeindex``, ``.txnindex``), in the
    order they are placed; shared with salvage, which writes new segments the same way."""
    return [sibling(log_path, kind) for kind in SEGMENT_COMPANIONS]


def place_segment(group: AtomicGroup, writer, destination: str, *, indexes: bool = True,
                  plain_indexes=None) -> IndexStatus | None:
    """A new segment and its indexes placed as one group: THE way kdump writes a segment with its indexes
    (convert, salvage, the Spark writer). ``writer``: the segment's :class:`~kdump.write.segment.SegmentWriter`,
    its file written, read back and verified (``writer.atomic_file.prepare()``), not yet placed; ``group``: an
    :class:`~kdump.write.group.AtomicGroup` in ``destination``'s directory, the places it takes cleaned. The
    indexes are Kafka's recovery's (:func:`add_indexes`, computed from the verified file); either every file of
    the group is in place afterwards or none is (the group aborted, the error raised). With ``indexes`` False the
    segment alone is placed (None returned)."""
    group.adopt(writer.atomic_file)
    try:
        status = add_indexes(group, writer.temporary_path, destination, plain_indexes) if indexes else None
        group.commit()
    except BaseException:
        group.abort()
        raise
    return status


def add_indexes(group, temporary_log: str, log_path: str, plain_indexes=None) -> IndexStatus:
    """Kafka's recovery indexes for the new segment (still under its temporary name), added to its group. Only
    missing or differing index files are written; with ``overwrite`` the old ones (which belonged to the replaced
    segment) are kept as ``.bak``. ``plain_indexes``: the entries the read-back computed for a segment of plain
    magic 0/1 messages (:mod:`kdump.convert.proof`; no producer state there), else recovery walks the segment."""
    base = segment_base_offset(log_path)
    if base is None:
        return IndexStatus(False, note="indexes were not rebuilt: the output is not named <base offset>.log, "
                                       "which index files are named after")
    try:
        from kdump.index.rebuild import (
            DEFAULT_INDEX_INTERVAL_BYTES,
            RebuildError,
            RebuildOutcome,
            Recovery,
            add_recovery,
            recover_segment,
            state_before,
        )
    except ImportError:
        return IndexStatus(False, note="indexes were not rebuilt: this kdump has no index rebuild "
                                       "(kdump.index.rebuild); "
                                       "Kafka rebuilds missing indexes when it loads the segment")
    paths = dict(zip(("index", "timeindex", "txnindex"), index_targets(log_path), strict=True))
    try:
        if plain_indexes is not None and INDEX_INTERVAL_BYTES == DEFAULT_INDEX_INTERVAL_BYTES:
            rec = _plain_recovery(Recovery(temporary_log, base, INDEX_INTERVAL_BYTES), *plain_indexes)
        else:
            state = state_before(os.path.dirname(log_path), base)
            rec = recover_segment(temporary_log, producer_state=state, base_offset=base)
        outcome = RebuildOutcome(rec)
        add_recovery(group, rec, paths, outcome)
    except RebuildError as e:
        return IndexStatus(False, problem=True, note=f"indexes were not rebuilt: {e}")
    except OSError as e:  # an index file that cannot be written (or replaced: a symbolic link): nothing is
        if e.filename is None:  # placed, the segment included (all or nothing), and the error names the file
            e.filename = paths["index"]
        raise
    files = [m.path for m in group.members if m.path != log_path] + outcome.unchanged
    return IndexStatus(True, sorted(files, key=index_targets(log_path).index))


def _plain_recovery(rec, offset_index: bytes, time_index: bytes):
    """A :class:`kdump.index.rebuild.Recovery` holding the indexes the read-back computed."""
    rec.offset_index = bytearray(offset_index)
    rec.time_index = bytearray(time_index)
    rec.log_size = rec.valid_bytes = os.path.getsize(rec.log_path)
    return rec


def convert_directory(source_dir, output_dir, options: ConvertOptions, *, overwrite: bool = False,
                      rebuild_indexes: bool = True, on_result=None) -> list[ConversionResult]:
    """Convert every segment of a partition directory into ``output_dir``, all or nothing.

    The segments (in offset order, each with its indexes) and the partition's checkpoint files are written into
    a temporary directory beside ``output_dir`` (``.<name>.<random>.tmp``), which then becomes ``output_dir`` in
    one rename (``output_dir`` missing or empty). Into an ``output_dir`` that has files, names that clash are
    refused before anything is converted unless ``overwrite``; the finished segments are then moved in, each as
    one :class:`~kdump.write.group.AtomicGroup`. Any refusal or error removes the temporary directory: nothing is left
    behind, and ``on_result`` is called only for segments that are in place."""
    source_dir = os.fspath(source_dir)
    output_dir = os.path.abspath(os.fspath(output_dir))
    partition = PartitionLog(source_dir)
    refuse_input(source_dir, output_dir, directory=True)
    parent = os.path.dirname(output_dir)
    os.makedirs(parent, exist_ok=True)
    clean_leftovers(parent, {os.path.basename(output_dir)})  # a temporary directory of an interrupted run
    checkpoints = _checkpoints_to_copy(partition, options)
    planned = [p for seg in partition.segments for p in [seg.log, *index_targets(seg.log)]] + checkpoints
    if os.path.isdir(output_dir) and not overwrite:
        names = sorted(set(os.listdir(output_dir)) & {os.path.basename(p) for p in planned})
        clash = AtomicGroup(output_dir).clean([os.path.join(output_dir, n) for n in names])
        if clash:
            raise FileExistsError(errno.EEXIST, "exists (not replaced unless asked to), and nothing "
                                  "is converted", clash[0])
    if os.path.isdir(output_dir):  # what may not be replaced even so (a symbolic link...): refused before converting
        for p in planned:
            refuse_irreplaceable(os.path.join(output_dir, os.path.basename(p)))
    work = TemporaryDirectory(output_dir)
    try:
        results = [convert_segment(seg.log, os.path.join(work.work, os.path.basename(seg.log)), options,
                                   rebuild_indexes=rebuild_indexes) for seg in partition.segments]
        for path in checkpoints:
            target = os.path.join(work.work, os.path.basename(path))
            try:
                shutil.copyfile(path, target)
            except OSError as e:
                raise e if e.filename == path else write_error(e, target) from None
        fsync_directory(work.work)
        crash_point("directory-written")
        published = work.publish()
    except WriteError as e:  # named in the output directory, not in the staging directory that is removed now
        work.remove()
        raise work.write_error(e) from None
    except BaseException:
        work.remove()
        raise
    try:
        if not published:
            _move_into(work.work, output_dir, results, overwrite)
    finally:
        work.remove()
    for r in results:
        assert r.output is not None  # a written conversion (not a dry run)
        r.output = _moved(r.output, work.work, output_dir)
        if r.indexes is not None:
            r.indexes.files = [_moved(f, work.work, output_dir) for f in r.indexes.files]
        if on_result is not None:
            on_result(r)
    return results


def _checkpoints_to_copy(partition: PartitionLog, options: ConvertOptions) -> list[str]:
    """The partition's checkpoint files that still hold for the converted log: ``partition.metadata`` (the topic
    id), and the ``leader-epoch-checkpoint`` when the output keeps leader epochs (magic 2; magic 0/1 batches have
    none)."""
    kinds = [FileKind.PARTITION_METADATA] + ([FileKind.LEADER_EPOCH_CHECKPOINT] if options.to_magic >= 2 else [])
    checkpoints = partition.files.checkpoints
    return [checkpoints[k] for k in kinds if k in checkpoints]


def _moved(path: str, old_dir: str, new_dir: str) -> str:
    return os.path.join(new_dir, os.path.relpath(path, old_dir)) if path else path


def _move_into(work: str, output_dir: str, results: list, overwrite: bool) -> None:
    """Move the converted files from ``work`` into an ``output_dir`` that has files: each segment with its
    indexes as one group, then the checkpoints (under ``output_dir``'s lock)."""
    with partition_lock(output_dir):
        _move_groups(work, output_dir, results, overwrite)


def _move_groups(work: str, output_dir: str, results: list, overwrite: bool) -> None:
    for r in results:
        group = AtomicGroup(output_dir, overwrite=overwrite)
        members = [r.output] + (list(r.indexes.files) if r.indexes is not None else [])
        targets = [os.path.join(output_dir, os.path.basename(p)) for p in members]
        group.clean(targets)
        for src, target in zip(members, targets, strict=True):
            ours = group.may_replace(target)
            group.adopt(AtomicFile.from_file(target, src, overwrite=ours, backup=target != targets[0]),
                        last=classify(target) is FileKind.INDEX)
        group.commit()
    for name in sorted(os.listdir(work)):
        src = os.path.join(work, name)
        if os.path.isfile(src):
            target = os.path.join(output_dir, name)
            group = AtomicGroup(output_dir, overwrite=overwrite)
            group.clean([target])
            group.adopt(AtomicFile.from_file(target, src, overwrite=group.may_replace(target)))
            group.commit()


# --- dry run --------------------------------------------------------------------------------------------
@dataclass
class SizeEstimate:
    """The size a segment would have in one target magic and codec (``codec`` None = keep)."""

    to_magic: int
    codec: int | None
    bytes: int | None = None
    batches: int | None = None
    stats: ConversionStats | None = None
    refused: str | None = None  # why this target is not possible

    @property
    def codec_label(self) -> str:
        return "keep" if self.codec is None else CODEC_NAMES[self.codec]

    def to_dict(self) -> dict:
        d = {"toMagic": self.to_magic, "compression": self.codec_label, "bytes": self.bytes, "batches": self.batches}
        if self.refused:
            d["refused"] = self.refused
        elif self.stats is not None:
            d["dropped"] = self.stats.losses.to_dict()
        return d


DRY_RUN_CODECS = (None, *(c.id for c in _codec.CODECS))


def estimate_sizes(source, magics=(0, 1, 2), codecs=DRY_RUN_CODECS, *, recompress=None, max_batch_records: int = 0,
                   max_batch_bytes: int | None = None, record_limit: int | None = None,
                   all_in_target_magic: bool = False) -> list[SizeEstimate]:
    """Convert ``source`` in memory to each magic x codec and count the bytes; nothing is written.

    Each combination is a full conversion into a byte counter (one read of the file each); a target
    Kafka refuses (zstd below magic 2) is reported as refused with the reason.
    """
    extra: dict[str, Any] = {}
    if max_batch_bytes is not None:
        extra["max_batch_bytes"] = max_batch_bytes
    if record_limit is not None:
        extra["record_limit"] = record_limit
    out = []
    for magic in magics:
        for codec in codecs:
            est = SizeEstimate(magic, codec)
            out.append(est)
            try:
                options = ConvertOptions(magic, codec, dict(recompress or {}), max_batch_records=max_batch_records,
                                         all_in_target_magic=all_in_target_magic, **extra)
            except ValueError as e:
                est.refused = str(e)
                continue
            counter = ByteCounter()
            try:
                with SegmentReader(source) as reader:
                    est.stats = Converter(options, counter).convert(reader)
            except ConversionRefused as e:
                est.refused = str(e)
                continue
            est.bytes = counter.bytes
            est.batches = counter.entries
    return out
