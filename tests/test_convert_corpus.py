"""kdump convert against Kafka's own conversions of the corpus (fixtures/convert/, see its PROVENANCE.md).

For every ``NNN.log.to-magic-N`` Kafka wrote, kdump's conversion of the same source must have the same
batches and records field by field (``.to-magic-N.json``), the same codec-independent header bytes and
decompressed payloads (``.to-magic-N.payload.txt``), and the same bytes wherever the codec is none or
gzip (kdump's gzip reproduces Java's; snappy and lz4 libraries differ from Java's in their compressed
bytes only). Where Kafka refused (``.to-magic-N.error.txt``) kdump refuses for the same reason, and with
``--recompress zstd=lz4`` it converts what Kafka's ``.skip-zstd`` reference holds plus the zstd batches.

kafka-python's reader (test-only dependency) reads every output back identically to kdump's reader.
"""
from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path

import pytest
from kafka.record import MemoryRecords

from corpus import CODECS, CORPUS, FIXTURES, batch_view, record_view
from kdump import codec as kcodec
from kdump.convert import ConversionRefused, ConvertOptions, convert_segment
from kdump.read.segment import SegmentReader

pytestmark = pytest.mark.usefixtures("backend")  # the record decoder runs on the compiled and the pure path

CONVERT = FIXTURES / "convert"
LIMIT = 1 << 28
JAVA_DEPENDENT = {"snappy", "lz4"}  # codecs whose compressed bytes depend on the compressor library

REFERENCES = sorted(CONVERT.rglob("*.to-magic-[012]"))
ERRORS = sorted(CONVERT.rglob("*.to-magic-[012].error.txt"))
SKIP_ZSTD = sorted(CONVERT.rglob("*.to-magic-[01].skip-zstd"))


def ref_id(path: Path) -> str:
    return str(path.relative_to(CONVERT))


def source_of(ref: Path) -> Path:
    return CORPUS / ref.relative_to(CONVERT).parent / ref.name.split(".to-magic-")[0]


def magic_of(ref: Path) -> int:
    return int(ref.name.split(".to-magic-")[1][0])


# --- views of a segment ---------------------------------------------------------------------------------
def read_batches(path):
    """[(batch, records)] via kdump's reader; the file must end cleanly."""
    with SegmentReader(path) as reader:
        out = [(b, list(b.records(LIMIT))) for b in reader]
        assert reader.tail.kind == "end", reader.tail
    return out


def payload_line(batch) -> str:
    """One ``.payload.txt`` line without pos/size, computed independently of the converter:
    v2 stable = header bytes [0,8)+[12,17)+[21,61); legacy uncompressed = the whole entry; legacy wrapper =
    offset + magic + attributes + timestamp (v1) + key length; payload = the decompressed records."""
    entry = batch.entry_bytes()
    if batch.magic == 2:
        stable = entry[0:8] + entry[12:17] + entry[21:61]
        if batch.records_count:
            buf, start, end = batch.records_payload(LIMIT)
            payload = bytes(buf[start:end])
        else:
            payload = b""
    elif batch.codec_id == 0:
        stable, payload = entry, b""
    else:
        m = batch.message
        key_at = 14 if m.magic == 1 else 6
        stable = struct.pack(">q", m.offset) + entry[16:18] + (entry[18:26] if m.magic == 1 else b"") \
            + entry[12 + key_at:12 + key_at + 4]
        payload = kcodec.decompress(m.codec_id, m.value, magic=m.magic, limit=LIMIT)
    return (f"magic={batch.magic} codec={CODECS[batch.codec_id]} stable={stable.hex()} payloadBytes={len(payload)} "
            f"payloadSha256={hashlib.sha256(payload).hexdigest()}")


def reference_payload_lines(path: Path) -> list[str]:
    lines = []
    for line in path.read_text().splitlines():
        if line.startswith("batch "):
            f = dict(item.split("=", 1) for item in line.split()[1:])
            lines.append(f"magic={f['magic']} codec={f['codec']} stable={f['stable']} payloadBytes={f['payloadBytes']} "
                         f"payloadSha256={f['payloadSha256']}")
    return lines


# --- kafka-python as an independent reader ------------------------------------------------------------
def kafka_python_view(data: bytes) -> list[dict]:
    """Every record as kafka-python reads it, in kdump's terms (kafka-python gives None for magic-0
    timestamps, -1 in Kafka; it yields control records of control batches too)."""
    records = MemoryRecords(data)
    out = []
    while (batch := records.next_batch()) is not None:
        assert batch.validate_crc()
        for r in batch:
            if batch.magic == 2 and batch.is_control_batch:
                continue
            ts = -1 if r.timestamp is None else r.timestamp
            headers = [(k, v) for k, v in getattr(r, "headers", []) or []]
            out.append({"offset": r.offset, "timestamp": ts, "key": r.key, "value": r.value, "headers": headers})
    return out


