"""The differential target ``agree`` (issue 29; docs/fuzzing.md): its regression corpus (fixtures/fuzz/agree/)
through the in-process form (tests/fuzz/agree_lib.py) on both backends, the CLI form as a cross-check on a few
of them, and the target's own checks: a consumer that judges the bytes differently is caught."""
from pathlib import Path

import pytest

from tests.fuzz import agree_lib
from tests.fuzz.agree import Disagreement
from tests.fuzz.agree import fuzz_agree as fuzz_agree_cli

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "fuzz" / "agree"
INPUTS = sorted(p for p in CORPUS.iterdir() if p.is_file() and p.name != "README.md")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return agree_lib.Workspace(str(tmp_path_factory.mktemp("agree")))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: p.name)
def test_regression_input_in_process(path, backend, workspace):
    verdict = agree_lib.judge(path.read_bytes(), workspace)
    assert verdict["class"] in ("clean", "damaged", "foreign")


# what the inputs are, as the issue states them (Kafka's rules: spec §2.4, §3.9), not as the code says
EXPECTED_CLASS = {
    "kafka-tail-of-17": "clean",  # Kafka's DumpLogSegments: "Found 17 invalid bytes at the end", exit 0
    "zero-tail-of-18": "damaged",  # Kafka's tool dies on a size field of 0
    "text-named-as-a-segment": "foreign",
    "torn-write-half-a-batch": "damaged",
    "zeros-4096-8191-inside-a-batch": "damaged",
    "first-size-field-2-31-minus-1": "damaged",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_CLASS))
def test_every_command_gives_the_class_kafka_gives(name, backend, workspace):
    assert agree_lib.judge((CORPUS / name).read_bytes(), workspace)["class"] == EXPECTED_CLASS[name]


@pytest.mark.parametrize("name", ["torn-write-half-a-batch", "text-named-as-a-segment"])
def test_the_cli_form_agrees_with_the_in_process_form(name, workspace):
    data = (CORPUS / name).read_bytes()
    assert fuzz_agree_cli(data) == agree_lib.judge(data, workspace)


def test_the_spark_builder_says_a_text_file_is_no_kafka_log(workspace):
    # it read a text file named .log as a crash-cut tail: no rows, no damage, while every command says foreign
    workspace.put((CORPUS / "text-named-as-a-segment").read_bytes())
    assert agree_lib._spark(workspace.log) == ("foreign", [])


def test_a_consumer_that_loses_a_record_is_caught(monkeypatch, workspace):
    real = agree_lib._spark

    def loses_one(log):
        cls, rows = real(log)
        return cls, rows[1:]
    monkeypatch.setattr(agree_lib, "_spark", loses_one)
    with pytest.raises(Disagreement, match="record offsets differ"):
        agree_lib.judge((CORPUS / "torn-write-half-a-batch").read_bytes(), workspace)


def test_a_consumer_that_calls_damage_clean_is_caught(monkeypatch, workspace):
    monkeypatch.setattr(agree_lib, "_stats", lambda log: "clean")
    with pytest.raises(Disagreement, match="outcome classes differ"):
        agree_lib.judge((CORPUS / "zero-tail-of-18").read_bytes(), workspace)


def test_ranges_of_the_classification_that_overlap_are_caught(monkeypatch, workspace):
    from kdump.read import damage
    real = damage.readable

    def overlapping(reader, **kw):
        for item in real(reader, **kw):
            if isinstance(item, damage.Damage) and item.end is not None:
                item.start -= 1
            yield item
    monkeypatch.setattr(damage, "readable", overlapping)
    with pytest.raises(Disagreement, match="overlap"):
        agree_lib._tiles(str(_put(workspace, "zeros-4096-8191-inside-a-batch")), 9545)


def _put(workspace, name):
    workspace.put((CORPUS / name).read_bytes())
    return workspace.log


def test_the_spark_builder_checks_a_control_batch_crc_before_skipping_it(workspace):
    # found by the campaign: one bit flipped in a transaction marker's batch (its CRC no longer matches) was
    # passed over as a control batch, no damage said, where every command fails it; Kafka's consumer checks the
    # CRC of every batch (CompletedFetch: maybeEnsureValid) before it looks at the control flag
    from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
    log = _put(workspace, "control-bit-flipped-crc-mismatch")
    said = []
    for _ in read_slices([SegmentSlice(log, "t", 0)], ReadOptions(columns=("offset",)),
                         on_damage=lambda sl, error: said.append((error.code, error.position))):
        pass
    assert ("crc-mismatch", 3316) in said
