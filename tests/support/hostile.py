"""Hand-built hostile segments (issue 11, point 9): small files that are valid enough to be decoded and
large in what they make a reader build. Used by tests/test_hostile.py (peak RSS of a subprocess) and by
the fuzz campaign (bench/fuzz_verify.py --hostile).

* :func:`many_records_batch`: a CRC-valid magic-2 batch of ``n`` empty records (null key and value, no
  headers), compressed: zstd turns 4 M of them (28 MB) into about 1 KB;
* :func:`legacy_wrapper_of`: a CRC-valid magic-1 gzip wrapper of ``n`` inner messages;
* :func:`control_batch_of`: a CRC-valid control batch of ``n`` COMMIT markers;
* :func:`bomb_batch`: a CRC-valid magic-2 batch whose payload decompresses to ``n`` zero bytes;
* :func:`empty_batch_holding_a_record`: a magic-2 batch declaring 0 records that holds one whole record;
* :func:`varlong_timestamp_batch`: a record whose timestamp delta is a 10-byte varlong above 64 bits.

The records are identical (offset delta 0) so that building millions of them costs one ``bytes * n``; a
reader's memory does not depend on the deltas.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kdump import codec as _codec
from kdump.format.crc import crc32c
from kdump.format import layout as L
from kdump.format.varint import encode_uvarint, zigzag_encode
from kdump.write.segment import legacy_message

T0 = 1_700_000_000_000
EMPTY_RECORD_BODY = bytes((0, 0, 0, 1, 1, 0))  # attributes, ts delta 0, offset delta 0, key -1, value -1, 0 headers
EMPTY_RECORD = encode_uvarint(zigzag_encode(len(EMPTY_RECORD_BODY))) + EMPTY_RECORD_BODY


def v2_batch(payload: bytes, *, codec: int = _codec.NONE, count: int, last_offset_delta: int | None = None,
             base_offset: int = 0, max_timestamp: int = T0, flags: int = 0, producer_id: int = -1) -> bytes:
    """A magic-2 batch around ``payload`` (the records, compressed if ``codec``), its CRC computed; ``flags``
    are attribute bits beside the codec (transactional, control)."""
    lod = max(count - 1, 0) if last_offset_delta is None else last_offset_delta
    epoch = 0 if producer_id >= 0 else -1
    after = L.V2_AFTER_CRC.pack(codec | flags, lod, T0, max_timestamp, producer_id, epoch, -1, count) + payload
    before = L.V2_BEFORE_CRC.pack(base_offset, L.V2_BODY_HEAD_SIZE + len(payload), 0, 2)
    return before + L.UINT32.pack(crc32c(after)) + after


def many_records_batch(n: int, codec: int = _codec.ZSTD) -> bytes:
    return v2_batch(_codec.compress(codec, EMPTY_RECORD * n, magic=2), codec=codec, count=n)


def control_batch_of(n: int, codec: int = _codec.ZSTD) -> bytes:
    """A transactional control batch of producer 1 holding ``n`` COMMIT markers (Kafka reads only the first)."""
    key = bytes((0, 0, 0, 1))  # version 0, type 1 (COMMIT)
    value = bytes(6)  # version 0, coordinator epoch 0
    body = bytes((0, 0, 0)) + encode_uvarint(zigzag_encode(len(key))) + key + \
        encode_uvarint(zigzag_encode(len(value))) + value + bytes((0,))
    record = encode_uvarint(zigzag_encode(len(body))) + body
    return v2_batch(_codec.compress(codec, record * n, magic=2), codec=codec, count=n, producer_id=1,
                    flags=L.V2_TRANSACTIONAL_MASK | L.V2_CONTROL_MASK)


def legacy_wrapper_of(n: int, codec: int = _codec.GZIP) -> bytes:
    inner = legacy_message(0, 1, None, None, T0)
    value = _codec.compress(codec, inner * n, magic=1)
    return legacy_message(n - 1, 1, None, value, T0, codec=codec)


def bomb_batch(n: int, codec: int) -> bytes:
    return v2_batch(_codec.compress(codec, bytes(n), magic=2), codec=codec, count=1)


def empty_batch_holding_a_record() -> bytes:
    return v2_batch(EMPTY_RECORD, count=0, last_offset_delta=0)


def varlong_timestamp_batch() -> bytes:
    # 10 varint bytes carrying more than 64 bits: Kafka's readVarlong throws ("Varlong is too long")
    ts = bytes((0xFF,) * 9 + (0x7F,))
    body = bytes((0,)) + ts + bytes((0, 1, 1, 0))
    return v2_batch(encode_uvarint(zigzag_encode(len(body))) + body, count=1)


def sequential_records_batch(n: int, codec: int = _codec.ZSTD, headers: int = 0) -> bytes:
    """A CRC-valid magic-2 batch of ``n`` records with offset deltas 0..n-1 (so that it verifies: salvage keeps
    it, convert writes it), null key and value and ``headers`` (below 20) headers of empty key and value each,
    compressed. Built column-wise with numpy: 10 M records in about a second."""
    import numpy as np

    assert 0 <= headers < 20  # the record length and the header count stay one-byte varints
    zigzag = np.arange(n, dtype=np.int64) * 2  # offset delta i, zigzag-encoded
    widths = 1 + sum((zigzag >= 1 << (7 * k)).astype(np.int64) for k in range(1, 5))
    body = 5 + widths + 2 * headers  # attributes, timestamp delta, offset delta, key -1, value -1, header count
    starts = np.concatenate(([0], np.cumsum(body + 1)[:-1]))
    out = np.zeros(int((body + 1).sum()), dtype=np.uint8)
    out[starts] = 2 * body  # the record's length (zigzag); attributes and timestamp delta stay 0
    for k in range(5):  # the offset delta's varint, byte k of those at least k + 1 bytes long
        has = widths > k
        out[starts[has] + 3 + k] = ((zigzag[has] >> (7 * k)) & 0x7F) | np.where(widths[has] > k + 1, 0x80, 0)
    after = starts + 3 + widths
    out[after] = 1  # key length -1
    out[after + 1] = 1  # value length -1
    out[after + 2] = 2 * headers  # then 2 * headers zero bytes: empty keys and values
    payload = out.tobytes()
    return v2_batch(payload if codec == _codec.NONE else _codec.compress(codec, payload, magic=2),
                    codec=codec, count=n)


def header_record(offset_delta: int, n_headers: int) -> bytes:
    """A record with null key and value and ``n_headers`` headers of empty key and empty value."""
    body = bytes((0, 0)) + encode_uvarint(zigzag_encode(offset_delta)) + bytes((1, 1)) + \
        encode_uvarint(zigzag_encode(n_headers)) + bytes((0, 0)) * n_headers
    return encode_uvarint(zigzag_encode(len(body))) + body


def headers_batch(headers_per_record: list[int], codec: int = _codec.ZSTD) -> bytes:
    """A CRC-valid magic-2 batch of one record per item, each with that many empty headers (a header bomb: 10 M
    headers are 20 MB of records and about 1 KB in zstd)."""
    payload = b"".join(header_record(i, n) for i, n in enumerate(headers_per_record))
    return v2_batch(payload if codec == _codec.NONE else _codec.compress(codec, payload, magic=2),
                    codec=codec, count=len(headers_per_record))


def one_record_batch(value: bytes | None, header_values: tuple[bytes, ...] = (), codec: int = _codec.ZSTD) -> bytes:
    """A CRC-valid magic-2 batch of one record with a null key, ``value`` and a header ``h`` per item of
    ``header_values`` (a record may be as large as a batch: zstd keeps 64 MiB of one byte in a few KB)."""
    def field(data: bytes | None) -> bytes:
        return encode_uvarint(zigzag_encode(-1)) if data is None else encode_uvarint(zigzag_encode(len(data))) + data
    headers = b"".join(field(b"h") + field(v) for v in header_values)
    body = bytes((0, 0, 0)) + field(None) + field(value) + encode_uvarint(zigzag_encode(len(header_values))) + headers
    record = encode_uvarint(zigzag_encode(len(body))) + body
    return v2_batch(record if codec == _codec.NONE else _codec.compress(codec, record, magic=2), codec=codec,
                    count=1)


def sequential_legacy_wrapper(n: int, codec: int = _codec.GZIP) -> bytes:
    """A CRC-valid magic-1 wrapper of ``n`` inner messages with relative offsets 0..n-1 (null key and value), so
    that it verifies. An inner message's CRC does not cover its offset: one message, ``n`` offsets (numpy)."""
    import numpy as np

    inner = legacy_message(0, 1, None, None, T0)
    rows = np.frombuffer(inner * n, dtype=np.uint8).reshape(n, len(inner)).copy()
    rows[:, :8] = np.arange(n, dtype=">i8").view(np.uint8).reshape(n, 8)
    value = _codec.compress(codec, rows.tobytes(), magic=1)
    return legacy_message(n - 1, 1, None, value, T0, codec=codec)


