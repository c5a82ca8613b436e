"""File-level conversion: one segment or a partition directory in, verified segments out; dry runs.

The input is only ever opened read-only, and an output that is the input itself is refused. Each
output goes through :class:`~kdump.convert.output.ConvertedSegmentWriter` (temporary file, read back
and compared, then renamed; never over an existing file unless ``overwrite``); nothing is left behind
when a conversion is refused. After the rename the segment's indexes are rebuilt next to it when
kdump's index rebuild (``kdump.index.rebuild.rebuild_indexes``) is available.
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field

from kdump import codec as _codec
from kdump.logdir import Partition, segment_base_offset
from kdump.segment import SegmentReader

from .engine import ConversionRefused, ConversionStats, Converter, ConvertOptions
from .output import ByteCounter, ConvertedSegmentWriter, DeepVerifyFailed, deep_verify_findings


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
        d = {"source": self.source, "output": self.output, **self.stats.to_dict(), "verified": list(self.verified)}
        if self.indexes is not None:
            d["indexes"] = {"rebuilt": self.indexes.rebuilt, "files": self.indexes.files, "note": self.indexes.note,
                            "problem": self.indexes.problem}
        return d


def segments_in(directory) -> list[str]:
    """The segments (``<base offset>.log``, :mod:`kdump.logdir`) of a partition directory, in offset order."""
    return [s.log for s in Partition(directory).segments]


def output_path_for(source, output) -> str:
    """Where the converted ``source`` goes: ``output`` itself, or ``output/<source name>`` when ``output``
    is an existing directory or ends with a path separator (which keeps Kafka's ``%020d.log`` name)."""
    source = os.fspath(source)
    output = os.fspath(output)
    if os.path.isdir(output) or output.endswith(os.sep) or (os.altsep and output.endswith(os.altsep)):
        return os.path.join(output, os.path.basename(source))
    return output


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def convert_segment(source, destination, options: ConvertOptions, *, overwrite: bool = False,
                    rebuild_indexes: bool = True) -> ConversionResult:
    """Convert one segment file to ``destination`` (a file path) as ``options`` say.

    Raises :class:`ConversionRefused` (damaged input, zstd below magic 2 without ``recompress``, a loss
    under ``strict``), :class:`FileExistsError` (``destination`` exists and not ``overwrite``, or is the
    input), :class:`OSError` (unreadable input, unwritable output), and
    :class:`kdump.writer.WriteVerificationError` if the written file does not read back as intended.
    """
    source = os.fspath(source)
    destination = os.fspath(destination)
    if os.path.exists(destination) and _same_file(source, destination):
        raise FileExistsError(errno.EEXIST, "this is the input itself, and kdump never modifies its input "
                              "(write elsewhere with -o)", destination)
    if not overwrite and os.path.lexists(destination):
        raise FileExistsError(errno.EEXIST, "exists; it is not replaced without --force (overwrite=True)",
                              destination)
    with SegmentReader(source) as reader:
        writer = ConvertedSegmentWriter(destination, overwrite=overwrite, record_limit=options.record_limit)
        try:
            stats = Converter(options, writer, writer.records_digest).convert(reader)
            if options.strict and stats.losses:
                raise strict_refusal(stats)
            out_path = writer.commit()
        except DeepVerifyFailed as e:
            writer.abort()
            raise _input_damage(source, options, e) from e
        except BaseException as e:
            writer.abort()
            if isinstance(e, ConversionRefused):
                e.source = source
            raise
    result = ConversionResult(source, out_path, stats, verified=list(writer.verified))
    if rebuild_indexes:
        result.indexes = _rebuild_indexes(out_path, overwrite)
    return result


def _input_damage(source: str, options: ConvertOptions, failure: Exception) -> Exception:
    """The output failed ``kdump verify --deep``. A copied batch carries the input's own inconsistencies
    (e.g. a max timestamp its records do not have, under a valid CRC): if the input has errors too, the
    conversion is refused for damaged input; otherwise the failure stands (it would be a kdump bug)."""
    found = deep_verify_findings(source, options.record_limit)
    if not found or not found[0]:
        return failure
    first = found[0][0]
    refused = ConversionRefused(first.code, f"kdump verify --deep finds the input damaged: {first.message}; "
                                "kdump converts only intact data", first.position)
    refused.source = source
    return refused


def strict_refusal(stats: ConversionStats) -> ConversionRefused:
    losses = stats.losses
    first = min(losses.first_position.values()) if losses.first_position else None
    return ConversionRefused("loss", f"--strict: the output would lose {'; '.join(losses.lines())} "
                             f"(the first at byte {first})", first)


def _rebuild_indexes(log_path: str, overwrite: bool) -> IndexStatus:
    """Kafka's recovery indexes for the new segment, next to it. Only missing indexes are written unless
    ``overwrite`` (the old ones, which belonged to the replaced segment, are then kept as ``.bak``)."""
    if segment_base_offset(log_path) is None:
        return IndexStatus(False, note="indexes were not rebuilt: the output is not named <base offset>.log, "
                                       "which index files are named after")
    try:
        from kdump.index.rebuild import RebuildError, rebuild_indexes
    except ImportError:
        return IndexStatus(False, note="indexes were not rebuilt: this kdump has no index rebuild "
                                       "(kdump.index.rebuild); Kafka rebuilds missing indexes when it loads the segment")
    try:
        written = rebuild_indexes(log_path, force=overwrite)
    except FileExistsError as e:
        return IndexStatus(False, problem=True, note=f"indexes were not rebuilt: {e}; the index files there do not "
                                                      "belong to the new segment")
    except (RebuildError, OSError) as e:
        return IndexStatus(False, problem=True, note=f"indexes were not rebuilt: {e}")
    return IndexStatus(True, [os.fspath(p) for p in written])


def convert_directory(source_dir, output_dir, options: ConvertOptions, *, overwrite: bool = False,
                      rebuild_indexes: bool = True, on_result=None) -> list[ConversionResult]:
    """Convert every segment of a partition directory into ``output_dir`` (created if missing), in offset
    order, stopping at the first refusal (segments already written stay, each complete and verified)."""
    segments = segments_in(source_dir)
    if os.path.exists(output_dir) and _same_file(source_dir, output_dir):
        raise FileExistsError(errno.EEXIST, "this is the input directory, and kdump never modifies its input",
                              output_dir)
    os.makedirs(output_dir, exist_ok=True)
    results = []
    for seg in segments:
        result = convert_segment(seg, os.path.join(output_dir, os.path.basename(seg)), options,
                                 overwrite=overwrite, rebuild_indexes=rebuild_indexes)
        results.append(result)
        if on_result is not None:
            on_result(result)
    return results


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
        return "keep" if self.codec is None else _codec.CODEC_NAMES[self.codec]

    def to_dict(self) -> dict:
        d = {"toMagic": self.to_magic, "compression": self.codec_label, "bytes": self.bytes, "batches": self.batches}
        if self.refused:
            d["refused"] = self.refused
        elif self.stats is not None:
            d["dropped"] = self.stats.losses.to_dict()
        return d


DRY_RUN_CODECS = (None, _codec.NONE, _codec.GZIP, _codec.SNAPPY, _codec.LZ4, _codec.ZSTD)


def estimate_sizes(source, magics=(0, 1, 2), codecs=DRY_RUN_CODECS, *, recompress=None, max_batch_records: int = 0,
                   max_batch_bytes: int | None = None, record_limit: int | None = None,
                   all_in_target_magic: bool = False) -> list[SizeEstimate]:
    """Convert ``source`` in memory to each magic x codec and count the bytes; nothing is written.

    Each combination is a full conversion into a byte counter (one read of the file each); a target
    Kafka refuses (zstd below magic 2) is reported as refused with the reason.
    """
    extra = {}
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
