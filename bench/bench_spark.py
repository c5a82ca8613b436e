"""Figures of the Spark pipeline (issue 10), printed as Markdown rows.

    python bench/bench_spark.py                # everything (about 10 minutes on 2 cores)
    python bench/bench_spark.py --only library

Data (made once with kdump's writer, cached in bench/out/spark/): a log directory of 8 partitions x
250,000 records (16-byte keys, 100-byte values, uncompressed magic 2, batches of 500 records, 16 MiB
segments with their indexes) and, beside it, 200 small segments (one partition each, 100 records).

Figures: the library alone turning the segments into Arrow (records/s on one core, compiled and pure);
session start; ``count()`` and ``sum(length(value))`` with ``local[1]`` and ``local[2]``; the same records
written to Parquet with pyarrow and scanned by Spark's Parquet reader; export to Parquet by ``kdump spark
scan`` (pyarrow writer in the tasks) against Spark's own Parquet writer; the cost of one packed small segment;
and (``--only cluster``, also part of the default run) the same scans on a real standalone cluster, a master and
one 2-core worker started on 127.0.0.1 with pyspark's ``spark-class`` (tests/support/spark_cluster.py).

``--only ratios`` (issue 32, item 6; not part of the default run): ``count()`` and ``sum(length(value))`` on
kafka-log against Spark's Parquet scan of the same records, ``local[1]`` and ``local[2]``, every ratio printed from
the one run; the Arrow batch size (``maxRecordsPerArrowBatch``) swept; and the JVM-side cost of the value column's
Arrow type (binary, large_binary, binary_view) measured with a bench-only source that hands Spark the same Arrow
batches in each type.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

OUT = os.path.join(HERE, "out", "spark")
BIG = os.path.join(OUT, "logdir")
SMALL = os.path.join(OUT, "small")
PARTITIONS = 8
RECORDS = 250_000
SMALL_SEGMENTS = 200


def generate() -> None:
    from kdump.spark.write import PartitionWriter, WriteOptions
    if os.path.exists(os.path.join(OUT, "done")):
        return
    shutil.rmtree(OUT, ignore_errors=True)
    rng = random.Random(10)
    opts = WriteOptions(codec=0, segment_bytes=16 << 20, batch_records=500, batch_bytes=1 << 30)
    t0 = time.perf_counter()
    payload = bytes(rng.randrange(32, 127) for _ in range(4096))
    for p in range(PARTITIONS):
        w = PartitionWriter(os.path.join(BIG, f"bench-{p}"), "bench", p, opts)
        ts = 1_700_000_000_000
        for i in range(RECORDS):
            j = (i * 37) % 3900
            w.append(None, ts + i, b"key-%012d" % i, payload[j:j + 100])
        w.close()
    small_opts = WriteOptions(codec=0, batch_records=100)
    for s in range(SMALL_SEGMENTS):
        w = PartitionWriter(os.path.join(SMALL, f"small-{s}"), "small", s, small_opts)
        for i in range(100):
            w.append(None, 1_700_000_000_000 + i, b"k%d" % i, payload[i:i + 100])
        w.close()
    open(os.path.join(OUT, "done"), "w").close()
    print(f"(generated in {time.perf_counter() - t0:.1f} s)", file=sys.stderr)


def row(*cells) -> None:
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def best(fn, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def library(runs: int) -> None:
    from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
    from kdump.spark.plan import find_segments
    segs = find_segments([BIG])
    slices = [SegmentSlice(s.location, s.topic, s.partition, 0, None, s.size) for s in segs]
    total = PARTITIONS * RECORDS
    for backend in ("compiled", "python"):
        for cols, label in ((("key", "value", "topic", "partition", "offset", "timestamp", "timestampType"),
                             "Kafka schema"), (("value",), "value only")):
            def run():
                return sum(rb.num_rows for rb in read_slices(slices, ReadOptions(columns=cols, backend=backend)))
            t, n = best(run, runs if backend == "compiled" else 1)
            assert n == total, n
            row(f"library to Arrow, {backend}, {label}", f"{t:.2f} s", f"{n / t:,.0f} rec/s per core")


def spark_figures(runs: int) -> None:
    from kdump.spark.session import build_session
    total = PARTITIONS * RECORDS
    pq_dir = os.path.join(OUT, "parquet-pyarrow")
    for master in ("local[1]", "local[2]"):
        t0 = time.perf_counter()
        spark = build_session(master)
        start = time.perf_counter() - t0
        t1 = time.perf_counter()
        spark.read.format("kafka-log").load(SMALL).count()
        first_query = time.perf_counter() - t1
        row(f"session start {master} (+ first query)", f"{start:.1f} s (+{first_query:.1f} s)", "")
        df = spark.read.format("kafka-log").load(BIG)
        t, n = best(lambda: df.count(), runs)
        assert n == total
        row(f"kafka-log count(), {master}", f"{t:.2f} s", f"{n / t:,.0f} rec/s")
        t, _ = best(lambda: df.selectExpr("sum(length(value))").collect(), runs)
        row(f"kafka-log sum(length(value)), {master}", f"{t:.2f} s", f"{total / t:,.0f} rec/s")
        if not os.path.exists(pq_dir):
            from kdump.spark.jobs import export_local
            export_local([BIG], pq_dir, "parquet")
        pq = spark.read.parquet(pq_dir)
        t, _ = best(lambda: pq.selectExpr("sum(length(value))").collect(), runs)
        row(f"Spark Parquet reader sum(length(value)), {master}", f"{t:.2f} s", f"{total / t:,.0f} rec/s")
        # per packed small segment: 200 one-batch segments against the same records in one segment
        small = spark.read.format("kafka-log").load(SMALL)
        t_small, n_small = best(lambda: small.count(), runs)
        one = spark.read.format("kafka-log").load(os.path.join(SMALL, "small-0"))
        t_one, _ = best(lambda: one.count(), runs)
        row(f"200 small segments count(), {master}", f"{t_small:.2f} s",
            f"{(t_small - t_one) / (SMALL_SEGMENTS - 1) * 1000:.2f} ms per extra segment ({n_small} records)")
        if master == "local[2]":
            export(spark, runs)
        spark.stop()


def export(spark, runs) -> None:
    from kdump.spark.jobs import export
    total = PARTITIONS * RECORDS
    out = os.path.join(OUT, "export")

    def kdump_export():
        shutil.rmtree(out, ignore_errors=True)
        return export(spark, [BIG], out, "parquet")
    t, _ = best(kdump_export, runs)
    row("export to Parquet, kdump spark scan (pyarrow in tasks), local[2]", f"{t:.2f} s", f"{total / t:,.0f} rec/s")
    spark_out = os.path.join(OUT, "export-spark")

    def spark_export():
        shutil.rmtree(spark_out, ignore_errors=True)
        spark.read.format("kafka-log").load(BIG).write.parquet(spark_out)
    t, _ = best(spark_export, 1)
    row("export to Parquet, Spark's writer (df.write.parquet), local[2]", f"{t:.2f} s", f"{total / t:,.0f} rec/s")


def cluster(runs: int) -> None:
    """count() and sum(length(value)) through a standalone master and worker: executors in their own JVM and
    working directory, Python workers forked by the worker's daemon, as on a real cluster."""
    import tempfile
    from pathlib import Path

    from kdump.spark.session import build_session
    from tests.support.spark_cluster import standalone_cluster
    total = PARTITIONS * RECORDS
    with tempfile.TemporaryDirectory(prefix="kdump-bench-cluster-") as root, standalone_cluster(Path(root)) as url:
        t0 = time.perf_counter()
        spark = build_session(url, app_name="kdump-bench")
        row("session start, standalone cluster (1 worker, 2 cores)", f"{time.perf_counter() - t0:.1f} s", "")
        df = spark.read.format("kafka-log").load(BIG)
        t1 = time.perf_counter()
        df.count()
        row("first query on the cluster (executor start)", f"{time.perf_counter() - t1:.1f} s", "")
        t, n = best(lambda: df.count(), runs)
        assert n == total
        row("kafka-log count(), standalone cluster", f"{t:.2f} s", f"{n / t:,.0f} rec/s")
        t, _ = best(lambda: df.selectExpr("sum(length(value))").collect(), runs)
        row("kafka-log sum(length(value)), standalone cluster", f"{t:.2f} s", f"{total / t:,.0f} rec/s")
        spark.stop()


