"""Spark's Kafka-source options, read with Spark's meaning, for a source that reads files instead of brokers.

A job written for ``format("kafka")`` should run unchanged on ``format("kafka-log")`` or fail naming the option
it cannot honour; an option kdump does not know is refused (a typo such as ``incldueHeaders`` would otherwise
read everything without a word). The rules follow Spark's ``KafkaSourceProvider`` (Spark 4.x):

* topic selection, at most one of ``subscribe`` (comma-separated topics), ``subscribePattern`` (a regular
  expression that must match the whole topic name, as Java's ``Pattern.matches``) and ``assign`` (JSON
  ``{"topicA": [0, 1]}``); kdump reads every partition found when none is given (Spark requires one);
* offset bounds, in Spark's order of preference: ``startingTimestamp`` (one time for every partition),
  ``startingOffsetsByTimestamp`` (JSON per partition), ``startingOffsets`` (``earliest``, ``latest`` or JSON
  per partition with ``-2`` = earliest and ``-1`` = latest); the same three for the end, ending offsets
  exclusive. A batch query cannot start at latest nor end at earliest; a streaming query takes no end.
  A timestamp stands for the first offset whose record timestamp is at or after it (Kafka's
  ``offsetsForTimes``); when no record is that late, ``startingOffsetsByTimestampStrategy`` says what to do
  (``error``, Spark's default, or ``latest``); an ending timestamp with no later record means the end.
* ``failOnDataLoss`` (default true): a starting offset below the first offset on disk (retention removed it)
  fails the query; false reads from the first offset there and says so in a warning.
* ``minPartitions``: a lower bound on the number of tasks (large segments are cut to reach it);
  ``maxOffsetsPerTrigger`` / ``minOffsetsPerTrigger`` / ``maxTriggerDelay`` are for streaming (Spark logs and
  ignores them in batch queries; kdump does the same).
* ``kafka.isolation.level`` is ``isolationLevel``; every other ``kafka.*`` consumer setting configures a
  connection to brokers that a file reader does not make, and is refused with the message to drop it.
"""
from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NoReturn

EARLIEST = -2  # Spark's KafkaOffsetRangeLimit.EARLIEST in offset JSON
LATEST = -1  # KafkaOffsetRangeLimit.LATEST

TopicPartition = tuple[str, int]


class KafkaOptionError(ValueError):
    """An option that is malformed, contradicts another, or cannot be honoured by a file reader."""


# --- which options exist ------------------------------------------------------------------------------------
# Every option a kafka-log read takes, as docs/spark.md spells it (Spark hands options with case-insensitive keys,
# so they are compared lower-cased). The Kafka source's own names first, then kdump's; ``fs.*`` (remote file
# systems) is checked by prefix.
KAFKA_READ_OPTIONS = (
    "subscribe", "subscribePattern", "assign", "startingOffsets", "endingOffsets", "startingTimestamp",
    "endingTimestamp", "startingOffsetsByTimestamp", "endingOffsetsByTimestamp",
    "startingOffsetsByTimestampStrategy", "failOnDataLoss", "minPartitions", "includeHeaders",
    "maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay", "maxRecordsPerPartition",
)
KDUMP_READ_OPTIONS = (
    "path", "paths", "includeMetadata", "includeControl", "mode", "checkCrcs", "isolationLevel",
    "maxPartitionBytes", "openCostInBytes", "parallelism", "maxRecordsPerArrowBatch", "maxBytesPerArrowBatch",
    "backend", "maxRecordsPerTrigger", "stopAtHighWatermark", "keyDecoder", "valueDecoder", "schemas", "report",
)
_KNOWN = {name.lower(): name for name in KAFKA_READ_OPTIONS + KDUMP_READ_OPTIONS}  # lower case -> spelling
KAFKA_ISOLATION = "kafka.isolation.level"
_CONNECTION_HINT = ("kafka-log reads segment files, not brokers: drop {name} (it configures a Kafka consumer "
                    "connection); kafka.isolation.level is the only kafka.* setting it honours")


def check_names(options: Mapping[str, str]) -> None:
    """Refuse an option no kafka-log read knows."""
    for name in options:
        low = name.lower()
        if low == KAFKA_ISOLATION or low.startswith("fs.") or low in _KNOWN:
            continue
        if low.startswith("kafka."):
            raise KafkaOptionError(_CONNECTION_HINT.format(name=name))
        _refuse_unknown(name, _KNOWN)


def _refuse_unknown(name: str, known: Mapping[str, str], what: str = "") -> NoReturn:
    """The one refusal of an unknown option (read or write), naming the closest known one: a typo."""
    close = difflib.get_close_matches(name.lower(), list(known), n=1, cutoff=0.75)
    hint = f" (did you mean {known[close[0]]}?)" if close else ""
    raise KafkaOptionError(f"kafka-log has no {what}option {name!r}{hint}; the options are listed in docs/spark.md")


