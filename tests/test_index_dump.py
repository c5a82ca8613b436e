"""`kdump dump` on companion files against Kafka's own DumpLogSegments output (the corpus), and where
Kafka's tool dies, what kdump prints instead.

The corpus dumps were made by the Scala tool, run in the file's directory with the bare file name. For
index, time-index and snapshot lines (with batch metadata) the Scala and the newest Java tool print the
same text, so the default and ``--compat scala`` are both compared with it byte for byte.
"""
import base64
import shutil
import uuid

import pytest

from corpus import CORPUS, kafka_died, load_json
from support.cli import run_cli

BROKER = CORPUS / "broker-written"
COMPANIONS = sorted(p for p in BROKER.rglob("*")
                    if p.is_file() and (p.suffix in (".index", ".timeindex", ".snapshot") or p.name == "leader-epoch-checkpoint"))
MODES = {"plain": ([], "dumplog"), "verify": (["--verify-index-only"], "dumplog-verify-index-only"),
         "sanity": (["--index-sanity-check"], "dumplog-index-sanity-check")}
CASES = [(p, m) for p in COMPANIONS for m in MODES
         if (p.parent / f"{p.name}.{MODES[m][1]}.txt").exists()]


def run(in_dir, path, *flags):
    in_dir(path.parent)
    return run_cli("dump", *flags, path.name)


def expected(path, stem):
    out = (path.parent / f"{path.name}.{stem}.txt").read_bytes()
    err = path.parent / f"{path.name}.{stem}.stderr.txt"
    return out, (err.read_bytes() if err.exists() else None)


def test_every_corpus_companion_file_has_a_case():
    kinds = {p.suffix or p.name for p, _ in CASES}
    assert kinds == {".index", ".timeindex", ".snapshot", "leader-epoch-checkpoint"}
    assert len({p for p, _ in CASES}) == len(COMPANIONS) - 1  # all but the 0-byte .index Kafka's tool created


@pytest.mark.parametrize("compat", ["java", "scala"])
@pytest.mark.parametrize("path,mode", CASES, ids=[f"{p.relative_to(CORPUS)}-{m}" for p, m in CASES])
def test_companion_dump_is_kafkas(path, mode, compat, in_dir):
    flags, stem = MODES[mode]
    exp_out, exp_err = expected(path, stem)
    result = run(in_dir, path, "--compat", compat, *flags)
    if kafka_died(exp_err):
        # Kafka printed this much before dying: kdump prints the same, then carries on usefully.
        assert result.stdout_bytes.startswith(exp_out)
        assert result.exit_code == 0, result.stderr
        return
    assert result.stdout_bytes.decode().splitlines() == exp_out.decode().splitlines()
    assert result.stdout_bytes == exp_out
    assert result.stderr_bytes == (exp_err or b"")
    assert result.exit_code == 0


def test_leader_epoch_checkpoint_kafka_dies_kdump_reads_it(in_dir):
    path = BROKER / "consumer-offsets-v2" / "leader-epoch-checkpoint"
    _, err = expected(path, "dumplog")
    assert b"StringIndexOutOfBoundsException" in err  # Kafka's tool cannot even dispatch on the name
    result = run(in_dir, path)
    assert result.stdout == ("Dumping leader-epoch-checkpoint\n"
                             "Leader epoch checkpoint version: 0 entries: 2\n"
                             "epoch: 0 startOffset: 0\n"
                             "epoch: 2 startOffset: 159\n")
    assert path.read_text() == "0\n2\n0 0\n2 159\n"  # the file the lines above restate
    assert result.stderr == "" and result.exit_code == 0


def _not_found_report_from_kafkas_view(case: str, offset: int) -> str:
    """Kafka's report for a time-index offset that is no batch's last offset, from Kafka's view of the log."""
    log = BROKER / case / "00000000000000000000.log"
    batch = next(b for b in load_json(log)["batches"] if b["lastOffset"] >= offset)
    assert batch["baseOffset"] <= offset < batch["lastOffset"]
    return ("The following indexed offsets are not found in the log.\n"
            f"Indexed offset: {offset}, found log offset: {batch['lastOffset']}\n")


@pytest.mark.parametrize("flags,stem", [([], "dumplog"), (["--verify-index-only"], "dumplog-verify-index-only")])
def test_timeindex_whose_offset_index_kafka_had_to_create(flags, stem, in_dir):
    """java-producer-headers-idempotent came without its .index: Kafka's tool printed every entry, then died
    creating the offset index (leaving the 0-byte .index now in the corpus) and never printed its report.
    kdump prints the same entries and the report Kafka lost: entry 70 lies inside batch 69-72."""
    path = BROKER / "java-producer-headers-idempotent" / "00000000000000000000.timeindex"
    exp_out, exp_err = expected(path, stem)
    assert b"Invalid max index size: -1" in exp_err
    result = run(in_dir, path, *flags)
    assert result.stdout_bytes == exp_out
    assert result.stderr == _not_found_report_from_kafkas_view("java-producer-headers-idempotent", 70)
    assert result.exit_code == 0


def test_timeindex_without_its_index_is_verified_by_walking_the_log(tmp_path, in_dir):
    src = BROKER / "java-producer-headers-idempotent"
    for name in ("00000000000000000000.log", "00000000000000000000.timeindex"):
        shutil.copy(src / name, tmp_path / name)
    exp_out, _ = expected(src / "00000000000000000000.timeindex", "dumplog")
    result = run(in_dir, tmp_path / "00000000000000000000.timeindex")
    assert result.stdout_bytes == exp_out
    lines = result.stderr.splitlines()
    assert lines[0].startswith("kdump: 00000000000000000000.timeindex: note: no offset index 00000000000000000000.index")
    assert "\n".join(lines[1:]) + "\n" == _not_found_report_from_kafkas_view("java-producer-headers-idempotent", 70)
    assert result.exit_code == 0
    assert not (tmp_path / "00000000000000000000.index").exists()  # kdump creates nothing (Kafka's tool did)


