"""DumpLogSegments' text, line for line (spec §2).

The default is the newest (Java) tool's form. ``compat="scala"`` reproduces the Scala tool of Kafka
2.x-3.9 instead: a stray ``}`` after the crc of legacy record lines, LEADER_CHANGE printed as
``controlType: LEADER_CHANGE(2)``, the ``payload:`` prefix quirk with ``--skip-record-metadata``.
"""
from __future__ import annotations

import codecs
import secrets
from collections.abc import Iterable

from kdump.decode.payload import java_utf8, printed, printed_column
from kdump.decode.records import decode_records
from kdump.format import layout as L
from kdump.format import names as N
from kdump.format.types import ControlRecordType
from kdump.render.large_fields import is_large, java_text_pieces, records_with_large_fields
from kdump.text.escape import escape
from kdump.text.times import time_formatter


def _unchanged(text: str) -> str:
    return text


def _bool(b: bool) -> str:
    return "true" if b else "false"


def _optional_long(value: int | None) -> str:
    return "OptionalLong.empty" if value is None else f"OptionalLong[{value}]"


# How DumpLogSegments prints a batch field where it is not the value's str(): Java's booleans and
# OptionalLong, the codec's name, the timestamp through ``when`` (kdump.text.times).
_TEXT_VALUES = {
    "is_transactional": "_bool(batch.is_transactional)",
    "is_control": "_bool(batch.is_control)",
    "is_valid": "_bool(batch.is_valid())",
    "delete_horizon_ms": "_optional_long(batch.delete_horizon_ms)",
    "codec_id": "codec_name(batch.codec_id)",
    "max_timestamp": "when(batch.max_timestamp)",
}


def _text_line(name: str, attrs, labels):
    """``name(batch, when)``: the batch line of the fields ``attrs`` (kdump.format.names), each under its label
    (``labels`` overriding the table's), the max timestamp under the batch's timestamp type name."""
    def label(attr: str) -> str:
        text = labels.get(attr, N.BATCH_FIELD[attr].text)
        return "{timestamp_type_text[batch.timestamp_type]}" if text == N.TIMESTAMP_LABEL else text
    return N.compile_projection(
        name, "batch, when", ((label(a), _TEXT_VALUES.get(a, f"batch.{a}")) for a in attrs), line=True,
        env={"_bool": _bool, "_optional_long": _optional_long, "codec_name": N.codec_name,
             "timestamp_type_text": N.TIMESTAMP_TYPE_TEXT})


_v2_batch_line = _text_line("_v2_batch_line", N.TEXT_V2_LINE, {})
_legacy_batch_line = _text_line("_legacy_batch_line", N.TEXT_LEGACY_LINE, N.TEXT_LEGACY_LABELS)


def batch_line(batch, when=str) -> str:
    """The batch line printed for every batch, shallow or deep (§2.2); ``when`` prints its timestamp
    (:mod:`kdump.text.times`; Kafka's epoch milliseconds by default)."""
    return (_v2_batch_line if batch.magic >= 2 else _legacy_batch_line)(batch, when)


# The fields of the legacy batch line in the order the compiled renderer of runs writes them
# (kdump/render/_lines.pyx ``render_legacy_run``); the labels come from the table.
_RUN_LINE_FIELDS = ("last_offset", "position", "max_timestamp", "size", "magic", "codec_id", "crc", "is_valid")


def run_line_labels() -> tuple[bytes, ...] | None:
    """What goes before each value of a plain message's batch line (kdump.format.names' labels), for
    ``render_legacy_run``: the timestamp's is the separator only (its label is the message's timestamp type) and
    the codec's holds its value too (a plain message's is always ``none``). None when the table's line is not
    the one that renderer writes."""
    if N.TEXT_LEGACY_LINE != _RUN_LINE_FIELDS:
        return None
    out = []
    for i, attr in enumerate(_RUN_LINE_FIELDS):
        text = N.TEXT_LEGACY_LABELS.get(attr, N.BATCH_FIELD[attr].text)
        sep = "" if i == 0 else " "
        if attr == "max_timestamp":
            out.append(sep)
        elif attr == "codec_id":
            out.append(f"{sep}{text}: {N.codec_name(0)}")
        else:
            out.append(f"{sep}{text}: ")
    return tuple(label.encode("utf-8") for label in out)


