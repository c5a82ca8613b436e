"""kdump stats at the reader's speed (issue 23, item 2): the key digests of a batch's records straight from its bytes
(``record_keys``, compiled, against ``record_keys_py``) and the compiled key table (``kdump.stats._keytable.KeyTable``,
against ``kdump.stats.keytable.PyKeyTable``), giving the figures Kafka's own view of the corpus gives."""
from __future__ import annotations

import random
from collections import Counter

import pytest

from kdump import _backend
from kdump.format import layout as L
from kdump.format import v2
from kdump.format.columns import RecordKeys
from kdump.format.v2_builder import RecordBatchBuilder
from kdump.stats.keytable import PyKeyTable
from kdump.read.segment import SegmentReader
from kdump.stats.counts import partition_stats

from corpus import CORPUS, load_json

compiled = pytest.mark.skipif(not _backend.COMPILED_AVAILABLE, reason="compiled modules not built")
ORACLE_LOGS = sorted(p for p in CORPUS.rglob("*.log") if p.with_name(p.name + ".json").exists())


@pytest.fixture(params=["compiled", "python"])
def backend(request):
    if request.param == "compiled" and not _backend.COMPILED_AVAILABLE:
        pytest.skip("compiled modules not built")
    before = _backend.BACKEND
    _backend.use(request.param)
    yield request.param
    _backend.use(before)


def kafka_figures(log) -> tuple | None:
    """What a compaction would remove, from Kafka's field-level view of ``log`` (the corpus' JSON): None when a
    batch is not whole there (its records are then not all listed), or when Kafka's walk stopped at damage."""
    doc = load_json(log)
    if doc["totals"].get("fatal") or doc["totals"]["validEnd"] != doc["size"]:
        return None  # Kafka's walk stopped before the end; stats reads on past damage (as dump and verify do)
    last: dict[str, tuple[int, bool]] = {}
    superseded = superseded_bytes = keyed = keyless = tombstones = 0
    for b in doc["batches"]:
        if not b.get("valid", True) or "records" not in b:
            return None
        if b.get("isControl"):
            continue
        for r in b["records"]:
            if r["key"] is None:
                keyless += 1
                continue
            keyed += 1
            tombstone = r["value"] is None
            tombstones += tombstone
            if r["key"] in last:
                superseded += 1
                superseded_bytes += last[r["key"]][0]
            last[r["key"]] = (r["sizeInBytes"], tombstone)
    live = sum(t for _, t in last.values())
    return keyed, keyless, tombstones, len(last), superseded, superseded_bytes, live


@pytest.mark.parametrize("log", ORACLE_LOGS, ids=lambda p: str(p.relative_to(CORPUS).parent))
def test_the_corpus_figures_are_kafkas(log, backend):
    want = kafka_figures(log)
    if want is None:
        pytest.skip("Kafka's view does not list every record of the file")
    _, r = partition_stats([str(log)])
    assert (r.keyed_records, r.keyless_records, r.tombstones, r.distinct_keys, r.superseded_records,
            r.superseded_bytes, r.live_tombstones) == want


def _batch(base, records):
    b = RecordBatchBuilder(base, 0)
    for i, (key, value) in enumerate(records):
        b.append(base + i, 1_700_000_000_000 + i, key, value, [(b"h", b"v")] if i % 7 == 0 else [])
    return v2.RecordBatch(0, base, len(b.build()) - L.LOG_OVERHEAD, b.build()[L.LOG_OVERHEAD:])


def _records(rng, n, keys=50):
    out = []
    for _ in range(n):
        kind = rng.random()
        key = None if kind < 0.1 else b"k%d" % rng.randrange(keys) if kind < 0.9 else bytes(rng.randrange(300))
        out.append((key, None if rng.random() < 0.2 else b"v" * rng.randrange(20)))
    return out


@compiled
def test_record_keys_compiled_equals_pure_chunk_by_chunk():
    rng = random.Random(23)
    for n in (1, 17, 1000):
        batch = _batch(100, _records(rng, n))
        buf, start, end = batch.records_payload(1 << 20)
        for chunk in (3, 16384):
            got = list(batch._chunks(_backend.compiled("record_keys"), 1 << 20, chunk))
            want = list(batch._chunks(v2.record_keys_py, 1 << 20, chunk))
            assert got == want and sum(k.count for k in got) == n
        # the digests are Python's hash of the key and of the key and a zero byte, as RecordKeys says
        cols = v2.parse_records_py(buf, start, end, batch.records_count, 100, 0, None)
        keys = RecordKeys.of(cols)
        h1 = [e[0] for e in L.KEY_ENTRY.iter_unpack(keys.entries)]
        assert h1 == [hash(cols.key(i)) for i in range(cols.count) if cols.key_len[i] >= 0]


