"""Kafka's log-directory layout, in one place: file kinds, names, siblings, partitions and what to visit.

Names (``LogFileUtils``, ``Snapshots``, ``UnifiedLog``, spec §5.1):

* a **segment** is ``<digits>.log``: the number before the dot is its base offset, parsed as Kafka's
  ``offsetFromFileName`` parses it (``Long.parseLong`` of the name up to the first dot). Kafka writes 20 digits
  (``%020d``); fewer are accepted, so ``5.log`` is the segment with base offset 5. Any other name ending in
  ``.log`` (``notes.log``) is a file of unknown kind. This is the one rule every command uses for the files of a
  directory; a file *named on the command line* is read by its suffix alone, as Kafka's DumpLogSegments
  dispatches (:func:`named_kind`), so ``kdump dump copied.log`` still reads it (and says its offsets are unknown);
* its indexes are ``<digits>.index``, ``.timeindex``, ``.txnindex`` (same digits rule); a producer state snapshot
  is ``<digits>.snapshot`` (the offset it covers up to); a KRaft snapshot is ``<20-digit end offset>-<10-digit
  epoch>.checkpoint`` (fixed widths, as ``Snapshots.parse`` reads them) or ``bootstrap.checkpoint``;
* files being deleted, cleaned or swapped in carry ``.deleted``, ``.cleaned``, ``.swap`` after their own name;
  ``.checkpoint.part`` and ``<checkpoint>.tmp`` are Kafka's own files being written;
* text files: ``leader-epoch-checkpoint``, ``partition.metadata`` (partition directory),
  ``replication-offset-checkpoint``, ``recovery-point-offset-checkpoint``, ``log-start-offset-checkpoint``,
  ``cleaner-offset-checkpoint``, ``meta.properties`` (log directory); ``.lock``, ``.kafka_cleanshutdown`` and
  ``quorum-state`` are the broker's state; ``.kdump.lock`` is held by a kdump run writing files in the directory
  (:func:`kdump.write.lock.partition_lock`; removed at its end, left only by a killed run, and never data);
* kdump's temporaries (:mod:`kdump.write.atomic`, :func:`kdump_temporary`): ``.<target name>.<random>.tmp`` (a file, or
  the directory a partition is converted into, being written), ``.<target name>.<random>.group.tmp`` (the journal
  of a group of files being renamed into place together) and, from older kdump versions, ``.bak.<random>.tmp``; its
  kept backup is ``<name>.bak`` (older versions also wrote ``<name>.bak.<n>``); a Spark write
  (:mod:`kdump.spark.write`) fills ``.kdump-staging-<id>`` (:func:`is_kdump_staging`) before its commit moves the
  segments into place: partition directories that are not data yet;
* a partition directory is ``<topic>-<partition>`` (the topic may hold dashes and dots: the partition is after the
  last dash), or ``<topic>-<partition>.<unique id>-delete`` / ``-future`` / ``-stray`` while Kafka deletes, moves
  or sets aside a replica (``UnifiedLog.parseTopicPartitionName``).

The sibling of a file is built from its own name up to the first dot (``5.log`` -> ``5.index``), so a segment and
its indexes always share their digits.

:func:`list_directory` is the one listing of a directory (each name stat()ed, classified, and refused when it is
not a regular file or a directory: opening a FIFO blocks until a writer comes); :class:`Partition` sorts one
directory's files by kind, and :mod:`kdump.read.scan` walks command-line paths down to partitions with it.
"""
from __future__ import annotations

import enum
import errno
import os
import re
import stat
from dataclasses import dataclass


class FileKind(enum.Enum):
    LOG = "log"
    INDEX = "index"
    TIMEINDEX = "timeindex"
    TXNINDEX = "txnindex"
    PRODUCER_SNAPSHOT = "snapshot"
    KRAFT_CHECKPOINT = "checkpoint"
    LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
    PARTITION_METADATA = "partition-metadata"
    OFFSET_CHECKPOINT = "offset-checkpoint"
    META_PROPERTIES = "meta-properties"
    BROKER_STATE = "broker-state"  # .lock, .kafka_cleanshutdown, quorum-state
    DELETED = "deleted"
    SWAP = "swap"
    CLEANED = "cleaned"
    KAFKA_TEMP = "kafka-temp"  # .checkpoint.part, <checkpoint>.tmp: Kafka is writing it
    KDUMP_TEMP = "kdump-temp"
    KDUMP_BACKUP = "kdump-backup"
    KDUMP_LOCK = "kdump-lock"  # .kdump.lock: a kdump run writing files here holds it (write.lock.partition_lock)
    UNKNOWN = "unknown"


