"""kdump.read.logdir: Kafka's file names (LogFileUtils, Snapshots, UnifiedLog.parseTopicPartitionName, spec §5.1),
partitions, and the walk every command shares (each file once, no symlink loop, no FIFO opened)."""
from __future__ import annotations

import os
import threading

import pytest

from kdump.read.logdir import (FileKind, Partition, classify, directory_state, kraft_snapshot_id, named_kind,
                                segment_base_offset, sibling, snapshot_offset, topic_partition)
from kdump.read.scan import scan

K = FileKind


def expand(paths):
    """The files a command visits (what :func:`kdump.read.scan.scan` found)."""
    return scan(paths).entries


@pytest.mark.parametrize("name, kind", [
    ("00000000000000000000.log", K.LOG),
    ("5.log", K.LOG),  # offsetFromFileName parses any digits; %020d is how Kafka writes them
    ("00000000000000001234.index", K.INDEX),
    ("00000000000000001234.timeindex", K.TIMEINDEX),
    ("00000000000000001234.txnindex", K.TXNINDEX),
    ("00000000000000001234.snapshot", K.PRODUCER_SNAPSHOT),
    ("00000000000000004567-0000000003.checkpoint", K.KRAFT_CHECKPOINT),
    ("bootstrap.checkpoint", K.KRAFT_CHECKPOINT),
    ("leader-epoch-checkpoint", K.LEADER_EPOCH_CHECKPOINT),
    ("partition.metadata", K.PARTITION_METADATA),
    ("replication-offset-checkpoint", K.OFFSET_CHECKPOINT),
    ("recovery-point-offset-checkpoint", K.OFFSET_CHECKPOINT),
    ("log-start-offset-checkpoint", K.OFFSET_CHECKPOINT),
    ("cleaner-offset-checkpoint", K.OFFSET_CHECKPOINT),
    ("meta.properties", K.META_PROPERTIES),
    (".lock", K.BROKER_STATE),
    (".kafka_cleanshutdown", K.BROKER_STATE),
    ("quorum-state", K.BROKER_STATE),
    ("00000000000000000000.log.deleted", K.DELETED),
    ("00000000000000000000.index.deleted", K.DELETED),
    ("00000000000000000000.log.cleaned", K.CLEANED),
    ("00000000000000000000.log.swap", K.SWAP),
    ("00000000000000004567-0000000003.checkpoint.part", K.KAFKA_TEMP),
    ("replication-offset-checkpoint.tmp", K.KAFKA_TEMP),
    (".00000000000000000000.log.k2j3h4g5.tmp", K.KDUMP_TEMP),  # AtomicFile's mkstemp name
    (".bak.a8d7f6e5.tmp", K.KDUMP_TEMP),
    ("00000000000000000000.index.bak", K.KDUMP_BACKUP),
    ("00000000000000000000.index.bak.3", K.KDUMP_BACKUP),
    ("notes.log", K.UNKNOWN),
    ("0x10.log", K.UNKNOWN),
    ("-5.log", K.UNKNOWN),
    ("99999999999999999999.log", K.UNKNOWN),  # above Long.MAX_VALUE: parseLong throws
    ("4567-3.checkpoint", K.UNKNOWN),  # Snapshots.parse reads fixed widths
    ("README", K.UNKNOWN),
    ("00000000000000000000.json", K.UNKNOWN),
])
def test_every_kind_from_its_name(name, kind):
    assert classify(name) is kind
    assert classify(os.path.join("some", "dir", name)) is kind


def test_a_file_named_by_the_user_is_read_by_its_suffix():
    assert named_kind("copied.log") is K.LOG
    assert named_kind("old.checkpoint") is K.KRAFT_CHECKPOINT
    assert named_kind("x.index") is K.INDEX
    assert named_kind("notes.txt") is K.UNKNOWN
    assert named_kind("00000000000000000007.snapshot") is K.PRODUCER_SNAPSHOT


def test_offsets_from_names():
    assert segment_base_offset("/d/00000000000000000042.log") == 42
    assert segment_base_offset("/d/5.log") == 5
    assert segment_base_offset("/d/00000000000000000042.timeindex") == 42
    assert segment_base_offset("/d/notes.log") is None
    assert segment_base_offset("/d/00000000000000000042.snapshot") is None
    assert segment_base_offset("/d/00000000000000000042.log.deleted") is None
    assert snapshot_offset("00000000000000000406.snapshot") == 406
    assert snapshot_offset("00000000000000000406.index") is None
    assert kraft_snapshot_id("00000000000000004567-0000000003.checkpoint") == (4567, 3)
    assert kraft_snapshot_id("bootstrap.checkpoint") is None


