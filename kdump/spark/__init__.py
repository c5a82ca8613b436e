"""kdump on Apache Spark: the ``kafka-log`` data source, and the jobs behind ``kdump spark``.

>>> import kdump.spark                                                  # doctest: +SKIP
>>> kdump.spark.register(spark)
>>> spark.read.format("kafka-log").option("includeHeaders", "true").load("/var/lib/kafka/data")

Installed with ``pip install 'kdump[spark]'``; the module ``pyspark_kafka_log`` also registers the source
automatically in every session. Modules: :mod:`~kdump.spark.schema` (columns),
:mod:`~kdump.spark.arrow` (segments to Arrow, no Spark needed), :mod:`~kdump.spark.plan` (paths to tasks),
:mod:`~kdump.spark.datasource` (the data source), :mod:`~kdump.spark.stream`, :mod:`~kdump.spark.write`,
:mod:`~kdump.spark.remote` (pyarrow.fs paths), :mod:`~kdump.spark.session`, :mod:`~kdump.spark.jobs`
(verify, stats, export); :mod:`~kdump.spark._source` is the one module that uses kdump's reader API.
"""

__all__ = ["register", "damage_counter"]


def register(spark):
    """Register the ``kafka-log`` data source in ``spark`` (a SparkSession). Returns the session's
    :class:`~kdump.spark.accumulators.DamageCounter` (the damaged regions PERMISSIVE reads skip, counted by
    Spark accumulators), or None under Spark Connect, which has no accumulators."""
    from kdump.spark.accumulators import new_counter
    from kdump.spark.datasource import KafkaLogDataSource, counting_source
    counter = new_counter(spark)
    spark.dataSource.register(KafkaLogDataSource if counter is None else counting_source(counter.accumulator))
    return counter


def damage_counter(spark):
    """The damage counter :func:`register` made for ``spark`` (None: not registered that way, or Spark Connect)."""
    from kdump.spark.accumulators import damage_counter as lookup
    return lookup(spark)