RUN_LINE_LABELS = run_line_labels()


def utf8_buffer(out):
    """The binary stream beneath a UTF-8 text stream (kdump's standard output, an opened file), or None
    where only text can be written (a StringIO)."""
    buffer = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    try:
        return buffer if buffer is not None and encoding and codecs.lookup(encoding).name == "utf-8" else None
    except LookupError:
        return None


_decoded = printed  # a key, value or header value as printed: the decoder's text or <reason>


def _prints_bytes(decoder) -> bool:
    """Whether ``decoder`` is the default string one, whose text the line renderers make of the bytes themselves
    (Java's decoding)."""
    return getattr(decoder, "name", "") == "string"


def _column_texts(decoder, buf, positions: list[int], lengths: list[int]) -> list[str | None] | None:
    """A column of keys or values as printed, or None where the default string decoder prints them (the line
    renderers print those bytes themselves)."""
    return None if _prints_bytes(decoder) else printed_column(decoder, buf, positions, lengths)


class _FieldTexts:
    """A record's key and value texts as the line renderers take a decoded record's (``decoded``): what
    :meth:`KafkaTextRenderer._large_line` renders a record holding a large field from."""

    __slots__ = ("key", "value")

    def __init__(self, key: str | None, value: str | None):
        self.key = key
        self.value = value


# Where a large key or value goes in its record's line, rendered without it: random, so no record's text holds them.
_FIELD_MARKS = {"key": f"\x00key-{secrets.token_hex(16)}\x00", "value": f"\x00value-{secrets.token_hex(16)}\x00"}


