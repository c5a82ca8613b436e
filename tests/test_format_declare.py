"""The named field layouts (kdump/format/declare.py, declared in layout.py and index_layout.py): walked over every
batch of the corpus they give Kafka's own view of it (the ``.log.json`` files: field values read by Kafka's
``FileRecords`` and deep iteration); the readers' structs and offsets, and the compiled readers' C constants and
positions, agree with them."""
import struct

import pytest
from corpus import CORPUS, case_id, load_json

from kdump import codec
from kdump.format import index_layout as IL
from kdump.format import layout as L
from kdump.format.declare import FieldError, Int, Layout, Varint, fields
from kdump.format.legacy import LegacyRun
from kdump.format.v2 import RecordBatch
from kdump.read.segment import SegmentReader

JSON_CASES = sorted(p for p in CORPUS.rglob("*.log") if (p.parent / f"{p.name}.json").exists())
LIMIT = 1 << 28
V2_HEADER_KEYS = {  # declaration field -> key of Kafka's view (raw: read straight from the bytes)
    "baseOffset": "baseOffset", "partitionLeaderEpoch": "partitionLeaderEpoch", "magic": "magic", "crc": "crc",
    "producerId": "producerId", "producerEpoch": "producerEpoch", "baseSequence": "baseSequence",
    "batchLength": ("raw", "batchLength"), "attributes": ("raw", "attributes"),
    "lastOffsetDelta": ("raw", "lastOffsetDelta"), "baseTimestamp": ("raw", "baseTimestamp"),
    "maxTimestamp": ("raw", "maxTimestamp"), "recordsCount": ("raw", "recordsCount"),
}


def kafka_value(batch, key):
    return batch[key[0]][key[1]] if isinstance(key, tuple) else batch[key]


def walk(layout, buf, pos, end=None):
    return {f.name: f for f in fields(layout, buf, pos, end)}


def hexed(value):
    return None if value is None else value.hex()


def check_v2_records(batch, head, data):
    """Every record of a magic-2 batch walked with V2_RECORD (in the decompressed payload if compressed)."""
    records = head["records"].value
    codec_id = head["attributes"].value & L.V2_CODEC_MASK
    payload = records if codec_id == 0 else codec.decompress(codec_id, records, magic=2, limit=LIMIT)
    pos, got = 0, []
    for _ in range(head["recordsCount"].value):
        rec = walk(L.V2_RECORD, payload, pos)
        length = rec["length"]
        pos = length.start + length.length + length.value
        assert rec["headers"].start + rec["headers"].length == pos  # the fields take what the length says
        log_append = head["attributes"].value & L.V2_TIMESTAMP_TYPE_MASK
        got.append({
            "offset": head["baseOffset"].value + rec["offsetDelta"].value,
            "timestamp": head["maxTimestamp"].value if log_append
            else head["baseTimestamp"].value + rec["timestampDelta"].value,
            "key": hexed(rec["key"].value), "value": hexed(rec["value"].value),
            "headers": [{"key": h[1].value.decode(), "value": hexed(h[3].value)} for h in rec["headers"].value],
            "sizeInBytes": pos - length.start,
        })
    assert pos == len(payload)
    want = [{k: r[k] for k in ("offset", "timestamp", "key", "value", "headers", "sizeInBytes")}
            for r in batch["records"]]
    assert got == want


def legacy_layout(buf, pos):
    return L.LEGACY_MESSAGES[buf[pos + L.MAGIC_AT]]


def check_legacy(batch, msg):
    """A magic 0/1 entry: a plain message is its own record; a wrapper's inner messages, walked in its decompressed
    value, take their offsets as Kafka's deep iteration gives them (magic 1: relative to the wrapper's offset)."""
    codec_id = msg["attributes"].value & L.LEGACY_CODEC_MASK
    if codec_id == 0:
        inner = [msg]
    else:
        data = codec.decompress(codec_id, msg["value"].value, magic=msg["magic"].value, limit=LIMIT)
        inner, pos = [], 0
        while pos < len(data):
            inner.append(walk(legacy_layout(data, pos), data, pos))
            pos = inner[-1]["value"].start + inner[-1]["value"].length
    last = inner[-1]["offset"].value
    base = msg["offset"].value - last if msg["magic"].value > 0 and codec_id else 0
    got = [{"offset": base + m["offset"].value, "key": hexed(m["key"].value), "value": hexed(m["value"].value),
            "legacyCrc": m["crc"].value, "legacyMagic": m["magic"].value,
            "sizeInBytes": L.LOG_OVERHEAD + m["messageSize"].value} for m in inner]
    want = [{k: r[k] for k in ("offset", "key", "value", "legacyCrc", "legacyMagic", "sizeInBytes")}
            for r in batch["records"]]
    assert got == want


