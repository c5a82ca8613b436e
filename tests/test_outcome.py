"""The one outcome policy (issue 20): the exit codes the README's table promises, from what a run saw."""
import pytest

from kdump.report.outcome import FAIL, OK, WARN, Outcome, label


def _run(*steps, fail_on="error"):
    o = Outcome(fail_on=fail_on)
    for step, kw in steps:
        getattr(o, step)(**kw)
    return o.exit_code()


@pytest.mark.parametrize("steps, fail_on, code", [
    ([("file", {})], "error", 0),                                           # read and sound
    ([("file", {"warnings": 2})], "error", 0),                              # warnings below --fail-on
    ([("file", {"warnings": 2})], "warning", 1),                            # ... at --fail-on warning
    ([("file", {}), ("file", {"errors": 1})], "error", 1),                  # something read is damaged
    ([("file", {}), ("cannot_read", {})], "error", 1),                      # unreadable among readable
    ([("cannot_read", {})], "error", 2),                                    # nothing could be read
    ([("empty", {})], "error", 2),                                          # nothing to read
    ([("file", {}), ("empty", {})], "error", 2),                            # ... where one path pointed
    ([], "error", 2),
    ([("file", {}), ("refused", {})], "error", 2),                          # a path missing
    ([("file", {}), ("hanging_transactions", {"n": 1})], "error", 1),      # txn: a hanging transaction
    ([("file", {}), ("cannot_write", {})], "error", 2),                     # output cannot be written
])
def test_exit_codes(steps, fail_on, code):
    assert _run(*steps, fail_on=fail_on) == code


def test_label_agrees_with_the_exit_code():
    for errors in (0, 1):
        for warnings in (0, 3):
            for fail_on in ("error", "warning"):
                o = Outcome(fail_on=fail_on)
                shown = o.file(errors=errors, warnings=warnings)
                assert (shown == FAIL) == (o.exit_code() == 1)
                assert shown == (OK if not errors and not warnings else shown)
    assert label(0, 1) == WARN
