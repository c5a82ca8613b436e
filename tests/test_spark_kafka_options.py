"""Spark's Kafka-source options as kafka-log reads them (kdump/spark/kafka_options.py): each honoured with the
meaning Spark's KafkaSourceProvider gives it, or refused naming the option. No Spark needed."""
import pytest

from kdump.spark.kafka_options import (
    KafkaOptionError,
    PartitionExtent,
    batch_read,
    check_names,
    check_write_names,
    ignored_note,
    resolve,
    stream_read,
)


def test_a_typo_is_refused_with_the_option_meant():
    with pytest.raises(KafkaOptionError, match=r"no option 'incldueHeaders' \(did you mean includeHeaders\?\)"):
        check_names({"incldueHeaders": "true"})


def test_option_names_are_case_insensitive_as_in_spark():
    read = batch_read({"SUBSCRIBE": "a", "startingoffsets": '{"a": {"0": 5}}', "EndingOffsets": '{"a": {"0": 9}}'})
    assert read.selection.topics == {"a"}
    assert read.starting.offsets == {("a", 0): 5} and read.ending is not None and read.ending.offsets == {("a", 0): 9}


def test_broker_connection_settings_are_ignored_with_one_note_and_the_isolation_level_is_honoured():
    """Issue 32, item 1: a format("kafka") job's kafka.bootstrap.servers (which Spark's source requires), its other
    consumer settings and the consumer-tuning options run unchanged: one note names them all."""
    read = batch_read({"kafka.bootstrap.servers": "broker:9092", "kafka.security.protocol": "SSL",
                       "groupIdPrefix": "job", "kafkaConsumer.pollTimeoutMs": "512", "subscribe": "a"})
    assert len(read.notes) == 1
    for name in ("kafka.bootstrap.servers", "kafka.security.protocol", "groupIdPrefix", "kafkaConsumer.pollTimeoutMs"):
        assert name in read.notes[0]
    assert batch_read({"subscribe": "a"}).notes == ()
    assert batch_read({"kafka.isolation.level": "read_committed"}).isolation == "read_committed"
    with pytest.raises(KafkaOptionError, match="kafka.isolation.level"):
        batch_read({"kafka.isolation.level": "serializable"})


@pytest.mark.parametrize("name, instead", [
    ("kafka.auto.offset.reset", "set startingOffsets to earliest or latest instead"),
    ("kafka.value.deserializer", "values are binary"),
    ("kafka.enable.auto.commit", "a stream.s offsets are in its checkpoint"),
])
def test_kafka_settings_sparks_source_refuses_are_refused_naming_what_to_use(name, instead):
    with pytest.raises(KafkaOptionError, match=f"option {name} is not supported: {instead}"):
        stream_read({name: "x"})


@pytest.mark.parametrize("value", ["yes", "1", "on"])
def test_include_headers_is_read_as_strictly_as_spark_reads_it(value):
    with pytest.raises(KafkaOptionError, match=f"includeHeaders='{value}': expected true or false"):
        batch_read({"includeHeaders": value})
    assert batch_read({"includeHeaders": "TRUE"}).include_headers


def test_stream_limits_are_checked_and_said_to_be_ignored_in_batch_queries():
    read = stream_read({"minOffsetsPerTrigger": "10", "maxOffsetsPerTrigger": "20", "maxTriggerDelay": "2m"})
    assert (read.min_offsets_per_trigger, read.max_offsets_per_trigger, read.max_trigger_delay_ms) == (10, 20, 120_000)
    assert stream_read({}).max_trigger_delay_ms == 15 * 60_000  # Spark's default, 15m
    with pytest.raises(KafkaOptionError, match=r"minOffsetsPerTrigger \(30\) is higher than maxOffsetsPerTrigger"):
        stream_read({"minOffsetsPerTrigger": "30", "maxOffsetsPerTrigger": "20"})
    with pytest.raises(KafkaOptionError, match="maxTriggerDelay='soon'"):
        stream_read({"maxTriggerDelay": "soon"})
    batch = batch_read({"minOffsetsPerTrigger": "10", "maxTriggerDelay": "5s"})
    assert [n.split()[0] for n in batch.notes] == ["minOffsetsPerTrigger", "maxTriggerDelay"]
    assert all("ignored in batch queries" in n for n in batch.notes)
    assert batch_read({"maxRecordsPerPartition": "500"}).max_records_per_partition == 500
    with pytest.raises(KafkaOptionError, match="maxRecordsPerPartition='0': must be a positive integer"):
        batch_read({"maxRecordsPerPartition": "0"})


