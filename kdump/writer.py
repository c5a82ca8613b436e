"""kdump's writer: Kafka log entries built byte for byte the way Kafka's ``MemoryRecordsBuilder`` lays them out.

Three layers, each usable on its own (the future ``kdump convert`` and the test fixtures use all three):

* :class:`RecordBatchBuilder` -- one magic-2 record batch (spec §3.4-3.5), plus helpers for control batches
  (:func:`end_txn_marker_batch`, :func:`control_batch`, spec §3.6) and for the count-0 batch the log
  cleaner leaves behind (:func:`empty_batch`);
* :func:`legacy_message`, :func:`legacy_wrapper` and :class:`LegacyMessageBuilder` -- magic 0 and 1
  messages and compressed wrappers (spec §3.2-3.3, §6.3);
* :func:`write_segment` / :class:`SegmentWriter` -- a ``.log`` file written atomically and verified by
  reading it back with :class:`kdump.segment.SegmentReader`.

Every builder returns ``bytes`` holding whole entries (the 12-byte offset/size prefix included), so
entries can be concatenated freely into a segment.

Where Kafka refuses something (``IllegalArgumentException`` in ``MemoryRecordsBuilder``), kdump raises
``ValueError`` with a message saying what and why; wrong argument types raise ``TypeError``.
"""
from __future__ import annotations

import hashlib
import os
import struct
import uuid as _uuid
import zlib
from dataclasses import dataclass
from typing import Iterable, Sequence

import crc32c as _crc32c

from kdump import codec as _codec
from kdump.errors import KdumpError
from kdump.format import control as _control
from kdump.format import framing
from kdump.format import layout as L
from kdump.format.schema import write_struct
from kdump.format.types import ControlRecordType, TimestampType
from kdump.format.varint import encode_uvarint, encode_varint
from kdump.segment import entries_in

__all__ = [
    "RecordBatchBuilder", "LegacyMessageBuilder", "SegmentWriter", "WriteVerificationError",
    "legacy_message", "legacy_wrapper", "write_segment",
    "end_txn_marker_batch", "control_batch", "empty_batch",
    "control_record_key", "end_txn_marker_value",
    "leader_change_value", "snapshot_header_value", "snapshot_footer_value", "kraft_version_value",
    "kraft_voters_value", "KRaftVoter", "KRaftEndpoint",
]

INT16_MIN, INT16_MAX = -(2**15), 2**15 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_V2_HEADER_AFTER_CRC = L.V2_AFTER_CRC  # attributes .. recordsCount (file offsets 21..61)
_V2_HEADER_BEFORE_CRC = L.V2_BEFORE_CRC  # baseOffset, length, partitionLeaderEpoch, magic
_LEGACY_LENGTH = L.INT32


class WriteVerificationError(KdumpError):
    """A segment written by :func:`write_segment` did not read back as what was meant to be written."""


# --- argument checks ----------------------------------------------------------------------------------
def _check_int(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} {value} is out of range [{lo}, {hi}]")
    return value


