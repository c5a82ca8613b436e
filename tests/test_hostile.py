"""Bounded under hostile input (issue 11, point 9): small files that declare millions of records, and
decompression bombs, are read in bounded memory; a batch's records come in chunks that add up to exactly
what a whole-batch read gives; an empty batch holding a record and a varlong above 64 bits are treated as
Kafka treats them.

Memory is the peak RSS of a fresh subprocess (``resource.getrusage(RUSAGE_CHILDREN)`` read by a wrapper
process around it, so that no earlier child counts). The hostile files come from tests/support/hostile.py.
"""
import json
import subprocess
import sys

import pytest

from corpus import CORPUS
from kdump import codec as C
from kdump.format.names import CODEC_NAMES
from support.cli import run_cli
from kdump.format import columns as columns_module
from kdump.read.segment import SegmentReader
from kdump.write.segment import RecordBatchBuilder, legacy_wrapper
from support import hostile as H

ROOT = CORPUS.parent.parent
NAME = "00000000000000000000.log"
MB = 1 << 20

_MEASURE = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
            "stderr=subprocess.PIPE); print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def peak_rss_mb(*args) -> tuple[int, float]:
    """(exit code, peak RSS in MB) of ``python -m kdump ARGS`` run in a fresh process."""
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, "-m", "kdump", *map(str, args)],
                         capture_output=True, text=True, env=env, check=True).stdout.split()
    return int(out[0]), int(out[1]) / 1024


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    files = {"records": H.many_records_batch(2_000_000), "wrapper": H.legacy_wrapper_of(500_000)}
    for codec in (C.GZIP, C.SNAPPY, C.LZ4, C.ZSTD):
        files[f"bomb-{CODEC_NAMES[codec]}"] = H.bomb_batch(96 * MB, codec)
    for name, data in files.items():
        (d / name).mkdir()
        (d / name / NAME).write_bytes(data)
    return d


@pytest.mark.parametrize("command", [["dump", "--deep-iteration", "--print-data-log"],
                                     ["dump", "--deep-iteration", "--print-data-log", "--format", "json"],
                                     ["verify", "--deep"]], ids=["text", "json", "verify"])
@pytest.mark.parametrize("case", ["records", "wrapper"])
def test_millions_of_records_in_a_small_batch_take_bounded_memory(hostile_dir, command, case):
    # before: 2 M empty records took about 1 GB in a text dump, 2.2 GB as JSON, 350 MB in verify --deep
    code, peak = peak_rss_mb(*command, hostile_dir / case / NAME)
    assert code in (0, 1)
    assert peak < 160, f"{peak:.0f} MB"


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_decompression_bomb_is_refused_within_the_limit(hostile_dir, codec):
    limit = 64 * MB
    code, peak = peak_rss_mb("dump", "--deep-iteration", "--max-batch-bytes", limit, hostile_dir / f"bomb-{codec}" / NAME)
    assert code == 1
    # 1.2 x the limit plus the interpreter and the compressed batch (gzip took twice the limit before)
    assert peak < 1.2 * 64 + 45, f"{peak:.0f} MB"


# --- chunks add up to the whole batch, on both decoder paths ---------------------------------------------

def batches_of(tmp_path, data: bytes):
    path = tmp_path / NAME
    path.write_bytes(data)
    with SegmentReader(path) as reader:
        return list(reader)


def columns_equal(chunks, whole):
    fields = ("offsets", "timestamps", "attributes", "key_len", "value_len", "headers", "sizes")
    for name in fields:
        assert [x for c in chunks for x in getattr(c, name)] == getattr(whole, name)[:whole.count], name
    assert [c.key(i) for c in chunks for i in range(c.count)] == [whole.key(i) for i in range(whole.count)]
    assert [c.value(i) for c in chunks for i in range(c.count)] == [whole.value(i) for i in range(whole.count)]
    assert sum(c.count for c in chunks) == whole.count
    assert repr(chunks[-1].error) == repr(whole.error)
    assert all(c.error is None for c in chunks[:-1]) and chunks[-1].resume_at is None


