"""Segments to Arrow without Spark (kdump.spark.arrow): the compiled builder against the pure one, the
schema Spark checks, the batch caps, and values against kdump's own reader."""
import os
import random
import shutil
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")

from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices  # noqa: E402
from kdump.spark.schema import ALL_COLUMNS, arrow_schema, default_columns  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ALL = tuple(ALL_COLUMNS)


def compiled_available():
    try:
        import kdump._arrow  # noqa: F401
        return True
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but the compiled module kdump._arrow is not built")
        return False


def segments(*dirs):
    out = []
    for d in dirs:
        for root, _, files in os.walk(ROOT / "fixtures" / d):
            out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".log") and f[:-4].isdigit()]
    return sorted(out)


def table(path, backend, columns=ALL, **kw):
    opts = ReadOptions(columns=columns, include_control=True, check_crcs=False, backend=backend, **kw)
    damage = []
    batches = list(read_slices([SegmentSlice(path, "t", 0)], opts, on_damage=lambda sl, e: damage.append(
        (e.code, e.position))))
    return pa.Table.from_batches(batches, schema=arrow_schema(columns)), damage


@pytest.mark.parametrize("path", segments("corpus", "generated", "corrupt"), ids=lambda p: os.path.relpath(p, ROOT))
def test_compiled_builder_equals_pure_builder(path):
    if not compiled_available():
        pytest.skip("kdump._arrow is not built")
    assert table(path, "compiled") == table(path, "python")


def test_compiled_equals_pure_on_damaged_records(tmp_path):
    """Random bytes changed inside uncompressed magic-2 batches: the compiled builder gives up on what it
    does not take and the pure decoder decides, so the outputs (and the damage reports) stay equal."""
    if not compiled_available():
        pytest.skip("kdump._arrow is not built")
    rng = random.Random(10)
    data = (ROOT / "fixtures/corpus/kafka-generated/v2-none/00000000000000000000.log").read_bytes()
    differing = 0
    for i in range(60):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            pos = rng.randrange(61, len(mutated))  # past the first batch header: records get hit
            mutated[pos] = rng.randrange(256)
        target = tmp_path / f"{i:020d}.log"
        target.write_bytes(bytes(mutated))
        compiled, python = table(str(target), "compiled"), table(str(target), "python")
        assert compiled == python
        differing += compiled[1] != []
    assert differing > 10  # the mutations did hit records


def test_arrow_schema_is_what_spark_checks():
    pytest.importorskip("pyspark")
    from pyspark.sql.pandas.types import to_arrow_schema
    from kdump.spark.schema import spark_schema
    for cols in (default_columns(), default_columns(True), default_columns(True, True)):
        assert arrow_schema(cols).equals(to_arrow_schema(spark_schema(cols), timezone="UTC"))


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_values_match_kdump_reader(backend):
    if backend == "compiled" and not compiled_available():
        pytest.skip("kdump._arrow is not built")
    from kdump import SegmentReader
    path = str(ROOT / "fixtures/corpus/broker-written/java-producer-snappy-headers/00000000000000000000.log")
    t, damage = table(path, backend)
    assert damage == []
    expected = []
    with SegmentReader(path) as reader:
        for batch in reader:
            for r in batch.records(1 << 26):
                expected.append({"offset": r.offset, "key": r.key, "value": r.value,
                                 "headers": [{"key": k, "value": v} for k, v in r.headers] or None,
                                 "ts_us": r.timestamp * 1000, "timestampType": int(r.timestamp_type)})
    got = [{"offset": row["offset"], "key": row["key"], "value": row["value"], "headers": row["headers"],
            "ts_us": row["timestamp"], "timestampType": row["timestampType"]}
           for row in t.cast(t.schema.set(t.schema.get_field_index("timestamp"),
                                          pa.field("timestamp", pa.int64()))).to_pylist()]
    assert got == expected and len(got) > 3
    assert all(h is not None for h in t.column("headers").to_pylist())


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_arrow_batches_are_capped_in_rows_and_bytes(backend):
    if backend == "compiled" and not compiled_available():
        pytest.skip("kdump._arrow is not built")
    path = str(ROOT / "fixtures/corpus/kafka-generated/v2-none/00000000000000000000.log")
    whole, _ = table(path, backend)
    opts = ReadOptions(columns=ALL, include_control=True, check_crcs=False, backend=backend, max_rows=7,
                       max_bytes=1024)
    batches = list(read_slices([SegmentSlice(path, "t", 0)], opts))
    assert len(batches) > 2
    # cut between Kafka batches, at the first Kafka batch that reaches a cap
    for rb in batches[:-1]:
        rows = rb.to_pylist()
        before_last = [r for r in rows if r["position"] != rows[-1]["position"]]
        data = sum(len(r["key"] or b"") + len(r["value"] or b"") for r in before_last)
        assert len(before_last) < 7 and data < 1024
    assert pa.Table.from_batches(batches) == whole


def test_projection_builds_only_requested_columns():
    path = str(ROOT / "fixtures/generated/v2-none-createtime/00000000000000000000.log")
    full, _ = table(path, "auto")
    only, _ = table(path, "auto", columns=("value", "offset"))
    assert only.column_names == ["value", "offset"]
    assert only == full.select(["value", "offset"])


def test_small_segments_share_arrow_batches(tmp_path):
    src = ROOT / "fixtures/generated/v2-none-createtime"
    slices = []
    for i in range(5):
        d = tmp_path / f"t-{i}"
        shutil.copytree(src, d)
        slices.append(SegmentSlice(str(next(d.glob("*.log"))), "t", i))
    batches = list(read_slices(slices, ReadOptions(columns=("partition", "offset"))))
    assert len(batches) == 1
    assert sorted(set(batches[0].column("partition").to_pylist())) == [0, 1, 2, 3, 4]


def test_export_tasks_are_balanced_over_the_cores():
    """8 partitions of 16 + 16 + 5 MiB segments: Spark's packing for 2 cores gives tasks of 118, 127, 118 and
    29 MiB with their open costs (one core runs 236 MiB); the export plan takes the packing that ends first
    when tasks go to the first free core (4 of 98 MiB)."""
    from kdump.spark.plan import SegmentFile, balanced_tasks, plan_tasks
    segs = [SegmentFile(f"t{p}", 0, base, f"/x/t{p}-0/{base:020d}.log", size)
            for p in range(8) for base, size in ((0, 16 << 20), (1000, 16 << 20), (2000, 5 << 20))]

    def end_time(tasks, cores):
        loads = [0] * cores
        for t in tasks:
            loads[loads.index(min(loads))] += t.cost
        return max(loads)
    spark_plan = plan_tasks(segs, parallelism=2)
    balanced = balanced_tasks(segs, cores=2)
    assert end_time(balanced, 2) < 0.9 * end_time(spark_plan, 2)
    assert sorted(s.location for t in balanced for s in t.slices) == sorted(s.location for s in segs)
