"""convert of units holding more records than a chunk (a wrapper of millions of inner messages, a compressed
magic-2 batch written as one wrapper): taken a chunk at a time, with exactly the output, report and proof of
the whole-unit path. The chunk is made small here so that ordinary fixtures take that path."""
from __future__ import annotations

import pytest

from kdump import codec as _codec
from kdump.convert import ConvertOptions
from kdump.convert import engine
from kdump.convert.files import convert_segment
from kdump.format.legacy_builder import legacy_wrapper
from kdump.format.types import TimestampType
from kdump.format.v2_builder import RecordBatchBuilder

T0 = 1_700_000_000_000


def _legacy_input(magic: int, codec: int, ts_type=TimestampType.CREATE_TIME, append_time=None) -> bytes:
    messages = [(i, T0 + i * 7 % 13, None if i % 9 == 0 else b"k%d" % i, b"value %d" % i) for i in range(50)]
    return legacy_wrapper(magic, codec, messages, ts_type, append_time) + legacy_wrapper(
        magic, codec, [(50 + i, T0, b"x", None) for i in range(3)], ts_type, append_time)


def _v2_input(codec: int) -> bytes:
    b = RecordBatchBuilder(base_offset=0, codec=codec)
    for i in range(50):
        b.append(i, T0 + i % 5, None if i % 4 == 0 else b"k%d" % i, b"v" * (i % 11), [("h", b"x")] if i % 3 else [])
    return b.build()


CASES = [
    ("m1-gzip to 2", lambda: _legacy_input(1, _codec.GZIP), ConvertOptions(2)),
    ("m1-gzip to 0", lambda: _legacy_input(1, _codec.GZIP), ConvertOptions(0)),
    ("m1-gzip to 1 lz4", lambda: _legacy_input(1, _codec.GZIP), ConvertOptions(1, compression=_codec.LZ4)),
    ("m1-gzip to 1 none", lambda: _legacy_input(1, _codec.GZIP), ConvertOptions(1, compression=_codec.NONE)),
    ("m1-gzip to 1 copied", lambda: _legacy_input(1, _codec.GZIP), ConvertOptions(1)),
    ("m1-lat to 0", lambda: _legacy_input(1, _codec.SNAPPY, TimestampType.LOG_APPEND_TIME, T0 + 99),
     ConvertOptions(0)),
    ("m0-gzip to 1", lambda: _legacy_input(0, _codec.GZIP), ConvertOptions(1)),
    ("v2-gzip to 1", lambda: _v2_input(_codec.GZIP), ConvertOptions(1)),
    ("v2-lz4 to 0", lambda: _v2_input(_codec.LZ4), ConvertOptions(0)),
]


def _convert(tmp_path, name: str, data: bytes, options: ConvertOptions):
    src = tmp_path / name / "in" / "00000000000000000000.log"
    src.parent.mkdir(parents=True)
    src.write_bytes(data)
    out = tmp_path / name / "out" / "00000000000000000000.log"
    out.parent.mkdir()
    result = convert_segment(str(src), str(out), options)
    return out.read_bytes(), result.stats.to_dict(), result.verified


@pytest.mark.parametrize("label, make, options", CASES, ids=[c[0] for c in CASES])
def test_chunked_units_give_the_whole_unit_output(tmp_path, monkeypatch, backend, label, make, options):
    data = make()
    whole = _convert(tmp_path, "whole", data, options)
    monkeypatch.setattr(engine, "CHUNK", 7)
    per_wrapper = []  # how many chunks each wrapper's inner messages came in
    real = engine.Converter._inner_chunks

    def counted(self, batch, limit):
        per_wrapper.append(0)
        for cols in real(self, batch, limit):
            per_wrapper[-1] += 1
            yield cols

    monkeypatch.setattr(engine.Converter, "_inner_chunks", counted)
    chunked = _convert(tmp_path, "chunked", data, options)
    assert chunked == whole
    # the 50-message wrapper in 8 chunks of at most 7, the 3-message one in one
    assert per_wrapper == ([] if label.startswith("v2") else [8, 1])
    assert whole[1]["input"]["records"] == (50 if label.startswith("v2") else 53)
