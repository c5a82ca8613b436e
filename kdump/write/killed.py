"""What a killed kdump run left in a directory: its stale temporaries and the journals of its groups.

The process writing a temporary, a journal or a temporary directory holds an exclusive ``flock``
on it for as long as it exists (a kill releases it). A kdump temporary (:func:`kdump.read.logdir.kdump_temporary`)
whose lock can be taken belongs to no living process: it is *stale*. Before a group is written, the stale
temporaries of its targets and the stale journals naming them are removed (:func:`clean_leftovers`); a target a
stale journal lists and whose bytes are that journal's (size and sha256) is the interrupted run's own output: it
is replaced without ``--force`` and without a backup, so the ``.bak`` keeps the file from before that run.
``kdump verify`` and ``kdump index check`` report stale leftovers (:func:`leftovers`).

:mod:`kdump.write.leftovers` turns what is found here into findings.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from kdump.read.logdir import kdump_temporary
from kdump.write.atomic import file_sha256, fsync_directory, is_stale, remove_path


@dataclass
class Leftover:
    """A kdump temporary no living process holds. ``role``: ``data`` (a file or directory being written) or
    ``journal``; ``target``: the name it was to become (a journal: its last file); ``members``: a journal's list
    of (target, temporary, size, sha256) dicts, with ``placed`` set on those whose target now holds its bytes."""

    path: str
    role: str
    target: str
    members: list = field(default_factory=list)
    unreadable: str | None = None
    extra: dict = field(default_factory=dict)  # a journal's key, resolve, made and previous (AtomicGroup's)


def leftovers(directory) -> list[Leftover]:
    """The stale kdump temporaries and journals in ``directory``, in name order (for ``verify``/``index check``)."""
    directory = os.fspath(directory)
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    out = []
    for name in names:
        temp = kdump_temporary(name)
        path = os.path.join(directory, name)
        if temp is None or not is_stale(path):
            continue
        left = Leftover(path, temp.role, temp.target)
        if temp.role == "journal":
            _read_journal(left, directory)
        out.append(left)
    return out


def _read_journal(left: Leftover, directory: str) -> None:
    try:
        with open(left.path, encoding="utf-8") as f:
            doc = json.load(f)
        members = [dict(m) for m in doc["members"]]
        for m in members:
            target = member_path(directory, m["target"])
            m["placed"] = (os.path.isfile(target) and os.path.getsize(target) == m["size"]
                           and file_sha256(target) == m["sha256"])
        extra = {name: doc[name] for name in ("key", "resolve", "made", "previous") if name in doc}
    except (OSError, ValueError, KeyError, TypeError) as e:
        left.unreadable = str(e)
        return
    left.members = members
    left.extra = extra


def member_path(directory: str, name) -> str:
    """Where a journal's member ``name`` (its path under the journal's directory) is; a name that leaves the
    directory is no journal kdump wrote."""
    name = os.path.normpath(str(name))
    if os.path.isabs(name) or name.split(os.sep)[0] == os.pardir:
        raise ValueError(f"member {name!r} is not under the journal's directory")
    return os.path.join(directory, name)


def read_group_journal(path: str, directory: str) -> Leftover:
    temp = kdump_temporary(path)
    left = Leftover(path, "journal", temp.target if temp else "")
    _read_journal(left, directory)
    return left


def clean_leftovers(directory, targets, found: list[Leftover] | None = None) -> tuple[list[str], set[str]]:
    """Remove the stale temporaries of ``targets`` (names) in ``directory`` and the stale journals naming any of
    them (with the temporaries they list); returns (the paths removed, the target names a removed journal's group
    had already placed). A journal that cannot be read is left alone.

    ``found``: the directory's :func:`leftovers`, listed once by a caller that cleans for many targets in turn (a
    partition of thousands of segments: listing the directory for each would cost its size squared); what is
    removed here is taken out of it."""
    targets = set(targets)
    removed: list[str] = []
    placed: set[str] = set()
    if found is None:
        found = leftovers(directory)
    for left in list(found):
        if left.role == "data" and left.target in targets:
            found.remove(left)
            remove_path(left.path)
            removed.append(left.path)
        elif (left.role == "journal" and left.unreadable is None and not left.extra.get("resolve")
              and any(m["target"] in targets for m in left.members)):
            found.remove(left)
            for m in left.members:
                tmp = str(m["temporary"])
                if kdump_temporary(tmp) is not None and os.path.lexists(tmp) and is_stale(tmp):
                    remove_path(tmp)
                    removed.append(tmp)
                if m["placed"]:
                    placed.add(m["target"])
            remove_path(left.path)
            removed.append(left.path)
    if removed:
        fsync_directory(os.fspath(directory))
    return removed, placed
