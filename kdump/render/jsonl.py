"""``--format json``: JSON Lines, one object per batch, with the field names of Kafka's view of a batch
(the corpus ``.log.json``), records inside with deep iteration.

Keys, values and header values are printed as UTF-8 text where they are valid UTF-8, else as base64;
``keyEncoding``/``valueEncoding`` say which (``null`` for a null key or value), so that a consumer can
always get the exact bytes back.
"""
from __future__ import annotations

import base64
import functools
import io
import json
from collections.abc import Callable, Iterator

from kdump.decode.errors import DecoderError
from kdump.decode.records import decode_records
from kdump.errors import EXTENT_JSON, error_object
from kdump.format import layout as L
from kdump.format import names as N
from kdump.render.kafka_text import _decoded, utf8_buffer
from kdump.render.large_fields import is_large, json_field, json_pieces, records_with_large_fields
from kdump.text.escape import escape_json
from kdump.text.times import time_formatter


def _text_or_base64(data):
    if data is None:
        return None, None
    try:
        return data.decode("utf-8"), "utf8"
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"


# The JSON value of a batch field where it is not the attribute itself: names for ids, no base offset for a
# legacy entry until its records are read (it would mean decompressing a wrapper), the CRC check unless given.
_JSON_VALUES = {
    "base_offset": "batch.base_offset if batch.magic >= 2 else None",
    "codec_id": "codec_name(batch.codec_id)",
    "is_valid": "batch.is_valid() if valid is None else valid",
    "timestamp_type": "timestamp_type_json[batch.timestamp_type]",
}
# batch_object(batch, path, valid=None): a batch as a JSON object, ``type`` and ``path`` then its fields
batch_object = N.compile_projection(
    "batch_object", "batch, path, valid=None",
    [("type", repr("batch")), ("path", "path"),
     *((f.json, _JSON_VALUES.get(f.attr, f"batch.{f.attr}")) for f in N.BATCH_FIELDS)],
    line=False, env={"codec_name": N.codec_name, "timestamp_type_json": N.TIMESTAMP_TYPE_JSON})


def record_objects(batch, cols, print_data: bool, decoded=None, when=None, header_decoder=None,
                   key_decoder=None, value_decoder=None) -> list[dict]:
    """One object per record of ``cols``; ``decoded`` holds the decode layer's object per record (control
    records), carried under its ``json_field``. ``when`` (a :mod:`kdump.text.times` formatter) adds
    ``timestampIso``; ``header_decoder`` gives header values decoded (``valueEncoding: "decoded"``);
    ``key_decoder``/``value_decoder``, decoders giving JSON data (``decode_json``, the Schema Registry's), give
    keys and values decoded (see :func:`_put_structured`)."""
    out = []
    ts_name = N.TIMESTAMP_TYPE_JSON[batch.timestamp_type]
    legacy = cols.crcs is not None  # magic 0/1 messages: their own magic and CRC, no headers
    if decoded is None and batch.is_control:
        decoded = decode_records(batch, cols)
    if decoded is not None:  # control records and internal-topic records carry their own decoded form
        key_decoder = value_decoder = None
    base_seq = batch.base_sequence
    for i in range(cols.count):
        off = cols.offsets[i]
        obj = {
            "offset": off,
            "timestamp": cols.timestamps[i],
            "timestampType": ts_name,
            "keySize": cols.key_len[i],
            "valueSize": cols.value_len[i],
            "sequence": -1 if base_seq < 0 else L.increment_sequence(base_seq, off - batch.base_offset),
            "sizeInBytes": cols.sizes[i],
        }
        if when is not None:
            obj["timestampIso"] = when(obj["timestamp"])
        if legacy:
            obj["legacyMagic"] = cols.magics[i]
            obj["legacyCrc"] = cols.crcs[i]
            obj["legacyCrcValid"] = cols.valid[i]
            if print_data:
                put_data(obj, cols.key(i), cols.value(i), decoded[i] if decoded is not None else None)
                _put_structured(obj, cols.key(i), cols.value(i), key_decoder, value_decoder)
        else:
            hdrs = cols.headers[i]
            if print_data:
                put_data(obj, cols.key(i), cols.value(i), decoded[i] if decoded is not None else None)
                _put_structured(obj, cols.key(i), cols.value(i), key_decoder, value_decoder)
                obj["headers"] = []
                for k, v in hdrs:
                    text, enc = _text_or_base64(v) if header_decoder is None or v is None else \
                        (_decoded(header_decoder, v), "decoded")
                    obj["headers"].append({"key": k.decode("utf-8", "replace"), "value": text, "valueEncoding": enc})
            else:
                obj["headerKeys"] = [k.decode("utf-8", "replace") for k, _ in hdrs]
        if decoded is not None and getattr(decoded[i], "json_field", None) is not None:
            obj[decoded[i].json_field] = decoded[i].to_json()
        out.append(obj)
    return out