def _check_bytes(name: str, value) -> bytes | None:
    """Keys and values are bytes or None; str is refused so that no encoding is ever guessed."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name} must be bytes, bytearray, memoryview or None, not {type(value).__name__}")


def _check_codec(codec, magic: int) -> int:
    if isinstance(codec, bool) or not isinstance(codec, int):
        raise TypeError(f"codec must be an int (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd), not {type(codec).__name__}")
    if not 0 <= codec <= 4:
        # Kafka: CompressionType.forId -> "Unknown compression type id: N"
        raise ValueError(f"Unknown compression type id: {codec}")
    if codec == _codec.ZSTD and magic < 2:
        # zstd came with KIP-110, which requires message format v2; Kafka refuses it for v0/v1 on write and read.
        raise ValueError(f"zstd compression is not supported with message format v{magic} (it needs magic 2)")
    return codec


def _check_timestamp(timestamp) -> int:
    # MemoryRecordsBuilder.appendWithOffset: -1 (NO_TIMESTAMP) is the only negative timestamp allowed.
    _check_int("timestamp", timestamp, INT64_MIN, INT64_MAX)
    if timestamp < 0 and timestamp != L.NO_TIMESTAMP:
        raise ValueError(f"Invalid negative timestamp {timestamp}")
    return timestamp


def _timestamp_type(value, *, magic: int) -> TimestampType:
    try:
        ts_type = TimestampType(value)
    except ValueError:
        raise ValueError(f"unknown timestamp type {value!r}") from None
    if magic > 0 and ts_type is TimestampType.NO_TIMESTAMP_TYPE:
        # MemoryRecordsBuilder: "TimestampType must be set for magic >= 0" (sic: it means > 0).
        raise ValueError(f"magic {magic} needs a timestamp type (CREATE_TIME or LOG_APPEND_TIME), not NO_TIMESTAMP_TYPE")
    return ts_type


def _encode_header_key(key) -> bytes:
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        # Header keys are Java Strings in Kafka; raw bytes are accepted so a converter can copy them unchanged.
        return bytes(key)
    if key is None:
        # DefaultRecord.writeTo: "Invalid null header key found in headers"
        raise ValueError("Invalid null header key found in headers")
    raise TypeError(f"header key must be str or bytes, not {type(key).__name__}")


def _encode_headers(headers) -> list[tuple[bytes, bytes | None]]:
    if headers is None:
        raise TypeError("headers must be a sequence of (key, value) pairs (use () for none), not None")
    out = []
    for item in headers:
        try:
            key, value = item
        except (TypeError, ValueError):
            raise TypeError(f"each header must be a (key, value) pair, not {item!r}") from None
        out.append((_encode_header_key(key), _check_bytes("header value", value)))
    return out


# --- magic 2: records and record batches -------------------------------------------------------------
def _nullable_bytes_v2(data: bytes | None) -> bytes:
    # DefaultRecord: a varint length, -1 for null, then the bytes.
    if data is None:
        return encode_varint(-1)
    return encode_varint(len(data)) + data


def encode_record_v2(offset_delta: int, timestamp_delta: int, key: bytes | None, value: bytes | None,
                     headers: Sequence[tuple[bytes, bytes | None]] = ()) -> bytes:
    """One record as ``DefaultRecord.writeTo`` writes it: varint body length, then the body."""
    parts = [
        b"\x00",  # record attributes: unused, always 0
        encode_varint(timestamp_delta),  # varlong; zig-zag makes the 32/64-bit encodings identical
        encode_varint(offset_delta),
        _nullable_bytes_v2(key),
        _nullable_bytes_v2(value),
        encode_varint(len(headers)),
    ]
    for hkey, hvalue in headers:
        parts.append(encode_varint(len(hkey)) + hkey)  # header keys are never null
        parts.append(_nullable_bytes_v2(hvalue))
    body = b"".join(parts)
    return encode_varint(len(body)) + body


def _v2_attributes(codec: int, timestamp_type: TimestampType, is_transactional: bool, is_control: bool,
                   has_delete_horizon: bool) -> int:
    # DefaultRecordBatch.computeAttributes
    attributes = codec & L.V2_CODEC_MASK
    if timestamp_type is TimestampType.LOG_APPEND_TIME:
        attributes |= L.V2_TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= L.V2_TRANSACTIONAL_MASK
    if is_control:
        attributes |= L.V2_CONTROL_MASK
    if has_delete_horizon:
        attributes |= L.V2_DELETE_HORIZON_MASK
    return attributes


def _v2_batch(*, base_offset: int, partition_leader_epoch: int, attributes: int, last_offset_delta: int,
              base_timestamp: int, max_timestamp: int, producer_id: int, producer_epoch: int,
              base_sequence: int, records_count: int, payload: bytes) -> bytes:
    """Header + payload, with Length and the CRC-32C filled in (``DefaultRecordBatch.writeHeader``)."""
    after_crc = _V2_HEADER_AFTER_CRC.pack(attributes, last_offset_delta, base_timestamp, max_timestamp,
                                          producer_id, producer_epoch, base_sequence, records_count)
    crc = _crc32c.crc32c(payload, _crc32c.crc32c(after_crc))  # over [21, end): attributes .. last record
    length = L.V2_RECORD_BATCH_OVERHEAD - L.LOG_OVERHEAD + len(payload)
    if length > INT32_MAX:
        raise ValueError(f"record batch of {length + L.LOG_OVERHEAD} bytes does not fit Kafka's int32 size field")
    before_crc = _V2_HEADER_BEFORE_CRC.pack(base_offset, length, partition_leader_epoch, 2)
    return b"".join((before_crc, L.UINT32.pack(crc), after_crc, payload))


class RecordBatchBuilder:
    """Builds one magic-2 record batch exactly as Kafka's ``MemoryRecordsBuilder`` does.

    >>> b = RecordBatchBuilder(base_offset=0)
    >>> b.append(0, 1700000000000, None, b"a")
    >>> len(b.build())
    69

    Offsets given to :meth:`append` are absolute and must increase; they need not be consecutive, and
    the first one may be above ``base_offset`` (both happen in compacted batches, whose base offset Kafka
    keeps). ``build()`` may be called more than once; it does not change the builder.

    Kafka's own refusals are kept: a transactional batch needs a producer id; a producer id needs an
    epoch and (outside control batches) a base sequence; LOG_APPEND_TIME needs ``log_append_time``.
    """

    def __init__(self, base_offset: int, codec: int = _codec.NONE,
                 timestamp_type: TimestampType = TimestampType.CREATE_TIME, log_append_time: int | None = None,
                 producer_id: int = L.NO_PRODUCER_ID, producer_epoch: int = L.NO_PRODUCER_EPOCH,
                 base_sequence: int = L.NO_SEQUENCE, is_transactional: bool = False, is_control: bool = False,
                 partition_leader_epoch: int = 0, delete_horizon_ms: int | None = None,
                 compression_level: int | None = None):
        self.base_offset = _check_int("base_offset", base_offset, 0, INT64_MAX)
        self.codec = _check_codec(codec, 2)
        self.timestamp_type = _timestamp_type(timestamp_type, magic=2)
        if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            if log_append_time is None:
                raise ValueError("a LOG_APPEND_TIME batch needs log_append_time (it becomes the max timestamp)")
            _check_timestamp(log_append_time)
        self.log_append_time = log_append_time
        self.producer_id = _check_int("producer_id", producer_id, INT64_MIN, INT64_MAX)
        self.producer_epoch = _check_int("producer_epoch", producer_epoch, INT16_MIN, INT16_MAX)
        self.base_sequence = _check_int("base_sequence", base_sequence, INT32_MIN, INT32_MAX)
        self.is_transactional = bool(is_transactional)
        self.is_control = bool(is_control)
        self.partition_leader_epoch = _check_int("partition_leader_epoch", partition_leader_epoch,
                                                 INT32_MIN, INT32_MAX)
        if delete_horizon_ms is not None:
            _check_int("delete_horizon_ms", delete_horizon_ms, INT64_MIN, INT64_MAX)
        self.delete_horizon_ms = delete_horizon_ms
        self.compression_level = compression_level
        # The producer-state rules of MemoryRecordsBuilder's constructor.
        if self.is_transactional and self.producer_id == L.NO_PRODUCER_ID:
            raise ValueError("Cannot write transactional messages without a valid producer ID")
        if self.producer_id != L.NO_PRODUCER_ID:
            if self.producer_epoch == L.NO_PRODUCER_EPOCH:
                raise ValueError("Invalid negative producer epoch")
            if self.base_sequence < 0 and not self.is_control:
                raise ValueError("Invalid negative sequence number used")
        # The log cleaner stores the delete horizon in the base timestamp field, and record timestamp
        # deltas are then relative to it (they may be negative); otherwise the first record sets it.
        self._base_timestamp: int | None = delete_horizon_ms
        self._max_timestamp = L.NO_TIMESTAMP
        self._last_offset: int | None = None
        self._last_offset_override: int | None = None
        self._records: list[bytes] = []

    @property
    def record_count(self) -> int:
        return len(self._records)

    @property
    def last_offset(self) -> int | None:
        """The batch's last offset as it will be written (None before the first append)."""
        if self._last_offset_override is not None:
            return self._last_offset_override
        return self._last_offset

    def append(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
               headers: Iterable[tuple[str | bytes, bytes | None]] = ()) -> None:
        """Append one record with absolute ``offset`` and ``timestamp`` (ms, or -1 for none).

        ``headers`` is a sequence of ``(key, value)`` pairs: key a str (written as UTF-8), value bytes
        or None. On a control batch ``key`` must be a control record key (see :func:`control_record_key`,
        or use :meth:`append_control_record`).
        """
        _check_int("offset", offset, 0, INT64_MAX)
        if self._last_offset is not None and offset <= self._last_offset:
            raise ValueError(f"Illegal offset {offset} following previous offset {self._last_offset} "
                             "(Offsets must increase monotonically).")
        if offset < self.base_offset:
            raise ValueError(f"offset {offset} is below the batch's base offset {self.base_offset}")
        offset_delta = offset - self.base_offset
        if offset_delta > INT32_MAX:
            raise ValueError(f"offset {offset} is more than 2^31-1 past the base offset {self.base_offset}")
        _check_timestamp(timestamp)
        key = _check_bytes("key", key)
        value = _check_bytes("value", value)
        encoded_headers = _encode_headers(headers)
        base_timestamp = timestamp if self._base_timestamp is None else self._base_timestamp
        record = encode_record_v2(offset_delta, timestamp - base_timestamp, key, value, encoded_headers)
        self._base_timestamp = base_timestamp
        self._records.append(record)
        self._last_offset = offset
        if timestamp > self._max_timestamp:
            self._max_timestamp = timestamp

    def append_control_record(self, offset: int, timestamp: int, control_type_id: int, value: bytes | None,
                              *, key_version: int = 0) -> None:
        """Append a control record (key = int16 version + int16 type id) to a control batch."""
        if not self.is_control:
            # MemoryRecordsBuilder: "Control records can only be appended to control batches"
            raise ValueError("Control records can only be appended to control batches")
        self.append(offset, timestamp, control_record_key(control_type_id, key_version), value)

    def override_last_offset(self, last_offset: int) -> None:
        """Keep a larger last offset than the last record's (``MemoryRecordsBuilder.overrideLastOffset``).

        The log cleaner does this for v2 batches whose trailing records it removed: the batch keeps its
        original lastOffset so that producer sequence numbers stay consistent.
        """
        _check_int("last_offset", last_offset, self.base_offset, self.base_offset + INT32_MAX)
        if self._last_offset is not None and last_offset < self._last_offset:
            raise ValueError(f"last offset {last_offset} is below the last record's offset {self._last_offset}")
        self._last_offset_override = last_offset

    def build(self) -> bytes:
        """The whole batch: 12-byte prefix, 49 more header bytes, then the (compressed) records."""
        if not self._records:
            # Kafka's builder writes nothing for zero records; a count-0 batch only comes from the cleaner.
            raise ValueError("a record batch needs at least one record (use empty_batch() for a count-0 batch)")
        records = b"".join(self._records)
        if self.codec == _codec.NONE:
            payload = records
        else:
            payload = _codec.compress(self.codec, records, magic=2, level=self.compression_level)
        if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            max_timestamp = self.log_append_time  # the broker's append time replaces every record's timestamp
        else:
            max_timestamp = self._max_timestamp
        attributes = _v2_attributes(self.codec, self.timestamp_type, self.is_transactional, self.is_control,
                                    self.delete_horizon_ms is not None)
        return _v2_batch(
            base_offset=self.base_offset, partition_leader_epoch=self.partition_leader_epoch,
            attributes=attributes, last_offset_delta=self.last_offset - self.base_offset,
            base_timestamp=self._base_timestamp, max_timestamp=max_timestamp, producer_id=self.producer_id,
            producer_epoch=self.producer_epoch, base_sequence=self.base_sequence,
            records_count=len(self._records), payload=payload,
        )


