"""The compiled renderers write numbers two digits at a time (kdump/render/_outbuf.pxd ``put_int``, issue 23 item 3):
every length of decimal, both signs and both ends of int64, the same bytes as ``str`` writes (the pure twins)."""
from __future__ import annotations

import pytest

from kdump import _backend
from kdump.format.columns import RecordColumns
from kdump.format.types import TimestampType
from kdump.render.jsonl import records_json_py
from kdump.render.kafka_text import render_v2_lines_py

pytestmark = pytest.mark.skipif(not _backend.COMPILED_AVAILABLE, reason="compiled modules not built")

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
NUMBERS = sorted({INT64_MIN, INT64_MAX, INT64_MIN + 1} | {s * (10**k + d) for k in range(19) for d in (-1, 0, 1)
                                                        for s in (1, -1)})


class _Batch:
    timestamp_type = TimestampType.CREATE_TIME
    base_offset = 0
    base_sequence = -1
    is_control = False


def _columns(numbers):
    cols = RecordColumns(b"k")
    for n in numbers:
        for name, value in (("offsets", n), ("timestamps", n), ("attributes", 0), ("key_pos", 0), ("key_len", 1),
                            ("value_pos", 0), ("value_len", -1), ("headers", ()), ("sizes", abs(n) % 2**31)):
            getattr(cols, name).append(value)
    cols.count = len(numbers)
    return cols


def test_numbers_of_every_length_are_written_as_str_writes_them():
    numbers = NUMBERS
    assert {len(str(abs(n))) for n in numbers} == set(range(1, 20))
    cols = _columns(numbers)
    text = _backend.compiled("render_v2_lines")(cols, "CreateTime", 0, -1, True, False)
    assert text == render_v2_lines_py(cols, "CreateTime", 0, -1, True, False)
    assert all(f"offset: {n} CreateTime: {n} ".encode() in text for n in numbers)
    js = _backend.compiled("records_json")(_Batch(), cols, True)
    assert js == records_json_py(_Batch(), cols, True)