def put_data(obj: dict, key, value, decoded=None) -> None:
    """Key and value as text (or base64); a record decoded by an internal-topic decoder (kdump.decode.internal)
    carries its decoded key and value as objects instead."""
    if decoded is not None and getattr(decoded, "json_field", None) is None:
        from kdump.decode.internal.render import put_decoded
        put_decoded(obj, decoded, key, value)
        return
    obj["key"], obj["keyEncoding"] = _text_or_base64(key)
    obj["value"], obj["valueEncoding"] = _text_or_base64(value)


def _put_structured(obj: dict, key, value, key_decoder, value_decoder) -> None:
    """A key or value decoded by a decoder that gives JSON data: the data, ``keyEncoding``/``valueEncoding``
    ``"decoded"`` and ``keySchemaId``/``valueSchemaId``; one it cannot decode keeps its text or base64 and says
    why in ``keyDecodeError``/``valueDecodeError`` (with the id it names, if any)."""
    for name, data, decoder in (("key", key, key_decoder), ("value", value, value_decoder)):
        if decoder is None or data is None:
            continue
        try:
            obj[name], obj[f"{name}SchemaId"] = decoder.decode_json(data)
            obj[f"{name}Encoding"] = "decoded"
        except DecoderError as e:
            obj[f"{name}SchemaId"] = decoder.schema_id(data)
            obj[f"{name}DecodeError"] = str(e)


