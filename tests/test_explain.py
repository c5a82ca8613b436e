"""``kdump explain``: every batch of the corpus explained field by field gives Kafka's own view of it (the
``.log.json`` files), its leaves tile its bytes on disk exactly, and damaged corpus files name their broken field
with the rule (the read layer's damage model, framing's rules)."""
import json
import os
import re

import pytest
from corpus import CORPUS, case_id, load_json
from support.cli import run_cli

from kdump.format.crc import crc32c
from kdump.explain import explain, leaves
from kdump.format import layout as L

JSON_CASES = sorted(p for p in CORPUS.rglob("*.log") if (p.parent / f"{p.name}.json").exists())
V2_FIELDS = {  # Kafka's name in explain -> where Kafka's view has it
    "baseOffset": "baseOffset", "partitionLeaderEpoch": "partitionLeaderEpoch", "magic": "magic", "crc": "crc",
    "producerId": "producerId", "producerEpoch": "producerEpoch", "baseSequence": "baseSequence",
    "batchLength": ("raw", "batchLength"), "attributes": ("raw", "attributes"),
    "lastOffsetDelta": ("raw", "lastOffsetDelta"), "baseTimestamp": ("raw", "baseTimestamp"),
    "maxTimestamp": ("raw", "maxTimestamp"), "recordsCount": ("raw", "recordsCount"),
}
CRC_MISMATCH = CORPUS / "kafka-generated/corrupt/v2-crc-mismatch/00000000000000000000.log"
BAD_LENGTH = CORPUS / "kafka-generated/corrupt/v2-bad-length-field/00000000000000000000.log"
BEYOND_EOF = CORPUS / "kafka-generated/corrupt/v2-length-beyond-eof/00000000000000000000.log"
TXN = CORPUS / "kafka-generated/v2-transactional/00000000000000000000.log"


def child(node, name):
    return node.child(name)


def fields_of(node):
    return {c.name: c for c in node.children}


def hexed(node):
    return node.value  # a Bytes field's value is its hex (None: null)


def tiles(node):
    pos = node.start
    for leaf in leaves(node):
        assert leaf.start == pos, (node.start, leaf.name, leaf.start, pos)
        pos = leaf.end
    assert pos == node.end


def check_v2(entry, batch):
    by = fields_of(entry)
    for name, key in V2_FIELDS.items():
        want = batch[key[0]][key[1]] if isinstance(key, tuple) else batch[key]
        assert by[name].value == want, name
    if not batch["valid"]:
        return
    log_append = by["attributes"].value & L.V2_TIMESTAMP_TYPE_MASK
    got = []
    for rec in by["records"].children or []:
        f = fields_of(rec)
        got.append({"offset": rec.info["offset"],
                    "timestamp": by["maxTimestamp"].value if log_append else rec.info["timestamp"],
                    "key": hexed(f["key"]), "value": hexed(f["value"]),
                    "headers": [{"key": bytes.fromhex(h.children[1].value).decode(), "value": h.children[3].value}
                                for h in f["headers"].children],
                    "sizeInBytes": rec.length})
    assert got == [{k: r[k] for k in ("offset", "timestamp", "key", "value", "headers", "sizeInBytes")}
                   for r in batch["records"]]
    assert all(r.decompressed == bool(by["attributes"].value & L.V2_CODEC_MASK) for r in by["records"].children or [])


def check_legacy(entry, batch):
    by = fields_of(entry)
    assert (by["offset"].value, by["crc"].value, by["magic"].value) == \
        (batch["lastOffset"], batch["crc"], batch["magic"])
    assert {k: by[k].value for k in batch["raw"]} == batch["raw"]
    if not batch["valid"]:
        return
    inner = by["value"].children
    if inner is None:  # a plain message is its own record
        got = [{"offset": by["offset"].value, "key": hexed(by["key"]), "value": hexed(by["value"]),
                "legacyCrc": by["crc"].value, "sizeInBytes": entry.length}]
    else:
        got = [{"offset": m.info["absoluteOffset"], "key": hexed(m.child("key")), "value": hexed(m.child("value")),
                "legacyCrc": m.child("crc").value, "sizeInBytes": m.length} for m in inner]
        assert all(m.decompressed for m in inner)
    assert got == [{k: r[k] for k in ("offset", "key", "value", "legacyCrc", "sizeInBytes")}
                   for r in batch["records"]]


