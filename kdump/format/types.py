"""Enumerations of Kafka's record formats, with the names Kafka prints for them."""
from __future__ import annotations

from enum import IntEnum
from typing import Any, cast

from kdump.codec import CODECS
from kdump.format.names import CODEC_IDS, CODEC_NAMES, CONTROL_TYPE_NAMES, TIMESTAMP_TYPE_TEXT


class TimestampType(IntEnum):
    NO_TIMESTAMP_TYPE = -1
    CREATE_TIME = 0
    LOG_APPEND_TIME = 1

    @property
    def display_name(self) -> str:
        """The name DumpLogSegments prints (``TimestampType.name`` in Java)."""
        return TIMESTAMP_TYPE_TEXT[self]


class _CompressionTypes(IntEnum):
    """Kafka's ``CompressionType``: a member per row of kdump/codec's table of codecs (``NONE``, ``GZIP``, ...)."""

    @property
    def label(self) -> str:
        """``none``, ``gzip``, ... as Kafka prints ``CompressionType.name``."""
        return CODEC_NAMES[self]

    @classmethod
    def from_label(cls, label: str) -> _CompressionTypes:
        return cls(CODEC_IDS[label.lower()])


# Made from the table, so that a codec added there is one here too.
# (Enum's functional form, which mypy does not follow: hence the cast)
CompressionType: type[_CompressionTypes] = cast(Any, _CompressionTypes)(
    "CompressionType", [(c.name.upper(), c.id) for c in CODECS], module=__name__, qualname="CompressionType")


class ControlRecordType(IntEnum):
    """Type of a control record, from the 4-byte key of a record in a control batch (spec §3.6)."""

    UNKNOWN = -1
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6

    @property
    def display_name(self) -> str:
        """The name Kafka prints (``ControlRecordType.name()`` in Java)."""
        return CONTROL_TYPE_NAMES[self]

    @classmethod
    def from_id(cls, type_id: int) -> ControlRecordType:
        try:
            return cls(type_id)
        except ValueError:
            return cls.UNKNOWN