def legacy_wrapper_bomb(n: int, codec: int = _codec.GZIP) -> bytes:
    """A CRC-valid magic-1 wrapper whose value decompresses to ``n`` zero bytes (1 GB of gzip is about 1 MB)."""
    return legacy_message(0, 1, None, _codec.compress(codec, bytes(n), magic=1), T0, codec=codec)


# --- every command that reads records, run in a fresh process for its peak RSS ------------------------------

# What a Spark Python worker runs for one task of the kafka-log source (KafkaLogReader.read): every Arrow
# batch of the segment, built and dropped; exit 1 when a damaged region was skipped, as `spark scan` does.
SPARK_READ = ("import sys; from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices; damaged = []; "
              "rows = sum(rb.num_rows for rb in read_slices([SegmentSlice(sys.argv[1], None, None)], "
              "ReadOptions(max_batch_bytes=int(sys.argv[2])), lambda sl, e: damaged.append(e))); "
              "sys.exit(1 if damaged else 0)")
# Runs argv[1:] as a child and prints its exit code and peak RSS in KB (RUSAGE_CHILDREN of this one child).
MEASURE = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
           "stderr=subprocess.DEVNULL); print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
# Every command that reads records: name -> (arguments, whether it takes --max-batch-bytes). {out}: a new
# directory for the command's output; without --max-batch-bytes the default limit of 256 MiB applies.
RECORD_COMMANDS: dict[str, tuple[list[str], bool]] = {
    "dump-text": (["dump", "--deep-iteration", "--print-data-log"], True),
    "dump-json": (["dump", "--deep-iteration", "--print-data-log", "--format", "json"], True),
    "verify-deep": (["verify", "--deep"], True),
    "index-rebuild": (["index", "rebuild", "-j", "1", "-o", "{out}"], False),
    "index-check-deep": (["index", "check", "--deep", "-j", "1"], False),
    "stats": (["stats"], False),
    "txn": (["txn"], False),
    "salvage": (["salvage", "-o", "{out}/00000000000000000000.log"], True),
    "groups": (["groups"], False),
    "txn-state": (["txn-state"], False),
    "metadata": (["metadata"], False),
    "convert-magic-0": (["convert", "--to-magic", "0", "--recompress", "zstd=gzip", "-o", "{out}/"], False),
    "convert-magic-1": (["convert", "--to-magic", "1", "--recompress", "zstd=gzip", "-o", "{out}/"], False),
    # zstd batches rebuilt with gzip: their records read and written, not copied
    "convert-magic-2": (["convert", "--to-magic", "2", "--recompress", "zstd=gzip", "-o", "{out}/"], False),
    "spark-reader": ([], True),  # the data source's read() in one Python process (a worker's task), no JVM
}
DEFAULT_LIMIT = 256 << 20  # the commands without --max-batch-bytes