class JsonLinesRenderer:
    """Writes JSON Lines for the batches handed to it (:class:`kdump.render.protocol.BatchRenderer`)."""

    def __init__(self, out, *, print_data: bool, deep: bool, terminal: bool = False, time_format: str = "epoch",
                 header_decoder=None, key_decoder=None, value_decoder=None):
        self.out = out
        # keys and values decoded to JSON data, by decoders that give it (decode_json); None: text or base64
        self.key_decoder = key_decoder if hasattr(key_decoder, "decode_json") else None
        self.value_decoder = value_decoder if hasattr(value_decoder, "decode_json") else None
        # beside the epoch ms, maxTimestampIso / timestampIso in the chosen form (kdump.text.times)
        self.when = None if time_format == "epoch" else time_formatter(time_format)
        self.header_decoder = header_decoder
        self.terminal = terminal  # on a terminal, C1 and bidi characters are \u escapes (the same JSON values)
        self.print_data = print_data
        self.deep = deep
        self.path: str | None = None
        self._records_written = False  # in a batch written in chunks
        self._run_pieces: tuple[bytes, ...] | None = None  # run_object_pieces(path, deep) of the last run
        self._run_pieces_for: tuple | None = None
        # JSON goes to the binary stream beneath ``out`` as the UTF-8 bytes it is (never on a terminal)
        self._raw = None if terminal else utf8_buffer(out)

    def begin_file(self, display_path: str, header: str | None) -> None:
        self.path = display_path

    def companion(self, item) -> None:
        """An entry of an index, snapshot or checkpoint file, as objects with the file's name."""
        from kdump.render.companions import companion_objects
        for obj in companion_objects(item, self.when):
            self._write({"type": "entry", "path": self.path, **obj})

    def trailing(self, file_name: str, tail) -> None:
        obj = {"type": "tail", "path": self.path, "position": tail.position, "bytes": tail.length,
               "kind": tail.kind}
        self._write(obj)

    def error(self, path: str, err) -> None:
        """A problem found in a file, in the stream where it happened (also said on stderr, for people)."""
        extent = {EXTENT_JSON[name]: value for name, value in getattr(err, "extent", {}).items()}
        self._write(error_object(path, getattr(err, "code", None) or "damaged", err.message,
                                 getattr(err, "position", None), **extent))

    def io_error(self, path: str, message: str) -> None:
        self._write(error_object(path, "cannot-read", message))

    def errors_to(self, listener) -> None:
        pass  # finds none of its own: an invalid control record is described in its object

    def batch(self, batch, records=None, decoded=None) -> None:
        if records is None:
            self._write(self._batch_object(batch, None))
            return
        self._emit(self._batch_head(batch, records), self._records_utf8(batch, records, decoded), b"]}\n")

    def legacy_run(self, run, deep: bool) -> bool:
        """Every message of a :class:`~kdump.format.legacy.LegacyRun` (intact plain magic 0/1 messages) as its batch
        object and, with ``deep``, its record inside, at once (compiled: kdump/render/_jsonl.pyx). False, writing
        nothing, where that is not the output asked for (timestamps besides the epoch's, keys or values decoded, a
        terminal): the caller then hands the messages over one by one."""
        if self._raw is None or self.path is None or self.when is not None or self.key_decoder is not None or \
                self.value_decoder is not None:
            return False
        if self._run_pieces_for != (self.path, deep):
            self._run_pieces = run_object_pieces(self.path, deep)
            self._run_pieces_for = (self.path, deep)
        if self._run_pieces is None:
            return False
        self._emit(render_legacy_run_json(run, self.path, self._run_pieces, deep, self.print_data))
        return True

    def _batch_object(self, batch, records) -> dict:
        obj = batch_object(batch, self.path)
        if self.when is not None:
            obj["maxTimestampIso"] = self.when(obj["maxTimestamp"])
        if records is not None and obj["baseOffset"] is None and records.count:
            obj["baseOffset"] = records.offsets[0]  # a legacy entry's first record, once decoded
        return obj

    def _batch_head(self, batch, records) -> bytes:
        """A batch's object up to the ``[`` of its records: "records" is its last member, so the records are
        written after it and the object closed with ``]}``."""
        obj = self._batch_object(batch, records)
        obj["records"] = []
        head = _json(obj)
        assert head.endswith(b"[]}")
        return head[:-2]

    def _records_utf8(self, batch, records, decoded) -> bytes | Iterator[bytes] | Callable[..., None]:
        """The records as the inside of a JSON list: bytes, or pieces of it where a record holds a field too
        large to render whole (:meth:`_records_around_large`), or in the common case, written to the binary
        stream, the call that writes them there (:meth:`_emit` makes it)."""
        if self.print_data and decoded is None and not batch.is_control:
            large = records_with_large_fields(records, header_values=self.header_decoder is None)
            if large:
                return self._records_around_large(batch, records, large)
        if self._raw is not None and self._common(batch, decoded):
            # written from the buffer the compiled writer builds them in: no bytes object, no copy
            return functools.partial(records_json, batch, records, self.print_data, write=self._raw.write)
        return self._records_bytes(batch, records, decoded)

    def _common(self, batch, decoded) -> bool:
        """The records are written by :func:`records_json` (which has a compiled twin): no decoder, no time form."""
        return (decoded is None and not batch.is_control and self.when is None
                and self.header_decoder is None and self.key_decoder is None and self.value_decoder is None)

    def _records_bytes(self, batch, records, decoded) -> bytes:
        """The records as the inside of a JSON list, rendered whole."""
        if self._common(batch, decoded):
            return records_json(batch, records, self.print_data)  # the common case, with a compiled twin
        return _json(record_objects(batch, records, self.print_data, decoded, self.when, self.header_decoder,
                                    self.key_decoder, self.value_decoder))[1:-1]

    def _records_around_large(self, batch, records, large: list[int]) -> Iterator[bytes]:
        """The records of ``records`` as :meth:`_records_utf8` gives them, those of ``large`` each by
        :meth:`_large_record`, the others as usual."""
        start = 0
        for i in large:
            if i > start:
                yield self._records_bytes(batch, records.slice(start, i), None)
            if i:  # after the records before it, or the large record before it
                yield b", "
            yield from self._large_record(batch, records, i)
            start = i + 1
        if start < records.count:
            yield b", "
            yield self._records_bytes(batch, records.slice(start, records.count), None)

    def _large_record(self, batch, records, i: int) -> Iterator[bytes]:
        """Record ``i``'s object, its large key, value and header values written a slice at a time (those no
        decoder prints, kdump.render.large_fields)."""
        return json_pieces(self._large_record_object(batch, records, i))

    def _large_record_object(self, batch, records, i: int) -> dict:
        """Record ``i``'s object for :meth:`_large_record`: built with each large field null, then given the
        field's size and a JSON string (:class:`kdump.render.large_fields.JsonString`) written in pieces."""
        one = records.slice(i, i + 1)
        patches = []
        for name, decoder, pos_column, len_column in (("key", self.key_decoder, one.key_pos, one.key_len),
                                                      ("value", self.value_decoder, one.value_pos, one.value_len)):
            if decoder is None and is_large(len_column[0]):
                patches.append((name, pos_column[0], len_column[0]))
                len_column[0] = -1  # (one's own column: records' is not changed)
        headers = one.headers[0] if self.header_decoder is None else ()
        large_headers = {j for j, (_, v) in enumerate(headers) if v is not None and is_large(len(v))}
        if large_headers:
            one.headers = [tuple((k, None if j in large_headers else v) for j, (k, v) in enumerate(headers))]
        obj = record_objects(batch, one, self.print_data, None, self.when, self.header_decoder, self.key_decoder,
                             self.value_decoder)[0]
        for name, pos, n in patches:
            obj[f"{name}Size"] = n
            obj[name], obj[f"{name}Encoding"] = json_field(records.buf, pos, n)
        for j in large_headers:
            value = headers[j][1]
            obj["headers"][j]["value"], obj["headers"][j]["valueEncoding"] = json_field(value, 0, len(value))
        return obj

    def _write(self, obj: dict) -> None:
        self._emit(_json(obj), b"\n")

    def _emit(self, *parts: bytes | Iterator[bytes] | Callable[..., None]) -> None:
        """Write UTF-8 JSON text, each part as it comes (a part: bytes, or pieces of whole characters, or the call
        that writes its bytes to the binary stream): to the binary stream beneath ``out`` as it is; where there is
        none, as text, escaped on a terminal."""
        if self._raw is not None:
            self.out.flush()  # what was written as text goes first
        for part in parts:
            if callable(part):
                part()
                continue
            for piece in ((part,) if isinstance(part, bytes) else part):
                if self._raw is not None:
                    self._raw.write(piece)
                    continue
                text = piece.decode("utf-8", "surrogateescape")
                self.out.write(escape_json(text) if self.terminal else text)

    # A batch whose records come in chunks is still one JSON object; "records" is its last member, so the
    # object is written up to the end of that list, the later chunks continue the list, then it is closed.
    def open_batch(self, batch, records, decoded=None) -> None:
        self._emit(self._batch_head(batch, records), self._records_utf8(batch, records, decoded))
        self._records_written = records.count > 0

    def more_records(self, batch, records, decoded=None) -> None:
        if records.count:
            data = self._records_utf8(batch, records, decoded)
            if self._records_written:
                self._emit(b", ", data)
            else:
                self._emit(data)
            self._records_written = True

    def close_batch(self, batch) -> None:
        self._emit(b"]}\n")


