"""The two errors of key and value decoders, in a module of their own so that decoders living outside
:mod:`kdump.decode.payload` (the Schema Registry decoder, :mod:`kdump.decode.schema_registry`) raise the same types
without importing the module that resolves decoder names (which imports them)."""
from __future__ import annotations


class DecoderError(Exception):
    """A decoder could not turn some bytes into text; the message is for a user."""


class DecoderLoadError(ValueError):
    """A decoder spec could not be resolved.

    A ``ValueError`` because it is caused by a bad argument (the spec given on
    the command line), which a CLI reports as a usage error. ``code`` names the situation where a command line can
    say what to do about it (``schemas-not-found``), else None.
    """

    def __init__(self, message: str, *, code: str | None = None):
        super().__init__(message)
        self.code = code
