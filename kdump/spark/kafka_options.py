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
* ``failOnDataLoss`` (default true): data loss fails the query, as in Spark's Kafka source: a starting offset
  below the first offset on disk (retention removed it), a segment deleted before a stream read it, and damage
  (a batch whose CRC does not match, bytes that hold no batch); false reads past it, says so in a warning and
  counts it. kdump's older ``mode`` option says the same (``FAILFAST`` = true, ``PERMISSIVE`` = false); given
  both, they must agree.
* ``minPartitions``: a lower bound on the number of tasks (large segments are cut at batch boundaries to reach
  it); ``maxRecordsPerPartition``: a batch read's offset ranges cut so that no task reads more offsets than
  that (with ``minPartitions`` too, those ranges are cut again toward it as Spark's offset-range calculator cuts
  them: :func:`kdump.spark.plan.plan_by_offsets`); ``maxOffsetsPerTrigger`` / ``minOffsetsPerTrigger`` /
  ``maxTriggerDelay`` are for streaming (Spark logs and ignores them in batch queries; kdump does the same).
* ``includeHeaders`` and ``failOnDataLoss`` are read as Scala's ``toBoolean`` reads them: ``true`` or ``false``.
* ``kafka.isolation.level`` is ``isolationLevel``; ``kafka.auto.offset.reset``, ``kafka.key.deserializer``,
  ``kafka.value.deserializer``, ``kafka.enable.auto.commit`` and ``kafka.interceptor.classes`` are refused as
  Spark refuses them; every other ``kafka.*`` setting (``kafka.bootstrap.servers``, which Spark requires,
  security settings, ``kafka.group.id``) and the consumer-tuning options ``groupIdPrefix``,
  ``fetchOffset.numRetries``, ``fetchOffset.retryIntervalMs`` and ``kafkaConsumer.pollTimeoutMs`` configure a
  connection to brokers that a file reader does not make: they are accepted and ignored, with one warning
  naming them (:func:`ignored_note`).
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
# The Kafka source's options that tune its consumer's talk with brokers: nothing to tune in a file reader.
KAFKA_CONNECTION_OPTIONS = (
    "groupIdPrefix", "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "kafkaConsumer.pollTimeoutMs",
)
KDUMP_READ_OPTIONS = (
    "path", "paths", "includeMetadata", "includeControl", "mode", "checkCrcs", "isolationLevel",
    "maxPartitionBytes", "openCostInBytes", "parallelism", "maxRecordsPerArrowBatch", "maxBytesPerArrowBatch",
    "backend", "maxRecordsPerTrigger", "stopAtHighWatermark", "keyDecoder", "valueDecoder", "schemas", "report",
)
_KNOWN = {name.lower(): name for name in KAFKA_READ_OPTIONS + KDUMP_READ_OPTIONS}  # lower case -> spelling
_CONNECTION = {name.lower(): name for name in KAFKA_CONNECTION_OPTIONS}
KAFKA_ISOLATION = "kafka.isolation.level"
# kafka.* settings Spark's Kafka source refuses itself (KafkaSourceProvider.validateGeneralOptions), with what to
# use instead: a job that names one does not run on Spark's source either.
_REFUSED_BY_SPARK = {
    "kafka.auto.offset.reset": "set startingOffsets to earliest or latest instead (Spark's Kafka source refuses it "
                               "too)",
    "kafka.key.deserializer": "keys are binary; decode them with DataFrame functions or keyDecoder (Spark's Kafka "
                              "source refuses it too)",
    "kafka.value.deserializer": "values are binary; decode them with DataFrame functions or valueDecoder (Spark's "
                                "Kafka source refuses it too)",
    "kafka.enable.auto.commit": "a stream's offsets are in its checkpoint (Spark's Kafka source refuses it too)",
    "kafka.interceptor.classes": "interceptors can change records (Spark's Kafka source refuses it too)",
}


