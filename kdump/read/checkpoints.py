"""Kafka's text checkpoint files, which DumpLogSegments cannot read (their names have no dot, spec §1.2).

* ``leader-epoch-checkpoint`` (partition directory; ``LeaderEpochCheckpointFile``): version line ``0``,
  entry count, then ``<epoch> <startOffset>`` per line;
* ``replication-offset-checkpoint`` (high watermarks), ``recovery-point-offset-checkpoint``,
  ``log-start-offset-checkpoint``, ``cleaner-offset-checkpoint`` (log directory; ``OffsetCheckpointFile``):
  version ``0``, count, then ``<topic> <partition> <offset>`` per line;
* ``partition.metadata`` (``PartitionMetadataFile``): ``version: 0`` then ``topic_id: <base64 uuid>``.

Parsing follows Kafka's ``CheckpointFile.CheckpointReadBuffer``: lines as Java's ``readLine`` splits them
(``\\n``, ``\\r`` or ``\\r\\n``), fields split on runs of whitespace, the count must equal the number of entry
lines. Where Kafka throws, kdump records a problem with Kafka's message, the line number and the byte
position, and keeps what it could read.
"""
from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass, field

from kdump.read.logdir import (  # noqa: F401 -- re-exports the checkpoint names (imported from here)
    LEADER_EPOCH_CHECKPOINT,
    OFFSET_CHECKPOINTS,
    PARTITION_METADATA,
    TEXT_CHECKPOINT_NAMES,
    FileKind,
    classify,
)

MAX_CHECKPOINT_BYTES = 64 << 20  # a checkpoint with a million partitions is ~50 MB; refuse anything larger

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_WHITESPACE = re.compile(r"\s+")
_INT = re.compile(r"[+-]?[0-9]+")
INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)


_TEXT_KINDS = (FileKind.LEADER_EPOCH_CHECKPOINT, FileKind.OFFSET_CHECKPOINT, FileKind.PARTITION_METADATA)


def kind_of(name: str) -> str | None:
    """``leader-epoch-checkpoint``, ``offset-checkpoint``, ``partition-metadata`` or None (:mod:`kdump.read.logdir`)."""
    kind = classify(name)
    return kind.value if kind in _TEXT_KINDS else None


@dataclass
class Problem:
    code: str
    message: str
    line: int | None = None  # 1-based line number
    position: int | None = None  # byte position of that line


@dataclass
class CheckpointFile:
    path: str
    kind: str
    version: int | None = None
    declared_count: int | None = None
    entries: list = field(default_factory=list)  # tuples: (epoch, start) / (topic, partition, offset)
    entry_lines: list = field(default_factory=list)  # line number of each entry
    topic_id: str | None = None  # partition.metadata
    problems: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _lines(text: str):
    """(line number, byte position, text) as Java's BufferedReader.readLine gives them."""
    out = []
    pos = 0
    n = 1
    byte_pos = 0
    for m in _LINE_BREAK.finditer(text):
        line = text[pos:m.start()]
        out.append((n, byte_pos, line))
        byte_pos += len(text[pos:m.end()].encode("utf-8"))
        pos = m.end()
        n += 1
    if pos < len(text):
        out.append((n, byte_pos, text[pos:]))
    return out


def _java_split(line: str) -> list[str]:
    parts = _WHITESPACE.split(line)
    while parts and parts[-1] == "":  # String.split drops trailing empty strings
        parts.pop()
    return parts


def _parse_int(s: str, bounds) -> int | None:
    if not _INT.fullmatch(s):
        return None
    # Java's parseInt/parseLong take any number of leading zeros, and past 19 significant digits a value is
    # outside every bound; int() must not see those digits: above 4,300 it raises ValueError (CPython's limit)
    digits = s.lstrip("+-").lstrip("0") or "0"
    if len(digits) > 19:
        return None
    v = -int(digits) if s[0] == "-" else int(digits)
    return v if bounds[0] <= v <= bounds[1] else None


def read_text(path) -> str:
    """The file as text; invalid UTF-8 becomes U+FFFD (see :func:`utf8_problem`)."""
    return read_bytes(path).decode("utf-8", "replace")


