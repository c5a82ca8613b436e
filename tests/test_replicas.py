"""``kdump replicas`` (issue 35): the copies of a partition in several brokers' log directories compared by Kafka's
replication rules.

The replicas are built without kdump's writer (tests/support/replica_logs.py: kafka-python's batch builder, the
base offset and leader epoch set as a broker sets them, checkpoints written as Kafka writes them). Every expected
divergence point is worked by hand in the test's comment from Kafka's rule: the follower asks the leader
(the reference) for the end offset of its latest epoch; the leader answers ``LeaderEpochFileCache.endOffsetFor``
(its log end offset for its own latest epoch, else the largest epoch <= the one asked with the start offset of the
next epoch); the follower then truncates (``AbstractFetcherThread.getOffsetTruncationState``) to
min(its own end offset of that epoch, the leader's end offset, its LEO) when it knows that epoch, else to the end
of its largest epoch below it and asks again; a follower with no epoch truncates to its high watermark."""
from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from corpus import ROOT
from support.cli import run_cli
from support.replica_logs import COMMIT, Broker, batch, marker
from test_json_dialect import validator as schema_validator  # (every schema registered: the one error object)

pytestmark = pytest.mark.usefixtures("backend")

SCHEMA = json.loads((ROOT / "docs" / "schemas" / "replicas.schema.json").read_text())


def replicas(*args) -> tuple[int, dict]:
    result = run_cli("replicas", "--format", "json", "--jobs", "1", *args)
    doc = json.loads(result.stdout)
    errors = [e.message for e in schema_validator("replicas").iter_errors(doc)]
    assert errors == [], errors[:3]
    return result.exit_code, doc


def two(tmp_path, leader: dict, follower: dict, topic: str = "t") -> tuple:
    """Two brokers holding ``<topic>-0``: ``a`` (the arguments of ``follower``) and ``b`` (``leader``'s)."""
    a, b = Broker(tmp_path, "a"), Broker(tmp_path, "b")
    a.partition(topic, 0, **follower)
    b.partition(topic, 0, **leader)
    return a.close(), b.close()


def _replica(part: dict, path_end: str) -> dict:
    return next(r for r in part["replicas"] if r["path"].endswith(path_end))


def _loss(part: dict, path_end: str) -> dict:
    return next(d for d in part["divergence"] if d["replica"].endswith(path_end))


def test_equal_logs_are_in_sync(tmp_path):
    # Both: epoch 0 from 0, offsets 0-9. The follower asks epoch 0; the leader's latest is 0, so it answers its
    # LEO 10; the follower's own end of epoch 0 is its LEO 10: truncate to min(10, 10, 10) = 10 = its LEO.
    log = {"segments": [[batch(0, 0, 5), batch(5, 0, 5)]], "epochs": [(0, 0)], "hw": 10}
    a, b = two(tmp_path, log, log)
    code, doc = replicas(a, b)
    assert code == 0
    (part,) = doc["partitions"]
    assert part["status"] == "in-sync" and part["mismatches"] == []
    assert {d["offset"] for d in part["divergence"]} == {10}
    assert all(r["logEndOffset"] == 10 and r["highWatermark"] == 10 and r["sound"] for r in part["replicas"])
    assert part["replicas"][0]["leaderEpochs"] == [{"epoch": 0, "startOffset": 0}]


def test_a_follower_behind_is_a_prefix(tmp_path):
    # Leader: epoch 0 at 0, epoch 1 at 5, LEO 10. Follower: epoch 0 at 0, LEO 5. It asks epoch 0; the leader's
    # latest is 1, so it answers (0, start of epoch 1) = (0, 5); the follower knows epoch 0 (its latest: end = its
    # LEO 5): truncate to min(5, 5, 5) = 5 = its LEO: nothing lost, it is behind.
    leader = {"segments": [[batch(0, 0, 5), batch(5, 1, 5)]], "epochs": [(0, 0), (1, 5)], "hw": 10}
    follower = {"segments": [[batch(0, 0, 5)]], "epochs": [(0, 0)], "hw": 5}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas(a, b)
    assert code == 0
    (part,) = doc["partitions"]
    assert part["status"] == "behind" and part["reference"].endswith("b/t-0")
    assert _loss(part, "a/t-0")["offset"] == 5 and _loss(part, "a/t-0")["records"] == 0
    assert _replica(part, "a/t-0")["status"] == "behind"


