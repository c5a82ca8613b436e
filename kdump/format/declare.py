"""Named field layouts: how a structure of Kafka's files is declared once, field by field (as pyelftools'
``structs.py`` declares ELF's), and walked.

A :class:`Layout` is a sequence of named fields, each with its encoding and size:

* :class:`Int`: a fixed-size integer of N bytes (big-endian unless the layout says otherwise), signed or not,
  with the names of its bit fields (``flags``) where it has them;
* :class:`Varint`: a zig-zag varint (``max_bytes`` 5) or varlong (10); :class:`UVarint`: an unsigned one;
* :class:`Bytes`: as many bytes as a preceding length field says (a negative length: null, no bytes);
* :class:`Rest`: the bytes up to where a preceding size field says the structure ends (a size field counts the
  bytes after itself, as every size field of Kafka's log entries does);
* :class:`Array`: as many structures of another layout as a preceding count field says;
* :class:`Chars`: a fixed number of raw bytes.

``kdump/format/layout.py`` and ``index_layout.py`` hold the declarations, and derive from them the precompiled
``struct.Struct`` objects and offsets that the readers use (:meth:`Layout.struct`, :meth:`Layout.offset`), so a
reader's speed is the speed of the same ``struct`` calls as before. :func:`fields` walks a declaration over bytes
field by field (tests, docs and ``kdump explain``); it is not a fast path.
"""
from __future__ import annotations

import struct
from collections.abc import Iterator
from operator import itemgetter

from kdump.errors import FormatError

_CODES = {(1, True): "b", (1, False): "B", (2, True): "h", (2, False): "H", (4, True): "i", (4, False): "I",
          (8, True): "q", (8, False): "Q"}


def scalar(size: int, signed: bool = True, byteorder: str = ">") -> struct.Struct:
    """The ``struct.Struct`` of one integer of ``size`` bytes (not a field of a structure: a value read alone)."""
    return struct.Struct(byteorder + _CODES[size, signed])


class Field:
    """One named field. ``size`` is its fixed size in bytes, or None when its bytes say how many it takes;
    ``min_size`` is the fewest bytes it can take."""

    size: int | None = None
    min_size = 0
    code = ""  # its struct format character, for fixed-size fields
    ref: str | None = None  # the preceding field this one's size or count comes from

    def __init__(self, name: str, doc: str = ""):
        self.name = name
        self.doc = doc

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class Int(Field):
    """A fixed-size integer of ``size`` bytes. ``flags``: the names of its bit fields and their masks."""

    def __init__(self, name: str, size: int, *, signed: bool = True, flags: dict[str, int] | None = None,
                 doc: str = ""):
        super().__init__(name, doc)
        self.size = self.min_size = size
        self.signed = signed
        self.code = _CODES[size, signed]
        self.flags = dict(flags or {})


def UInt(name: str, size: int, **kw) -> Int:
    return Int(name, size, signed=False, **kw)


class Chars(Field):
    """``size`` raw bytes (a digest, say)."""

    def __init__(self, name: str, size: int, doc: str = ""):
        super().__init__(name, doc)
        self.size = self.min_size = size
        self.code = f"{size}s"


class UVarint(Field):
    """An unsigned LEB128 integer of at most ``max_bytes`` bytes."""

    zigzag = False
    min_size = 1

    def __init__(self, name: str, max_bytes: int = 5, doc: str = ""):
        super().__init__(name, doc)
        self.max_bytes = max_bytes


class Varint(UVarint):
    """A zig-zag varint (``max_bytes`` 5: Kafka's varint) or varlong (10)."""

    zigzag = True


def Varlong(name: str, doc: str = "") -> Varint:
    return Varint(name, 10, doc)


class Bytes(Field):
    """The bytes a preceding field ``length`` counts (a negative length: null)."""

    def __init__(self, name: str, length: str, doc: str = ""):
        super().__init__(name, doc)
        self.length = self.ref = length


class Rest(Field):
    """The bytes from here to where the preceding size field ``size_field`` says the structure ends."""

    def __init__(self, name: str, size_field: str, doc: str = ""):
        super().__init__(name, doc)
        self.size_field = self.ref = size_field


class Array(Field):
    """As many ``layout`` structures as a preceding field ``count`` says."""

    def __init__(self, name: str, count: str, layout: Layout, doc: str = ""):
        super().__init__(name, doc)
        self.count = self.ref = count
        self.layout = layout


