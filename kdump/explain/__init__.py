"""``kdump explain``: a batch's bytes field by field, on sound and damaged data (the library; the Click layer is
``kdump/commands/explain.py``, the text form ``kdump/render/explain.py``).

Every field comes from walking the named layouts of ``kdump/format/layout.py`` (:func:`kdump.format.declare.fields`):
no third record decoder. The result is a tree of :class:`Node` s, ``start`` an absolute byte position in the file,
whose leaves tile the entry's bytes on disk exactly; inside a compressed payload (a v2 batch's records, a legacy
wrapper's value) the children describe the decompressed bytes, each marked ``decompressed`` with positions in the
decompressed buffer. Damage is told by the read layer's damage model (:func:`kdump.read.damage.readable`, the cause
of the damaged area that starts at the entry) and the rules of ``kdump/format/framing.py`` (the entry-size
messages, :data:`~kdump.format.framing.V2_HEADER_RULES`, :func:`~kdump.format.framing.crc_span`): the CRC field
carries the stored and computed CRC and the bytes it covers, a size field that points past the file says where,
and the first field that breaks a rule carries the rule (``problem``).
"""
from __future__ import annotations

import os
import zlib
from dataclasses import dataclass, field

from kdump import codec as _codec
from kdump.errors import FormatError, UsageError
from kdump.format import framing as F
from kdump.format import layout as L
from kdump.format.declare import Array, Bytes, FieldError, Int, Layout, UVarint, fields, uvarint_value
from kdump.format.limits import DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_DECOMPRESSED_BYTES
from kdump.format.names import CONTROL_TYPE_NAMES, TIMESTAMP_TYPE_TEXT, codec_name

__all__ = ["Node", "Explained", "explain", "explain_entry", "leaves"]


@dataclass
class Node:
    """One field (or structure) of the explained bytes. ``start`` is absolute in the file, or in the decompressed
    buffer where ``decompressed``; ``info`` holds what the field says beyond its value (a varint's raw bytes,
    unsigned and zig-zag values, the meaning of attributes, a CRC's check, a size's end, a ``problem``)."""

    name: str
    start: int
    length: int
    value: object = None
    kind: str = ""
    children: list[Node] | None = None
    decompressed: bool = False
    info: dict = field(default_factory=dict)
    raw: bytes | None = field(default=None, repr=False)  # a payload's bytes, for its children; an entry's bytes

    @property
    def end(self) -> int:
        return self.start + self.length

    def child(self, name: str) -> Node:
        for c in self.children or ():
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict:
        d: dict = {"name": self.name, "start": self.start, "length": self.length, "value": self.value}
        if self.kind:
            d["kind"] = self.kind
        if self.decompressed:
            d["decompressed"] = True
        d.update(self.info)
        if self.children is not None:
            d["children"] = [c.to_dict() for c in self.children]
        return d


def leaves(node: Node):
    """The nodes that tile ``node``'s bytes on disk: its leaves, where a node whose children describe
    decompressed bytes counts as one (its own bytes are the compressed ones)."""
    if not node.children or node.children[0].decompressed:
        yield node
        return
    for c in node.children:
        yield from leaves(c)


@dataclass
class Explained:
    """What :func:`explain` found: ``entries`` (one node per batch or message explained), the file's size, and where
    the walk stopped (``stop``: why no further entry was explained, or None)."""

    path: str
    file_size: int
    entries: list[Node]
    stop: str | None = None

    def failing(self) -> list[Node]:
        """The entries that fail a run (exit 1): a field breaks a rule, except where the read layer's damage model
        judges the entry's damaged area a crash-cut tail (:attr:`kdump.read.damage.Damage.fails`: Kafka's own tool
        reports it with exit 0, as every command does); such a tail's fields are marked all the same."""
        return [e for e in self.entries
                if (e.info["damagedArea"]["fails"] if "damagedArea" in e.info else "firstProblem" in e.info)]

    def to_dict(self, *, with_bytes: bool = False) -> dict:
        """The JSON tree; ``with_bytes``: each entry carries its bytes on disk in hex (``bytes``, as many as were
        read: what a page draws beside the fields)."""
        entries = [e.to_dict() for e in self.entries]
        if with_bytes:
            for d, e in zip(entries, self.entries, strict=True):
                d["bytes"] = (e.raw or b"").hex()
        return {"path": self.path, "fileSize": self.file_size, "entries": entries, "stop": self.stop}


