"""The read layer's lookups (:mod:`kdump.read.locate`): the batch at an offset or at a time, in a segment and across
a partition, checked against Kafka's own view of each corpus log -- the ``.log.json`` beside it lists every batch
as Kafka's ``FileRecords`` reads it (position, baseOffset, lastOffset, maxTimestamp) and where its reading stops
(``validEnd``). Kafka's rules, restated here from that view alone: an offset lookup lands on the first batch whose
last offset reaches the target; a time lookup on the first batch whose max timestamp reaches it
(``findOffsetByTimestamp``); nothing reaches it: where the reading stops.

Each rule is checked through trusted indexes (Kafka's own files, or rebuilt as Kafka's recovery writes them),
through indexes damaged in tmp_path (the answer must not change, and the lookup says why it walked), and
without any index."""
from __future__ import annotations

import itertools
import os
import random
import shutil
import struct

import pytest

from corpus import CORPUS, LOG_FILES, load_json
from kdump.format.framing import BatchHeader
from kdump.index.rebuild import RebuildError, rebuild_indexes
from kdump.read.locate import (
    ForwardWalk,
    locate_offset,
    locate_time,
    segment_end_offset,
    sound_batch_at,
)
from kdump.read.partition import PartitionLog

LOGS = [p for p in LOG_FILES if p.suffix == ".log"]
BROKER = CORPUS / "broker-written"
# partitions whose broker wrote .index and .timeindex files beside the log
WITH_KAFKA_INDEXES = ["consumer-offsets-v2", "kraft-metadata-log", "java-producer-headers-idempotent"]
KRAFT = BROKER / "kraft-metadata-log"


class KafkaView:
    """Kafka's reading of one log (its ``.log.json``)."""

    def __init__(self, log):
        doc = load_json(log)
        self.batches = doc["batches"]
        self.valid_end = doc["totals"]["validEnd"]

    def by_offset(self, target: int):
        """(position, found, baseOffset, lastOffset) of the first batch whose last offset reaches ``target``."""
        for b in self.batches:
            if b["lastOffset"] >= target:
                return b["position"], True, b["baseOffset"], b["lastOffset"]
        return self.valid_end, False, None, None

    def by_time(self, target: int):
        for b in self.batches:
            if b["maxTimestamp"] >= target:
                return b["position"], True, b["baseOffset"], b["lastOffset"]
        return self.valid_end, False, None, None

    def offset_targets(self, limit: int = 100) -> list[int]:
        offs = sorted({o for b in self.batches for o in (b["baseOffset"] - 1, b["baseOffset"], b["lastOffset"],
                                                          b["lastOffset"] + 1)} | {-1, 0})
        return _thin(offs, limit)

    def time_targets(self, limit: int = 100) -> list[int]:
        stamps = sorted({t for b in self.batches for t in (b["maxTimestamp"] - 1, b["maxTimestamp"],
                                                           b["maxTimestamp"] + 1)} | {-2, 0})
        return _thin(stamps, limit)


def _thin(values: list[int], limit: int) -> list[int]:
    step = max(1, len(values) // limit)
    return sorted(set(values[::step] + values[-3:] + values[:3]))


def answer(located):
    batch = located.batch
    return located.position, located.found, located.base_offset, None if batch is None else batch.last_offset


def _same_answers(log, view: KafkaView, **kwargs) -> list:
    """Every offset and time target's lookup against Kafka's view; returns the results (for their methods/notes)."""
    results = []
    for n in view.offset_targets():
        got = locate_offset(log, n, **kwargs)
        assert answer(got) == view.by_offset(n), (log.name, "offset", n, got)
        results.append(got)
    for t in view.time_targets():
        got = locate_time(log, t, **kwargs)
        assert answer(got) == view.by_time(t), (log.name, "time", t, got)
        results.append(got)
    return results


# --- one segment --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_lookups_without_an_index_equal_kafkas_view(log, tmp_path):
    copy = tmp_path / log.name  # no companion files beside it
    shutil.copy(log, copy)
    for got in _same_answers(copy, KafkaView(log)):
        assert got.method in ("scan", "start") and got.note is None


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(CORPUS)))
def test_lookups_through_rebuilt_indexes_equal_kafkas_view(log, tmp_path):
    copy = tmp_path / log.name
    shutil.copy(log, copy)
    try:
        rebuild_indexes(copy, index_interval_bytes=64)  # many entries even for small logs
    except RebuildError:
        pytest.skip("Kafka's recovery itself fails on this log: there is no index it would write")
    for got in _same_answers(copy, KafkaView(log)):
        assert got.method in ("index", "start") and got.note is None, got