class Layout:
    """A structure: its fields in order. ``byteorder`` is ``>`` (Kafka's) or ``<`` (kdump's own scratch files)."""

    def __init__(self, name: str, *fields: Field, byteorder: str = ">"):
        self.name = name
        self.fields = fields
        self.byteorder = byteorder
        self._index = {f.name: i for i, f in enumerate(fields)}
        if len(self._index) != len(fields):
            raise ValueError(f"{name}: two fields with one name")
        for i, f in enumerate(fields):
            if f.ref is not None and self._index.get(f.ref, i) >= i:
                raise ValueError(f"{name}.{f.name}: {f.ref!r} is not a field before it")
        self.min_size = sum(f.min_size for f in fields)

    def __getitem__(self, name: str) -> Field:
        return self.fields[self._index[name]]

    def __contains__(self, name: str) -> bool:
        return name in self._index

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def offset(self, name: str) -> int:
        """Where field ``name`` starts, from the start of the structure (every field before it has a fixed size)."""
        at = 0
        for f in self.fields[:self._index[name]]:
            if f.size is None:
                raise ValueError(f"{self.name}.{name} follows {f.name}, whose size varies")
            at += f.size
        return at

    def end(self, name: str) -> int:
        """Where field ``name`` ends (a fixed-size field)."""
        f = self[name]
        if f.size is None:
            raise ValueError(f"{self.name}.{name} has no fixed size")
        return self.offset(name) + f.size

    def struct(self, first: str | None = None, last: str | None = None) -> struct.Struct:
        """The ``struct.Struct`` reading the fields ``first`` .. ``last`` (``first`` alone: that field; neither: the
        whole structure), which must all have a fixed size."""
        lo = 0 if first is None else self._index[first]
        hi = len(self.fields) - 1 if first is None else self._index[last or first]
        span = self.fields[lo:hi + 1]
        if not span or any(not f.code for f in span):
            raise ValueError(f"{self.name}: {first}..{last} is not a run of fixed-size fields")
        return struct.Struct(self.byteorder + "".join(f.code for f in span))

    @property
    def size(self) -> int:
        """The size of a structure whose fields all have a fixed size."""
        return self.struct().size


def describe(layout: Layout) -> list[tuple[str, str, str, str]]:
    """``layout`` as rows (field, where it starts, its encoding, its size): what ``docs/layouts.md`` tabulates."""
    rows = []
    at: int | None = 0
    for f in layout.fields:
        where = str(at) if at is not None else "after the field before"
        order = "big-endian" if layout.byteorder == ">" else "little-endian"
        if isinstance(f, UVarint):
            encoding = ("signed varint (zig-zag)" if f.zigzag else "unsigned varint") + \
                (", 64-bit (varlong)" if f.max_bytes > 5 else "")
            size = f"1-{f.max_bytes}"
        elif isinstance(f, Int):
            encoding = f"{'int' if f.signed else 'uint'}{8 * f.min_size}, {order}" if f.min_size > 1 else \
                f"{'int' if f.signed else 'uint'}8"
            if f.flags:
                encoding += "; bits: " + ", ".join(f"{name} {mask:#04x}" for name, mask in f.flags.items())
            size = str(f.min_size)
        elif isinstance(f, Chars):
            encoding, size = "bytes", str(f.min_size)
        elif isinstance(f, Bytes):
            encoding, size = f"bytes, as many as {f.length} says (negative: null)", f.length
        elif isinstance(f, Rest):
            before = at - layout.end(f.size_field) if at is not None else None
            encoding = f"bytes, to where {f.size_field} says the structure ends"
            size = f"{f.size_field} - {before}" if before is not None else f"to the end of {f.size_field}"
        else:
            assert isinstance(f, Array)
            encoding, size = f"{f.count} times a {f.layout.name}", f"{f.count} x ..."
        rows.append((f.name, where, encoding, size))
        at = at + f.size if at is not None and f.size is not None else None
    return rows


class FieldValue(tuple):
    """One field as :func:`fields` finds it, the tuple ``(name, start, length, raw, value)``: ``start`` is a position
    in the walked buffer, ``raw`` its bytes, ``value`` what they say (an int, the bytes of a Bytes/Rest field or
    None for a null one, and for an Array a tuple of its elements, each a tuple of FieldValues). (A tuple subclass
    written out rather than a ``NamedTuple``: this module is imported by every command, and a NamedTuple's class
    takes longer to make than the rest of the module.)"""

    __slots__ = ()

    def __new__(cls, name: str, start: int, length: int, raw: bytes, value: object):
        return tuple.__new__(cls, (name, start, length, raw, value))

    name = property(itemgetter(0))
    start = property(itemgetter(1))
    length = property(itemgetter(2))
    raw = property(itemgetter(3))
    value = property(itemgetter(4))


class FieldError(FormatError):
    """A field of a declared structure that its bytes cannot hold: ``field`` names it, ``position`` is where it
    starts in the walked buffer."""

    def __init__(self, code: str, message: str, *, field: str, position: int):
        super().__init__(code, message, position=position)
        self.field = field


