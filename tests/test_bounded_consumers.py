"""Bounded memory in every consumer that reads records (issue 11, point 9), beyond dump and verify
(tests/test_hostile.py): stats, the replays, the producer state machine's marker read, a legacy wrapper's
first offset (salvage, stats) and the Spark source. Each reads a batch's records in chunks, so a small batch
declaring a million records costs its decompressed payload plus a constant, not an object per record.

Memory is the peak RSS of a fresh subprocess (:func:`test_hostile.peak_rss_mb`); the bounds sit between
what the chunked reads take and what the whole-batch reads took (in the comments), so that a consumer going
back to whole batches fails here.
"""
import subprocess
import sys

import pytest
from support import hostile as H
from test_hostile import NAME, ROOT, peak_rss_mb

from kdump import codec as C

pa = pytest.importorskip("pyarrow")

from kdump.spark import arrow as arrow_module  # noqa: E402
from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices  # noqa: E402
from kdump.spark.schema import ALL_COLUMNS, arrow_schema  # noqa: E402
from kdump.write.segment import RecordBatchBuilder  # noqa: E402

ALL = tuple(ALL_COLUMNS)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    d = tmp_path_factory.mktemp("bounded")
    files = {"records": H.many_records_batch(1_000_000), "few-records": H.many_records_batch(300_000),
             "wrapper": H.legacy_wrapper_of(500_000), "markers": H.control_batch_of(1_000_000)}
    for name, data in files.items():
        (d / name).mkdir()
        (d / name / NAME).write_bytes(data)
    return d


@pytest.mark.parametrize("case,bound", [("records", 90), ("markers", 100), ("wrapper", 110)])
def test_stats_reads_records_in_chunks(hostile, case, bound):
    # whole batches took 194 MB (records), 390 MB (markers: the producer state read them all for its
    # marker), 170 MB (wrapper: counted through one Record object per inner message)
    code, peak = peak_rss_mb("stats", "--format", "json", hostile / case / NAME)
    assert code == 0
    assert peak < bound, f"{peak:.0f} MB"


@pytest.mark.parametrize("command", ["groups", "txn-state", "metadata"])
def test_replays_read_records_in_chunks_and_count_what_they_skip(hostile, command):
    # whole batches and one Skipped per undecodable record: about 155 MB for 300,000 empty records
    code, peak = peak_rss_mb(command, hostile / "few-records" / NAME)
    assert code == 1  # every record is skipped (null keys): exit 1, with a count
    assert peak < 80, f"{peak:.0f} MB"


def test_replay_lists_the_first_skipped_records_and_counts_all(hostile):
    import json
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-m", "kdump", "groups", "--format", "json",
                          str(hostile / "few-records" / NAME)], capture_output=True, text=True, env=env)
    assert res.returncode == 1
    data = json.loads(res.stdout)
    assert len(data["skipped"]) == 1000 and data["skippedNotListed"] == 299_000
    assert data["skipped"][0]["offset"] == 0  # the records' own offsets (all deltas 0 in this batch)
    errors = res.stderr.splitlines()
    assert "kdump: ... 299000 more skipped record(s) or stretch(es) not listed" in errors
    assert any("300000 record(s) or stretch(es) skipped" in line for line in errors)


def test_salvage_of_a_large_wrapper_does_not_decode_it_whole_for_its_first_offset(hostile, tmp_path):
    # LegacyBatch.base_offset decoded (and kept) the whole wrapper: 194 MB
    # (its inner offsets are all 0, so verify --deep has an error for it and salvage leaves it out: exit 1)
    code, peak = peak_rss_mb("salvage", "-o", tmp_path / "out" / NAME, hostile / "wrapper" / NAME)
    assert code == 1
    assert peak < 110, f"{peak:.0f} MB"


_SPARK_READ = ("import sys; from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices; "
               "print(max(rb.num_rows for rb in read_slices([SegmentSlice(sys.argv[1], None, None)], ReadOptions())))")


