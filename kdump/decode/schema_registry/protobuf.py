"""Protobuf values: the ``.proto`` text compiled by protoc (the compiler bundled with grpcio-tools, run
in-process), the message chosen by the message indexes, parsed by the protobuf runtime.

Why protoc and not a pure-Python ``.proto`` parser: it is the reference grammar (imports, options, nested
and map types, proto2 and editions resolved as every other tool resolves them), it ships Google's well-known
types (``google/protobuf/timestamp.proto`` ...), and it compiled a typical schema faster than
proto-schema-parser only parsed it (docs/schema-registry.md has the measurement).

Printed as the protobuf runtime's JSON mapping with the ``.proto`` field names, fields without presence
present at their default, enums by name, well-known types in their JSON forms (a Timestamp as RFC 3339 text),
and every 64-bit integer as a JSON number (the mapping quotes them, for JavaScript's sake).
"""
from __future__ import annotations

import base64
import contextlib
import importlib.resources
import math
import os
import tempfile
import threading
from collections.abc import Callable
from typing import Any

from kdump.decode.errors import DecoderError
from kdump.decode.schema_registry.json_schema import compact_json
from kdump.decode.schema_registry.store import PROTOBUF, Reference, RegisteredSchema, SchemaStore
from kdump.errors import FormatError
from kdump.format.schema_registry import message_indexes

_PROTOC_LOCK = threading.Lock()  # protoc reports on the process's fd 2, borrowed while it runs


class ProtobufReader:
    """Reads the values written with one Protobuf schema (any of its messages)."""

    def __init__(self, schema: RegisteredSchema, store: SchemaStore):
        from google.protobuf import descriptor_pb2, descriptor_pool
        from google.protobuf.message import DecodeError

        main = f"kdump-schema-{schema.id}.proto"
        files = {main: schema.text}
        _add_references(schema.id, schema.references, store, files)
        descriptor_set = descriptor_pb2.FileDescriptorSet.FromString(compile_protos(files, main))
        pool = descriptor_pool.DescriptorPool()  # one per schema: versions of a schema reuse its names
        for file_proto in descriptor_set.file:
            pool.Add(file_proto)
        self._file = pool.FindFileByName(main)
        self._messages: dict[tuple[int, ...], tuple[Any, Callable[[Any], Any]]] = {}
        self._decode_error = DecodeError

    def message(self, indexes: tuple[int, ...]):
        """The message class and its converter to JSON data for ``indexes``; DecoderError for a path the file
        does not have."""
        found = self._messages.get(indexes)
        if found is None:
            from google.protobuf.message_factory import GetMessageClass

            descriptor = None
            choices = list(self._file.message_types_by_name.values())
            for index in indexes:
                if not 0 <= index < len(choices):
                    raise DecoderError(f"message indexes {list(indexes)} name no message of the schema")
                descriptor = choices[index]
                # the indexes count the messages declared in the .proto text, as the registry's serializer
                # numbers them: the entry types protoc makes for map fields are not among them
                choices = [t for t in descriptor.nested_types if not t.GetOptions().map_entry]
            if descriptor is None:
                raise DecoderError("no message indexes")
            found = self._messages[indexes] = (GetMessageClass(descriptor), _converter(descriptor))
        return found

    def json(self, framed, start: int) -> Any:
        try:
            indexes, start = message_indexes(framed, start)
        except FormatError as e:
            raise DecoderError(f"message indexes: {e.message}") from None
        cls, convert = self.message(indexes)
        try:
            message = cls.FromString(framed[start:])
        except self._decode_error as e:
            raise DecoderError(f"Protobuf data does not match {cls.DESCRIPTOR.full_name}: {e}") from None
        return convert(message)

    def text(self, framed, start: int) -> str:
        return compact_json(self.json(framed, start))


def _add_references(schema_id: int, references: tuple[Reference, ...], store: SchemaStore, files: dict) -> None:
    for ref in references:
        if ref.name in files:
            continue
        target = store.version(ref.subject, ref.version)
        if target is None:
            raise DecoderError(f"schema {schema_id} imports {ref.name} ({ref.subject} version {ref.version}), "
                               f"which {store.source} does not hold")
        if target.schema_type != PROTOBUF:
            raise DecoderError(f"schema {schema_id} imports {ref.name}, a {target.schema_type} schema")
        files[ref.name] = target.text
        _add_references(schema_id, target.references, store, files)


def well_known_types_dir() -> str:
    """Where grpcio-tools keeps the ``.proto`` files of Google's well-known types."""
    return str(importlib.resources.files("grpc_tools") / "_proto")


def compile_protos(files: dict[str, str], main: str) -> bytes:
    """A serialized FileDescriptorSet of ``main`` and everything it imports (``files``: import path -> text;
    the well-known types are found by protoc itself). DecoderError with protoc's own message when it fails."""
    try:
        from grpc_tools import protoc
    except ImportError:
        raise DecoderError("decoding Protobuf needs grpcio-tools (pip install 'kdump[schema-registry]')") from None
    with tempfile.TemporaryDirectory(prefix="kdump-proto-") as root:
        for name, text in files.items():
            path = os.path.join(root, name)
            if os.path.relpath(path, root).startswith(os.pardir):
                raise DecoderError(f"import path {name!r} leaves the import root")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        out = os.path.join(root, "kdump-descriptors.pb")
        args = ["protoc", f"-I{root}", f"-I{well_known_types_dir()}", f"--descriptor_set_out={out}",
                "--include_imports", main]
        with _PROTOC_LOCK, tempfile.TemporaryFile() as messages:
            with _stderr_to(messages):
                status = protoc.main(args)
            messages.seek(0)
            said = messages.read().decode("utf-8", "replace").strip().replace(root + os.sep, "")
        if status != 0:
            raise DecoderError(f"the schema does not compile: {said or f'protoc exited {status}'}")
        with open(out, "rb") as f:
            return f.read()