def kdump_view(path) -> list[dict]:
    out = []
    for batch, records in read_batches(path):
        if batch.is_control:
            continue
        for r in records:
            out.append({"offset": r.offset, "timestamp": r.timestamp, "key": r.key, "value": r.value,
                        "headers": [(k, v) for k, v in r.headers]})
    return out


def assert_kafka_python_agrees(path) -> None:
    assert kafka_python_view(Path(path).read_bytes()) == kdump_view(path)


# --- comparison with a reference file -----------------------------------------------------------------
def _without(view: dict, keys) -> dict:
    v = {k: val for k, val in view.items() if k not in keys}
    if "raw" in v:
        v["raw"] = {k: val for k, val in v["raw"].items() if k not in ("batchLength", "messageSize")}
    return v


def assert_matches_reference(ours: list, ours_path: Path, ref: Path, kafka_batches: list, *,
                             whole_file: bool = True) -> None:
    """``ours`` = [(batch, records)] of kdump's output must equal ``kafka_batches`` (from the reference's
    ``.json``) field by field, and byte for byte for none/gzip batches. With ``whole_file`` they are the
    whole of both files, which must then be identical unless a snappy/lz4 batch is in them."""
    identical_file = whole_file and ours_path.read_bytes() == ref.read_bytes()
    assert len(ours) == len(kafka_batches)
    with SegmentReader(ref) as reader:
        ref_entries = {b.position: b.entry_bytes() for b in reader}
    for (batch, records), kb in zip(ours, kafka_batches):
        where = f"batch {kb['baseOffset']}-{kb['lastOffset']} (reference position {kb['position']})"
        view = batch_view(batch)
        expected = {k: v for k, v in kb.items() if k != "records"}
        if not identical_file:
            # Positions move with the sizes of snappy/lz4 batches; their sizes and CRCs follow the compressor.
            drop = {"position"} | ({"size", "crc"} if kb["codec"] in JAVA_DEPENDENT else set())
            view, expected = _without(view, drop), _without(expected, drop)
        assert view == expected, where
        assert [record_view(batch, r) for r in records] == kb["records"], where
        if kb["codec"] not in JAVA_DEPENDENT:
            assert batch.entry_bytes() == ref_entries[kb["position"]], f"{where}: bytes differ from Kafka's"
    if whole_file and not any(kb["codec"] in JAVA_DEPENDENT for kb in kafka_batches):
        assert identical_file


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """Each reference's conversion, done once per module (both backends compare the same files)."""
    cache = {}
    out_dir = tmp_path_factory.mktemp("converted")

    def get(ref: Path, **options):
        key = (ref, tuple(sorted((k, str(v)) for k, v in options.items())))
        if key not in cache:
            dest = out_dir / str(len(cache)) / source_of(ref).name
            dest.parent.mkdir()
            result = convert_segment(source_of(ref), dest, ConvertOptions(magic_of(ref), **options))
            cache[key] = (dest, result)
        return cache[key]
    return get


def test_every_reference_was_copied():
    # tools/sync_convert_refs.py copies all of them; a missing one would silently shrink this suite.
    assert len(REFERENCES) == 82 and len(ERRORS) == 12 and len(SKIP_ZSTD) == 8
    for ref in REFERENCES + SKIP_ZSTD:
        assert source_of(Path(str(ref).replace(".skip-zstd", ""))).is_file(), ref


@pytest.mark.parametrize("ref", REFERENCES, ids=ref_id)
def test_same_batches_records_and_bytes_as_kafka(ref, converted):
    dest, result = converted(ref)
    kafka = json.loads(Path(f"{ref}.json").read_text())
    ours = read_batches(dest)
    assert_matches_reference(ours, dest, ref, kafka["batches"])
    assert [payload_line(b) for b, _ in ours] == reference_payload_lines(Path(f"{ref}.payload.txt"))
    assert sum(len(r) for _, r in ours) == kafka["totals"]["records"]
    assert result.stats.output_bytes == dest.stat().st_size
    if ".to-magic-" in ref.name and not any(b.codec_id in (2, 3) for b, _ in ours):
        # the reference's own digest (stats.txt "sha256=") names the same bytes
        assert hashlib.sha256(dest.read_bytes()).hexdigest() == kafka["sha256"]