class KafkaTextRenderer:
    """Writes DumpLogSegments text for the batches handed to it (:class:`kdump.render.protocol.BatchRenderer`)."""

    def __init__(self, out, *, print_data: bool = False, skip_record_metadata: bool = False,
                 key_decoder=None, value_decoder=None, compat: str = "java", on_error=None, terminal: bool = False,
                 time_format: str = "epoch", header_decoder=None):
        self.out = out
        # On a terminal every line is escaped (kdump.text.escape): record bytes never reach it raw.
        self.safe = escape if terminal else _unchanged
        self.print_data = print_data
        self.skip_metadata = skip_record_metadata
        self.key_decoder = key_decoder
        self.value_decoder = value_decoder
        self.scala = compat == "scala"
        self.on_error = on_error  # called with a FormatError found while rendering a control record
        # Beyond Kafka's text, only when asked for: readable timestamps, and header values after headerKeys
        # (` headers: [k=v,...]`, decoded by ``header_decoder``; None: Kafka's text, keys only).
        self.when = time_formatter(time_format)
        self.kafka_times = time_format == "epoch"
        self.header_decoder = header_decoder
        # Record lines go to the binary stream beneath ``out`` as the UTF-8 bytes they are (never on a
        # terminal, where every line is escaped as text)
        self._raw = None if terminal else utf8_buffer(out)

    # --- file level ---------------------------------------------------------------------------
    def begin_file(self, display_path: str, header: str | None) -> None:
        self.out.write(self.safe(f"Dumping {display_path}") + "\n")
        if header is not None:
            self.out.write(self.safe(header) + "\n")

    def companion(self, item) -> None:
        """An entry of an index, snapshot or checkpoint file (:class:`kdump.index.dump.CompanionDumper`)."""
        from kdump.render.companions import companion_lines
        for line in companion_lines(item, "scala" if self.scala else "java", self.when):
            self.out.write(self.safe(line) + "\n")

    def trailing(self, file_name: str, tail) -> None:
        self.out.write(self.safe(f"Found {tail.length} invalid bytes at the end of {file_name}") + "\n")

    # Problems are for people on stderr (the command says them there), never inside Kafka's text.
    def error(self, path: str, err) -> None:
        pass

    def io_error(self, path: str, message: str) -> None:
        pass

    def errors_to(self, listener) -> None:
        self.on_error = listener

    def batch(self, batch, records=None, decoded=None) -> None:
        """The batch line, and with ``records`` (RecordColumns) one line each; ``decoded`` holds the decode
        layer's object per record (:func:`kdump.decode.records.decode_records`: control records, and records
        decoded by an internal-topic decoder)."""
        if records is None:
            self.out.write(self.safe(batch_line(batch, self.when)) + "\n")
            return
        self._record_lines(batch, records, decoded, batch_line(batch, self.when))

    def legacy_run(self, run, deep: bool) -> bool:
        """Every message of a :class:`~kdump.format.legacy.LegacyRun` (intact plain magic 0/1 messages) as its
        batch line and, with ``deep``, its record line, at once (compiled: kdump/render/_lines.pyx). False,
        writing nothing, where that is not the text asked for (decoders, timestamps not in Kafka's epoch form, a
        terminal): the caller then hands the messages over one by one."""
        if self._raw is None or not self._fast_lines(None) or RUN_LINE_LABELS is None:
            return False
        if self.print_data and (_column_texts(self.key_decoder, b"", [], []) is not None
                                or _column_texts(self.value_decoder, b"", [], []) is not None):
            return False  # keys or values printed by another decoder than the default string one
        data = render_legacy_run(run, RUN_LINE_LABELS, "}" if self.scala else "", deep, self.print_data,
                                 self.skip_metadata)
        self.out.flush()  # what was written as text goes first
        self._raw.write(data)
        return True

    # a batch whose records come in chunks: the first with the batch line, then the others
    open_batch = batch

    def more_records(self, batch, records, decoded=None) -> None:
        self._record_lines(batch, records, decoded, None)

    def close_batch(self, batch) -> None:
        pass

    def _record_lines(self, batch, records, decoded, head: str | None) -> None:
        """The record lines of a batch (after its batch line ``head``, if given)."""
        large = self._records_with_large_fields(batch, records, decoded)
        if large:
            self._lines_around_large(batch, records, head, large)
            return
        fast = self._fast_lines(decoded) and not (batch.magic >= 2 and batch.is_control)
        ts_name = batch.timestamp_type.display_name
        brace = "}" if self.scala else ""
        texts = self._texts(records) if fast else (None, None)
        if fast and self._raw is not None:
            # the common case, as the bytes written (compiled twins in kdump/render/_lines.pyx)
            if batch.magic >= 2:
                data = render_v2_lines(records, ts_name, batch.base_offset, batch.base_sequence, self.print_data,
                                       self.skip_metadata, *texts)
            else:
                data = render_legacy_lines(records, ts_name, brace, self.print_data, self.skip_metadata, *texts)
            self.out.flush()  # what was written as text goes first
            if head is not None:
                self._raw.write(head.encode("utf-8") + b"\n")
            self._raw.write(data)
            return
        lines = [] if head is None else [head]
        if fast and batch.magic >= 2:
            lines += v2_line_texts(records, ts_name, batch.base_offset, batch.base_sequence, self.print_data,
                                   self.skip_metadata, *texts)
        elif fast:
            lines += legacy_line_texts(records, ts_name, brace, self.print_data, self.skip_metadata, *texts)
        elif batch.magic >= 2:  # Kafka prints different record lines for legacy messages
            self._v2_lines(batch, records, decoded, lines)
        else:
            self._legacy_lines(batch, records, decoded, lines)
        if lines:
            if self.safe is escape:
                lines = [escape(line) for line in lines]
            lines.append("")
            self.out.write("\n".join(lines))

    # --- records holding a key or value too large to render whole (kdump.render.large_fields) ---------------
    # (A run of plain messages, legacy_run, is read in windows of at most 1 MiB: it holds no such record.)
    def _records_with_large_fields(self, batch, records, decoded) -> list[int]:
        """The records whose key or value, printed by the default string decoder, is written in slices."""
        if (not self.print_data or decoded is not None or (batch.magic >= 2 and batch.is_control)
                or not (_prints_bytes(self.key_decoder) or _prints_bytes(self.value_decoder))):
            return []
        return records_with_large_fields(records, header_values=False)

    def _lines_around_large(self, batch, records, head: str | None, large: list[int]) -> None:
        """The record lines of ``records``: those of ``large`` each by :meth:`_large_line`, the others as usual."""
        start = 0
        for i in large:
            if i > start or head is not None:
                self._record_lines(batch, records.slice(start, i), None, head)
                head = None
            self._large_line(batch, records, i)
            start = i + 1
        if start < records.count:
            self._record_lines(batch, records.slice(start, records.count), None, None)

    def _large_line(self, batch, records, i: int) -> None:
        """Record ``i``'s line, its large key or value written a slice at a time: the line is rendered as usual
        with a mark in place of each such field, then written with the field's text in place of its mark."""
        one = records.slice(i, i + 1)
        texts: dict[str, str | None] = {}
        streamed = {}
        for name, decoder, pos, n in (("key", self.key_decoder, one.key_pos[0], one.key_len[0]),
                                      ("value", self.value_decoder, one.value_pos[0], one.value_len[0])):
            if n < 0:
                texts[name] = None
            elif is_large(n) and _prints_bytes(decoder):
                texts[name] = _FIELD_MARKS[name]
                streamed[_FIELD_MARKS[name]] = (pos, n)
            else:  # a decoder's text, whole
                texts[name] = _decoded(decoder, bytes(records.buf[pos:pos + n]))
        # the fields' texts are given: the line renderers need none of the record's bytes
        one.buf, one.key_pos, one.value_pos = b"", [0], [0]
        lines: list[str] = []
        (self._v2_lines if batch.magic >= 2 else self._legacy_lines)(batch, one, [_FieldTexts(**texts)], lines)
        rest = lines[0]
        pieces: list[Iterable[str]] = []
        for mark, (pos, n) in streamed.items():
            before, rest = rest.split(mark)
            pieces += [(before,), java_text_pieces(records.buf, pos, n)]
        pieces.append((rest,))
        self._write_line(piece for part in pieces for piece in part)

    def _write_line(self, pieces: Iterable[str]) -> None:
        """A line written a piece at a time as it comes, as the record lines are (escaped on a terminal, else
        UTF-8), then its line break."""
        if self._raw is not None:
            self.out.flush()  # what was written as text goes first
            for piece in pieces:
                self._raw.write(piece.encode("utf-8", "surrogateescape"))
            self._raw.write(b"\n")
        else:
            for piece in pieces:
                self.out.write(self.safe(piece))
            self.out.write("\n")

    # --- records ------------------------------------------------------------------------------
    def _payload(self, key, value, prefix: str, decoded=None) -> str:
        """The key/payload part (§2.3 step 2); ``prefix`` is "| " when metadata was skipped, else " "."""
        if decoded is not None:  # decoded by an internal-topic decoder (kdump.decode.internal)
            key_text, value_text = decoded.key, decoded.value
        else:
            key_text = None if key is None else _decoded(self.key_decoder, key)
            value_text = None if value is None else _decoded(self.value_decoder, value)
        parts = []
        if key_text is not None:
            parts.append(f"{prefix}key: {key_text}")
            prefix = " "
        if self.scala:
            prefix = " "  # the Scala tool always printed " payload: "
        if value_text is not None:
            parts.append(f"{prefix}payload: {value_text}")
        return "".join(parts)

    def _fast_lines(self, decoded) -> bool:
        """The common case, with compiled twins (kdump/render/_lines.pyx): nothing decoded by an internal-topic
        decoder, and not the Scala tool's skip-metadata quirk. Keys and values decoded by other decoders than
        the default string one are handed over as text (:meth:`_texts`)."""
        return (not (self.scala and self.skip_metadata) and decoded is None
                and self.kafka_times and self.header_decoder is None)

    def _texts(self, cols) -> tuple[list | None, list | None]:
        """The printed keys and values of a chunk of records, each column decoded at once, or None for a
        column the default string decoder prints (the line renderers print those bytes themselves)."""
        if not self.print_data:
            return None, None
        return (_column_texts(self.key_decoder, cols.buf, cols.key_pos, cols.key_len),
                _column_texts(self.value_decoder, cols.buf, cols.value_pos, cols.value_len))

    def _v2_lines(self, batch, cols, decoded, lines: list) -> None:
        ts_name = batch.timestamp_type.display_name
        is_control = batch.is_control
        if is_control and decoded is None:
            decoded = decode_records(batch, cols)
        print_data = self.print_data and not is_control
        prefix = "| " if self.skip_metadata else " "
        for i in range(cols.count):
            if self.skip_metadata:
                meta = ""
            else:
                meta = _v2_meta(cols, i, ts_name, batch.base_offset, batch.base_sequence, self.when)
                if self.header_decoder is not None:
                    meta += self._header_values(cols.headers[i])
                if is_control:
                    meta += self._control_text(batch, decoded[i])
            if print_data:
                meta += self._payload(cols.key(i), cols.value(i), prefix, None if decoded is None else decoded[i])
            lines.append(meta)

    def _control_text(self, batch, control) -> str:
        """The control-record part of a record line (§2.3), or a readable note where Kafka would die."""
        if self.scala and control.type is ControlRecordType.LEADER_CHANGE:
            # the Scala tool printed only the type of a LEADER_CHANGE record (and did not read its value)
            return f" controlType: {control.type.display_name}({int(control.type)})"
        if control.error is not None and self.on_error is not None:
            self.on_error(control.error.at(batch.position))
        return control.kafka_text()

    def _header_values(self, headers) -> str:
        """`` headers: [k=v,k2=null]``: each header's value decoded (a null value as ``null``)."""
        shown = ",".join(f"{java_utf8(k)}={'null' if v is None else _decoded(self.header_decoder, v)}"
                         for k, v in headers)
        return f" headers: [{shown}]"

    def _legacy_lines(self, batch, cols, decoded, lines: list) -> None:
        ts_name = batch.timestamp_type.display_name
        brace = "}" if self.scala else ""
        skip = self.skip_metadata
        prefix = "| " if skip else " "
        offsets, timestamps, key_len, value_len = cols.offsets, cols.timestamps, cols.key_len, cols.value_len
        valid, crcs = cols.valid, cols.crcs
        for i in range(cols.count):
            if skip:
                meta = ""
            else:
                meta = (f"| offset: {offsets[i]} {ts_name}: {self.when(timestamps[i])} keySize: {key_len[i]} "
                        f"valueSize: {value_len[i]} isValid: {_bool(valid[i])} crc: {crcs[i]}{brace}")
            if self.print_data:
                meta += self._payload(cols.key(i), cols.value(i), prefix, None if decoded is None else decoded[i])
            lines.append(meta)