def test_a_follower_ahead_in_an_old_epoch_loses_acknowledged_records(tmp_path):
    # Unclean election: the old leader a wrote 0-9 in epoch 0 (high watermark 10: acknowledged); b had 0-4 only,
    # was elected in epoch 1 and wrote 5-7. Reference: b (the higher epoch). a asks epoch 0; b's latest is 1, so it
    # answers (0, start of epoch 1) = (0, 5); a's end of epoch 0 (its latest) is its LEO 10: truncate to
    # min(10, 5, 10) = 5. a loses offsets 5-9, 5 records, all below its high watermark 10.
    leader = {"segments": [[batch(0, 0, 5), batch(5, 1, 3, tag="new")]], "epochs": [(0, 0), (1, 5)], "hw": 5}
    follower = {"segments": [[batch(0, 0, 5), batch(5, 0, 5)]], "epochs": [(0, 0)], "hw": 10}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas(a, b)
    assert code == 1
    (part,) = doc["partitions"]
    assert part["status"] == "diverged" and part["reference"].endswith("b/t-0")
    loss = _loss(part, "a/t-0")
    assert (loss["offset"], loss["records"], loss["offsets"], loss["acknowledged"]) == (
        5, 5, [{"first": 5, "last": 9}], 5)
    assert part["mismatches"] == []  # offsets 0-4 are the same batch on both


def test_epochs_the_follower_lacks_are_walked_back(tmp_path):
    # Leader: epochs 0@0, 1@5, 3@12; batches 0-4 (e0), 5-11 (e1), 12-14 (e3); LEO 15. Follower: epochs 0@0, 2@8;
    # batches 0-4 (e0), 5-7 (e0), 8-10 (e2); LEO 11, high watermark 5.
    # Round 1: the follower asks epoch 2; the leader's latest is 3, epoch 2 is not its own: the largest epoch <= 2
    # is 1 and the next epoch (3) starts at 12: it answers (1, 12). The follower lacks epoch 1: its largest epoch
    # <= 1 is 0, ending where its epoch 2 starts, 8: it truncates to min(8, 11) = 8 and drops epoch 2.
    # Round 2: it asks epoch 0; the leader answers (0, start of epoch 1) = (0, 5); the follower's epoch 0 is now
    # its latest, ending at its LEO 8: truncate to min(8, 5, 8) = 5. It loses offsets 5-10 (6 records), none
    # below its high watermark 5.
    leader = {"segments": [[batch(0, 0, 5), batch(5, 1, 7), batch(12, 3, 3)]], "epochs": [(0, 0), (1, 5), (3, 12)],
              "hw": 15}
    follower = {"segments": [[batch(0, 0, 5), batch(5, 0, 3, tag="old"), batch(8, 2, 3, tag="old")]],
                "epochs": [(0, 0), (2, 8)], "hw": 5}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas(a, b)
    assert code == 1
    (part,) = doc["partitions"]
    loss = _loss(part, "a/t-0")
    assert (loss["offset"], loss["records"], loss["offsets"], loss["acknowledged"]) == (
        5, 6, [{"first": 5, "last": 10}], 0)
    assert len(loss["steps"]) == 2  # the walk back: two OffsetsForLeaderEpoch rounds
    assert part["status"] == "diverged" and part["mismatches"] == []


def test_a_follower_without_epochs_truncates_to_its_high_watermark(tmp_path):
    # Neither copy has a leader epoch (batches of epoch -1, as written before leader epochs existed; no
    # checkpoint). Named reference b (LEO 5). The follower a has no epoch: it truncates to its high watermark 5
    # (truncateToHighWatermark), losing 5-9, none acknowledged (all at or above its high watermark).
    leader = {"segments": [[batch(0, -1, 5)]], "epochs": None, "hw": 5}
    follower = {"segments": [[batch(0, -1, 5), batch(5, -1, 5)]], "epochs": None, "hw": 5}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas("--reference", b, a, b)
    assert code == 1
    (part,) = doc["partitions"]
    assert part["reference"].endswith("b/t-0")
    loss = _loss(part, "a/t-0")
    assert (loss["offset"], loss["records"], loss["acknowledged"]) == (5, 5, 0)
    assert _replica(part, "a/t-0")["leaderEpochs"] == []
    # without --reference, the longer log (a) is the reference, and b is only behind it
    code, doc = replicas(a, b)
    assert code == 0 and doc["partitions"][0]["reference"].endswith("a/t-0")
    assert doc["partitions"][0]["status"] == "behind"


