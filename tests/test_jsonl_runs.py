"""``dump --format json`` of plain magic 0/1 messages read as runs (issue 23 item 1, the JSON dump): the renderer
writes a whole ``LegacyRun`` at once (``JsonLinesRenderer.legacy_run``, compiled ``render_legacy_run_json``), and
must give exactly the bytes it gave message by message (the dump's path when ``legacy_run`` declines, which is
the reference here), for generated runs and for every legacy file of the corpus.

The files are written by kafka-python's ``LegacyRecordBatchBuilder`` (an independent encoder); the positions,
offsets, CRCs, keys and values read back from the JSON are checked against what was given to it. Both backends.
"""
from __future__ import annotations

import base64
import io
import json
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.legacy_records import LegacyRecordBatchBuilder

from kdump import _backend
from kdump.format.legacy import checked_run
from kdump.read.damage import readable
from kdump.read.segment import SegmentReader
from kdump.render import jsonl
from kdump.render.jsonl import JsonLinesRenderer, render_legacy_run_json_py, run_object_pieces
from tests.support.cli import run_cli
from tests.test_legacy_runs import message as plain_message  # kafka-python's, LogAppendTime too
from tests.test_legacy_runs import v2_batch

pytestmark = pytest.mark.usefixtures("backend")

ROOT = Path(__file__).resolve().parent.parent
LOG = "00000000000000000000.log"
ARGS = ([], ["--deep-iteration"], ["--deep-iteration", "--print-data-log"])