@pytest.mark.parametrize("path", JSON_CASES, ids=case_id)
def test_every_corpus_batch_explains_as_kafka_reads_it(path):
    kafka = load_json(path)["batches"]
    if not kafka:
        return  # (fetch-truncated-mid-message: no whole entry; test_a_cut_entry_is_said below)
    got = explain(path, count=len(kafka), records=True)
    assert [e.start for e in got.entries] == [b["position"] for b in kafka]
    for entry, batch in zip(got.entries, kafka, strict=True):
        assert entry.length == batch["size"]
        tiles(entry)
        (check_v2 if batch["magic"] == 2 else check_legacy)(entry, batch)
        assert ("firstProblem" in entry.info) == (not batch["valid"]), entry.start


def test_the_crc_field_shows_stored_computed_and_the_bytes_it_covers():
    batch = next(b for b in load_json(CRC_MISMATCH)["batches"] if not b["crcValid"])
    (entry,) = explain(CRC_MISMATCH, position=batch["position"]).entries
    crc = entry.child("crc")
    data = CRC_MISMATCH.read_bytes()
    start, end = batch["position"] + 21, batch["position"] + batch["size"]  # spec §3.4: attributes .. end
    assert crc.info["crc"] == {"stored": batch["crc"], "computed": crc32c(data[start:end]), "valid": False,
                               "covers": {"start": start, "end": end}, "function": "CRC-32C"}
    assert entry.info["firstProblem"]["field"] == "crc"
    assert entry.info["damagedArea"]["code"] == "crc-mismatch"  # the read layer's damage model says it


def test_a_size_below_the_minimum_is_the_first_broken_field():
    stop = load_json(BAD_LENGTH)["totals"]["validEnd"]  # Kafka: CorruptRecordException at this position
    (entry,) = explain(BAD_LENGTH, position=stop).entries
    assert entry.info["firstProblem"]["field"] == "batchLength"
    assert entry.info["firstProblem"]["code"] == "size-below-minimum"
    tiles(entry)


def test_a_size_past_the_end_of_the_file_says_where():
    size = BEYOND_EOF.stat().st_size
    at = load_json(BEYOND_EOF)["totals"]["validEnd"]
    (entry,) = explain(BEYOND_EOF, position=at).entries
    length = entry.child("batchLength")
    assert length.info["entryEnd"] == at + L.LOG_OVERHEAD + length.value > size
    assert length.info["fileEnd"] == size
    assert entry.info["firstProblem"]["field"] == "batchLength"
    assert entry.info["damagedArea"]["start"] == at


def test_a_header_rule_marks_its_field(tmp_path):
    """An unknown codec id (V2_HEADER_RULES' codec-invalid) marks the attributes, with the CRC made to match."""
    data = bytearray(TXN.read_bytes()[:527])  # the first batch (Kafka's view: size 527)
    data[22] |= 0x07  # codec 7
    data[17:21] = crc32c(bytes(data[21:])).to_bytes(4, "big")
    bad = tmp_path / "00000000000000000000.log"
    bad.write_bytes(bytes(data))
    (entry,) = explain(bad).entries
    problem = entry.child("attributes").info["problem"]
    assert problem["code"] == "codec-invalid" and "unknown compression codec id 7" in problem["message"]
    assert entry.info["firstProblem"]["field"] == "attributes"


def test_a_cut_entry_is_said():
    path = CORPUS / "broker-written/fetch-truncated-mid-message/00000000000000000262.log"
    (entry,) = explain(path).entries
    tiles(entry)
    assert "problem" in next(leaf for leaf in leaves(entry) if "problem" in leaf.info).info


def test_varints_show_raw_unsigned_and_zigzag():
    (entry,) = explain(TXN, records=True).entries
    record = entry.child("records").children[2]  # Kafka's view: record 2 has a null value
    value_length = record.child("valueLength")
    assert value_length.info == {"raw": "01", "unsigned": 1, "zigzag": -1}
    assert value_length.value == -1 and record.child("value").value is None


def test_cli_json_is_the_tree_and_text_the_annotated_view():
    result = run_cli("explain", "--format", "json", "--records", TXN)
    assert result.exit_code == 0, result.stderr
    doc = json.loads(result.stdout)
    (entry,) = doc["entries"]
    assert [c["name"] for c in entry["children"]][:13] == list(L.V2_BATCH.names[:13])
    assert entry["children"][5]["meaning"] == "codec none, CreateTime, transactional, not control"
    text = run_cli("explain", TXN).stdout
    assert "attributes" in text and "0x0010: codec none, CreateTime, transactional, not control" in text


