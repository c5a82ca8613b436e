"""Issue 24's speed work, held to the pure path: the compiled Avro-to-JSON program (kdump/format/_avro.pyx)
gives the text fastavro + json give or leaves the value to them, on random schemas, values and corruptions;
a column of payloads decodes as each payload alone does; and the text dump with the Schema Registry decoder
writes the same bytes on both backends (its keys and values handed to the compiled line renderer as text)."""
import io
import json
import math
import os
import random
import re
import struct

import pytest
import schema_registry_stack as stack  # skips the module without fastavro, protobuf, grpcio-tools
from support.cli import run_cli

from kdump import _backend
from kdump.decode import schema_registry as registry
from kdump.decode.errors import DecoderError
from kdump.decode.schema_registry.avro import AvroReader, to_json_text
from kdump.decode.schema_registry.decoder import SchemaRegistryDecoder, framed_texts_py
from kdump.decode.schema_registry.store import AVRO, Reference, RegisteredSchema, SchemaStore, SubjectVersion

_avro = pytest.importorskip("kdump.format._avro", reason="kdump's compiled modules are not built")
fastavro = pytest.importorskip("fastavro")

_LOGICAL = [("long", "timestamp-millis"), ("long", "timestamp-micros"), ("long", "local-timestamp-millis"),
            ("long", "local-timestamp-micros"), ("int", "date"), ("int", "time-millis"), ("long", "time-micros"),
            ("string", "uuid")]
_UUIDS = ["0f8fad5b-d9cb-469f-a165-70867728950e", "0F8FAD5B-D9CB-469F-A165-70867728950E",
          "{0f8fad5b-d9cb-469f-a165-70867728950e}", "0f8fad5bd9cb469fa16570867728950e", "not a uuid"]
_WORDS = ["", "a", "plain text", 'quote " and \\ backslash', "tab\tnew\nline\x00\x1f\x7f", "é ü ß", "日本語",
          "emoji 🎉", "\u2028\u2029", "x" * 40]