def _json(value) -> bytes:
    """``json.dumps`` in UTF-8, as kdump's standard output encodes it."""
    return _encode(value).encode("utf-8", "surrogateescape")


# json.dumps(value, ensure_ascii=False) without the JSONEncoder that json.dumps makes on every call given an
# argument (a call per batch head)
_encode = json.JSONEncoder(ensure_ascii=False).encode


def records_json_py(batch, cols, print_data: bool, write=None) -> bytes | None:
    """The records of a non-control batch (magic 2, or magic 0/1 messages) as the inside of a JSON list
    (``json.dumps`` of :func:`record_objects`), in UTF-8; with ``write``, handed to it and None returned. The
    compiled twin in kdump/render/_jsonl.pyx must give the same bytes."""
    data = _json(record_objects(batch, cols, print_data))[1:-1]
    if write is None:
        return data
    write(data)
    return None


# The members of a plain message's batch object that vary from message to message, in the order the compiled
# renderer of runs (kdump/render/_jsonl.pyx ``render_legacy_run_json``) writes them; every other member is the
# same for every intact plain message (no producer, no sequence, no count: kdump.format.legacy.LegacyBatch).
RUN_OBJECT_FIELDS = ("position", "size", "base_offset", "last_offset", "magic", "crc", "timestamp_type",
                     "max_timestamp")