def empty_batch(base_offset: int, last_offset: int, *, max_timestamp: int = L.NO_TIMESTAMP,
                timestamp_type: TimestampType = TimestampType.CREATE_TIME, producer_id: int = L.NO_PRODUCER_ID,
                producer_epoch: int = L.NO_PRODUCER_EPOCH, base_sequence: int = L.NO_SEQUENCE,
                is_transactional: bool = False, is_control: bool = False, partition_leader_epoch: int = 0) -> bytes:
    """A count-0 batch as the log cleaner leaves it (``DefaultRecordBatch.writeEmptyHeader``).

    When compaction removes every record of a batch whose producer state must be kept, the header
    survives: offsets, producer fields and max timestamp kept, base timestamp -1, no compression.
    """
    _check_int("base_offset", base_offset, 0, INT64_MAX)
    _check_int("last_offset", last_offset, base_offset, base_offset + INT32_MAX)
    _check_int("max_timestamp", max_timestamp, INT64_MIN, INT64_MAX)
    ts_type = _timestamp_type(timestamp_type, magic=2)
    attributes = _v2_attributes(_codec.NONE, ts_type, is_transactional, is_control, False)
    return _v2_batch(
        base_offset=base_offset,
        partition_leader_epoch=_check_int("partition_leader_epoch", partition_leader_epoch, INT32_MIN, INT32_MAX),
        attributes=attributes, last_offset_delta=last_offset - base_offset, base_timestamp=L.NO_TIMESTAMP,
        max_timestamp=max_timestamp, producer_id=_check_int("producer_id", producer_id, INT64_MIN, INT64_MAX),
        producer_epoch=_check_int("producer_epoch", producer_epoch, INT16_MIN, INT16_MAX),
        base_sequence=_check_int("base_sequence", base_sequence, INT32_MIN, INT32_MAX),
        records_count=0, payload=b"",
    )