def test_siblings_share_the_digits_of_the_name():
    assert sibling("/p/00000000000000000042.log", K.INDEX) == "/p/00000000000000000042.index"
    assert sibling("/p/00000000000000000042.index", K.LOG) == "/p/00000000000000000042.log"
    assert sibling("/p/00000000000000000042.log", K.PRODUCER_SNAPSHOT) == "/p/00000000000000000042.snapshot"
    assert sibling("5.log", K.TXNINDEX) == "5.txnindex"


@pytest.mark.parametrize("name, expected", [
    ("orders-0", ("orders", 0)),
    ("my-topic-12", ("my-topic", 12)),
    ("my.topic.v2-3", ("my.topic.v2", 3)),
    ("__consumer_offsets-49", ("__consumer_offsets", 49)),
    ("a-b-c-7", ("a-b-c", 7)),
    ("orders-3.5b1c0d7e9a8f4c2d8e6b1a3c5d7e9f01-delete", ("orders", 3)),
    ("my-topic.x-3.5b1c0d7e9a8f4c2d8e6b1a3c5d7e9f01-future", ("my-topic.x", 3)),
    ("orders-3.5b1c0d7e9a8f4c2d8e6b1a3c5d7e9f01-stray", ("orders", 3)),
    ("orders-+4", ("orders", 4)),  # Integer.parseInt accepts a plus sign
    ("orders", None),  # no dash
    ("-0", None),  # empty topic
    ("orders-", None),  # empty partition
    ("orders-x", None),
    ("orders-2147483648", None),  # above Integer.MAX_VALUE
    ("orders-3-delete", None),  # -delete without the .<id> part: DELETE_DIR_PATTERN does not match
    ("", None),
])
def test_topic_partition_from_directory_names(name, expected):
    assert topic_partition(name) == expected
    if name:
        assert topic_partition(f"/var/lib/kafka/{name}/") == expected


def test_directory_state():
    assert directory_state("orders-3.5b1c0d7e9a8f4c2d8e6b1a3c5d7e9f01-delete") == "delete"
    assert directory_state("orders-3.5b1c0d7e9a8f4c2d8e6b1a3c5d7e9f01-future") == "future"
    assert directory_state("orders-3") is None


def _touch(d, *names):
    for n in names:
        (d / n).write_bytes(b"")


def test_partition_groups_segments_companions_and_files(tmp_path):
    part = tmp_path / "my.topic-2"
    part.mkdir()
    _touch(part, "00000000000000000100.log", "00000000000000000100.index", "00000000000000000000.log",
           "00000000000000000000.index", "00000000000000000000.timeindex", "00000000000000000300.txnindex",
           "00000000000000000100.snapshot", "00000000000000000050.snapshot", "leader-epoch-checkpoint",
           "partition.metadata", "notes.log", "00000000000000000000.log.deleted",
           "00000000000000000010-0000000001.checkpoint")
    (part / "sub").mkdir()
    p = Partition(part)
    assert (p.topic, p.partition) == ("my.topic", 2)
    assert [(s.base_offset, os.path.basename(s.log)) for s in p.segments] == [
        (0, "00000000000000000000.log"), (100, "00000000000000000100.log")]
    first = p.segments[0]
    assert os.path.basename(first.index) == "00000000000000000000.index"
    assert os.path.basename(first.timeindex) == "00000000000000000000.timeindex"
    assert first.txnindex is None and p.segments[1].timeindex is None
    assert first.expected(K.TXNINDEX) == str(part / "00000000000000000000.txnindex")
    assert [(s.base_offset, s.log, os.path.basename(s.txnindex)) for s in p.orphans] == [
        (300, None, "00000000000000000300.txnindex")]
    assert [o for o, _ in p.snapshots] == [50, 100]
    assert [os.path.basename(x) for x in p.kraft_snapshots] == ["00000000000000000010-0000000001.checkpoint"]
    assert set(p.checkpoints) == {K.LEADER_EPOCH_CHECKPOINT, K.PARTITION_METADATA}
    assert p.files_of(K.UNKNOWN) == [str(part / "notes.log")]
    assert p.files_of(K.DELETED) == [str(part / "00000000000000000000.log.deleted")]
    assert p.subdirectories == [str(part / "sub")]
    assert p.is_partition