# --- one field of a declaration as a node ----------------------------------------------------------------------
def _kind(f) -> str:
    if isinstance(f, UVarint):
        return ("varlong" if f.max_bytes > 5 else "varint") if f.zigzag else "unsigned varint"
    if isinstance(f, Int):
        return f"{'int' if f.signed else 'uint'}{8 * f.min_size}"
    if isinstance(f, Array):
        return "array"
    return "bytes"


_VARINT, _INT, _BYTES, _REST = range(4)
_HOW: dict[int, tuple[int, str, str]] = {}  # id(field) -> how a node shows it: (what it is, kind, doc)


def _how(f) -> tuple[int, str, str]:
    how = _HOW.get(id(f))
    if how is None:
        what = (_VARINT if isinstance(f, UVarint) else _INT if isinstance(f, Int)
                else _BYTES if isinstance(f, Bytes) else _REST)
        how = _HOW[id(f)] = (what, _kind(f), f.doc)  # (declarations live as long as the process)
    return how


def _leaf(layout: Layout, fv, base: int, decompressed: bool) -> Node:
    name, start, length, raw, value = fv
    what, kind, doc = _how(layout[name])
    info: dict = {"doc": doc} if doc else {}
    if what == _VARINT:
        unsigned = uvarint_value(raw)
        info["raw"] = raw.hex()
        info["unsigned"] = unsigned
        info["zigzag"] = (unsigned >> 1) ^ -(unsigned & 1)
        return Node(name, base + start, length, value, kind, None, decompressed, info)
    if what == _INT:
        info["raw"] = raw.hex()
        return Node(name, base + start, length, value, kind, None, decompressed, info)
    # a key, value or header as hex (None: null); a payload: None (its children say what it holds)
    shown = None if what != _BYTES or value is None else raw.hex()
    return Node(name, base + start, length, shown, kind, None, decompressed, info, raw)


def _walk(layout: Layout, buf, pos: int, end: int, base: int, decompressed: bool = False
          ) -> tuple[list[Node], FieldError | None]:
    """The fields of ``layout`` at ``buf[pos]`` as nodes (``base``: the file position of ``buf[0]``); where a field
    does not fit, a node for the bytes left (to ``end``) named after it, with the problem, ends the list."""
    nodes: list[Node] = []
    try:
        for fv in fields(layout, buf, pos, end):
            f = layout[fv.name]
            if isinstance(f, Array):
                arr = Node(fv.name, base + fv.start, fv.length, len(fv.value), kind="array",
                           decompressed=decompressed, children=[])
                for i, item in enumerate(fv.value):
                    elem = Node(f"{f.layout.name}", base + item[0].start if item else base + fv.start,
                                sum(x.length for x in item), i, kind=f.layout.name, decompressed=decompressed,
                                children=[_leaf(f.layout, x, base, decompressed) for x in item])
                    arr.children.append(elem)  # type: ignore[union-attr]
                nodes.append(arr)
            else:
                nodes.append(_leaf(layout, fv, base, decompressed))
        return nodes, None
    except FieldError as e:
        # from the end of the last whole field: a field inside an array (a header's) breaks its whole array
        start = nodes[-1].end - base if nodes else pos
        name = layout.names[len(nodes)]
        broken = Node(name, base + start, max(end - start, 0), kind="unreadable", decompressed=decompressed,
                      info={"problem": {"code": e.code, "message": e.message}})
        nodes.append(broken)
        return nodes, e


# --- what the header fields mean ---------------------------------------------------------------------------------
def attributes_meaning(attributes: int, magic: int) -> str:
    """``attributes 0x0013: codec lz4, CreateTime, transactional, not control`` (after the value)."""
    parts = [f"codec {codec_name(attributes & L.V2_CODEC_MASK)}"]
    if magic == 0:
        return parts[0]
    parts.append(TIMESTAMP_TYPE_TEXT[1 if attributes & L.V2_TIMESTAMP_TYPE_MASK else 0])
    if magic >= 2:
        parts.append("transactional" if attributes & L.V2_TRANSACTIONAL_MASK else "not transactional")
        parts.append("control" if attributes & L.V2_CONTROL_MASK else "not control")
        if attributes & L.V2_DELETE_HORIZON_MASK:
            parts.append("delete horizon set")
    return ", ".join(parts)