def v2_batch(n: int, codec=C.NONE) -> bytes:
    b = RecordBatchBuilder(base_offset=100, codec=codec)
    for i in range(n):
        b.append(100 + 2 * i, H.T0 + i, b"k%d" % i if i % 3 else None, b"v" * i, headers=[("h", b"x")] if i % 4 else [])
    return b.build()


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("codec", [C.NONE, C.ZSTD])
@pytest.mark.parametrize("chunk", [1, 3, 10, 11, 1000])
def test_v2_chunks_are_the_whole_batch(tmp_path, codec, chunk):
    (batch,) = batches_of(tmp_path, v2_batch(10, codec))
    columns_equal(list(batch.column_chunks(1 << 24, chunk)), batch.columns(1 << 24))


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("damage", ["remaining", "truncated", "count"])
def test_v2_chunk_errors_are_the_whole_batch_errors(tmp_path, damage):
    payload = H.EMPTY_RECORD * 10
    if damage == "remaining":
        data = H.v2_batch(payload + b"\x00\x00", count=10)
    elif damage == "truncated":
        data = H.v2_batch(payload[:-3], count=10)
    else:
        data = H.v2_batch(payload, count=12, last_offset_delta=11)
    (batch,) = batches_of(tmp_path, data)
    for chunk in (1, 4, 10, 20):
        chunks = list(batch.column_chunks(1 << 24, chunk))
        columns_equal(chunks, batch.columns(1 << 24))
        assert chunks[-1].error.code == batch.columns(1 << 24).error.code


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("wrapper_offset", [None, 0])
def test_legacy_wrapper_chunks_are_the_whole_wrapper(tmp_path, magic, wrapper_offset):
    msgs = [(50 + i, -1 if magic == 0 else H.T0 + i, b"k", b"v%d" % i) for i in range(10)]
    data = legacy_wrapper(magic, C.GZIP, msgs, wrapper_offset=wrapper_offset)
    whole = batches_of(tmp_path, data)[0].columns(1 << 24)
    for chunk in (1, 3, 10, 100):
        columns_equal(list(batches_of(tmp_path, data)[0].column_chunks(1 << 24, chunk)), whole)



@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("path", ["kafka-generated/v2-compacted", "kafka-generated/v1-gzip-createtime",
                                  "kafka-generated/v2-transactional", "kafka-generated/v0-gzip"])
@pytest.mark.parametrize("flags", [["--deep-iteration", "--print-data-log"], ["--deep-iteration", "--format", "json"],
                                   ["--deep-iteration", "--from-offset", 7], ["--deep-iteration", "--from-time", H.T0]])
def test_dump_in_chunks_prints_what_a_whole_batch_read_prints(monkeypatch, path, flags):
    log = CORPUS / path / NAME
    whole = run_cli("dump", *flags, log)
    monkeypatch.setattr(columns_module, "RECORDS_PER_CHUNK", 3)
    chunked = run_cli("dump", *flags, log)
    if "json" in flags:
        assert [json.loads(x) for x in chunked.stdout.splitlines()] == [json.loads(x) for x in whole.stdout.splitlines()]
    assert chunked.stdout == whole.stdout
    assert (chunked.stderr, chunked.exit_code) == (whole.stderr, whole.exit_code)


@pytest.mark.parametrize("path", ["kafka-generated/v2-compacted", "kafka-generated/v1-gzip-createtime",
                                  "kafka-generated/v2-transactional", "kafka-generated/corrupt/v2-crc-mismatch"])
def test_verify_in_chunks_finds_what_a_whole_batch_read_finds(monkeypatch, path):
    log = CORPUS / path / NAME
    whole = run_cli("verify", "--deep", log)
    monkeypatch.setattr(columns_module, "RECORDS_PER_CHUNK", 3)
    chunked = run_cli("verify", "--deep", log)
    assert (chunked.stdout, chunked.exit_code) == (whole.stdout, whole.exit_code)


# --- what Kafka does with odd batches ---------------------------------------------------------------
@pytest.mark.usefixtures("backend")
def test_empty_batch_holding_a_record(tmp_path):
    path = tmp_path / NAME
    path.write_bytes(H.empty_batch_holding_a_record())
    dumped = run_cli("dump", "--deep-iteration", path)
    assert dumped.exit_code == 0 and "count: 0 " in dumped.stdout and "| offset" not in dumped.stdout  # as Kafka
    verified = run_cli("verify", "--deep", path)
    assert verified.exit_code == 1
    assert f"records-remaining at byte 0 offset 0: the batch declares 0 records, yet {len(H.EMPTY_RECORD)} bytes " \
           "follow its header" in verified.stdout


@pytest.mark.usefixtures("backend")
def test_varlong_above_64_bits_keeps_its_low_64_as_java_does(tmp_path):
    # The delta's 10 bytes are ff x 9, 7f: Java's readVarlong keeps bit 63 from the 10th byte's lowest bit,
    # so the unsigned value is 2**64 - 1, zig-zag -2**63; the timestamp is base + delta in long arithmetic.
    path = tmp_path / NAME
    path.write_bytes(H.varlong_timestamp_batch())
    expected = H.T0 - 2 ** 63  # inside the long range: no wrap
    dumped = run_cli("dump", "--deep-iteration", path)
    assert f"| offset: 0 CreateTime: {expected} " in dumped.stdout and dumped.exit_code == 0
    verified = run_cli("verify", "--deep", path)
    assert "max-timestamp-mismatch" in verified.stdout and verified.exit_code == 1
