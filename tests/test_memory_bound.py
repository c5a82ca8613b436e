"""Issue 22 item 2: memory bounded by design in every command that reads records.

The documented bound (README, "Memory"): a command's peak RSS is at most MEMORY_BEYOND_DATA (256 MiB) beyond the
batch data it must hold at once -- the batch being read, as stored and decompressed (each at most
--max-batch-bytes; a decompression bomb is refused at about 1.1 times the limit) and, for convert, the records
of the batch being written (refused above the record limit) -- whatever count of records or headers a batch
declares. Each command runs in a fresh subprocess (tests/support/hostile.py: RECORD_COMMANDS, peak_rss) on
the small hostile structures of the issue, built here in a few seconds, on both backends where the paths differ.
Where a structure of the issue's size (10 M records) would take minutes, the test shows instead that memory does
not grow with the record count beyond the data itself (1 M against 4 M records).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatch
from kafka.record.legacy_records import LegacyRecordBatch
from support import hostile as H

from kdump import codec as C
from kdump.convert import engine
from kdump.convert.output import ByteCounter
from kdump.format import layout as L
from kdump.format import limits
from kdump.read.segment import SegmentReader

ROOT = Path(__file__).resolve().parent.parent
NAME = "00000000000000000000.log"
MiB = 1 << 20
MEMORY_BEYOND_DATA = 256  # MiB: the documented bound beyond the batch data a command must hold

# every command that reads records, on a batch of one record declaring 10 M headers (refused: exit 1)
ALL_COMMANDS = list(H.RECORD_COMMANDS)


def _env(backend: str) -> dict:
    env = {"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if backend == "pure":
        env["KDUMP_PURE_PYTHON"] = "1"
    return env


@pytest.fixture(params=["compiled", "pure"])
def backend_env(request):
    """The environment of a child process on the compiled path or on the pure-Python one."""
    if request.param == "compiled":
        from kdump import _backend
        if not _backend.COMPILED_AVAILABLE:
            if os.environ.get("CI") == "true" or os.environ.get("KDUMP_REQUIRE_COMPILED") in ("1", "true", "yes"):
                pytest.fail("the compiled extensions are not built")
            pytest.skip("the compiled extensions are not built")
    return _env(request.param)


def _segment(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name / NAME
    path.parent.mkdir()
    path.write_bytes(data)
    return path


def _payload_mib(batch: bytes) -> float:
    """The decompressed records of a zstd magic-2 batch (the data a reader must hold), in MiB."""
    return len(C.decompress(C.ZSTD, batch[L.V2_RECORD_BATCH_OVERHEAD:], magic=2, limit=1 << 31)) / MiB


def _run(command: str, path: Path, tmp_path: Path, env: dict, max_batch_bytes: int | None = None):
    out = tmp_path / "out" / command / path.parent.name
    return H.peak_rss(H.command_argv(command, path, out, max_batch_bytes), env)


# --- the builders are what they say (checked with kafka-python's record module) ------------------------------

def test_the_hostile_builders_give_what_kafka_reads():
    batch = DefaultRecordBatch(bytearray(H.sequential_records_batch(300, C.NONE, headers=3)))
    records = list(batch)
    assert [r.offset for r in records] == list(range(300))
    assert all(r.key is None and r.value is None and r.headers == [("", b"")] * 3 for r in records)
    bomb = DefaultRecordBatch(bytearray(H.headers_batch([5, 0, 2], C.NONE)))
    assert [len(r.headers) for r in bomb] == [5, 0, 2]
    wrapper = H.sequential_legacy_wrapper(1000)
    inner = list(LegacyRecordBatch(bytearray(wrapper), 1))
    assert [r.offset for r in inner] == list(range(1000))


# --- the header bombs of the issue ---------------------------------------------------------------------------

@pytest.mark.parametrize("command", ALL_COMMANDS)
def test_a_record_of_10_million_headers_is_refused_within_the_bound(tmp_path, command):
    # before: 2.4 GB as JSON, 836 MB as text, 825 MB in stats, 1.5 GB in salvage
    data = H.headers_batch([10_000_000])
    path = _segment(tmp_path, "headers-10M", data)
    code, peak = _run(command, path, tmp_path, _env("compiled"))
    assert code in (0, 1), command
    assert peak <= MEMORY_BEYOND_DATA + _payload_mib(data), f"{command}: {peak:.0f} MiB"


@pytest.mark.parametrize("command", ["dump-text", "dump-json", "stats", "salvage", "convert-magic-1"])
def test_a_record_of_20_million_headers_on_both_backends(tmp_path, backend_env, command):
    # before: 1.65 GB as text, 1.63 GB in stats
    data = H.headers_batch([20_000_000])
    path = _segment(tmp_path, "headers-20M", data)
    code, peak = _run(command, path, tmp_path, backend_env)
    assert code == 1, command  # above MAX_RECORD_HEADERS: refused, as the error says
    assert peak <= MEMORY_BEYOND_DATA + _payload_mib(data), f"{command}: {peak:.0f} MiB"


@pytest.mark.parametrize("command", ["dump-json", "salvage", "convert-magic-0", "convert-magic-2", "spark-reader"])
def test_headers_spread_over_records_under_the_limit(tmp_path, backend_env, command):
    # 8 records of 262,143 headers: 2 M headers that each record may hold. Before: salvage took 830 MB on 40 of them
    data = H.headers_batch([limits.MAX_RECORD_HEADERS - 1] * 8)
    path = _segment(tmp_path, "headers-8x262143", data)
    code, peak = _run(command, path, tmp_path, backend_env)
    assert code == 0, command
    assert peak <= MEMORY_BEYOND_DATA + _payload_mib(data), f"{command}: {peak:.0f} MiB"


# --- millions of records: memory does not grow with the count --------------------------------------------------

@pytest.mark.parametrize("command", ["salvage", "dump-json", "stats"])
def test_memory_does_not_grow_with_the_record_count(tmp_path, command):
    # 10 M empty records in one zstd batch took 2.1 GB in salvage (its read-back decoded the batch whole), about
    # 200 bytes a record; now the records cost their bytes (7-9 each) and a chunk of objects
    small, large = (H.sequential_records_batch(n) for n in (1_000_000, 4_000_000))
    env = _env("compiled")
    peaks = {}
    for name, data in (("small", small), ("large", large)):
        code, peaks[name] = _run(command, _segment(tmp_path, name, data), tmp_path, env)
        assert code == 0, (command, name)
    grown = peaks["large"] - peaks["small"]
    data_grown = _payload_mib(large) - _payload_mib(small)  # about 23 MiB for 3 M more records
    assert grown <= 2 * data_grown + 16, f"{command}: {peaks} MiB, data {data_grown:.0f} MiB more"
    assert peaks["large"] <= MEMORY_BEYOND_DATA + _payload_mib(large)


def test_convert_refuses_an_output_batch_past_the_record_limit(tmp_path):
    # 10 M records of 7 bytes are 340 MB of magic-1 messages: built whole before (541 MB, then the read-back
    # failed); now refused where the records outgrow the limit. A limit of 1 MiB shows it on 100,000 records.
    path = _segment(tmp_path, "records", H.sequential_records_batch(100_000))
    options = engine.ConvertOptions(to_magic=1, record_limit=MiB, recompress={C.ZSTD: C.GZIP})
    with SegmentReader(path) as reader, pytest.raises(engine.ConversionRefused) as refused:
        engine.Converter(options, ByteCounter()).convert(reader)
    message = str(refused.value)
    assert refused.value.position == 0 and "above the limit of 1,048,576 bytes" in message, message
    assert "--recompress CODEC=none" in message


# --- decompression bombs in legacy wrappers, kept errors ----------------------------------------------------------

@pytest.mark.parametrize("command", ["dump-text", "dump-json", "salvage", "spark-reader", "groups", "stats"])
def test_bombs_in_legacy_wrappers_cost_one_limit_however_many(tmp_path, backend_env, command):
    # four magic-1 gzip wrappers of 256 MiB of zeros each (about 250 KB each). Before, each error kept for the
    # report held its decompressed 1.1 x limit: four took 1.1 GB in a text dump, 2.1 GB as JSON at the default limit
    path = _segment(tmp_path, "bombs", H.legacy_wrapper_bomb(256 * MiB) * 4)
    limit = 64 * MiB
    takes_limit = H.RECORD_COMMANDS[command][1]
    code, peak = _run(command, path, tmp_path, backend_env, limit if takes_limit else None)
    assert code in (0, 1), command
    held = 1.1 * (limit if takes_limit else H.DEFAULT_LIMIT) / MiB  # one bomb, up to the limit
    assert peak <= MEMORY_BEYOND_DATA + held, f"{command}: {peak:.0f} MiB"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
