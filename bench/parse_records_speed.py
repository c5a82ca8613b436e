"""Rough timing of the magic-2 record decoder: pure Python vs the compiled kdump.format._records.

    python bench/parse_records_speed.py [--records 1000] [--iterations 200] [--headers 0]

Builds one batch payload of typical records (12-byte key, 100-byte value, no headers by default), then
decodes it ``iterations`` times with each path and prints ns/record (best of 5 runs). Prints only:
it asserts nothing beyond both paths agreeing on the decoded columns.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from kdump.format.v2 import parse_records_py  # noqa: E402
from kdump.format.varint import encode_varint  # noqa: E402

BASE_OFFSET = 1_234_567_890
BASE_TIMESTAMP = 1_700_000_000_000


def build_payload(n: int, key_size: int = 12, value_size: int = 100, n_headers: int = 0) -> bytes:
    out = bytearray()
    for i in range(n):
        key = (b"key-%08d" % i).ljust(key_size, b"k")[:key_size]
        value = bytes((i + j) & 0xFF for j in range(value_size))
        body = bytearray([0])  # attributes
        body += encode_varint(i * 3)  # timestamp delta
        body += encode_varint(i)  # offset delta
        body += encode_varint(len(key)) + key
        body += encode_varint(len(value)) + value
        body += encode_varint(n_headers)
        for h in range(n_headers):
            hk, hv = b"h%d" % h, b"v" * 8
            body += encode_varint(len(hk)) + hk + encode_varint(len(hv)) + hv
        out += encode_varint(len(body)) + body
    return bytes(out)


def columns(c):
    return (c.count, c.offsets, c.timestamps, c.attributes, c.key_pos, c.key_len, c.value_pos,
            c.value_len, c.headers, c.sizes, c.error)


def time_it(fn, payload: bytes, n: int, iterations: int, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(iterations):
            fn(payload, 0, len(payload), n, BASE_OFFSET, BASE_TIMESTAMP, None)
        best = min(best, time.perf_counter_ns() - t0)
    return best / (iterations * n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--headers", type=int, default=0, help="headers per record")
    args = ap.parse_args()

    payload = build_payload(args.records, n_headers=args.headers)
    print(f"payload: {args.records} records, {len(payload)} bytes, {args.headers} header(s)/record, "
          f"{args.iterations} iterations")
    pure = time_it(parse_records_py, payload, args.records, args.iterations)
    print(f"pure Python : {pure:8.1f} ns/record")
    try:
        from kdump.format._records import parse_records as compiled_fn
    except ImportError as e:
        print(f"compiled    : not built ({e})")
        return
    a = columns(parse_records_py(payload, 0, len(payload), args.records, BASE_OFFSET, BASE_TIMESTAMP, None))
    b = columns(compiled_fn(payload, 0, len(payload), args.records, BASE_OFFSET, BASE_TIMESTAMP, None))
    if a != b:
        print("WARNING: the two paths decoded different columns")
    compiled = time_it(compiled_fn, payload, args.records, args.iterations)
    print(f"compiled    : {compiled:8.1f} ns/record  ({pure / compiled:.1f}x faster)")


if __name__ == "__main__":
    main()