def message_by_message(monkeypatch, *args) -> str:
    """The JSON dump with every run handed over message by message (as before runs were rendered at once)."""
    with monkeypatch.context() as m:
        m.setattr(JsonLinesRenderer, "legacy_run", lambda self, run, deep: False)
        result = run_cli("dump", "--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return result.stdout


def at_once(monkeypatch, *args) -> tuple[str, int]:
    """The JSON dump as it runs, and how many messages it rendered a run at a time."""
    at_once_count = 0
    whole = JsonLinesRenderer.legacy_run

    def counted(self, run, deep):
        nonlocal at_once_count
        done = whole(self, run, deep)
        at_once_count += run.count if done else 0
        return done

    with monkeypatch.context() as m:
        m.setattr(JsonLinesRenderer, "legacy_run", counted)
        result = run_cli("dump", "--format", "json", *args)
    assert result.exit_code in (0, 1), result.output
    return result.stdout, at_once_count


# --- the dump: the same JSON -----------------------------------------------------------------------------------
VALUES = [b"plain", None, "caf\u00e9 \u202e".encode(), b"\xff\xfe bad utf-8", b"", b'"quoted\\" \x00\x1f\x7f',
          b"a value longer than two words of eight bytes"]


def mixed_file(tmp_path: Path) -> tuple[str, list[bytes]]:
    """Plain messages (magic 0 then 1, null keys and values, text and bytes, a LogAppendTime message now and
    then, one failing its CRC) between magic-2 batches."""
    entries = [plain_message(i, 1_700_000_000_000 + i, None if i % 3 == 0 else b"k%d" % i, VALUES[i % len(VALUES)],
                             magic=0 if i < 4 else 1, append_time=i % 7 == 6) for i in range(30)]
    damaged = bytearray(entries[12])
    damaged[12] ^= 0xFF  # its stored CRC wrong: an entry of its own, shown with crcValid false
    entries[12] = bytes(damaged)
    entries = [v2_batch(100, 3), *entries, v2_batch(200, 2), *entries[:5]]
    path = tmp_path / LOG
    path.write_bytes(b"".join(entries))
    return str(path), entries


@pytest.mark.parametrize("args", ARGS, ids=["shallow", "deep", "print-data"])
def test_runs_give_the_message_by_message_json(tmp_path, monkeypatch, args):
    path, entries = mixed_file(tmp_path)
    out, rendered_at_once = at_once(monkeypatch, *args, path)
    assert rendered_at_once == 34  # every intact plain message
    assert out == message_by_message(monkeypatch, *args, path)
    # and read back by an independent parser, against the bytes kafka-python wrote
    written = [json.loads(line) for line in out.split("\n")[:-1]]
    assert [o["code"] for o in written if o["type"] == "error"] == ["crc-mismatch"]  # said where it is
    objects = [o for o in written if o["type"] == "batch"]
    starts = [sum(len(e) for e in entries[:i]) for i in range(len(entries))]
    assert [o["position"] for o in objects] == starts
    legacy = [(o, e) for o, e in zip(objects, entries, strict=True) if o["magic"] < 2]
    for obj, entry in legacy:
        assert obj["size"] == len(entry)
        assert obj["lastOffset"] == int.from_bytes(entry[:8], "big")
        assert obj["crc"] == int.from_bytes(entry[12:16], "big")
        assert obj["crcValid"] == (zlib.crc32(entry[16:]) == obj["crc"])
        assert obj["baseOffset"] == (obj["lastOffset"] if args else None)
        if not args:
            assert "records" not in obj
            continue
        (record,) = obj["records"]
        assert (record["offset"], record["sizeInBytes"], record["legacyCrc"]) == (obj["lastOffset"], len(entry),
                                                                                  obj["crc"])
        if "--print-data-log" in args:
            i = obj["lastOffset"]  # (messages 0-4 come twice)
            assert _data(record, "key") == (None if i % 3 == 0 else b"k%d" % i)
            assert _data(record, "value") == VALUES[i % len(VALUES)]
        else:
            assert "key" not in record and "value" not in record


def _data(record: dict, name: str) -> bytes | None:
    encoding = record[f"{name}Encoding"]
    if encoding is None:
        return None
    text = record[name]
    return base64.b64decode(text) if encoding == "base64" else text.encode("utf-8")


def _runs_in(path: Path) -> int:
    try:
        with SegmentReader(str(path)) as reader:
            return sum(1 for item in readable(reader) if type(item).__name__ == "LegacyRun")
    except Exception:  # a file the walk refuses outright has no run to render
        return 0


CORPUS_WITH_RUNS = [p for p in sorted((ROOT / "fixtures" / "corpus").rglob("*.log")) if p.is_file() and _runs_in(p)]


def test_the_corpus_has_plain_legacy_messages():
    assert len(CORPUS_WITH_RUNS) >= 10  # 0.8.2, 0.9 and 0.10 brokers' files, Kafka's generated v0/v1 segments


@pytest.mark.parametrize("path", CORPUS_WITH_RUNS,
                         ids=[str(p.relative_to(ROOT / "fixtures" / "corpus")) for p in CORPUS_WITH_RUNS])
def test_corpus_legacy_files_give_the_json_they_gave(monkeypatch, path):
    for args in ARGS:
        out, rendered_at_once = at_once(monkeypatch, *args, path)
        assert rendered_at_once > 0
        assert out == message_by_message(monkeypatch, *args, path)


# --- the compiled renderer of runs against its pure twin --------------------------------------------------------
data = st.one_of(st.none(), st.binary(max_size=20),
                 st.text(max_size=12).map(lambda s: s.encode("utf-8", "surrogatepass")),
                 st.sampled_from([b'"\\', b"\x00\x1f\x7f", "\u0085\u202e\u00e9\U0001f600".encode(), b"\xc3",
                                  b"12345678", b"1234567\xff", b"x" * 300]))
messages = st.lists(st.tuples(data, data, st.sampled_from([0, 1]), st.booleans(),
                              st.sampled_from([-1, 0, 1_700_000_000_000, 2**63 - 1])), min_size=1, max_size=8)


@pytest.fixture(scope="module")
def compiled_runs():
    if not _backend.COMPILED_AVAILABLE:
        pytest.skip("the compiled extension is not built")
    return _backend.compiled("render_legacy_run_json")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(messages, st.sampled_from([0, 2**40, 2**63 - 100]), st.sampled_from([0, 4096, 2**40]),
       st.sampled_from(["/logs/t-0/00000000000000000000.log", 'we"ird\\ p\u00e4th\udcff']))
def test_compiled_run_json_is_its_twin(compiled_runs, drawn, first_offset, position, path):
    entries = [plain_message(first_offset + i, -1 if magic == 0 else ts, key, value, magic=magic,
                             append_time=magic == 1 and append)
               for i, (key, value, magic, append, ts) in enumerate(drawn)]
    run = checked_run(b"".join(entries), position, 99)
    assert run is not None and run.count == len(entries)
    for deep, print_data in ((False, False), (True, False), (True, True)):
        pieces = run_object_pieces(path, deep)
        want = render_legacy_run_json_py(run, path, pieces, deep, print_data)
        assert compiled_runs(run, path, pieces, deep, print_data) == want
        lines = want.decode("utf-8", "surrogateescape").split("\n")[:-1]
        assert [json.loads(line)["position"] for line in lines] == \
            [position + sum(map(len, entries[:i])) for i in range(len(entries))]


def test_every_byte_class_at_every_word_position_in_runs(compiled_runs):
    """Keys and values are checked 8 bytes at a time (the last word overlapping the one before) while they are
    copied: a byte of each class at each place of a value longer than two words gives the pure twin's bytes."""
    entries = []
    for special in (0x00, 0x1F, 0x20, 0x21, 0x22, 0x5C, 0x7E, 0x7F, 0x80, 0xC3, 0xFF):
        for at in range(19):
            value = bytearray(b"abcdefghijklmnopqrs")
            value[at] = special
            entries.append(plain_message(len(entries), 1_700_000_000_000, bytes(value[: at + 1]), bytes(value)))
    run = checked_run(b"".join(entries), 0, 10_000)
    assert run is not None and run.count == len(entries)
    pieces = run_object_pieces("p.log", True)
    assert compiled_runs(run, "p.log", pieces, True, True) == render_legacy_run_json_py(run, "p.log", pieces, True,
                                                                                        True)


def test_a_run_not_from_the_checked_walk_takes_the_pure_path(compiled_runs):
    """A run whose CRCs were not checked (``summary`` None) is written message by message, ``crcValid`` as it is."""
    from kdump.format.legacy import legacy_run
    entry = bytearray(plain_message(0, 1_700_000_000_000, b"k", b"v"))
    entry[12] ^= 0xFF
    run = legacy_run(bytes(entry), 0, 9)
    assert run is not None and run.summary is None
    pieces = run_object_pieces("p.log", True)
    out = compiled_runs(run, "p.log", pieces, True, True)
    assert out == render_legacy_run_json_py(run, "p.log", pieces, True, True)
    assert json.loads(out)["crcValid"] is False


# --- where a run is not written at once ------------------------------------------------------------------------
def _renderer(**kw) -> JsonLinesRenderer:
    raw = io.BytesIO()
    renderer = JsonLinesRenderer(io.TextIOWrapper(raw, encoding="utf-8"), print_data=True, deep=True, **kw)
    renderer.begin_file("p.log", None)
    return renderer


def test_no_run_at_once_where_the_output_is_another():
    run = checked_run(plain_message(0, 1_700_000_000_000, b"k", b"v"), 0, 9)
    assert _renderer().legacy_run(run, True)
    assert not _renderer(time_format="iso").legacy_run(run, True)  # maxTimestampIso, timestampIso
    assert not _renderer(terminal=True).legacy_run(run, True)  # escaped as text


def test_a_table_the_run_renderer_does_not_know_gives_no_pieces(tmp_path, monkeypatch):
    """Were the table's members in another order than the compiled renderer writes them, runs would go message by
    message (and the output stay the same)."""
    path, _ = mixed_file(tmp_path)
    expected = message_by_message(monkeypatch, "--deep-iteration", "--print-data-log", path)
    monkeypatch.setattr(jsonl, "RUN_OBJECT_FIELDS", tuple(reversed(jsonl.RUN_OBJECT_FIELDS)))
    assert run_object_pieces("p.log", True) is None
    out, rendered_at_once = at_once(monkeypatch, "--deep-iteration", "--print-data-log", path)
    assert rendered_at_once == 0 and out == expected


# --- the records of wrappers (compressed magic 0/1 messages) in compiled code too ---------------------------------
CORPUS_LOGS = sorted(p for p in (ROOT / "fixtures" / "corpus").rglob("*.log") if p.is_file())


def _legacy_batches(path: Path):
    with SegmentReader(str(path)) as reader:
        for batch in reader:
            if batch.magic < 2:
                try:
                    yield batch, batch.columns(1 << 28)
                except Exception:  # cannot be decompressed: nothing for either writer
                    continue


@pytest.mark.parametrize("path", CORPUS_LOGS,
                         ids=[str(p.relative_to(ROOT / "fixtures" / "corpus")) for p in CORPUS_LOGS])
def test_legacy_records_compiled_as_the_pure_json(path):
    fast = _backend.compiled("records_json") if _backend.COMPILED_AVAILABLE else None
    if fast is None:
        pytest.skip("the compiled extension is not built")
    for batch, cols in _legacy_batches(path):
        for print_data in (False, True):
            assert fast(batch, cols, print_data) == jsonl.records_json_py(batch, cols, print_data)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(data, data), min_size=1, max_size=6), st.sampled_from([0, 1]),
       st.sampled_from([1, 2, 3]), st.booleans())