@pytest.mark.parametrize("options, fails", [
    ({}, True),  # Spark's default
    ({"failOnDataLoss": "false"}, False),
    ({"mode": "PERMISSIVE"}, False),
    ({"mode": "failfast"}, True),
    ({"mode": "FAILFAST", "failOnDataLoss": "true"}, True),
])
def test_fail_on_data_loss_and_mode_say_the_same(options, fails):
    assert batch_read(options).fail_on_data_loss is fails


def test_mode_and_fail_on_data_loss_that_disagree_are_refused():
    with pytest.raises(KafkaOptionError, match="mode=PERMISSIVE and failOnDataLoss=true disagree"):
        batch_read({"mode": "PERMISSIVE", "failOnDataLoss": "true"})


@pytest.mark.parametrize("option, message", [
    ('{"a": {"0": 5, "7": 1}}', r"names a-7, which is not among the partitions read"),
    ('{"a": {"0": 5}}', r"does not name b-1"),
])
def test_offsets_per_partition_must_name_exactly_the_partitions_read(option, message):
    from kdump.spark.kafka_options import check_named_partitions
    read = batch_read({"startingOffsets": option})
    with pytest.raises(KafkaOptionError, match=message):
        check_named_partitions(read, {("a", 0), ("b", 1)} if "b-1" in message else {("a", 0)})
    check_named_partitions(batch_read({"startingOffsets": '{"a": {"0": 5}}'}), {("a", 0)})


@pytest.mark.parametrize("options, kept, dropped", [
    ({"subscribe": "orders, payments"}, [("orders", 0), ("payments", 3)], [("audit", 0)]),
    ({"subscribePattern": "ord.*"}, [("orders", 1)], [("reorders", 0), ("audit", 0)]),  # the whole name matches
    ({"assign": '{"orders": [0, 2]}'}, [("orders", 0), ("orders", 2)], [("orders", 1), ("payments", 0)]),
    ({}, [("orders", 0), ("anything", 9)], []),
])
def test_topic_selection(options, kept, dropped):
    selection = batch_read(options).selection
    assert all(selection.keeps(t, p) for t, p in kept)
    assert not any(selection.keeps(t, p) for t, p in dropped)


@pytest.mark.parametrize("options, message", [
    ({"subscribe": "a", "assign": '{"a": [0]}'}, "only one of subscribe, subscribePattern and assign"),
    ({"subscribePattern": "("}, "not a regular expression"),
    ({"assign": '["a"]'}, "expected JSON like"),
    ({"assign": '{"a": "0"}'}, "needs a list of partition numbers"),
    ({"startingOffsets": "latest"}, "starting offset can't be latest for batch queries"),
    ({"startingOffsets": '{"a": {"0": -1}}'}, "startingOffsets for a-0 can't be latest for batch queries"),
    ({"endingOffsets": "earliest"}, "ending offset can't be earliest for batch queries"),
    ({"endingOffsets": '{"a": {"0": -2}}'}, "ending offset for a-0 can't be earliest"),
    ({"startingOffsets": '{"a": {"0": 1}}', "endingOffsets": '{"b": {"0": 5}}'}, "must name the same"),
    ({"startingOffsets": '{"a": {"0": 9}}', "endingOffsets": '{"a": {"0": 5}}'}, "starting offset 9 is after"),
    ({"startingOffsets": '{"a": {"x": 1}}'}, "is not a partition number"),
    ({"startingOffsets": '{"a": {"0": -3}}'}, "neither an offset nor -2"),
    ({"startingTimestamp": "yesterday"}, "expected a single long value"),
    ({"minPartitions": "0"}, "must be a positive integer"),
    ({"failOnDataLoss": "maybe"}, "expected true or false"),
    ({"failOnDataLoss": "yes"}, "expected true or false"),
    ({"startingOffsetsByTimestampStrategy": "earliest"}, "expected error or latest"),
])
def test_batch_options_spark_refuses_are_refused(options, message):
    with pytest.raises(KafkaOptionError, match=message):
        batch_read(options)


