"""Kafka's generated-message encoding written out by hand for tests (struct.pack, not kdump's writer): keys and
values of internal-topic records encoded from Kafka's definitions independently of the decoder under test."""
import struct


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def s16(text: str) -> bytes:
    """A non-flexible string (coordinator keys)."""
    return struct.pack(">h", len(text)) + text.encode()


def cstr(text: str) -> bytes:
    """A compact string."""
    return uvarint(len(text) + 1) + text.encode()


def carray(items: list[bytes]) -> bytes:
    """A compact array of already encoded items."""
    return uvarint(len(items) + 1) + b"".join(items)


def tags(*fields: tuple[int, bytes]) -> bytes:
    """A tagged-field section: (tag, bytes) each."""
    return uvarint(len(fields)) + b"".join(uvarint(t) + uvarint(len(d)) + d for t, d in fields)


def int32s(values) -> bytes:
    return carray([struct.pack(">i", v) for v in values])


def group_key(rtype: int, group: str, *more: str) -> bytes:
    """A coordinator record's key: its type, then the group id and the other strings of the key."""
    return struct.pack(">h", rtype) + s16(group) + b"".join(s16(m) for m in more)


def task_ids(subtopology: str, partitions) -> bytes:
    """A Streams group's TaskIds struct."""
    return cstr(subtopology) + int32s(partitions) + tags()