def read_uvarint_raw(buf, pos: int, end: int, max_bytes: int) -> int:
    """The position after the unsigned LEB128 integer at ``pos`` (its bytes are ``buf[pos:returned]``)."""
    for i in range(max_bytes):
        if pos + i >= end:
            raise FormatError("varint-truncated", f"varint at byte {pos} runs past the end of its data")
        if buf[pos + i] < 0x80:
            return pos + i + 1
    raise FormatError("varint-too-long", f"varint at byte {pos} is longer than {max_bytes} bytes")


def uvarint_value(raw: bytes) -> int:
    """The unsigned value of a LEB128 integer's bytes."""
    if len(raw) == 1:
        return raw[0]
    n = shift = 0
    for b in raw:
        n |= (b & 0x7F) << shift
        shift += 7
    return n


def varint_value(field: UVarint, raw: bytes) -> int:
    """What Kafka reads from a varint field's bytes: zig-zag decoded (a varlong wraps to 64 bits first, as Java's
    ``readVarlong`` does), or the unsigned value."""
    n = uvarint_value(raw)
    if not field.zigzag:
        return n
    if field.max_bytes > 5:
        n &= 0xFFFFFFFFFFFFFFFF
    return (n >> 1) ^ -(n & 1)


_VARINT, _FIXED, _CHARS, _ARRAY, _BYTES, _REST = range(6)


def _plan(layout: Layout) -> list[tuple]:
    """How :func:`fields` reads each field of ``layout``: its kind and what it needs, worked out once."""
    plan: list[tuple] = []
    for f in layout.fields:
        if isinstance(f, UVarint):
            plan.append((f, _VARINT, None))
        elif isinstance(f, Chars):
            plan.append((f, _CHARS, None))
        elif isinstance(f, Int):
            plan.append((f, _FIXED, struct.Struct(layout.byteorder + f.code).unpack))
        elif isinstance(f, Array):
            plan.append((f, _ARRAY, f.count))
        elif isinstance(f, Bytes):
            plan.append((f, _BYTES, f.length))
        else:
            assert isinstance(f, Rest)
            plan.append((f, _REST, f.size_field))
    return plan


def _truncated(layout: Layout, f: Field, start: int, size: int, end: int) -> FieldError:
    return FieldError("field-truncated", f"{layout.name}.{f.name}: {size} bytes at {start}, but only "
                      f"{max(end - start, 0)} remain", field=f.name, position=start)


def fields(layout: Layout, buf, pos: int = 0, end: int | None = None) -> Iterator[FieldValue]:
    """Walk ``layout`` over ``buf`` from ``pos`` (up to ``end``, default its length), field by field.

    Raises :class:`FieldError` at the first field the bytes cannot hold (after yielding the fields before it)."""
    end = len(buf) if end is None else end
    plan = layout.__dict__.get("_plan")
    if plan is None:
        plan = layout._plan = _plan(layout)  # type: ignore[attr-defined]
    values: dict[str, object] = {}
    ends: dict[str, int] = {}
    value: object
    for f, kind, arg in plan:
        start = pos
        if kind == _VARINT:
            try:
                pos = read_uvarint_raw(buf, pos, end, f.max_bytes)
            except FormatError as e:
                raise FieldError(e.code, f"{layout.name}.{f.name}: {e.message}", field=f.name,
                                 position=start) from None
            raw = bytes(buf[start:pos])
            value = varint_value(f, raw)
        elif kind in (_FIXED, _CHARS):
            pos += f.size
            if pos > end:
                raise _truncated(layout, f, start, f.size, end)
            raw = bytes(buf[start:pos])
            value = raw if kind == _CHARS else arg(raw)[0]
        elif kind == _ARRAY:
            items = []
            for _ in range(max(values[arg], 0)):  # type: ignore[call-overload]
                item = tuple(fields(f.layout, buf, pos, end))
                if item:
                    pos = item[-1].start + item[-1].length
                items.append(item)
            value, raw = tuple(items), bytes(buf[start:pos])
        else:
            n = values[arg]
            assert isinstance(n, int)
            if kind == _BYTES:
                stop = pos if n < 0 else pos + n
            else:
                stop = ends[arg] + n
                if stop < pos:
                    raise FieldError("field-size-invalid", f"{layout.name}.{arg} {n} ends the structure before "
                                     f"{f.name} at {start}", field=f.name, position=start)
            if stop > end:
                raise _truncated(layout, f, start, stop - start, end)
            pos = stop
            raw = bytes(buf[start:pos])
            value = None if kind == _BYTES and n < 0 else raw
        values[f.name] = value
        ends[f.name] = pos
        yield FieldValue(f.name, start, pos - start, raw, value)
