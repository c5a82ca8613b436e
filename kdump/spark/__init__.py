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

__all__ = ["register"]


def register(spark) -> None:
    """Register the ``kafka-log`` data source in ``spark`` (a SparkSession)."""
    from kdump.spark.datasource import KafkaLogDataSource
    spark.dataSource.register(KafkaLogDataSource)
