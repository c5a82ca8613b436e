"""The PySpark data source ``kafka-log``: Kafka log segments as a DataFrame (batch and streaming), and
DataFrames written back as segments.

>>> import kdump.spark; kdump.spark.register(spark)                     # doctest: +SKIP
>>> df = spark.read.format("kafka-log").load("/var/lib/kafka/data")     # Spark's Kafka schema
>>> df.selectExpr("CAST(value AS STRING)").show()

Options (all optional): ``includeHeaders``, ``includeMetadata``, ``includeControl`` (true/false),
``mode`` (PERMISSIVE: damaged regions are skipped and logged, FAILFAST: the query fails),
``checkCrcs`` (default true: a batch whose CRC does not match is damage), ``isolationLevel``
(``read_uncommitted``, the default as in Spark's Kafka source, or ``read_committed``: records of aborted
transactions and everything from the last stable offset on are left out, :mod:`kdump.spark.txn`), ``maxPartitionBytes``,
``openCostInBytes``, ``parallelism`` (task packing), ``fs.*`` (remote file system settings, see
:mod:`kdump.spark.remote`). Streaming and writing options: :mod:`kdump.spark.stream`, :mod:`kdump.spark.write`.
"""
from __future__ import annotations

import sys
from types import FrameType

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kdump.spark import options as O
from kdump.spark.arrow import read_slices
from kdump.spark.plan import MAX_SPLIT, OPEN_COST, Pruning, find_segments, plan_tasks, prune_segments, txn_filters
from kdump.spark.schema import columns_of, spark_schema


class KafkaLogDataSource(DataSource):
    """``format("kafka-log")``."""

    @classmethod
    def name(cls) -> str:
        return "kafka-log"

    def schema(self):
        return spark_schema(O.default_column_names(self.options))

    def reader(self, schema):
        # Spark refuses a reader that implements pushFilters unless spark.sql.python.filterPushdown.enabled
        # is true, and tells the reader nothing about the setting; it calls reader() from its pushdown
        # worker only when the setting is on, so that is where the filter-taking reader is handed out.
        cls = PushdownReader if _called_for_pushdown() else KafkaLogReader
        return cls(self.options, schema)

    def streamReader(self, schema):
        from kdump.spark.stream import KafkaLogStreamReader
        return KafkaLogStreamReader(self.options, schema)

    def writer(self, schema, overwrite):
        from kdump.spark.write import KafkaLogWriter
        return KafkaLogWriter(self.options, schema, overwrite)


def _called_for_pushdown() -> bool:
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith("data_source_pushdown_filters.py"):
            return True
        frame = frame.f_back
    return False


class SegmentsPartition(InputPartition):
    """One task: a list of segment slices."""

    def __init__(self, slices):
        super().__init__(None)
        self.slices = slices

    def __repr__(self) -> str:
        return f"SegmentsPartition({len(self.slices)} slices)"


class KafkaLogReader(DataSourceReader):
    def __init__(self, options, schema):
        self.paths = O.paths(options)
        self.options = O.read_options(options, columns_of(schema))
        self.parallelism = O.parallelism(options)
        self.max_split = O.integer(options, "maxPartitionBytes", MAX_SPLIT, 1)
        self.open_cost = O.integer(options, "openCostInBytes", OPEN_COST, 0)
        self.pruning = Pruning()

    def partitions(self):
        found = find_segments(self.paths, self.options.storage_options)
        filters = None
        if self.options.isolation == "read_committed":
            filters = txn_filters(found, self.options.storage_options, self.options.max_batch_bytes)
        tasks = plan_tasks(prune_segments(found, self.pruning), parallelism=self.parallelism,
                           max_split=self.max_split, open_cost=self.open_cost, txn_filters=filters)
        return [SegmentsPartition(t.slices) for t in tasks]

    def read(self, partition):
        return read_slices(partition.slices, self.options)


class PushdownReader(KafkaLogReader):
    def pushFilters(self, filters):
        """Use what topic, partition, offset and timestamp filters allow to skip partitions, segments and
        batches, and hand every filter back: Spark still applies them to the records, so pruning can
        only save work, never change a result."""
        from kdump.spark.pushdown import apply_filters
        apply_filters(filters, self.pruning, self.options)
        return filters
