# cython: language_level=3
"""A record's producer sequence for the compiled renderers (kdump.format.layout.increment_sequence, int64)."""
from libc.stdint cimport int64_t


cdef inline int64_t record_sequence(int64_t base_seq, int64_t offset, int64_t base_offset) noexcept:
    """-1 without a producer sequence; sequences wrap from INT32_MAX to 0 (DefaultRecordBatch.incrementSequence)."""
    cdef int64_t delta = offset - base_offset
    if base_seq < 0:
        return -1
    if base_seq > 2147483647 - delta:
        return delta - (2147483647 - base_seq) - 1
    return base_seq + delta