def command_argv(command: str, path: Path, out: Path, max_batch_bytes: int | None = None) -> list[str]:
    """The argv of ``command`` (a :data:`RECORD_COMMANDS` name) on ``path``, writing under ``out``;
    ``max_batch_bytes`` is passed where the command takes it."""
    flags, has_limit = RECORD_COMMANDS[command]
    if command == "spark-reader":
        return [sys.executable, "-c", SPARK_READ, str(path), str(max_batch_bytes or DEFAULT_LIMIT)]
    extra = ["--max-batch-bytes", str(max_batch_bytes)] if max_batch_bytes and has_limit else []
    return [sys.executable, "-m", "kdump", *(f.replace("{out}", str(out)) for f in flags), *extra, str(path)]


def peak_rss(argv: list[str], env: dict) -> tuple[int, float]:
    """(exit code, peak RSS in MiB) of ``argv`` run in a fresh child of a fresh process."""
    res = subprocess.run([sys.executable, "-c", MEASURE, *argv], capture_output=True, text=True, env=env,
                         check=True)
    code, rss_kb = (int(x) for x in res.stdout.split())
    return code, rss_kb / 1024


def set_chunk_budget(monkeypatch, name: str, value: int) -> int:
    """Set ``name`` (``HEADERS_PER_CHUNK`` or ``BYTES_PER_CHUNK`` of kdump/format/limits.py) to ``value`` in both
    record decoders, the pure and the compiled (module globals they read at each call), for this test."""
    from kdump.format import v2
    monkeypatch.setattr(v2, name, value)
    try:
        from kdump.format import _records
    except ImportError:  # not built: the pure decoder is the only one
        return value
    monkeypatch.setattr(_records, name, value)
    return value