@pytest.mark.parametrize("path", JSON_CASES, ids=case_id)
def test_declarations_walked_over_the_corpus_give_kafkas_view(path):
    data = path.read_bytes()
    kafka = load_json(path)["batches"]
    assert kafka or path.parent.name == "fetch-truncated-mid-message"
    for batch in kafka:
        pos = batch["position"]
        at = f"batch at {pos}"
        if batch["magic"] == 2:
            head = walk(L.V2_BATCH, data, pos)
            for name, key in V2_HEADER_KEYS.items():
                assert head[name].value == kafka_value(batch, key), (at, name)
            assert head["records"].start + head["records"].length - pos == batch["size"], at
            if batch["valid"]:
                check_v2_records(batch, head, data)
        else:
            msg = walk(legacy_layout(data, pos), data, pos)
            assert msg["value"].start + msg["value"].length - pos == batch["size"], at
            assert (msg["offset"].value, msg["crc"].value, msg["magic"].value) == \
                (batch["lastOffset"], batch["crc"], batch["magic"]), at
            assert {k: msg[k].value for k in batch["raw"]} == batch["raw"], at
            if batch["valid"]:
                check_legacy(batch, msg)


def test_a_record_header_walks_with_kafkas_names():
    path = CORPUS / "kafka-generated/v2-transactional/00000000000000000000.log"
    head = walk(L.V2_BATCH, path.read_bytes(), 0)
    rec = walk(L.V2_RECORD, head["records"].value, 0)
    rec = walk(L.V2_RECORD, head["records"].value, rec["length"].start + rec["length"].length + rec["length"].value)
    (header,) = rec["headers"].value
    assert [(f.name, f.value) for f in header] == [
        ("headerKeyLength", 8), ("headerKey", b"trace-id"), ("headerValueLength", 16),
        ("headerValue", bytes.fromhex(load_json(path)["batches"][0]["records"][1]["headers"][0]["value"]))]
    assert header[0].raw == bytes([16])  # zig-zag: 8 is written 16


def test_every_field_has_a_kafka_name_and_the_declared_sizes():
    assert L.V2_BATCH.names[:13] == (
        "baseOffset", "batchLength", "partitionLeaderEpoch", "magic", "crc", "attributes", "lastOffsetDelta",
        "baseTimestamp", "maxTimestamp", "producerId", "producerEpoch", "baseSequence", "recordsCount")
    assert L.V2_RECORD.names == ("length", "attributes", "timestampDelta", "offsetDelta", "keyLength", "key",
                                 "valueLength", "value", "headersCount", "headers")
    assert L.LEGACY_V1_MESSAGE.names == ("offset", "messageSize", "crc", "magic", "attributes", "timestamp",
                                         "keyLength", "key", "valueLength", "value")
    assert L.LEGACY_V0_MESSAGE.names == tuple(n for n in L.LEGACY_V1_MESSAGE.names if n != "timestamp")
    # sizes from the spec (§3.2, §3.4, §5): the 61-byte v2 header, 14/22-byte legacy minimums, index entries
    assert (L.V2_RECORD_BATCH_OVERHEAD, L.LEGACY_RECORD_OVERHEAD_V0, L.LEGACY_RECORD_OVERHEAD_V1) == (61, 14, 22)
    assert (IL.OFFSET_INDEX.size, IL.TIME_INDEX.size, IL.TXN_INDEX.size, IL.SNAPSHOT_ENTRY_LAYOUT.size) == \
        (8, 12, 34, 46)
    assert L.V2_RECORD["timestampDelta"].max_bytes == 10 and L.V2_RECORD["offsetDelta"].max_bytes == 5


def test_index_entries_walk_as_their_readers_read_them():
    idx = next(CORPUS.rglob("*.index"))
    data = idx.read_bytes()
    for pos in range(0, len(data) - len(data) % IL.OFFSET_INDEX.size, IL.OFFSET_INDEX.size):
        entry = [f.value for f in fields(IL.OFFSET_INDEX, data, pos)]
        assert entry == list(struct.unpack_from(">ii", data, pos))  # Kafka: relativeOffset int32, position int32


def test_a_producer_snapshot_walks_with_its_entries():
    snap = next(CORPUS.rglob("*.snapshot"))
    data = snap.read_bytes()
    got = walk(IL.SNAPSHOT, data, 0)
    assert got["producerEntries"].start + got["producerEntries"].length == len(data)
    assert len(got["producerEntries"].value) == got["producerEntriesCount"].value
    from kdump.read.snapshot import read_snapshot  # the reader, on the structs derived from the same declaration
    entries = read_snapshot(snap).entries
    assert [e[0].value for e in got["producerEntries"].value] == [e.producer_id for e in entries]


def test_a_field_past_the_end_names_itself():
    data = (CORPUS / "kafka-generated/v2-none/00000000000000000000.log").read_bytes()[:40]
    walked = []
    with pytest.raises(FieldError) as e:
        walked.extend(f.name for f in fields(L.V2_BATCH, data, 0))  # (extend keeps what came before the error)
    assert (e.value.field, e.value.position) == ("maxTimestamp", 35)  # 8 bytes at 35, of 40
    assert walked == list(L.V2_BATCH.names[:8])


