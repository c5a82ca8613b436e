"""Seeking: `kdump dump --from-offset/--to-offset/--from-time` shows exactly what a full scan shows for the
same window, with or without indexes; the index lookup lands where a walk from the start lands.

The expected output is computed from kdump's own full (unseeking) dump, whose text is checked against
Kafka's on the whole corpus (test_dump_corpus.py), by filtering its batch and record lines here."""
import re
import shutil

import pytest

from corpus import CORPUS, LOG_FILES
from support.cli import run_cli
from kdump.index.rebuild import rebuild_indexes
from kdump.read.locate import locate_offset, locate_time, parse_time
from support.segments import T0, data_batch, write_log

BROKER = CORPUS / "broker-written"
GENERATED = sorted((CORPUS.parent / "generated").glob("*/*.log"))
LOGS = [p for p in LOG_FILES if p.suffix == ".log"] + GENERATED
_TS = re.compile(r" (?:CreateTime|LogAppendTime|NoTimestampType): (-?\d+)")


def parse_dump(text: str):
    """[(batch line, first offset, last offset, max ts, [(record line, offset, ts)])] of a deep dump."""
    batches = []
    for line in text.splitlines():
        if line.startswith("baseOffset: "):
            first, last = (int(x) for x in re.match(r"baseOffset: (-?\d+) lastOffset: (-?\d+)", line).groups())
            batches.append([line, first, last, int(_TS.search(line).group(1)), []])
        elif line.startswith("offset: "):
            last = int(re.match(r"offset: (-?\d+)", line).group(1))
            batches.append([line, None, last, int(_TS.search(line).group(1)), []])
        elif line.startswith("| offset: "):
            b = batches[-1]
            off = int(re.match(r"\| offset: (-?\d+)", line).group(1))
            b[4].append((line, off, int(_TS.search(line).group(1))))
            if b[1] is None:
                b[1] = off
    return batches


def window(batches, *, from_offset=None, to_offset=None, from_time=None) -> list[str]:
    """The lines a seeking dump must print, from a full dump's batches."""
    out = []
    started = from_offset is None and from_time is None
    for line, first, last, ts, records in batches:
        first = last if first is None else first
        if to_offset is not None and last > to_offset and first > to_offset:
            break
        recs = records
        if not started:
            if from_offset is not None and last < from_offset:
                continue
            if from_time is not None and ts < from_time:
                continue
            started = True
            if from_offset is not None:
                recs = [r for r in recs if r[1] >= from_offset]
            else:
                k = next((i for i, r in enumerate(recs) if r[2] >= from_time), 0)
                recs = recs[k:]
        if to_offset is not None:
            recs = [r for r in recs if r[1] <= to_offset]
        out.append(line)
        out.extend(r[0] for r in recs)
    return out


def body(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("baseOffset: ", "offset: ", "| offset: "))]


def dump(*args):
    result = run_cli("dump", "--deep-iteration", *args)
    return result


