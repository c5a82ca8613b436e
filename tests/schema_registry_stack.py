"""A log directory as a real producer stack leaves it, built without kdump's writer: the registry's storage
topic ``_schemas-0`` (JSON keys and values as the registry writes them) and Avro, Protobuf (two message types,
a nested one, an import and a well-known type) and JSON Schema topics, whose records are framed as the
registry's serializers frame them (0x00, 4-byte id, Protobuf message indexes, payload) and encoded with
fastavro, the protobuf runtime and json; batches are built with kafka-python's record builder.

``EXPECTED[topic]`` is, per record, what was encoded (the reference answer: the producer's own data, in the
JSON forms docs/schema-registry.md documents), or None for a record that must not decode.
"""
from __future__ import annotations

import base64
import datetime
import decimal
import importlib.resources
import io
import json
import os
import struct
import subprocess
import sys
import tempfile

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.util import encode_varint

pytest.importorskip("fastavro")
pytest.importorskip("google.protobuf")
pytest.importorskip("grpc_tools")

TS = 1_700_000_000_000

ADDRESS_AVSC = {"type": "record", "name": "Address", "namespace": "shop", "fields": [
    {"name": "street", "type": "string"}, {"name": "zip", "type": ["null", "string"], "default": None}]}
ORDER_AVSC = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"},
    {"name": "customer", "type": "string"},
    {"name": "amount", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "token", "type": "bytes"},
    {"name": "ship_to", "type": "shop.Address"},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "status", "type": {"type": "enum", "name": "Status", "symbols": ["NEW", "PAID"]}}]}
ORDER_V2_AVSC = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
    {"name": "id", "type": "long"}, {"name": "note", "type": "string", "default": ""}]}

COMMON_PROTO = '''syntax = "proto3";
package shop.common;
message Money { string currency = 1; int64 units = 2; }
'''
ORDERS_PROTO = '''syntax = "proto3";
package shop.v1;
import "common.proto";
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
message OrderPlaced {
  string id = 1;
  int64 amount_cents = 2;
  shop.common.Money total = 3;
  google.protobuf.Timestamp at = 4;
  repeated Line lines = 5;
  map<string, int64> counters = 6;
  bool gift = 7;
  google.protobuf.Int64Value discount = 8;
  map<string, shop.common.Money> by_currency = 9;
  message Line { string sku = 1; uint64 qty = 2; }
}
message OrderCancelled { string id = 1; string reason = 2; State state = 3;
  enum State { UNKNOWN = 0; CANCELLED = 1; } }
'''
ORDER_JSON_SCHEMA = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                     "properties": {"id": {"type": "integer"}, "items": {"type": "array"},
                                    "customer": {"$ref": "customer.json"}}}
CUSTOMER_JSON_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}

# id -> (subject, version, schemaType or None for Avro, schema text, references)
REGISTERED = {
    1: ("address", 1, None, json.dumps(ADDRESS_AVSC), []),
    2: ("orders-avro-value", 1, None, json.dumps(ORDER_AVSC), [{"name": "shop.Address", "subject": "address",
                                                               "version": 1}]),
    3: ("orders-avro-value", 2, None, json.dumps(ORDER_V2_AVSC), []),
    4: ("common.proto", 1, "PROTOBUF", COMMON_PROTO, []),
    5: ("orders-proto-value", 1, "PROTOBUF", ORDERS_PROTO, [{"name": "common.proto", "subject": "common.proto",
                                                            "version": 1}]),
    6: ("customer.json", 1, "JSON", json.dumps(CUSTOMER_JSON_SCHEMA), []),
    7: ("orders-json-value", 1, "JSON", json.dumps(ORDER_JSON_SCHEMA), [{"name": "customer.json",
                                                                       "subject": "customer.json", "version": 1}]),
    8: ("gone-value", 1, None, json.dumps({"type": "string"}), []),
    9: ("broken-value", 1, None, '{"type": "record", "name": "X", "fields": [{"name": "a", "type": "nosuch"}]}', []),
    10: ("orders-avro-key", 1, None, json.dumps("string"), []),
}


def _key(keytype: str, **fields) -> bytes:
    return json.dumps({"keytype": keytype, **fields, "magic": 1 if keytype == "SCHEMA" else 0}).encode()


