"""kdump.write.digests: SHA-256s computed by a worker thread give hashlib's values, whatever the pieces."""
from __future__ import annotations

import hashlib
import os
import random

import pytest

from kdump.write.digests import BackgroundSha256, file_sha256_beside


@pytest.mark.parametrize("seed", range(5))
def test_same_digest_as_hashlib_for_any_pieces(seed):
    rnd = random.Random(seed)
    ours, want = BackgroundSha256(depth=2), hashlib.sha256()
    for _ in range(60):  # small pieces gathered, big ones handed over at once, and everything between
        piece = os.urandom(rnd.choice([0, 1, 100, 5000, BackgroundSha256.GATHER - 1, BackgroundSha256.GATHER * 3]))
        ours.update(piece)
        want.update(piece)
        if rnd.random() < 0.1:  # a digest on the way does not end it
            assert ours.hexdigest() == want.hexdigest()
    assert ours.hexdigest() == want.hexdigest()
    assert ours.digest() == want.digest()


def test_bytes_are_hashed_as_they_were_handed_over():
    """A bytearray changed after update: the digest is of what it held then (it was copied)."""
    data = bytearray(os.urandom(BackgroundSha256.GATHER * 2))
    ours = BackgroundSha256()
    ours.update(data)
    ours.update(memoryview(data)[:10])
    want = hashlib.sha256(bytes(data) + bytes(data[:10])).hexdigest()
    data[:] = bytes(len(data))
    assert ours.hexdigest() == want


def test_a_small_input_needs_no_thread():
    ours = BackgroundSha256()
    ours.update(b"abc")
    assert ours._queue is None and ours.hexdigest() == hashlib.sha256(b"abc").hexdigest()


def test_file_digest_beside(tmp_path):
    path = tmp_path / "f"
    data = os.urandom(3 << 20)
    path.write_bytes(data)
    assert file_sha256_beside(path).result() == hashlib.sha256(data).hexdigest()
    with pytest.raises(FileNotFoundError):
        file_sha256_beside(tmp_path / "missing").result()


def test_a_small_file_is_hashed_without_a_thread(tmp_path, monkeypatch):
    import threading

    from kdump.write import digests
    started = []
    monkeypatch.setattr(threading.Thread, "start", lambda self: started.append(self.name))
    small = tmp_path / "small"
    small.write_bytes(b"x" * 4096)
    future = file_sha256_beside(small)
    assert future.done() and future.result() == hashlib.sha256(b"x" * 4096).hexdigest()
    assert started == []
    large = tmp_path / "large"
    large.write_bytes(b"y" * (digests.INLINE_FILE_BYTES + 1))
    file_sha256_beside(large)
    assert started == ["kdump-file-sha256"]