def test_a_stream_has_no_end():
    for name in ("endingOffsets", "endingTimestamp", "endingOffsetsByTimestamp"):
        with pytest.raises(KafkaOptionError, match=f"{name} is not valid in streaming queries"):
            stream_read({name: "1"})
    assert stream_read({"startingOffsets": '{"a": {"0": 7}}'}).starting.offsets == {("a", 0): 7}


def test_the_timestamp_options_are_preferred_in_sparks_order():
    both = {"startingTimestamp": "1000", "startingOffsetsByTimestamp": '{"a": {"0": 5}}', "startingOffsets": "{}"}
    assert batch_read(both).starting.kind == "timestamp"
    del both["startingTimestamp"]
    assert batch_read(both).starting.kind == "timestamps"


EXTENT = PartitionExtent(log_start=100, log_end=200, latest=180)  # 180: the high watermark
TIMES = {150: 1000, 160: 2000}  # offset -> first record timestamp at or after


def _offset_for_time(ms):
    return next((o for o, t in sorted(TIMES.items()) if t >= ms), None)


def _range(options, *, warnings=None):
    read = batch_read(options)
    return resolve(read, ("a", 0), EXTENT, _offset_for_time, (warnings if warnings is not None else []).append)


@pytest.mark.parametrize("options, start, end", [
    ({}, 100, 180),  # earliest .. latest, latest = the high watermark
    ({"startingOffsets": '{"a": {"0": -2}}', "endingOffsets": '{"a": {"0": -1}}'}, 100, 180),
    ({"startingOffsets": '{"a": {"0": 120}}', "endingOffsets": '{"a": {"0": 130}}'}, 120, 130),
    ({"startingOffsets": '{"b": {"0": 120}}', "endingOffsets": '{"b": {"0": 130}}'}, 100, 180),  # not named
    ({"startingTimestamp": "1500"}, 160, 180),
    ({"startingTimestamp": "500", "endingTimestamp": "1500"}, 150, 160),
    ({"startingOffsetsByTimestamp": '{"a": {"0": 2000}}'}, 160, 180),
    ({"endingTimestamp": "9999"}, 100, 180),  # no record that late: the end is latest
    ({"startingTimestamp": "9999", "startingOffsetsByTimestampStrategy": "latest"}, 180, 180),
])
def test_bounds_resolve_as_spark_would(options, start, end):
    r = _range(options)
    assert (r.start, r.end) == (start, end)


def test_a_start_no_record_reaches_fails_by_default():
    with pytest.raises(KafkaOptionError, match="no record has a timestamp at or after 9999"):
        _range({"startingTimestamp": "9999"})


def test_data_loss_fails_or_warns_as_failondataloss_says():
    with pytest.raises(KafkaOptionError, match="before the first offset on disk, 100.*failOnDataLoss=false"):
        _range({"startingOffsets": '{"a": {"0": 40}}', "endingOffsets": '{"a": {"0": 150}}'})
    warnings: list[str] = []
    r = _range({"startingOffsets": '{"a": {"0": 40}}', "endingOffsets": '{"a": {"0": 150}}',
                "failOnDataLoss": "false"}, warnings=warnings)
    assert (r.start, r.end) == (100, 150)
    assert warnings and "offsets 40..99 are lost" in warnings[0]


def test_a_write_refuses_a_typo_and_ignores_kafka_producer_settings():
    with pytest.raises(KafkaOptionError, match=r"no write option 'codc' \(did you mean codec\?\)"):
        check_write_names({"codc": "zstd"})
    with pytest.raises(KafkaOptionError, match=r"did you mean numPartitions\?"):
        check_write_names({"numpartition": "4"})  # Spark hands the names lower-cased
    ignored = check_write_names({"topic": "t", "kafka.bootstrap.servers": "b:9092", "kafka.acks": "all"})
    assert ignored == ["kafka.acks", "kafka.bootstrap.servers"]
    note = ignored_note(ignored)
    assert note is not None and "ignoring kafka.acks, kafka.bootstrap.servers" in note
    assert ignored_note([]) is None
