"""SHA-256s computed beside the work that needs them (what a writer wrote, what a conversion meant to write
and what it reads back).

hashlib releases the GIL while it hashes more than 2 KiB, so a worker thread hashing what it is handed runs on
another core while the caller goes on with its own (Python) work; on one core it costs what the hashing did
before. The digests are the same values either way.
"""
from __future__ import annotations

import hashlib
import os
import queue
import threading
import weakref
from concurrent.futures import Future


class BackgroundSha256:
    """A sha256 fed from a worker thread: :meth:`update` hands the bytes over (small pieces gathered to
    ``GATHER`` bytes first, as hashlib keeps the GIL below 2 KiB; the thread starts with the first piece handed
    over, so a small file is hashed here), :meth:`digest`/:meth:`hexdigest` wait for what was handed over. At
    most ``depth`` gathered pieces wait, so memory stays bounded. Bytes are hashed as they were when handed
    over (a bytearray or memoryview is copied)."""

    GATHER = 1 << 18
    LARGE = 1 << 20  # a piece above this many bytes is hashed at once rather than copied to be handed over

    def __init__(self, depth: int = 2):
        self._hash = hashlib.sha256()
        self._depth = depth
        self._queue: queue.Queue | None = None
        self._parts: list[bytes] = []
        self._size = 0

    def _work(self, pieces: queue.Queue) -> None:
        while (piece := pieces.get()) is not None:
            self._hash.update(piece)
            pieces.task_done()
        pieces.task_done()

    def update(self, data) -> None:
        if len(data) > self.LARGE:  # hashed here, after what was handed over: not copied (a value of 255 MiB)
            self._caught_up().update(data)
            return
        self._parts.append(bytes(data))  # the same object for bytes
        self._size += len(data)
        if self._size >= self.GATHER:
            if self._queue is None:
                self._queue = queue.Queue(self._depth)
                threading.Thread(target=self._work, args=(self._queue,), name="kdump-sha256", daemon=True).start()
                weakref.finalize(self, self._queue.put, None)  # the worker ends with this object
            self._queue.put(self._parts[0] if len(self._parts) == 1 else b"".join(self._parts))
            self._parts = []
            self._size = 0

    def _caught_up(self):
        if self._queue is not None:
            self._queue.join()
        for part in self._parts:
            self._hash.update(part)
        self._parts = []
        self._size = 0
        return self._hash

    def digest(self) -> bytes:
        """The sha256 of everything handed over so far (more may follow)."""
        return self._caught_up().digest()

    def hexdigest(self) -> str:
        return self._caught_up().hexdigest()


#: a file up to this size is hashed by the caller: starting and joining a thread costs more than hashing it
#: (a 4 KiB segment's convert spent more in thread start-up and the wait than in all its hashing)
INLINE_FILE_BYTES = 1 << 20


def file_sha256_beside(path) -> Future:
    """The sha256 (hex) of the file at ``path``, read and hashed by a worker thread (a small file here, at
    once): ``.result()`` waits."""
    future: Future = Future()

    def work() -> None:
        try:
            digest = hashlib.sha256()
            with open(path, "rb") as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
            future.set_result(digest.hexdigest())
        except BaseException as e:  # handed to whoever waits for the result
            future.set_exception(e)

    try:
        small = os.stat(path).st_size <= INLINE_FILE_BYTES
    except OSError:
        small = True  # (the error is the reader's to report, through the future)
    if small:
        work()
    else:
        threading.Thread(target=work, name="kdump-file-sha256", daemon=True).start()
    return future