def test_a_mismatch_below_the_high_watermark_is_inconsistent(tmp_path):
    # Same offsets and epochs (0@0, LEO 10 on both: divergence point 10), but the batch 5-9 holds other bytes on
    # the follower: a CRC mismatch below the divergence point (and below both high watermarks).
    leader = {"segments": [[batch(0, 0, 5), batch(5, 0, 5)]], "epochs": [(0, 0)], "hw": 10}
    follower = {"segments": [[batch(0, 0, 5), batch(5, 0, 5, tag="flipped")]], "epochs": [(0, 0)], "hw": 10}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas("--reference", b, a, b)
    assert code == 1
    (part,) = doc["partitions"]
    assert part["status"] == "inconsistent"
    (m,) = part["mismatches"]
    assert (m["offset"], m["lastOffset"]) == (5, 9) and m["replicas"][0].endswith("a/t-0")
    assert "CRC" in m["differences"][0]


def test_a_replica_missing_a_segment_mismatches(tmp_path):
    # The follower has the leader's segments 0, 5 and 10 but not 5: the same epochs (0@0) and LEO 15, so the
    # divergence point is 15; below it, the leader's batch 5-9 is not on the follower.
    segments = [[batch(0, 0, 5)], [batch(5, 0, 5)], [batch(10, 0, 5)]]
    leader = {"segments": segments, "epochs": [(0, 0)], "hw": 15}
    follower = {"segments": [segments[0], segments[2]], "epochs": [(0, 0)], "hw": 15}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas("--reference", b, a, b)
    assert code == 1
    (part,) = doc["partitions"]
    assert part["status"] == "inconsistent"
    assert [(m["offset"], m["lastOffset"]) for m in part["mismatches"]] == [(5, 9)]
    assert "lacks" in part["mismatches"][0]["differences"][0]


def test_transactions_and_control_batches(tmp_path):
    # Both: a transaction of producer 7 (offsets 0-2, epoch 0) and its COMMIT marker (a control batch at 3). Then
    # the leader b, elected in epoch 1, writes 4-6; the follower a, still in epoch 0, had taken 4-5 of another
    # transaction (no marker). a asks epoch 0; b answers (0, start of epoch 1) = (0, 4); a's end of epoch 0 is its
    # LEO 6: truncate to min(6, 4, 6) = 4. a loses offsets 4-5; the control batch below 4 is the same on both.
    shared = [batch(0, 0, 3, producer_id=7, producer_epoch=0, transactional=True), marker(3, 0, COMMIT, 7, 0)]
    leader = {"segments": [[*shared, batch(4, 1, 3, tag="new")]], "epochs": [(0, 0), (1, 4)], "hw": 7}
    follower = {"segments": [[*shared, batch(4, 0, 2, producer_id=7, producer_epoch=0, transactional=True)]],
                "epochs": [(0, 0)], "hw": 4}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas("--records", a, b)
    assert code == 1
    (part,) = doc["partitions"]
    assert part["mismatches"] == []
    loss = _loss(part, "a/t-0")
    assert (loss["offset"], loss["records"], loss["acknowledged"]) == (4, 2, 0)
    assert [(r["offset"], r["value"]) for r in loss["lost"]] == [(4, "v-4"), (5, "v-5")]


def _cluster(tmp_path):
    """Three brokers: orders-0 after an unclean election (b1 the old leader with 0-9 acknowledged, b2 elected in
    epoch 1 with 0-4 and 5-7, b3 its in-sync follower), orders-1 the same on all three."""
    brokers = [Broker(tmp_path, f"b{i}") for i in (1, 2, 3)]
    old = [batch(0, 0, 5), batch(5, 0, 5)]
    new = [batch(0, 0, 5), batch(5, 1, 3, tag="new")]
    brokers[0].partition("orders", 0, [old], epochs=[(0, 0)], hw=10)
    for br in brokers[1:]:
        br.partition("orders", 0, [new], epochs=[(0, 0), (1, 5)], hw=8)
    for br in brokers:
        br.partition("orders", 1, [[batch(0, 0, 4)]], epochs=[(0, 0)], hw=4)
    return [br.close() for br in brokers]