# Every option a kafka-log write takes: Spark's Kafka sink has ``topic`` (and ``kafka.*``, the producer's
# settings); the rest are kdump's (docs/spark.md, "Writing"). ``checkpointLocation`` reaches a stream's sink
# among its options when the query is given it so.
KAFKA_WRITE_OPTIONS = ("topic",)
KDUMP_WRITE_OPTIONS = ("path", "codec", "segmentBytes", "batchRecords", "batchBytes", "partition",
                       "numPartitions", "checkpointLocation")
_KNOWN_WRITE = {name.lower(): name for name in KAFKA_WRITE_OPTIONS + KDUMP_WRITE_OPTIONS}


def check_write_names(options: Mapping[str, str]) -> list[str]:
    """Refuse an option no kafka-log write knows (a misspelt ``codc`` would otherwise write uncompressed); the
    ``kafka.*`` names given, which configure a producer's connection to brokers and are ignored: a job written for
    ``format("kafka")`` must run with only the format and path changed (:func:`ignored_note` says so once)."""
    ignored = []
    for name in options:
        low = name.lower()
        if low.startswith("kafka."):
            ignored.append(name)
        elif low not in _KNOWN_WRITE:
            _refuse_unknown(name, _KNOWN_WRITE, "write ")
    return sorted(ignored)


def ignored_note(names: list[str]) -> str | None:
    """The one note for the ``kafka.*`` settings a file writer ignores (None when none was given)."""
    if not names:
        return None
    return (f"kafka-log writes segment files, not to brokers: ignoring {', '.join(names)} "
            "(Kafka client settings)")


def _get(options: Mapping[str, str], name: str) -> str | None:
    low = name.lower()
    for k, v in options.items():
        if k.lower() == low:
            return None if v is None else str(v).strip()
    return None


# --- topic selection ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TopicSelection:
    """Which topic-partitions a read takes: ``topics`` (subscribe), ``pattern`` (subscribePattern) or
    ``assigned`` (assign); all three None: every partition found."""

    topics: frozenset[str] | None = None
    pattern: str | None = None
    assigned: frozenset[TopicPartition] | None = None

    def keeps(self, topic: str | None, partition: int | None) -> bool:
        if self.topics is not None:
            return topic in self.topics
        if self.pattern is not None:
            return topic is not None and re.fullmatch(self.pattern, topic) is not None
        if self.assigned is not None:
            return (topic, partition) in self.assigned
        return True


def topic_selection(options: Mapping[str, str]) -> TopicSelection:
    given: dict[str, str] = {}
    for name in ("subscribe", "subscribePattern", "assign"):
        if (value := _get(options, name)) is not None:
            given[name] = value
    if len(given) > 1:
        raise KafkaOptionError(f"give only one of subscribe, subscribePattern and assign (got {', '.join(given)})")
    if "subscribe" in given:
        topics = frozenset(t.strip() for t in given["subscribe"].split(",") if t.strip())
        if not topics:
            raise KafkaOptionError("option subscribe: expected a comma-separated list of topics, got nothing")
        return TopicSelection(topics=topics)
    if "subscribePattern" in given:
        pattern = given["subscribePattern"]
        if not pattern:
            raise KafkaOptionError("option subscribePattern: expected a regular expression, got nothing")
        try:
            re.compile(pattern)
        except re.error as e:
            raise KafkaOptionError(f"option subscribePattern={pattern!r}: not a regular expression ({e})") from None
        return TopicSelection(pattern=pattern)
    if "assign" in given:
        parsed = _json_object("assign", given["assign"], '{"topicA": [0, 1], "topicB": [2, 4]}')
        assigned: set[TopicPartition] = set()
        for topic, parts in parsed.items():
            if not isinstance(parts, list) or not all(isinstance(p, int) and not isinstance(p, bool)
                                                      for p in parts):
                raise KafkaOptionError(f"option assign: topic {topic!r} needs a list of partition numbers")
            assigned.update((topic, p) for p in parts)
        return TopicSelection(assigned=frozenset(assigned))
    return TopicSelection()


# --- offset bounds --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class OffsetLimit:
    """One end of a read, as Spark's ``KafkaOffsetRangeLimit``: ``earliest``, ``latest``, ``offsets``
    (per partition, -2/-1 allowed), ``timestamps`` (per partition, ms) or ``timestamp`` (one time, ms)."""

    kind: str
    offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    timestamp: int | None = None
    latest_when_no_match: bool = False  # startingOffsetsByTimestampStrategy=latest

    def partitions(self) -> frozenset[TopicPartition] | None:
        return frozenset(self.offsets) if self.kind in ("offsets", "timestamps") else None