def test_the_json_validates_against_its_schema():
    from jsonschema import Draft202012Validator
    schema = json.loads((CORPUS.parent.parent / "docs/schemas/explain.schema.json").read_text())
    validator = Draft202012Validator(schema)
    for args in (("--records", TXN), ("--records", "--count", 3, CORPUS / "kafka-generated/v1-gzip-createtime"
                                       / "00000000000000000000.log"), ("--position", 509, CRC_MISMATCH),
                 ("--position", 219, BAD_LENGTH)):
        doc = json.loads(run_cli("explain", "--format", "json", *args).stdout)
        assert [e.message for e in validator.iter_errors(doc)] == []


def test_cli_offset_picks_the_batch_holding_it():
    kafka = load_json(TXN)["batches"]
    batch = kafka[3]
    doc = json.loads(run_cli("explain", "--format", "json", "--offset", batch["lastOffset"], TXN).stdout)
    assert doc["entries"][0]["start"] == batch["position"]


def test_cli_exit_codes():
    assert run_cli("explain", "--position", 509, CRC_MISMATCH).exit_code == 1  # a damaged batch
    outside = run_cli("explain", "--position", 10**9, TXN)
    assert outside.exit_code == 2 and "outside the file" in outside.stderr
    assert run_cli("explain", "--position", 0, "--offset", 0, TXN).exit_code == 2


@pytest.mark.parametrize("path", [TXN, CORPUS / "kafka-generated/v1-gzip-createtime/00000000000000000000.log",
                                  CORPUS / "kafka-generated/v2-lz4/00000000000000000000.log",
                                  CORPUS / "kafka-generated/v0-none/00000000000000000000.log"], ids=case_id)
def test_damaged_bytes_explain_without_a_crash_and_still_tile(path, tmp_path):
    """Every byte of the first entry's first 80 set to 0xFF in turn, and the entry cut short: explain says what it
    finds (never an exception) and its leaves still tile what the file holds of the entry."""
    data = path.read_bytes()
    size = load_json(path)["batches"][0]["size"]
    bad = tmp_path / "00000000000000000000.log"
    cases = [data[:cut] for cut in (13, 17, 40, 61, size - 1)]
    for at in range(min(80, size)):
        mutated = bytearray(data[:size])
        mutated[at] = 0xFF if mutated[at] != 0xFF else 0x00
        cases.append(bytes(mutated))
    for case in cases:
        bad.write_bytes(case)
        (entry,) = explain(bad, records=True).entries
        tiles(entry)
        assert entry.end <= len(case)


def _kafka_pairs(dumplog, first: str, second: str):
    """(first, second) of each line of Kafka's DumpLogSegments output for an index file."""
    import re
    return [(int(m[1]), int(m[2])) for m in re.finditer(rf"{first}: (-?\d+) {second}: (-?\d+)", dumplog.read_text())]


@pytest.mark.parametrize("path", [p for p in sorted(CORPUS.rglob("*.index")) + sorted(CORPUS.rglob("*.timeindex"))
                                  if (p.parent / f"{p.name}.dumplog.txt").exists()], ids=case_id)
def test_index_entries_explain_as_kafka_dumps_them(path):
    """Kafka prints an index entry's offset absolute (the segment's base offset plus relativeOffset)."""
    dumplog = path.parent / f"{path.name}.dumplog.txt"
    base = int(path.name.split(".")[0])
    if path.suffix == ".index":
        want = _kafka_pairs(dumplog, "offset", "position")
        got = [(base + e.child("relativeOffset").value, e.child("position").value)
               for e in explain(path, count=10**6).entries]
    else:
        want = _kafka_pairs(dumplog, "timestamp", "offset")
        got = [(e.child("timestamp").value, base + e.child("relativeOffset").value)
               for e in explain(path, count=10**6).entries]
    assert want and got[:len(want)] == want  # (Kafka stops at the first unused, zero entry of a preallocated file)


@pytest.mark.parametrize("path", [p for p in sorted(CORPUS.rglob("*.snapshot"))
                                  if (p.parent / f"{p.name}.dumplog.txt").exists()], ids=case_id)
def test_a_producer_snapshot_explains_as_kafka_dumps_it(path):
    import re
    want = [tuple(int(x) for x in m) for m in re.findall(
        r"producerId: (-?\d+) producerEpoch: (-?\d+) coordinatorEpoch: (-?\d+) .*?lastSequence: (-?\d+) "
        r"lastOffset: (-?\d+) offsetDelta: (-?\d+) timestamp: (-?\d+)",
        (path.parent / f"{path.name}.dumplog.txt").read_text())]
    (snap,) = explain(path).entries
    tiles(snap)
    assert snap.child("crc").info["crc"]["valid"] is True and "firstProblem" not in snap.info
    got = [tuple(e.child(n).value for n in ("producerId", "epoch", "coordinatorEpoch", "lastSequence", "lastOffset",
                                              "offsetDelta", "timestamp"))
           for e in snap.child("producerEntries").children]
    assert got == want