@pytest.mark.parametrize("ref", REFERENCES, ids=ref_id)
def test_kafka_python_reads_the_output_as_kdump_does(ref, converted):
    dest, _ = converted(ref)
    assert_kafka_python_agrees(dest)


def _kafka_error(path: Path) -> tuple[str, str]:
    line = next(ln for ln in path.read_text().splitlines() if ln.startswith("ERROR "))
    cls, _, message = line[len("ERROR "):].partition(": ")
    return cls.rsplit(".", 1)[-1], message


@pytest.mark.parametrize("error_ref", ERRORS, ids=ref_id)
def test_refuses_where_kafka_refuses(error_ref, tmp_path):
    ref = Path(str(error_ref)[:-len(".error.txt")])
    exception, message = _kafka_error(error_ref)
    dest = tmp_path / "out.log"
    with pytest.raises(ConversionRefused) as info:
        convert_segment(source_of(ref), dest, ConvertOptions(magic_of(ref)))
    if exception == "UnsupportedCompressionTypeException":  # "Down-conversion of zstandard-compressed batches ..."
        assert info.value.code == "zstd-below-v2"
        assert "zstd" in info.value.message  # (the way out, a flag, is the command line's: commands/hints.py)
        from kdump.commands.hints import hinted
        assert "--recompress" in hinted(info.value.reason, info.value.message)
    else:
        assert exception == "CorruptRecordException"
        assert info.value.code == "crc-mismatch"
        # the same stored and computed CRCs as Kafka's "Record is corrupt (stored crc = S, computed crc = C)"
        assert message.split("(", 1)[1] in info.value.message
    assert info.value.position is not None
    assert list(tmp_path.iterdir()) == []  # nothing written, no temporary file left


@pytest.mark.parametrize("skip_ref", SKIP_ZSTD, ids=ref_id)
def test_recompress_zstd_converts_what_kafka_converts_plus_the_zstd_batches(skip_ref, converted):
    """Kafka's ``.skip-zstd`` is its down-conversion of the file without its zstd batches. With
    ``--recompress zstd=lz4`` kdump's output is that, batch by batch and field by field, plus the zstd
    batches' records as lz4 wrappers."""
    target = magic_of(skip_ref)
    ref = Path(str(skip_ref).replace(".skip-zstd", ""))
    dest, result = converted(ref, recompress={kcodec.ZSTD: kcodec.LZ4})
    source = read_batches(source_of(ref))
    zstd_ranges = [(b.base_offset, b.last_offset) for b, _ in source if b.magic == 2 and b.codec_id == kcodec.ZSTD]

    def within(last_offset, ranges):
        return any(lo <= last_offset <= hi for lo, hi in ranges)

    ours = read_batches(dest)
    kafka = json.loads(Path(f"{skip_ref}.json").read_text())["batches"]
    from_zstd = [(b, r) for b, r in ours if within(b.last_offset, zstd_ranges)]
    rest = [(b, r) for b, r in ours if not within(b.last_offset, zstd_ranges)]
    # Every other batch as Kafka's down-conversion wrote it, field by field (and byte for byte for none/gzip),
    # batches below the target magic included: a down-conversion copies them as they are.
    assert_matches_reference(rest, dest, skip_ref, kafka, whole_file=False)
    assert [payload_line(b) for b, _ in rest] == reference_payload_lines(Path(f"{skip_ref}.payload.txt"))
    below = sum(1 for b, _ in source if b.magic < target)
    assert sum(1 for b, _ in rest if b.magic < target) == below
    assert result.stats.kept_below_target == below and result.stats.down_conversion
    # the zstd batches' records, rewritten as lz4 wrappers of the target magic
    zstd_records = [r for b, rs in source if b.magic == 2 and b.codec_id == kcodec.ZSTD for r in rs]
    ours_zstd = [r for _, rs in from_zstd for r in rs]
    assert [(r.offset, r.key, r.value) for r in ours_zstd] == [(r.offset, r.key, r.value) for r in zstd_records]
    assert [r.timestamp for r in ours_zstd] == [r.timestamp if target == 1 else -1 for r in zstd_records]
    assert from_zstd and all(b.magic == target and b.codec_id == kcodec.LZ4 for b, _ in from_zstd)
    assert result.stats.recompressed == {(kcodec.ZSTD, kcodec.LZ4): len(zstd_ranges)}
    assert_kafka_python_agrees(dest)
