"""The differential target ``agree`` in one process, through the library calls behind the commands (issue 29):
what :mod:`tests.fuzz.agree` checks through the CLI, without Click, subprocesses or a temporary directory per
input, so that a campaign runs many times faster.

One segment's bytes, written over one reused file (``<workdir>/t-0/00000000000000000000.log``, on /dev/shm where
there is one), go through:

* ``dump``: :class:`kdump.dump.Dumper` with the JSON renderer, records deep (what ``dump --deep-iteration
  --format json`` prints and reports);
* ``verify``: :func:`kdump.verify.verify_one` with ``deep``, its exit code by
  :func:`kdump.report.findings.exit_code`;
* ``stats``: :func:`kdump.stats.counts.segment_stats`;
* ``txn``: :func:`kdump.txn.partition_transactions` of the partition directory;
* ``salvage``: :func:`kdump.convert.salvage.salvage_segment` into a reused file (replaced);
* ``convert`` to magic 0, 1 and 2: :func:`kdump.convert.convert_segment` with ``skip_damaged`` into reused files;
* the Spark source's Arrow batch builder: :func:`kdump.spark.arrow.read_slices` (failOnDataLoss=false; no session).

They must agree (:class:`~tests.fuzz.agree.Disagreement` otherwise) on the outcome class (clean / damaged /
foreign), the data record offsets of the valid batches, and the read layer's classification of the bytes
(:func:`kdump.read.damage.readable`): its batches and damaged areas tile the file (no overlap, no gap, up to the
file's size), ``verify``'s findings with a byte range never overlap and lie inside the file. The differences that
are intended are accepted where :mod:`tests.fuzz.agree` accepts them, for the reasons it gives.
"""
from __future__ import annotations

import io
import os
import tempfile
from itertools import pairwise

from tests.fuzz.agree import MAX_BATCH, SEGMENT, Disagreement, _log_offsets, classes_agree

READERS = ("dump", "stats", "txn", "spark")


class Workspace:
    """The files one process reuses for every input: the segment, salvage's and convert's outputs."""

    def __init__(self, root: str | None = None):
        if root is None:
            base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
            root = tempfile.mkdtemp(prefix="kdump-agree-lib-", dir=base)
        self.root = root
        self.part = os.path.join(root, "t-0")
        self.log = os.path.join(self.part, SEGMENT)
        self.salvaged = os.path.join(root, "salvaged", SEGMENT)
        self.converted = {m: os.path.join(root, f"magic{m}", SEGMENT) for m in (0, 1, 2)}
        for d in (self.part, os.path.dirname(self.salvaged), *(os.path.dirname(p) for p in self.converted.values())):
            os.makedirs(d, exist_ok=True)

    def put(self, data: bytes) -> None:
        with open(self.log, "wb") as f:
            f.write(data)
        for path in (self.salvaged, *self.converted.values()):  # what the input before left is not this one's
            with os.scandir(os.path.dirname(path)) as entries:
                for entry in entries:
                    os.unlink(entry.path)


def _dump(log: str) -> tuple[str, list[int]]:
    import json

    from kdump.decode.payload import load_decoder
    from kdump.dump import Dumper, DumpOptions
    from kdump.render import RENDERERS
    opts = DumpOptions(deep_iteration=True)
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    errors: list = []
    string = load_decoder("string")
    renderer = RENDERERS["json"].batches(out, opts, string, string, no_color=True)
    dumper = Dumper(opts, renderer, on_error=lambda path, err: errors.append(err))
    dumper.dump_file(log)
    out.flush()
    offsets: list[int] = []
    for line in raw.getvalue().splitlines():
        obj = json.loads(line)
        if obj.get("type") == "batch" and obj.get("crcValid") and not obj.get("isControl"):
            offsets.extend(r["offset"] for r in obj.get("records") or ())
    return _class(errors), offsets