def test_a_damaged_snapshot_names_its_crc(tmp_path):
    path = sorted(p for p in CORPUS.rglob("*.snapshot"))[0]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # the last entry's last byte: covered by the CRC-32C
    bad = tmp_path / path.name
    bad.write_bytes(bytes(data))
    result = run_cli("explain", "--format", "json", bad)
    assert result.exit_code == 1
    (snap,) = json.loads(result.stdout)["entries"]
    assert snap["firstProblem"]["field"] == "crc" and snap["children"][1]["crc"]["valid"] is False


CONTROL_CASES = [p for p in sorted(CORPUS.rglob("*.dumplog.txt")) if "isControl: true" in p.read_text()]
CHECKPOINT = CORPUS / "broker-written/kraft-bootstrap-checkpoint/bootstrap.checkpoint"
_BATCH_LINE = re.compile(r"baseOffset: (\d+) .* isControl: (\w+) .* position: (\d+) .* size: (\d+) magic: 2 "
                         r"compresscodec: \w+ crc: (\d+)")
_RECORD_LINE = re.compile(r"\| offset: (\d+) .* keySize: (-?\d+) valueSize: (-?\d+) .*headerKeys: \[[^]]*\] ?(.*)")


def kafka_deep_dump(dumplog):
    """Kafka's deep DumpLogSegments text as [(baseOffset, control, position, size, crc, [(offset, keySize,
    valueSize, what a control record says)])]."""
    batches = []
    for line in dumplog.read_text().splitlines():
        if m := _BATCH_LINE.match(line):
            batches.append((int(m[1]), m[2] == "true", int(m[3]), int(m[4]), int(m[5]), []))
        elif (m := _RECORD_LINE.match(line)) and batches:
            batches[-1][5].append((int(m[1]), int(m[2]), int(m[3]), m[4] if batches[-1][1] else ""))
    return batches


@pytest.mark.parametrize("dumplog", CONTROL_CASES, ids=case_id)
def test_control_records_and_kraft_checkpoints_explain_as_kafka_dumps_them(dumplog):
    log = dumplog.with_name(dumplog.name.removesuffix(".dumplog.txt"))
    kafka = kafka_deep_dump(dumplog)
    got = explain(log, count=10_000, records=True)
    assert got.stop == f"the end of the file at byte {got.file_size}"
    v2 = [e for e in got.entries if e.name == "batch"]  # (the magic 2 batches: the lines read here)
    for entry, (base, control, position, size, crc, records) in zip(v2, kafka, strict=True):
        by = fields_of(entry)
        assert (by["baseOffset"].value, entry.start, entry.length, by["crc"].value) == (base, position, size, crc)
        assert bool(by["attributes"].value & L.V2_CONTROL_MASK) == control
        tiles(entry)
        assert "firstProblem" not in entry.info
        got_records = []
        for rec, kafka_record in zip(by["records"].children, records, strict=True):
            f = fields_of(rec)
            said = rec.info.get("control", "")
            if control:  # the key's fields: its version and the type Kafka names
                version, kind = f["key"].children
                assert (version.name, kind.name) == ("version", "type")
                if kafka_record[3].startswith("controlType: "):  # (the older tool names a LeaderChange's type only)
                    said = f"controlType: {kind.info['meaning']}({kind.value})"
            got_records.append((rec.info["offset"], f["keyLength"].value, f["valueLength"].value, said))
        assert got_records == records


def test_a_kraft_checkpoint_is_explained_from_its_snapshot_header_to_its_footer():
    doc = json.loads(run_cli("explain", "--records", "--count", "9", "--format", "json", CHECKPOINT).stdout)
    controls = [r.get("control", "") for e in doc["entries"] for c in e["children"] if c["name"] == "records"
                for r in c["children"]]
    assert controls[0].startswith("SnapshotHeader ") and controls[-1].startswith("SnapshotFooter ")
    key_type = doc["entries"][0]["children"][-1]["children"][0]["children"][5]["children"][1]
    assert (key_type["name"], key_type["value"], key_type["meaning"]) == ("type", 3, "SNAPSHOT_HEADER")
    by_offset = json.loads(run_cli("explain", "--offset", "2", "--format", "json", CHECKPOINT).stdout)
    assert by_offset["entries"][0]["start"] == kafka_deep_dump(CHECKPOINT.with_name(
        CHECKPOINT.name + ".dumplog.txt"))[2][2]


def _whole_and_valid(path) -> bool:
    """Kafka's view holds every byte of the file, in valid batches."""
    kafka = load_json(path)["batches"]
    return all(b["valid"] for b in kafka) and kafka[-1]["position"] + kafka[-1]["size"] == path.stat().st_size


