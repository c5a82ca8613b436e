"""Errors kdump raises, and the exit codes the command line maps them to.

Every error about file contents carries the byte position where the problem was found and what was
expected there, so that the message shown to a user can name the file, the position and the cause.
"""
from __future__ import annotations

# Exit codes shared by every subcommand (documented in docs/cli.md and in ``kdump --help``).
EXIT_OK = 0
EXIT_DATA = 1  # the data is damaged or unreadable (dump: printed what it could; verify: findings)
EXIT_USAGE = 2  # bad options, nothing to read, missing or unreadable files, an output that cannot be written
EXIT_INTERNAL = 70  # a bug in kdump (EX_SOFTWARE); KDUMP_DEBUG=1 shows the traceback
EXIT_INTERRUPTED = 130  # Ctrl-C


class KdumpError(Exception):
    """Base class of kdump's own errors."""

    exit_code = EXIT_DATA


class UsageError(KdumpError):
    exit_code = EXIT_USAGE


class FormatError(KdumpError):
    """Bytes that do not follow Kafka's format.

    ``code`` is a stable, machine-readable name (used by ``verify`` findings); ``position`` is the byte
    position in the file (for problems inside a compressed payload: the position of the batch holding it);
    ``message`` says what was found and what was expected; ``extent``: what a damaged stretch covers, when known
    (``length`` in bytes from ``position``, ``first_offset`` and ``last_offset`` lost; :data:`EXTENT_JSON` names
    them in JSON).
    """

    def __init__(self, code: str, message: str, *, position: int | None = None, extent: dict | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.position = position
        self.extent = extent or {}

    def at(self, position: int) -> FormatError:
        """Return this error with ``position`` filled in if it had none (callers know the batch start)."""
        if self.position is None:
            self.position = position
        return self

    def detached(self) -> FormatError:
        """Return this error without its traceback and the errors it was raised from, for keeping it after the
        raise (in a report, in the columns or the batch it describes). Their frames hold the batch and its
        decompressed records, up to the decompression limit each: a report of 1,000 kept errors would keep
        1,000 of them alive (issue 22 item 2). The message and position are all a report shows."""
        self.__traceback__ = self.__context__ = self.__cause__ = None
        return self

    def fresh(self) -> FormatError:
        """A copy of this (kept) error to raise. Raising the kept one would give it a traceback whose frames
        hold what keeps it (the columns, a local), a reference cycle that keeps the batch and its decompressed
        records alive until the garbage collector happens to run: four bombs in a row took 2 GB in ``stats``."""
        copy = Exception.__new__(type(self), *self.args)
        copy.__dict__.update(self.__dict__)
        return copy

    def __str__(self) -> str:
        if self.position is None:
            return self.message
        return f"at byte {self.position}: {self.message}"

    def __reduce__(self):
        # through pickle (the results of --jobs workers) whatever a subclass's constructor takes: its state as it is
        return _restored, (type(self), self.args, self.__dict__)


def _restored(cls, args, state):
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


# kdump's optional parts: the top-level module an optional feature imports -> the extra (pyproject.toml) that
# installs it. A command that needs one says so with its pip line and exit 2, never a traceback or exit 70.
OPTIONAL_MODULES = {
    "pyspark": "spark", "py4j": "spark", "pyarrow": "spark", "numpy": "spark",
    "fastavro": "schema-registry", "google": "schema-registry", "grpc_tools": "schema-registry",
}


class MissingExtra(UsageError):
    """An optional module is not installed (exit code 2): ``module`` (what was imported), ``extra`` (the
    pyproject extra that brings it) and ``needed_for`` (what the user asked for that needs it)."""

    def __init__(self, module: str, extra: str, needed_for: str):
        self.module, self.extra, self.needed_for = module, extra, needed_for
        super().__init__(f"{needed_for} needs {module}, which is not installed: pip install 'kdump[{extra}]'")

    def __reduce__(self):
        return type(self), (self.module, self.extra, self.needed_for)


def missing_extra(error: ImportError, needed_for: str) -> MissingExtra | None:
    """The :class:`MissingExtra` an ImportError means, when it is one of kdump's optional modules that is
    missing; None for anything else (a missing required module is a broken install, not a usage error)."""
    name = getattr(error, "name", None) or ""
    top = name.split(".")[0]
    extra = OPTIONAL_MODULES.get(top)
    return None if extra is None else MissingExtra(name, extra, needed_for)


def require_extra(needed_for: str, *modules: str) -> None:
    """Import ``modules`` (optional ones, named in :data:`OPTIONAL_MODULES`); :class:`MissingExtra` for the
    first that is not installed."""
    import importlib
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as e:
            extra = OPTIONAL_MODULES[module.split(".")[0]]
            raise MissingExtra(getattr(e, "name", None) or module, extra, needed_for) from None


class WriteError(OSError):
    """An output file could not be written (``filename`` names it): told apart from a failed read of the input."""


class OutputError(Exception):
    """Writing kdump's own output (standard output) failed: the reader went away (``EPIPE``, ``| head``) or
    the disk is full (``ENOSPC``). Not an ``OSError``, so that no handler of input errors can take it for a
    problem with the file being read."""

    def __init__(self, name: str, error: OSError):
        super().__init__(f"{name}: cannot write: {error.strerror or error}")
        self.name = name
        self.errno = error.errno
        self.strerror = error.strerror or str(error)


# What a damaged stretch covers, as every JSON of kdump names it (an error's, a finding's): ``bytes`` as every byte
# count, the offsets lost in camelCase.
EXTENT_JSON = {"length": "bytes", "first_offset": "firstOffset", "last_offset": "lastOffset"}


def error_object(path: str | None, code: str, message: str, position: int | None = None, **more) -> dict:
    """An error as every JSON output of kdump carries it, one shape in every command (docs/json.md):
    ``{"type": "error", "path", "position", "code", "message"}`` -- ``path`` the file it is about (None: the run
    as a whole), ``position`` its byte position there (None: no place in the file), ``code`` a stable name
    (docs/findings.md); ``more``: what one kind of error adds (``offset``, ``bytes``, ``firstOffset``...)."""
    return {"type": "error", "path": path, "position": position, "code": code, "message": message, **more}