@pytest.mark.parametrize("case", WITH_KAFKA_INDEXES)
def test_lookups_through_kafkas_own_indexes(case):
    log = BROKER / case / "00000000000000000000.log"
    results = _same_answers(log, KafkaView(log))
    assert any(r.method == "index" for r in results)
    assert all(r.method in ("index", "start") and r.note is None for r in results)


def _damage_offset_index(path, how: str) -> None:
    data = bytearray(path.read_bytes())
    entries = [list(struct.unpack_from(">ii", data, i)) for i in range(0, len(data) - len(data) % 8, 8)]
    if how == "inside-batches":  # every position moved into the batch it named
        for e in entries:
            e[1] += 9
    elif how == "past-the-end":
        for e in entries:
            e[1] += 1 << 24
    elif how == "offsets-too-low":  # each entry names a batch further on than its offset
        for e in entries[1:]:
            e[0] = max(1, e[0] // 3)
        entries.sort()
    elif how == "positions-swapped":  # positions still batch starts, but of other entries
        positions = [e[1] for e in entries][::-1]
        for e, p in zip(entries, positions, strict=True):
            e[1] = p
    elif how == "garbage":
        rng = random.Random(19)
        path.write_bytes(bytes(rng.getrandbits(8) for _ in range(len(data))))
        return
    elif how == "torn":
        path.write_bytes(bytes(data[:-3]))
        return
    elif how == "zero-filled":
        path.write_bytes(bytes(len(data)))
        return
    path.write_bytes(b"".join(struct.pack(">ii", *e) for e in entries))


DAMAGES = ["inside-batches", "past-the-end", "offsets-too-low", "positions-swapped", "garbage", "torn", "zero-filled"]


@pytest.mark.parametrize("how", DAMAGES)
def test_damaged_offset_index_does_not_change_the_answer(how, tmp_path):
    for name in ("00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"):
        shutil.copy(KRAFT / name, tmp_path / name)
    _damage_offset_index(tmp_path / "00000000000000000000.index", how)
    results = _same_answers(tmp_path / "00000000000000000000.log", KafkaView(KRAFT / "00000000000000000000.log"))
    if how in ("inside-batches", "past-the-end", "positions-swapped"):
        notes = [r.note for r in results if r.note]
        assert notes and all("does not match the log" in n and "walking the log from its start" in n for n in notes)
        assert any(r.method == "scan" for r in results)


@pytest.mark.parametrize("how", ["timestamps-raised", "timestamps-lowered", "offsets-shifted"])
def test_damaged_time_index_does_not_change_the_answer(how, tmp_path):
    for name in ("00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex"):
        shutil.copy(KRAFT / name, tmp_path / name)
    tindex = tmp_path / "00000000000000000000.timeindex"
    data = tindex.read_bytes()
    entries = [list(struct.unpack_from(">qi", data, i)) for i in range(0, len(data), 12)]
    for e in entries:
        if how == "timestamps-raised":
            e[0] += 1000
        elif how == "timestamps-lowered":
            e[0] -= 1000
        else:
            e[1] = max(0, e[1] - 7)
    tindex.write_bytes(b"".join(struct.pack(">qi", *e) for e in entries))
    results = _same_answers(tmp_path / "00000000000000000000.log", KafkaView(KRAFT / "00000000000000000000.log"))
    assert any(r.note and "time index" in r.note for r in results)


def test_an_index_beside_a_log_of_another_name_is_not_used(tmp_path):
    """A log whose name gives no base offset cannot resolve an index's relative offsets: it is walked."""
    log = tmp_path / "copy.log"
    shutil.copy(KRAFT / "00000000000000000000.log", log)
    view = KafkaView(KRAFT / "00000000000000000000.log")
    for n in view.offset_targets(50):
        got = locate_offset(log, n)
        assert answer(got) == view.by_offset(n) and got.method == "scan"


def test_forward_walk_answers_increasing_lookups_from_one_start():
    log = KRAFT / "00000000000000000000.log"
    view = KafkaView(log)
    fd = os.open(log, os.O_RDONLY)
    try:
        walk = ForwardWalk(fd, os.fstat(fd).st_size)
        mid = view.batches[len(view.batches) // 2]
        for n in view.offset_targets():
            start = mid["position"] if n >= mid["baseOffset"] else 0
            got = walk.reaching(n, start)
            position, found, _, last = view.by_offset(n)
            assert (got.position, isinstance(got, BatchHeader)) == (position, found), n
            assert not found or got.last_offset == last
    finally:
        os.close(fd)


@pytest.mark.parametrize("log", [CORPUS / "kafka-generated/corrupt/v2-crc-mismatch/00000000000000000000.log",
                                 CORPUS / "kafka-generated/v0-gzip/00000000000000000000.log",
                                 KRAFT / "00000000000000000000.log"], ids=lambda p: p.parent.name)
def test_sound_batch_at_is_a_whole_crc_valid_batch(log):
    view = KafkaView(log)
    fd = os.open(log, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        for b in view.batches[:300]:
            batch = sound_batch_at(fd, size, b["position"])
            if b["crcValid"]:
                assert batch is not None and batch.last_offset == b["lastOffset"], b["position"]
            else:
                assert batch is None, b["position"]
            assert sound_batch_at(fd, size, b["position"] + 1) is None
            assert sound_batch_at(fd, size, b["position"], max_batch_bytes=b["size"] - 1) is None
        assert sound_batch_at(fd, size, size) is None
    finally:
        os.close(fd)


# --- the end of a segment and of a partition ------------------------------------------------------------------------
@pytest.mark.parametrize("case,end", [("kraft-metadata-log", 2067), ("java-producer-headers-idempotent", 80)])
def test_log_end_offset_is_kafkas_snapshot_offset(case, end, tmp_path):
    """The broker named its last producer snapshot after the log end offset when it wrote it."""
    assert (BROKER / case / f"{end:020d}.snapshot").exists()
    assert segment_end_offset(BROKER / case / "00000000000000000000.log") == end
    part = tmp_path / "t-0"
    shutil.copytree(BROKER / case, part)
    assert PartitionLog(part).log_end_offset() == end
    _damage_offset_index(part / "00000000000000000000.index", "inside-batches")
    assert PartitionLog(part).log_end_offset() == end  # a damaged index does not decide the end


def test_log_end_offset_of_an_empty_segment_is_its_base(tmp_path):
    (tmp_path / "00000000000000000042.log").write_bytes(b"")
    assert segment_end_offset(tmp_path / "00000000000000000042.log") == 42
    assert segment_end_offset(tmp_path / "00000000000000000043.log") is None  # not there
    assert PartitionLog(tmp_path).log_end_offset() == 42
    empty = tmp_path / "empty-0"
    empty.mkdir()
    assert PartitionLog(empty).log_end_offset() is None
    assert PartitionLog(empty).locate_offset(5) is None and PartitionLog(empty).locate_time(5) is None


# --- a partition of several segments ----------------------------------------------------------------------------------
@pytest.fixture
def kraft_in_segments(tmp_path):
    """Kafka's kraft-metadata-log cut at batch boundaries into three segments (each named by its first offset,
    with indexes as recovery writes them); Kafka's view says where each batch went."""
    log = KRAFT / "00000000000000000000.log"
    view = KafkaView(log)
    data = log.read_bytes()
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    cuts = [0, len(view.batches) // 3, 2 * len(view.batches) // 3, len(view.batches)]
    placed = []  # (segment path, position in it, batch) in offset order
    for a, b in itertools.pairwise(cuts):
        first, last = view.batches[a], view.batches[b - 1]
        seg = part / f"{first['baseOffset']:020d}.log"
        seg.write_bytes(data[first["position"]:last["position"] + last["size"]])
        rebuild_indexes(seg, index_interval_bytes=256)
        placed.extend((str(seg), x["position"] - first["position"], x) for x in view.batches[a:b])
    return part, view, placed


def test_partition_offset_lookup_finds_the_segment_and_the_batch(kraft_in_segments):
    part, view, placed = kraft_in_segments
    plog = PartitionLog(part)
    assert len(plog.segments) == 3
    for n in view.offset_targets():
        got = plog.locate_offset(n)
        want = next(((s, p, x) for s, p, x in placed if x["lastOffset"] >= n), None)
        if want is None:
            last_seg, last_pos, last = placed[-1]
            assert (got.segment, got.position, got.found) == (last_seg, last_pos + last["size"], False), n
        else:
            s, p, x = want
            assert (got.segment, got.position, got.base_offset, got.batch.last_offset) == \
                (s, p, x["baseOffset"], x["lastOffset"]), n
            assert got.method in ("index", "start") and got.note is None
        assert answer(plog.locate_offset(n, use_index=False)) == answer(got)


def test_partition_time_lookup_finds_the_first_batch_reaching_it(kraft_in_segments):
    part, view, placed = kraft_in_segments
    plog = PartitionLog(part)
    for t in view.time_targets():
        got = plog.locate_time(t)
        want = next(((s, p, x) for s, p, x in placed if x["maxTimestamp"] >= t), None)
        if want is None:
            assert not got.found and got.segment == placed[-1][0], t
        else:
            s, p, x = want
            assert (got.segment, got.position, got.base_offset) == (s, p, x["baseOffset"]), t


def test_partition_log_end_offset_is_after_the_last_batch(kraft_in_segments):
    part, view, _ = kraft_in_segments
    assert PartitionLog(part).log_end_offset() == view.batches[-1]["lastOffset"] + 1 == 2067