def _class(errors) -> str:
    """clean, damaged or foreign, from the errors a consumer met (FormatErrors or Problems: each has a code)."""
    if any(getattr(e, "code", None) == "not-a-kafka-log" for e in errors):
        return "foreign"
    return "damaged" if errors else "clean"


def _verify(log: str, size: int) -> tuple[str, list[tuple[int, int]], bool]:
    """verify --deep's class, the byte ranges of its findings, and whether it has errors but no damaged bytes."""
    from kdump.report.findings import exit_code
    from kdump.verify import VerifyOptions, verify_one
    report = verify_one(log, VerifyOptions(deep=True))
    codes = {f.code for f in report.findings}
    code = exit_code([report])
    cls = "foreign" if "not-a-kafka-log" in codes else ("damaged" if code else "clean")
    ranges = sorted((f.position, f.position + f.length) for f in report.findings
                    if f.length and f.position is not None)
    for a, b in pairwise(ranges):
        if a[1] > b[0]:
            raise Disagreement(f"verify: findings overlap: {a} and {b}")
    for a, b in ranges:
        if a < 0 or b > size:
            raise Disagreement(f"verify: a finding's bytes {a}-{b} lie outside the file of {size} bytes")
    # (a crash-cut tail is a warning with a byte range: it fails nothing, so it does not make the bytes damaged)
    damaged_bytes = any(f.length and f.severity == "error" for f in report.findings)
    return cls, ranges, bool(code) and not damaged_bytes


def _verify_shallow(log: str) -> str:
    from kdump.report.findings import exit_code
    from kdump.verify import VerifyOptions, verify_one
    report = verify_one(log, VerifyOptions())
    if any(f.code == "not-a-kafka-log" for f in report.findings):
        return "foreign"
    return "damaged" if exit_code([report]) else "clean"


def _tiles(log: str, size: int) -> None:
    """The read layer's one classification: batches and damaged areas, in order, cover the file exactly."""
    from kdump.read.damage import Damage, foreign_start, readable
    from kdump.read.segment import SegmentReader, Stop
    with SegmentReader(log, max_batch_bytes=MAX_BATCH) as reader:
        if foreign_start(reader) is not None:
            return
        at = 0
        for item in readable(reader, show_invalid=False):
            if isinstance(item, Stop):
                continue  # (after the tail's damage, if any)
            if isinstance(item, Damage):
                start, end = item.start, item.end
                if end is None:
                    continue  # (an error naming no byte range)
            else:  # a batch, a batch failing its CRC, or a run of plain magic 0/1 messages (LegacyRun)
                start, end = item.position, item.position + item.size
            if start != at:
                raise Disagreement(f"read layer: {'a gap' if start > at else 'an overlap'} at byte {min(start, at)} "
                                   f"(a range ends at {at}, the next starts at {start}: {item!r})")
            at = end
        if at != size:
            raise Disagreement(f"read layer: the ranges end at byte {at}, the file at {size}")


def _stats(log: str) -> str:
    from kdump.stats.counts import segment_stats
    return _class(segment_stats(log).errors)


def _txn(part: str, log: str) -> str:
    from kdump.read.scan import SegmentGroup
    from kdump.txn import partition_transactions
    # (a hanging transaction fails ``kdump txn`` too; it is no judgement of the bytes: the errors only)
    return _class(partition_transactions(SegmentGroup("t-0", part, [log])).errors)


def _salvage(ws: Workspace) -> tuple[str, list[int] | None]:
    from kdump.convert.salvage import WriteVerificationError, salvage_segment
    try:
        result = salvage_segment(ws.log, ws.salvaged, overwrite=True)
    except WriteVerificationError:
        return "damaged", None  # (the CLI: exit 1, nothing written)
    if any(d.code == "not-a-kafka-log" for d in result.dropped):
        return "foreign", None
    cls = "damaged" if any(d.fails for d in result.dropped) else "clean"
    return cls, _log_offsets(ws.salvaged)