def test_empty_index_like_kafkas_test(in_dir):
    """DumpLogSegmentsTest.testDumpEmptyIndex: a 0-byte .index prints '<path> is empty.'."""
    path = BROKER / "java-producer-headers-idempotent" / "00000000000000000000.index"
    assert path.stat().st_size == 0
    result = run(in_dir, path)
    assert result.stdout == f"Dumping {path.name}\n{path.name} is empty.\n"
    assert result.exit_code == 0


def test_index_without_its_log_is_printed_and_exit_2(tmp_path, in_dir):
    src = BROKER / "consumer-offsets-v2" / "00000000000000000000.index"
    shutil.copy(src, tmp_path / src.name)
    result = run(in_dir, tmp_path / src.name)
    exp_out, _ = expected(src, "dumplog")
    assert result.stdout_bytes == exp_out  # the entries, unverified
    assert "00000000000000000000.log beside it" in result.stderr
    assert result.exit_code == 2


def test_snapshot_line_without_batch_metadata_java_and_scala(tmp_path, in_dir):
    """Spec §2.9: without batch metadata the Scala tool ends the line with a space, the Java tool does not;
    firstSequence is lastSequence - offsetDelta with Java's int wrap."""
    from kdump.read.snapshot import ProducerEntry, encode_snapshot
    entries = [ProducerEntry(7, 1, -1, -1, 0, 1700000000000, 5, 42),
               ProducerEntry(8, 0, 2, 100, 5, 1700000000001, -1, -1)]
    (tmp_path / "00000000000000000101.snapshot").write_bytes(encode_snapshot(entries))
    path = tmp_path / "00000000000000000101.snapshot"
    java = run(in_dir, path).stdout.splitlines()
    scala = run(in_dir, path, "--compat", "scala").stdout.splitlines()
    first = ("producerId: 7 producerEpoch: 1 coordinatorEpoch: 5 currentTxnFirstOffset: OptionalLong[42] "
             "lastTimestamp: 1700000000000")
    assert java[1] == first and scala[1] == first + " "
    second = ("producerId: 8 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty "
              "lastTimestamp: 1700000000001 firstSequence: 2147483645 lastSequence: 2 lastOffset: 100 offsetDelta: 5 "
              "timestamp: 1700000000001")
    assert java[2] == scala[2] == second


def test_corrupt_snapshot_message_is_kafkas(tmp_path, in_dir):
    src = BROKER / "producer-snapshot-3-producers" / "00000000000000094751.snapshot"
    data = bytearray(src.read_bytes())
    data[20] ^= 0xFF
    (tmp_path / src.name).write_bytes(bytes(data))
    result = run(in_dir, tmp_path / src.name)
    assert result.stdout == f"Dumping {src.name}\n"  # Kafka prints no entry of a corrupt snapshot either
    assert "Snapshot is corrupt (CRC is no longer valid). Stored crc: 2982443250. Computed crc: " in result.stderr
    assert result.exit_code == 1


def test_directory_dump_with_companions(tmp_path):
    part = tmp_path / "__consumer_offsets-15"
    shutil.copytree(BROKER / "consumer-offsets-v2", part,
                    ignore=shutil.ignore_patterns("*.txt", "*.json"))
    (part / "partition.metadata").write_text("version: 0\ntopic_id: 3oRlSdXtQF2Z4LoyqHgZ2A\n")
    result = run_cli("dump", "--companions", part)
    dumped = [line.split("/")[-1] for line in result.stdout.splitlines() if line.startswith("Dumping ")]
    assert dumped == ["00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
                      "leader-epoch-checkpoint", "partition.metadata"]
    topic_uuid = uuid.UUID(bytes=base64.urlsafe_b64decode("3oRlSdXtQF2Z4LoyqHgZ2A=="))
    assert f"Partition metadata version: 0\ntopicId: 3oRlSdXtQF2Z4LoyqHgZ2A uuid: {topic_uuid}\n" in result.stdout
    assert result.exit_code == 0, result.stderr
    # without --companions the directory dump gives the segments; Kafka's checkpoint and metadata files are known
    # kinds, passed over quietly (issue 11 point 5: they were "Ignoring unknown file" before)
    plain = run_cli("dump", part)
    assert [line.split("/")[-1] for line in plain.stdout.splitlines() if line.startswith("Dumping ")] == [
        "00000000000000000000.log"]
    assert "Ignoring unknown file" not in plain.stderr


def test_json_lines_for_companions(in_dir):
    import json
    path = BROKER / "consumer-offsets-v2" / "00000000000000000000.index"
    result = run(in_dir, path, "--format", "json")
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert objs[0] == {"type": "entry", "path": path.name, "kind": "index", "offset": 49, "position": 4131}
    assert [o["offset"] for o in objs] == [49, 100, 151, 198, 249]


def test_index_dump_subcommand_dumps_a_segments_companions(in_dir):
    in_dir(BROKER / "kraft-metadata-log")
    result = run_cli("index", "dump", "00000000000000000000.log")
    assert result.exit_code == 0
    expected_out = b"".join((BROKER / "kraft-metadata-log" / f"00000000000000000000.{s}.dumplog.txt").read_bytes()
                            for s in ("index", "timeindex"))
    assert result.stdout_bytes == expected_out
