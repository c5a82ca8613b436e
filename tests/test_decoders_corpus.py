"""Internal-topic decoders against DumpLogSegments' own decoder output (the corpus ``.dumplog-*-decoder.txt``).

The corpus was printed by Kafka's Scala tool at commit 1eb7644349cb, the commit kdump's schema tables are
generated from. kdump's default text is the newest (Java) tool's; for these decoders the two differ only
in LEADER_CHANGE control records (JSON in Java; see test_dump_corpus.py) and in texts no corpus record
exercises. Where Kafka printed ``Error at ..., skipping.`` with a reason Java gives as ``null`` or not at
all, kdump says what was wrong: those lines are checked against the precise reason instead.
"""
import re
import shutil

import pytest

from corpus import CORPUS
from support.cli import run_cli

pytestmark = pytest.mark.usefixtures("backend")

CASES = sorted(CORPUS.rglob("*.dumplog-*-decoder.txt"))
LEADER_CHANGE_JSON = re.compile(r" LeaderChange: \{[^\n]*\}")

# offset -> the better reason kdump gives where Kafka's line ends in "null." or names no reason
BETTER = {
    ("__consumer_offsets-0", 65): (
        "key: Error at offset 65, skipping. Could not read record with version 2 from key's buffer due to: null.",
        "key: Error at offset 65, skipping. Could not read record with version 2 from key's buffer due to: the "
        "buffer ends inside the length of group (2 byte(s) needed, 1 left)."),
    ("__cluster_metadata-0", 41): (
        "payload: Error at 41, skipping. Failed to deserialize record with type 2",
        "payload: Error at 41, skipping. Failed to deserialize record with type 2 (TopicRecord version 99: the "
        "buffer ends inside the length of name (1 byte(s) needed, 0 left))"),
}


def _flag(reference) -> str:
    return "--offsets-decoder" if "offsets-decoder" in reference.name else "--cluster-metadata-decoder"


def _expected(reference, *, java: bool) -> list[str]:
    lines = reference.read_text().splitlines()
    directory = reference.parent.name
    out = []
    for line in lines:
        m = re.match(r"\| offset: (\d+) ", line)
        if m and (directory, int(m.group(1))) in BETTER:
            kafka, kdump = BETTER[directory, int(m.group(1))]
            assert line.endswith(kafka)
            line = line[:-len(kafka)] + kdump
        out.append(line)
    return out


@pytest.mark.parametrize("reference", CASES, ids=[str(p.relative_to(CORPUS)) for p in CASES])
@pytest.mark.parametrize("compat", ["java", "scala"])
def test_decoder_output_is_kafkas_line_for_line(reference, compat, in_dir):
    segment = reference.parent / reference.name.split(".dumplog-")[0]
    in_dir(segment.parent)
    flags = [_flag(reference)] + (["--compat", "scala"] if compat == "scala" else [])
    result = run_cli("dump", *flags, segment.name)
    assert result.exit_code == 0, result.stderr
    got = result.stdout.splitlines()
    if compat == "java":  # the Java tool prints LEADER_CHANGE as JSON; the corpus has the Scala form
        got = [LEADER_CHANGE_JSON.sub(" controlType: LEADER_CHANGE(2)", line) for line in got]
    assert got == _expected(reference, java=compat == "java")
    assert result.stderr == ""


def _partition_copy(tmp_path, topic_dir: str):
    """A partition directory holding only the corpus segment (the corpus directories also hold references)."""
    src = CORPUS / "kafka-generated/internal-topics" / topic_dir / "00000000000000000000.log"
    dst = tmp_path / topic_dir
    dst.mkdir()
    shutil.copy(src, dst / src.name)
    return src


def test_decoder_auto_picks_the_decoder_from_the_partition_directory(tmp_path, in_dir):
    src = _partition_copy(tmp_path, "__consumer_offsets-0")
    in_dir(tmp_path)
    result = run_cli("dump", "--decoder", "auto", "__consumer_offsets-0")
    expected = _expected(src.parent / (src.name + ".dumplog-offsets-decoder.txt"), java=True)
    assert result.stdout.splitlines()[1:] == expected[1:]  # "Dumping <path>" names the path as given
    assert result.stderr == ""


def test_plain_dump_of_an_internal_topic_hints_at_its_decoder(tmp_path, in_dir):
    _partition_copy(tmp_path, "__transaction_state-0")
    in_dir(tmp_path)
    result = run_cli("dump", "__transaction_state-0")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [
        "kdump: note: __transaction_state records are binary; add --transaction-log-decoder (or --decoder auto) "
        "to decode them"]
    decoded = run_cli("dump", "--transaction-log-decoder", "__transaction_state-0")
    assert decoded.stderr == ""


def test_two_decoders_are_a_usage_error(in_dir):
    in_dir(CORPUS / "kafka-generated/internal-topics")
    result = run_cli("dump", "--offsets-decoder", "--decoder", "cluster-metadata", "__consumer_offsets-0")
    assert result.exit_code == 2
    assert "choose one decoder" in result.stderr