_MARK = "\x00run-{}"  # a placeholder no path holds (a path has no NUL)


@functools.cache
def _plain_message():
    """An intact plain magic 1 message, as the entry-by-entry walk gives it: the source of the members that are
    the same for every plain message."""
    from kdump.format.legacy import LegacyBatch
    from kdump.format.legacy_builder import legacy_message
    return LegacyBatch(0, 0, legacy_message(0, 1, None, None)[L.LOG_OVERHEAD:])


def run_object_pieces(path: str, deep: bool) -> tuple[bytes, ...] | None:
    """The text between the values of :data:`RUN_OBJECT_FIELDS` in the batch object of a plain message of the file
    ``path`` (as :meth:`JsonLinesRenderer.batch` writes it: from kdump.format.names' table), for
    ``render_legacy_run_json``: before the first, between each two, and after the last up to the ``[`` of its
    records (``deep``) or the end of its line. None when the table's object does not hold them in that order."""
    obj = batch_object(_plain_message(), path)
    keys = [N.BATCH_FIELD[attr].json for attr in RUN_OBJECT_FIELDS]
    if [k for k in obj if k in keys] != keys:
        return None
    for i, key in enumerate(keys):
        obj[key] = _MARK.format(i)
    if deep:
        obj["records"] = []
    rest = _json(obj)
    pieces = []
    for i in range(len(keys)):
        before, mark, rest = rest.partition(_json(_MARK.format(i)))
        if not mark:
            return None
        pieces.append(before)
    if deep:
        assert rest.endswith(b"[]}")
        pieces.append(rest[:-2])
    else:
        pieces.append(rest + b"\n")
    return tuple(pieces)


def render_legacy_run_json_py(run, path: str, pieces, deep: bool, print_data: bool) -> bytes:
    """The messages of a run rendered one by one as the batches they are, by :meth:`JsonLinesRenderer.batch` as a
    dump hands them over, as UTF-8 bytes: the reference the compiled twin in kdump/render/_jsonl.pyx must give
    exactly (``pieces`` is for it: this one reads the table itself)."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", write_through=True)
    renderer = JsonLinesRenderer(out, print_data=print_data, deep=deep)
    renderer.begin_file(path, None)
    for message in run.messages():
        if deep:
            renderer.batch(message, message.columns(message.limit))
        else:
            renderer.batch(message)
    out.flush()
    return raw.getvalue()


def _select(name, pure):
    from kdump import _backend
    return _backend.pick(name, pure)


records_json = _select("records_json", records_json_py)
render_legacy_run_json = _select("render_legacy_run_json", render_legacy_run_json_py)
