"""``kdump spark replicas``: :func:`kdump.replicas.compare` with its surveys (one task per replica) and its
comparisons (one task per topic-partition) run as Spark tasks, for clusters of many brokers whose log
directories every executor mounts (paths as the driver names them: :func:`kdump.spark.jobs._in_driver_directory`).
The report is the one ``kdump replicas`` gives."""
from __future__ import annotations

from kdump.replicas import Found, PartitionReplicas, compare
from kdump.spark.jobs import _in_driver_directory


def replicas(spark, paths, *, reference: str | None = None, records: bool = False
             ) -> tuple[Found, list[PartitionReplicas]]:
    def mapper(fn, calls):
        if not calls:
            return []
        return (spark.sparkContext.parallelize(calls, len(calls))
                .map(_in_driver_directory(lambda args: fn(*args))).collect())
    return compare(paths, reference=reference, records=records, mapper=mapper)
