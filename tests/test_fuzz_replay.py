"""The fuzz regression corpus, replayed: every file under fixtures/fuzz/<target>/ (inputs that once crashed
kdump, kept after the fix) and the seed corpus of every target (tests/fuzz/seeds.py) go through their target
once (docs/fuzzing.md). A target runs each input on the compiled and the pure-Python backend and fails if
anything but kdump's own data error escapes, or if the two backends disagree. No atheris needed.
"""
import tempfile
from pathlib import Path

import pytest

from tests.fuzz.seeds import seeds
from tests.fuzz.targets import TARGETS, Mismatch, differential, fuzz_v2_records

REGRESSIONS = Path(__file__).resolve().parent.parent / "fixtures" / "fuzz"


def _regression_files():
    if not REGRESSIONS.is_dir():
        return []
    return sorted(p for p in REGRESSIONS.glob("*/*") if p.is_file() and p.name != "README.md")


@pytest.mark.parametrize("path", _regression_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_regression_input(path):
    assert path.parent.name in TARGETS, f"{path}: no fuzz target called {path.parent.name}"
    TARGETS[path.parent.name](path.read_bytes())


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_seed_corpus(target):
    items = seeds(target)
    assert items, f"no seeds for {target}"
    for name, data in items:
        try:
            TARGETS[target](data)
        except Exception as e:
            raise AssertionError(f"{target} seed {name}: {type(e).__name__}: {e}") from e


def test_every_target_has_a_regression_directory_name_it_can_use():
    # the directory name under fixtures/fuzz/ is the target's name: names stay stable and file-system safe
    for name in TARGETS:
        assert name == name.lower() and "/" not in name and " " not in name


def test_a_crash_escapes_the_target():
    # the invariant itself: an exception that is not kdump's data error leaves the target (atheris records it)
    def broken(data):
        raise IndexError("out of range")
    with pytest.raises(IndexError):
        differential(broken, b"")


def test_backends_that_disagree_are_reported(monkeypatch):
    from kdump import _backend
    if not _backend.COMPILED_AVAILABLE:
        pytest.skip("one backend only")

    def by_backend(data):
        return _backend.BACKEND
    with pytest.raises(Mismatch):
        differential(by_backend, b"")


def test_record_decoder_target_decodes_a_known_record():
    # a records payload (one record: offset delta 0, key "k", value "v", no headers) decodes on both backends
    from tests.fuzz.targets import V2_RECORDS_HEAD, _v2_records
    record = bytes([0, 0, 0, 2, ord("k"), 2, ord("v"), 0])  # attributes, ts delta, offset delta, key, value, headers
    data = V2_RECORDS_HEAD.pack(1, 0, 100, 5) + bytes([len(record) * 2]) + record
    fuzz_v2_records(data)
    ok, (whole, _summary, _chunks) = differential(_v2_records, data)
    assert ok == "ok"
    fields = dict(whole[1])
    assert fields["count"] == 1 and fields["offsets"] == (100,) and fields["error"] is None


def test_the_plain_run_target_makes_mutated_messages_pass_their_crc():
    # a random mutation almost never keeps a CRC right: the target recomputes them, so that what takes a run of
    # intact messages whole (stats' keys, the run renderers) meets hostile keys, values and lengths
    from kdump.format.legacy import LegacyRun
    from kdump.read.segment import SegmentReader
    from tests.fuzz.targets import PLAIN_HEAD, plain_messages

    def run_counts(data: bytes, tmp: Path) -> list[int]:
        path = tmp / "00000000000000000000.log"
        path.write_bytes(data)
        with SegmentReader(str(path)) as reader:  # the resynchronising walk: a run holds intact messages only
            return [e.batch.count for e in reader.events() if isinstance(getattr(e, "batch", None), LegacyRun)]

    with tempfile.TemporaryDirectory() as tmp:
        # a seed whose first entry begins a run of several messages
        data, whole = next((d, counts) for _, d in seeds("plain-run")
                           if (counts := run_counts(d, Path(tmp))) and counts[0] >= 2
                           and run_counts(d[:PLAIN_HEAD.size + PLAIN_HEAD.unpack_from(d, 0)[1]], Path(tmp)) == [1])
        _, size = PLAIN_HEAD.unpack_from(data, 0)
        mutated = bytearray(data)
        mutated[PLAIN_HEAD.size + size - 1] ^= 0x01  # the first message's last byte (its value's)
        assert run_counts(bytes(mutated), Path(tmp))[0] != whole[0]  # the flipped byte fails its CRC
        assert run_counts(plain_messages(bytes(mutated)), Path(tmp)) == whole