def _peak_reading(segment) -> tuple[int, float, int]:
    """(exit code, peak RSS in MB, rows of the largest Arrow batch) of a fresh process reading ``segment`` with
    the Spark source's reader."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    measure = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
               "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, r.stdout.strip())")
    out = subprocess.run([sys.executable, "-c", measure, sys.executable, "-c", _SPARK_READ, str(segment)],
                         capture_output=True, text=True, env=env, check=True).stdout.split()
    return int(out[0]), int(out[1]) / 1024, int(out[2])


def test_spark_reader_of_a_large_wrapper_takes_bounded_memory(hostile):
    # one Arrow batch of the whole wrapper, through whole-wrapper columns, took 226 MB more than a small read.
    # Measured against the same read of a small sound segment, so that what the imports take (pyarrow loads
    # pandas on first use where it is installed: about 50 MB) is not counted as the wrapper's.
    code, peak, rows = _peak_reading(hostile / "wrapper" / NAME)
    small_code, baseline, _ = _peak_reading(ROOT / "fixtures/generated/v1-gzip-createtime" / NAME)
    assert code == small_code == 0
    assert rows <= ReadOptions().max_rows + arrow_module.RECORDS_PER_CHUNK
    assert peak - baseline < 90, f"{peak:.0f} MB against {baseline:.0f} MB for a small segment"


# --- the Spark source cuts a Kafka batch of many records into Arrow batches of bounded rows ------------

def _segment(tmp_path, data: bytes) -> str:
    path = tmp_path / NAME
    path.write_bytes(data)
    return str(path)


def _arrow(path, backend, **kw):
    opts = ReadOptions(columns=ALL, include_control=True, check_crcs=False, backend=backend, **kw)
    damage = []
    batches = list(read_slices([SegmentSlice(path, "t", 0)], opts,
                               on_damage=lambda sl, e: damage.append((e.code, e.position, e.lost_offsets().first))))
    return batches, damage


def _v2_batch(n: int, bad_header_at: int | None = None) -> bytes:
    b = RecordBatchBuilder(base_offset=100, codec=C.LZ4)
    for i in range(n):
        headers = [(b"\xff" if i == bad_header_at else b"h", b"x")] if i % 4 else []
        b.append(100 + 2 * i, H.T0 + i, b"k%d" % i if i % 3 else None, b"v" * (i % 50), headers=headers)
    return b.build()


@pytest.mark.parametrize("backend", ["compiled", "python"])
@pytest.mark.parametrize("case", ["sound", "header-key-not-utf8", "records-remaining"])
def test_spark_arrow_batches_are_bounded_within_a_kafka_batch(tmp_path, monkeypatch, backend, case):
    """With chunks of 7 records and at most 10 rows an Arrow batch, a Kafka batch of 100 records comes in
    Arrow batches of at most 16 rows, whose records are those of the whole batch (the reference: one chunk);
    on the compiled path a chunk it does not take (a header key that is not UTF-8) goes through kdump's
    decoder, and damage in a later chunk is reported with the first offset lost."""
    if backend == "compiled":
        pytest.importorskip("kdump.spark._arrow")
    data = _v2_batch(100, bad_header_at=57 if case == "header-key-not-utf8" else None)
    if case == "records-remaining":  # bytes after the records the header declares
        data = H.v2_batch(H.EMPTY_RECORD * 30 + b"\x00\x00", count=30)
    path = _segment(tmp_path, data)
    reference, reference_damage = _arrow(path, backend)
    assert len(reference) == 1
    monkeypatch.setattr(arrow_module, "RECORDS_PER_CHUNK", 7)
    batches, damage = _arrow(path, backend, max_rows=10)
    assert len(batches) > 1
    assert all(rb.num_rows <= 10 + 7 - 1 for rb in batches)
    assert pa.Table.from_batches(batches, schema=arrow_schema(ALL)) == \
        pa.Table.from_batches(reference, schema=arrow_schema(ALL))
    assert damage == reference_damage
    if case == "records-remaining":
        assert damage == [("records-remaining", 0, 1)]  # every record read (all at offset 0)


@pytest.mark.parametrize("backend", ["compiled", "python"])
def test_spark_chunked_damage_loses_the_offsets_after_the_last_record_read(tmp_path, monkeypatch, backend):
    if backend == "compiled":
        pytest.importorskip("kdump.spark._arrow")
    path = _segment(tmp_path, H.v2_batch(H.EMPTY_RECORD * 20, count=25, base_offset=40))  # five records missing
    monkeypatch.setattr(arrow_module, "RECORDS_PER_CHUNK", 4)
    batches, damage = _arrow(path, backend, max_rows=3)
    assert sum(rb.num_rows for rb in batches) == 20
    # offset deltas are all 0 in this batch, so every record read has offset 40 and the loss starts at 41
    assert damage == [("record-truncated", 0, 41)]
