"""Deterministic test segments written by kdump's own writer: ``python -m tests.support.fixtures [OUT_DIR]``.

Every fixture is a directory holding one ``<base offset>.log`` segment; OUT_DIR defaults to the
repository's ``fixtures/generated/``, together with a generated ``README.md`` describing each fixture.
Content is fixed: timestamps are ``1700000000000 + i``, pseudo-random bytes come from
``random.Random(seed)`` with a seed derived from the fixture name, and the codecs are deterministic,
so regenerating gives byte-identical files (with the same compression library versions).

Besides the files, :func:`all_fixtures` returns what each segment is *meant* to contain
(:class:`ExpectedEntry` / :class:`ExpectedRecord`), so tests can check a reader against the intent
rather than against another reader.
"""
from __future__ import annotations

import os
import random
import sys
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from kdump import codec as _codec
from kdump.format.names import CODEC_NAMES
from kdump.format import layout as L
from kdump.format.types import ControlRecordType, TimestampType
from kdump.format.legacy_builder import LegacyMessageBuilder
from kdump.format.v2_builder import RecordBatchBuilder, empty_batch
from kdump.write.segment import (
    KRaftEndpoint, KRaftVoter, control_batch, control_record_key, end_txn_marker_batch, end_txn_marker_value,
    kraft_version_value, kraft_voters_value, leader_change_value, snapshot_footer_value, snapshot_header_value,
    write_segment,
)

BASE_TIMESTAMP = 1700000000000  # 2023-11-14T22:13:20Z; record i gets BASE_TIMESTAMP + i
APPEND_TIME_BASE = 1700000100000  # LogAppendTime batches get APPEND_TIME_BASE + batch index
LARGE_VALUE_SIZE = 70_000  # > 64 KiB: two lz4 blocks (the first stored raw), three snappy blocks

CREATE = TimestampType.CREATE_TIME
APPEND = TimestampType.LOG_APPEND_TIME
NO_TS = TimestampType.NO_TIMESTAMP_TYPE
TS_LABELS = {NO_TS: "notimestamptype", CREATE: "createtime", APPEND: "logappendtime"}


