"""Registers kdump's ``kafka-log`` data source in every Spark session automatically: Spark looks for
top-level modules named ``pyspark_*`` holding a ``DefaultSource`` (a DataSource subclass)."""
from kdump.spark.datasource import KafkaLogDataSource as DefaultSource

__all__ = ["DefaultSource"]