SUFFIXES = {FileKind.LOG: ".log", FileKind.INDEX: ".index", FileKind.TIMEINDEX: ".timeindex",
            FileKind.TXNINDEX: ".txnindex", FileKind.PRODUCER_SNAPSHOT: ".snapshot"}
_BY_SUFFIX = {suffix: kind for kind, suffix in SUFFIXES.items()}
SEGMENT_COMPANIONS = (FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX)
# files a partition's segments are read with (dumped with ``companions``, checked by ``index check``)
COMPANION_KINDS = frozenset((*SEGMENT_COMPANIONS, FileKind.PRODUCER_SNAPSHOT))
TEXT_KINDS = frozenset((FileKind.LEADER_EPOCH_CHECKPOINT, FileKind.PARTITION_METADATA, FileKind.OFFSET_CHECKPOINT))

LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
PARTITION_METADATA = "partition.metadata"
OFFSET_CHECKPOINTS = {
    "replication-offset-checkpoint": "high watermark per partition",
    "recovery-point-offset-checkpoint": "recovery point per partition (offset up to which the log was flushed)",
    "log-start-offset-checkpoint": "log start offset per partition",
    "cleaner-offset-checkpoint": "log cleaner checkpoint per partition (first offset not yet cleaned)",
}
HIGH_WATERMARK_CHECKPOINT = "replication-offset-checkpoint"
TEXT_CHECKPOINT_NAMES = frozenset([LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA, *OFFSET_CHECKPOINTS])
BOOTSTRAP_CHECKPOINT = "bootstrap.checkpoint"
_EXACT = {LEADER_EPOCH_CHECKPOINT: FileKind.LEADER_EPOCH_CHECKPOINT, PARTITION_METADATA: FileKind.PARTITION_METADATA,
          "meta.properties": FileKind.META_PROPERTIES, BOOTSTRAP_CHECKPOINT: FileKind.KRAFT_CHECKPOINT,
          ".lock": FileKind.BROKER_STATE, ".kafka_cleanshutdown": FileKind.BROKER_STATE,
          "quorum-state": FileKind.BROKER_STATE, ".kdump.lock": FileKind.KDUMP_LOCK,
          **{n: FileKind.OFFSET_CHECKPOINT for n in OFFSET_CHECKPOINTS}}
_TRANSIENT = {".deleted": FileKind.DELETED, ".cleaned": FileKind.CLEANED, ".swap": FileKind.SWAP}

_OFFSET_NAME = re.compile(r"([0-9]+)(\.[a-z]+)")  # <digits>.<suffix>, the whole name
_KRAFT_SNAPSHOT = re.compile(r"([0-9]{20})-([0-9]{10})\.checkpoint")
_KDUMP_TEMP = re.compile(r"\..+\.tmp")  # tempfile.mkstemp(prefix=".<name>." or ".bak.", suffix=".tmp")
# the parts of a kdump temporary name: mkstemp's 8 random characters between the target's name and the suffix
_KDUMP_DATA_TEMP = re.compile(r"\.(.+)\.([a-z0-9_]{8})\.tmp")
_KDUMP_GROUP_JOURNAL = re.compile(r"\.(.+)\.([a-z0-9_]{8})\.group\.tmp")
TEMP_SUFFIX = ".tmp"
GROUP_JOURNAL_SUFFIX = ".group.tmp"
BACKUP_SUFFIX = ".bak"
_KDUMP_BACKUP = re.compile(r".+\.bak(\.[0-9]+)?")
KDUMP_STAGING_PREFIX = ".kdump-staging-"
KDUMP_LOCK = ".kdump.lock"
_PARTITION_DIR = re.compile(r"(\S+)-(\S+)\.(\S+)-(delete|future|stray)")
INT64_MAX = 2**63 - 1
INT32_MAX = 2**31 - 1


def _name(path) -> str:
    return os.path.basename(os.fspath(path).rstrip("/") or "/")


