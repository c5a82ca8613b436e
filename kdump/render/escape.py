"""File names as they can be printed: a name is bytes to the kernel, and may be neither UTF-8 nor free of
control characters. Python keeps undecodable bytes as surrogates (``os.fsdecode``); printed raw they fail to
encode, and control characters would reach a terminal. Both appear here as backslash escapes (``\\xff``)."""
from __future__ import annotations

import os


def printable_path(path) -> str:
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    text = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