def test_three_brokers_end_to_end(tmp_path):
    b1, b2, b3 = _cluster(tmp_path)
    # orders-0: b1 asks epoch 0; b2 answers (0, 5); b1's epoch 0 ends at its LEO 10: truncate to 5, losing 5-9,
    # all below b1's high watermark 10. b3 asks epoch 1 (b2's latest too): b2 answers its LEO 8; b3's ends at 8.
    code, doc = replicas(b1, b2, b3)
    assert code == 1
    p0, p1 = doc["partitions"]
    assert (p0["topic"], p0["partition"], p0["status"]) == ("orders", 0, "diverged")
    assert p0["reference"].endswith("b2/orders-0")
    assert _replica(p0, "b3/orders-0")["status"] == "in-sync"
    assert (_loss(p0, "b1/orders-0")["offset"], _loss(p0, "b1/orders-0")["acknowledged"]) == (5, 5)
    assert (p1["partition"], p1["status"]) == (1, "in-sync")
    text = run_cli("replicas", "--jobs", "2", b1, b2, b3)
    assert text.exit_code == 1
    lines = text.stdout.splitlines()
    assert lines[0].startswith("orders-0: DIVERGED; reference ") and "b2" in lines[0]
    row = next(line for line in lines if "b1/orders-0" in line and "diverged" in line)
    assert "5 records (5-9), 5 below its high watermark (acknowledged)" in row
    assert any(line.startswith("orders-1: IN-SYNC") for line in lines)
    # in sync and behind only: exit 0
    code, doc = replicas(b2, b3)
    assert code == 0 and [p["status"] for p in doc["partitions"]] == ["in-sync", "in-sync"]


def test_nothing_to_compare_exits_2(tmp_path):
    b1, _b2, _b3 = _cluster(tmp_path)
    (tmp_path / "empty").mkdir()
    result = run_cli("replicas", b1, tmp_path / "empty")
    assert result.exit_code == 2
    assert run_cli("replicas", b1).exit_code == 2  # one path: a usage error
    result = run_cli("replicas", "--format", "json", b1 / "orders-0", b1 / "orders-1")
    assert result.exit_code == 2 and json.loads(result.stdout)["partitions"] == []


def test_a_damaged_replica_is_not_sound_and_its_lost_batch_mismatches(tmp_path):
    # The follower's batch 5-9 fails its CRC (a value byte flipped on disk): the read layer skips it (damage that
    # fails a run), so the follower is not sound, and below the divergence point (15: same epochs, same LEO) the
    # leader's batch 5-9 is missing from it.
    good = [batch(0, 0, 5), batch(5, 0, 5), batch(10, 0, 5)]
    flipped = good[1].replace(b"v-9", b"x-9")
    leader = {"segments": [good], "epochs": [(0, 0)], "hw": 15}
    follower = {"segments": [[good[0], flipped, good[2]]], "epochs": [(0, 0)], "hw": 15}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas("--reference", b, a, b)
    assert code == 1
    (part,) = doc["partitions"]
    rep = _replica(part, "a/t-0")
    assert (rep["sound"], rep["damageCount"], rep["logEndOffset"]) == (False, 1, 15)
    assert (rep["damage"][0]["firstOffset"], rep["damage"][0]["lastOffset"]) == (5, 9)
    assert part["status"] == "inconsistent"
    assert [(m["offset"], m["lastOffset"]) for m in part["mismatches"]] == [(5, 9)]
    text = run_cli("replicas", "--reference", b, a, b)
    assert "no (1)" in text.stdout and "DAMAGE" in text.stdout


def test_a_reference_named_that_holds_no_copy_is_said(tmp_path):
    log = {"segments": [[batch(0, 0, 3)]], "epochs": [(0, 0)], "hw": 3}
    a, b = two(tmp_path, log, log)
    (tmp_path / "elsewhere").mkdir()
    code, doc = replicas("--reference", tmp_path / "elsewhere", a, b)
    assert code == 0
    assert "no copy of it under" in doc["partitions"][0]["notes"][0]