def _v2_meta(cols, i: int, ts_name: str, base_offset: int, base_seq: int, when=str) -> str:
    off = cols.offsets[i]
    seq = -1 if base_seq < 0 else L.increment_sequence(base_seq, off - base_offset)
    hdrs = cols.headers[i]
    hk = ",".join(java_utf8(k) for k, _ in hdrs) if hdrs else ""
    return (f"| offset: {off} {ts_name}: {when(cols.timestamps[i])} keySize: {cols.key_len[i]} "
            f"valueSize: {cols.value_len[i]} sequence: {seq} headerKeys: [{hk}]")


def _text(buf, pos: int, n: int) -> str:
    b = buf[pos:pos + n]
    try:
        return str(b, "utf-8")  # bytes or any buffer (a memoryview payload)
    except UnicodeDecodeError:
        return java_utf8(bytes(b))


def v2_line_texts(cols, ts_name: str, base_offset: int, base_seq: int, print_data: bool,
                  skip_metadata: bool, key_texts=None, value_texts=None) -> list[str]:
    """Record lines of a non-control magic-2 batch, newest tool's text: keys and values printed as
    ``key_texts`` and ``value_texts`` say (their text per record, decoded), or where None with the default
    (string) decoder."""
    lines: list[str] = []
    for i in range(cols.count):
        meta = "" if skip_metadata else _v2_meta(cols, i, ts_name, base_offset, base_seq)
        _append_line(lines, cols, i, meta, print_data, skip_metadata, key_texts, value_texts)
    return lines