# --- control records (spec §3.6) ----------------------------------------------------------------------
def control_record_key(control_type_id: int, version: int = 0) -> bytes:
    """``ControlRecordType.recordKey``: int16 key version (0), int16 type id."""
    return struct.pack(">hh", _check_int("key version", version, INT16_MIN, INT16_MAX),
                       _check_int("control_type_id", control_type_id, INT16_MIN, INT16_MAX))


def end_txn_marker_value(coordinator_epoch: int, version: int = 0) -> bytes:
    """``EndTransactionMarker`` value: int16 version (0), int32 coordinator epoch."""
    return struct.pack(">hi", _check_int("version", version, INT16_MIN, INT16_MAX),
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


# --- magic 0 and 1: legacy messages and compressed wrappers ------------------------------------------
def _nullable_bytes_legacy(data: bytes | None) -> bytes:
    if data is None:
        return b"\xff\xff\xff\xff"  # int32 -1
    return _LEGACY_LENGTH.pack(len(data)) + data


def legacy_message(offset: int, magic: int, key: bytes | None, value: bytes | None, timestamp: int = L.NO_TIMESTAMP,
                   timestamp_type: TimestampType = TimestampType.CREATE_TIME, codec: int = _codec.NONE) -> bytes:
    """One magic 0/1 log entry (``LegacyRecord.write`` behind an offset/size prefix).

    Layout: offset int64, size int32, CRC-32 (zlib) over magic..end, magic, attributes (codec in bits
    0-2; for magic 1 the LogAppendTime bit 3), [timestamp int64, magic 1 only], key, value with int32
    lengths (-1 = null). ``codec`` only sets the attribute bits: ``value`` must then already be the
    compressed inner message set (:func:`legacy_wrapper` does that). Magic 0 has no timestamp, so
    ``timestamp`` and ``timestamp_type`` are ignored for it, as Kafka's ``LegacyRecord`` does.
    """
    _check_int("offset", offset, INT64_MIN, INT64_MAX)
    if magic not in (0, 1):
        raise ValueError(f"legacy messages have magic 0 or 1, not {magic!r}")
    codec = _check_codec(codec, magic)
    key = _check_bytes("key", key)
    value = _check_bytes("value", value)
    attributes = codec
    if magic == 0:
        timestamp_field = b""
    else:
        ts_type = _timestamp_type(timestamp_type, magic=1)
        if ts_type is TimestampType.LOG_APPEND_TIME:
            attributes |= L.LEGACY_TIMESTAMP_TYPE_MASK
        timestamp_field = L.LEGACY_TIMESTAMP.pack(_check_timestamp(timestamp))
    after_crc = b"".join((bytes((magic, attributes)), timestamp_field, _nullable_bytes_legacy(key),
                          _nullable_bytes_legacy(value)))
    message = L.UINT32.pack(zlib.crc32(after_crc)) + after_crc
    if len(message) > INT32_MAX:
        raise ValueError(f"legacy message of {len(message)} bytes does not fit Kafka's int32 size field")
    return L.PREFIX.pack(offset, len(message)) + message


def legacy_wrapper(magic: int, codec: int, messages: Sequence[tuple], timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                   log_append_time: int | None = None, *, base_offset: int | None = None,
                   wrapper_offset: int | None = None, compression_level: int | None = None) -> bytes:
    """A compressed magic 0/1 wrapper holding ``messages`` = ``[(offset, timestamp, key, value), ...]``.

    As ``MemoryRecordsBuilder`` writes it (spec §3.3, §6.3):

    * inner messages are uncompressed, with the wrapper's magic;
    * magic 0 inner offsets are absolute; magic 1 inner offsets are relative to ``base_offset``
      (default: the first message's offset, so 0..n-1 for consecutive offsets) and the inner attribute
      bit 3 carries the wrapper's timestamp type;
    * with LOG_APPEND_TIME every inner timestamp is ``log_append_time``;
    * the wrapper: offset = last absolute offset (override with ``wrapper_offset``, e.g. 0 as librdkafka
      wrote), timestamp = ``log_append_time`` or the max inner timestamp, key null, value = the inner
      set compressed for this magic (magic-0 lz4 gets Kafka's broken frame header checksum).

    A 5th tuple element (headers) is accepted only if empty: magic 0/1 have no headers. zstd is refused.
    """
    if magic not in (0, 1):
        raise ValueError(f"legacy wrappers have magic 0 or 1, not {magic!r}")
    codec = _check_codec(codec, magic)
    if codec == _codec.NONE:
        raise ValueError("a wrapper needs a codec; uncompressed legacy messages are written one per entry "
                         "(legacy_message or LegacyMessageBuilder)")
    builder = LegacyMessageBuilder(magic, codec, timestamp_type, log_append_time, base_offset=base_offset,
                                   compression_level=compression_level)
    for item in messages:
        if len(item) == 5:
            offset, timestamp, key, value, headers = item
        elif len(item) == 4:
            offset, timestamp, key, value = item
            headers = ()
        else:
            raise TypeError(f"a message is (offset, timestamp, key, value[, headers]), not {item!r}")
        builder.append(offset, timestamp, key, value, headers)
    return builder.build(wrapper_offset=wrapper_offset)


class LegacyMessageBuilder:
    """Builds magic 0/1 entries the way ``MemoryRecordsBuilder`` does for legacy formats.

    Same ``append`` as :class:`RecordBatchBuilder`. ``build()`` returns one entry per record when
    ``codec`` is none (legacy formats have no uncompressed batches), else one compressed wrapper entry.
    """

    def __init__(self, magic: int, codec: int = _codec.NONE, timestamp_type: TimestampType = TimestampType.CREATE_TIME,
                 log_append_time: int | None = None, *, base_offset: int | None = None,
                 compression_level: int | None = None):
        if magic not in (0, 1):
            raise ValueError(f"legacy messages have magic 0 or 1, not {magic!r}")
        self.magic = magic
        self.codec = _check_codec(codec, magic)
        if magic == 0:
            # No timestamps in magic 0: Kafka ignores the timestamp type, and so does kdump.
            self.timestamp_type = TimestampType.NO_TIMESTAMP_TYPE
            self.log_append_time = None
        else:
            self.timestamp_type = _timestamp_type(timestamp_type, magic=1)
            if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
                if log_append_time is None:
                    raise ValueError("a LOG_APPEND_TIME message set needs log_append_time")
                _check_timestamp(log_append_time)
            self.log_append_time = log_append_time
        self.base_offset = None if base_offset is None else _check_int("base_offset", base_offset, 0, INT64_MAX)
        self.compression_level = compression_level
        self._entries: list[bytes] = []
        self._last_offset: int | None = None
        self._max_timestamp = L.NO_TIMESTAMP

    @property
    def record_count(self) -> int:
        return len(self._entries)

    @property
    def last_offset(self) -> int | None:
        return self._last_offset

    def append(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
               headers: Iterable = ()) -> None:
        _check_int("offset", offset, 0, INT64_MAX)
        if list(headers or ()):
            raise ValueError(f"Magic v{self.magic} does not support record headers")
        if self._last_offset is not None and offset <= self._last_offset:
            raise ValueError(f"Illegal offset {offset} following previous offset {self._last_offset} "
                             "(Offsets must increase monotonically).")
        if self.base_offset is None:
            self.base_offset = offset
        if offset < self.base_offset:
            raise ValueError(f"offset {offset} is below the base offset {self.base_offset}")
        _check_timestamp(timestamp)
        if self.magic == 0:
            timestamp = L.NO_TIMESTAMP
        elif self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            timestamp = self.log_append_time  # appendLegacyRecord overwrites it, compressed or not
        if self.magic == 1 and self.codec != _codec.NONE:
            stored_offset = offset - self.base_offset  # MemoryRecordsBuilder.toInnerOffset
            if stored_offset > INT32_MAX:
                raise ValueError(f"offset {offset} is too far from the base offset {self.base_offset}")
        else:
            stored_offset = offset
        self._entries.append(legacy_message(stored_offset, self.magic, key, value, timestamp, self.timestamp_type))
        self._last_offset = offset
        if timestamp > self._max_timestamp:
            self._max_timestamp = timestamp

    def build(self, *, wrapper_offset: int | None = None) -> bytes:
        if not self._entries:
            raise ValueError("nothing appended")
        if self.codec == _codec.NONE:
            if wrapper_offset is not None:
                raise ValueError("wrapper_offset only applies to compressed wrappers")
            return b"".join(self._entries)
        inner = b"".join(self._entries)
        compressed = _codec.compress(self.codec, inner, magic=self.magic, level=self.compression_level)
        if self.timestamp_type is TimestampType.LOG_APPEND_TIME:
            wrapper_timestamp = self.log_append_time
        else:
            wrapper_timestamp = self._max_timestamp  # -1 for magic 0, where it is not written anyway
        offset = self._last_offset if wrapper_offset is None else wrapper_offset
        return legacy_message(offset, self.magic, None, compressed, wrapper_timestamp, self.timestamp_type, self.codec)


# --- segment files ------------------------------------------------------------------------------------
def _split_entries(chunk: bytes) -> list[tuple[int, int]]:
    """(offset field, size) of each whole entry in ``chunk``; refuses partial entries."""
    entries, stop = entries_in(chunk)
    if stop.kind == framing.SHORT:
        raise ValueError(f"entry data ends with {stop.length} bytes that are not a whole entry")
    if stop.kind != framing.END:
        raise ValueError(f"entry at byte {stop.position} of the data declares size {stop.declared - L.LOG_OVERHEAD}, "
                         "which does not fit the data")
    return [(offset, size) for _pos, offset, size in entries]


class SegmentWriter:
    """Writes one ``.log`` file atomically and checks it by reading it back.

    Entries go to a temporary file in the target's directory; on :meth:`commit` the file is fsynced,
    read back with :class:`~kdump.segment.SegmentReader` and compared with what was written (framing,
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
        from kdump.atomic import AtomicFile  # temp file, fsync, verify, rename/link: shared with index files
        self.deep_verify = deep_verify
        self.record_limit = record_limit
        self.overwrite = overwrite
        # backup=False: a replaced segment is not kept (callers that want a .bak use kdump.atomic directly).
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
        """The :class:`kdump.atomic.AtomicFile` behind this writer (to place it with others in an ``AtomicGroup``)."""
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

    def __enter__(self) -> "SegmentWriter":
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
        from kdump.segment import SegmentReader  # the reader imports nothing from here; keeps import order free

        problems = []
        count = 0
        digest = hashlib.sha256()
        with SegmentReader(path) as reader:
            for i, batch in enumerate(reader):
                count += 1
                digest.update(batch.entry_bytes())
                if not batch.is_valid():
                    problems.append(f"entry {i} at byte {batch.position}: CRC does not match its contents")
                if self.deep_verify:
                    try:
                        for _ in batch.records(self.record_limit):
                            pass
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
