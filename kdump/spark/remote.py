"""Local and remote paths: anything ``pyarrow.fs`` opens (``s3://``, ``hdfs://``, ``gs://``, ``file://``).

kdump's reader walks local files, so a remote segment slice is spooled: the byte range a task reads is
copied (in 8 MiB reads) into a sparse temporary file at the same positions, read, and removed. Planning
lists remote directories and reads index files through the same file system.

``storage_options`` (the data source's ``fs.*`` options, prefix removed) configure the file system, e.g.
``{"endpoint_override": "localhost:9000", "scheme": "http", "access_key": ..., "secret_key": ...,
"region": ...}`` for an S3-compatible store; without them pyarrow's defaults apply (environment
credentials, ``AWS_ENDPOINT_URL``).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from urllib.parse import unquote, urlparse

CHUNK = 8 << 20


def is_remote(location: str) -> bool:
    scheme = urlparse(location).scheme
    return len(scheme) > 1 and scheme != "file"  # one letter: a Windows drive


def absolute(location: str) -> str:
    """``location`` made absolute against this process's working directory when it is a local path (a
    ``file:`` URI is its path): paths are resolved on the driver, because an executor resolves a relative path
    against its own work directory (on a cluster, ``work/app-*/N/``) and finds nothing there. Under Spark Connect
    the driver is the server, which runs a session's Python in a folder of its own, not where the client runs: a
    relative path is refused there (ValueError), since no process that sees it knows the client's directory."""
    if is_remote(location):
        return location
    parsed = urlparse(location)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise ValueError(f"{location}: a file: URI names a path on this machine (file:///path), not on "
                             f"{parsed.netloc}")
        location = unquote(parsed.path)
    if not os.path.isabs(location):
        folder = session_folder()
        if folder is not None:
            raise ValueError(f"{location}: a relative path would be read from the Spark Connect server's session "
                             f"folder ({folder}), not from the client's directory: give an absolute path")
    return os.path.abspath(location)


def session_folder() -> str | None:
    """The folder a Spark Connect server runs this session's Python in (its working directory, inside the
    server's SparkFiles root), or None when this process runs where the driver program does."""
    try:
        from pyspark.core.files import SparkFiles
    except ImportError:
        return None
    root = getattr(SparkFiles, "_root_directory", None)
    if not root or not getattr(SparkFiles, "_is_running_on_worker", False):
        return None
    here, root = os.path.realpath(os.getcwd()), os.path.realpath(root)
    return here if here == root or here.startswith(root + os.sep) else None


def filesystem(location: str, storage_options: dict | None = None):
    """``(pyarrow FileSystem, path inside it)`` for a remote location."""
    from pyarrow import fs
    opts = dict(storage_options or {})
    parsed = urlparse(location)
    if parsed.scheme == "s3" and opts:
        s3 = fs.S3FileSystem(**_s3_kwargs(opts))
        return s3, (parsed.netloc + parsed.path).rstrip("/")
    filesystem_, path = fs.FileSystem.from_uri(location)
    return filesystem_, path.rstrip("/")


def _s3_kwargs(opts: dict) -> dict:
    known = {"endpoint_override", "scheme", "access_key", "secret_key", "session_token", "region",
             "allow_bucket_creation", "anonymous"}
    unknown = set(opts) - known
    if unknown:
        raise ValueError(f"unknown fs.* option(s) for s3: {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(sorted(known))}")
    out = dict(opts)
    for flag in ("allow_bucket_creation", "anonymous"):
        if flag in out:
            out[flag] = str(out[flag]).lower() in ("1", "true", "yes")
    return out


def join(location: str, name: str) -> str:
    return location.rstrip("/") + "/" + name


def listdir(location: str, storage_options=None) -> list[tuple[str, bool, int]]:
    """``(name, is_directory, size)`` of the entries of a remote directory."""
    from pyarrow import fs
    filesystem_, path = filesystem(location, storage_options)
    infos = filesystem_.get_file_info(fs.FileSelector(path, allow_not_found=False))
    return [(i.base_name, i.type == fs.FileType.Directory, i.size or 0) for i in infos]


def stat(location: str, storage_options=None) -> tuple[bool, bool, int]:
    """``(exists, is_directory, size)``."""
    from pyarrow import fs
    filesystem_, path = filesystem(location, storage_options)
    info = filesystem_.get_file_info(path)
    return info.type != fs.FileType.NotFound, info.type == fs.FileType.Directory, info.size or 0


def read_range(location: str, start: int, length: int, storage_options=None) -> bytes:
    filesystem_, path = filesystem(location, storage_options)
    with filesystem_.open_input_file(path) as f:
        return f.read_at(length, start)


@contextlib.contextmanager
def local_copy(sl, storage_options=None):
    """A local path holding at least the bytes ``[sl.start, sl.end)`` of the slice's segment at their
    own positions (the segment itself when it is local)."""
    if not is_remote(sl.location):
        yield urlparse(sl.location).path if sl.location.startswith("file:") else sl.location
        return
    filesystem_, path = filesystem(sl.location, storage_options)
    fd, tmp = tempfile.mkstemp(prefix="kdump-spool-", suffix="-" + os.path.basename(path))
    try:
        with os.fdopen(fd, "wb") as out, filesystem_.open_input_file(path) as f:
            size = f.size()
            end = size if sl.end is None else min(sl.end, size)
            pos = sl.start
            out.truncate(end)  # sparse: the bytes before start are never read
            out.seek(pos)
            while pos < end:
                chunk = f.read_at(min(CHUNK, end - pos), pos)
                if not chunk:
                    break
                out.write(chunk)
                pos += len(chunk)
        yield tmp
    finally:
        os.unlink(tmp)