def test_wrapper_records_compiled_as_the_pure_json(drawn, magic, codec, bad_inner_crc):
    """Inner messages of a wrapper written by kafka-python (gzip, snappy, lz4), one with its CRC wrong: the compiled
    records are the pure ones, and read back, the bytes kafka-python was given."""
    if not _backend.COMPILED_AVAILABLE:
        pytest.skip("the compiled extension is not built")
    builder = LegacyRecordBatchBuilder(magic, codec, 1 << 30)
    for i, (key, value) in enumerate(drawn):
        builder.append(i, 1_700_000_000_000 + i, key, value)
    entry = bytes(builder.build())
    (batch,) = _read(entry)
    cols = batch.columns(1 << 28)
    if bad_inner_crc:
        cols.valid[0] = False  # as the inner walk reports a message whose stored CRC is wrong
    for print_data in (False, True):
        ours = _backend.compiled("records_json")(batch, cols, print_data)
        assert ours == jsonl.records_json_py(batch, cols, print_data)
        records = json.loads(b"[" + ours + b"]")
        assert [r["legacyCrcValid"] for r in records] == cols.valid
        if print_data:
            assert [(_data(r, "key"), _data(r, "value")) for r in records] == drawn


def _read(entry: bytes) -> list:
    """The batches of a file holding ``entry``."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / LOG
        path.write_bytes(entry)
        with SegmentReader(str(path)) as reader:
            return list(reader)


def test_a_wrapper_is_decompressed_once_by_the_json_dump(tmp_path, monkeypatch):
    """The records of a wrapper are written without asking the wrapper for its base offset (no producer sequence
    to count from), which would decompress it a second time."""
    from kdump.format.legacy import LegacyBatch
    builder = LegacyRecordBatchBuilder(1, 1, 1 << 30)
    for i in range(5):
        builder.append(i, 1_700_000_000_000 + i, b"k", b"v%d" % i)
    path = tmp_path / LOG
    path.write_bytes(bytes(builder.build()))
    reads = 0
    inner_set = LegacyBatch.inner_set

    def counted(self, *args, **kwargs):
        nonlocal reads
        reads += 1
        return inner_set(self, *args, **kwargs)

    monkeypatch.setattr(LegacyBatch, "inner_set", counted)
    out = run_cli("dump", "--format", "json", "--deep-iteration", "--print-data-log", path).stdout
    assert [r["value"] for r in json.loads(out)["records"]] == [f"v{i}" for i in range(5)]
    assert reads == 1
