"""`kdump index check` and `kdump.index.check`: damaged companion files give findings (stable codes, byte
positions), never crashes; sound ones give none. Expected findings come from the damage each test does
and from Kafka's rules (spec §5.2-§5.5); Kafka's own messages are quoted where Kafka has them."""
import json
import os
import random
import shutil
import struct

import pytest

from corpus import CORPUS
from support.cli import run_cli
from kdump.index.check import check_partition_companions, check_paths
from kdump.index.rebuild import rebuild_indexes
from kdump.read.snapshot import ProducerEntry, encode_snapshot
from support.segments import T0, data_batch, marker, write_log

BROKER = CORPUS / "broker-written"


def codes(reports, kind=None):
    return {f.code for r in reports if kind is None or r.kind == kind for f in r.findings}


def report_of(reports, kind, base=0):
    (r,) = [r for r in reports if r.kind == kind and (kind in ("snapshot", "leader-epoch-checkpoint")
                                                     or f"{base:020d}." in os.path.basename(r.path))]
    return r


@pytest.fixture
def part(tmp_path):
    """A partition: one segment of 40 batches (10 records each), indexes every 500 bytes, a transaction
    aborted at offset 405, a leader-epoch-checkpoint and a producer snapshot."""
    d = tmp_path / "topic-0"
    batches = [data_batch(i * 10, 10, ts=T0 + i * 1000, ple=0 if i < 20 else 3) for i in range(40)]
    batches += [data_batch(400, 5, pid=7, epoch=0, seq=0, txn=True, ple=3), marker(405, 7, commit=False, ple=3)]
    write_log(d, 0, batches)
    rebuild_indexes(d / "00000000000000000000.log", index_interval_bytes=500)
    (d / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n3 200\n")
    (d / "00000000000000000406.snapshot").write_bytes(encode_snapshot([ProducerEntry(7, 0, 5, 405, 0, T0, 3, -1)]))
    return d


def idx_path(d):
    return d / "00000000000000000000.index"


def tidx_path(d):
    return d / "00000000000000000000.timeindex"


def test_sound_partition_has_no_findings(part):
    for deep in (False, True):
        reports = check_partition_companions(str(part), deep=deep, index_interval_bytes=500)
        assert sorted(r.kind for r in reports) == ["index", "leader-epoch-checkpoint", "snapshot", "timeindex",
                                                   "txnindex"]
        assert all(r.status == "ok" for r in reports), [(r.path, [(f.code, f.message) for f in r.findings])
                                                         for r in reports]
        assert not codes(reports)
    result = run_cli("index", "check", "--deep", part)
    assert result.exit_code == 0, result.output
    info = {f.code for r in check_partition_companions(str(part), deep=True) for f in r.findings}
    assert info == {"index-differs-from-recovery", "timeindex-differs-from-recovery"}  # built every 500 bytes


def test_corpus_companions_are_sound():
    for case in ("consumer-offsets-v2", "kraft-metadata-log", "producer-snapshot-3-producers"):
        for deep in (False, True):
            reports = check_partition_companions(str(BROKER / case), deep=deep)
            assert all(r.status == "ok" for r in reports), (case, [(f.code, f.message) for r in reports
                                                                   for f in r.findings])


def test_truncated_index_entry(part, in_dir):
    with open(idx_path(part), "ab") as f:
        f.write(b"\x00\x00\x01")
    size = idx_path(part).stat().st_size
    r = report_of(check_partition_companions(str(part), deep=False), "index")
    (f,) = r.findings
    assert (f.code, f.severity, f.position, f.length) == ("index-length-invalid", "error", size - 3, 3)
    assert f"found {size} bytes which is neither positive nor a multiple of 8" in f.message
    in_dir(part)
    sanity = run_cli("dump", "--index-sanity-check", idx_path(part).name)
    assert sanity.exit_code == 1
    assert (f"Index file {idx_path(part)} is corrupt, found {size} bytes which is neither positive nor a multiple of 8"
            in sanity.stderr)
    plain = run_cli("dump", idx_path(part).name)
    assert plain.exit_code == 0  # Kafka reads the whole entries and ignores the rest
    result = run_cli("index", "check", part)
    assert result.exit_code == 1 and "index-length-invalid" in result.stdout


def test_non_monotonic_offsets(part):
    data = bytearray(idx_path(part).read_bytes())
    assert len(data) >= 24
    data[8:16], data[16:24] = data[16:24], data[8:16]
    idx_path(part).write_bytes(bytes(data))
    r = report_of(check_partition_companions(str(part), deep=False), "index")
    assert {f.code for f in r.findings} == {"index-offset-not-increasing", "index-position-not-increasing"}
    assert {f.position for f in r.findings} == {16}


def test_position_past_end(part, in_dir):
    data = bytearray(idx_path(part).read_bytes())
    log_size = (part / "00000000000000000000.log").stat().st_size
    rel, _ = struct.unpack_from(">ii", data, 8)
    struct.pack_into(">ii", data, 8, rel, log_size + 100)
    idx_path(part).write_bytes(bytes(data))
    r = report_of(check_partition_companions(str(part), deep=False), "index")
    (f,) = [f for f in r.findings if f.code == "index-position-past-end"]
    assert f.position == 8 and f.first_offset == rel and f.severity == "error"
    in_dir(part)
    result = run_cli("dump", idx_path(part).name)  # Kafka's tool dies here
    assert f"offset: {rel} position: {log_size + 100}" in result.stdout
    assert f"kdump: {idx_path(part).name}: at byte 8: entry 1 (offset {rel}, position {log_size + 100}) points at no " \
           "batch" in result.stderr
    assert result.exit_code == 1
    assert len(result.stdout.splitlines()) == 1 + len(data) // 8  # every entry is still printed


def test_position_inside_a_batch(part):
    data = bytearray(idx_path(part).read_bytes())
    rel, pos = struct.unpack_from(">ii", data, 8)
    struct.pack_into(">ii", data, 8, rel, pos + 20)
    idx_path(part).write_bytes(bytes(data))
    for deep in (False, True):
        r = report_of(check_partition_companions(str(part), deep=deep), "index")
        assert "index-position-not-batch" in {f.code for f in r.findings}, deep


def test_entry_that_would_skip_offsets(part):
    """An entry naming an offset below the first offset of the batch it points at: lookups of the offsets
    in between would start after them."""
    data = bytearray(idx_path(part).read_bytes())
    rel, pos = struct.unpack_from(">ii", data, 16)
    struct.pack_into(">ii", data, 16, rel - 15, pos)
    idx_path(part).write_bytes(bytes(data))
    r = report_of(check_partition_companions(str(part), deep=False), "index")
    (f,) = [f for f in r.findings if f.code == "index-entry-skips-offsets"]
    assert f.first_offset == rel - 15 and f.position == 16


@pytest.mark.parametrize("last_segment", [True, False])
def test_zero_tail(part, in_dir, last_segment):
    trimmed = idx_path(part).read_bytes()
    n = len(trimmed) // 8
    with open(idx_path(part), "ab") as f:
        f.write(bytes(8 * 1000))  # a preallocated tail left by a crash
    with open(tidx_path(part), "ab") as f:
        f.write(bytes(12 * 1000))
    if not last_segment:
        write_log(part, 406, [data_batch(406, 2, ts=T0 + 10**6)])
    reports = check_partition_companions(str(part), deep=True, index_interval_bytes=500)
    f = next(f for f in report_of(reports, "index").findings if f.code == "index-zero-tail")
    assert (f.position, f.length) == (8 * n, 8000)
    assert f.severity == ("info" if last_segment else "warning")
    t = [f.code for f in report_of(reports, "timeindex").findings]
    assert t == ["timeindex-zero-tail"]  # Kafka's failing sanity check is explained in that finding
    in_dir(part)
    result = run_cli("dump", idx_path(part).name)
    assert result.stdout.count("\noffset: ") == n  # DumpLogSegments stops at the zero tail
    sanity = run_cli("dump", "--index-sanity-check", tidx_path(part).name)
    assert sanity.exit_code == 1
    assert "has non-zero size but the last timestamp is 0 which is less than the first timestamp" in sanity.stderr


# Kafka's default segment.index.bytes: what AbstractIndex preallocates (setLength, rounded down to whole entries)
# for a new segment's index and time index; only a clean close (trimToValidSize) cuts the file to its entries.
SEGMENT_INDEX_BYTES = 10 * 1024 * 1024


@pytest.mark.parametrize("real_entries", [0, 1])
def test_preallocated_zero_index_of_the_active_segment_is_info_with_or_without_a_real_entry(tmp_path, real_entries):
    """The active segment of a running or crashed broker, before (0) or after (1) its first index entry: its
    ``.index`` and ``.timeindex`` are Kafka's preallocated zeros after that many real entries. Kafka loads them as
    ``length / entrySize`` entries whose last, a zero slot, passes the sanity checks (offset = base offset,
    timestamp 0 not below the first slot's 0), and its recovery of an unflushed segment resets both indexes and
    rebuilds them from the log. So the zeros are no entries, and no failure, whether or not a real entry precedes
    them: ``info`` ``*-zero-tail``, exit 0 in ``index check`` (shallow and deep) and ``verify --deep``."""
    d = tmp_path / "topic-0"
    write_log(d, 0, [data_batch(i * 10, 10, ts=T0 + i * 1000) for i in range(40)])
    rebuild_indexes(d / "00000000000000000000.log", index_interval_bytes=500)
    for path, size in ((idx_path(d), 8), (tidx_path(d), 12)):
        real = path.read_bytes()[:real_entries * size]
        path.write_bytes(real + bytes(SEGMENT_INDEX_BYTES // size * size - len(real)))
    for deep in (False, True):
        reports = check_partition_companions(str(d), deep=deep, index_interval_bytes=500)
        for kind, size in (("index", 8), ("timeindex", 12)):
            findings = [(f.code, f.severity, f.position) for f in report_of(reports, kind).findings
                        if f.severity != "info" or f.code.endswith("zero-tail")]
            assert findings == [(f"{kind}-zero-tail", "info", real_entries * size)], (deep, kind)
    for args in (("index", "check"), ("index", "check", "--deep"), ("verify", "--deep")):
        result = run_cli(*args, d)
        assert result.exit_code == 0, (args, result.output)


def test_time_index_damage(part, in_dir):
    data = bytearray(tidx_path(part).read_bytes())
    entries = [struct.unpack_from(">qi", data, k) for k in range(0, len(data), 12)]
    assert len(entries) >= 4
    ts1, rel1 = entries[1]
    struct.pack_into(">qi", data, 12, ts1 + 7, rel1)  # timestamp not the batch's
    ts3, rel3 = entries[3]
    struct.pack_into(">qi", data, 36, entries[2][0] - 1, rel3)  # decreasing
    tidx_path(part).write_bytes(bytes(data))
    shallow = {(f.code, f.position) for f in report_of(check_partition_companions(str(part), deep=False),
                                                       "timeindex").findings}
    assert ("timeindex-timestamp-mismatch", 12) in shallow
    assert ("timeindex-timestamp-decreasing", 36) in shallow
    deep = {(f.code, f.position) for f in report_of(check_partition_companions(str(part), deep=True),
                                                    "timeindex").findings}
    assert {("timeindex-timestamp-mismatch", 12), ("timeindex-not-max-so-far", 12),
            ("timeindex-timestamp-decreasing", 36)} <= deep
    in_dir(part)
    result = run_cli("dump", "--verify-index-only", tidx_path(part).name)
    abs_path = os.path.abspath(tidx_path(part).name)
    assert result.stderr == (f"Found timestamp mismatch in :{abs_path}\n"
                             f"  Index timestamp: {ts1 + 7}, log timestamp: {ts1}\n"
                             f"  Index timestamp: {entries[2][0] - 1}, log timestamp: {ts3}\n"
                             f"Found out of order timestamp in :{abs_path}\n"
                             f"  Index timestamp: {entries[2][0] - 1}, Previously indexed timestamp: {entries[2][0]}\n")


def test_time_index_offset_past_the_log(part):
    with open(tidx_path(part), "ab") as f:
        f.write(struct.pack(">qi", T0 + 10**9, 5000))
    for deep in (False, True):
        r = report_of(check_partition_companions(str(part), deep=deep), "timeindex")
        assert "timeindex-offset-past-end" in {f.code for f in r.findings}


def _damage_index_entries(path, how):
    """Rewrite every entry of an offset index: ``inside`` points each into the middle of its batch, ``later``
    makes each claim the previous entry's offset (so a lookup lands on a batch after the offset sought),
    ``past-end`` points each beyond the log."""
    data = bytearray(path.read_bytes())
    entries = [struct.unpack_from(">ii", data, k) for k in range(0, len(data), 8)]
    for k, (rel, pos) in enumerate(entries):
        if how == "inside":
            pos += 7
        elif how == "later":
            rel = entries[k - 1][0] if k else 0
        else:
            pos += 1 << 30
        struct.pack_into(">ii", data, 8 * k, rel, pos)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["inside", "later", "past-end"])
def test_damaged_offset_index_does_not_condemn_an_intact_time_index(tmp_path, how):
    """Only the .index is damaged: its findings are reported, the intact .timeindex has none, shallow or
    deep, in `index check` and in `verify` (the offset index is a hint to walk the log from, never the
    judge of where the log ends)."""
    d = tmp_path / "topic-0"
    write_log(d, 0, [data_batch(i * 10, 10, ts=T0 + i * 1000) for i in range(40)])
    result = run_cli("index", "rebuild", "--index-interval-bytes", "500", d / "00000000000000000000.log")
    assert result.exit_code == 0, result.output
    tidx_before = tidx_path(d).read_bytes()
    assert len(tidx_before) >= 12 * 5
    _damage_index_entries(idx_path(d), how)
    for command in (["index", "check"], ["verify"]):
        for deep in ([], ["--deep"]):
            result = run_cli(*command, *deep, "--format", "json", d)
            files = {f["kind"]: f for f in json.loads(result.stdout)["files"]}
            assert files["index"]["status"] == "findings", (command, deep)
            assert [f for f in files["timeindex"]["findings"] if f["severity"] != "info"] == [], (command, deep)
            assert result.exit_code == 1
    assert tidx_path(d).read_bytes() == tidx_before


def test_offset_index_mismatch_reports_like_kafka(part, in_dir):
    """DumpLogSegments: 'Mismatches in :<abs path>', the Java tool sorted by index offset descending, the
    Scala tool in reverse discovery order (both descending here)."""
    data = bytearray(idx_path(part).read_bytes())
    wrong = []
    for k in (1, 2):
        rel, pos = struct.unpack_from(">ii", data, 8 * k)
        struct.pack_into(">ii", data, 8 * k, rel + 3, pos)
        wrong.append((rel + 3, rel))
    idx_path(part).write_bytes(bytes(data))
    in_dir(part)
    abs_path = os.path.abspath(idx_path(part).name)
    expected = f"Mismatches in :{abs_path}\n" + "".join(f"  Index offset: {a}, log offset: {b}\n"
                                                       for a, b in sorted(wrong, reverse=True))
    for compat in ("java", "scala"):
        result = run_cli("dump", "--compat", compat, "--verify-index-only", idx_path(part).name)
        assert result.stdout == f"Dumping {idx_path(part).name}\n"
        assert result.stderr == expected
        assert result.exit_code == 0  # reports, as Kafka's, do not fail the dump


def test_txnindex_damage(part, in_dir):
    txn = part / "00000000000000000000.txnindex"
    good = txn.read_bytes()
    assert good == struct.pack(">hqqqq", 0, 7, 400, 405, 406)
    # version byte (Kafka reads one byte), first after last, partial entry
    txn.write_bytes(good + struct.pack(">hqqqq", 0x0100, 8, 500, 406, 407) + b"\x00" * 5)
    r = report_of(check_partition_companions(str(part), deep=False), "txnindex")
    got = {(f.code, f.position) for f in r.findings}
    assert got == {("txnindex-version", 34), ("txnindex-partial-entry", 68)}
    v = next(f for f in r.findings if f.code == "txnindex-version")
    assert "Unexpected aborted transaction version 1 in transaction index" in v.message
    in_dir(part)
    result = run_cli("dump", txn.name)
    assert result.stdout.splitlines()[1:] == ["version: 0 producerId: 7 firstOffset: 400 lastOffset: 405 "
                                              "lastStableOffset: 406"]
    assert result.exit_code == 1
    # an entry for a transaction the log does not have
    txn.write_bytes(good + struct.pack(">hqqqq", 0, 8, 300, 310, 311))
    shallow = {f.code for f in report_of(check_partition_companions(str(part), deep=False), "txnindex").findings}
    assert shallow == {"txnindex-not-increasing", "txnindex-marker-missing"}
    deep = {f.code for f in report_of(check_partition_companions(str(part), deep=True), "txnindex").findings}
    assert "txnindex-extra-entry" in deep
    # the index lost its entry
    txn.unlink()
    r = report_of(check_partition_companions(str(part), deep=True), "txnindex")
    assert [f.code for f in r.findings] == ["txnindex-missing"]
    assert r.path.endswith("00000000000000000000.txnindex")


def test_txnindex_kafka_sanity_check(tmp_path):
    d = tmp_path / "t-0"
    write_log(d, 100, [data_batch(100, 2)])
    (d / "00000000000000000100.txnindex").write_bytes(struct.pack(">hqqqq", 0, 1, 10, 20, 21))
    r = report_of(check_partition_companions(str(d), deep=False), "txnindex", base=100)
    f = next(f for f in r.findings if f.code == "txnindex-sanity")
    assert ("Last offset of aborted transaction AbortedTxn(version=0, producerId=1, firstOffset=10, lastOffset=20, "
            "lastStableOffset=21) in index") in f.message and f.message.endswith("is less than start offset 100")


@pytest.mark.parametrize("damage,code", [
    (lambda b: b[:2] + b"\xff" + b[3:], "snapshot-crc"),
    (lambda b: b"\x00\x02" + b[2:], "snapshot-version"),
    (lambda b: b[:-7], "snapshot-schema"),
    (lambda b: b[:4], "snapshot-schema"),
])
def test_snapshot_damage(part, damage, code):
    snap = part / "00000000000000000406.snapshot"
    snap.write_bytes(damage(snap.read_bytes()))
    r = report_of(check_partition_companions(str(part), deep=False), "snapshot")
    assert [f.code for f in r.findings] == [code]


def test_snapshot_semantics(part):
    snap = part / "00000000000000000406.snapshot"
    snap.write_bytes(encode_snapshot([ProducerEntry(7, 0, 5, 405, 0, T0, 3, -1), ProducerEntry(7, 0, 6, 406, 0, T0, 3, 500)]))
    r = report_of(check_partition_companions(str(part), deep=False), "snapshot")
    assert {f.code for f in r.findings} == {"snapshot-duplicate-producer", "snapshot-entry-after-offset"}
    shutil.move(snap, part / "00000000000000009999.snapshot")
    r = report_of(check_partition_companions(str(part), deep=False), "snapshot")
    assert "snapshot-beyond-log-end" in {f.code for f in r.findings}


@pytest.mark.parametrize("text,expected", [
    ("0\n2\n0 0\n3 x200\n", {"checkpoint-malformed"}),
    ("0\n3\n0 0\n3 200\n", {"checkpoint-count"}),
    ("1\n1\n0 0\n", {"checkpoint-version"}),
    ("0\n2\n3 0\n0 200\n", {"leader-epoch-not-increasing"}),
])
def test_leader_epoch_checkpoint_damage(part, text, expected):
    (part / "leader-epoch-checkpoint").write_text(text)
    r = report_of(check_partition_companions(str(part), deep=False), "leader-epoch-checkpoint")
    assert {f.code for f in r.findings} == expected
    if "checkpoint-malformed" in expected:
        f = r.findings[0]
        assert f.message == (f"line 4: Malformed line in checkpoint file [{part / 'leader-epoch-checkpoint'}]: "
                             "3 x200") and f.position == 8


def test_leader_epoch_checkpoint_against_the_log(part):
    (part / "leader-epoch-checkpoint").write_text("0\n2\n0 0\n3 210\n")
    assert "leader-epoch-differs" not in codes(check_partition_companions(str(part), deep=False))
    deep = report_of(check_partition_companions(str(part), deep=True), "leader-epoch-checkpoint")
    assert [(f.code, f.first_offset) for f in deep.findings] == [("leader-epoch-differs", 200)]


def test_missing_and_orphan_files(part):
    shutil.copy(idx_path(part), part / "00000000000000001000.index")  # no 1000.log
    idx_path(part).unlink()
    reports = check_partition_companions(str(part), deep=False)
    assert "index-missing" in codes(reports, "index")
    assert "index-log-missing" in codes(reports, "index")


def test_cli_json_and_exit_codes(part, tmp_path):
    result = run_cli("index", "check", "--format", "json", part / "00000000000000000000.log")
    doc = json.loads(result.stdout)
    assert doc["status"] == "ok" and result.exit_code == 0
    assert sorted(f["kind"] for f in doc["files"]) == ["index", "snapshot", "timeindex", "txnindex"] or \
        sorted(f["kind"] for f in doc["files"]) == ["index", "timeindex", "txnindex"]
    assert run_cli("index", "check", tmp_path / "nope").exit_code == 2
    assert run_cli("index", "check").exit_code == 2
    with open(idx_path(part), "ab") as f:
        f.write(b"\x01")
    result = run_cli("index", "check", "--format", "json", part)
    doc = json.loads(result.stdout)
    assert result.exit_code == 1 and doc["status"] == "findings"
    bad = [f for f in doc["files"] if f["status"] == "findings"]
    assert bad[0]["findings"][0]["code"] == "index-length-invalid"


def test_log_directory_checkpoints(tmp_path, part):
    logdir = part.parent
    (logdir / "replication-offset-checkpoint").write_text("0\n2\ntopic 0 406\ntopic 1\n")
    (logdir / "recovery-point-offset-checkpoint").write_text("0\n1\ntopic 0 406\n")
    (part / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n")
    reports = check_paths([str(logdir)], deep=False)
    by = {os.path.basename(r.path): {f.code for f in r.findings} for r in reports}
    assert by["replication-offset-checkpoint"] == {"checkpoint-malformed"}
    assert by["recovery-point-offset-checkpoint"] == set()
    assert by["partition.metadata"] == {"partition-metadata-topic-id"}  # the zero UUID, as Kafka refuses it
    result = run_cli("dump", logdir / "recovery-point-offset-checkpoint")
    assert result.stdout.splitlines()[1:] == [
        "Offset checkpoint (recovery point per partition (offset up to which the log was flushed)) version: 0 "
        "entries: 1", "topic: topic partition: 0 offset: 406"]


@pytest.mark.parametrize("name", ["00000000000000000000.index", "00000000000000000000.timeindex",
                                  "00000000000000000000.txnindex", "00000000000000000406.snapshot",
                                  "leader-epoch-checkpoint"])
def test_random_bytes_never_crash(part, name, in_dir):
    rng = random.Random(name)
    in_dir(part)
    for trial in range(25):
        n = rng.choice([0, 1, 7, 8, 12, 33, 34, 46, 100, 1000])
        (part / name).write_bytes(rng.randbytes(n))
        for deep in (False, True):
            reports = check_partition_companions(str(part), deep=deep)
            assert reports
        for args in ([name], ["--verify-index-only", name], ["--index-sanity-check", name]):
            result = run_cli("dump", *args)
            assert result.exit_code in (0, 1, 2), result.output
            assert "Traceback" not in result.output
        result = run_cli("index", "check", "--deep", ".")
        assert result.exit_code in (0, 1, 2)
        for seek in (["--from-offset", "205"], ["--from-time", str(T0 + 20005)]):  # batch 20: T0+20000..20009
            result = run_cli("dump", "--deep-iteration", *seek, "00000000000000000000.log")
            assert result.exit_code == 0, result.output
            assert "| offset: 205 " in result.stdout  # a damaged index never changes what is found


@pytest.mark.parametrize("suffix", [".deleted", ".cleaned", ".swap"])
def test_a_set_aside_segment_is_checked_with_its_set_aside_indexes(part, tmp_path, suffix):
    """Kafka sets a segment aside with every file of it (LogSegment.changeFileSuffixes: X.log.deleted beside
    X.index.deleted, X.timeindex.deleted, X.txnindex.deleted): named, such a segment is read by its bytes, as dump and verify read it,
    and its indexes under the same name are checked against it -- the same reports as before it was set aside, and an
    index entry past the log's end is found in the set-aside index too."""
    aside = tmp_path / "aside" / "topic-0"
    aside.mkdir(parents=True)
    for name in ("00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
                 "00000000000000000000.txnindex"):
        shutil.copy(part / name, aside / (name + suffix))
    log = aside / f"00000000000000000000.log{suffix}"
    live = run_cli("index", "check", part / "00000000000000000000.log")
    named = run_cli("index", "check", log)
    assert (named.exit_code, live.exit_code) == (0, 0)
    assert "UNREADABLE" not in named.stdout
    assert named.stdout.replace(str(aside), "D").replace(suffix + " ", " ") == \
        live.stdout.replace(str(part), "D"), named.stdout
    data = bytearray((aside / f"00000000000000000000.index{suffix}").read_bytes())
    rel, _ = struct.unpack_from(">ii", data, 8)
    struct.pack_into(">ii", data, 8, rel, log.stat().st_size + 100)
    (aside / f"00000000000000000000.index{suffix}").write_bytes(bytes(data))
    damaged = run_cli("index", "check", log)
    assert damaged.exit_code == 1 and "index-position-past-end" in damaged.stdout


def test_a_segment_without_a_segment_name_is_checked_by_its_bytes(part, tmp_path):
    """segment.bin (a copy of segment 0): read by its bytes, its base offset that of its first batch; no index is
    kept under its name, so the one finding is the missing index (a warning), never UNREADABLE."""
    shutil.copy(part / "00000000000000000000.log", tmp_path / "segment.bin")
    result = run_cli("index", "check", "--format", "json", tmp_path / "segment.bin")
    doc = json.loads(result.stdout)
    assert result.exit_code == 0 and doc["summary"]["unreadable"] == 0
    assert [(f["kind"], f["codes"]) for f in doc["files"]] == [("index", {"index-missing": 1})]
