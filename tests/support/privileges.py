"""Tests that need a file kdump cannot read, when the suite runs as root (as CI may): root reads a file of mode 000
through two Linux capabilities, CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH. :func:`without_read_anything` takes them
out of this thread's effective set for a block (they stay permitted, so they come back after it): the run inside
sees a mode-000 file as any user does (EACCES). Processes forked inside the block inherit the reduced set."""
from __future__ import annotations

import contextlib
import ctypes
import os
import sys

_CAPABILITY_VERSION_3 = 0x20080522  # linux/capability.h: two 32-bit words per set
CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 1, 2


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _call(name: str, header: _Header, data) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if getattr(libc, name)(ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")


def can_drop() -> bool:
    """Whether this process can make a mode-000 file unreadable to itself: not root (nothing to drop), or root on
    Linux, where the capabilities can be dropped."""
    return os.geteuid() != 0 or sys.platform.startswith("linux")


@contextlib.contextmanager
def without_read_anything():
    """The block runs without root's power to read any file (nothing changes for another user)."""
    if os.geteuid() != 0:
        yield
        return
    header, data = _Header(_CAPABILITY_VERSION_3, 0), (_Data * 2)()
    _call("capget", header, data)
    saved = data[0].effective
    data[0].effective &= ~((1 << CAP_DAC_OVERRIDE) | (1 << CAP_DAC_READ_SEARCH)) & 0xFFFFFFFF
    _call("capset", header, data)
    try:
        yield
    finally:
        data[0].effective = saved
        _call("capset", header, data)