class _Schemas:
    """Random Avro schemas: every type the program reads, nested, with named types used again by name."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.n = 0

    def name(self, prefix):
        self.n += 1
        return f"{prefix}{self.n}"

    def schema(self, depth=0):
        r = self.rng
        primitives = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"]
        nested = ["record", "enum", "fixed", "array", "map", "union"] * (depth < 3)
        kind = r.choice(primitives + ["logical"] * 3 + nested)
        if kind in primitives:
            return kind if r.random() < 0.8 else {"type": kind}
        if kind == "logical":
            if r.random() < 0.3:
                precision = r.choice([1, 2, 5, 10, 18, 19, 30])
                decimal = {"type": "bytes", "logicalType": "decimal", "precision": precision,
                           "scale": r.choice([0, 1, 2, precision, min(precision, 12)])}
                if r.random() < 0.5:
                    fits = next(n for n in range(1, 64) if 2 ** (8 * n - 1) >= 10 ** precision)
                    decimal.update(type="fixed", name=self.name("D"), size=r.choice([fits, fits + 1, 8, 9]) if
                                   fits <= 8 else fits)
                return decimal
            base, logical = r.choice(_LOGICAL)
            return {"type": base, "logicalType": logical}
        if kind == "record":
            return {"type": "record", "name": self.name("R"), "namespace": "ns",
                    "fields": [{"name": f"f{i}_" + r.choice(["x", "é", "q\""]).replace('"', ""),
                                "type": self.schema(depth + 1)} for i in range(r.randint(0, 5))]}
        if kind == "enum":
            return {"type": "enum", "name": self.name("E"), "symbols": [f"S{i}" for i in range(r.randint(1, 4))]}
        if kind == "fixed":
            return {"type": "fixed", "name": self.name("F"), "size": r.randint(0, 7)}
        if kind == "array":
            return {"type": "array", "items": self.schema(depth + 1)}
        if kind == "map":
            return {"type": "map", "values": self.schema(depth + 1)}
        branches = r.sample(["null", "boolean", "long", "double", "string", "bytes"], r.randint(1, 3))
        if r.random() < 0.5:
            branches.append(self.schema(depth + 1) if depth < 2 else "int")
            if isinstance(branches[-1], (list, str)) and (isinstance(branches[-1], list)
                                                          or branches[-1] in branches[:-1]):
                branches.pop()
        return branches


def _value(schema, named, rng):
    """A random value of a parsed schema (``named``: its named types)."""
    if isinstance(schema, str) and schema in named:
        schema = named[schema]
    if isinstance(schema, list):
        return _value(rng.choice(schema), named, rng)
    kind = schema if isinstance(schema, str) else schema["type"]
    if isinstance(schema, dict) and schema.get("logicalType") == "decimal":  # the unscaled integer's bytes
        size = schema["size"] if kind == "fixed" else rng.choice([0, 1, 2, 8, 9])
        return bytes(rng.choice([0, 0xff, rng.randrange(256)]) for _ in range(size))
    if isinstance(schema, dict) and "logicalType" in schema:  # its underlying value, as a writer left it
        edges = {"timestamp-millis": (253402300799999, -62135596800000), "date": (2932896, -719162),
                 "time-millis": (86399999, 86400000), "time-micros": (86399999999, -1),
                 "timestamp-micros": (253402300799999999, -62135596800000000)}
        logical = schema["logicalType"].replace("local-", "")
        if logical == "uuid":
            return rng.choice(_UUIDS)
        low, high = edges[logical]
        return rng.choice([0, low, high, low + 1, high - 1, -1, rng.randint(min(low, high), max(low, high)),
                           rng.randint(-2**31, 2**31 - 1)] + ([2**40] if kind == "long" else []))
    if kind == "null":
        return None
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "int":
        return rng.choice([0, -1, 1, 2**31 - 1, -2**31, rng.randint(-1000, 1000)])
    if kind == "long":
        return rng.choice([0, -1, 2**63 - 1, -2**63, rng.randint(-2**40, 2**40)])
    if kind in ("float", "double"):
        value = rng.choice([0.0, -0.0, 1.5, 0.1, 1e300, 1e-300, 123456789.125, -2.5e-7, math.nan, math.inf,
                            rng.uniform(-1e6, 1e6)])
        return struct.unpack("<f", struct.pack("<f", value))[0] if kind == "float" and abs(value) < 1e38 else value
    if kind == "bytes":
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 9)))
    if kind == "string":
        return rng.choice(_WORDS)
    if kind == "record":
        return {f["name"]: _value(f["type"], named, rng) for f in schema["fields"]}
    if kind == "enum":
        return rng.choice(schema["symbols"])
    if kind == "fixed":
        return bytes(rng.randrange(256) for _ in range(schema["size"]))
    if kind == "array":
        return [_value(schema["items"], named, rng) for _ in range(rng.randint(0, 4))]
    return {rng.choice(_WORDS) + str(i): _value(schema["values"], named, rng) for i in range(rng.randint(0, 4))}


def _reader(schema_json, references=(), store=None) -> AvroReader:
    return AvroReader(RegisteredSchema(1, AVRO, json.dumps(schema_json), references), store or SchemaStore("test"))


def _program(reader: AvroReader):
    """The compiled program of the reader's schema, whatever the backend in use."""
    schema = reader._schema
    return _avro.avro_program(schema, schema.get("__named_schemas", {}) if isinstance(schema, dict) else {})


def _pure(reader: AvroReader, framed: bytes):
    """What the pure path gives: fastavro's value as json's text, or the DecoderError."""
    try:
        return to_json_text(reader.read(framed, 5))
    except DecoderError as e:
        return e


def _plain(schema):
    """``schema`` without its logical types (what writes their underlying values as they are)."""
    if isinstance(schema, dict):
        return {k: _plain(v) for k, v in schema.items() if k != "logicalType"}
    if isinstance(schema, list):
        return [_plain(v) for v in schema]
    return schema


def _reader_text(reader: AvroReader, framed: bytes):
    try:
        return reader.text(framed, 5)
    except DecoderError as e:
        return e


def _framed(parsed, value) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, fastavro.parse_schema(_plain(parsed)), value)
    return b"\x00\x00\x00\x00\x01" + out.getvalue()


def _corruptions(framed: bytes, rng):
    yield framed[:-1]
    yield framed + b"\x00"
    for _ in range(4):
        b = bytearray(framed)
        if len(b) > 5:
            b[rng.randrange(5, len(b))] = rng.randrange(256)
        yield bytes(b)