# one file per (magic, codec) of its first batch (the range walk is the same for every file of one kind)
RANGE_CASES = sorted({(b[0]["magic"], b[0]["codec"]): p for p in reversed(JSON_CASES)
                      if len(b := load_json(p)["batches"]) >= 4 and _whole_and_valid(p)}.values())


@pytest.mark.parametrize("path", RANGE_CASES, ids=case_id)
def test_a_range_of_batches_by_offsets(path):
    kafka = load_json(path)["batches"]
    first, last = kafka[1], kafka[-2]
    # from the batch holding an offset to the one holding another (its first offset: the batch is Kafka's view's)
    doc = json.loads(run_cli("explain", "--format", "json", "--offset", first["lastOffset"], "--to-offset",
                             last["baseOffset"], path).stdout)
    assert [e["start"] for e in doc["entries"]] == [b["position"] for b in kafka[1:-1]]
    assert doc["stop"] is None
    # past the last batch: every batch to the end of the file; --count bounds the range
    doc = json.loads(run_cli("explain", "--format", "json", "--to-offset", kafka[-1]["lastOffset"] + 10**6,
                             path).stdout)
    assert [e["start"] for e in doc["entries"]] == [b["position"] for b in kafka]
    doc = json.loads(run_cli("explain", "--format", "json", "--to-offset", last["lastOffset"], "--count", "2",
                             path).stdout)
    assert [e["start"] for e in doc["entries"]] == [b["position"] for b in kafka[:2]]


def test_a_range_below_its_start_is_a_usage_error():
    result = run_cli("explain", "--offset", 40, "--to-offset", 30, TXN)
    assert result.exit_code == 2 and "--to-offset 30 is below --offset 40" in result.stderr
    index = TXN.with_suffix(".index")
    assert run_cli("explain", "--to-offset", 3, index).exit_code == 2


def test_a_crash_cut_tail_is_marked_but_passes_as_kafkas_tool_passes_it():
    """Kafka's DumpLogSegments reports the last batch cut short as 'invalid bytes at the end' and exits 0 (the corpus
    dump); explain marks the size field that points past the file and exits 0 as well."""
    cut = CORPUS / "kafka-generated/corrupt/v2-truncated-tail/00000000000000000000.log"
    assert "120 invalid bytes at the end" in cut.with_name(cut.name + ".dumplog.txt").read_text()
    at = load_json(cut)["totals"]["validEnd"]
    result = run_cli("explain", "--format", "json", "--to-offset", 2**63 - 1, cut)
    assert result.exit_code == 0, result.stderr
    tail = json.loads(result.stdout)["entries"][-1]
    assert (tail["start"], tail["firstProblem"]["field"], tail["damagedArea"]["fails"]) == (at, "batchLength", False)
    # bytes past the file with valid batches after them are a damaged size field, not a tail: that fails
    assert run_cli("explain", "--position", load_json(BEYOND_EOF)["totals"]["validEnd"], BEYOND_EOF).exit_code == 1


def test_a_failing_entry_is_said_on_stderr_and_a_fifo_is_not_opened(tmp_path):
    result = run_cli("explain", "--position", 509, "--format", "html", "-o", tmp_path / "p.html", CRC_MISMATCH)
    assert result.exit_code == 1
    assert "byte 509: crc-mismatch: " in result.stderr and "first field that breaks a rule: crc at byte 526" \
        in result.stderr  # (the batch at 509: its crc field 17 bytes in, as the v2 header lays it out)
    text = tmp_path / "00000000000000000000.log"
    text.write_bytes(b"operator notes: this is no segment\n" * 20)
    result = run_cli("explain", text)
    assert result.exit_code == 1 and "not-a-kafka-log" in result.stderr
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    result = run_cli("explain", fifo)
    assert result.exit_code == 2 and "not a regular file" in result.stderr


def test_output_to_a_file_is_what_standard_output_shows(tmp_path):
    for fmt in ("text", "json"):
        shown = run_cli("explain", "--records", "--format", fmt, TXN)
        written = run_cli("explain", "--records", "--format", fmt, "-o", tmp_path / f"out.{fmt}", TXN)
        assert written.exit_code == shown.exit_code == 0 and written.stdout == ""
        assert (tmp_path / f"out.{fmt}").read_text() == shown.stdout
    refused = run_cli("explain", "-o", TXN, TXN)  # never over the input, --force or not
    assert refused.exit_code == 2 and "never modifies its input" in refused.stderr
    assert run_cli("explain", "--force", "-o", TXN, TXN).exit_code == 2