def classify(path) -> FileKind:
    """The kind of a file of a Kafka directory, from its name alone (the disk is not touched)."""
    name = _name(path)
    kind = _EXACT.get(name)
    if kind is not None:
        return kind
    m = _OFFSET_NAME.fullmatch(name)
    if m:
        kind = _BY_SUFFIX.get(m.group(2))
        if kind is not None and int(m.group(1)) <= INT64_MAX:
            return kind
        return FileKind.UNKNOWN
    if _KRAFT_SNAPSHOT.fullmatch(name):
        return FileKind.KRAFT_CHECKPOINT
    if _KDUMP_TEMP.fullmatch(name):
        return FileKind.KDUMP_TEMP
    if _KDUMP_BACKUP.fullmatch(name):
        return FileKind.KDUMP_BACKUP
    dot = name.rfind(".")
    if dot > 0:
        transient = _TRANSIENT.get(name[dot:])
        if transient is not None:
            return transient
        if name.endswith(".checkpoint.part") or (name.endswith(".tmp") and name[:-4] in _EXACT):
            return FileKind.KAFKA_TEMP
    return FileKind.UNKNOWN


@dataclass(frozen=True)
class KdumpTemporary:
    """What a kdump temporary name says: ``target`` is the name of the file (or directory) it becomes, or for a
    group journal the name of the group's last file; ``role`` is ``data`` (bytes being written, or a directory
    being filled) or ``journal`` (a group being renamed into place, :class:`kdump.write.group.AtomicGroup`)."""

    target: str
    role: str


def kdump_temporary(path) -> KdumpTemporary | None:
    """The parts of a kdump temporary name, or None if ``path`` is not one (an old ``.bak.<random>.tmp`` gives the
    target ``bak``, which no command writes)."""
    name = _name(path)
    m = _KDUMP_GROUP_JOURNAL.fullmatch(name)
    if m:
        return KdumpTemporary(m.group(1), "journal")
    m = _KDUMP_DATA_TEMP.fullmatch(name)
    if m:
        return KdumpTemporary(m.group(1), "data")
    return None


def temporary_affixes(target_name: str, role: str = "data") -> tuple[str, str]:
    """(prefix, suffix) for ``tempfile.mkstemp``/``mkdtemp`` of a kdump temporary of ``target_name``, so that
    :func:`kdump_temporary` reads it back."""
    return f".{target_name}.", GROUP_JOURNAL_SUFFIX if role == "journal" else TEMP_SUFFIX


def backup_path(path) -> str:
    """Where kdump keeps the file it replaced at ``path``: ``<path>.bak`` (one, the previous one replaced)."""
    return os.fspath(path) + BACKUP_SUFFIX


# Kinds of a file that Kafka (or kdump) set aside under its own name plus a suffix: what it holds is that name's.
SET_ASIDE_KINDS = frozenset((FileKind.DELETED, FileKind.CLEANED, FileKind.SWAP, FileKind.KDUMP_BACKUP))


def set_aside_name(path) -> str | None:
    """The name a file set aside had before its suffix (``5.log`` for ``5.log.deleted``, ``.cleaned``,
    ``.swap``, kdump's ``5.log.bak`` and ``5.log.bak.2``); None for any other name."""
    name = _name(path)
    kind = classify(name)
    if kind is FileKind.KDUMP_BACKUP:
        return re.sub(r"\.bak(\.[0-9]+)?$", "", name)
    if kind in SET_ASIDE_KINDS:
        return name[:name.rfind(".")]
    return None


def named_kind(path) -> FileKind:
    """How a file named on the command line is read: by :func:`classify`, except that a name Kafka's tool would
    dispatch on its suffix (``copied.log``, ``x.index``, ``old.checkpoint``) is read as that kind, whose offsets
    are then not known from the name (DumpLogSegments dispatches on the text after the last dot, spec §1.2), and
    a file set aside (``5.log.deleted``, ``.cleaned``, ``.swap``, ``.bak``) as the kind of the name it had. A
    name that says nothing is :data:`FileKind.UNKNOWN`: :func:`read_kind` says how such a named file is read."""
    kind = classify(path)
    if kind in SET_ASIDE_KINDS:
        inner = set_aside_name(path)
        return named_kind(inner) if inner else FileKind.UNKNOWN
    if kind is not FileKind.UNKNOWN:
        return kind
    name = _name(path)
    suffix = name[name.rfind("."):] if "." in name else ""
    if suffix == ".checkpoint":
        return FileKind.KRAFT_CHECKPOINT
    return _BY_SUFFIX.get(suffix, FileKind.UNKNOWN)