def test_lost_records_in_text(tmp_path):
    # As the unclean election above: a loses 5-9; --records lists them.
    leader = {"segments": [[batch(0, 0, 5), batch(5, 1, 3, tag="new")]], "epochs": [(0, 0), (1, 5)], "hw": 5}
    follower = {"segments": [[batch(0, 0, 5), batch(5, 0, 5)]], "epochs": [(0, 0)], "hw": 10}
    a, b = two(tmp_path, leader, follower)
    result = run_cli("replicas", "--records", a, b)
    assert result.exit_code == 1
    lost = [line.strip() for line in result.stdout.splitlines() if "lost offset" in line]
    assert lost == [f"lost offset {o}: key k{o} value v-{o}" for o in range(5, 10)]


def test_the_schema_is_strict(tmp_path):
    """The schema is a valid JSON Schema, and a renamed or missing field fails it (test_json_schemas' rule)."""
    Draft202012Validator.check_schema(SCHEMA)
    b1, b2, b3 = _cluster(tmp_path)
    _code, doc = replicas("--records", b1, b2, b3)
    validator = schema_validator("replicas")
    for path in (("partitions", 0, "status"), ("partitions", 0, "replicas", 0, "highWatermark"),
                 ("partitions", 0, "divergence", 0, "offset"), ("partitions", 0, "divergence", 0, "lost", 0, "key")):
        broken = json.loads(json.dumps(doc))
        *parents, name = path
        where = broken
        for step in parents:
            where = where[step]
        where[name + "X"] = where.pop(name)
        assert not validator.is_valid(broken), path


def test_spark_replicas_gives_the_report_of_replicas(spark, backend, tmp_path):
    """``kdump spark replicas``: the surveys and comparisons as Spark tasks, the same JSON and exit code (once: the
    executors choose their backend)."""
    if backend != "compiled":
        pytest.skip("run once")
    b1, b2, b3 = _cluster(tmp_path)
    local = run_cli("replicas", "--format", "json", "--records", "--jobs", "1", b1, b2, b3)
    distributed = run_cli("spark", "replicas", "--format", "json", "--records", b1, b2, b3)
    assert local.exit_code == distributed.exit_code == 1
    assert json.loads(distributed.stdout) == json.loads(local.stdout)
    assert run_cli("spark", "replicas", b1, tmp_path / "missing").exit_code == 2


def test_a_directory_named_twice_is_one_replica(tmp_path):
    b1, _b2, _b3 = _cluster(tmp_path)
    result = run_cli("replicas", b1, b1)
    assert result.exit_code == 2
    assert "reached again" in result.stderr and "nothing to compare" in result.stderr


def test_damage_is_said_on_stderr(tmp_path):
    good = [batch(0, 0, 5), batch(5, 0, 5)]
    log = {"segments": [good], "epochs": [(0, 0)], "hw": 10}
    damaged = {"segments": [[good[0], good[1].replace(b"v-9", b"x-9")]], "epochs": [(0, 0)], "hw": 10}
    a, b = two(tmp_path, log, damaged)
    result = run_cli("replicas", a, b)
    assert result.exit_code == 1
    assert "a/t-0/00000000000000000000.log: at byte " in result.stderr and "crc" in result.stderr.lower()


def test_a_batch_holding_the_divergence_point_is_lost_whole(tmp_path):
    # Leader: 0-2 and 3-4 in epoch 0, 5-6 in epoch 1. Follower: 0-2, then one batch 3-7, all epoch 0, LEO 8,
    # high watermark 8. It asks epoch 0; the leader answers (0, start of epoch 1) = (0, 5); its own epoch 0 ends at
    # its LEO 8: truncate to min(8, 5, 8) = 5. Kafka's LogSegment.truncateTo(5) cuts the segment at the batch
    # holding offset 5, 3-7, so all of it goes: offsets 3-7, 5 records, all below the high watermark 8. The
    # leader's 3-4 is not compared (the follower's copy of it went with its batch).
    leader = {"segments": [[batch(0, 0, 3), batch(3, 0, 2), batch(5, 1, 2, tag="new")]], "epochs": [(0, 0), (1, 5)],
              "hw": 7}
    follower = {"segments": [[batch(0, 0, 3), batch(3, 0, 5)]], "epochs": [(0, 0)], "hw": 8}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas(a, b)
    assert code == 1
    (part,) = doc["partitions"]
    loss = _loss(part, "a/t-0")
    assert (loss["offset"], loss["records"], loss["offsets"], loss["acknowledged"]) == (
        5, 5, [{"first": 3, "last": 7}], 5)
    assert part["mismatches"] == [] and part["status"] == "diverged"


