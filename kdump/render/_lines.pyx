# cython: language_level=3
# cython: boundscheck=False, wraparound=False, initializedcheck=False, cdivision=True
"""Compiled twins of :func:`kdump.render.kafka_text.render_v2_lines_py` (DumpLogSegments record lines of a
non-control magic-2 batch, default string decoders) and of ``render_legacy_lines_py`` (the same for magic
0/1 messages). Same output, character for character; ``tests/test_speedups.py`` and
``tests/test_legacy_speedups.py`` check that differentially."""

from libc.stdint cimport int64_t

from ._sequence cimport record_sequence  # compile-time only (an inline function)

from kdump.format.text import java_utf8

# The pure twin, for buffers other than bytes and numbers beyond int64. kdump.render.kafka_text imports
# this module (through kdump._backend), so it is handed over by kdump._backend.pick rather than imported here.
render_v2_lines_py = None
render_legacy_lines_py = None


cdef inline str _text(object buf, Py_ssize_t pos, Py_ssize_t n):
    """Java's ``new String(bytes, UTF_8)``: strict UTF-8 first (the common case), Java's rules otherwise."""
    try:
        return buf[pos:pos + n].decode("utf-8")
    except UnicodeDecodeError:
        return java_utf8(bytes(buf[pos:pos + n]))


def render_v2_lines(cols, str ts_name, base_offset, base_seq, bint print_data, bint skip_metadata, list lines):
    """Append one DumpLogSegments record line per record of a non-control magic-2 batch (default string
    decoders, newest tool's text). Same output as the pure function, character for character."""
    cdef Py_ssize_t first = len(lines)
    if not isinstance(cols.buf, bytes):
        render_v2_lines_py(cols, ts_name, base_offset, base_seq, print_data, skip_metadata, lines)
        return
    try:
        _render(cols, ts_name, base_offset, base_seq, print_data, skip_metadata, lines)
    except OverflowError:  # an offset or sequence beyond int64 (hostile input): the pure path copes
        del lines[first:]
        render_v2_lines_py(cols, ts_name, base_offset, base_seq, print_data, skip_metadata, lines)


cdef _render(cols, str ts_name, base_offset, base_seq, bint print_data, bint skip_metadata, list lines):
    cdef Py_ssize_t i, n = cols.count
    cdef Py_ssize_t kl, vl
    cdef int64_t off, bo = base_offset
    cdef int64_t seq, bs = base_seq
    cdef list offsets = cols.offsets, timestamps = cols.timestamps, key_pos = cols.key_pos
    cdef list key_len = cols.key_len, value_pos = cols.value_pos, value_len = cols.value_len
    cdef list headers = cols.headers
    cdef object buf = cols.buf
    cdef str meta, prefix = "| " if skip_metadata else " "
    cdef tuple hdrs
    for i in range(n):
        kl = key_len[i]
        vl = value_len[i]
        if skip_metadata:
            meta = ""
        else:
            off = offsets[i]
            seq = record_sequence(bs, off, bo)
            hdrs = headers[i]
            if hdrs:
                meta = (f"| offset: {off} {ts_name}: {timestamps[i]} keySize: {kl} valueSize: {vl} "
                        f"sequence: {seq} headerKeys: [{','.join([java_utf8(h[0]) for h in hdrs])}]")
            else:
                meta = (f"| offset: {off} {ts_name}: {timestamps[i]} keySize: {kl} valueSize: {vl} "
                        f"sequence: {seq} headerKeys: []")
        _append_line(lines, buf, meta, prefix, print_data, key_pos[i], kl, value_pos[i], vl)


cdef inline _append_line(list lines, object buf, str meta, str prefix, bint print_data, Py_ssize_t kp,
                         Py_ssize_t kl, Py_ssize_t vp, Py_ssize_t vl):
    """A record's line: its metadata, then with ``print_data`` its key and payload as text."""
    if not print_data:
        lines.append(meta)
    elif kl >= 0:
        if vl >= 0:
            lines.append(f"{meta}{prefix}key: {_text(buf, kp, kl)} payload: {_text(buf, vp, vl)}")
        else:
            lines.append(f"{meta}{prefix}key: {_text(buf, kp, kl)}")
    elif vl >= 0:
        lines.append(f"{meta}{prefix}payload: {_text(buf, vp, vl)}")
    else:
        lines.append(meta)


def render_legacy_lines(cols, str ts_name, str brace, bint print_data, bint skip_metadata, list lines):
    """Append one DumpLogSegments record line per magic 0/1 message (default string decoders). Same
    output as the pure function, character for character."""
    if not isinstance(cols.buf, bytes):
        render_legacy_lines_py(cols, ts_name, brace, print_data, skip_metadata, lines)
        return
    cdef Py_ssize_t i, n = cols.count
    cdef list offsets = cols.offsets, timestamps = cols.timestamps, key_pos = cols.key_pos
    cdef list key_len = cols.key_len, value_pos = cols.value_pos, value_len = cols.value_len
    cdef list valid = cols.valid, crcs = cols.crcs
    cdef object buf = cols.buf
    cdef str meta, prefix = "| " if skip_metadata else " "
    cdef Py_ssize_t kl, vl
    for i in range(n):
        kl = key_len[i]
        vl = value_len[i]
        if skip_metadata:
            meta = ""
        else:
            meta = (f"| offset: {offsets[i]} {ts_name}: {timestamps[i]} keySize: {kl} valueSize: {vl} "
                    f"isValid: {'true' if valid[i] else 'false'} crc: {crcs[i]}{brace}")
        _append_line(lines, buf, meta, prefix, print_data, key_pos[i], kl, value_pos[i], vl)
