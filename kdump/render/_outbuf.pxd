# cython: language_level=3
"""Output buffers of the compiled renderers (kdump/render/_lines.pyx, _jsonl.pyx): a batch's output is
built in a growable C buffer (kdump/_bytebuf.pxd) and copied once into the bytes returned.

Each renderer module keeps one buffer from call to call (``cdef Kept _kept``): allocating and freeing a
fresh buffer per batch costs more in page faults than the copy. A call made while the kept buffer is in use
(another thread, while this one runs Python code) builds in a buffer of its own."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize, PyBytes_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc

from kdump._bytebuf cimport ByteBuf, free_buffer, int_digits, put, put_int, reserve  # int_digits, put_int: cimported from here too
from kdump._bytescan cimport ascii_only, json_plain  # cimported from here by the renderers

ctypedef ByteBuf Out


cdef struct Kept:
    ByteBuf buf
    bint busy


cdef enum:
    KEEP_AT_MOST = 16 << 20  # a bigger kept buffer (a huge chunk of records) is freed after use


cdef inline int put_bytes(Out *o, bytes b) except -1:
    return put(o, PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b))


cdef inline Out *start(Kept *kept) except NULL:
    """The buffer to build one call's output in: the module's kept one, or a new one while it is in use."""
    cdef Out *o
    if not kept.busy:
        kept.busy = True
        kept.buf.len = 0
        return &kept.buf
    o = <Out *> PyMem_Malloc(sizeof(Out))
    if o == NULL:
        raise MemoryError()
    o.data = NULL
    o.len = o.cap = 0
    return o


cdef inline void release(Out *o, Kept *kept) noexcept:
    if o != &kept.buf:
        free_buffer(o)
        PyMem_Free(o)
        return
    kept.busy = False
    kept.buf.len = 0
    if kept.buf.cap > KEEP_AT_MOST:
        free_buffer(&kept.buf)


cdef inline bytes finish(Out *o, Kept *kept):
    """The bytes built, and the buffer released."""
    try:
        return PyBytes_FromStringAndSize(o.data, o.len)
    finally:
        release(o, kept)
