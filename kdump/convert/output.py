"""Where converted entries go: an atomic, verified segment file, or a byte counter for ``--dry-run``.

:class:`ConvertedSegmentWriter` is :class:`kdump.write.segment.SegmentWriter` (temporary file in the target
directory, fsync, never overwriting unless asked, rename only after verification, running digests whose
memory does not grow with the file) with a fuller :meth:`~kdump.write.segment.SegmentWriter.verify`; it checks,
by reading the written file back batch by batch,

* the framing: every entry whole, nothing after the last one, as many entries as were written;
* the bytes: the sha256 of the file equals the sha256 of what was written;
* every batch CRC valid and every record decodable;
* the records: the canonical form of every record read back (offset, timestamp and type as a reader
  sees them, key, value, headers) hashes to the digest the converter computed from the records it
  meant to write (:func:`kdump.convert.engine.canonical_record`);
* then ``kdump verify --deep`` of it, when kdump has it (:func:`deep_verify`), except for a file of plain
  magic 0/1 messages that the read-back itself proves clean (:mod:`kdump.convert.proof`: the checks verify
  makes of plain messages, made on the columns the read-back reads, with Kafka's recovery indexes).
"""
from __future__ import annotations

from kdump.errors import KdumpError
from kdump.format.canonical import update_canonical
from kdump.format.legacy import LegacyRun
from kdump.read.segment import DEFAULT_MAX_DECOMPRESSED_BYTES, SegmentReader
from kdump.write.digests import BackgroundSha256, file_sha256_beside
from kdump.write.segment import SegmentWriter, WriteVerificationError

from .proof import PlainMessages


class ByteCounter:
    """The sink of a dry run: counts, writes nothing."""

    def __init__(self):
        self.bytes = 0
        self.entries = 0

    def write(self, data: bytes, entries: int) -> None:
        self.bytes += len(data)
        self.entries += entries


def read_back_digests(path, record_limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES, plain: PlainMessages | None = None):
    """(entries, sha256 of the file, sha256 of its canonical records, problems) of a written segment.

    ``problems`` lists what is wrong (invalid CRC, undecodable records, bytes after the last entry),
    each with its byte position; reading stops at the first. When there is none, the file is exactly
    its entries, so the sha256 of the file is the sha256 of the entries read back. ``plain`` follows the walk
    (:class:`~kdump.convert.proof.PlainMessages`: what it proves of a file of plain messages).
    """
    entries = 0
    file_hash = file_sha256_beside(path)  # the file's bytes hashed by another thread meanwhile
    records_hash = BackgroundSha256()
    update = records_hash.update
    problems = []
    with SegmentReader(path) as reader:
        for batch in reader.runs():
            if isinstance(batch, LegacyRun):  # plain magic 0/1 messages: one set of columns, no object each
                cols = batch.columns
                if not all(batch.valid):
                    i = batch.valid.index(False)
                    problems.append(f"entry {entries + i} at byte {batch.position + sum(cols.sizes[:i])}: "
                                    "CRC does not match its contents")
                    break
                entries += cols.count
                update_canonical(update, cols, None)
                if plain is not None:
                    plain.run(batch)
                continue
            if plain is not None:
                plain.other()
            entries += 1
            if not batch.is_valid():
                problems.append(f"entry {entries - 1} at byte {batch.position}: CRC does not match its contents")
                break
            try:
                ts_type = int(batch.timestamp_type)
                for cols in batch.column_chunks(record_limit):
                    if cols.error is not None:
                        raise cols.error.fresh()  # not the kept one: no cycle through cols and its buffer
                    update_canonical(update, cols, ts_type)
            except KdumpError as e:
                problems.append(f"entry {entries - 1} at byte {batch.position}: records unreadable: {e}")
                break
        tail = reader.tail
    if not problems and (tail is None or tail.kind != "end"):
        problems.append(f"the file does not end after the last entry: {tail.message if tail else '?'}")
    return entries, file_hash.result(), records_hash.hexdigest(), problems