def legacy_line_texts(cols, ts_name: str, brace: str, print_data: bool, skip_metadata: bool, key_texts=None,
                      value_texts=None) -> list[str]:
    """Record lines of magic 0/1 messages (``brace``: the Scala tool's stray ``}``; keys and values as for
    :func:`v2_line_texts`)."""
    lines: list[str] = []
    offsets, timestamps, key_len, value_len = cols.offsets, cols.timestamps, cols.key_len, cols.value_len
    valid, crcs = cols.valid, cols.crcs
    for i in range(cols.count):
        meta = "" if skip_metadata else (
            f"| offset: {offsets[i]} {ts_name}: {timestamps[i]} keySize: {key_len[i]} "
            f"valueSize: {value_len[i]} isValid: {_bool(valid[i])} crc: {crcs[i]}{brace}")
        _append_line(lines, cols, i, meta, print_data, skip_metadata, key_texts, value_texts)
    return lines


def _utf8_lines(lines: list[str]) -> bytes:
    """Lines as written to a file or a pipe: UTF-8, a newline after each (kdump's standard output encodes
    with ``surrogateescape``)."""
    lines.append("")
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def render_v2_lines_py(cols, ts_name: str, base_offset: int, base_seq: int, print_data: bool,
                       skip_metadata: bool, key_texts=None, value_texts=None) -> bytes:
    """:func:`v2_line_texts` as UTF-8 bytes, a newline after each line. The compiled twin in
    kdump/render/_lines.pyx must give exactly the same bytes."""
    return _utf8_lines(v2_line_texts(cols, ts_name, base_offset, base_seq, print_data, skip_metadata, key_texts,
                                     value_texts))