def test_a_varint_longer_than_declared_is_refused():
    with pytest.raises(FieldError) as e:
        list(fields(Layout("t", Varint("n")), bytes([0x80] * 6)))
    assert (e.value.code, e.value.field) == ("varint-too-long", "n")


def test_offsets_exist_only_before_variable_fields():
    with pytest.raises(ValueError):
        L.V2_RECORD.offset("offsetDelta")
    with pytest.raises(ValueError):
        Layout("t", Int("a", 2), Varint("n")).struct()
    assert L.LEGACY_V1_MESSAGE.offset("keyLength") == 26


@pytest.mark.usefixtures("backend")
@pytest.mark.parametrize("path", [p for p in JSON_CASES if "corrupt" not in p.parts], ids=case_id)
def test_the_readers_find_keys_and_values_where_the_declarations_put_them(path):
    """Both backends (the compiled readers' own C offsets included: runs of plain messages are read by
    ``_plain.pxd``'s read_plain): every record's key and value position in the reader's columns is the walked
    declaration's, shifted by one base per batch or run."""
    data = path.read_bytes()
    with SegmentReader(path) as reader:
        for batch in reader.runs():
            if isinstance(batch, LegacyRun):
                cols = batch.columns  # (a property of a run)
            elif batch.codec_id:
                continue  # compressed records are not in the file's bytes
            else:
                cols = batch.columns(LIMIT)
            pos, walked = batch.position, []
            if isinstance(batch, RecordBatch):
                head = walk(L.V2_BATCH, data, pos)
                pos = head["records"].start
                for _ in range(head["recordsCount"].value):
                    walked.append(walk(L.V2_RECORD, data, pos))
                    pos = walked[-1]["length"].start + walked[-1]["length"].length + walked[-1]["length"].value
            else:
                end = batch.position + batch.size
                while pos < end:
                    walked.append(walk(legacy_layout(data, pos), data, pos))
                    pos = walked[-1]["value"].start + walked[-1]["value"].length
            assert len(walked) == cols.count, batch.position
            shifts = {cols.key_pos[i] - w["key"].start for i, w in enumerate(walked) if cols.key_len[i] >= 0}
            shifts |= {cols.value_pos[i] - w["value"].start for i, w in enumerate(walked) if cols.value_len[i] >= 0}
            assert len(shifts) <= 1, batch.position
            assert cols.key_len == [w["key"].length if w["key"].value is not None else -1 for w in walked]
            assert cols.value_len == [w["value"].length if w["value"].value is not None else -1 for w in walked]


def test_the_compiled_readers_constants_are_the_declarations():
    pytest.importorskip("kdump.format._legacy")
    from kdump.format._encode import ENCODE_LAYOUT
    from kdump.format._legacy import PLAIN_LAYOUT
    v0, v1 = L.LEGACY_V0_MESSAGE, L.LEGACY_V1_MESSAGE
    body = v0.end("messageSize")
    declared = {
        "LOG_OVERHEAD": L.LOG_ENTRY.end("size"), "CRC_START": v0.offset("magic") - body,
        "SIZE_AT": v0.offset("messageSize"), "BODY_AT": body, "MAGIC_AT": v0.offset("magic") - body,
        "ATTRIBUTES_AT": v0.offset("attributes") - body, "TIMESTAMP_AT": v1.offset("timestamp") - body,
        "V0_KEY_LENGTH_AT": v0.offset("keyLength") - body, "V1_KEY_LENGTH_AT": v1.offset("keyLength") - body,
        "V0_MIN_SIZE": v0.min_size - body, "V1_MIN_SIZE": v1.min_size - body, "LENGTH_SIZE": v0["keyLength"].size,
        "CODEC_MASK": v0["attributes"].flags["compression"],
        "TIMESTAMP_TYPE_MASK": v0["attributes"].flags["timestampType"],
    }
    assert declared == PLAIN_LAYOUT
    declared = {"CANON_HEAD": L.CANONICAL_RECORD.size, "LOG_OVERHEAD": L.LOG_ENTRY.end("size"),
                "TIMESTAMP_TYPE_MASK": v1["attributes"].flags["timestampType"]}
    assert declared == ENCODE_LAYOUT


def test_the_layouts_doc_is_generated_from_the_declarations():
    """docs/layouts.md is what tools/gen_layouts_doc.py writes from the declarations today (run it after a change)."""
    import importlib.util
    root = CORPUS.parent.parent
    spec = importlib.util.spec_from_file_location("gen_layouts_doc", root / "tools" / "gen_layouts_doc.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (root / "docs" / "layouts.md").read_text() == gen.text()
    assert "| `records` | 61 | bytes, to where batchLength says the structure ends | batchLength - 49 |" in gen.text()