def test_rescan_sees_a_segment_roll(tmp_path):
    _touch(tmp_path, "00000000000000000000.log")
    p = Partition(tmp_path)
    assert [s.base_offset for s in p.segments] == [0]
    _touch(tmp_path, "00000000000000000500.log", "00000000000000000500.index")
    assert [s.base_offset for s in p.segments] == [0]
    p.rescan()
    assert [s.base_offset for s in p.segments] == [0, 500]
    assert p.segments[1].index is not None


def test_logdir_finds_partitions_and_its_checkpoints(tmp_path):
    for d in ("a-0", "a-1", "b.c-0"):
        (tmp_path / d).mkdir()
        _touch(tmp_path / d, "00000000000000000000.log")
    (tmp_path / "empty-0").mkdir()
    _touch(tmp_path, "replication-offset-checkpoint", "meta.properties", ".lock")
    (tmp_path / "a-0" / "loop").symlink_to(tmp_path)
    found = scan([tmp_path])
    assert [os.path.basename(p.directory) for p in found.partitions] == ["a-0", "a-1", "b.c-0"]
    top = found.directories[0]
    assert [os.path.basename(c) for c in top.files_of(K.OFFSET_CHECKPOINT, K.META_PROPERTIES)] == [
        "meta.properties", "replication-offset-checkpoint"]


# --- expand: each file once, loops cut, FIFOs refused ---------------------------------------------------
def _names(entries):
    return [(os.path.basename(e.path), e.kind, e.from_dir, e.refused is not None) for e in entries]


def test_expand_orders_a_directory_by_offset_then_name(tmp_path):
    _touch(tmp_path, "00000000000000000100.log", "00000000000000000000.index", "00000000000000000000.log",
           "notes.log", "00000000000000000100.snapshot", "partition.metadata")
    assert [os.path.basename(e.path) for e in expand([tmp_path])] == [
        "00000000000000000000.log", "00000000000000000000.index", "00000000000000000100.log",
        "00000000000000000100.snapshot", "notes.log", "partition.metadata"]


def test_expand_visits_a_file_once_whatever_links_lead_to_it(tmp_path):
    part = tmp_path / "t-0"
    part.mkdir()
    _touch(part, "00000000000000000000.log")
    os.link(part / "00000000000000000000.log", part / "00000000000000000001.log")
    (part / "00000000000000000002.log").symlink_to(part / "00000000000000000000.log")
    (tmp_path / "again").symlink_to(part)
    entries = expand([tmp_path, part])
    assert [os.path.basename(e.path) for e in entries] == ["00000000000000000000.log"]


def test_expand_cuts_symlink_loops(tmp_path):
    _touch(tmp_path, "00000000000000000000.log")
    (tmp_path / "dot").symlink_to(".")
    (tmp_path / "up").symlink_to(tmp_path)
    (tmp_path / "x").symlink_to(tmp_path / "y")
    (tmp_path / "y").symlink_to(tmp_path / "x")
    entries = expand([tmp_path])
    assert [os.path.basename(e.path) for e in entries if e.refused is None] == ["00000000000000000000.log"]
    loops = [e for e in entries if e.refused is not None]
    assert [os.path.basename(e.path) for e in loops] == ["x", "y"]
    assert all("too many levels of symbolic links" in e.refused.reason for e in loops)


def test_expand_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "00000000000000000000.log"
    os.mkfifo(fifo)
    result = {}
    worker = threading.Thread(target=lambda: result.update(dir=expand([tmp_path]), named=expand([fifo])), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "expand blocked on a FIFO"
    for entries, from_dir in ((result["dir"], True), (result["named"], False)):
        assert _names(entries) == [("00000000000000000000.log", K.LOG, from_dir, True)]
        assert "FIFO" in entries[0].refused.reason and "not a regular file" in entries[0].refused.reason
    p = Partition(tmp_path)
    assert p.segments == [] and [os.path.basename(r.path) for r in p.refused] == ["00000000000000000000.log"]


def test_expand_names_missing_paths_and_keeps_files_named_twice(tmp_path):
    _touch(tmp_path, "00000000000000000000.log")
    f = tmp_path / "00000000000000000000.log"
    entries = expand([f, f, tmp_path / "missing.log", tmp_path / "dangling"])
    assert [e.refused is None for e in entries] == [True, True, False, False]
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    entries = expand([tmp_path / "missing.log", tmp_path / "dangling"])
    assert entries[0].refused.reason == "No such file or directory" and entries[0].kind is K.LOG
    assert "symbolic link to nothing" in entries[1].refused.reason
