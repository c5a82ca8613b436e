"""kdump's writer: Kafka log entries and ``.log`` files, byte for byte the way Kafka lays them out.

The encoders live beside the readers, in :mod:`kdump.format.v2_builder` (:class:`RecordBatchBuilder`,
:func:`empty_batch`) and :mod:`kdump.format.legacy_builder` (:class:`LegacyMessageBuilder`,
:func:`legacy_message`, :func:`legacy_wrapper`); they are re-exported here. This module adds:

* control batches (:func:`end_txn_marker_batch`, :func:`control_batch`, spec §3.6) and the values of
  KRaft's control records;
* :func:`write_segment` / :class:`SegmentWriter` -- a ``.log`` file written atomically and verified by
  reading it back with :class:`kdump.read.segment.SegmentReader`.

Every builder returns ``bytes`` holding whole entries (the 12-byte offset/size prefix included), so
entries can be concatenated freely into a segment.

Where Kafka refuses something (``IllegalArgumentException`` in ``MemoryRecordsBuilder``), kdump raises
``ValueError`` with a message saying what and why; wrong argument types raise ``TypeError``.
"""
from __future__ import annotations

import hashlib
import uuid as _uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kdump import codec as _codec
from kdump.errors import KdumpError
from kdump.format import control as _control
from kdump.format import framing
from kdump.format import layout as L
from kdump.format.builder_args import INT16_MAX, INT16_MIN, INT32_MAX, INT32_MIN
from kdump.format.builder_args import check_int as _check_int
from kdump.format.legacy import LegacyRun
from kdump.format.legacy_builder import LegacyMessageBuilder, legacy_message, legacy_wrapper
from kdump.format.schema import write_struct
from kdump.format.types import ControlRecordType, TimestampType
from kdump.format.v2 import RecordBatch
from kdump.format.v2_builder import RecordBatchBuilder, empty_batch
from kdump.read.segment import entries_in

__all__ = [
    "RecordBatchBuilder", "LegacyMessageBuilder", "SegmentWriter", "WriteVerificationError",
    "legacy_message", "legacy_wrapper", "write_segment",
    "end_txn_marker_batch", "control_batch", "empty_batch",
    "control_record_key", "end_txn_marker_value",
    "leader_change_value", "snapshot_header_value", "snapshot_footer_value", "kraft_version_value",
    "kraft_voters_value", "KRaftVoter", "KRaftEndpoint",
]


class WriteVerificationError(KdumpError):
    """A segment written by :func:`write_segment` did not read back as what was meant to be written."""


# --- control records (spec §3.6) ----------------------------------------------------------------------
def control_record_key(control_type_id: int, version: int = 0) -> bytes:
    """``ControlRecordType.recordKey``: int16 key version (0), int16 type id."""
    return L.CONTROL_RECORD_KEY.pack(_check_int("key version", version, INT16_MIN, INT16_MAX),
                       _check_int("control_type_id", control_type_id, INT16_MIN, INT16_MAX))


def end_txn_marker_value(coordinator_epoch: int, version: int = 0) -> bytes:
    """``EndTransactionMarker`` value: int16 version (0), int32 coordinator epoch."""
    return L.END_TXN_MARKER.pack(_check_int("version", version, INT16_MIN, INT16_MAX),
                       _check_int("coordinator_epoch", coordinator_epoch, INT32_MIN, INT32_MAX))


def control_batch(offset: int, control_type_id: int, value_bytes: bytes | None, *, timestamp: int,
                  producer_id: int = L.NO_PRODUCER_ID, producer_epoch: int = L.NO_PRODUCER_EPOCH,
                  is_transactional: bool = False, partition_leader_epoch: int = 0, key_version: int = 0) -> bytes:
    """A control batch holding one control record of any type id (known or not), uncompressed, CreateTime.

    This is how KRaft writes LeaderChange / SnapshotHeader / SnapshotFooter / KRaftVersion / KRaftVoters
    records (``MemoryRecords.with*`` helpers): no producer id, not transactional, base sequence -1.
    ``value_bytes`` is written as given (see the ``*_value`` encoders below).
    """
    builder = RecordBatchBuilder(
        offset, _codec.NONE, TimestampType.CREATE_TIME, producer_id=producer_id, producer_epoch=producer_epoch,
        base_sequence=L.NO_SEQUENCE, is_transactional=is_transactional, is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )
    builder.append_control_record(offset, timestamp, control_type_id, value_bytes, key_version=key_version)
    return builder.build()


def end_txn_marker_batch(offset: int, producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int,
                         timestamp: int, partition_leader_epoch: int = 0) -> bytes:
    """A COMMIT or ABORT marker as the transaction coordinator writes it (``MemoryRecords.withEndTransactionMarker``).

    Control and transactional bits set, the transaction's producer id/epoch, base sequence -1, one record
    with key ``00 00 00 01`` (COMMIT) or ``00 00 00 00`` (ABORT) and value int16 0 + int32 coordinator epoch.
    """
    type_id = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    return control_batch(offset, int(type_id), end_txn_marker_value(coordinator_epoch), timestamp=timestamp,
                         producer_id=producer_id, producer_epoch=producer_epoch, is_transactional=True,
                         partition_leader_epoch=partition_leader_epoch)