def read_kind(path) -> FileKind:
    """How a file the user named is read: as :func:`named_kind` says, and a name that says nothing
    (``segment.bin``, ``dump-of-partition-3``) as a log segment, whose bytes then decide: a segment is read
    whatever its name, and a file that is no Kafka log is said to be one by the reader (its first entry header),
    never skipped as an unknown name (``kdump verify`` reads a named file so too)."""
    kind = named_kind(path)
    return FileKind.LOG if kind is FileKind.UNKNOWN else kind


def named_base_offset(path) -> int | None:
    """The base offset of a named segment or index from its name: :func:`segment_base_offset`, also through a
    set-aside suffix (``5.log.deleted`` -> 5); None when the name does not give one."""
    inner = set_aside_name(path)
    return segment_base_offset(inner if inner is not None else path)


_SEGMENT_NAME = re.compile(r"^(\d+)\.")


def base_offset_from_name(path) -> int | None:
    """Kafka's ``offsetFromFileName``: the number before the first dot, or None if there is none."""
    m = _SEGMENT_NAME.match(os.path.basename(os.fspath(path)))
    return int(m.group(1)) if m else None


def segment_base_offset(path) -> int | None:
    """The base offset of a segment or of one of its indexes (``<digits>.log|.index|.timeindex|.txnindex``), None
    for any other name."""
    if classify(path) in (FileKind.LOG, *SEGMENT_COMPANIONS):
        return int(_name(path).split(".", 1)[0])
    return None


def snapshot_offset(path) -> int | None:
    """The offset a producer snapshot ``<digits>.snapshot`` covers up to (exclusive), else None."""
    return int(_name(path).split(".", 1)[0]) if classify(path) is FileKind.PRODUCER_SNAPSHOT else None


def kraft_snapshot_id(path) -> tuple[int, int] | None:
    """(end offset, epoch) of a KRaft snapshot ``<20 digits>-<10 digits>.checkpoint``; None otherwise (also for
    ``bootstrap.checkpoint``, which has neither)."""
    m = _KRAFT_SNAPSHOT.fullmatch(_name(path))
    return (int(m.group(1)), int(m.group(2))) if m else None


def file_name(base_offset: int, kind: FileKind) -> str:
    """Kafka's name for a segment file (``LogFileUtils.filenamePrefixFromOffset``): the base offset zero-padded
    to 20 digits, then the kind's suffix (``00000000000000000042.log``)."""
    return f"{base_offset:020d}{SUFFIXES[kind]}"


def sibling(path, kind: FileKind) -> str:
    """The file of ``kind`` beside ``path`` for the same offset: the name up to its first dot, then the kind's
    suffix (``…/00000000000000000042.log`` -> ``…/00000000000000000042.index``)."""
    directory, name = os.path.split(os.fspath(path))
    return os.path.join(directory, name.split(".", 1)[0] + SUFFIXES[kind])


def topic_partition(dir_name) -> tuple[str, int] | None:
    """(topic, partition) of a partition directory name as ``UnifiedLog.parseTopicPartitionName`` reads it, or
    None where Kafka would refuse the directory: ``orders-3``, ``my-topic.v2-0``, ``orders-3.<id>-delete``
    (also ``-future``, ``-stray``). The partition is the text after the last dash, a 32-bit integer (``+`` allowed,
    as ``Integer.parseInt`` allows it)."""
    name = _name(dir_name)
    if "-" not in name:
        return None
    if name.endswith(("-delete", "-future", "-stray")):
        if not _PARTITION_DIR.fullmatch(name):
            return None
        name = name[:name.rindex(".")]
    dash = name.rindex("-")
    topic, number = name[:dash], name[dash + 1:]
    if not topic or not re.fullmatch(r"\+?[0-9]+", number, re.ASCII) or int(number) > INT32_MAX:
        return None
    return topic, int(number)


def is_hidden(path) -> bool:
    """A name starting with a dot: a directory no command searches for data. Kafka names no directory so;
    kdump's staging directories (``.kdump-staging-<id>``) and temporaries (``.<target>.<random>.tmp``: a Spark
    write or a conversion not yet committed) are named so on purpose, and Spark's file sources pass over such
    paths too."""
    return _name(path).startswith(".")


