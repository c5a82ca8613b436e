"""The Arrow arrays of the per-record columns (offset, timestamp, key, value, headers), made from raw buffers.

Both column builders -- the compiled :class:`kdump.spark._arrow.ColumnBuilder` and its pure twin
:class:`kdump.spark.builder.PyColumnBuilder` -- fill the same buffers: int64 values, int32 end offsets
(starting with 0) and the bytes of a binary column, and one flag byte per value (1 = not null). The arrays
are made here, once for both, so that the two builders' output can only differ in those buffers. Any object
with the buffer protocol is taken as it is (the compiled builder hands its memory over without a copy).
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from kdump.spark.schema import ALL_COLUMNS


def validity(flags, nulls: int) -> pa.Buffer | None:
    """Arrow's validity bitmap of one flag byte per value; None (Arrow's "all valid") without a null, and then
    ``flags`` is not read (a builder need not hand it over)."""
    if not nulls:
        return None
    return pa.py_buffer(np.packbits(np.frombuffer(flags, dtype=np.uint8), bitorder="little").tobytes())


def int64_array(n: int, values) -> pa.Array:
    return pa.Array.from_buffers(pa.int64(), n, [None, pa.py_buffer(values)])


def timestamp_array(n: int, micros, flags, nulls: int) -> pa.Array:
    """Microseconds since the epoch (a record's milliseconds times 1,000; null where that leaves int64)."""
    return pa.Array.from_buffers(ALL_COLUMNS["timestamp"], n, [validity(flags, nulls), pa.py_buffer(micros)],
                                 null_count=nulls)


def binary_array(n: int, ends, data, flags, nulls: int, typ: pa.DataType | None = None) -> pa.Array:
    """``n`` values of type ``typ`` (binary unless given; header keys are strings): value ``i`` is
    ``data[ends[i]:ends[i + 1]]``."""
    return pa.Array.from_buffers(typ or pa.binary(), n, [validity(flags, nulls), pa.py_buffer(ends),
                                                         pa.py_buffer(data)], null_count=nulls)


def headers_array(n: int, list_ends, list_flags, list_nulls: int, keys: pa.Array, values: pa.Array) -> pa.Array:
    """The ``headers`` column: record ``i``'s headers are entries ``list_ends[i]`` to ``list_ends[i + 1]`` of
    ``keys`` and ``values`` (null for a record without headers, as Spark's Kafka source has it)."""
    htype = ALL_COLUMNS["headers"]
    entries = pa.StructArray.from_arrays([keys, values], fields=list(htype.value_type))
    return pa.Array.from_buffers(htype, n, [validity(list_flags, list_nulls), pa.py_buffer(list_ends)],
                                 null_count=list_nulls, children=[entries])
