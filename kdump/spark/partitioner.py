"""Where Kafka's producer puts a record that names no partition, for the ``kafka-log`` writer.

* A record with a key: ``toPositive(murmur2(key)) % partitions`` -- Kafka's ``BuiltInPartitioner.partitionForKey``
  (the default partitioner since Kafka 0.8.2; ``toPositive`` clears the sign bit, it is not ``abs``). So a keyed
  record written by kdump lands in the partition a Kafka producer would have sent it to, and a consumer that
  relies on "one key, one partition" finds it there.
* A record without a key: Kafka's producer (2.4+, KIP-480 and KIP-794) sticks to one partition until about
  ``batch.size`` (16 KiB) of records went to it, then switches to another chosen at random, so null-keyed records
  spread evenly over the partitions in runs. kdump does the same with a random generator seeded by the Spark task's
  partition id: the spread is Kafka's, and a task that runs again puts every record where its first attempt did
  (a broker's placement is not reproducible; a rerun of a Spark task should be).
"""
from __future__ import annotations

import random

STICKY_BATCH_BYTES = 16384  # Kafka producer's batch.size default: the bytes after which a sticky partition changes


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (32-bit MurmurHash2, seed 0x9747b28c) of ``data``, as a signed 32-bit int."""
    m = 0x5BD1E995
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    whole = length & ~3
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i:i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    rest = length & 3
    if rest:
        # the tail bytes as Java reads them: sign-extended, then masked to 8 bits (the same value)
        if rest == 3:
            h ^= data[whole + 2] << 16
        if rest >= 2:
            h ^= data[whole + 1] << 8
        h ^= data[whole]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_for_key(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner gives a record with ``key``."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


class StickyPartitions:
    """Null-keyed records' partitions, per topic, as Kafka's sticky partitioner spreads them (module docstring)."""

    def __init__(self, seed: int):
        self._random = random.Random(seed)
        self._current: dict[str, list[int]] = {}  # topic -> [partition, bytes sent to it]

    def partition(self, topic: str, partitions: int, size: int) -> int:
        cur = self._current.get(topic)
        if cur is None or cur[1] >= STICKY_BATCH_BYTES:
            cur = self._current[topic] = [self._random.randrange(partitions), 0]
        cur[1] += size
        return cur[0]
