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

from kdump import codec as _codec
from kdump._crc import crc32c
from kdump.format import layout as L
from kdump.format.varint import encode_uvarint, zigzag_encode
from kdump.writer import legacy_message

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