def render_legacy_lines_py(cols, ts_name: str, brace: str, print_data: bool, skip_metadata: bool, key_texts=None,
                           value_texts=None) -> bytes:
    """:func:`legacy_line_texts` as UTF-8 bytes, a newline after each line. The compiled twin in
    kdump/render/_lines.pyx must give exactly the same bytes."""
    return _utf8_lines(legacy_line_texts(cols, ts_name, brace, print_data, skip_metadata, key_texts, value_texts))


def render_legacy_run_py(run, labels, brace: str, deep: bool, print_data: bool, skip_metadata: bool) -> bytes:
    """The messages of a run rendered one by one as the batches they are (:func:`batch_line`, and with ``deep``
    :func:`legacy_line_texts`), as UTF-8 bytes: the reference the compiled twin in kdump/render/_lines.pyx must
    give exactly (``labels`` is for it: this one reads the table itself)."""
    lines: list[str] = []
    for message in run.messages():
        lines.append(batch_line(message))
        if deep:
            lines += legacy_line_texts(message.columns(0), message.timestamp_type.display_name, brace, print_data,
                                       skip_metadata)
    return _utf8_lines(lines)


def _append_line(lines: list, cols, i: int, meta: str, print_data: bool, skip_metadata: bool, key_texts,
                 value_texts) -> None:
    """Record ``i``'s line: its metadata, then with ``print_data`` its key and payload as text (from
    ``key_texts``/``value_texts`` where given, else the bytes as Java's StringDecoder prints them)."""
    if not print_data:
        lines.append(meta)
        return
    buf = cols.buf
    prefix = "| " if skip_metadata else " "
    kl = cols.key_len[i]
    vl = cols.value_len[i]
    if kl >= 0:
        key = _text(buf, cols.key_pos[i], kl) if key_texts is None else key_texts[i]
        if vl >= 0:
            value = _text(buf, cols.value_pos[i], vl) if value_texts is None else value_texts[i]
            lines.append(f"{meta}{prefix}key: {key} payload: {value}")
        else:
            lines.append(f"{meta}{prefix}key: {key}")
    elif vl >= 0:
        value = _text(buf, cols.value_pos[i], vl) if value_texts is None else value_texts[i]
        lines.append(f"{meta}{prefix}payload: {value}")
    else:
        lines.append(meta)


def _select(name, pure):
    from kdump import _backend
    return _backend.pick(name, pure)


render_v2_lines = _select("render_v2_lines", render_v2_lines_py)
render_legacy_lines = _select("render_legacy_lines", render_legacy_lines_py)
render_legacy_run = _select("render_legacy_run", render_legacy_run_py)
