"""Directories that appear whole: a staging directory beside its target that becomes it in one rename
(:class:`TemporaryDirectory`), and a finished directory swapped in for an existing one (:func:`replace_directory`)."""
from __future__ import annotations

import os
import shutil
import tempfile

from kdump.errors import WriteError
from kdump.read.logdir import temporary_affixes
from kdump.write.atomic import fsync_directory, lock_temporary, remove_path
from kdump.write.guards import NOTHING_WRITTEN, TAKEN_BACK, current_umask, write_error


class TemporaryDirectory:
    """A directory ``.<name>.<random>.tmp`` beside ``path`` that becomes ``path`` (:meth:`publish`) or is
    removed; locked while it exists (a stale one is removed by :func:`clean_leftovers` of ``path``'s name)."""

    def __init__(self, path):
        self.path = os.path.abspath(os.fspath(path))
        parent, name = os.path.split(self.path)
        prefix, suffix = temporary_affixes(name)
        try:
            self.work = tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent)
        except OSError as e:
            raise write_error(e, self.path, NOTHING_WRITTEN) from None
        self._fd: int | None = os.open(self.work, os.O_RDONLY)
        lock_temporary(self._fd)

    def write_error(self, error: WriteError) -> WriteError:
        """A write into this staging directory that failed, said of ``path`` (the staging directory is removed
        with the run): the name under ``path`` it was to have, and that nothing was left."""
        where = self.path
        if error.filename and os.path.abspath(os.fsdecode(error.filename)).startswith(os.path.join(self.work, "")):
            where = os.path.join(self.path, os.path.relpath(os.fsdecode(error.filename), self.work))
        return WriteError(error.errno, f"{error.strerror} (all or nothing: {os.path.basename(self.path)} was not "
                          "made, nothing was left)", where)

    def publish(self) -> bool:
        """Rename the directory to ``path`` in one step if ``path`` does not exist or is an empty directory;
        False (nothing done) if ``path`` is anything else by now (a directory with files, a file: another writer
        was faster). The directory gets the mode ``mkdir`` gives (the umask's, 0755 under 022): private
        (mkdtemp's 0700) only while it is kdump's staging."""
        try:
            os.chmod(self.work, 0o777 & ~current_umask())
            os.rename(self.work, self.path)
        except OSError as e:
            if os.path.lexists(self.path) and not (os.path.isdir(self.path) and not os.path.islink(self.path)
                                                   and not os.listdir(self.path)):
                return False
            raise write_error(e, self.path) from None
        self.close()
        fsync_directory(os.path.dirname(self.path))
        return True

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def remove(self) -> None:
        remove_path(self.work)
        self.close()


def replace_directory(new: str, path: str) -> None:
    """The finished directory ``new`` (beside ``path``, on its file system) becomes ``path`` in one rename; an
    existing ``path`` is first renamed aside into a kdump temporary directory (one rename: ``path`` is the old one
    until the next), then removed. A failure puts the old one back: nothing was written."""
    parent, name = os.path.split(os.path.abspath(path))
    if not os.path.lexists(path):
        try:
            os.rename(new, path)
        except OSError as e:
            raise write_error(e, path, TAKEN_BACK) from None
        return
    prefix, suffix = temporary_affixes(name)
    aside = tempfile.mkdtemp(prefix=prefix, suffix=suffix, dir=parent)
    os.rename(path, os.path.join(aside, name))
    try:
        os.rename(new, path)
    except OSError as e:
        os.rename(os.path.join(aside, name), path)
        shutil.rmtree(aside, ignore_errors=True)
        raise write_error(e, path, TAKEN_BACK) from None
    shutil.rmtree(aside, ignore_errors=True)