def test_the_program_gives_fastavros_text_or_leaves_the_value_to_it():
    rng = random.Random(24)
    values = written = 0
    for _ in range(300):
        schema = _Schemas(rng).schema()
        reader = _reader(schema)
        program = _program(reader)
        assert program is not None, schema
        named = reader._schema.get("__named_schemas", {}) if isinstance(reader._schema, dict) else {}
        for _ in range(5):
            framed = _framed(reader._schema, _value(reader._schema, named, rng))
            for data in (framed, *_corruptions(framed, rng)):
                text = program.text(data, 5)
                pure = _pure(reader, data)
                if text is not None:
                    assert text == pure, (schema, data)
            values += 1
            written += program.text(framed, 5) is not None
            assert str(_reader_text(reader, framed)) == str(_pure(reader, framed))  # the reader: the same answer
    assert written > values * 0.8  # the program did the work (not the pure path) for the values not NaN


def test_values_the_program_leaves_to_fastavro():
    reader = _reader({"type": "record", "name": "R", "fields": [
        {"name": "m", "type": {"type": "map", "values": "int"}}, {"name": "b", "type": "boolean"},
        {"name": "d", "type": "double"}, {"name": "s", "type": "string"}]})
    ok = b"\x00\x00\x00\x00\x01" + b"\x02\x02a\x04\x00" + b"\x01" + struct.pack("<d", 1.5) + b"\x02z"
    assert _program(reader).text(ok, 5) == '{"m":{"a":2},"b":true,"d":1.5,"s":"z"}' == _pure(reader, ok)
    left = {
        "a key twice (fastavro keeps the last value where the key came first)":
            b"\x06\x02a\x02\x02b\x04\x02a\x06\x00" + b"\x01" + struct.pack("<d", 1.5) + b"\x02z",
        "a boolean byte other than 0 and 1": b"\x00" + b"\x02" + struct.pack("<d", 1.5) + b"\x02z",
        "a double that is not finite": b"\x00" + b"\x01" + struct.pack("<d", math.nan) + b"\x02z",
        "a string that is not UTF-8": b"\x00" + b"\x01" + struct.pack("<d", 1.5) + b"\x02\xff",
        "trailing bytes": b"\x00" + b"\x01" + struct.pack("<d", 1.5) + b"\x02z!",
        "a value cut short": b"\x00" + b"\x01" + struct.pack("<d", 1.5) + b"\x04z",
    }
    for why, body in left.items():
        framed = b"\x00\x00\x00\x00\x01" + body
        assert _program(reader).text(framed, 5) is None, why
        pure = _pure(reader, framed)
        if isinstance(pure, DecoderError):
            with pytest.raises(DecoderError, match=re.escape(str(pure))):
                reader.text(framed, 5)
        else:
            assert reader.text(framed, 5) == pure
    assert _pure(reader, b"\x00\x00\x00\x00\x01" + next(iter(left.values()))) == \
        '{"m":{"a":3,"b":2},"b":true,"d":1.5,"s":"z"}'  # the key twice, as fastavro reads it