def _typed_source(value_type: str):
    """A bench-only data source: kafka-log's Arrow batches of BIG (value column only), the value column cast to
    ``value_type`` in the task, so that only what the JVM does with the batches differs between types."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class Reader(DataSourceReader):
        def partitions(self):
            from kdump.spark.plan import find_segments
            return [InputPartition([(s.location, s.topic, s.partition, s.size)]) for s in find_segments([BIG])]

        def read(self, partition):
            import pyarrow as pa

            from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
            target = {"binary": pa.binary(), "large_binary": pa.large_binary(),
                      "binary_view": pa.binary_view()}[value_type]
            slices = [SegmentSlice(loc, t, p, 0, None, size) for loc, t, p, size in partition.value]
            for rb in read_slices(slices, ReadOptions(columns=("value",))):
                yield pa.RecordBatch.from_arrays([rb.column(0).cast(target)], names=["value"])

    class Source(DataSource):
        @classmethod
        def name(cls):
            return f"bench-{value_type}"

        def schema(self):
            return "value binary"

        def reader(self, schema):
            return Reader()

    return Source


def ratios(runs: int) -> None:
    from kdump.spark.session import build_session
    total = PARTITIONS * RECORDS
    pq_dir = os.path.join(OUT, "parquet-pyarrow")
    if not os.path.exists(pq_dir):
        from kdump.spark.jobs import export_local
        export_local([BIG], pq_dir, "parquet")
    times: dict = {}
    for master in ("local[1]", "local[2]"):
        spark = build_session(master)
        kl = spark.read.format("kafka-log").load(BIG)
        pq = spark.read.parquet(pq_dir)
        kl.count()  # warm: Python workers started, classes loaded
        for name, df in (("kafka-log", kl), ("parquet", pq)):
            t, n = best(lambda df=df: df.count(), runs)
            assert n == total, n
            times[(master, name, "count")] = t
            row(f"{name} count(), {master}", f"{t:.2f} s", f"{total / t:,.0f} rec/s")
            t, _ = best(lambda df=df: df.selectExpr("sum(length(value))").collect(), runs)
            times[(master, name, "sum")] = t
            row(f"{name} sum(length(value)), {master}", f"{t:.2f} s", f"{total / t:,.0f} rec/s")
        if master == "local[1]":
            for rows in (4096, 65536, 262144):
                df = spark.read.format("kafka-log").option("maxRecordsPerArrowBatch", str(rows)).load(BIG)
                t, _ = best(lambda df=df: df.selectExpr("sum(length(value))").collect(), runs)
                row(f"kafka-log sum(length(value)), maxRecordsPerArrowBatch={rows}, {master}", f"{t:.2f} s",
                    f"{times[(master, 'kafka-log', 'sum')] / t:.2f}x the default (16384)")
            for value_type in ("binary", "large_binary", "binary_view"):
                spark.dataSource.register(_typed_source(value_type))
                df = spark.read.format(f"bench-{value_type}").load()
                try:
                    t, n = best(lambda df=df: df.selectExpr("sum(length(value))").collect(), runs)
                    row(f"value column as {value_type} (bench source), sum(length(value)), {master}", f"{t:.2f} s",
                        f"{total / t:,.0f} rec/s")
                except Exception as e:  # a type Spark does not take: say so, measure the rest
                    said = [line for line in str(e).splitlines() if "rror" in line] or [str(e)]
                    row(f"value column as {value_type} (bench source), {master}", "refused", said[-1].strip()[:200])
        spark.stop()
    for master in ("local[1]", "local[2]"):
        for q in ("count", "sum"):
            row(f"ratio kafka-log / Parquet, {q}, {master}",
                f"{times[(master, 'kafka-log', q)] / times[(master, 'parquet', q)]:.2f}x", "")
    for q in ("count", "sum"):
        row(f"ratio local[1] / local[2], kafka-log {q} (8 partitions)",
            f"{times[('local[1]', 'kafka-log', q)] / times[('local[2]', 'kafka-log', q)]:.2f}x", "")


def _cpu_seconds(pid: int) -> float:
    """user + system CPU seconds of a live process (all its threads), from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = []
        try:
            threads = os.listdir(f"/proc/{p}/task")
        except OSError:
            threads = []
        for t in threads:  # a child is listed under the thread that forked it
            try:
                with open(f"/proc/{p}/task/{t}/children") as f:
                    kids.extend(int(k) for k in f.read().split())
            except OSError:
                pass
        out.extend(kids)
        todo.extend(kids)
    return out