# the names the header rules' examples use (kdump's attribute names) -> Kafka's field names
_RULE_FIELDS = {"attributes": "attributes", "last_offset_delta": "lastOffsetDelta", "records_count": "recordsCount",
                "producer_id": "producerId", "producer_epoch": "producerEpoch", "base_sequence": "baseSequence",
                "max_timestamp": "maxTimestamp"}
# the field a damage code of the read layer is about, where the code names one
_CODE_FIELDS = {"size-below-minimum": "size", "truncated-tail": "size", "batch-too-small": "size",
                "message-too-small": "size", "batch-too-large": "size", "size-beyond-end": "size",
                "damaged-range": "size", "magic-unknown": "magic", "magic-invalid": "magic", "crc-mismatch": "crc",
                "codec-invalid": "attributes", "decompress-failed": "records", "decompressed-too-large": "records"}
_SIZE_NAME = {2: "batchLength", 1: "messageSize", 0: "messageSize"}


def _mark(node: Node, code: str, message: str) -> None:
    node.info.setdefault("problem", {"code": code, "message": message})


# --- one entry ---------------------------------------------------------------------------------------------------
def explain_entry(data: bytes, position: int, file_size: int, *, records: bool = False,
                  limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Node:
    """The entry whose bytes (as many as the file holds of it) are ``data``, at ``position`` of a file of
    ``file_size`` bytes, as a tree of fields; ``records``: its records (inner messages) too."""
    magic = data[L.MAGIC_AT] if len(data) > L.MAGIC_AT else None
    if magic == 2:
        layout: Layout = L.V2_BATCH
    elif magic in (0, 1):
        layout = L.LEGACY_MESSAGES[magic]
    else:  # an unknown magic byte (or too few bytes to have one): the framing every entry shares
        layout = L.LOG_ENTRY
    children, error = _walk(layout, data, 0, len(data), position)
    top = Node("batch" if magic == 2 else "message" if magic in (0, 1) else "entry", position, len(data),
               kind=layout.name, children=children, raw=data)
    by = {c.name: c for c in children}
    size_name = _SIZE_NAME.get(magic, "size")  # type: ignore[arg-type]
    size = by.get(size_name)
    if size is not None and size.kind != "unreadable":
        declared_end = position + L.LOG_OVERHEAD + size.value  # type: ignore[operator]
        size.info.update({"entryEnd": declared_end, "fileEnd": file_size})
        if size.value < F.MIN_ENTRY_SIZE:  # type: ignore[operator]
            _mark(size, "size-below-minimum", F.size_below_minimum(size.value))  # type: ignore[arg-type]
        elif declared_end > file_size:
            _mark(size, "truncated-tail", F.size_beyond_end(size.value, file_size - position)  # type: ignore[arg-type]
                  + f": it ends at byte {declared_end}, the file at {file_size}")
    magic_node = by.get("magic")
    if magic_node is not None and magic_node.kind != "unreadable" and magic not in (0, 1, 2):
        _mark(magic_node, "magic-unknown", f"invalid magic byte {magic} (expected 0, 1 or 2)")
    attrs = by.get("attributes")
    if attrs is not None and attrs.kind != "unreadable" and magic in (0, 1, 2):
        attrs.info["meaning"] = attributes_meaning(attrs.value, magic)  # type: ignore[arg-type]
    crc = by.get("crc")
    if crc is not None and crc.kind != "unreadable" and magic in (0, 1, 2) and len(data) >= L.LOG_OVERHEAD:
        _check_crc(crc, data, position)
    if magic == 2 and error is None:
        _check_v2_header(by)
        if records:
            _v2_records(by, limit)
    elif magic not in (0, 1, 2) and error is None and children[-1].end < position + len(data):
        # an entry of no known format: the bytes its size covers after the magic byte, unexplained
        children.append(Node("body", children[-1].end, position + len(data) - children[-1].end, None, kind="bytes"))
    elif magic in (0, 1) and error is None:
        _trailing(top, children, position + len(data), False, f"v{magic} message")
        if records:
            _legacy_inner(by, magic, limit)
    return top


def _check_crc(crc: Node, data: bytes, position: int) -> None:
    stored, frm, to, fn = F.crc_span(data)
    info: dict = {"stored": stored, "covers": {"start": position + frm, "end": position + to},
                  "function": "CRC-32" if fn is zlib.crc32 else "CRC-32C"}
    if to <= len(data) and frm <= to:
        computed = fn(memoryview(data)[frm:to])
        info.update({"computed": computed, "valid": computed == stored})
        if computed != stored:
            _mark(crc, "crc-mismatch", f"stored {info['function']} {stored} does not match the computed {computed} "
                                      f"of bytes {position + frm}..{position + to}")
    elif frm > to:  # (a size field below the smallest entry: the span it gives ends before the CRC's start)
        info.update({"computed": None, "valid": None,
                     "note": f"the size field ends the entry at byte {position + to}, before the covered bytes start"})
    else:
        info.update({"computed": None, "valid": None,
                     "note": f"the bytes it covers run to {position + to}, past the end of the file"})
    crc.info["crc"] = info


def _check_v2_header(by: dict[str, Node]) -> None:
    header = F.V2HeaderFields(by["attributes"].value, by["lastOffsetDelta"].value,  # type: ignore[arg-type]
                              by["recordsCount"].value, by["producerId"].value,  # type: ignore[arg-type]
                              by["producerEpoch"].value, by["baseSequence"].value,  # type: ignore[arg-type]
                              by["maxTimestamp"].value)  # type: ignore[arg-type]
    for rule in F.V2_HEADER_RULES:
        if rule.broken(header):
            _mark(by[_RULE_FIELDS[next(iter(rule.example))]], rule.code, rule.message(header))
            return


def _v2_records(by: dict[str, Node], limit: int) -> None:
    payload = by["records"]
    count = by["recordsCount"].value
    codec_id = by["attributes"].value & L.V2_CODEC_MASK  # type: ignore[operator]
    if payload.length == 0 and count == 0:
        return
    raw = payload.raw
    assert raw is not None
    if codec_id:
        try:
            buf = _codec.decompress(codec_id, raw, magic=2, limit=limit)
        except (_codec.CodecError, FormatError) as e:
            _mark(payload, getattr(e, "code", "codec-error"), f"the records do not decompress: {e}")
            return
        base, decompressed = 0, True
        payload.info["decompressedLength"] = len(buf)
    else:
        buf, base, decompressed = raw, payload.start, False
    base_offset, base_ts = by["baseOffset"].value, by["baseTimestamp"].value
    payload.children = _records(buf, count, base, decompressed, base_offset, base_ts)  # type: ignore[arg-type]
    if by["attributes"].value & L.V2_CONTROL_MASK:  # type: ignore[operator]
        for rec in payload.children:
            if rec.kind == L.V2_RECORD.name and rec.children and rec.children[-1].kind != "unreadable":
                _control_record(rec)


def _control_record(rec: Node) -> None:
    """A control record (a transaction marker, a KRaft record such as a ``.checkpoint``'s SnapshotHeader): its key's
    fields, a marker's value's fields, and what it says as Kafka prints it (``control``); a record Kafka's reader
    refuses marks its key or value with why."""
    from kdump.decode.control import InvalidControl, TxnMarker, decode_control
    by = {c.name: c for c in rec.children or ()}
    key, value = by["key"], by["value"]
    decoded = decode_control(key.raw if key.value is not None else None,
                             value.raw if value.value is not None else None)
    rec.info["control"] = decoded.kafka_text().strip()
    if key.raw is not None and key.length == L.CONTROL_RECORD_KEY.size:
        key.children, _ = _walk(L.CONTROL_RECORD_KEY_LAYOUT, key.raw, 0, key.length, key.start, key.decompressed)
        kind = key.children[-1]
        kind.info["meaning"] = CONTROL_TYPE_NAMES.get(kind.value, CONTROL_TYPE_NAMES[-1])  # type: ignore[call-overload]
    if isinstance(decoded, TxnMarker) and value.raw is not None and value.length == L.END_TXN_MARKER.size:
        value.children, _ = _walk(L.END_TXN_MARKER_LAYOUT, value.raw, 0, value.length, value.start,
                                  value.decompressed)
    if isinstance(decoded, InvalidControl):
        _mark(key if decoded.type is None else value, decoded.error.code, decoded.error.message)


def _records(buf: bytes, count: int, base: int, decompressed: bool, base_offset: int, base_ts: int) -> list[Node]:
    out: list[Node] = []
    pos = 0
    for i in range(max(count, 0)):
        if pos >= len(buf):
            out.append(Node("record", base + pos, 0, i, kind="unreadable", decompressed=decompressed,
                            info={"problem": {"code": "record-truncated", "message":
                                  f"record {i}: the payload ends before its record count ({count}) is reached"}}))
            return out
        fields_, error = _walk(L.V2_RECORD, buf, pos, len(buf), base, decompressed)
        rec = Node("record", base + pos, 0, i, kind=L.V2_RECORD.name, decompressed=decompressed, children=fields_)
        by = {c.name: c for c in fields_}
        if error is None:
            length = by["length"]
            end = length.end - base + length.value  # type: ignore[operator]
            if by["headers"].end - base != end:
                _mark(length, "record-size-invalid", f"record {i}: its length says {length.value} bytes, its fields "
                                                     f"take {by['headers'].end - length.end}")
            rec.info.update({"offset": L.java_long(base_offset + by["offsetDelta"].value),  # type: ignore[operator]
                             "timestamp": L.java_long(base_ts + by["timestampDelta"].value)})  # type: ignore[operator]
            pos = by["headers"].end - base
        else:
            pos = len(buf)
        rec.length = base + pos - rec.start
        out.append(rec)
        if error is not None:
            return out
    if pos < len(buf):
        out.append(Node("unread", base + pos, len(buf) - pos, None, kind="bytes", decompressed=decompressed,
                        info={"problem": {"code": "records-remaining", "message":
                              f"{len(buf) - pos} bytes after the last of the {count} records the batch declares"}}))
    return out


def _int_child(node: Node, name: str) -> int | None:
    """The value of ``node``'s field ``name`` where it was read (None: missing, or where the bytes broke)."""
    for c in node.children or ():
        if c.name == name:
            return c.value if isinstance(c.value, int) and c.kind != "unreadable" else None
    return None


def _trailing(parent: Node, children: list[Node], end: int, decompressed: bool, what: str) -> None:
    """Bytes after the last field of a structure and before its end (its size field's), as one node: the fields
    do not fill what the size says."""
    last = children[-1].end if children else parent.start
    if last < end:
        children.append(Node("unread", last, end - last, None, kind="bytes", decompressed=decompressed,
                             info={"problem": {"code": "size-mismatch", "message":
                                   f"{end - last} bytes after the last field of the {what}, inside its size"}}))


def _legacy_inner(by: dict[str, Node], magic: int, limit: int) -> None:
    value = by["value"]
    codec_id = by["attributes"].value & L.LEGACY_CODEC_MASK  # type: ignore[operator]
    if not codec_id or value.value is None:
        return
    try:
        buf = _codec.decompress(codec_id, value.raw, magic=magic, limit=limit)
    except (_codec.CodecError, FormatError) as e:
        _mark(value, getattr(e, "code", "codec-error"), f"the wrapper's value does not decompress: {e}")
        return
    value.info["decompressedLength"] = len(buf)
    inner: list[Node] = []
    pos = 0
    while pos < len(buf):
        inner_magic = buf[pos + L.MAGIC_AT] if pos + L.MAGIC_AT < len(buf) else None
        layout = L.LEGACY_MESSAGES[inner_magic] if inner_magic in (0, 1) else L.LOG_ENTRY
        fields_, error = _walk(layout, buf, pos, len(buf), 0, True)
        end = fields_[-1].end if fields_ else len(buf)
        message = Node("message", pos, end - pos, len(inner), kind=layout.name, decompressed=True, children=fields_)
        size = _int_child(message, "messageSize")
        if error is None and size is not None and end < pos + L.LOG_OVERHEAD + size <= len(buf):
            _trailing(message, fields_, pos + L.LOG_OVERHEAD + size, True, f"inner v{inner_magic} message")
            end = message.children[-1].end  # type: ignore[index]
            message.length = end - pos
        inner.append(message)
        if error is not None or layout is L.LOG_ENTRY:
            break
        pos = end
    # the articles' point: a magic 1 wrapper's inner offsets are relative (0, 1, ...), made absolute from the
    # wrapper's offset, which is the last inner message's; magic 0 inner messages carry absolute offsets
    stored = [_int_child(m, "offset") for m in inner]
    last = next((o for o in reversed(stored) if o is not None), 0)
    for m, rel in zip(inner, stored, strict=True):
        if rel is not None:
            absolute = by["offset"].value - last + rel if magic == 1 else rel  # type: ignore[operator]
            m.info.update({"relativeOffset": rel if magic == 1 else None, "absoluteOffset": absolute})
    value.children = inner


# --- a companion file: .index, .timeindex, .txnindex (entries of one layout), producer .snapshot ---------------------
def _companion_layout(path: str) -> Layout | None:
    from kdump.format import index_layout as IL
    from kdump.read.logdir import FileKind, classify
    return {FileKind.INDEX: IL.OFFSET_INDEX, FileKind.TIMEINDEX: IL.TIME_INDEX, FileKind.TXNINDEX: IL.TXN_INDEX,
            FileKind.PRODUCER_SNAPSHOT: IL.SNAPSHOT}.get(classify(path))


def explain_companion(data: bytes, layout: Layout, position: int = 0, count: int = 1) -> list[Node]:
    """``count`` entries of an index file from byte ``position`` (an index entry each), or a producer snapshot whole
    (its header, its CRC-32C checked over what it covers, its entries), as trees of fields."""
    from kdump.format import index_layout as IL
    if layout is IL.SNAPSHOT:
        children, error = _walk(layout, data, 0, len(data), 0)
        top = Node("snapshot", 0, len(data), None, kind=layout.name, children=children, raw=data)
        by = {c.name: c for c in children}
        crc = by.get("crc")
        if crc is not None and crc.kind != "unreadable":
            from kdump.format.crc import crc32c
            computed = crc32c(memoryview(data)[IL.SNAPSHOT_CRC_START:])
            crc.info["crc"] = {"stored": crc.value, "computed": computed, "valid": computed == crc.value,
                               "covers": {"start": IL.SNAPSHOT_CRC_START, "end": len(data)}, "function": "CRC-32C"}
            if computed != crc.value:
                _mark(crc, "snapshot-crc", f"stored CRC-32C {crc.value} does not match the computed {computed}")
        if error is None:
            _trailing(top, children, len(data), False, "snapshot")
        return [top]
    out = []
    size = layout.size
    for i in range(count):
        at = position + i * size
        if at >= len(data):
            break
        children, _error = _walk(layout, data, at, min(at + size, len(data)), 0)
        out.append(Node("entry", at, min(size, len(data) - at), at // size, kind=layout.name, children=children,
                        raw=data[at:at + size]))
    return out


# --- a file ------------------------------------------------------------------------------------------------------
def explain(path, *, position: int | None = None, offset: int | None = None, count: int = 1, records: bool = False,
            to_offset: int | None = None, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES,
            limit: int = DEFAULT_MAX_DECOMPRESSED_BYTES) -> Explained:
    """Explain ``count`` entries of the ``.log`` file ``path`` from ``position`` (or the batch holding ``offset``,
    or the first); with ``to_offset``, the entries through the one holding it (or the first after it), ``count`` at
    most. Raises OSError (unreadable) or :class:`UsageError` (a position outside the file, an offset no batch
    reaches)."""
    path = os.fspath(path)
    from kdump.read.logdir import Refused, stat_or_refusal
    refused = stat_or_refusal(path)
    if isinstance(refused, Refused):  # (a FIFO is not opened: reading it could block)
        raise refused.as_oserror()
    companion = _companion_layout(path)
    if companion is not None:
        if offset is not None or to_offset is not None:
            raise UsageError(f"{path}: an offset picks a batch of a .log segment, not an entry of this file")
        with open(path, "rb") as f:  # read-only; companion files are small (a snapshot is bounded as read.snapshot)
            data = f.read(DEFAULT_MAX_BATCH_BYTES)
        at = position or 0
        if data and not 0 <= at < len(data):
            raise UsageError(f"{path}: position {at} is outside the file ({len(data)} bytes)")
        nodes = explain_companion(data, companion, at, count)
        for node in nodes:
            _first_problem(node)
        return Explained(path, len(data), nodes)
    if offset is not None:
        from kdump.read.locate import locate_offset
        found = locate_offset(path, offset)
        if not found.found:
            raise UsageError(f"{path}: no batch holds offset {offset} or a later one")
        position = found.position
    position = 0 if position is None else position
    with open(path, "rb") as f:  # read-only
        file_size = os.fstat(f.fileno()).st_size
        if not 0 <= position < max(file_size, 1):
            raise UsageError(f"{path}: position {position} is outside the file ({file_size} bytes)")
        entries: list[Node] = []
        stop = None
        for _ in range(count):
            if position >= file_size:
                stop = f"the end of the file at byte {file_size}"
                break
            head = os.pread(f.fileno(), L.LOG_OVERHEAD, position)
            size = L.PREFIX.unpack(head)[1] if len(head) == L.LOG_OVERHEAD else -1
            declared = L.LOG_OVERHEAD + size
            # an entry whose size is below any entry's: its header's bytes, to show what they say
            want = min(declared, max_batch_bytes) if size >= F.MIN_ENTRY_SIZE else L.V2_RECORD_BATCH_OVERHEAD
            data = os.pread(f.fileno(), want, position)
            node = explain_entry(data, position, file_size, records=records, limit=limit)
            _damage(node, path, position, max_batch_bytes)
            _first_problem(node)
            entries.append(node)
            if size < F.MIN_ENTRY_SIZE or (node.children and node.children[-1].kind == "unreadable"):
                stop = f"the entry at byte {position} cannot be followed (its size field is not trusted)"
                break
            last = _last_offset(node)
            if to_offset is not None and last is not None and last >= to_offset:
                break  # (the range is done)
            position += declared
    return Explained(path, file_size, entries, stop)


def _last_offset(entry: Node) -> int | None:
    """The last offset an entry holds (a v2 batch's base offset and last offset delta; a magic 0/1 message's or
    wrapper's offset field), None where its header did not read."""
    if entry.name == "batch":
        base, delta = _int_child(entry, "baseOffset"), _int_child(entry, "lastOffsetDelta")
        return None if base is None or delta is None else base + delta
    return _int_child(entry, "offset") if entry.name == "message" else None


def _first_problem(node: Node) -> None:
    """The first field in byte order that breaks a rule, named at the entry (``firstProblem``)."""
    first = next((leaf for leaf in leaves(node) if "problem" in leaf.info), None)
    if first is not None:
        node.info["firstProblem"] = {"field": first.name, "start": first.start, **first.info["problem"]}


def _damage(node: Node, path: str, position: int, max_batch_bytes: int) -> None:
    """The read layer's view of the entry: the damaged area that starts there, if any (its cause, its range and
    the offsets it costs), and the field its cause is about marked with it."""
    from kdump.read.damage import Damage, foreign_start, readable
    from kdump.read.segment import SegmentReader
    with SegmentReader(path, start=position, max_batch_bytes=max_batch_bytes) as reader:
        # a file whose first bytes cannot start a Kafka log (text renamed .log) is that, as every command says,
        # not an incomplete last batch
        foreign = foreign_start(reader) if position == 0 else None
        first = None if foreign else next(iter(readable(reader, show_invalid=False)), None)
        file_size = reader.file_size
    if foreign is not None:
        node.info["damagedArea"] = {"code": foreign.code, "kind": "foreign", "start": 0, "end": file_size,
                                    "message": foreign.message, "fails": True}
        for c in node.children or ():
            if c.name == "magic":
                c.info["problem"] = {"code": foreign.code, "message": foreign.message}
        return
    if not isinstance(first, Damage) or first.start != position:
        return
    node.info["damagedArea"] = {"code": first.code, "kind": first.kind, "start": first.start, "end": first.end,
                                "message": first.describe(), "fails": first.fails}
    name = _CODE_FIELDS.get(first.code) or _rule_field(first.code)
    if name == "size":
        name = {"batch": "batchLength", "message": "messageSize"}.get(node.name, "size")
    if name == "records" and node.name == "message":
        name = "value"
    for c in node.children or ():
        if c.name == name:  # the read layer's cause is the one said (it may name more than this entry's own check)
            c.info["problem"] = {"code": first.code, "message": first.message}
            break


def _rule_field(code: str) -> str | None:
    for rule in F.V2_HEADER_RULES:
        if rule.code == code:
            return _RULE_FIELDS[next(iter(rule.example))]
    return None
