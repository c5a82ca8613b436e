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

import contextlib
import importlib.resources
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

        main = f"kdump-schema-{schema.id}.proto"
        files = {main: schema.text}
        _add_references(schema.id, schema.references, store, files)
        descriptor_set = descriptor_pb2.FileDescriptorSet.FromString(compile_protos(files, main))
        pool = descriptor_pool.DescriptorPool()  # one per schema: versions of a schema reuse its names
        for file_proto in descriptor_set.file:
            pool.Add(file_proto)
        self._file = pool.FindFileByName(main)
        self._messages: dict[tuple[int, ...], tuple[Any, Callable[[Any], Any]]] = {}

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
        from google.protobuf.message import DecodeError

        try:
            indexes, start = message_indexes(framed, start)
        except FormatError as e:
            raise DecoderError(f"message indexes: {e.message}") from None
        cls, convert = self.message(indexes)
        try:
            message = cls.FromString(framed[start:])
        except DecodeError as e:
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
# MessageToDict gives the runtime's JSON mapping; what it quotes (64-bit integers, also inside the
# Int64Value/UInt64Value wrappers) is turned back into numbers by a plan made once per message type, which is
# None for a type holding no 64-bit integer at any depth (most: then the dict is returned as it is).
_INT64_TYPES = frozenset((3, 4, 6, 16, 18))  # FieldDescriptor.TYPE_INT64, UINT64, FIXED64, SFIXED64, SINT64
_INT64_WRAPPERS = frozenset(("google.protobuf.Int64Value", "google.protobuf.UInt64Value"))
_LABEL_REPEATED = 3


def _converter(descriptor) -> Callable[[Any], Any]:
    from google.protobuf.json_format import MessageToDict

    plan = _plan(descriptor, {})

    def convert(message) -> Any:
        data = MessageToDict(message, always_print_fields_with_no_presence=True, preserving_proto_field_name=True)
        if plan is not None:
            plan(data)
        return data
    return convert


def _number(value):
    return int(value) if isinstance(value, str) else value


def _plan(descriptor, plans: dict) -> Callable[[dict], None] | None:
    """What turns the quoted 64-bit integers of one message's dict into numbers, in place; None if nothing."""
    name = descriptor.full_name
    if name in plans:  # a recursive type: decided when its own plan is done, looked up then
        return lambda data: (plans[name] or _nothing)(data)
    plans[name] = None
    steps = []
    for field in descriptor.fields:
        repeated = _repeated(field)
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            each = _value_step(entry.fields_by_name["value"], plans)
            if each is not None:
                steps.append((field.name, _map_values(each)))
            continue
        each = _value_step(field, plans)
        if each is not None:
            steps.append((field.name, _all_of(each) if repeated else each))
    plan = _apply(steps) if steps else None
    plans[name] = plan
    return plan


def _repeated(field) -> bool:
    # protobuf 7 dropped FieldDescriptor.label for is_repeated (5.28 on); older runtimes have the label only
    repeated = getattr(field, "is_repeated", None)
    return field.label == _LABEL_REPEATED if repeated is None else bool(repeated)


def _value_step(field, plans) -> Callable[[Any], Any] | None:
    """What one value of ``field`` becomes (a function of the value), or None when it stays as it is."""
    if field.type in _INT64_TYPES:
        return _number
    message = field.message_type
    if message is None:
        return None
    if message.full_name in _INT64_WRAPPERS:
        return _number
    if message.full_name.startswith("google.protobuf."):
        return None  # the other well-known types hold no quoted integer in their JSON forms
    inner = _plan(message, plans)
    if inner is None:
        return None
    return lambda data: (inner(data), data)[1]


def _nothing(data) -> None:
    return None


def _all_of(each):
    return lambda values: [each(v) for v in values]


def _map_values(each):
    return lambda mapping: {k: each(v) for k, v in mapping.items()}


def _apply(steps):
    def plan(data: dict) -> None:
        for name, step in steps:
            value = data.get(name)
            if value is not None:
                data[name] = step(value)
    return plan
