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
    Spark accumulators), or None under Spark Connect, which has no accumulators.

    Two settings come with it, each only where the user has not set it: on a local master the Python workers run
    this interpreter (Spark's default is ``python3`` from PATH, which in a venv that is not activated has neither
    pyspark's dependencies nor kdump), and a Python data source's error reaches the user as its sentence, not a
    traceback of kdump's frames (``spark.sql.execution.pyspark.udf.hideTraceback.enabled``)."""
    from kdump.spark.accumulators import new_counter
    from kdump.spark.datasource import KafkaLogDataSource, counting_source
    _workers_run_this_python(spark)
    _errors_as_sentences(spark)
    counter = new_counter(spark)
    spark.dataSource.register(KafkaLogDataSource if counter is None else counting_source(counter.accumulator))
    return counter


HIDE_TRACEBACK = "spark.sql.execution.pyspark.udf.hideTraceback.enabled"


def _workers_run_this_python(spark) -> None:
    """Point a local session's Python workers at this interpreter when nothing chose one (no PYSPARK_PYTHON, no
    spark.pyspark.python): the source registered now, and every Python function after it, is run by the
    interpreter that has kdump. A cluster's executors may not have this path: set spark.pyspark.python there."""
    import os
    import sys
    context = getattr(spark, "_sc", None)  # (None under Spark Connect: the server's Python runs the source)
    if context is None or os.environ.get("PYSPARK_PYTHON") or context.getConf().get("spark.pyspark.python"):
        return
    if context.master.startswith("local") and context.pythonExec == "python3" and sys.executable:
        context.pythonExec = sys.executable


def _errors_as_sentences(spark) -> None:
    if spark.conf.get(HIDE_TRACEBACK, None) is None:  # (the user's own choice is kept)
        spark.conf.set(HIDE_TRACEBACK, "true")


def damage_counter(spark):
    """The damage counter :func:`register` made for ``spark`` (None: not registered that way, or Spark Connect)."""
    from kdump.spark.accumulators import damage_counter as lookup
    return lookup(spark)
