"""Confluent Schema Registry's wire format: how its serializers frame a key or value.

A framed payload is one magic byte (0), the schema id as a 4-byte big-endian signed int, then the
serialized data. Protobuf data is preceded by the *message indexes*: the path from the schema file's
top-level messages down to the nested message used, as a zig-zag varint count followed by that many
zig-zag varint indexes; a count of 0 (one zero byte, the common case) stands for ``[0]``, the file's first
message. Avro data is Avro binary and JSON Schema data is UTF-8 JSON text, both with nothing before them.
"""
from __future__ import annotations

from kdump.errors import FormatError
from kdump.format.varint import read_varint

MAGIC = 0
HEADER_SIZE = 5  # magic byte + schema id
_ID_START, _ID_END = 1, HEADER_SIZE

#: the message indexes a count of 0 stands for: the first message of the file
FIRST_MESSAGE = (0,)


class NotFramed(ValueError):
    """The bytes do not start with the registry's framing (too short, or a magic byte other than 0)."""


def schema_id(framed) -> int:
    """The schema id of a framed payload; :class:`NotFramed` if it is not one."""
    if len(framed) < HEADER_SIZE:
        raise NotFramed(f"{len(framed)} bytes, shorter than the {HEADER_SIZE}-byte registry header")
    if framed[0] != MAGIC:
        raise NotFramed(f"first byte is {framed[0]}, not the registry's magic byte 0")
    return int.from_bytes(framed[_ID_START:_ID_END], "big", signed=True)


def is_framed(framed) -> bool:
    """Whether ``framed`` starts like a registry payload (magic 0 and room for an id)."""
    return len(framed) >= HEADER_SIZE and framed[0] == MAGIC


def message_indexes(framed, pos: int = HEADER_SIZE) -> tuple[tuple[int, ...], int]:
    """The Protobuf message indexes at ``pos`` and the position of the message bytes after them. Raises
    :class:`~kdump.errors.FormatError` when the varints run past the end or the count is negative."""
    if pos < len(framed) and framed[pos] == 0:  # what nearly every record holds: a count of 0
        return FIRST_MESSAGE, pos + 1
    count, pos = read_varint(framed, pos)
    if count == 0:
        return FIRST_MESSAGE, pos
    if count < 0 or count > len(framed) - pos:  # each index takes at least one byte
        raise FormatError("message-indexes", f"message index count {count} does not fit the payload")
    indexes = []
    for _ in range(count):
        index, pos = read_varint(framed, pos)
        indexes.append(index)
    return tuple(indexes), pos
