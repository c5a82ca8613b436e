#!/usr/bin/env python3
"""Schema Registry decoding speed (issue 24), measured in one run against the libraries' own loops.

    python bench/bench_schema_registry.py [--records 200000] [--before TREE]

Builds a ``_schemas`` partition and an Avro and a Protobuf topic (kafka-python's record builder, values
framed as the registry's serializers frame them) in a temporary log directory, then reports records/s of:

* the baseline: fastavro's ``schemaless_reader`` over the same values (Avro), ``ParseFromString`` +
  ``MessageToDict`` (Protobuf), in a plain Python loop;
* kdump's decoder alone (``SchemaRegistryDecoder.decode``: framing, reader, compact JSON text);
* the whole text dump, ``kdump dump --value-decoder schema-registry`` to /dev/null, timed inside a child process
  (its second run: imports and schemas loaded) of this tree and, with ``--before TREE``, of another checkout
  of kdump (its compiled modules built in place), so that before and after are measured in one run, interleaved.

The issue asks the text dump to decode at no less than 0.8x the baseline's rate; the ratios are printed.
Needs the schema-registry extra (fastavro, protobuf, grpcio-tools) and kafka-python.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

AVSC = {"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "customer", "type": "string"}, {"name": "amount", "type": "double"},
    {"name": "tags", "type": {"type": "array", "items": "string"}}, {"name": "paid", "type": "boolean"}]}
PROTO = '''syntax = "proto3";
message Order { int64 id = 1; string customer = 2; double amount = 3; repeated string tags = 4; bool paid = 5; }
'''


def _segment(directory: str, pairs) -> None:
    from kafka.record.default_records import DefaultRecordBatchBuilder
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "00000000000000000000.log"), "wb") as f:
        for start in range(0, len(pairs), 500):
            builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False,
                                                producer_id=-1, producer_epoch=-1, base_sequence=-1,
                                                batch_size=1 << 30)
            for delta, (key, value) in enumerate(pairs[start:start + 500]):
                builder.append(delta, 1_700_000_000_000 + start + delta, key, value, [])
            batch = bytearray(builder.build())
            batch[0:8] = struct.pack(">q", start)
            f.write(batch)


def _registry(root: str) -> None:
    def record(sid, subject, text, schema_type=None):
        key = json.dumps({"keytype": "SCHEMA", "subject": subject, "version": 1, "magic": 1}).encode()
        value = {"subject": subject, "version": 1, "id": sid, "schema": text, "deleted": False}
        if schema_type:
            value["schemaType"] = schema_type
        return key, json.dumps(value).encode()
    _segment(os.path.join(root, "_schemas-0"), [record(1, "avro-value", json.dumps(AVSC)),
                                                 record(2, "proto-value", PROTO, "PROTOBUF")])


def _rates(n: int, *fns, rounds: int = 3) -> list[float]:
    """Records/s of each of ``fns``, best of ``rounds``, their runs interleaved (the machine is shared: a slow
    spell then slows every contender, not one)."""
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            reported = fn()
            best[i] = min(best[i], reported if getattr(fn, "child", False) else time.perf_counter() - start)
    return [n / b for b in best]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--before", help="another kdump checkout whose text dump is timed too")
    options = parser.parse_args()
    n = options.records

    import fastavro
    from google.protobuf.json_format import MessageToDict

    from kdump.decode.schema_registry import registry_decoder
    from kdump.decode.schema_registry.protobuf import ProtobufReader

    root = tempfile.mkdtemp(prefix="kdump-bench-sr-")
    _registry(root)
    parsed = fastavro.parse_schema(AVSC)
    avro_values = []
    for i in range(n):
        out = io.BytesIO()
        fastavro.schemaless_writer(out, parsed, {"id": i, "customer": f"customer-{i % 977}", "amount": i * 0.25,
                                                 "tags": ["a", "bb"][: i % 3], "paid": i % 2 == 0})
        avro_values.append(b"\x00" + struct.pack(">i", 1) + out.getvalue())
    _segment(os.path.join(root, "avro-0"), [(None, v) for v in avro_values])
    decoder = registry_decoder(os.path.join(root, "_schemas-0"))
    order_class = ProtobufReader(decoder.store.schema(2), decoder.store).message((0,))[0]
    proto_values = [b"\x00" + struct.pack(">i", 2) + b"\x00" + order_class(
        id=i, customer=f"customer-{i % 977}", amount=i * 0.25, tags=["a", "bb"][: i % 3],
        paid=i % 2 == 0).SerializeToString() for i in range(n)]
    _segment(os.path.join(root, "proto-0"), [(None, v) for v in proto_values])

    def avro_baseline():
        reader = fastavro.schemaless_reader
        for v in avro_values:
            reader(io.BytesIO(v[5:]), parsed, None)

    def proto_baseline():
        for v in proto_values:
            MessageToDict(order_class.FromString(v[6:]), always_print_fields_with_no_presence=True,
                          preserving_proto_field_name=True)

    # the same loops printing what kdump prints: compact JSON text (json.dumps; bytes and logical types would
    # need a default=, which these schemas do not have)
    def avro_baseline_text():
        reader = fastavro.schemaless_reader
        for v in avro_values:
            json.dumps(reader(io.BytesIO(v[5:]), parsed, None), separators=(",", ":"), ensure_ascii=False)

    def proto_baseline_text():
        for v in proto_values:
            json.dumps(MessageToDict(order_class.FromString(v[6:]), always_print_fields_with_no_presence=True,
                                     preserving_proto_field_name=True), separators=(",", ":"), ensure_ascii=False)

    def decoder_loop(values):
        def run():
            decode = decoder.decode
            for v in values:
                decode(v)
        return run

    seconds: dict[tuple[str, str], float] = {}  # (tree, topic) -> the last child's time

    def text_dump(topic, tree=str(ROOT)):
        def run():
            child = subprocess.run([sys.executable, "-c", _TIMED_DUMP, os.path.join(root, f"{topic}-0")],
                                   env={**os.environ, "PYTHONPATH": tree}, cwd=tree, capture_output=True, text=True)
            assert child.returncode == 0, child.stderr[-2000:]
            seconds[tree, topic] = float(child.stdout)
        return run

    print(f"{n:,} records a topic; records/s (best of 3, interleaved); ratio to the library's own loop")
    for name, values, baseline, baseline_text in (("Avro", avro_values, avro_baseline, avro_baseline_text),
                                                  ("Protobuf", proto_values, proto_baseline, proto_baseline_text)):
        topic = "avro" if name == "Avro" else "proto"
        dumps = [_child_timed(text_dump(topic), seconds, (str(ROOT), topic))]
        if options.before:
            dumps.append(_child_timed(text_dump(topic, options.before), seconds, (options.before, topic)))
        base, base_text, alone, *dump_rates = _rates(n, baseline, baseline_text, decoder_loop(values), *dumps)
        line = (f"{name:9} library loop {base:10,.0f}   + json.dumps {base_text:10,.0f}   kdump decoder {alone:10,.0f} "
                f"({alone / base:.2f}x; {alone / base_text:.2f}x of +json.dumps)   text dump {dump_rates[0]:10,.0f} "
                f"({dump_rates[0] / base:.2f}x; {dump_rates[0] / base_text:.2f}x)")
        if options.before:
            line += f"   before: text dump {dump_rates[1]:10,.0f} ({dump_rates[1] / base:.2f}x)"
        print(line)


# A child's text dump, kdump dump --value-decoder schema-registry PARTITION to /dev/null, run twice and timed
# the second time: the first loads kdump's commands and the schema libraries and reads the schemas, which the
# libraries' own loops it is compared with have done before they start too. Prints the seconds.
_TIMED_DUMP = """
import os, sys, time
from kdump.cli import cli
args = ["dump", "--value-decoder", "schema-registry", sys.argv[1]]
real = sys.stdout
sys.stdout = open(os.devnull, "w", encoding="utf-8")
for _ in range(2):
    start = time.perf_counter()
    try:
        cli.main(args, standalone_mode=False)
    except SystemExit as e:  # the exit code, as the command ends
        assert not e.code, e.code
    took = time.perf_counter() - start
sys.stdout = real
print(took)
"""


def _child_timed(run, seconds: dict, key):
    """``run`` (which starts a child) as a contender of :func:`_rates`, timed by the child itself: the
    measured time is replaced by what the child reported."""
    def timed():
        run()
        return seconds[key]
    timed.child = True  # type: ignore[attr-defined]
    return timed


if __name__ == "__main__":
    main()