class ConvertedSegmentWriter(SegmentWriter):
    """A :class:`~kdump.write.segment.SegmentWriter` that also checks the records and runs ``kdump verify --deep``.

    The converter calls :meth:`write` with whole entries and how many there are (their framing is checked
    on read-back), and feeds :attr:`records_digest` with the canonical form of every record it wrote;
    :meth:`commit` calls :meth:`verify`, which reads the file back and compares (see the module
    docstring), before renaming it into place. Every digest is a running one: memory stays flat.
    """

    def __init__(self, path, *, overwrite: bool = False, record_limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
                 base_offset: int | None = None):
        super().__init__(path, overwrite=overwrite, deep_verify=True, record_limit=record_limit)
        self.records_digest = BackgroundSha256()
        self.verified: list[str] = []  # what the output was checked with, for the report
        self.base_offset = base_offset  # of the segment being written (its indexes are relative to it), if known
        # a file of plain messages proven by the read-back: Kafka's recovery indexes for it (.index, .timeindex
        # contents), computed in the same pass (None: the index rebuild walks the file)
        self.plain_indexes: tuple[bytes, bytes] | None = None

    def write(self, entries: bytes, count: int | None = 1) -> None:
        """Append ``count`` whole entries (their framing is checked on read-back, not here)."""
        super().write(entries, count)

    def verify(self, path: str) -> None:
        plain = PlainMessages(self.base_offset)
        entries, bytes_sha, records_sha, problems = read_back_digests(path, self.record_limit, plain)
        if not problems:
            if entries != self.entry_count:
                problems.append(f"read back {entries} entries, wrote {self.entry_count}")
            elif bytes_sha != self.written_sha256():
                problems.append("the bytes read back differ from the bytes written")
            elif records_sha != self.records_digest.hexdigest():
                problems.append("the records read back differ from the records meant to be written")
        if problems:
            raise WriteVerificationError(f"verification of {self.path} failed: " + "; ".join(problems))
        self.verified.append(f"read back: {entries:,} entries, every CRC valid, every record decoded and equal to "
                             "what was meant to be written, bytes as written")
        if plain.finished(entries):
            # plain messages only, and none with anything kdump verify --deep reports (kdump.convert.proof)
            self.verified.append("verify's deep checks: clean (its checks of plain messages, made on the read-back)")
            if self.base_offset is not None:
                self.plain_indexes = plain.indexes()
        else:
            self.verified.append(deep_verify(path, self.path, self.record_limit))


def deep_verify_findings(path, record_limit: int):
    """(errors, warning codes) of ``kdump verify --deep`` on ``path``; None if kdump has no verify."""
    try:
        from kdump.report.findings import ERROR, WARNING
        from kdump.verify import VerifyOptions, verify_one
    except ImportError:
        return None
    report = verify_one(path, VerifyOptions(deep=True, max_batch_bytes=max(record_limit, 1 << 20)))
    if report.io_error is not None:
        raise OSError(f"kdump verify could not read {path}: {report.io_error}")
    errors = [f for f in report.findings if f.severity == ERROR]
    return errors, sorted({f.code for f in report.findings if f.severity == WARNING})


def deep_verify(path, final_path, record_limit: int) -> str:
    """Run ``kdump verify --deep`` on the written file; errors fail the write, warnings are reported.

    Warnings can come from the input itself (a copied batch keeps its attributes), so they do not stop
    the conversion; the report names them.
    """
    found = deep_verify_findings(path, record_limit)
    if found is None:
        return "verify's deep checks: not available in this kdump (the read-back above still ran)"
    errors, warnings = found
    if errors:
        raise DeepVerifyFailed(f"verification of {final_path} failed: verify's deep checks found "
                               + "; ".join(f"{f.code} at byte {f.position}: {f.message}" for f in errors[:5]))
    if warnings:
        return f"verify's deep checks: no errors; warnings (from the input, carried over): {', '.join(warnings)}"
    return "verify's deep checks: clean"


class DeepVerifyFailed(WriteVerificationError):
    """``kdump verify --deep`` found errors in the written file (which may have come from the input)."""


__all__ = ["ByteCounter", "ConvertedSegmentWriter", "DeepVerifyFailed", "read_back_digests", "deep_verify",
           "deep_verify_findings"]