@compiled
def test_record_keys_compiled_equals_pure_on_damaged_records():
    """Every truncation and byte flip of a batch's records: the same count, error, resume point and entries."""
    rng = random.Random(5)
    batch = _batch(0, _records(rng, 40))
    buf, start, end = batch.records_payload(1 << 20)
    fast = _backend.compiled("record_keys")
    for cut in range(start, end, 7):
        for data in (buf[:cut], buf[:cut] + bytes([rng.randrange(256)]) + buf[cut + 1:]):
            e = min(end, len(data))
            got = fast(data, start, e, 40, 0, 0, None)
            want = v2.record_keys_py(data, start, e, 40, 0, 0, None)
            assert got == want


def _entries(rng, n, keys):
    return b"".join(L.KEY_ENTRY.pack(k, -k, rng.randrange(1, 500) << 1 | (rng.random() < 0.3))
                    for k in (rng.randrange(keys) for _ in range(n)))


def _counts(table):
    return table.keys, table.superseded, table.superseded_bytes, table.live_tombstones


@compiled
@pytest.mark.parametrize("memory", [1, 5000, 1 << 20])
def test_the_compiled_key_table_counts_as_the_pure_one(tmp_path, memory):
    """In memory, spilled to buckets (1: 64 keys at most) and split again; the counts checked against a Counter."""
    rng = random.Random(memory)
    chunks = [_entries(rng, rng.randrange(0, 3000), 20000) for _ in range(8)]
    fast = _backend.compiled("KeyTable")(memory, spill_dir=str(tmp_path))
    pure = PyKeyTable(memory, spill_dir=str(tmp_path))
    for chunk in chunks:
        fast.add_entries(chunk)
        pure.add_entries(chunk)
    assert _counts(fast.finish()) == _counts(pure.finish())
    last: dict[bytes, int] = {}
    seen = Counter()
    for digest, value in L.KEY_SPILL_ENTRY.iter_unpack(b"".join(chunks)):
        seen[digest] += 1
        last[digest] = value
    assert fast.keys == len(seen) and fast.superseded == sum(seen.values()) - len(seen)
    assert fast.live_tombstones == sum(v & 1 for v in last.values())
    assert (fast.spilled_buckets > 0) == (memory < 1 << 20) and list(tmp_path.iterdir()) == []
    # (a bucket split again, past the level where it is counted in memory: tests/test_stats.py, on either backend)


def test_stats_of_a_segment_are_the_same_on_both_backends(tmp_path):
    """A partition of repeated keys, tombstones and keyless records, counted in memory and spilled."""
    from kdump.write.segment import write_segment
    rng = random.Random(1)
    part = tmp_path / "t-0"
    part.mkdir()
    builders = []
    for base in range(0, 3000, 500):
        b = RecordBatchBuilder(base, rng.choice([0, 1]))
        for i, (k, v) in enumerate(_records(rng, 500, keys=700)):
            b.append(base + i, 1_700_000_000_000, k, v)
        builders.append(b.build())
    write_segment(part / "00000000000000000000.log", builders)
    before = _backend.BACKEND
    results = []
    try:
        for name in (["compiled"] if _backend.COMPILED_AVAILABLE else []) + ["python"]:
            _backend.use(name)
            for memory in (1, 1 << 20):
                _, r = partition_stats([str(part / "00000000000000000000.log")], memory_bytes=memory,
                                       spill_dir=str(tmp_path))
                results.append({k: v for k, v in r.to_dict().items() if k != "keys"} | {
                    "keys": (r.distinct_keys, r.keyed_records, r.keyless_records)})
    finally:
        _backend.use(before)
    assert all(r == results[0] for r in results)
    with SegmentReader(str(part / "00000000000000000000.log")) as reader:
        keys = [k for b in reader for k, _ in ((b.columns(1 << 20).key(i), 0) for i in range(b.records_count))]
    assert results[0]["keys"] == (len({k for k in keys if k is not None}), sum(k is not None for k in keys),
                                  keys.count(None))
