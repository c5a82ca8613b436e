"""The PySpark data source ``kafka-log``: Kafka log segments as a DataFrame (batch and streaming), and
DataFrames written back as segments.

>>> import kdump.spark; kdump.spark.register(spark)                     # doctest: +SKIP
>>> df = spark.read.format("kafka-log").load("/var/lib/kafka/data")     # Spark's Kafka schema
>>> df.selectExpr("CAST(value AS STRING)").show()

Options (all optional): ``includeHeaders``, ``includeMetadata``, ``includeControl`` (true/false),
``failOnDataLoss`` (true, Spark's default: the query fails on damage, naming the file, byte and offsets lost;
false: damaged regions are skipped, logged and counted; kdump's ``mode`` FAILFAST/PERMISSIVE says the same),
``checkCrcs`` (default true: a batch whose CRC does not match is damage), ``isolationLevel``
(``read_uncommitted``, the default as in Spark's Kafka source, or ``read_committed``: records of aborted
transactions and everything from the last stable offset on are left out, :mod:`kdump.spark.txn`), ``maxPartitionBytes``,
``openCostInBytes``, ``parallelism`` (task packing), ``fs.*`` (remote file system settings, see
:mod:`kdump.spark.remote`). Streaming and writing options: :mod:`kdump.spark.stream`, :mod:`kdump.spark.write`.
"""
from __future__ import annotations

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from kdump.spark import kafka_options as K
from kdump.spark import options as O
from kdump.spark.accumulators import on_damage
from kdump.spark.arrow import read_slices
from kdump.spark.bounds import bounded, offset_ranges
from kdump.spark.plan import MAX_SPLIT, OPEN_COST, find_segments, plan_by_offsets, plan_tasks, txn_filters
from kdump.spark.schema import columns_of, spark_schema


class KafkaLogDataSource(DataSource):
    """``format("kafka-log")``. ``damage_accumulator``: set on the class that :func:`counting_source` makes for
    :func:`kdump.spark.register`, which counts the damage PERMISSIVE reads skip (:mod:`kdump.spark.accumulators`)."""

    damage_accumulator = None

    @classmethod
    def name(cls) -> str:
        return "kafka-log"

    def schema(self):
        if _damage_report(self.options):
            from kdump.spark.damage_report import spark_schema as damage_schema
            return damage_schema()
        return spark_schema(O.default_column_names(self.options))

    def reader(self, schema):
        if _damage_report(self.options):
            return DamageReportReader(self.options, spark_schema(O.default_column_names(self.options)))
        return KafkaLogReader(self.options, schema, self.damage_accumulator)

    def streamReader(self, schema):
        from kdump.spark.stream import KafkaLogStreamReader
        return KafkaLogStreamReader(self.options, schema, self.damage_accumulator)

    def writer(self, schema, overwrite):
        from kdump.spark.write import KafkaLogWriter
        return KafkaLogWriter(self.options, schema, overwrite)

    def streamWriter(self, schema, overwrite):
        from kdump.spark.write import KafkaLogStreamWriter
        return KafkaLogStreamWriter(self.options, schema, overwrite)


def counting_source(accumulator) -> type:
    """``KafkaLogDataSource`` with ``accumulator`` on the class: Spark pickles a registered source class by value
    (it is not importable by name), so the driver's accumulator travels with it into every task's reader."""
    return type("KafkaLogDataSource", (KafkaLogDataSource,), {"damage_accumulator": accumulator,
                                                              "__module__": __name__})


def _damage_report(options) -> bool:
    """``option("report", "damage")``: the read gives the damaged regions it passes over, not the records."""
    return O.choice(options, "report", ("records", "damage"), "records") == "damage"


class SegmentsPartition(InputPartition):
    """One task: a list of segment slices."""

    def __init__(self, slices):
        super().__init__(None)
        self.slices = slices

    def __repr__(self) -> str:
        return f"SegmentsPartition({len(self.slices)} slices)"


class KafkaLogReader(DataSourceReader):
    """Plans and reads one scan. It takes no pushed filters (``pushFilters`` is DataSourceReader's own, which
    hands every filter back), on purpose: Spark up to 4.3 keeps the read plan that filter pushdown produced on
    the data source behind a loaded DataFrame (``PythonDataSourceV2.readInfo``) and gives it to every later
    query of that DataFrame that pushes nothing, so a plan pruned for ``offset < 100`` answered a plain
    ``count()`` of the same DataFrame with 113 records instead of 6,117. A plan that depends only on the
    DataFrame's options is right for every query; bounds belong in options, which are the DataFrame's own."""

    def __init__(self, options, schema, damage_accumulator=None):
        self.damage_accumulator = damage_accumulator
        self.kafka = K.batch_read(options)
        O.warn_once(self.kafka.notes)
        self.stop_at_high_watermark = O.flag(options, "stopAtHighWatermark", True)
        self.paths = O.paths(options)
        self.options = O.read_options(options, columns_of(schema), self.kafka)
        O.apply_kafka_isolation(self.options, options, self.kafka)
        self.parallelism = max(O.parallelism(options), self.kafka.min_partitions or 0)
        self.max_split = O.integer(options, "maxPartitionBytes", MAX_SPLIT, 1)
        self.open_cost = O.integer(options, "openCostInBytes", OPEN_COST, 0)

    def partitions(self):
        found = [s for s in find_segments(self.paths, self.options.storage_options)
                 if self.kafka.selection.keeps(s.topic, s.partition)]
        filters = None
        if self.options.isolation == "read_committed":
            filters = txn_filters(found, self.options.storage_options, self.options.max_batch_bytes)
        ranges = offset_ranges(found, self.kafka, stop_at_high_watermark=self.stop_at_high_watermark)
        if self.kafka.max_records_per_partition is not None:
            tasks = plan_by_offsets(bounded(found, ranges), self.kafka.max_records_per_partition,
                                    min_tasks=self.kafka.min_partitions, txn_filters=filters, offset_ranges=ranges)
        else:
            tasks = plan_tasks(bounded(found, ranges), parallelism=self.parallelism, max_split=self.max_split,
                               open_cost=self.open_cost, txn_filters=filters, offset_ranges=ranges)
        return [SegmentsPartition(t.slices) for t in tasks]

    def read(self, partition):
        # Spark plans one InputPartition(None) of its own when partitions() finds nothing to read (an empty
        # directory): that task reads nothing, and the DataFrame is empty.
        return read_slices(getattr(partition, "slices", ()), self.options, on_damage(self.damage_accumulator))


class DamageReportReader(KafkaLogReader):
    """The same planning as a records read of the same paths and options; each task gives its slices' damage
    (:mod:`kdump.spark.damage_report`)."""

    def read(self, partition):
        from kdump.spark.damage_report import damage_rows
        yield damage_rows(getattr(partition, "slices", ()), self.options)