def test_the_epoch_cache_answers_as_kafkas(tmp_path):
    """LeaderEpochFileCache.endOffsetFor by its documented rules, worked by hand on epochs 0@0, 2@10, 5@20 and a
    log end of 30: the latest epoch ends at the log end; another epoch at the start of the next higher one, named
    by the largest epoch at or below it; an epoch older than all known ends where the first one starts; one above
    all, or undefined, is undefined (-1, -1)."""
    from kdump.replicas import end_offset_for
    epochs = [(0, 0), (2, 10), (5, 20)]
    assert end_offset_for(epochs, 5, 30) == (5, 30)
    assert end_offset_for(epochs, 2, 30) == (2, 20)
    assert end_offset_for(epochs, 3, 30) == (2, 20)
    assert end_offset_for(epochs, 1, 30) == (0, 10)
    assert end_offset_for(epochs[1:], 1, 30) == (1, 10)
    assert end_offset_for(epochs, 6, 30) == (-1, -1)
    assert end_offset_for(epochs, -1, 30) == (-1, -1)


def test_a_missing_or_refused_epoch_checkpoint_is_noted(tmp_path):
    # No checkpoint on a, a negative epoch in b's: both use the epochs the batches carry (0@0), and say so.
    log = {"segments": [[batch(0, 0, 3)]], "hw": 3}
    a, b = two(tmp_path, {**log, "epochs": [(-2, 0)]}, {**log, "epochs": None})
    code, doc = replicas(a, b)
    assert code == 0
    (part,) = doc["partitions"]
    assert "no leader-epoch-checkpoint" in _replica(part, "a/t-0")["notes"][0]
    assert "negative epoch" in _replica(part, "b/t-0")["notes"][0]
    assert _replica(part, "b/t-0")["leaderEpochs"] == [{"epoch": 0, "startOffset": 0}]


def test_memory_does_not_grow_with_the_batches(tmp_path):
    """The copies are walked side by side, a batch of each at a time: ten times the batches, about the same peak."""
    import tracemalloc

    from kdump.replicas import compare

    def peak(n: int) -> int:
        root = tmp_path / str(n)
        log = {"segments": [[batch(i * 2, 0, 2) for i in range(n)]], "epochs": [(0, 0)], "hw": 2 * n}
        a, b = two(root, log, log)
        tracemalloc.start()
        _found, (result,) = compare([str(a), str(b)])
        size = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert result.status == "in-sync"
        return size

    small, large = peak(200), peak(2000)
    assert large < small + 300_000, (small, large)


def test_magic_1_replicas_have_no_epochs_and_truncate_to_the_high_watermark(tmp_path):
    # Messages of magic 1 carry no leader epoch (and no checkpoint is kept for them). The longer log, b (0-5), is
    # the reference; a (0-2, then 3-4 of other bytes, high watermark 3) has no epoch: it truncates to its high
    # watermark 3, losing 3-4, none acknowledged. Below 3 the messages are the same, CRC for CRC.
    from support.replica_logs import messages
    leader = {"segments": [[messages(0, 3), messages(3, 3)]], "epochs": None, "hw": 6}
    follower = {"segments": [[messages(0, 3), messages(3, 2, tag="old")]], "epochs": None, "hw": 3}
    a, b = two(tmp_path, leader, follower)
    code, doc = replicas(a, b)
    assert code == 1
    (part,) = doc["partitions"]
    assert part["reference"].endswith("b/t-0") and part["mismatches"] == []
    loss = _loss(part, "a/t-0")
    assert (loss["offset"], loss["records"], loss["offsets"], loss["acknowledged"]) == (
        3, 2, [{"first": 3, "last": 4}], 0)
    assert all(r["leaderEpochs"] == [] for r in part["replicas"])
