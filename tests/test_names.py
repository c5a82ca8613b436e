"""kdump/format/names.py, the one table of value names, against Kafka's own spellings: the corpus outputs (Kafka's
DumpLogSegments text and its field-level JSON view of every batch, ids read from the raw attribute bits and
record keys there, not by kdump) and the spec's tables (kafka-log-format.md §2.2, §2.3, §3.6)."""
from __future__ import annotations

import pickle
import re

import pytest
from click.testing import CliRunner
from corpus import LOG_FILES, load_json

from kdump.format import names as N
from kdump.format.types import CompressionType, ControlRecordType, TimestampType

# The spec's words (§2.2): CompressionType.name as none|gzip|snappy|lz4|zstd (ids 0-4), TimestampType.name
# (CreateTime, LogAppendTime, NoTimestampType), ControlRecordType as the enum constant name (§3.6 table).
SPEC_CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
SPEC_TIMESTAMP_TYPES = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}
SPEC_CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                      5: "KRAFT_VERSION", 6: "KRAFT_VOTERS", -1: "UNKNOWN"}
# §2.3: what the Java tool prints before a KRaft control record's JSON
SPEC_KRAFT_LABELS = {2: "LeaderChange", 3: "SnapshotHeader", 4: "SnapshotFooter", 5: "KRaftVersion",
                     6: "KRaftVoters"}
# §2.2, the batch lines with their placeholders
SPEC_V2_LINE = ("baseOffset: B lastOffset: L count: C baseSequence: S0 lastSequence: S1 producerId: P producerEpoch: E "
                "partitionLeaderEpoch: PLE isTransactional: T isControl: K deleteHorizonMs: DH position: POS "
                "<TsType>: MAXTS size: SZ magic: M compresscodec: CODEC crc: CRC isvalid: V")
SPEC_LEGACY_LINE = "offset: L position: POS <TsType>: MAXTS size: SZ magic: M compresscodec: CODEC crc: CRC isvalid: V"

_LABEL = re.compile(r"(\S+): ")


def _cases(stem: str):
    """(log file, Kafka's JSON view, Kafka's text for ``stem``) of every corpus segment that has both."""
    for path in LOG_FILES:
        text = path.parent / f"{path.name}.{stem}.txt"
        if path.suffix == ".log" and (path.parent / f"{path.name}.json").exists() and text.exists():
            yield path, load_json(path), text.read_bytes().decode("utf-8", "replace")


def _ids(batch: dict) -> tuple[int, int]:
    """(codec id, timestamp type id) from the attribute bits of Kafka's raw view (spec §3.2, §3.3)."""
    attributes = batch["raw"]["attributes"]
    return attributes & 7, -1 if batch["magic"] == 0 else (attributes >> 3) & 1


def test_codec_and_timestamp_type_names_are_kafkas():
    """Every batch of the corpus: the name Kafka's JSON and Kafka's text give its codec id and timestamp type id."""
    seen_codecs, seen_types = set(), set()
    for path, view, text in _cases("dumplog-shallow"):
        lines = [line for line in text.splitlines() if line.startswith(("baseOffset: ", "offset: "))]
        batches = [b for b in view["batches"] if "attributes" in b.get("raw", {})]
        if len(lines) != len(view["batches"]) or len(batches) != len(lines):
            continue  # a damaged case whose text and view do not pair batch by batch
        for batch, line in zip(batches, lines, strict=True):
            codec, ts_type = _ids(batch)
            assert (N.CODEC_NAMES[codec], N.TIMESTAMP_TYPE_JSON[ts_type]) == (batch["codec"], batch["timestampType"])
            fields = dict(re.findall(r"(\S+): (\S+)", line))
            assert fields["compresscodec"] == N.codec_name(codec) == N.CODEC_NAMES[codec], path
            assert N.TIMESTAMP_TYPE_TEXT[ts_type] in fields, (path, line)
            seen_codecs.add(codec)
            seen_types.add(ts_type)
    assert seen_codecs == set(range(5)) and seen_types == {-1, 0, 1}  # the corpus has every one


def test_the_tables_are_the_specs():
    assert dict(enumerate(N.CODEC_NAMES)) == SPEC_CODECS
    assert {name: i for i, name in SPEC_CODECS.items()} == N.CODEC_IDS
    assert N.TIMESTAMP_TYPE_TEXT == SPEC_TIMESTAMP_TYPES
    assert N.CONTROL_TYPE_NAMES == SPEC_CONTROL_TYPES
    assert N.KRAFT_CONTROL_LABELS == SPEC_KRAFT_LABELS
    # JSON spells timestamp types as Java's TimestampType constants, which are the enum's names here too
    assert {t.value: t.name for t in TimestampType} == N.TIMESTAMP_TYPE_JSON
    assert N.codec_name(5) == "unknown(5)" and N.codec_name(-1) == "unknown(-1)"


def test_the_enumerations_read_the_tables():
    assert [CompressionType(i).label for i in range(5)] == list(SPEC_CODECS.values())
    assert [CompressionType.from_label(name.upper()) for name in SPEC_CODECS.values()] == list(CompressionType)
    assert {t.value: t.display_name for t in TimestampType} == SPEC_TIMESTAMP_TYPES
    assert {t.value: t.display_name for t in ControlRecordType} == SPEC_CONTROL_TYPES


