"""Spark accumulators that count the damage a PERMISSIVE read of ``kafka-log`` skips, read on the driver.

A PERMISSIVE read skips damaged regions and logs each on the executor's stderr; ``option("report", "damage")``
lists them as rows. These counters put the totals where a driver program looks after an action, as Spark's own
accumulators do::

    counter = kdump.spark.register(spark)        # classic sessions; None under Spark Connect
    df = spark.read.format("kafka-log").load(path)
    df.count()
    counter.value                                 # DamageCounts(regions=2, bytes=196)

Python data sources get no task metrics of their own (pyspark 4.3's ``DataSourceReader`` has no metrics hook),
but a Python accumulator created on the driver and carried inside the registered source class reaches every
task that reads, and Spark adds each successful task's updates on the driver (tested in
tests/test_spark_damage_counter.py). Spark Connect clients have no accumulators: there, the damage report is the
count. As with every Spark accumulator, a task that is run again (a retried stage, speculation) may count its
regions again; the damage report is exact.
"""
from __future__ import annotations

import weakref
from typing import NamedTuple

from pyspark.accumulators import AccumulatorParam


class DamageCounts(NamedTuple):
    """Damaged regions skipped, and their bytes (regions whose end is unknown count no bytes)."""

    regions: int = 0
    bytes: int = 0


class _DamageCountsParam(AccumulatorParam):
    def zero(self, value):
        return DamageCounts()

    def addInPlace(self, value1, value2):
        return DamageCounts(value1[0] + value2[0], value1[1] + value2[1])


class DamageCounter:
    """The driver's view of one session's counters: :attr:`value` is the total so far (every action that read
    ``kafka-log`` since registration, or since :meth:`reset`)."""

    def __init__(self, accumulator):
        self.accumulator = accumulator
        self._base = DamageCounts()

    @property
    def value(self) -> DamageCounts:
        now = self.accumulator.value
        return DamageCounts(now[0] - self._base.regions, now[1] - self._base.bytes)

    def reset(self) -> None:
        """Count from now on (accumulators cannot be set to zero while tasks may still report)."""
        now = self.accumulator.value
        self._base = DamageCounts(now[0], now[1])


_COUNTERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def new_counter(spark) -> DamageCounter | None:
    """A counter bound to ``spark``'s SparkContext (None under Spark Connect, which has no SparkContext)."""
    context = getattr(spark, "_sc", None)
    if context is None:
        return None
    counter = DamageCounter(context.accumulator(DamageCounts(), _DamageCountsParam()))
    _COUNTERS[context] = counter
    return counter


def damage_counter(spark) -> DamageCounter | None:
    """The counter :func:`kdump.spark.register` made for ``spark``'s context, if any."""
    context = getattr(spark, "_sc", None)
    return None if context is None else _COUNTERS.get(context)


def on_damage(accumulator):
    """What a task does with a damaged region it skips (the ``on_damage(slice, error)`` of
    :func:`kdump.spark.arrow.read_slices`): log it, and count it in ``accumulator`` when there is one."""
    from kdump.read.damage import Damage
    from kdump.spark.arrow import log_damage
    if accumulator is None:
        return log_damage

    def count_and_log(sl, error) -> None:
        d = error if isinstance(error, Damage) else Damage.of_error(error)
        accumulator.add(DamageCounts(1, d.length or 0))
        log_damage(sl, error)
    return count_and_log