@dataclass(frozen=True)
class ExpectedRecord:
    """A record as a correct reader reports it (effective timestamp, absolute offset)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple = ()  # ((str key, bytes | None value), ...)


@dataclass(frozen=True)
class ExpectedEntry:
    """One top-level entry of a segment (a v2 batch or a legacy message/wrapper) as it was built."""

    magic: int
    codec: int
    timestamp_type: TimestampType
    last_offset: int  # v2: base + lastOffsetDelta; legacy: the message/wrapper offset field
    max_timestamp: int  # v2: MaxTimestamp field; v1: the wrapper/message timestamp; v0: -1
    records: tuple[ExpectedRecord, ...]
    base_offset: int | None = None  # v2 only
    producer_id: int = L.NO_PRODUCER_ID
    producer_epoch: int = L.NO_PRODUCER_EPOCH
    base_sequence: int = L.NO_SEQUENCE
    is_transactional: bool = False
    is_control: bool = False
    partition_leader_epoch: int = -1  # legacy entries have none; Kafka reports -1
    delete_horizon_ms: int | None = None
    records_count: int | None = None  # v2 RecordsCount; None for legacy


@dataclass
class Fixture:
    name: str
    description: str
    entries: list[bytes] = field(default_factory=list)
    expected: list[ExpectedEntry] = field(default_factory=list)

    @property
    def first_offset(self) -> int:
        """Kafka names a segment after its base offset: the first batch's base offset (v2) or first record's."""
        first = self.expected[0]
        if first.base_offset is not None:
            return first.base_offset
        return first.records[0].offset

    @property
    def file_name(self) -> str:
        return f"{self.first_offset:020d}.log"

    @property
    def record_count(self) -> int:
        return sum(len(e.records) for e in self.expected)

    # --- building helpers: each appends the bytes and what they are meant to contain ------------------
    def v2(self, records, *, base_offset: int | None = None, codec: int = _codec.NONE, timestamp_type=CREATE,
           log_append_time: int | None = None, last_offset: int | None = None, **batch) -> None:
        """records: (offset, timestamp, key, value[, headers]) tuples."""
        base = records[0][0] if base_offset is None else base_offset
        builder = RecordBatchBuilder(base, codec, timestamp_type, log_append_time=log_append_time, **batch)
        expected = []
        for rec in records:
            offset, ts, key, value, headers = (*rec, ())[:5]
            builder.append(offset, ts, key, value, headers)
            effective_ts = log_append_time if timestamp_type is APPEND else ts
            expected.append(ExpectedRecord(offset, effective_ts, key, value, tuple(headers)))
        if last_offset is not None:
            builder.override_last_offset(last_offset)
        self.entries.append(builder.build())
        self.expected.append(ExpectedEntry(
            magic=2, codec=codec, timestamp_type=timestamp_type, last_offset=builder.last_offset,
            max_timestamp=log_append_time if timestamp_type is APPEND else max(r[1] for r in records),
            records=tuple(expected), base_offset=base, producer_id=builder.producer_id,
            producer_epoch=builder.producer_epoch, base_sequence=builder.base_sequence,
            is_transactional=builder.is_transactional, is_control=builder.is_control,
            partition_leader_epoch=builder.partition_leader_epoch, delete_horizon_ms=builder.delete_horizon_ms,
            records_count=len(records),
        ))

    def legacy(self, magic: int, codec: int, records, *, timestamp_type=CREATE, log_append_time: int | None = None,
               wrapper_offset: int | None = None) -> None:
        """records: (offset, timestamp, key, value). Uncompressed: one entry per record; else one wrapper."""
        builder = LegacyMessageBuilder(magic, codec, timestamp_type, log_append_time)
        for offset, ts, key, value in records:
            builder.append(offset, ts, key, value)
        data = builder.build(wrapper_offset=wrapper_offset)
        ts_type = builder.timestamp_type

        def effective(ts):
            if magic == 0:
                return L.NO_TIMESTAMP
            return log_append_time if ts_type is APPEND else ts

        if codec == _codec.NONE:
            pos = 0
            for offset, ts, key, value in records:
                size = L.PREFIX.unpack_from(data, pos)[1]
                self.entries.append(data[pos:pos + L.LOG_OVERHEAD + size])
                pos += L.LOG_OVERHEAD + size
                self.expected.append(ExpectedEntry(
                    magic=magic, codec=codec, timestamp_type=ts_type, last_offset=offset,
                    max_timestamp=effective(ts), records=(ExpectedRecord(offset, effective(ts), key, value),),
                ))
            return
        self.entries.append(data)
        self.expected.append(ExpectedEntry(
            magic=magic, codec=codec, timestamp_type=ts_type,
            last_offset=records[-1][0] if wrapper_offset is None else wrapper_offset,
            max_timestamp=-1 if magic == 0 else max(effective(r[1]) for r in records),
            records=tuple(ExpectedRecord(o, effective(t), k, v) for o, t, k, v in records),
        ))

    def raw_v2(self, data: bytes, expected: ExpectedEntry) -> None:
        self.entries.append(data)
        self.expected.append(expected)


def _rng(name: str) -> random.Random:
    # zlib.crc32, not hash(): str hashes are salted per process.
    return random.Random(zlib.crc32(name.encode("utf-8")))


def _large_value(rng: random.Random) -> bytes:
    """65536 random bytes (an incompressible first lz4 block, which Kafka stores raw) + compressible text."""
    head = rng.randbytes(65536)
    text = b"".join(b"kdump large value line %05d: the quick brown fox jumps over the lazy dog\n" % i
                    for i in range(200))
    return (head + text)[:LARGE_VALUE_SIZE]


# Keys/values every basic fixture carries: nulls, empties, non-ASCII and invalid UTF-8.
EDGE_KEYS_VALUES = (
    (b"key-0", b"value-0"),
    (None, b"null key"),
    (b"tombstone", None),
    (b"", b""),
    ("ключ".encode(), "héllo wörld ✓ 日本語 🎉".encode()),
    (b"\xff\xfe", b"\xc3\x28 invalid \x80\xff utf-8 \xed\xa0\x80"),
    (None, None),
)


class _Clock:
    """Hands out consecutive offsets and record timestamps 1700000000000 + i."""

    def __init__(self, first_offset: int = 0):
        self.offset = first_offset
        self.i = 0

    def take(self, n: int) -> list[tuple[int, int]]:
        out = [(self.offset + k, BASE_TIMESTAMP + self.i + k) for k in range(n)]
        self.offset += n
        self.i += n
        return out


def _basic(magic: int, codec: int, ts_type: TimestampType) -> Fixture:
    name = f"v{magic}-{CODEC_NAMES[codec]}-{TS_LABELS[ts_type]}"
    rng = _rng(name)
    if magic == 2:
        where = "4 record batches"
    elif codec == _codec.NONE:
        where = "one message per record"
    else:
        where = "4 compressed wrappers"
    timestamps = {
        NO_TS: "no timestamps (magic 0)",
        CREATE: "one batch with shuffled timestamps (max timestamp is not the last)",
        APPEND: f"append time {APPEND_TIME_BASE} + batch index replaces the record timestamps",
    }[ts_type]
    fx = Fixture(name, f"magic {magic}, {CODEC_NAMES[codec]}, {ts_type.display_name}: {where}; null, empty, "
                       f"non-ASCII and invalid UTF-8 keys/values, a {LARGE_VALUE_SIZE}-byte value; {timestamps}.")
    clock = _Clock()
    batches = []
    # 1: edge-case keys and values
    batches.append([(o, t, k, v) for (o, t), (k, v) in zip(clock.take(len(EDGE_KEYS_VALUES)), EDGE_KEYS_VALUES)])
    # 2: a value above 64 KiB (multi-block lz4/snappy) next to a small one
    (o1, t1), (o2, t2) = clock.take(2)
    batches.append([(o1, t1, b"small", b"before the large value"), (o2, t2, b"large", _large_value(rng))])
    # 3: pseudo-random content, timestamps shuffled so the max timestamp is not the last one
    slots = clock.take(8)
    stamps = [t for _, t in slots]
    rng.shuffle(stamps)
    batches.append([
        (o, t, rng.randbytes(rng.randint(1, 16)).hex().encode(), rng.randbytes(rng.randint(0, 300)))
        for (o, _), t in zip(slots, stamps)
    ])
    # 4: a single record
    (o, t), = clock.take(1)
    batches.append([(o, t, b"last", b"the end")])
    for index, records in enumerate(batches):
        append_time = APPEND_TIME_BASE + index if ts_type is APPEND else None
        if magic == 2:
            fx.v2(records, codec=codec, timestamp_type=ts_type, log_append_time=append_time,
                  partition_leader_epoch=3)
        else:
            fx.legacy(magic, codec, records, timestamp_type=ts_type, log_append_time=append_time)
    return fx


def _transactional() -> Fixture:
    fx = Fixture("v2-transactional", "Two interleaved transactions (producer 4001 epoch 3, producer 4002 epoch 0; "
                 "data batches with sequences, one gzip), a COMMIT marker for 4001 and an ABORT marker for 4002 "
                 "(coordinator epoch 7), then a non-transactional batch.")
    c = _Clock()
    txn_a = dict(producer_id=4001, producer_epoch=3, is_transactional=True, partition_leader_epoch=1)
    txn_b = dict(producer_id=4002, producer_epoch=0, is_transactional=True, partition_leader_epoch=1)
    fx.v2([(o, t, b"a-%d" % o, b"txn A record %d" % o) for o, t in c.take(3)], base_sequence=0, **txn_a)
    fx.v2([(o, t, b"b-%d" % o, b"txn B record %d" % o) for o, t in c.take(2)], base_sequence=0,
          codec=_codec.GZIP, **txn_b)
    fx.v2([(o, t, b"a-%d" % o, b"txn A record %d" % o) for o, t in c.take(2)], base_sequence=3, **txn_a)
    (o, t), = c.take(1)
    _marker(fx, o, t, 4001, 3, commit=True, coordinator_epoch=7, partition_leader_epoch=1)
    fx.v2([(o, t, b"b-%d" % o, None) for o, t in c.take(1)], base_sequence=2, **txn_b)
    (o, t), = c.take(1)
    _marker(fx, o, t, 4002, 0, commit=False, coordinator_epoch=7, partition_leader_epoch=1)
    fx.v2([(o, t, None, b"after the transactions") for o, t in c.take(2)], partition_leader_epoch=1)
    return fx


def _marker(fx: Fixture, offset: int, timestamp: int, pid: int, epoch: int, *, commit: bool, coordinator_epoch: int,
            partition_leader_epoch: int = 0) -> None:
    type_id = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    fx.raw_v2(
        end_txn_marker_batch(offset, pid, epoch, commit, coordinator_epoch, timestamp, partition_leader_epoch),
        ExpectedEntry(magic=2, codec=0, timestamp_type=CREATE, last_offset=offset, max_timestamp=timestamp,
                      records=(ExpectedRecord(offset, timestamp, control_record_key(type_id),
                                              end_txn_marker_value(coordinator_epoch)),),
                      base_offset=offset, producer_id=pid, producer_epoch=epoch, is_transactional=True,
                      is_control=True, partition_leader_epoch=partition_leader_epoch, records_count=1),
    )


def _idempotent() -> Fixture:
    fx = Fixture("v2-idempotent", "Idempotent producer 5001: sequences 0.., an lz4 batch, a batch whose sequences "
                 "wrap from 2147483647 to 0 (base sequence 2147483643, 6 records), then a zstd batch at sequence 1.")
    c = _Clock()
    fx.v2([(o, t, None, b"idempotent %d" % o) for o, t in c.take(3)], producer_id=5001, producer_epoch=0,
          base_sequence=0)
    fx.v2([(o, t, None, b"idempotent %d" % o) for o, t in c.take(2)], producer_id=5001, producer_epoch=0,
          base_sequence=3, codec=_codec.LZ4)
    fx.v2([(o, t, b"wrap", b"sequence wraps %d" % o) for o, t in c.take(6)], producer_id=5001, producer_epoch=0,
          base_sequence=L.INT32_MAX - 4)
    fx.v2([(o, t, None, b"after the wrap %d" % o) for o, t in c.take(2)], producer_id=5001, producer_epoch=0,
          base_sequence=1, codec=_codec.ZSTD)
    return fx


def _headers() -> Fixture:
    fx = Fixture("v2-headers", "Record headers: several per record, a null header value, an empty header value, "
                 "an empty header key, duplicate keys, a non-ASCII key, binary values, a record with none; "
                 "uncompressed and snappy batches.")
    rng = _rng(fx.name)
    c = _Clock()
    header_sets = [
        (("content-type", b"application/json"), ("trace-id", rng.randbytes(16))),
        (("nullable", None), ("", b"empty key"), ("empty-value", b"")),
        (("dup", b"1"), ("dup", b"2"), ("ключ-✓", "значение".encode())),
        (),
        (("binary", b"\x00\xff\xc3\x28"),),
    ]
    for codec in (_codec.NONE, _codec.SNAPPY):
        fx.v2([(o, t, b"h-%d" % o, b'{"n": %d}' % o, hs) for (o, t), hs in zip(c.take(len(header_sets)), header_sets)],
              codec=codec)
    return fx


def _control_all_types() -> Fixture:
    fx = Fixture("v2-control-all-types", "One control batch per control record type: ABORT (0) and COMMIT (1) "
                 "markers of producer 6001, LeaderChange (2), SnapshotHeader (3), SnapshotFooter (4), "
                 "KRaftVersion (5), KRaftVoters (6) with KRaft's flexible v0 encoding, and an unknown type id 99.")
    c = _Clock()
    (o, t), = c.take(1)
    _marker(fx, o, t, 6001, 2, commit=False, coordinator_epoch=5)
    (o, t), = c.take(1)
    _marker(fx, o, t, 6001, 2, commit=True, coordinator_epoch=5)
    voters = [
        KRaftVoter(1, uuid.UUID("6f6e6500-0000-4000-8000-000000000001"),
                   (KRaftEndpoint("CONTROLLER", "controller-1.example", 9093),)),
        KRaftVoter(2, uuid.UUID("6f6e6500-0000-4000-8000-000000000002"),
                   (KRaftEndpoint("CONTROLLER", "controller-2.example", 9093),
                    KRaftEndpoint("CONTROLLER_TLS", "контроллер-2.example", 9094)), 0, 1),
    ]
    kraft_values = [
        (ControlRecordType.LEADER_CHANGE, leader_change_value(1, [1, 2, 3], [1, 2])),
        (ControlRecordType.SNAPSHOT_HEADER, snapshot_header_value(BASE_TIMESTAMP)),
        (ControlRecordType.SNAPSHOT_FOOTER, snapshot_footer_value()),
        (ControlRecordType.KRAFT_VERSION, kraft_version_value(1)),
        (ControlRecordType.KRAFT_VOTERS, kraft_voters_value(voters)),
        (99, b"\x00\x00unknown control type"),
    ]
    for type_id, value in kraft_values:
        (o, t), = c.take(1)
        fx.raw_v2(
            control_batch(o, int(type_id), value, timestamp=t, partition_leader_epoch=4),
            ExpectedEntry(magic=2, codec=0, timestamp_type=CREATE, last_offset=o, max_timestamp=t,
                          records=(ExpectedRecord(o, t, control_record_key(int(type_id)), value),),
                          base_offset=o, is_control=True, partition_leader_epoch=4, records_count=1),
        )
    return fx


def _delete_horizon() -> Fixture:
    fx = Fixture("v2-delete-horizon", "Batches as the log cleaner rewrites them: delete horizon set (attribute bit 6, "
                 "stored as the base timestamp, so record timestamp deltas are negative), tombstones, offset gaps "
                 "and the original base/last offsets kept; one uncompressed, one gzip, then a normal batch.")
    horizon = BASE_TIMESTAMP + 86_400_000
    fx.v2([(1, BASE_TIMESTAMP + 1, b"k1", b"kept"), (3, BASE_TIMESTAMP + 3, b"k3", b"kept too"),
           (4, BASE_TIMESTAMP + 4, b"k0", None)], base_offset=0, last_offset=6, delete_horizon_ms=horizon)
    fx.v2([(7, BASE_TIMESTAMP + 7, b"k7", b"kept"), (9, BASE_TIMESTAMP + 9, b"k8", None)],
          base_offset=7, last_offset=9, delete_horizon_ms=horizon + 1, codec=_codec.GZIP)
    fx.v2([(10, BASE_TIMESTAMP + 10, b"k10", b"new"), (11, BASE_TIMESTAMP + 11, b"k11", b"new")])
    return fx


def _empty_batch() -> Fixture:
    fx = Fixture("v2-empty-batch", "A count-0 batch (offsets 2-4, producer 7001, base timestamp -1) as compaction "
                 "leaves it to keep producer state, between two idempotent batches of the same producer.")
    pid = dict(producer_id=7001, producer_epoch=0)
    fx.v2([(0, BASE_TIMESTAMP, b"a", b"first"), (1, BASE_TIMESTAMP + 1, b"b", b"second")], base_sequence=0, **pid)
    fx.raw_v2(
        empty_batch(2, 4, max_timestamp=BASE_TIMESTAMP + 4, base_sequence=2, **pid),
        ExpectedEntry(magic=2, codec=0, timestamp_type=CREATE, last_offset=4, max_timestamp=BASE_TIMESTAMP + 4,
                      records=(), base_offset=2, base_sequence=2, partition_leader_epoch=0, records_count=0, **pid),
    )
    fx.v2([(5, BASE_TIMESTAMP + 5, b"c", b"third"), (6, BASE_TIMESTAMP + 6, b"d", b"fourth")], base_sequence=5, **pid)
    return fx


def _mixed_magic() -> Fixture:
    fx = Fixture("mixed-magic", "Magic 0, 1 and 2 entries in one segment starting at offset 1000, as after message "
                 "format upgrades: v0 plain and gzip, v1 plain, lz4 LogAppendTime and snappy wrappers, v2 plain and "
                 "zstd LogAppendTime batches.")
    c = _Clock(1000)
    fx.legacy(0, _codec.NONE, [(o, t, b"v0", b"magic 0 plain") for o, t in c.take(1)])
    fx.legacy(0, _codec.GZIP, [(o, t, b"v0", b"magic 0 gzip %d" % o) for o, t in c.take(3)])
    fx.legacy(1, _codec.NONE, [(o, t, b"v1", b"magic 1 plain") for o, t in c.take(1)])
    fx.legacy(1, _codec.LZ4, [(o, t, None, b"magic 1 lz4 %d" % o) for o, t in c.take(3)],
              timestamp_type=APPEND, log_append_time=APPEND_TIME_BASE)
    fx.legacy(1, _codec.SNAPPY, [(o, t, b"v1", b"magic 1 snappy %d" % o) for o, t in c.take(2)])
    fx.v2([(o, t, b"v2", b"magic 2 plain %d" % o) for o, t in c.take(2)])
    fx.v2([(o, t, b"v2", b"magic 2 zstd %d" % o) for o, t in c.take(3)], codec=_codec.ZSTD,
          timestamp_type=APPEND, log_append_time=APPEND_TIME_BASE + 1)
    return fx


def _v1_wrapper_offset_zero() -> Fixture:
    fx = Fixture("v1-wrapper-offset-zero", "A magic-1 snappy wrapper whose own offset is 0 with inner relative offsets "
                 "0-4, as librdkafka wrote it (readers then take inner offsets as absolute), followed by a normal "
                 "gzip wrapper (offset 7 = last inner offset).")
    c = _Clock()
    fx.legacy(1, _codec.SNAPPY, [(o, t, b"rd", b"librdkafka %d" % o) for o, t in c.take(5)], wrapper_offset=0)
    fx.legacy(1, _codec.GZIP, [(o, t, b"java", b"normal %d" % o) for o, t in c.take(3)])
    return fx


def _fixture_builders() -> list[Callable[[], Fixture]]:
    builders = []
    for codec in (_codec.NONE, _codec.GZIP, _codec.SNAPPY, _codec.LZ4):
        builders.append(lambda codec=codec: _basic(0, codec, NO_TS))
    for magic, codecs in ((1, (0, 1, 2, 3)), (2, (0, 1, 2, 3, 4))):
        for codec in codecs:
            for ts_type in (CREATE, APPEND):
                builders.append(lambda magic=magic, codec=codec, ts_type=ts_type: _basic(magic, codec, ts_type))
    builders += [_transactional, _idempotent, _headers, _control_all_types, _delete_horizon, _empty_batch,
                 _mixed_magic, _v1_wrapper_offset_zero]
    return builders


def all_fixtures() -> list[Fixture]:
    """Every fixture, built in memory (nothing is written)."""
    return [build() for build in _fixture_builders()]


def default_out_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "fixtures" / "generated"


def readme_text(fixtures: list[Fixture]) -> str:
    lines = [
        "# Generated segments",
        "",
        "Written by kdump's own encoders (`kdump/format/v2_builder.py`, `legacy_builder.py`, `kdump/write/segment.py`)",
        "with `tests/support/fixtures.py`. **Do not edit by hand**: regenerate, from the repository root, with",
        "",
        "    python -m tests.support.fixtures            # into fixtures/generated/",
        "    python -m tests.support.fixtures OUT_DIR    # somewhere else",
        "",
        "The output is deterministic (fixed timestamps `1700000000000 + i`, LogAppendTime batches",
        "`1700000100000 + batch index`, pseudo-random bytes from `random.Random(crc32(fixture name))`), so a",
        "regeneration is byte-identical as long as the zlib/snappy/lz4/zstd libraries are the same versions;",
        "`tests/test_writer.py` checks that, and reads every segment with both kdump and kafka-python.",
        "",
        "Each directory holds one segment named after its first offset, as Kafka names segments",
        "(`mixed-magic` starts at offset 1000). In the basic `v<magic>-<codec>-<timestamp type>` fixtures the",
        f"{LARGE_VALUE_SIZE}-byte value starts with 64 KiB of random bytes, so lz4 writes that block stored (size",
        "high bit set) before a compressed one, and snappy's 32 KiB framing needs three blocks.",
        "",
        "| Fixture | Segment | Entries | Records | Content |",
        "|---|---|---:|---:|---|",
    ]
    for fx in fixtures:
        lines.append(f"| `{fx.name}` | `{fx.file_name}` | {len(fx.entries)} | {fx.record_count} | {fx.description} |")
    lines.append("")
    return "\n".join(lines)


def generate(out_dir=None) -> list[Path]:
    """Write every fixture (and README.md) under ``out_dir``; returns the segment paths."""
    out = Path(out_dir) if out_dir is not None else default_out_dir()
    out.mkdir(parents=True, exist_ok=True)
    fixtures = all_fixtures()
    paths = []
    for fx in fixtures:
        d = out / fx.name
        d.mkdir(exist_ok=True)
        paths.append(Path(write_segment(d / fx.file_name, fx.entries, overwrite=True)))
    readme = out / "README.md"
    tmp = out / ".README.md.tmp"
    tmp.write_text(readme_text(fixtures), encoding="utf-8")
    os.replace(tmp, readme)
    return paths


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) > 1 or (args and args[0] in ("-h", "--help")):
        print("usage: python -m tests.support.fixtures [OUT_DIR]   (default: fixtures/generated/ of the repository)",
              file=sys.stderr)
        return 0 if args and args[0] in ("-h", "--help") else 2
    if args:
        out = Path(args[0])
    else:
        out = default_out_dir()
    paths = generate(out)
    known = {p.parent.name for p in paths}
    for child in sorted(out.iterdir()):
        if child.is_dir() and child.name not in known:
            print(f"note: {child} is not a current fixture (left in place)", file=sys.stderr)
    print(f"wrote {len(paths)} segments and README.md under {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