def test_decimals_as_fastavro_reads_them():
    rng = random.Random(12)
    for precision, scale in ((4, 2), (1, 0), (19, 0), (19, 19), (12, 12), (30, 7), (18, 6)):
        reader = _reader({"type": "bytes", "logicalType": "decimal", "precision": precision, "scale": scale})
        program = _program(reader)
        for _ in range(300):
            unscaled = rng.choice([0, 1, -1, 10**(precision - 1), -10**min(precision, 18),
                                   rng.randint(-2**63, 2**63 - 1), rng.randint(-10**6, 10**6)])
            size = max(1, (unscaled.bit_length() + 8) // 8)
            framed = _framed("bytes", unscaled.to_bytes(size, "big", signed=True))
            text, pure = program.text(framed, 5), _pure(reader, framed)
            assert text is None or text == pure, (precision, scale, unscaled)
            assert text is not None or len(str(abs(unscaled))) > precision or size > 8
    stack_order = _reader(stack.ORDER_AVSC, (Reference("shop.Address", "address", 1),), _address_store())
    assert _program(stack_order) is not None  # the producer stack's schema (decimal, timestamp, date) is compiled


def _address_store():
    store = SchemaStore("test")
    store.put_version(SubjectVersion("address", 1, 1, AVRO, json.dumps(stack.ADDRESS_AVSC), ()))
    return store


def test_logical_types_references_and_recursion_are_read():
    stamp = _reader({"type": "record", "name": "T", "fields": [
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "day", "type": {"type": "int", "logicalType": "date"}}]})
    framed = _framed(stamp._schema, {"at": 1714566615250, "day": 19844})
    assert _program(stamp).text(framed, 5) == '{"at":"2024-05-01T12:30:15.250000+00:00","day":"2024-05-01"}' \
        == _pure(stamp, framed)
    linked = {"type": "record", "name": "Node", "fields": [{"name": "v", "type": "int"},
                                                            {"name": "next", "type": ["null", "Node"]}]}
    reader = _reader(linked)
    framed = _framed(reader._schema, {"v": 1, "next": {"v": 2, "next": None}})
    assert _program(reader).text(framed, 5) == '{"v":1,"next":{"v":2,"next":null}}' == _pure(reader, framed)
    store = SchemaStore("test")
    store.put_version(SubjectVersion("point", 1, 7, AVRO, json.dumps(
        {"type": "record", "name": "Point", "namespace": "geo", "fields": [{"name": "x", "type": "double"}]}), ()))
    reader = _reader({"type": "record", "name": "Path", "fields": [{"name": "points", "type": {
        "type": "array", "items": "geo.Point"}}]}, (Reference("geo.Point", "point", 1),), store)
    framed = _framed(reader._schema, {"points": [{"x": 0.5}, {"x": -2.0}]})
    assert _program(reader).text(framed, 5) == '{"points":[{"x":0.5},{"x":-2.0}]}' == _pure(reader, framed)


def test_a_column_decodes_as_each_payload_alone():
    store = SchemaStore("test")
    store.put_version(SubjectVersion("s", 1, 1, AVRO, json.dumps(
        {"type": "record", "name": "R", "fields": [{"name": "id", "type": "long"}]}), ()))
    store.put_version(SubjectVersion("t", 1, 2, "JSON", '{"type": "object"}', ()))
    payloads = [b"\x00\x00\x00\x00\x01\x02", None, b"\x00\x00\x00\x00\x02{\"a\": 1}", b"plain",
                b"\x00\x00\x00\x00\x09\x02", b"\x00\x00\x00\x00\x01\x02\x02", b"\x00\x00\x00\x00\x01\x80"] * 3
    buf = b"".join(p or b"" for p in payloads)
    positions, lengths, at = [], [], 0
    for p in payloads:
        positions.append(at)
        lengths.append(-1 if p is None else len(p))
        at += len(p or b"")

    def alone(data):
        try:
            return decoder.decode(data)
        except DecoderError as e:
            return f"<{e}>"
    decoder = SchemaRegistryDecoder(store)
    expected = [None if p is None else alone(p) for p in payloads]
    for texts in (_avro.framed_texts, framed_texts_py):
        decoder = SchemaRegistryDecoder(store)  # readers built afresh: the first value of an id builds its reader
        got = [f"<{t}>" if isinstance(t, DecoderError) else t
               for t in texts(buf, positions, lengths, decoder._programs, decoder._text_or_error)]
        assert got == expected
    assert expected[0] == '{"id":1}' and expected[2] == '{"a":1}' and expected[4].startswith("<schema id 9 ")


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    return stack.built_log_dir(tmp_path_factory)


@pytest.mark.parametrize("topic", ["orders-avro", "orders-proto", "orders-json"])
@pytest.mark.parametrize("options", [(), ("--skip-record-metadata",), ("--compat", "scala")])
def test_text_dump_is_the_same_on_both_backends(log_dir, topic, options):
    root, _ = log_dir
    args = ("dump", "--key-decoder", "schema-registry", "--value-decoder", "schema-registry", *options,
            os.path.join(root, f"{topic}-0"))
    outputs, before = [], _backend.BACKEND
    for backend in ("compiled", "python"):
        _backend.use(backend)
        registry._DECODERS.clear()  # readers made afresh, with the programs of this backend (or none)
        try:
            result = run_cli(*args)
        finally:
            _backend.use(before)
        assert result.exit_code == 0, result.output
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1]
    assert "payload: {" in outputs[0]


