# cython: language_level=3
"""A record's producer sequence for the compiled renderers (twin of kdump.format.layout.increment_sequence)."""
from libc.stdint cimport int32_t, int64_t, uint32_t


cdef inline int64_t _java_int(int64_t v) noexcept:
    """``v`` as a Java ``int`` holds it (two's complement, 32 bits)."""
    return <int32_t><uint32_t>(v & 0xFFFFFFFF)


cdef inline int64_t record_sequence(int64_t base_seq, int64_t offset, int64_t base_offset) noexcept:
    """-1 without a producer sequence; sequences wrap from INT32_MAX to 0 (DefaultRecordBatch.incrementSequence, each
    step in Java int arithmetic, as kdump.format.layout.increment_sequence)."""
    cdef int64_t delta = offset - base_offset
    cdef int64_t total = base_seq + delta
    if base_seq < 0:
        return -1
    if total <= 2147483647 and delta >= 0:  # every record that does not wrap
        return total
    if base_seq > _java_int(2147483647 - delta):
        return _java_int(delta - _java_int(2147483647 - base_seq) - 1)
    return _java_int(total)
