"""Kafka's default partitioner as the kafka-log writer applies it (kdump/spark/partitioner.py), against
kafka-python's implementation of Kafka's murmur2 (an independent oracle). No Spark needed."""
from hypothesis import given
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from kdump.spark.partitioner import STICKY_BATCH_BYTES, StickyPartitions, murmur2, partition_for_key


@given(st.binary(max_size=64))
def test_murmur2_is_kafkas(data):
    assert murmur2(data) & 0xFFFFFFFF == kafka_python_murmur2(bytearray(data))
    assert -(1 << 31) <= murmur2(data) < (1 << 31)  # Java's int


@given(st.binary(max_size=32), st.integers(1, 1000))
def test_a_key_goes_where_kafkas_default_partitioner_sends_it(key, partitions):
    assert partition_for_key(key, partitions) == (kafka_python_murmur2(bytearray(key)) & 0x7FFFFFFF) % partitions


def test_null_keys_stick_to_a_partition_for_a_batch_then_move():
    sticky = StickyPartitions(seed=7)
    placed = [sticky.partition("t", 8, 1024) for _ in range(16 * 40)]
    runs = [placed[i:i + STICKY_BATCH_BYTES // 1024] for i in range(0, len(placed), STICKY_BATCH_BYTES // 1024)]
    assert all(len(set(run)) == 1 for run in runs)
    assert len({run[0] for run in runs}) > 4  # spread over the partitions
    again = StickyPartitions(seed=7)
    assert [again.partition("t", 8, 1024) for _ in range(16 * 40)] == placed
