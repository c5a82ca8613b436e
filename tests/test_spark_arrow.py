"""Segments to Arrow without Spark (kdump.spark.arrow): the compiled builder, its pure twin and one record at a
time against each other and against the records encoded, the schema Spark checks, the batch caps, and values
against kdump's own reader."""
import itertools
import os
import random
import shutil
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")

from kdump import codec as C  # noqa: E402
from kdump.format.types import TimestampType  # noqa: E402
from kdump.format.v2_builder import RecordBatchBuilder, encode_record  # noqa: E402
from kdump.spark import arrow as arrow_module  # noqa: E402
from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices  # noqa: E402
from kdump.spark.builder import PyColumnBuilder  # noqa: E402
from kdump.spark.schema import ALL_COLUMNS, arrow_schema, default_columns  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ALL = tuple(ALL_COLUMNS)


def compiled_available():
    try:
        import kdump.spark._arrow  # noqa: F401
        return True
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but the compiled module kdump.spark._arrow is not built")
        return False


def segments(*dirs):
    out = []
    for d in dirs:
        for root, _, files in os.walk(ROOT / "fixtures" / d):
            out += [os.path.join(root, f) for f in sorted(files) if f.endswith(".log") and f[:-4].isdigit()]
    return sorted(out)


# The three ways a record reaches the Arrow buffers: the compiled builder decoding the bytes itself, its pure
# twin copying what kdump's record decoder gives, and one record at a time through add_record (the path of
# magic 0/1 records and of what add_v2 does not take): here the pure builder with an add_v2 that takes nothing.
RECORD_AT_A_TIME = "record-at-a-time"
BUILDERS = ("compiled", "python", RECORD_AT_A_TIME)


def read(path, backend, columns=ALL, **kw):
    """(Arrow batches, damage reports) of the segment at ``path`` read with ``backend`` (one of BUILDERS)."""
    opts = ReadOptions(columns=columns, include_control=True, check_crcs=False,
                       backend="python" if backend == RECORD_AT_A_TIME else backend, **kw)
    damage = []
    with pytest.MonkeyPatch.context() as mp:
        if backend == RECORD_AT_A_TIME:
            mp.setattr(PyColumnBuilder, "add_v2", lambda self, *args: -1)
        batches = list(read_slices([SegmentSlice(path, "t", 0)], opts, on_damage=lambda sl, e: damage.append(
            (e.code, e.position))))
    return batches, damage


def table(path, backend, columns=ALL, **kw):
    batches, damage = read(path, backend, columns, **kw)
    return pa.Table.from_batches(batches, schema=arrow_schema(columns)), damage


def raw_buffers(batches):
    """Every buffer of every column (children included), as bytes: what the builders wrote, not only the values
    they mean (Arrow's equality ignores, e.g., the bytes under a null)."""
    return [[None if b is None else b.to_pybytes() for b in column.buffers()] for rb in batches for column in rb]


def assert_builders_agree(path, **kw):
    """The three builders give the same buffers and the same damage reports; returns the table."""
    backends = BUILDERS if compiled_available() else BUILDERS[1:]
    (first, first_damage), *others = [read(path, b, **kw) for b in backends]
    for batches, damage in others:
        assert raw_buffers(batches) == raw_buffers(first)
        assert damage == first_damage
    return pa.Table.from_batches(first, schema=arrow_schema(ALL)), first_damage


@pytest.mark.parametrize("path", segments("corpus", "generated", "corrupt"), ids=lambda p: os.path.relpath(p, ROOT))
def test_builders_agree_on_every_segment(path):
    assert_builders_agree(path)


def test_builders_agree_on_damaged_records(tmp_path):
    """Random bytes changed inside uncompressed magic-2 batches: the compiled builder gives up on what it
    does not take and kdump's decoder decides, so the outputs (and the damage reports) stay equal."""
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
        _, damage = assert_builders_agree(str(target))
        differing += damage != []
    assert differing > 10  # the mutations did hit records


T0 = 1_700_000_000_000
US_LIMIT = (2**63 - 1) // 1000  # |ms| above this has no microsecond timestamp in int64: null


def _random_bytes(rng, utf8=False):
    if rng.random() < 0.2:
        return None
    text = "".join(rng.choice("abc\u00e9\u4e2d\U0001f600") for _ in range(rng.randrange(0, 6)))
    return text.encode() if utf8 else bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))