# --- Protobuf: the per-type converter against MessageToDict --------------------------------------------------
PROTO = '''syntax = "proto3";
package speed;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";
import "google/protobuf/struct.proto";
import "google/protobuf/duration.proto";
enum Colour { RED = 0; GREEN = 1; BLUE = 2; }
message Inner { int64 big = 1; string name = 2; repeated Inner children = 3; }
message All {
  int32 i32 = 1; int64 i64 = 2; uint32 u32 = 3; uint64 u64 = 4; sint32 s32 = 5; sint64 s64 = 6;
  fixed32 f32 = 7; fixed64 f64 = 8; sfixed32 sf32 = 9; sfixed64 sf64 = 10; bool flag = 11; string text = 12;
  bytes blob = 13; float fl = 14; double db = 15; Colour colour = 16; Inner inner = 17;
  repeated int64 longs = 18; repeated float floats = 19; repeated Colour colours = 20; repeated Inner inners = 21;
  repeated bytes blobs = 22; map<string, int64> counts = 23; map<bool, Inner> by_flag = 24;
  map<int32, string> names = 25; optional int64 maybe = 26; oneof choice { string word = 27; Inner nested = 28; }
  google.protobuf.Timestamp at = 29; google.protobuf.Int64Value wrapped = 30; google.protobuf.Struct meta = 31;
  google.protobuf.Duration took = 32; google.protobuf.UInt64Value uwrapped = 33; optional double maybe_db = 34;
}
'''


def _reference(message):
    """MessageToDict's data with each 64-bit integer (quoted by the mapping) as a number, found by walking the
    descriptor beside it: an implementation independent of kdump's per-type converter."""
    from google.protobuf.json_format import MessageToDict
    return _unquote(message.DESCRIPTOR, MessageToDict(message, always_print_fields_with_no_presence=True,
                                                      preserving_proto_field_name=True))


def _unquote(descriptor, data):
    wide = (3, 4, 6, 16, 18)  # int64, uint64, fixed64, sfixed64, sint64
    if descriptor.full_name in ("google.protobuf.Int64Value", "google.protobuf.UInt64Value"):
        return int(data)
    if descriptor.file.name.startswith("google/protobuf/"):
        return data
    extensions = [descriptor.file.pool.FindExtensionByName(key[1:-1]) for key in data if key.startswith("[")]
    for field in list(descriptor.fields) + extensions:
        name = f"[{field.full_name}]" if field.is_extension else field.name
        if name not in data:
            continue
        value = data[name]
        entry = field.message_type
        if entry is not None and entry.GetOptions().map_entry:
            inner = entry.fields_by_name["value"]
            data[name] = {k: _one(inner, v, wide) for k, v in value.items()}
        elif field.is_repeated:
            data[name] = [_one(field, v, wide) for v in value]
        else:
            data[name] = _one(field, value, wide)
    return data


def _one(field, value, wide):
    if field.type in wide:
        return int(value)
    if field.message_type is not None:
        return _unquote(field.message_type, value)
    return value


