"""Argument checks shared by the encoders (:mod:`kdump.format.v2_builder`, :mod:`kdump.format.legacy_builder`).

Where Kafka refuses something (``IllegalArgumentException`` in ``MemoryRecordsBuilder``), the builders raise
``ValueError`` with a message saying what and why; wrong argument types raise ``TypeError``.
"""
from __future__ import annotations

from kdump import codec as _codec
from kdump.format import layout as L
from kdump.format.types import TimestampType

INT16_MIN, INT16_MAX = -(2**15), 2**15 - 1
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def check_int(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} {value} is out of range [{lo}, {hi}]")
    return value


def check_bytes(name: str, value) -> bytes | None:
    """Keys and values are bytes or None; str is refused so that no encoding is ever guessed."""
    if value is None:
        return None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name} must be bytes, bytearray, memoryview or None, not {type(value).__name__}")


def check_codec(codec, magic: int) -> int:
    if isinstance(codec, bool) or not isinstance(codec, int):
        ids = ", ".join(f"{c.id} {c.name}" for c in _codec.CODECS)
        raise TypeError(f"codec must be an int ({ids}), not {type(codec).__name__}")
    if not _codec.known(codec):
        # Kafka: CompressionType.forId -> "Unknown compression type id: N"
        raise ValueError(f"Unknown compression type id: {codec}")
    if not _codec.allowed_in(codec, magic):
        # zstd came with KIP-110, which requires message format v2; Kafka refuses it for v0/v1 on write and read.
        c = _codec.CODECS[codec]
        raise ValueError(f"{c.name} compression is not supported with message format v{magic} "
                         f"(it needs magic {c.min_magic})")
    return codec


def check_timestamp(timestamp) -> int:
    # MemoryRecordsBuilder.appendWithOffset: -1 (NO_TIMESTAMP) is the only negative timestamp allowed.
    check_int("timestamp", timestamp, INT64_MIN, INT64_MAX)
    if timestamp < 0 and timestamp != L.NO_TIMESTAMP:
        raise ValueError(f"Invalid negative timestamp {timestamp}")
    return timestamp


def check_timestamp_type(value, *, magic: int) -> TimestampType:
    try:
        ts_type = TimestampType(value)
    except ValueError:
        raise ValueError(f"unknown timestamp type {value!r}") from None
    if magic > 0 and ts_type is TimestampType.NO_TIMESTAMP_TYPE:
        # MemoryRecordsBuilder: "TimestampType must be set for magic >= 0" (sic: it means > 0).
        raise ValueError(f"magic {magic} needs a timestamp type (CREATE_TIME or LOG_APPEND_TIME), "
                         "not NO_TIMESTAMP_TYPE")
    return ts_type


def refuse_record(offset: int, timestamp: int, last_offset: int | None, base_offset: int,
                  max_delta: int | None) -> None:
    """Raise the ValueError Kafka's builder gives for a record it does not take (the builders' fast paths
    test all conditions at once and call this only when one fails): offsets must increase and not be below
    the base offset, at most ``max_delta`` above it (None: no limit), timestamps -1 or not negative."""
    if last_offset is not None and offset <= last_offset:
        raise ValueError(f"Illegal offset {offset} following previous offset {last_offset} "
                         "(Offsets must increase monotonically).")
    if offset < base_offset:
        raise ValueError(f"offset {offset} is below the batch's base offset {base_offset}")
    if max_delta is not None and offset - base_offset > max_delta:
        raise ValueError(f"offset {offset} is more than {max_delta} past the base offset {base_offset}")
    if timestamp < L.NO_TIMESTAMP:
        raise ValueError(f"Invalid negative timestamp {timestamp}")
