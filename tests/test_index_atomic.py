"""kdump/write/atomic.py: a file appears complete and verified, or not at all; never over an input; old files kept."""
import os

import pytest

from kdump.write.atomic import AtomicFile, AtomicWriteError, write_atomic


def test_new_file_appears_only_on_commit(tmp_path):
    target = tmp_path / "a.index"
    f = AtomicFile(target)
    f.write(b"12345678")
    assert not target.exists()
    assert f.commit() == str(target)
    assert target.read_bytes() == b"12345678"
    assert os.listdir(tmp_path) == ["a.index"]


def test_existing_target_is_refused_without_overwrite(tmp_path):
    target = tmp_path / "a.index"
    target.write_bytes(b"old")
    with pytest.raises(FileExistsError):
        AtomicFile(target)
    assert target.read_bytes() == b"old"


def test_target_created_meanwhile_is_not_clobbered(tmp_path):
    target = tmp_path / "a.index"
    f = AtomicFile(target)
    f.write(b"new")
    target.write_bytes(b"raced")  # another writer won the race
    with pytest.raises(FileExistsError):
        f.commit()
    assert target.read_bytes() == b"raced"
    assert sorted(os.listdir(tmp_path)) == ["a.index"]  # no temporary file left


def test_overwrite_keeps_one_backup(tmp_path):
    """Issue 11: one .bak per file, the previous one replaced (not .bak.1, .bak.2, ...)."""
    target = tmp_path / "a.index"
    target.write_bytes(b"v1")
    write_atomic(target, b"v2", overwrite=True)
    assert (tmp_path / "a.index.bak").read_bytes() == b"v1"
    write_atomic(target, b"v3", overwrite=True)
    assert target.read_bytes() == b"v3"
    assert (tmp_path / "a.index.bak").read_bytes() == b"v2"
    assert sorted(os.listdir(tmp_path)) == ["a.index", "a.index.bak"]


def test_verify_callback_refusal_leaves_nothing(tmp_path):
    target = tmp_path / "a.index"
    target.write_bytes(b"old")

    def verify(tmp):
        assert open(tmp, "rb").read() == b"bad"
        raise AtomicWriteError("refused")

    with pytest.raises(AtomicWriteError):
        write_atomic(target, b"bad", overwrite=True, verify=verify)
    assert target.read_bytes() == b"old"
    assert sorted(os.listdir(tmp_path)) == ["a.index"]


def test_inputs_are_protected(tmp_path):
    log = tmp_path / "00000000000000000000.log"
    log.write_bytes(b"data")
    link = tmp_path / "00000000000000000000.index"
    os.symlink(log, link)
    with pytest.raises(AtomicWriteError, match="input file"):
        AtomicFile(link, overwrite=True, protect=[log])
    with pytest.raises(AtomicWriteError, match="input file"):
        AtomicFile(log, overwrite=True, protect=[log])
    assert log.read_bytes() == b"data"


def test_abort_and_exceptions_in_with_block(tmp_path):
    target = tmp_path / "a.index"
    with pytest.raises(RuntimeError):
        with AtomicFile(target) as f:
            f.write(b"partial")
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []
    with AtomicFile(target) as f:
        f.write(b"x")
    assert target.read_bytes() == b"x"


def test_mode_is_a_plain_files(tmp_path):
    umask = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "m", b"x")
    finally:
        os.umask(umask)
    assert os.stat(path).st_mode & 0o777 == 0o644