def read_bytes(path) -> bytes:
    path = os.fspath(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size > MAX_CHECKPOINT_BYTES:
            raise ValueError(f"{size} bytes, more than kdump reads for a checkpoint file ({MAX_CHECKPOINT_BYTES})")
        return f.read()


def utf8_problem(data: bytes) -> Problem | None:
    """Kafka reads checkpoints with a strict UTF-8 reader, which throws MalformedInputException."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        return Problem("checkpoint-encoding", f"invalid UTF-8 at byte {e.start} (Kafka's reader fails here with "
                       "MalformedInputException)", line, e.start)
    return None


def parse_checkpoint(path, text: str | None = None, kind: str | None = None) -> CheckpointFile:
    """Parse a leader-epoch or offset checkpoint (``kind`` from the name unless given)."""
    path = os.fspath(path)
    kind = kind or kind_of(path) or "offset-checkpoint"
    if text is None:
        text = read_text(path)
    cp = CheckpointFile(path, kind)
    location = os.path.abspath(path)
    nfields = 2 if kind == "leader-epoch-checkpoint" else 3
    lines = _lines(text)

    def malformed(n, pos, line):
        cp.problems.append(Problem("checkpoint-malformed",
                                   f"Malformed line in checkpoint file [{location}]: {line}", n, pos))

    if not lines:
        return cp  # Kafka: an empty file is an empty checkpoint
    n, pos, line = lines[0]
    version = _parse_int(line, INT32)
    if version is None:
        malformed(n, pos, line)
        return cp
    cp.version = version
    if version != 0:
        cp.problems.append(Problem("checkpoint-version", f"Unrecognised version:{version}, expected version: 0 in "
                                   f"checkpoint file at: {location}", n, pos))
        return cp
    if len(lines) < 2:
        return cp
    n, pos, line = lines[1]
    count = _parse_int(line, INT32)
    if count is None:
        malformed(n, pos, line)
        return cp
    cp.declared_count = count
    for n, pos, line in lines[2:]:
        parts = _java_split(line)
        entry: tuple | None = None
        if len(parts) == nfields:
            if nfields == 2:
                epoch, start = _parse_int(parts[0], INT32), _parse_int(parts[1], INT64)
                if epoch is not None and start is not None:
                    entry = (epoch, start)
            else:
                part, off = _parse_int(parts[1], INT32), _parse_int(parts[2], INT64)
                if part is not None and off is not None:
                    entry = (parts[0], part, off)
        if entry is None:
            malformed(n, pos, line)
            return cp
        cp.entries.append(entry)
        cp.entry_lines.append((n, pos))
    if len(cp.entries) != count:
        cp.problems.append(Problem("checkpoint-count", f"Expected [{count}] entries in checkpoint file "
                                   f"[{location}], but found only [{len(cp.entries)}]", len(lines), None))
    return cp


def _uuid_from_base64(s: str) -> bytes | None:
    """``Uuid.fromString``: 22 characters of URL-safe base64 without padding, 16 bytes."""
    if len(s) != 22 or not re.fullmatch(r"[A-Za-z0-9_-]{22}", s):
        return None
    try:
        raw = base64.urlsafe_b64decode(s + "==")
    except ValueError:
        return None
    return raw if len(raw) == 16 else None


def uuid_hex(raw: bytes) -> str:
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def parse_partition_metadata(path, text: str | None = None) -> CheckpointFile:
    """``PartitionMetadataFile``: ``version: 0`` and ``topic_id: <uuid>``."""
    path = os.fspath(path)
    if text is None:
        text = read_text(path)
    cp = CheckpointFile(path, "partition-metadata")
    location = os.path.abspath(path)
    lines = _lines(text)

    def malformed(n, pos, line):
        cp.problems.append(Problem("checkpoint-malformed",
                                   f"Malformed line in checkpoint file [{location}]: {line}", n, pos))

    if not lines:
        malformed(1, 0, "null")
        return cp
    n, pos, line = lines[0]
    parts = _java_split(line)
    version = _parse_int(parts[1], INT32) if len(parts) == 2 else None
    if version is None:
        malformed(n, pos, line)
        return cp
    cp.version = version
    if version < 0:
        cp.problems.append(Problem("checkpoint-version", f"Unrecognized version of partition metadata file ("
                                   f"{location}): {version}", n, pos))
        return cp
    if len(lines) < 2:
        malformed(2, len(text.encode("utf-8")), "null")
        return cp
    n, pos, line = lines[1]
    parts = _java_split(line)
    if len(parts) != 2:
        malformed(n, pos, line)
        return cp
    raw = _uuid_from_base64(parts[1])
    if raw is None:
        cp.problems.append(Problem("partition-metadata-topic-id",
                                   f"topic id {parts[1]!r} is not a 22-character base64 UUID", n, pos))
        return cp
    if raw == bytes(16):
        cp.problems.append(Problem("partition-metadata-topic-id",
                                   f"Invalid topic ID in partition metadata file ({location})", n, pos))
        return cp
    cp.topic_id = parts[1]
    return cp


def parse_any(path, text: str | None = None, kind: str | None = None) -> CheckpointFile:
    """Parse a text checkpoint of any kind (from its name unless ``kind``), reporting invalid UTF-8 too."""
    kind = kind or kind_of(path)
    problem = None
    if text is None:
        data = read_bytes(path)
        problem = utf8_problem(data)
        text = data.decode("utf-8", "replace")
    cp = parse_partition_metadata(path, text) if kind == "partition-metadata" else parse_checkpoint(path, text, kind)
    if problem is not None:
        cp.problems.insert(0, problem)
    return cp


def topic_uuid(cp: CheckpointFile) -> str | None:
    """The topic id of a ``partition.metadata`` as Java's ``UUID.toString`` writes it, or None."""
    raw = _uuid_from_base64(cp.topic_id) if cp.topic_id is not None else None
    return uuid_hex(raw) if raw is not None else None