def _fill(message, rng, depth=0):
    d = message.DESCRIPTOR
    ints = {1: (-2**31, 2**31 - 1), 2: (-2**63, 2**63 - 1), 3: (0, 2**32 - 1), 4: (0, 2**64 - 1),
            5: (-2**31, 2**31 - 1), 6: (-2**63, 2**63 - 1), 7: (0, 2**32 - 1), 8: (0, 2**64 - 1),
            9: (-2**31, 2**31 - 1), 10: (-2**63, 2**63 - 1)}

    def scalar(field):
        name = field.name
        if name in ("fl", "floats"):
            return rng.choice([0.0, -0.0, 0.1, 1.5, 3.4e38, math.inf, -math.inf, math.nan, 1e-7])
        if name in ("db", "maybe_db"):
            return rng.choice([0.0, -0.0, 0.1, 1e300, math.inf, math.nan, -2.5])
        if field.type == 8:
            return rng.random() < 0.5
        if field.type == 9:
            return rng.choice(_WORDS)
        if field.type == 12:
            return bytes(rng.randrange(256) for _ in range(rng.randint(0, 5)))
        if field.type == 14:
            return rng.choice([0, 1, 2, 7])  # 7: a number no value has (an open enum keeps it)
        low, high = ints[field.number] if field.number in ints else (-2**63, 2**63 - 1)
        return rng.choice([0, low, high, rng.randint(low, high)])

    for field in d.fields:
        if rng.random() < 0.4:
            continue
        target = field.message_type
        if target is not None and target.GetOptions().map_entry:
            mapping = getattr(message, field.name)
            key_field, value_field = target.fields_by_name["key"], target.fields_by_name["value"]
            for _ in range(rng.randint(0, 3)):
                key = scalar(key_field)
                if value_field.message_type is not None:
                    if depth < 2:
                        _fill(mapping[key], rng, depth + 1)
                else:
                    mapping[key] = scalar(value_field)
        elif target is not None and target.full_name.startswith("google.protobuf."):
            if field.name == "at":
                message.at.FromSeconds(rng.randint(0, 2**33))
            elif field.name == "took":
                message.took.FromNanoseconds(rng.randint(-10**12, 10**12))
            elif field.name == "meta":
                message.meta.update({"a": 1.5, "b": [True, None, "x"], "c": {"d": "e"}})
            else:
                top = 2**63 - 1 if field.name == "wrapped" else 2**64 - 1
                getattr(message, field.name).value = rng.choice([0, top])
        elif target is not None:
            if depth >= 2:
                continue
            if field.is_repeated:
                for _ in range(rng.randint(0, 2)):
                    _fill(getattr(message, field.name).add(), rng, depth + 1)
            else:
                sub = getattr(message, field.name)
                sub.SetInParent()
                _fill(sub, rng, depth + 1)
        elif field.is_repeated:
            getattr(message, field.name).extend(scalar(field) for _ in range(rng.randint(0, 3)))
        else:
            setattr(message, field.name, scalar(field))


def test_protobuf_values_convert_as_message_to_dict_does():
    from kdump.decode.schema_registry.protobuf import ProtobufReader
    from kdump.decode.schema_registry.store import PROTOBUF
    reader = ProtobufReader(RegisteredSchema(1, PROTOBUF, PROTO), SchemaStore("test"))
    cls, convert = reader.message((1,))
    rng = random.Random(2424)
    for _ in range(400):
        message = cls()
        _fill(message, rng)
        parsed = cls.FromString(message.SerializeToString())
        expected = _reference(parsed)
        got = convert(parsed)
        assert json.dumps(got) == json.dumps(expected)  # the same data in the same order (NaN included)
        framed = b"\x00\x00\x00\x00\x01\x02\x02" + message.SerializeToString()  # message indexes [1]
        assert reader.text(framed, 5) == json.dumps(expected, separators=(",", ":"), ensure_ascii=False)


def test_proto2_fields_with_presence_and_extensions_as_message_to_dict_does():
    from kdump.decode.schema_registry.protobuf import ProtobufReader
    from kdump.decode.schema_registry.store import PROTOBUF
    text = '''syntax = "proto2";
package two;
enum Closed { ONE = 1; TWO = 2; }
message Old { optional int64 n = 1 [default = 5]; required string s = 2; optional Closed c = 3 [default = TWO];
              repeated sint64 r = 4; extensions 100 to 200; }
extend Old { optional uint64 wide = 100; optional string label = 101; }
'''
    reader = ProtobufReader(RegisteredSchema(1, PROTOBUF, text), SchemaStore("test"))
    cls, convert = reader.message((0,))
    wide = reader._file.extensions_by_name["wide"]
    for message in (cls(s=""), cls(s="x", n=0, c=1, r=[-1, 2**62]), cls(s="y")):
        message.Extensions[wide] = 2**64 - 1
        for parsed in (cls.FromString(message.SerializeToString()), cls.FromString(cls(s="z").SerializeToString())):
            assert json.dumps(convert(parsed)) == json.dumps(_reference(parsed))
    assert convert(cls.FromString(message.SerializeToString()))["[two.wide]"] == 2**64 - 1