def schemas_records() -> list[tuple[bytes, bytes | None]]:
    """The storage topic's records, in the order a registry writes them."""
    out: list[tuple[bytes, bytes | None]] = [(_key("NOOP"), None), (_key("CONFIG", subject=None),
                                                                   b'{"compatibilityLevel":"BACKWARD"}')]
    for sid, (subject, version, schema_type, text, refs) in REGISTERED.items():
        value = {"subject": subject, "version": version, "id": sid, "schema": text, "deleted": False}
        if schema_type:
            value["schemaType"] = schema_type
        if refs:
            value["references"] = refs
        out.append((_key("SCHEMA", subject=subject, version=version), json.dumps(value).encode()))
    # a soft delete of orders-avro-value version 1 (its id still decodes), by DELETE_SUBJECT ...
    out.append((_key("DELETE_SUBJECT", subject="orders-avro-value"),
                json.dumps({"subject": "orders-avro-value", "version": 1}).encode()))
    # ... and a hard delete of gone-value version 1: its id 8 is unknown afterwards
    subject, version, _, text, _ = REGISTERED[8]
    out.append((_key("SCHEMA", subject=subject, version=version),
                json.dumps({"subject": subject, "version": version, "id": 8, "schema": text,
                            "deleted": True}).encode()))
    out.append((_key("SCHEMA", subject=subject, version=version), None))
    out.append((b"not json", b"{}"))  # passed over, as the registry's reader does
    return out


def frame(schema_id: int, payload: bytes, indexes: list[int] | None = None) -> bytes:
    head = b"\x00" + struct.pack(">i", schema_id)
    if indexes is None:
        return head + payload
    if indexes == [0]:
        return head + b"\x00" + payload
    out = bytearray(head)
    for n in [len(indexes), *indexes]:  # zig-zag varints, as the serializer writes them (kafka-python's encoder)
        encode_varint(n, out.append)
    return bytes(out) + payload


def write_segment(directory, records: list[tuple[bytes | None, bytes | None]], per_batch: int = 3) -> None:
    os.makedirs(directory, exist_ok=True)
    data = bytearray()
    for start in range(0, len(records), per_batch):
        builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                                            producer_epoch=-1, base_sequence=-1, batch_size=1 << 30)
        for delta, (key, value) in enumerate(records[start:start + per_batch]):
            builder.append(delta, TS + start + delta, key, value, [])
        batch = bytearray(builder.build())
        batch[0:8] = struct.pack(">q", start)  # the batch's base offset (the builder writes 0)
        data += batch
    with open(os.path.join(directory, "00000000000000000000.log"), "wb") as f:
        f.write(data)


# --- the data topics ------------------------------------------------------------------------------------
def avro_records():
    import fastavro

    named: dict = {}
    fastavro.parse_schema(ADDRESS_AVSC, named_schemas=named)
    order = fastavro.parse_schema(ORDER_AVSC, named_schemas=named)
    order_v2 = fastavro.parse_schema(ORDER_V2_AVSC)
    key_schema = fastavro.parse_schema("string")

    def avro(schema, datum) -> bytes:
        out = io.BytesIO()
        fastavro.schemaless_writer(out, schema, datum)
        return out.getvalue()

    at = datetime.datetime(2024, 5, 1, 12, 30, 15, 250000, tzinfo=datetime.UTC)
    first = {"id": 1, "customer": "ada", "amount": decimal.Decimal("12.34"), "at": at,
             "day": datetime.date(2024, 5, 1), "token": b"\x00\xffk", "ship_to": {"street": "Main 1", "zip": None},
             "tags": ["a", "b"], "status": "PAID"}
    second = dict(first, id=2, customer="bob", tags=[], ship_to={"street": "Side 2", "zip": "1000"}, status="NEW")
    expected_first = {"id": 1, "customer": "ada", "amount": "12.34", "at": "2024-05-01T12:30:15.250000+00:00",
                      "day": "2024-05-01", "token": base64.b64encode(b"\x00\xffk").decode(),
                      "ship_to": {"street": "Main 1", "zip": None}, "tags": ["a", "b"], "status": "PAID"}
    expected_second = dict(expected_first, id=2, customer="bob", tags=[],
                           ship_to={"street": "Side 2", "zip": "1000"}, status="NEW")
    records = [
        (frame(10, avro(key_schema, "k1")), frame(2, avro(order, first)), ("k1", expected_first)),
        (frame(10, avro(key_schema, "k2")), frame(2, avro(order, second)), ("k2", expected_second)),
        (None, frame(3, avro(order_v2, {"id": 3, "note": "v2"})), (None, {"id": 3, "note": "v2"})),
        (None, None, (None, None)),  # a tombstone
        (None, b"plain text", (None, "not Schema Registry framed")),
        (None, frame(99, b"\x02"), (None, "schema id 99 is not in")),
        (None, frame(8, avro(fastavro.parse_schema("string"), "x")), (None, "schema id 8 is not in")),
        (None, frame(9, b"\x02"), (None, "schema 9 does not parse")),
        (None, frame(3, b"\x06"), (None, "Avro data ends before the value does")),
        (None, frame(2, avro(order, first)), (None, expected_first)),
    ]
    return [(k, v) for k, v, _ in records], [e for _, _, e in records]


