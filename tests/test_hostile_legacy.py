"""Issue 22, item 1: a compressed legacy (magic 0/1) wrapper whose message CRC is right but whose compressed
value cannot be read (a corrupt gzip trailer, corrupt snappy/lz4, zstd where Kafka refuses it, a compressed
inner message, a decompression bomb) gives exit 0 or 1 in every command that reads records, on both backends,
never exit 70; an exit 1 names the file and the byte position.

The root cause was ``LegacyBatch.base_offset`` decompressing and raising where callers only name a batch by
its offsets (the compiled JSON renderer, salvage's drop report, the internal-topic replays): it now never
raises, and the damage is reported where the records are read."""
import pytest

from support import hostile_legacy as H
from support.cli import run_cli
from kdump.errors import FormatError
from kdump.read.segment import SegmentReader

pytestmark = pytest.mark.usefixtures("backend")  # each test runs on the compiled and the pure path

NAME = "00000000000000000000.log"
CASES = [(name, magic) for name in H.VARIANTS for magic in (0, 1)]
TOPICS = {"groups": "__consumer_offsets-0", "txn-state": "__transaction_state-0", "metadata": "__cluster_metadata-0"}
COMMANDS = {
    "dump": lambda f, o: ["dump", f],
    "dump-deep": lambda f, o: ["dump", "--deep-iteration", "--print-data-log", f],
    "dump-json": lambda f, o: ["dump", "--format", "json", f],
    "dump-json-deep": lambda f, o: ["dump", "--format", "json", "--deep-iteration", f],
    "verify-deep": lambda f, o: ["verify", "--deep", f],
    "stats": lambda f, o: ["stats", f],
    "txn": lambda f, o: ["txn", f],
    "salvage": lambda f, o: ["salvage", f, "-o", o / "salvaged.log"],
    "convert-2": lambda f, o: ["convert", "--to-magic", "2", f, "-o", o / "converted.log"],
    "convert-1": lambda f, o: ["convert", "--to-magic", "1", f, "-o", o / "converted.log"],
    "index-rebuild": lambda f, o: ["index", "rebuild", "-o", o / "idx", f],
    "index-check": lambda f, o: ["index", "check", f.parent],
    "groups": lambda f, o: ["groups", f.parent],
    "txn-state": lambda f, o: ["txn-state", f.parent],
    "metadata": lambda f, o: ["metadata", f.parent],
}


def segment(tmp_path, command: str, wrapper: bytes, after_offset: int):
    """The damaged wrapper followed by a good message, in a partition directory the command accepts."""
    d = tmp_path / TOPICS.get(command, "t-0")
    d.mkdir()
    path = d / NAME
    path.write_bytes(wrapper + H.message(after_offset, 1, b"after"))
    (tmp_path / "out").mkdir()
    return path


def check_exit(result, path):
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr)
    if result.exit_code == 1 and result.stderr:
        assert str(path) in result.stderr
        assert "byte" in result.stderr, result.stderr


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(("variant", "magic"), CASES)
def test_damaged_wrapper_never_exits_70(tmp_path, variant, magic, command):
    path = segment(tmp_path, command, H.VARIANTS[variant](magic), 3)
    result = run_cli(*COMMANDS[command](path, tmp_path / "out"))
    check_exit(result, path)
    if command in ("dump-deep", "dump-json-deep", "verify-deep", "salvage"):
        assert result.exit_code == 1  # the records are read: the damage is found and reported


@pytest.mark.parametrize("command", ["dump-json-deep", "salvage", "groups", "txn-state", "metadata"])
def test_gzip_bomb_in_a_v1_wrapper_is_refused_with_exit_1(tmp_path, command):
    # 300 MB of zeros: past the 256 MiB decompression limit (the 1 GB bomb behaves the same; smaller is
    # quicker)
    path = segment(tmp_path, command, H.gzip_bomb(300 << 20), 1)
    result = run_cli(*COMMANDS[command](path, tmp_path / "out"))
    check_exit(result, path)
    assert result.exit_code == 1
    assert "limit" in result.stderr + result.stdout


@pytest.mark.parametrize(("variant", "magic"), CASES)
def test_base_offset_of_an_unreadable_wrapper_is_its_own_offset(tmp_path, variant, magic):
    path = tmp_path / NAME
    path.write_bytes(H.VARIANTS[variant](magic))
    with SegmentReader(path) as reader:
        (batch,) = list(reader)
        wrapper_offset = batch.last_offset
        assert batch.base_offset == wrapper_offset  # never raises: the only offset the wrapper states
        assert batch.records_error is not None
        with pytest.raises(FormatError) as e:  # reading the records reports the damage, at the wrapper
            batch.columns(1 << 20)
        assert e.value.position == 0
        assert e.value.code == batch.records_error.code


def test_base_offset_of_a_readable_wrapper_is_its_first_record(tmp_path):
    path = tmp_path / NAME
    path.write_bytes(H.message(12, 1, __import__("gzip").compress(H.inner_set(3)), codec=1))
    with SegmentReader(path) as reader:
        (batch,) = list(reader)
        assert (batch.base_offset, batch.last_offset, batch.records_error) == (10, 12, None)


@pytest.mark.parametrize(("variant", "magic"), CASES)
def test_spark_source_reports_the_damaged_wrapper(tmp_path, variant, magic):
    pytest.importorskip("pyarrow")
    from test_spark_arrow import BUILDERS, compiled_available, read
    path = segment(tmp_path, "spark", H.VARIANTS[variant](magic), 3)
    for builder in BUILDERS if compiled_available() else BUILDERS[1:]:
        batches, damage = read(str(path), builder)
        assert damage and damage[0][1] == 0, (builder, damage)  # the wrapper, at byte 0
        assert sum(b.num_rows for b in batches) == 1  # the good message after it