def _convert(ws: Workspace, magic: int) -> tuple[str, list[int] | None]:
    from kdump.codec import GZIP, ZSTD
    from kdump.convert import ConversionRefused, ConvertOptions, convert_segment
    from kdump.write.segment import WriteVerificationError
    # (zstd came with magic 2: written down with gzip, as a user must ask for it)
    options = ConvertOptions(to_magic=magic, recompress={ZSTD: GZIP} if magic < 2 else {}, skip_damaged=True)
    target = ws.converted[magic]
    try:
        result = convert_segment(ws.log, target, options, overwrite=True)
    except ConversionRefused as e:
        return ("foreign" if e.code == "not-a-kafka-log" else "damaged"), None
    except WriteVerificationError:
        return "damaged", None
    # (indexes that cannot be rebuilt fail the CLI's run too: a batch whose offsets do not fit the segment)
    failed = result.stats.damage or (result.indexes is not None and result.indexes.problem)
    return ("damaged" if failed else "clean"), _log_offsets(target)


def _spark(log: str) -> tuple[str, list[int]]:
    from kdump.read.damage import Damage
    from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
    errors: list = []

    def on_damage(sl, error):
        if not isinstance(error, Damage) or error.fails:
            errors.append(error)
    rows: list[int] = []
    for rb in read_slices([SegmentSlice(log, "t", 0)], ReadOptions(columns=("offset",)), on_damage=on_damage):
        rows.extend(rb.column("offset").to_pylist())
    return _class(errors), rows


def judge(data: bytes, ws: Workspace) -> dict:
    """Every command's view of ``data`` as a segment, by the library calls behind them (raises
    :class:`~tests.fuzz.agree.Disagreement` where two differ)."""
    data = data[:MAX_BATCH]
    ws.put(data)
    size = len(data)
    classes: dict[str, str] = {}
    offsets: dict[str, list[int]] = {}
    _tiles(ws.log, size)
    classes["dump"], offsets["dump"] = _dump(ws.log)
    classes["verify"], _ranges, intact_bytes_fail = _verify(ws.log, size)
    classes["stats"] = _stats(ws.log)
    txn = _txn(ws.part, ws.log)
    if txn == classes["dump"] or txn != _verify_shallow(ws.log):
        classes["txn"] = txn
    # else intended (the conformance matrix, row undecompressable): txn reads batch headers and CRCs only, as
    # Kafka's recovery does, so records that do not decode are no damage to it, as to verify without --deep
    classes["salvage"], got = _salvage(ws)
    if got is not None:
        offsets["salvage"] = got
    for magic in (0, 1, 2):
        classes[f"convert-{magic}"], got = _convert(ws, magic)
        if got is not None:
            offsets[f"convert-{magic}"] = got
    classes["spark"], offsets["spark"] = _spark(ws.log)
    return _agree(classes, offsets, intact_bytes_fail)


def _agree(classes: dict[str, str], offsets: dict[str, list[int]], intact_bytes_fail: bool) -> dict:
    verdict = classes["dump"]
    classes_agree(classes, offsets, intact_bytes_fail, readers=READERS)
    return {"class": verdict, "records": len(offsets["dump"])}


_workspace: Workspace | None = None


def fuzz_agree_lib(data: bytes, backends: tuple[str, ...] | None = None) -> dict:
    """The in-process ``agree`` target: ``data`` (a ``.log`` file, cut to 256 KiB) judged on each of ``backends``
    (default: the compiled and the pure-Python one), which must agree too."""
    import json

    from kdump import _backend
    global _workspace
    if _workspace is None:
        _workspace = Workspace()
    if backends is None:
        backends = ("compiled", "python") if _backend.COMPILED_AVAILABLE else ("python",)
    results = {}
    previous = _backend.BACKEND
    try:
        for name in backends:
            _backend.use(name)
            results[name] = judge(data, _workspace)
    finally:
        _backend.use(previous)
    if len({json.dumps(r, sort_keys=True) for r in results.values()}) > 1:
        raise Disagreement(f"the backends disagree: {results}")
    return next(iter(results.values()))