def _random_batch(rng, base_offset):
    """(batch bytes, the rows Spark's Kafka source would give for it): records with null, empty and random keys,
    values and headers (some header keys not UTF-8), timestamp deltas up to 10-byte varints and beyond what
    int64 microseconds hold; compressed or not, CreateTime or LogAppendTime. The rows are worked out from the
    values drawn, not by a reader."""
    codec = rng.choice([C.NONE, C.NONE, C.GZIP, C.LZ4])
    append_time = T0 + 5 if rng.random() < 0.25 else None
    b = RecordBatchBuilder(base_offset, codec=codec, delete_horizon_ms=T0,
                           timestamp_type=TimestampType.LOG_APPEND_TIME if append_time else TimestampType.CREATE_TIME,
                           log_append_time=append_time)
    rows, offset = [], base_offset
    for _ in range(rng.randrange(1, 40)):
        offset += rng.choice([0, 1, 1, 1, 7]) if rows else 0
        delta = rng.choice([0, 1, -1, 2**20, -(2**40)]) if rng.random() < 0.9 else \
            rng.choice([2**62, 2**62 - T0, -(2**62), US_LIMIT - T0, US_LIMIT + 1 - T0])  # 2**62: 10 varint bytes
        key, value = _random_bytes(rng), _random_bytes(rng)
        headers = []
        for _ in range(rng.choice([0, 0, 1, 3])):
            hkey = rng.choice([b"h", b"", "cl\u00e9".encode()]) if rng.random() < 0.95 else \
                rng.choice([b"k\xff", b"\xc3"])  # not UTF-8
            headers.append((hkey, _random_bytes(rng)))
        b.take(offset, T0, encode_record(offset - base_offset, delta, key, value, headers))
        ms = append_time if append_time is not None else T0 + delta
        rows.append({"offset": offset, "timestamp": ms * 1000 if -US_LIMIT <= ms <= US_LIMIT else None, "key": key,
                     "value": value, "headers": [{"key": k.decode("utf-8", "replace"), "value": v}
                                                 for k, v in headers] or None})
    return b.build(), rows


@pytest.mark.parametrize("chunk", [16384, 5])
def test_builders_give_the_records_encoded_in_fuzzed_batches(tmp_path, monkeypatch, chunk):
    """Fuzzed records, encoded by kdump's encoder: each builder gives the rows the values drawn make (the
    reference), in Kafka batches taken whole and in chunks of 5 records (add_v2 resuming where the chunk before
    it ended), and the three builders write the same buffers."""
    monkeypatch.setattr(arrow_module, "RECORDS_PER_CHUNK", chunk)
    rng = random.Random(chunk)
    for i in range(20):
        data, expected, base = [], [], 0
        for _ in range(rng.randrange(1, 6)):
            batch, rows = _random_batch(rng, base)
            data.append(batch)
            expected += rows
            base = rows[-1]["offset"] + 1
        path = tmp_path / f"{i:020d}.log"
        path.write_bytes(b"".join(data))
        got, damage = assert_builders_agree(str(path), max_rows=rng.choice([7, 1 << 17]))
        assert damage == []
        as_int = got.schema.set(got.schema.get_field_index("timestamp"), pa.field("timestamp", pa.int64()))
        names = ("offset", "timestamp", "key", "value", "headers")
        assert [{n: row[n] for n in names} for row in got.cast(as_int).to_pylist()] == expected


def test_compiled_builder_takes_exactly_the_header_keys_python_decodes():
    """The compiled builder copies a header key only when it is strict UTF-8 (else kdump's decoder and Java's
    replacement rules decide): its rule against Python's UTF-8 codec on every 1- and 2-byte key, and on 3- and
    4-byte keys around every boundary (overlongs, surrogates, above U+10FFFF, truncated sequences)."""
    if not compiled_available():
        pytest.skip("kdump.spark._arrow is not built")
    from kdump.spark._arrow import ColumnBuilder
    edges = sorted({0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC, 0xED,
                    0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF})
    keys = [bytes([a]) for a in range(256)] + [bytes([a, b]) for a in range(256) for b in range(256)]
    keys += [bytes(k) for k in itertools.product(edges, repeat=3)] + [bytes(k) for k in itertools.product(edges,
                                                                                                       repeat=4)]
    builder = ColumnBuilder(want_headers=True)
    wrong = []
    for key in keys:
        record = encode_record(0, 0, None, None, [(key, None)])
        taken = builder.add_v2(record, 0, len(record), 1, 0, T0, None) == 1
        try:
            key.decode("utf-8")
            valid = True
        except UnicodeDecodeError:
            valid = False
        if taken != valid:
            wrong.append(key)
    assert wrong == []


def test_the_backend_chooses_the_builder():
    """kdump._backend chooses the builder as it chooses every compiled twin (KDUMP_PURE_PYTHON=1, use()); the
    backend option of a read still asks for one by name."""
    from kdump import _backend
    from kdump.spark import builder
    previous = _backend.BACKEND
    try:
        _backend.use("python")
        assert builder.ColumnBuilder is PyColumnBuilder and type(builder.make_builder(ALL)) is PyColumnBuilder
        if compiled_available():
            from kdump.spark._arrow import ColumnBuilder
            assert type(builder.make_builder(ALL, "compiled")) is ColumnBuilder
            _backend.use("compiled")
            assert builder.ColumnBuilder is ColumnBuilder and type(builder.make_builder(ALL)) is ColumnBuilder
            assert type(builder.make_builder(ALL, "python")) is PyColumnBuilder
    finally:
        _backend.use(previous)