@contextlib.contextmanager
def _stderr_to(file):
    saved = os.dup(2)
    try:
        os.dup2(file.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


# --- JSON data of a message -------------------------------------------------------------------------------
# What MessageToDict(message, always_print_fields_with_no_presence=True, preserving_proto_field_name=True) gives,
# with every 64-bit integer as a number, made by a converter built once per message type: a table of what each
# field's value becomes. MessageToDict finds that out field by field, value by value, in Python, and costs most
# of the time of decoding a small message; the table does the same work at a fraction of that. Its order is
# MessageToDict's: the fields the message has (ListFields: by number), then those without presence it lacks, at
# their defaults, in declaration order. Well-known types are left to MessageToDict (their JSON forms), their
# 64-bit wrappers made numbers.
_INT64_WRAPPERS = frozenset(("google.protobuf.Int64Value", "google.protobuf.UInt64Value"))
_WELL_KNOWN_FILES = "google/protobuf/"
_LABEL_REPEATED = 3
_CPPTYPE_MESSAGE, _CPPTYPE_ENUM, _CPPTYPE_STRING, _CPPTYPE_FLOAT, _CPPTYPE_DOUBLE = 10, 8, 9, 6, 5
_TYPE_BYTES = 12


def _converter(descriptor, made: dict | None = None) -> Callable[[Any], dict]:
    """The JSON data of a message of ``descriptor`` (see above); ``made``: the converters of the message types
    met so far (a recursive type uses its own)."""
    made = {} if made is None else made
    found = made.get(descriptor.full_name)
    if found is not None:
        return found
    fields: dict[Any, tuple[str, Callable[[Any], Any] | None]] = {}  # field -> its JSON name and conversion
    absent: list[tuple[str, Callable[[], Any]]] = []  # fields without presence: name, default JSON value

    def convert(message) -> dict:
        data = {}
        for field, value in message.ListFields():
            entry = fields.get(field)
            if entry is None:  # an extension
                entry = fields[field] = (f"[{field.full_name}]", _conversion(field, made))
            name, conversion = entry
            data[name] = value if conversion is None else conversion(value)
        if len(data) < len(fields):
            for name, default in absent:
                if name not in data:
                    data[name] = default()
        return data
    made[descriptor.full_name] = convert
    for field in descriptor.fields:
        conversion = _conversion(field, made)
        fields[field] = (field.name, conversion)
        if not field.has_presence:
            absent.append((field.name, _default(field, conversion)))
    return convert


def _default(field, conversion) -> Callable[[], Any]:
    if _repeated(field):
        return dict if _is_map(field) else list
    value = field.default_value if conversion is None else conversion(field.default_value)
    return lambda: value


def _is_map(field) -> bool:
    return field.message_type is not None and field.message_type.GetOptions().map_entry


def _repeated(field) -> bool:
    # protobuf 7 dropped FieldDescriptor.label for is_repeated (5.28 on); older runtimes have the label only
    repeated = getattr(field, "is_repeated", None)
    return field.label == _LABEL_REPEATED if repeated is None else bool(repeated)


def _conversion(field, made: dict) -> Callable[[Any], Any] | None:
    """What a value of ``field`` becomes (the whole list or map of a repeated one); None: it stays as it is."""
    if _is_map(field):
        value_of = _single(field.message_type.fields_by_name["value"], made) or _same
        return lambda mapping: {_map_key(k): value_of(v) for k, v in mapping.items()}
    each = _single(field, made)
    if not _repeated(field):
        return each
    if each is None:
        return list
    return lambda values: [each(v) for v in values]


def _single(field, made: dict) -> Callable[[Any], Any] | None:
    """What one value of ``field`` becomes, as MessageToDict's _FieldToJsonObject makes it; None: as it is
    (integers of every size, booleans, strings)."""
    cpp_type = field.cpp_type
    if cpp_type == _CPPTYPE_MESSAGE:
        message = field.message_type
        if message.file.name.startswith(_WELL_KNOWN_FILES):
            return _well_known(message)
        return _converter(message, made)
    if cpp_type == _CPPTYPE_ENUM:
        if field.enum_type.full_name == "google.protobuf.NullValue":
            return _null
        names = {number: value.name for number, value in field.enum_type.values_by_number.items()}
        return lambda number: names.get(number, number)  # a number no value has (an open enum): the number
    if cpp_type == _CPPTYPE_STRING and field.type == _TYPE_BYTES:
        return _base64
    if cpp_type == _CPPTYPE_DOUBLE:
        return _double
    if cpp_type == _CPPTYPE_FLOAT:
        from google.protobuf.internal.type_checkers import ToShortestFloat

        # a float's shortest text that reads back as the same 32-bit value (0.1, not 0.10000000149011612)
        return lambda value: ToShortestFloat(value) if value - value == 0.0 else _special(value)
    return None


def _well_known(message_type) -> Callable[[Any], Any]:
    from google.protobuf.json_format import MessageToDict

    def as_json(message):
        return MessageToDict(message, always_print_fields_with_no_presence=True, preserving_proto_field_name=True)
    if message_type.full_name in _INT64_WRAPPERS:
        return lambda message: int(as_json(message))  # the mapping quotes it, for JavaScript's sake
    return as_json


def _same(value):
    return value


def _null(value) -> None:
    return None


def _map_key(key) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _base64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


def _special(value: float) -> str | None:
    """How the mapping writes a float JSON has no number for, None for the others."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    return None


def _double(value: float) -> Any:
    return value if value - value == 0.0 else _special(value)  # x - x is 0 for every finite x, NaN for the rest