def is_kdump_staging(path) -> bool:
    """A directory a Spark write of kdump's is filling (``.kdump-staging-<id>``): segments that are not data until
    the write commits, never read by a command that searches a directory."""
    return _name(path).startswith(KDUMP_STAGING_PREFIX)


def directory_state(dir_name) -> str | None:
    """``delete``, ``future`` or ``stray`` for a partition directory Kafka is deleting, moving in, or has set
    aside; None for a live one (or a name that is no partition directory)."""
    name = _name(dir_name)
    m = _PARTITION_DIR.fullmatch(name)
    return m.group(4) if m else None


@dataclass
class Segment:
    """A segment and its indexes; a path is None when that file is absent (``log`` is None for indexes whose
    segment is missing, see :attr:`Partition.orphans`)."""

    base_offset: int
    log: str | None = None
    index: str | None = None
    timeindex: str | None = None
    txnindex: str | None = None

    def path(self, kind: FileKind) -> str | None:
        return getattr(self, kind.value)

    def expected(self, kind: FileKind) -> str:
        """Where the file of ``kind`` of this segment is (or would be)."""
        present = self.log or self.index or self.timeindex or self.txnindex
        return sibling(present, kind)


@dataclass
class LogSegment(Segment):
    """A :class:`Segment` whose log is present: what :attr:`Partition.segments` holds."""

    log: str = ""


@dataclass
class Refused:
    """A path a command cannot read, and why (missing, a symlink loop, not a regular file, unlistable)."""

    path: str
    reason: str
    errno: int = 0

    def as_oserror(self) -> OSError:
        return OSError(self.errno, self.reason, self.path)


def stat_or_refusal(path: str) -> os.stat_result | Refused:
    """stat() following links, or a refusal for what cannot or must not be opened."""
    try:
        st = os.stat(path)
    except OSError as e:
        reason = e.strerror or str(e)
        if e.errno == errno.ENOENT and os.path.islink(path):
            reason = "a symbolic link to nothing (No such file or directory)"
        elif e.errno == errno.ELOOP:
            reason = "too many levels of symbolic links (a symlink loop)"
        return Refused(path, reason, e.errno or 0)
    if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
        return st
    return Refused(path, f"{file_type_name(st.st_mode)}, not a regular file: not opened (reading it could block "
                         "or never end)", errno.EINVAL)