def protobuf_classes():
    """The producer's classes, compiled by protoc in a subprocess (grpc_tools as a program, as a build would)."""
    from google.protobuf import descriptor_pb2, descriptor_pool
    from google.protobuf.message_factory import GetMessageClass

    include = str(importlib.resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory() as d:
        for name, text in (("common.proto", COMMON_PROTO), ("orders.proto", ORDERS_PROTO)):
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        out = os.path.join(d, "set.pb")
        subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{d}", f"-I{include}",
                        f"--descriptor_set_out={out}", "--include_imports", "orders.proto"], check=True)
        with open(out, "rb") as f:
            fds = descriptor_pb2.FileDescriptorSet.FromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for fd in fds.file:
        pool.Add(fd)
    return {name: GetMessageClass(pool.FindMessageTypeByName(name))
            for name in ("shop.v1.OrderPlaced", "shop.v1.OrderCancelled", "shop.v1.OrderPlaced.Line")}


def protobuf_records():
    classes = protobuf_classes()
    placed = classes["shop.v1.OrderPlaced"]()
    placed.id = "o-1"
    placed.amount_cents = 2**62 + 1  # beyond a double's exact integers: a JSON number all the same
    placed.total.currency = "EUR"
    placed.total.units = 12
    placed.at.FromDatetime(datetime.datetime(2024, 5, 1, 12, 0, 0))
    line = placed.lines.add()
    line.sku, line.qty = "s-1", 3
    placed.counters["views"] = 7
    placed.discount.value = -(2**40)
    placed.by_currency["USD"].units = 2**53 + 1
    cancelled = classes["shop.v1.OrderCancelled"](id="o-1", state=1)
    empty = classes["shop.v1.OrderPlaced"]()
    nested = classes["shop.v1.OrderPlaced.Line"](sku="s-9", qty=2**64 - 1)
    expected_placed = {"id": "o-1", "amount_cents": 2**62 + 1, "total": {"currency": "EUR", "units": 12},
                       "at": "2024-05-01T12:00:00Z", "lines": [{"sku": "s-1", "qty": 3}],
                       "counters": {"views": 7}, "gift": False, "discount": -(2**40),
                       "by_currency": {"USD": {"currency": "", "units": 2**53 + 1}}}
    expected_cancelled = {"id": "o-1", "reason": "", "state": "CANCELLED"}
    expected_empty = {"id": "", "amount_cents": 0, "lines": [], "counters": {}, "gift": False, "by_currency": {}}
    records = [
        (None, frame(5, placed.SerializeToString(), [0]), (None, expected_placed)),
        (None, frame(5, cancelled.SerializeToString(), [1]), (None, expected_cancelled)),
        (None, frame(5, empty.SerializeToString(), [0]), (None, expected_empty)),
        (None, frame(5, nested.SerializeToString(), [0, 0]), (None, {"sku": "s-9", "qty": 2**64 - 1})),
        (None, frame(5, b"\x0a\x05ab", [0]), (None, "Protobuf data does not match shop.v1.OrderPlaced")),
        (None, frame(5, b"", [7]), (None, "message indexes [7] name no message")),
    ]
    return [(k, v) for k, v, _ in records], [e for _, _, e in records]


def json_records():
    values = [{"id": 1, "items": [{"sku": "a", "n": 1.5}], "customer": {"name": "ada"}}, {"id": 2, "items": []}]
    records = [(None, frame(7, json.dumps(v).encode()), (None, v)) for v in values]
    records.append((None, frame(7, b"{not json"), (None, "value is not JSON")))
    return [(k, v) for k, v, _ in records], [e for _, _, e in records]


def build_log_dir(root) -> dict:
    """Writes the stack under ``root``; returns topic -> expected (key, value) per record."""
    write_segment(os.path.join(root, "_schemas-0"), schemas_records(), per_batch=4)
    expected = {}
    for topic, make in (("orders-avro", avro_records), ("orders-proto", protobuf_records),
                        ("orders-json", json_records)):
        records, expected[topic] = make()
        write_segment(os.path.join(root, f"{topic}-0"), records)
    return expected


def built_log_dir(tmp_path_factory) -> tuple[str, dict]:
    """(root, expected) of a new log directory built by :func:`build_log_dir` (the test modules' fixture)."""
    root = tmp_path_factory.mktemp("logdir")
    return str(root), build_log_dir(root)