def test_control_type_names_are_kafkas():
    """Control records of the corpus: the type id in the key's bytes 2-3 (spec §3.6), Kafka's JSON name for it,
    and the text Kafka printed for the record (the Scala tool: ``controlType: LEADER_CHANGE(2)``)."""
    seen = set()
    for path, view, text in _cases("dumplog-data"):
        ids = [int(r["key"][4:8], 16) for b in view["batches"] if b["isControl"] for r in b["records"]]
        names = [r["control"]["type"] for b in view["batches"] if b["isControl"] for r in b["records"]]
        assert [N.CONTROL_TYPE_NAMES[i] for i in ids] == names, path
        printed = re.findall(r"endTxnMarker: ([A-Z_]+)|controlType: ([A-Z_]+)\((\d+)\)|^\| offset: .* ([A-Za-z]+) \{",
                             text, re.MULTILINE)
        assert len(printed) == len(ids), path
        for type_id, (marker, name, printed_id, label) in zip(ids, printed, strict=True):
            if marker:
                assert N.CONTROL_TYPE_NAMES[type_id] == marker
            elif name:
                assert (N.CONTROL_TYPE_NAMES[type_id], type_id) == (name, int(printed_id))
            else:
                assert N.KRAFT_CONTROL_LABELS[type_id] == label
            seen.add(type_id)
    assert seen == set(range(7))


def test_batch_fields_are_kafkas_json_view():
    """The JSON names, in order, are the fields of Kafka's view of a batch (beside its ``raw`` bytes)."""
    for _path, view, _text in _cases("dumplog-shallow"):
        for batch in view["batches"]:
            kafka = [k for k in batch if k not in ("raw", "valid", "records", "error")]  # (what Kafka's reader said)
            assert kafka == [f.json for f in N.BATCH_FIELDS]


@pytest.mark.parametrize("attrs, labels, spec, kafka_line", [
    (N.TEXT_V2_LINE, {}, SPEC_V2_LINE, "baseOffset: "),
    (N.TEXT_LEGACY_LINE, N.TEXT_LEGACY_LABELS, SPEC_LEGACY_LINE, "offset: "),
])
def test_batch_line_labels_are_kafkas(attrs, labels, spec, kafka_line):
    ours = [labels.get(a, N.BATCH_FIELD[a].text) for a in attrs]
    assert ours == [N.TIMESTAMP_LABEL if label == "<TsType>" else label for label in _LABEL.findall(spec)]
    for _path, _view, text in _cases("dumplog-shallow"):
        for line in text.splitlines():
            if line.startswith(kafka_line):
                printed = _LABEL.findall(line)
                assert printed[ours.index(N.TIMESTAMP_LABEL)] in SPEC_TIMESTAMP_TYPES.values()
                assert [N.TIMESTAMP_LABEL if p in SPEC_TIMESTAMP_TYPES.values() else p for p in printed] == ours


def test_spark_columns_are_the_schemas():
    pytest.importorskip("pyarrow")
    from kdump.spark import schema
    from kdump.spark._source import batch_fields
    columns = {f.column for f in N.BATCH_FIELDS if f.column is not None}
    assert columns == set(schema.METADATA_COLUMNS) - {"segment"} | {"timestampType"}
    assert columns <= set(schema.ALL_COLUMNS)
    from kdump import SegmentReader
    path = next(p for p in LOG_FILES if p.parent.name == "v1-gzip-createtime")
    with SegmentReader(path) as reader:
        batch = next(iter(reader))
        fields = batch_fields(batch, 7, False)
    assert set(fields) == columns
    assert (fields["codec"], fields["timestampType"], fields["baseOffset"], fields["crcValid"]) == ("gzip", 0, 7, None)


def test_compile_projection_builds_lines_and_objects():
    pairs = [("{kind}", "value + 1"), ("name", "shout(name)")]
    line = N.compile_projection("line", "value, name, kind='k'", pairs, line=True, env={"shout": str.upper})
    assert line(1, "x") == "k: 2 name: X" and line(1, "x", "K") == "K: 2 name: X"
    obj = N.compile_projection("obj", "value, name", [("v", "value"), ("n", "shout(name)")], line=False,
                               env={"shout": str.upper})
    assert obj(3, "y") == {"v": 3, "n": "Y"} and list(obj(3, "y")) == ["v", "n"]
    assert obj.__module__ == __name__


def test_projections_pickle_by_reference():
    """Spark ships the read functions to its workers: the generated ones pickle as the module's names."""
    pytest.importorskip("pyarrow")
    from kdump.render import jsonl
    from kdump.spark import _source
    for function in (_source.batch_fields, jsonl.batch_object):
        assert pickle.loads(pickle.dumps(function)) is function


def test_cli_choices_read_the_table():
    from kdump.cli import cli
    wide = {"terminal_width": 200}  # each choice list on one line of the help
    dump = CliRunner().invoke(cli, ["dump", "--help"], **wide).output  # Click-level: the help's terminal width
    convert = CliRunner().invoke(cli, ["convert", "--help"], **wide).output  # Click-level: as above
    assert "--codec [" + "|".join(SPEC_CODECS.values()) + "]" in dump
    assert "--compression [keep|" + "|".join(SPEC_CODECS.values()) + "]" in convert
