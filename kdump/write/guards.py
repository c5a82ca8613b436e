"""Checks before kdump writes: what may be replaced (a regular file only, never an input), how a failed write
is said (:func:`write_error`, naming the target and what was left), and whether a new directory can be made before a
long run starts."""
from __future__ import annotations

import errno
import os
import stat

from kdump.errors import WriteError
from kdump.read.logdir import file_type_name


def refuse_irreplaceable(path: str) -> None:
    """Raise unless ``path`` is absent or a regular file: ``--force`` replaces only what kdump would have written
    (never a FIFO, a device or a socket, which writing would turn into a plain file or block on, never a
    directory, and never a symbolic link, whose target another user may own)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, f"{file_type_name(mode)}, not replaced: only a regular file is ever replaced",
                      path)


def write_error(error: OSError, path: str, left: str = "") -> OSError:
    """``error`` of writing ``path`` as a :class:`~kdump.errors.WriteError` naming ``path`` (the file that could not
    be written: never the temporary, never an input) and saying what was ``left``; a refusal (FileExistsError)
    and an error already told apart stay as they are."""
    if isinstance(error, (FileExistsError, WriteError)):
        return error
    reason = error.strerror or str(error)
    return WriteError(error.errno, f"{reason}; {left}" if left else reason, path)


NOTHING_WRITTEN = "nothing was written (no temporary is left, the old file is untouched)"
TAKEN_BACK = "nothing was written (any file already moved was moved back)"


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


class InputRefused(FileExistsError):
    """The output named is the input itself: refused whatever ``--force`` says, so no message may suggest it."""


def refuse_input(source: str, destination: str, *, directory: bool = False) -> None:
    """Raise :class:`InputRefused` when ``destination`` is ``source`` (or a link to it): kdump never writes over its
    input, whatever the output path says (convert and salvage, of a segment or of a partition directory)."""
    if os.path.exists(destination) and same_file(source, destination):
        message = ("this is the input directory, and kdump never modifies its input" if directory else
                   "this is the input itself, and kdump never modifies its input (write elsewhere with -o)")
        raise InputRefused(errno.EEXIST, message, destination)


def current_umask() -> int:
    """The process's umask (read by setting it, so set straight back)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


# --- checks before a long run ----------------------------------------------------------------------------------
def _nearest_existing(path: str) -> str:
    path = os.path.abspath(path)
    while not os.path.lexists(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def unwritable_directory(directory: str) -> OSError | None:
    """Why nothing can be created in ``directory`` (or, when it is missing, in its nearest existing parent, where
    it would be made): a read-only file system (EROFS) or no write permission (EACCES); None when it looks
    writable. A check before a run that takes long, so that it stops in a second instead of at its end; the write
    itself still decides (a full disk or a quota shows only then)."""
    existing = _nearest_existing(directory)
    if not os.path.isdir(existing):
        return NotADirectoryError(errno.ENOTDIR, "not a directory", existing)
    try:
        if os.statvfs(existing).f_flag & os.ST_RDONLY:
            return OSError(errno.EROFS, os.strerror(errno.EROFS), existing)
    except (OSError, AttributeError):
        pass
    if not os.access(existing, os.W_OK | os.X_OK):
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), existing)
    return None


def check_new_directory(path) -> None:
    """Before a run that writes the new directory ``path`` (an export, a salvaged partition): FileExistsError when
    ``path`` exists and is not an empty directory (a regular file, a symbolic link, a directory with files);
    :class:`~kdump.errors.WriteError` when it could not be created beside its parent (read-only, no permission).
    Nothing is created."""
    path = os.path.abspath(os.fspath(path))
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as e:
        raise WriteError(e.errno, e.strerror or str(e), path) from None
    if mode is not None:
        if not stat.S_ISDIR(mode):
            raise FileExistsError(errno.EEXIST, f"exists and is {file_type_name(mode)}; the output is a new "
                                  "directory", path)
        try:
            if os.listdir(path):
                raise FileExistsError(errno.EEXIST, "exists and is not empty; the output is a new directory", path)
        except OSError as e:
            if isinstance(e, FileExistsError):
                raise
            raise WriteError(e.errno, e.strerror or str(e), path) from None
    problem = unwritable_directory(os.path.dirname(path))
    if problem is not None:
        raise WriteError(problem.errno, f"{problem.strerror} (in {problem.filename}): {os.path.basename(path)} "
                         "cannot be created there", path)