def test_logical_values_in_datetimes_range_are_written_by_the_program():
    reader = _reader({"type": "record", "name": "T", "fields": [
        {"name": n, "type": {"type": base, "logicalType": logical}}
        for n, (base, logical) in zip("abcdefgh", _LOGICAL, strict=True)]})
    rng = random.Random(7)
    millis, micros = (-62135596800000, 253402300799999), (-62135596800000000, 253402300799999999)
    for _ in range(500):
        value = {"a": rng.randint(*millis), "b": rng.randint(*micros), "c": rng.randint(*millis),
                 "d": rng.randint(*micros), "e": rng.randint(-719162, 2932896),
                 "f": rng.choice([0, 86399999, rng.randint(0, 86399999)]),
                 "g": rng.choice([0, 86399999999, rng.randint(0, 86399999999)]), "h": _UUIDS[0]}
        framed = _framed(reader._schema, value)
        assert _program(reader).text(framed, 5) == _pure(reader, framed)


@pytest.mark.parametrize("accelerated", [True, False])
def test_compact_encoder_writes_what_json_dumps_writes(accelerated, monkeypatch):
    import datetime
    from json import encoder

    from kdump.decode.schema_registry.json_schema import compact_encoder
    if not accelerated:
        monkeypatch.setattr(encoder, "c_make_encoder", None)
    values = [{"a": [1, 2.5, None, True], "é": {"q\"": "\u2028\x00"}, "n": math.nan, "i": -math.inf}, "text", 3,
              [], {}, 2**70, -0.0, 1e-7, {"when": datetime.date(2024, 5, 1)}]
    encode = compact_encoder(lambda o: o.isoformat())
    for value in values:
        assert encode(value) == json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                                           default=lambda o: o.isoformat())
    with pytest.raises(TypeError):
        compact_encoder()(object())


# --- the line renderers with decoded texts, compiled against pure ---------------------------------------------
def _columns(tmp_path, magic):
    from kafka.record.legacy_records import LegacyRecordBatchBuilder

    from kdump.format.limits import DEFAULT_MAX_DECOMPRESSED_BYTES
    from kdump.read.segment import SegmentReader
    pairs = [(b"k", b"v"), (None, b"\xff\xfe"), (b"\xe2\x82\xac", None), (None, None), (b"", b"")]
    if magic == 2:
        stack.write_segment(str(tmp_path), pairs, per_batch=len(pairs))
    else:
        builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
        for offset, (key, value) in enumerate(pairs):
            builder.append(offset, timestamp=stack.TS if magic else None, key=key, value=value)
        os.makedirs(tmp_path, exist_ok=True)
        (tmp_path / "00000000000000000000.log").write_bytes(bytes(builder.build()))
    with SegmentReader(str(tmp_path / "00000000000000000000.log")) as reader:
        batch = next(iter(reader))
        if magic < 2 and not hasattr(batch, "column_chunks"):
            pytest.skip("no columns for legacy batches")
        return batch, next(iter(batch.column_chunks(DEFAULT_MAX_DECOMPRESSED_BYTES)))


@pytest.mark.parametrize("magic", [0, 1, 2])
def test_line_renderers_take_decoded_texts_alike(tmp_path, magic):
    from kdump.render import _lines
    from kdump.render.kafka_text import render_legacy_lines_py, render_v2_lines_py
    batch, cols = _columns(tmp_path, magic)
    texts = ["plain", "é€🎉", "<reason: \"quoted\">", "\udcff escaped byte", ""]
    keys = [texts[i % 5] if n >= 0 else None for i, n in enumerate(cols.key_len)]
    values = [texts[(i + 1) % 5] if n >= 0 else None for i, n in enumerate(cols.value_len)]
    for print_data in (True, False):
        for skip in (True, False):
            for key_texts, value_texts in ((keys, values), (None, values), (keys, None), (None, None)):
                if magic == 2:
                    args = (cols, "CreateTime", batch.base_offset, batch.base_sequence, print_data, skip, key_texts,
                            value_texts)
                    compiled, pure = _lines.render_v2_lines(*args), render_v2_lines_py(*args)
                else:
                    args = (cols, "CreateTime", "}", print_data, skip, key_texts, value_texts)
                    compiled, pure = _lines.render_legacy_lines(*args), render_legacy_lines_py(*args)
                assert compiled == pure
                if print_data and value_texts is not None:
                    assert "payload: é€🎉".encode() in pure