# KRaft control record values: Kafka's generated messages (schema version 0, as Kafka's ControlRecordUtils
# reads them), written from the generated tables by kdump.format.schema. The ``version`` argument is the
# message's own leading "Version" field, not the schema version.
def snapshot_header_value(last_contained_log_timestamp: int, version: int = 0) -> bytes:
    """SnapshotHeaderRecord: Version int16, LastContainedLogTimestamp int64."""
    return _control_value(_control.SNAPSHOT_HEADER, {"version": version,
                                                      "lastContainedLogTimestamp": last_contained_log_timestamp})


def snapshot_footer_value(version: int = 0) -> bytes:
    """SnapshotFooterRecord: Version int16."""
    return _control_value(_control.SNAPSHOT_FOOTER, {"version": version})


def kraft_version_value(kraft_version: int, version: int = 0) -> bytes:
    """KRaftVersionRecord: Version int16, KRaftVersion int16."""
    return _control_value(_control.KRAFT_VERSION, {"version": version, "kRaftVersion": kraft_version})


def leader_change_value(leader_id: int, voters: Sequence[int], granting_voters: Sequence[int],
                        version: int = 0) -> bytes:
    """LeaderChangeMessage: Version, LeaderId, Voters [{VoterId}], GrantingVoters [{VoterId}].

    (Schema v1 adds a directory id per voter; kdump writes v0, the version Kafka's ControlRecordUtils reads.)
    """
    return _control_value(_control.LEADER_CHANGE, {
        "version": version, "leaderId": leader_id,
        "voters": [{"voterId": v} for v in voters], "grantingVoters": [{"voterId": v} for v in granting_voters]})


@dataclass(frozen=True)
class KRaftEndpoint:
    name: str
    host: str
    port: int


@dataclass(frozen=True)
class KRaftVoter:
    voter_id: int
    directory_id: _uuid.UUID
    endpoints: tuple[KRaftEndpoint, ...]
    min_supported_version: int = 0
    max_supported_version: int = 1


def kraft_voters_value(voters: Sequence[KRaftVoter], version: int = 0) -> bytes:
    """VotersRecord: Version, Voters [{VoterId, VoterDirectoryId, Endpoints [{Name, Host, Port}],
    KRaftVersionFeature {Min, Max}}]."""
    return _control_value(_control.KRAFT_VOTERS, {"version": version, "voters": [
        {"voterId": v.voter_id, "voterDirectoryId": v.directory_id,
         "endpoints": [{"name": e.name, "host": e.host, "port": e.port} for e in v.endpoints],
         "kRaftVersionFeature": {"minSupportedVersion": v.min_supported_version,
                                 "maxSupportedVersion": v.max_supported_version}}
        for v in voters]})


def _control_value(schema, obj: dict) -> bytes:
    return write_struct(obj, schema, 0)


# --- segment files ------------------------------------------------------------------------------------
def _split_entries(chunk: bytes) -> list[tuple[int, int]]:
    """(offset field, size) of each whole entry in ``chunk``; refuses partial entries."""
    entries, stop = entries_in(chunk)
    if stop.kind == framing.SHORT:
        raise ValueError(f"entry data ends with {stop.length} bytes that are not a whole entry")
    if stop.kind != framing.END:
        size = "?" if stop.declared is None else stop.declared - L.LOG_OVERHEAD
        raise ValueError(f"entry at byte {stop.position} of the data declares size {size}, which does not fit the data")
    return [(offset, size) for _pos, offset, size in entries]