def _cpu_split(jvm_pid: int, fn):
    """Wall seconds of ``fn()`` and the CPU seconds the driver JVM and its Python workers (its descendants, alive
    before and after: Spark reuses them) spent meanwhile."""
    def snap():
        kids = _descendants(jvm_pid)
        py = {}
        for k in kids:
            try:
                py[k] = _cpu_seconds(k)
            except OSError:
                pass
        return _cpu_seconds(jvm_pid), py
    j0, p0 = snap()
    t = time.perf_counter()
    result = fn()
    wall = time.perf_counter() - t
    j1, p1 = snap()
    py = sum(v - p0.get(k, 0.0) for k, v in p1.items())
    return wall, j1 - j0, py, result


def _replay_source():
    """A bench-only data source: each task builds the first Arrow batch of its partition once (kdump's batch, Kafka
    schema) and hands Spark that same batch again until it has given as many rows as the partition holds: what the
    JVM pays for the rows with (almost) nothing paid in Python."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    from kdump.spark.schema import KAFKA_COLUMNS, spark_schema

    class Reader(DataSourceReader):
        def partitions(self):
            from kdump.spark.plan import find_segments
            return [InputPartition([(s.location, s.topic, s.partition, s.size)]) for s in find_segments([BIG])]

        def read(self, partition):
            from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
            slices = [SegmentSlice(loc, t, p, 0, None, size) for loc, t, p, size in partition.value]
            first = next(iter(read_slices(slices, ReadOptions(columns=tuple(KAFKA_COLUMNS)))))
            left = RECORDS
            while left > 0:
                rb = first if left >= first.num_rows else first.slice(0, left)
                left -= rb.num_rows
                yield rb

    class Source(DataSource):
        @classmethod
        def name(cls):
            return "bench-replay"

        def schema(self):
            return spark_schema(list(KAFKA_COLUMNS))

        def reader(self, schema):
            return Reader()

    return Source


def breakdown(runs: int) -> None:
    """Where the time of a kafka-log scan goes, local[1], one session: the wall time and the CPU seconds of the
    driver JVM and of its Python workers per query, against the same queries on Spark's Parquet scan, and the levers
    a Python data source has (the columns it is asked for, the rows per Arrow batch)."""
    from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
    from kdump.spark.plan import find_segments
    from kdump.spark.schema import KAFKA_COLUMNS
    from kdump.spark.session import build_session
    total = PARTITIONS * RECORDS
    pq_dir = os.path.join(OUT, "parquet-pyarrow")
    if not os.path.exists(pq_dir):
        from kdump.spark.jobs import export_local
        export_local([BIG], pq_dir, "parquet")
    segs = find_segments([BIG])
    slices = [SegmentSlice(s.location, s.topic, s.partition, 0, None, s.size) for s in segs]
    for cols, label in ((tuple(KAFKA_COLUMNS), "Kafka schema (7 columns)"), (("value",), "value only"),
                        (("partition",), "partition only")):
        t, n = best(lambda cols=cols: sum(rb.num_rows for rb in read_slices(slices, ReadOptions(columns=cols))), runs)
        row(f"library to Arrow in this process, {label}", f"{t:.2f} s", "", "", f"{n / t:,.0f} rec/s")
    spark = build_session("local[1]")
    spark.dataSource.register(_replay_source())
    jvm_pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    kl = spark.read.format("kafka-log").load(BIG)
    kl.count()  # warm: Python workers started, classes loaded
    count = lambda df: df.count()  # noqa: E731
    summed = lambda df: df.selectExpr("sum(length(value))").collect()[0][0]  # noqa: E731
    cases = [
        ("kafka-log count()", kl, count),
        ("kafka-log sum(length(value))", kl, summed),
        ("kafka-log count(), .schema('partition int')", spark.read.format("kafka-log").schema("partition int")
         .load(BIG), count),
        ("kafka-log sum(length(value)), .schema('value binary')", spark.read.format("kafka-log")
         .schema("value binary").load(BIG), summed),
        ("kafka-log count(), maxRecordsPerArrowBatch=4096", spark.read.format("kafka-log")
         .option("maxRecordsPerArrowBatch", "4096").load(BIG), count),
        ("kafka-log count(), maxRecordsPerArrowBatch=65536", spark.read.format("kafka-log")
         .option("maxRecordsPerArrowBatch", "65536").load(BIG), count),
        ("replay source count() (one kdump batch per task, resent)", spark.read.format("bench-replay").load(), count),
        ("parquet count()", spark.read.parquet(pq_dir), count),
        ("parquet sum(length(value))", spark.read.parquet(pq_dir), summed),
    ]
    row("figure", "wall", "JVM CPU", "Python CPU", "rate")
    row("---", "---:", "---:", "---:", "---:")
    walls = {}
    for label, df, q in cases:
        fig = min((_cpu_split(jvm_pid, lambda df=df, q=q: q(df)) for _ in range(runs)), key=lambda f: f[0])
        walls[label] = fig[0]
        row(label, f"{fig[0]:.2f} s", f"{fig[1]:.2f} s", f"{fig[2]:.2f} s", f"{total / fig[0]:,.0f} rec/s")
    spark.stop()
    for a, b in (("kafka-log count()", "parquet count()"),
                 ("kafka-log sum(length(value))", "parquet sum(length(value))"),
                 ("kafka-log count(), .schema('partition int')", "parquet count()"),
                 ("kafka-log sum(length(value)), .schema('value binary')", "parquet sum(length(value))"),
                 ("replay source count() (one kdump batch per task, resent)", "parquet count()")):
        row(f"ratio {a} / {b}", f"{walls[a] / walls[b]:.2f}x", "", "", "")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", choices=["library", "spark", "cluster", "ratios", "breakdown"])
    args = ap.parse_args()
    generate()
    if args.only != "breakdown":
        row("figure", "time", "rate")
        row("---", "---:", "---:")
    if args.only in (None, "library"):
        library(args.runs)
    if args.only in (None, "spark"):
        spark_figures(args.runs)
    if args.only in (None, "cluster"):
        cluster(args.runs)
    if args.only == "ratios":
        ratios(args.runs)
    if args.only == "breakdown":
        breakdown(args.runs)


if __name__ == "__main__":
    main()