def targets(batches):
    offs = sorted({r[1] for b in batches for r in b[4]} | {b[2] for b in batches})
    if not offs:
        return [0]
    picks = {offs[0] - 1, offs[len(offs) // 3], offs[len(offs) // 2] + 1, offs[-1] + 1}
    return sorted(picks)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: str(p.relative_to(CORPUS.parent)))
def test_offset_and_time_windows_equal_the_full_scan(log):
    full = dump(log)
    batches = parse_dump(full.stdout)
    picks = targets(batches)
    # damage whose lost offsets all lie before the window is not the window's problem (dump reads past it); nor is
    # a batch before it that fails its CRC (an error only where it is shown, isvalid: false)
    lost = [int(b) for _, b in re.findall(r"offsets (\d+)-(\d+) are lost", full.stderr)]
    lost += [int(b) for b in re.findall(r"^(?:baseOffset: -?\d+ lastOffset: |offset: )(\d+) .*isvalid: false$",
                                        full.stdout, re.M)]
    for n in picks:
        got = dump("--from-offset", n, log)
        assert body(got.stdout) == window(batches, from_offset=n), n
        if lost and all(b < n for b in lost):
            assert got.exit_code == 0 and "lost" not in got.stderr
        else:
            assert got.exit_code == full.exit_code
    for n in picks[1:3]:
        got = dump("--from-offset", n, "--to-offset", n + 2, log)
        assert body(got.stdout) == window(batches, from_offset=n, to_offset=n + 2), n
    stamps = sorted({b[3] for b in batches})
    for t in sorted({stamps[0] - 1, stamps[len(stamps) // 2], stamps[-1] + 1}) if stamps else []:
        got = dump("--from-time", t, log)
        assert body(got.stdout) == window(batches, from_time=t), t


def _expected_positions(log):
    """(offset targets, time targets, where a walk from the start lands for each), from the batches."""
    import bisect
    from kdump.read.segment import SegmentReader
    with SegmentReader(log) as r:
        bs = [(b.position, b.last_offset, b.max_timestamp) for b in r]
        end = r.file_size
    lasts = [b[1] for b in bs]
    running, prefix = -2**63, []
    for b in bs:
        running = max(running, b[2])
        prefix.append(running)

    def by_offset(n):
        i = bisect.bisect_left(lasts, n)
        return (bs[i][0], True) if i < len(bs) else (end, False)

    def by_time(t):
        i = bisect.bisect_left(prefix, t)  # first batch whose max timestamp reaches t
        return (bs[i][0], True) if i < len(bs) else (end, False)

    offs = sorted({o for o in lasts} | {o + 1 for o in lasts} | {o - 1 for o in lasts})
    stamps = sorted({b[2] for b in bs} | {b[2] + 1 for b in bs} | {b[2] - 1 for b in bs})
    return offs, stamps, by_offset, by_time


@pytest.mark.parametrize("case", ["consumer-offsets-v2", "kraft-metadata-log"])
def test_broker_index_lookup_lands_where_the_walk_lands(case):
    log = BROKER / case / "00000000000000000000.log"
    offs, stamps, by_offset, by_time = _expected_positions(log)
    step = max(1, len(offs) // 1500)  # kraft-metadata-log has ~5,500 of each: every few is plenty
    offs, stamps = offs[::step] + offs[-3:], stamps[::step] + stamps[-3:]
    for n in offs:
        res = locate_offset(log, n)
        assert (res.position, res.found) == by_offset(n), n
        assert res.method in ("index", "start") and res.note is None
    for t in stamps:
        res = locate_time(log, t)
        assert (res.position, res.found) == by_time(t), t
        assert res.method == "index"
    for n in offs[::20]:  # the fallback walk agrees too
        assert locate_offset(log, n, use_index=False).position == by_offset(n)[0]
    for t in stamps[::20]:
        assert locate_time(log, t, use_index=False).position == by_time(t)[0]


@pytest.mark.parametrize("log", GENERATED, ids=lambda p: p.parent.name)
def test_rebuilt_index_lookup_lands_where_the_walk_lands(log, tmp_path):
    shutil.copy(log, tmp_path / log.name)
    log = tmp_path / log.name
    rebuild_indexes(log, index_interval_bytes=64)  # many entries for small fixtures
    offs, stamps, by_offset, by_time = _expected_positions(log)
    for n in offs:
        assert (locate_offset(log, n).position, locate_offset(log, n, use_index=False).position) == \
            (by_offset(n)[0],) * 2, n
    for t in stamps:
        assert (locate_time(log, t).position, locate_time(log, t, use_index=False).position) == (by_time(t)[0],) * 2, t


@pytest.fixture
def partition(tmp_path):
    d = tmp_path / "orders-0"
    for base in (0, 300, 600):
        write_log(d, base, [data_batch(base + i * 10, 10, ts=T0 + (base + i * 10) * 10) for i in range(30)])
        rebuild_indexes(d / f"{base:020d}.log", index_interval_bytes=400)
    return d


def test_partition_directory_windows(partition):
    full = dump(partition)
    batches = parse_dump(full.stdout)
    for n in (0, 5, 299, 300, 301, 455, 899, 900):
        assert body(dump("--from-offset", n, partition).stdout) == window(batches, from_offset=n), n
        assert body(dump("--from-offset", n, "--to-offset", n + 25, partition).stdout) == \
            window(batches, from_offset=n, to_offset=n + 25), n
    for t in (T0 - 1, T0 + 2995, T0 + 3000, T0 + 7777, T0 + 9000):
        assert body(dump("--from-time", t, partition).stdout) == window(batches, from_time=t), t
    out = dump("--from-offset", 650, partition).stdout
    # issue 11 point 5: segments wholly before the start are passed over (no empty "Dumping" headers)
    assert re.findall(r"^Dumping .*/(\S+)$", out, re.M) == ["00000000000000000600.log"]
    out = dump("--to-offset", 250, partition).stdout  # and segments starting after the end
    assert re.findall(r"^Dumping .*/(\S+)$", out, re.M) == ["00000000000000000000.log"]


def test_from_time_shows_no_header_for_a_segment_it_skips(partition):
    """Segment 300 holds timestamps T0+3000..T0+5999 (ts = T0 + 10 * offset): from T0+7777 only segment 600 has
    a batch to show, so only its "Dumping" header is printed, as for a --from-offset past a segment; a named
    segment wholly before the time prints nothing either. With -v each one passed over is said on stderr."""
    out = dump("--from-time", T0 + 7777, partition)
    assert out.exit_code == 0
    assert re.findall(r"^Dumping .*/(\S+)$", out.stdout, re.M) == ["00000000000000000600.log"]
    named = dump("--from-time", T0 + 7777, partition / "00000000000000000300.log")
    assert (named.exit_code, named.stdout) == (0, "")
    verbose = dump("-v", "--from-time", T0 + 7777, partition)
    assert verbose.stderr.count("no batch of it is in the --from-/--to- range") == 2
    assert verbose.stdout == out.stdout


def test_damaged_index_is_not_trusted(partition):
    idx = partition / "00000000000000000300.index"
    data = bytearray(idx.read_bytes())
    data[4:8] = (int.from_bytes(data[4:8], "big") + 9).to_bytes(4, "big")  # entry 0 points inside a batch
    idx.write_bytes(bytes(data))
    full = parse_dump(dump(partition).stdout)
    n = 300 + (int.from_bytes(data[0:4], "big")) + 3
    result = dump("--from-offset", n, partition)
    assert body(result.stdout) == window(full, from_offset=n)
    assert "00000000000000000300.log: note: offset index entry 0" in result.stderr
    assert "walking the log from its start" in result.stderr
    assert result.exit_code == 0


def test_kraft_snapshot_windows():
    """.checkpoint files have no index: the window is applied while reading."""
    path = BROKER / "kraft-bootstrap-checkpoint" / "bootstrap.checkpoint"
    batches = parse_dump(dump(path).stdout)
    for n in targets(batches):
        assert body(dump("--from-offset", n, path).stdout) == window(batches, from_offset=n)


def test_seek_without_index_scans(tmp_path):
    log = write_log(tmp_path, 0, [data_batch(i * 10, 10) for i in range(20)])
    res = locate_offset(log, 105)
    assert res.method == "scan" and res.note is None and res.found
    assert locate_offset(log, 10**6).found is False


def test_parse_time():
    assert parse_time("1700000000000") == 1700000000000
    assert parse_time("2023-11-14T22:13:20Z") == 1700000000000
    assert parse_time("2023-11-14T22:13:20.5+00:00") == 1700000000500
    assert parse_time("2023-11-15T00:13:20+02:00") == 1700000000000
    assert parse_time("2023-11-14 22:13:20") == 1700000000000  # no zone: UTC
    with pytest.raises(ValueError):
        parse_time("yesterday")


def test_usage_errors(partition):
    r = run_cli("dump", "--from-offset", "5", "--from-time", "5", partition)
    assert r.exit_code == 2
    assert run_cli("dump", "--from-offset", "5", "--to-offset", "4", partition).exit_code == 2
    r = run_cli("dump", "--from-time", "soon", partition)
    assert r.exit_code == 2 and "ISO-8601" in r.output