def file_type_name(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, for a message that refuses it (a regular file: "a regular file")."""
    if stat.S_ISREG(mode):
        return "a regular file"
    return ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
            else "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")


@dataclass(frozen=True)
class Listed:
    """One name of a directory listing: its ``path``, ``kind`` (:func:`classify`), whether it leads to a directory,
    its ``size``, its ``identity`` (what every link to the same file shares: (device, inode) on a local disk), or
    why it is ``refused`` (not a regular file or a directory, a dangling link, a loop)."""

    name: str
    path: str
    kind: FileKind
    is_dir: bool = False
    size: int = 0
    identity: object = None
    refused: Refused | None = None


def list_directory(directory) -> list[Listed]:
    """The one listing of a local directory, in name order, every entry stat()ed (links followed) and classified,
    and refused (never opened) when it is not a regular file or a directory. Raises OSError when the directory
    cannot be listed. :class:`Partition` and :func:`kdump.read.scan.scan` both read directories through it."""
    directory = os.fspath(directory)
    return [listed(os.path.join(directory, name)) for name in sorted(os.listdir(directory))]


def listed(path) -> Listed:
    """A local path as a :class:`Listed` (stat()ed, links followed; refused when it must not be opened)."""
    path = os.fspath(path)
    name = _name(path)
    found = stat_or_refusal(path)
    if isinstance(found, Refused):
        return Listed(name, path, classify(name), refused=found)
    return Listed(name, path, classify(name), stat.S_ISDIR(found.st_mode), found.st_size, (found.st_dev, found.st_ino))


class Partition:
    """The Kafka files of one directory, by kind (a partition directory, or any directory of segments).

    ``segments``: :class:`Segment` with a log, in offset order; ``orphans``: indexes without their segment;
    ``snapshots``: (offset, path) of producer snapshots in offset order; ``kraft_snapshots``: KRaft snapshot paths
    in name order; ``checkpoints``: kind -> path of the text checkpoints here; ``files``: (path, kind) of every
    regular file, in name order; ``refused``: entries that are not regular files; ``subdirectories``.
    :meth:`rescan` reads the directory again (after a segment roll). ``listing``: the directory's
    :func:`list_directory`, when the caller has just made it (the directory is then not listed again)."""

    def __init__(self, directory, listing: list[Listed] | None = None):
        self.directory = os.fspath(directory)
        named = topic_partition(self.directory)
        self.topic: str | None
        self.partition: int | None
        self.topic, self.partition = named if named is not None else (None, None)
        self._sort(list_directory(self.directory) if listing is None else listing)

    def rescan(self) -> Partition:
        self._sort(list_directory(self.directory))
        return self

    def _sort(self, listing: list[Listed]) -> None:
        self.files: list[tuple[str, FileKind]] = []
        self.refused: list[Refused] = []
        self.subdirectories: list[str] = []
        self.snapshots: list[tuple[int, str]] = []
        self.kraft_snapshots: list[str] = []
        self.checkpoints: dict[FileKind, str] = {}
        by_base: dict[int, Segment] = {}
        for entry in listing:
            name, path, kind = entry.name, entry.path, entry.kind
            if entry.refused is not None:
                self.refused.append(entry.refused)
                continue
            if entry.is_dir:
                self.subdirectories.append(path)
                continue
            self.files.append((path, kind))
            if kind is FileKind.LOG or kind in SEGMENT_COMPANIONS:
                base = int(name.split(".", 1)[0])
                seg = by_base.get(base)
                if seg is None:
                    seg = by_base[base] = Segment(base)
                if getattr(seg, kind.value) is None:  # 5.log and 005.log: the first in name order
                    setattr(seg, kind.value, path)
            elif kind is FileKind.PRODUCER_SNAPSHOT:
                self.snapshots.append((int(name.split(".", 1)[0]), path))
            elif kind is FileKind.KRAFT_CHECKPOINT:
                self.kraft_snapshots.append(path)
            elif kind in TEXT_KINDS and kind is not FileKind.OFFSET_CHECKPOINT:
                self.checkpoints[kind] = path
            elif kind is FileKind.OFFSET_CHECKPOINT:
                self.checkpoints.setdefault(kind, path)
        ordered = [by_base[b] for b in sorted(by_base)]
        self.segments: list[LogSegment] = [LogSegment(**vars(s)) for s in ordered if s.log is not None]
        self.orphans = [s for s in ordered if s.log is None]
        self.snapshots.sort()

    def files_of(self, *kinds: FileKind) -> list[str]:
        return [p for p, k in self.files if k in kinds]

    def segment_at(self, base_offset: int) -> Segment | None:
        return next((s for s in self.segments + self.orphans if s.base_offset == base_offset), None)

    @property
    def is_partition(self) -> bool:
        """Holds a partition's files: segments, indexes, snapshots, KRaft snapshots or a leader epoch checkpoint."""
        return bool(self.segments or self.orphans or self.snapshots or self.kraft_snapshots
                    or FileKind.LEADER_EPOCH_CHECKPOINT in self.checkpoints)

    def __repr__(self) -> str:
        return f"Partition({self.directory!r}, segments={[s.base_offset for s in self.segments]})"


@dataclass
class Entry:
    """One file to visit: ``kind`` (by :func:`classify` for a file found in a directory, :func:`named_kind` for a
    file named by the user), ``from_dir`` (found by searching a directory), ``refused`` (set instead of a kind
    when the path must not or cannot be read), ``size`` (its bytes when found)."""

    path: str
    kind: FileKind
    from_dir: bool
    refused: Refused | None = None
    size: int = 0  # bytes when the walk stat()ed it


_ORDER = {FileKind.LOG: 0, FileKind.INDEX: 1, FileKind.TIMEINDEX: 2, FileKind.TXNINDEX: 3,
          FileKind.PRODUCER_SNAPSHOT: 4}


def directory_order(name: str) -> tuple:
    """The order a directory's files are visited in: offset order (a segment, then its indexes and the snapshot of
    that offset), then other names."""
    kind = classify(name)
    if kind in _ORDER:
        return (0, int(name.split(".", 1)[0]), _ORDER[kind], name)
    return (1, 0, 0, name)