def _json_object(name: str, text: str, example: str) -> dict:
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise KafkaOptionError(f"option {name}={text!r}: expected JSON like {example}")
    return parsed


def _per_partition(name: str, text: str) -> dict[TopicPartition, int]:
    example = '{"topicA": {"0": 23, "1": -2}}'
    out = {}
    for topic, parts in _json_object(name, text, example).items():
        if not isinstance(parts, dict):
            raise KafkaOptionError(f"option {name}={text!r}: expected JSON like {example}")
        for partition, value in parts.items():
            try:
                p = int(partition)
            except ValueError:
                raise KafkaOptionError(f"option {name}: {partition!r} of topic {topic!r} is not a partition "
                                       "number") from None
            if not isinstance(value, int) or isinstance(value, bool):
                raise KafkaOptionError(f"option {name}: {topic}-{p} needs a whole number, got {value!r}")
            out[(topic, p)] = value
    return out


def _long(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise KafkaOptionError(f"option {name}={text!r}: expected a single long value (epoch milliseconds)") \
            from None


def offset_limit(options: Mapping[str, str], which: str, default: str) -> OffsetLimit:
    """The ``starting`` or ``ending`` bound, in Spark's order of preference."""
    strategy = (_get(options, "startingOffsetsByTimestampStrategy") or "error").lower()
    if strategy not in ("error", "latest"):
        raise KafkaOptionError(f"option startingOffsetsByTimestampStrategy={strategy!r}: expected error or latest")
    latest = strategy == "latest"
    if (ts := _get(options, f"{which}Timestamp")) is not None:
        return OffsetLimit("timestamp", timestamp=_long(f"{which}Timestamp", ts), latest_when_no_match=latest)
    if (text := _get(options, f"{which}OffsetsByTimestamp")) is not None:
        return OffsetLimit("timestamps", _per_partition(f"{which}OffsetsByTimestamp", text),
                           latest_when_no_match=latest)
    text = _get(options, f"{which}Offsets")
    if text is None or text.lower() == default:
        return OffsetLimit(default)
    if text.lower() in ("earliest", "latest"):
        return OffsetLimit(text.lower())
    offsets = _per_partition(f"{which}Offsets", text)
    for tp, off in offsets.items():
        if off < EARLIEST:
            raise KafkaOptionError(f"option {which}Offsets: {tp[0]}-{tp[1]}: {off} is neither an offset nor -2 "
                                   "(earliest) or -1 (latest)")
    return OffsetLimit("offsets", offsets)


@dataclass(frozen=True)
class KafkaRead:
    """What a Kafka-source job asks of a read, validated: topic selection, bounds, failOnDataLoss, minPartitions,
    the isolation level ``kafka.isolation.level`` gives (None when not given)."""

    selection: TopicSelection
    starting: OffsetLimit
    ending: OffsetLimit | None  # None: streaming (no end)
    fail_on_data_loss: bool
    min_partitions: int | None
    isolation: str | None


def _flag(options, name: str, default: bool) -> bool:
    """A Kafka-source flag as Spark reads it (Scala's ``toBoolean``: "true" or "false" only, where kdump's own
    flags, :func:`kdump.spark.options.flag`, take 1/0 and yes/no too)."""
    text = _get(options, name)
    if text is None:
        return default
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise KafkaOptionError(f"option {name}={text!r}: expected true or false")


def _common(options) -> tuple[TopicSelection, bool, int | None, str | None]:
    min_partitions = _get(options, "minPartitions")
    n = None
    if min_partitions is not None:
        try:
            n = int(min_partitions)
        except ValueError:
            n = 0
        if n <= 0:
            raise KafkaOptionError(f"option minPartitions={min_partitions!r}: must be a positive integer")
    isolation = _get(options, KAFKA_ISOLATION)
    if isolation is not None and isolation not in ("read_committed", "read_uncommitted"):
        raise KafkaOptionError(f"option kafka.isolation.level={isolation!r}: expected read_committed or "
                               "read_uncommitted")
    return topic_selection(options), _flag(options, "failOnDataLoss", True), n, isolation


def batch_read(options: Mapping[str, str]) -> KafkaRead:
    """A batch query's options, checked as Spark's ``validateBatchOptions`` checks them."""
    check_names(options)
    selection, fail, min_partitions, isolation = _common(options)
    starting = offset_limit(options, "starting", "earliest")
    ending = offset_limit(options, "ending", "latest")
    if starting.kind == "latest":
        raise KafkaOptionError("starting offset can't be latest for batch queries on Kafka (startingOffsets)")
    for tp, off in starting.offsets.items():
        if starting.kind == "offsets" and off == LATEST:
            raise KafkaOptionError(f"startingOffsets for {tp[0]}-{tp[1]} can't be latest for batch queries")
    if ending.kind == "earliest":
        raise KafkaOptionError("ending offset can't be earliest for batch queries on Kafka (endingOffsets)")
    for tp, off in ending.offsets.items():
        if ending.kind == "offsets" and off == EARLIEST:
            raise KafkaOptionError(f"ending offset for {tp[0]}-{tp[1]} can't be earliest for batch queries")
    _check_same_partitions(starting, ending)
    return KafkaRead(selection, starting, ending, fail, min_partitions, isolation)


def stream_read(options: Mapping[str, str]) -> KafkaRead:
    """A streaming query's options, checked as Spark's ``validateStreamOptions``: no end, default start latest
    in Spark -- kafka-log keeps ``earliest`` as its default start (a log directory is read from its start)."""
    check_names(options)
    for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
        if _get(options, name) is not None:
            raise KafkaOptionError(f"{name} is not valid in streaming queries (a stream has no end)")
    selection, fail, min_partitions, isolation = _common(options)
    return KafkaRead(selection, offset_limit(options, "starting", "earliest"), None, fail, min_partitions, isolation)


def _check_same_partitions(starting: OffsetLimit, ending: OffsetLimit) -> None:
    a, b = starting.partitions(), ending.partitions()
    if a is not None and b is not None and starting.kind == ending.kind and a != b:
        raise KafkaOptionError("startingOffsets and endingOffsets must name the same topic-partitions "
                               f"({_names(a ^ b)} only in one of them)")
    if starting.kind == ending.kind == "offsets":
        for tp, start in starting.offsets.items():
            end = ending.offsets[tp]
            if start >= 0 and end >= 0 and start > end:
                raise KafkaOptionError(f"{tp[0]}-{tp[1]}: starting offset {start} is after ending offset {end}")


def _names(tps) -> str:
    return ", ".join(f"{t}-{p}" for t, p in sorted(tps))


# --- resolution against what is on disk -----------------------------------------------------------------------
@dataclass(frozen=True)
class PartitionExtent:
    """What a partition holds: its first offset on disk (``log_start``), the offset after its last record
    (``log_end``) and the offset a consumer would stop at (``latest``: the high watermark where the log
    directory names one, else ``log_end``)."""

    log_start: int
    log_end: int
    latest: int


@dataclass(frozen=True)
class OffsetRange:
    """The offsets of one partition a read takes: ``start`` <= offset < ``end``."""

    start: int
    end: int


def resolve(read: KafkaRead, tp: TopicPartition, extent: PartitionExtent,
            offset_for_time: Callable[[int], int | None], warn: Callable[[str], None]) -> OffsetRange:
    """The range of ``tp`` a read takes. ``offset_for_time(ms)`` is the first offset whose record timestamp is
    at or after ``ms`` (None when no record is that late)."""
    name = f"{tp[0]}-{tp[1]}"
    start = _resolve_end(read.starting, tp, extent, offset_for_time, is_start=True)
    end = extent.latest if read.ending is None else _resolve_end(read.ending, tp, extent, offset_for_time,
                                                                  is_start=False)
    if start < extent.log_start:
        message = (f"{name}: starting offset {start} is before the first offset on disk, {extent.log_start} "
                   "(removed by retention, or never here)")
        if read.fail_on_data_loss:
            raise KafkaOptionError(message + "; set failOnDataLoss=false to read from the first offset there")
        warn(message + f"; reading from {extent.log_start} (failOnDataLoss=false): offsets {start}.."
             f"{extent.log_start - 1} are lost")
        start = extent.log_start
    if end < start:
        raise KafkaOptionError(f"{name}: the ending offset {end} is before the starting offset {start}")
    return OffsetRange(start, end)


def _resolve_end(limit: OffsetLimit, tp: TopicPartition, extent: PartitionExtent,
                 offset_for_time: Callable[[int], int | None], *, is_start: bool) -> int:
    if limit.kind == "earliest":
        return extent.log_start
    if limit.kind == "latest":
        return extent.latest
    if limit.kind == "offsets":
        if tp not in limit.offsets:  # Spark asks every assigned partition to be named; not named = the default
            return extent.log_start if is_start else extent.latest
        off = limit.offsets[tp]
        return extent.log_start if off == EARLIEST else extent.latest if off == LATEST else off
    ms = limit.timestamp if limit.kind == "timestamp" else limit.offsets.get(tp)
    if ms is None:
        return extent.log_start if is_start else extent.latest
    found = offset_for_time(ms)
    if found is not None:
        return min(found, extent.latest)
    if not is_start or limit.latest_when_no_match:
        return extent.latest
    raise KafkaOptionError(f"{tp[0]}-{tp[1]}: no record has a timestamp at or after {ms} (startingTimestamp); "
                           "set startingOffsetsByTimestampStrategy=latest to start at the latest offset instead")