def check_names(options: Mapping[str, str]) -> list[str]:
    """Refuse an option no kafka-log read knows; return the broker-connection options given (``kafka.*`` but
    ``kafka.isolation.level``, and :data:`KAFKA_CONNECTION_OPTIONS` in Spark's spelling), accepted and ignored
    (:func:`ignored_note` says so once)."""
    ignored = []
    for name in options:
        low = name.lower()
        if low == KAFKA_ISOLATION or low.startswith("fs.") or low in _KNOWN:
            continue
        if low in _REFUSED_BY_SPARK:
            raise KafkaOptionError(f"option {name} is not supported: {_REFUSED_BY_SPARK[low]}")
        if low.startswith("kafka.") or low in _CONNECTION:
            ignored.append(_CONNECTION.get(low, name))  # (Kafka's own settings are spelt in lower case)
            continue
        _refuse_unknown(name, _KNOWN)
    return sorted(ignored, key=str.lower)


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


def ignored_note(names: list[str], side: str = "writes segment files, not to brokers") -> str | None:
    """The one note for the broker-connection settings a read or a write was given and ignores (None when none
    was)."""
    if not names:
        return None
    return f"kafka-log {side}: ignoring {', '.join(names)} (Kafka client settings)"


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
    """What a Kafka-source job asks of a read, validated: topic selection, bounds, failOnDataLoss (with kdump's
    ``mode``), minPartitions, the isolation level ``kafka.isolation.level`` gives (None when not given), the
    streaming limits, and ``notes``: the warnings a read logs once (options accepted and ignored)."""

    selection: TopicSelection
    starting: OffsetLimit
    ending: OffsetLimit | None  # None: streaming (no end)
    fail_on_data_loss: bool
    min_partitions: int | None
    isolation: str | None
    max_records_per_partition: int | None = None
    max_offsets_per_trigger: int | None = None
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60 * 1000  # Spark's default, 15m
    include_headers: bool = False
    notes: tuple[str, ...] = ()


def _flag(options, name: str, default: bool) -> bool:
    """A Kafka-source flag as Spark reads it (Scala's ``toBoolean``: "true" or "false" only, where kdump's own
    flags, :func:`kdump.spark.options.flag`, take 1/0 and yes/no too)."""
    text = _get(options, name)
    if text is None:
        return default
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise KafkaOptionError(f"option {name}={text!r}: expected true or false (Spark reads it as a Scala Boolean)")


def include_headers(options) -> bool:
    """``includeHeaders``, as strictly as Spark's Kafka source reads it."""
    return _flag(options, "includeHeaders", False)


def fail_on_data_loss(options) -> bool:
    """Whether data loss fails the read: ``failOnDataLoss`` (default true, Spark's), or kdump's ``mode``
    (``FAILFAST`` = true, ``PERMISSIVE`` = false); both given must agree."""
    fail = _flag(options, "failOnDataLoss", True)
    mode = _get(options, "mode")
    if mode is None:
        return fail
    if mode.upper() not in ("PERMISSIVE", "FAILFAST"):
        raise KafkaOptionError(f"option mode={mode!r}: expected PERMISSIVE or FAILFAST (or use failOnDataLoss, "
                               "Spark's name: true fails on data loss, false reads past it)")
    by_mode = mode.upper() == "FAILFAST"
    if _get(options, "failOnDataLoss") is not None and fail != by_mode:
        raise KafkaOptionError(f"mode={mode} and failOnDataLoss={str(fail).lower()} disagree (PERMISSIVE is "
                               "failOnDataLoss=false, FAILFAST is failOnDataLoss=true): give one of them")
    return by_mode


def _positive(options, name: str) -> int | None:
    text = _get(options, name)
    if text is None:
        return None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n <= 0:
        raise KafkaOptionError(f"option {name}={text!r}: must be a positive integer")
    return n


_TIME_UNITS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}