def test_arrow_schema_is_what_spark_checks():
    pytest.importorskip("pyspark")
    from pyspark.sql.pandas.types import to_arrow_schema
    from kdump.spark.schema import spark_schema
    for cols in (default_columns(), default_columns(True), default_columns(True, True)):
        assert arrow_schema(cols).equals(to_arrow_schema(spark_schema(cols), timezone="UTC"))


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_values_match_kdump_reader(backend):
    if backend == "compiled" and not compiled_available():
        pytest.skip("kdump.spark._arrow is not built")
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
        pytest.skip("kdump.spark._arrow is not built")
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


def _segment_without_index(directory, batches=200, per_batch=5):
    """A partition directory holding one segment of ``batches`` batches of ``per_batch`` 1 KB records, and no
    .index; the offsets written."""
    directory.mkdir(parents=True)
    with open(directory / "00000000000000000000.log", "wb") as f:
        for b in range(batches):
            builder = RecordBatchBuilder(b * per_batch)
            for o in range(b * per_batch, (b + 1) * per_batch):
                builder.append(o, 1_700_000_000_000 + o, None, b"%06d" % o * 170)
            f.write(builder.build())
    return list(range(batches * per_batch))


def _offsets_of(task_slices, backend):
    opts = ReadOptions(columns=("offset",), backend=backend)
    return [o for rb in read_slices(task_slices, opts) for o in rb.column("offset").to_pylist()]


def test_a_large_segment_without_index_is_cut_at_the_batch_boundaries_the_header_walk_finds(tmp_path, backend):
    """Issue 32, item 3: minPartitions (and maxPartitionBytes) cut a segment that has no .index: the cut points are
    batch starts found by the reader's header walk, and the slices read every record once."""
    from kdump.spark.plan import find_segments, plan_tasks
    written = _segment_without_index(tmp_path / "t-0")
    seg = find_segments([str(tmp_path / "t-0")])[0]
    tasks = plan_tasks([seg], parallelism=8, open_cost=0)  # minPartitions=8: the bytes split 8 ways
    assert len(tasks) >= 8
    per_task = [_offsets_of(t.slices, backend) for t in tasks]
    assert all(per_task) and [o for offs in per_task for o in offs] == written


def test_max_records_per_partition_cuts_each_partition_every_n_offsets(tmp_path, backend):
    """Issue 32, item 1: maxRecordsPerPartition, as Spark's Kafka source counts it (offsets): each task reads at most
    that many, a batch across a cut is read by both tasks, each taking its own records; bounds are kept."""
    from kdump.spark.plan import find_segments, plan_by_offsets
    written = _segment_without_index(tmp_path / "t-0")
    segs = find_segments([str(tmp_path / "t-0")])
    tasks = plan_by_offsets(segs, 37)
    per_task = [_offsets_of(t.slices, backend) for t in tasks]
    assert len(tasks) == -(-len(written) // 37)
    assert per_task == [written[i:i + 37] for i in range(0, len(written), 37)]
    bounded = plan_by_offsets(segs, 37, offset_ranges={segs[0].directory: (103, 500)})
    per_task = [_offsets_of(t.slices, backend) for t in bounded]
    assert per_task == [list(range(a, min(a + 37, 500))) for a in range(103, 500, 37)]


def test_max_records_per_partition_and_min_partitions_are_both_honoured(tmp_path, backend):
    """maxRecordsPerPartition with minPartitions, combined as Spark's KafkaOffsetRangeCalculator combines them: the
    ranges the first leaves (here 400, 400, 200 offsets of t-0 and 100 of u-0: 4 tasks) are cut again to reach
    minPartitions=8: a range whose share of the 1,100 offsets rounds to one task stays whole (the 200 and the 100),
    the two others share the 6 tasks left in proportion (3 each), each cut into equal parts by integer division."""
    from kdump.spark.plan import find_segments, plan_by_offsets
    t0 = _segment_without_index(tmp_path / "t-0", batches=200, per_batch=5)
    u0 = _segment_without_index(tmp_path / "u-0", batches=20, per_batch=5)
    segs = find_segments([str(tmp_path)])
    tasks = plan_by_offsets(segs, 400, min_tasks=8)
    per_task = [_offsets_of(t.slices, backend) for t in tasks]
    assert per_task == [t0[0:133], t0[133:266], t0[266:400], t0[400:533], t0[533:666], t0[666:800], t0[800:], u0]
    assert len(plan_by_offsets(segs, 400, min_tasks=3)) == 4  # already enough tasks: nothing more is cut