class SegmentWriter:
    """Writes one ``.log`` file atomically and checks it by reading it back.

    Entries go to a temporary file in the target's directory; on :meth:`commit` the file is fsynced,
    read back with :class:`~kdump.read.segment.SegmentReader` and compared with what was written (framing,
    every batch CRC valid, the entries' bytes, no trailing bytes: :meth:`verify`), and only then renamed
    into place. Memory stays flat: the comparison uses a running sha256 over the entries' bytes in write
    order and a count, not a record per entry. Without ``overwrite`` an existing target is never
    replaced, even one created meanwhile. On any failure the temporary file is removed and the target is
    left as it was.

    Subclasses extend the check by overriding :meth:`verify` (called with :attr:`temporary_path`).

    >>> with SegmentWriter("00000000000000000000.log") as w:     # doctest: +SKIP
    ...     w.write(batch_bytes)
    """

    def __init__(self, path, *, overwrite: bool = False, deep_verify: bool = True,
                 record_limit: int = 1 << 28):
        from kdump.write.atomic import AtomicFile  # temp file, fsync, verify, rename/link: shared with index files
        self.deep_verify = deep_verify
        self.record_limit = record_limit
        self.overwrite = overwrite
        # backup=False: a replaced segment is not kept (callers that want a .bak use kdump.write.atomic directly).
        self._atomic = AtomicFile(path, overwrite=overwrite, backup=False, verify=self.verify,
                                  compare_bytes=False)
        self.path = self._atomic.path
        self._entries = 0

    @property
    def entry_count(self) -> int:
        """Entries written so far."""
        return self._entries

    @property
    def bytes_written(self) -> int:
        return self._atomic.size

    @property
    def temporary_path(self) -> str:
        """The temporary file the entries go to (renamed to :attr:`path` by :meth:`commit`)."""
        return self._atomic.temporary_path

    @property
    def atomic_file(self):
        """The :class:`kdump.write.atomic.AtomicFile` behind this writer (to place it with others in an
        ``AtomicGroup``)."""
        return self._atomic

    def written_sha256(self) -> str:
        """sha256 (hex) of the bytes written so far, which is the file's once it is whole."""
        return self._atomic.written_sha256()

    def write(self, entries: bytes, count: int | None = None) -> None:
        """Append whole entries (one or several, e.g. the output of a builder).

        The entries are split here, and data that is not whole entries is refused; a caller that knows
        how many entries ``entries`` holds may pass ``count`` instead, and the framing is then checked
        only on read-back (the count must match).
        """
        if not isinstance(entries, (bytes, bytearray, memoryview)):
            raise TypeError(f"entries must be bytes, not {type(entries).__name__}")
        if count is None:
            try:
                count = len(_split_entries(entries))
            except BaseException:
                self.abort()
                raise
        self._atomic.write(entries)
        self._entries += count

    def flush(self) -> None:
        self._atomic.flush()

    def commit(self) -> str:
        """fsync, verify (:meth:`verify`), rename into place; returns the final path."""
        return self._atomic.commit()

    def abort(self) -> None:
        """Drop the temporary file (idempotent)."""
        self._atomic.abort()

    def __enter__(self) -> SegmentWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()

    def verify(self, path: str) -> None:
        """Read the written file at ``path`` back and compare it with what was written; raise
        :class:`WriteVerificationError` if it differs. :meth:`commit` calls it on :attr:`temporary_path`
        after the fsync and before the rename; subclasses may override it to check more (or otherwise)."""
        from kdump.read.segment import SegmentReader  # the reader imports nothing from here; keeps import order free

        problems = []
        count = 0
        digest = hashlib.sha256()
        with SegmentReader(path) as reader:
            for batch in reader.runs():
                if isinstance(batch, LegacyRun):  # plain magic 0/1 messages (each its own record): CRCs and bytes
                    valid = batch.valid
                    if not all(valid):
                        j = valid.index(False)
                        problems.append(f"entry {count + j} at byte {batch.positions()[j]}: CRC does not match its "
                                        "contents")
                        break
                    count += batch.count
                    digest.update(batch.entry_bytes())
                    continue
                i = count
                count += 1
                for part in batch.entry_parts():  # not joined: a batch near the limit is not copied
                    digest.update(part)
                if not batch.is_valid():
                    problems.append(f"entry {i} at byte {batch.position}: CRC does not match its contents")
                if self.deep_verify:
                    try:  # walked as verify --deep walks it, no record's value or headers copied out of the batch
                        chunks = batch.summary_chunks(self.record_limit) if isinstance(batch, RecordBatch) \
                            else batch.column_chunks(self.record_limit)
                        for chunk in chunks:
                            if chunk.error is not None:
                                raise chunk.error.fresh()
                    except KdumpError as e:
                        problems.append(f"entry {i} at byte {batch.position}: records unreadable: {e}")
                if problems:
                    break
            tail = reader.tail
        if not problems:
            if tail is None or tail.kind != "end":
                problems.append(f"the file does not end after the last entry: {tail.kind if tail else '?'} "
                                f"{tail.message if tail else ''}".rstrip())
            if count != self._entries:
                problems.append(f"read back {count} entries, wrote {self._entries}")
            elif digest.hexdigest() != self.written_sha256():
                problems.append("the bytes read back differ from the bytes written")
        if problems:
            raise WriteVerificationError(f"verification of {self.path} failed: " + "; ".join(problems))


def write_segment(path, entries: Iterable[bytes], *, overwrite: bool = False, deep_verify: bool = True) -> str:
    """Write ``entries`` (each ``bytes`` holding one or more whole entries) to ``path`` atomically.

    The file appears only after it has been fsynced and read back successfully (see
    :class:`SegmentWriter`); raises :class:`FileExistsError` if ``path`` exists and not ``overwrite``,
    :class:`WriteVerificationError` if the read-back differs. Returns the absolute path written.
    """
    if isinstance(entries, (bytes, bytearray, memoryview)):
        raise TypeError("entries must be an iterable of bytes objects; wrap a single one in a list")
    writer = SegmentWriter(path, overwrite=overwrite, deep_verify=deep_verify)
    try:
        for chunk in entries:
            writer.write(chunk)
    except BaseException:
        writer.abort()
        raise
    return writer.commit()
