"""The ``--force`` hint appears only where ``--force`` would change the answer (issue 20's table: convert with
``-o`` naming the input's own directory suggested ``--force``, then refused with it)."""
import shutil

from tests.support.cli import run_cli

FIXTURE = "fixtures/generated/v1-gzip-createtime"


def _partition(tmp_path):
    part = tmp_path / "t-0"
    shutil.copytree(FIXTURE, part)
    return part, part / "00000000000000000000.log"


def test_the_input_itself_is_refused_without_suggesting_force(tmp_path):
    part, seg = _partition(tmp_path)
    before = seg.read_bytes()
    for extra in ((), ("--force",)):
        r = run_cli("convert", seg, "--to-magic", "2", "-o", f"{part}/", *extra)
        assert r.exit_code == 2
        assert "never modifies its input" in r.stderr
        assert "--force" not in r.stderr
    assert seg.read_bytes() == before


def test_an_existing_output_is_refused_with_the_hint_and_replaced_with_force(tmp_path):
    _, seg = _partition(tmp_path)
    out = tmp_path / "out.log"
    out.write_bytes(b"old")
    r = run_cli("convert", seg, "--to-magic", "2", "-o", out)
    assert r.exit_code == 2 and "use --force to replace" in r.stderr
    r = run_cli("convert", seg, "--to-magic", "2", "-o", out, "--force")
    assert r.exit_code == 0, r.stderr
    assert out.read_bytes() != b"old"
