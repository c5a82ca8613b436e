"""Every name kdump shows for a value, in one table each (as pyelftools keeps its ``descriptions.py``).

Ids are what the bytes hold (the enumerations of :mod:`kdump.format.types`); the names here are how Kafka
spells them where it prints them, and the spellings kdump's own outputs use:

* compression codecs: Kafka's ``CompressionType.name`` (``none``, ``gzip``, ...), which DumpLogSegments
  prints (``compresscodec: gzip``) and which is also the JSON ``codec``, the ``codec`` column of the
  ``kafka-log`` Spark source, its ``codec`` write option and the CLI's ``--codec`` / ``--compression`` choices;
* timestamp types: ``TimestampType.name`` in Kafka's text (``CreateTime: 1700000000031``) and the Java enum
  constant (``CREATE_TIME``) in JSON, as Kafka's own field-level view of a batch has it; the Spark column
  ``timestampType`` holds the id, as Spark's Kafka source does;
* control record types: Kafka's ``ControlRecordType`` constants (``COMMIT``, ``LEADER_CHANGE``), and the label
  DumpLogSegments prints before a KRaft control record's JSON (``LeaderChange:``);
* batch fields: :data:`BATCH_FIELDS`, the one projection of a batch into named fields, with each field's
  label in DumpLogSegments' batch line, its JSON key and its Spark column; the text renderer, the JSON
  renderer and the Spark source build their batch output from it with :func:`compile_projection`.

Byte-level layer: no I/O, nothing imported from above.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from kdump.codec import CODECS

# --- compression codecs -------------------------------------------------------------------------------------
# Indexed by the compression type id of the attributes' low 3 bits (Kafka's CompressionType.forId): the names of
# kdump/codec's one table of codecs (CODECS: id -> name -> module).
CODEC_NAMES = tuple(c.name for c in CODECS)
CODEC_IDS = {name: codec_id for codec_id, name in enumerate(CODEC_NAMES)}


def codec_name(codec_id: int) -> str:
    """The name of a codec id; an id Kafka does not know (5-7 fit in the bits) as ``unknown(N)``."""
    return CODEC_NAMES[codec_id] if 0 <= codec_id < len(CODEC_NAMES) else f"unknown({codec_id})"


# --- timestamp types -----------------------------------------------------------------------------------------
# By TimestampType id: -1 (magic 0, which has no type), 0, 1 (the attributes' timestamp-type bit).
# Kafka's text: TimestampType.name, printed as the label of a batch's or record's timestamp.
TIMESTAMP_TYPE_TEXT = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}
# JSON (``timestampType``): the Java enum constants, as Kafka's own field-level view of a batch spells them.
TIMESTAMP_TYPE_JSON = {-1: "NO_TIMESTAMP_TYPE", 0: "CREATE_TIME", 1: "LOG_APPEND_TIME"}

# --- control record types ----------------------------------------------------------------------------------
# By the type id of a control record's key (Kafka's ControlRecordType; UNKNOWN is its name for ids it does not
# know), printed in text (``endTxnMarker: COMMIT``, ``controlType: UNKNOWN(7)``) and JSON (``"type"``).
CONTROL_TYPE_NAMES = {-1: "UNKNOWN", 0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER",
                      4: "SNAPSHOT_FOOTER", 5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}
# What DumpLogSegments prints before a KRaft control record's JSON (``LeaderChange: {...}``), and error
# messages name the record by.
KRAFT_CONTROL_LABELS = {2: "LeaderChange", 3: "SnapshotHeader", 4: "SnapshotFooter", 5: "KRaftVersion",
                        6: "KRaftVoters"}


# --- batch fields ----------------------------------------------------------------------------------------
class BatchField(NamedTuple):
    """One field of a batch as kdump shows it. ``attr`` is the :class:`kdump.format.batch.Batch` attribute it
    shows (``is_valid``: the CRC check); ``text`` its label in DumpLogSegments' magic-2 batch line (None: not
    there; :data:`TIMESTAMP_LABEL`: labelled by the batch's timestamp type name); ``json`` its key in a JSON
    batch object (Kafka's field-level view of a batch); ``column`` its ``kafka-log`` Spark column (None: none)."""

    attr: str
    text: str | None
    json: str
    column: str | None


TIMESTAMP_LABEL = "<timestamp type>"  # DumpLogSegments labels the max timestamp with the type's name

# In the order of a JSON batch object.
BATCH_FIELDS = (
    BatchField("position", "position", "position", "position"),
    BatchField("size", "size", "size", None),
    BatchField("base_offset", "baseOffset", "baseOffset", "baseOffset"),
    BatchField("last_offset", "lastOffset", "lastOffset", None),
    BatchField("magic", "magic", "magic", "magic"),
    BatchField("codec_id", "compresscodec", "codec", "codec"),
    BatchField("crc", "crc", "crc", None),
    BatchField("is_valid", "isvalid", "crcValid", "crcValid"),
    BatchField("timestamp_type", None, "timestampType", "timestampType"),
    BatchField("max_timestamp", TIMESTAMP_LABEL, "maxTimestamp", None),
    BatchField("is_transactional", "isTransactional", "isTransactional", "isTransactional"),
    BatchField("is_control", "isControl", "isControl", "isControl"),
    BatchField("producer_id", "producerId", "producerId", "producerId"),
    BatchField("producer_epoch", "producerEpoch", "producerEpoch", "producerEpoch"),
    BatchField("base_sequence", "baseSequence", "baseSequence", "baseSequence"),
    BatchField("last_sequence", "lastSequence", "lastSequence", None),
    BatchField("partition_leader_epoch", "partitionLeaderEpoch", "partitionLeaderEpoch", "partitionLeaderEpoch"),
    BatchField("delete_horizon_ms", "deleteHorizonMs", "deleteHorizonMs", None),
    BatchField("records_count", "count", "recordCount", None),
)
BATCH_FIELD = {f.attr: f for f in BATCH_FIELDS}

# DumpLogSegments' batch lines, the fields in the order printed: a magic-2 batch, and a legacy entry, whose
# line shows fewer fields and calls its (last) offset ``offset``.
TEXT_V2_LINE = ("base_offset", "last_offset", "records_count", "base_sequence", "last_sequence", "producer_id",
                "producer_epoch", "partition_leader_epoch", "is_transactional", "is_control", "delete_horizon_ms",
                "position", "max_timestamp", "size", "magic", "codec_id", "crc", "is_valid")
TEXT_LEGACY_LINE = ("last_offset", "position", "max_timestamp", "size", "magic", "codec_id", "crc", "is_valid")
TEXT_LEGACY_LABELS = {"last_offset": "offset"}


def compile_projection(name: str, params: str, items: Iterable[tuple[str, str]], *, line: bool,
                       env: Mapping[str, Any]) -> Callable[..., Any]:
    """A function ``name(params)`` returning ``items`` -- (name, value) pairs of Python expressions over
    ``params`` and ``env`` -- as one dict display (``line`` False) or as one f-string of ``name: value`` pairs
    joined by spaces (``line`` True; a name may itself be an expression, written ``{...}``).

    Generated from the tables once, as :mod:`dataclasses` generates ``__init__``: a batch's line or object
    then costs one display or one f-string, as fast as one written out by hand, with its names and field
    order read from this module rather than copied into every output."""
    items = list(items)
    if line:
        body = "f" + repr(" ".join(f"{label}: {{{value}}}" for label, value in items))
    else:
        body = "{" + ", ".join(f"{label!r}: {value}" for label, value in items) + "}"
    namespace: dict[str, Any] = dict(env)
    source = f"def {name}({params}):\n    return {body}\n"
    exec(compile(source, f"<projection {name}>", "exec"), namespace)  # source built from the tables only
    function = namespace[name]
    # the caller's module, as namedtuple does, so that the function pickles by reference (Spark ships it)
    function.__module__ = sys._getframe(1).f_globals.get("__name__", "__main__")
    return function