def time_ms(name: str, text: str) -> int:
    """A duration as Spark's ``Utils.timeStringAsMs`` reads it: a number and a unit (us, ms, s, m/min, h, d;
    none: milliseconds)."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-z]*)\s*", text.lower())
    if m is None or m.group(2) not in ("", *_TIME_UNITS):
        raise KafkaOptionError(f"option {name}={text!r}: expected a duration such as 30s, 5m or 1h")
    return int(int(m.group(1)) * _TIME_UNITS.get(m.group(2), 1))


def _common(options, streaming: bool) -> dict:
    ignored = check_names(options)
    note = ignored_note(ignored, "reads Kafka's segment files, not brokers")
    notes = [note] if note else []
    isolation = _get(options, KAFKA_ISOLATION)
    if isolation is not None and isolation not in ("read_committed", "read_uncommitted"):
        raise KafkaOptionError(f"option kafka.isolation.level={isolation!r}: expected read_committed or "
                               "read_uncommitted")
    max_trigger = _positive(options, "maxOffsetsPerTrigger")
    min_trigger = _positive(options, "minOffsetsPerTrigger")
    if max_trigger is not None and min_trigger is not None and min_trigger > max_trigger:
        raise KafkaOptionError(f"minOffsetsPerTrigger ({min_trigger}) is higher than maxOffsetsPerTrigger "
                               f"({max_trigger})")
    delay = _get(options, "maxTriggerDelay")
    delay_ms = time_ms("maxTriggerDelay", delay) if delay is not None else 15 * 60 * 1000
    if not streaming:  # as Spark: said, not refused
        notes += [f"{name} is ignored in batch queries (it limits a stream's micro-batches)"
                  for name in ("maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay")
                  if _get(options, name) is not None]
    return {"selection": topic_selection(options), "fail_on_data_loss": fail_on_data_loss(options),
            "min_partitions": _positive(options, "minPartitions"), "isolation": isolation,
            "max_records_per_partition": _positive(options, "maxRecordsPerPartition"),
            "max_offsets_per_trigger": max_trigger, "min_offsets_per_trigger": min_trigger,
            "max_trigger_delay_ms": delay_ms, "include_headers": include_headers(options), "notes": tuple(notes)}


def batch_read(options: Mapping[str, str]) -> KafkaRead:
    """A batch query's options, checked as Spark's ``validateBatchOptions`` checks them."""
    common = _common(options, streaming=False)
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
    return KafkaRead(starting=starting, ending=ending, **common)


def stream_read(options: Mapping[str, str]) -> KafkaRead:
    """A streaming query's options, checked as Spark's ``validateStreamOptions``: no end, default start latest
    in Spark -- kafka-log keeps ``earliest`` as its default start (a log directory is read from its start)."""
    for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
        if _get(options, name) is not None:
            raise KafkaOptionError(f"{name} is not valid in streaming queries (a stream has no end)")
    common = _common(options, streaming=True)
    return KafkaRead(starting=offset_limit(options, "starting", "earliest"), ending=None, **common)


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


def check_named_partitions(read: KafkaRead, found) -> None:
    """Offsets or times given per partition must name exactly the partitions read (``found``: the topic-partitions
    the selection keeps on disk), as Spark's Kafka source asserts: a partition named that is not there, or one read
    that is not named, fails the query."""
    found = frozenset(found)
    for limit, which in ((read.starting, "starting"), (read.ending, "ending")):
        named = limit.partitions() if limit is not None else None
        if limit is None or named is None or named == found:
            continue
        option = f"{which}Offsets" if limit.kind == "offsets" else f"{which}OffsetsByTimestamp"
        missing, extra = found - named, named - found
        parts = []
        if extra:
            parts.append(f"names {_names(extra)}, which {'is' if len(extra) == 1 else 'are'} not among the "
                         "partitions read")
        if missing:
            parts.append(f"does not name {_names(missing)}")
        hint = ", -2 for earliest and -1 for latest" if limit.kind == "offsets" else ""
        raise KafkaOptionError(f"option {option} {' and '.join(parts)}: name every partition read{hint} (as Spark's "
                               "Kafka source asks)")


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
