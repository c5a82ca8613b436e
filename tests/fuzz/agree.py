"""The differential fuzz target ``agree`` (issue 29): one segment's bytes through every command that reads them,
in one process, which must agree on what the bytes are.

The consumers: ``dump`` (JSON, records), ``verify --deep`` (JSON findings), ``stats``, ``txn``, ``salvage``,
``convert`` to each magic (0, 1, 2) and the Spark source's Arrow batch builder (:func:`kdump.spark.arrow.read_slices`,
PERMISSIVE: no Spark session). What they must agree on (:class:`Disagreement` otherwise):

* the outcome class: ``clean`` (exit 0), ``damaged`` (exit 1) or ``foreign`` (``not-a-kafka-log``), the same for
  every command (the read layer's one policy, :attr:`kdump.read.damage.Damage.fails`);
* the record offsets: the data records of the valid batches ``dump`` shows are the ones every ``convert
  --skip-damaged`` writes (control records aside: magic 0/1 have none) and the rows of the Arrow builder; ``salvage``
  keeps them or, where ``verify --deep`` fails a CRC-valid batch (offsets that go back: a v2 base offset and a magic
  0/1 offset lie outside the CRC), the ones it accepts, in order (a subsequence);
* ``verify``'s findings never overlap and their ``bytes`` add up to at most the file's size.

Mutations (:func:`mutate`, for the seeded campaign of tools/fuzz_agree.py; atheris mutates the bytes itself): a
size field set to another value, a run of zeros at any alignment, flipped bytes, a torn write (a batch cut, then
the batches from it written again whole), truncation.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import struct
import tempfile
from itertools import pairwise

from click.testing import CliRunner

SEGMENT = "00000000000000000000.log"
MAX_BATCH = 1 << 18


class Disagreement(AssertionError):
    """Two commands judge the same bytes differently."""


def _cli(*args) -> tuple[int, str]:
    from kdump.cli import main

    class _Entry:
        name = "kdump"

        def main(self, args, prog_name=None, **extra):
            main(list(args))

    result = CliRunner().invoke(_Entry(), [str(a) for a in args], catch_exceptions=False)  # type: ignore[arg-type]
    if result.exit_code not in (0, 1):
        raise Disagreement(f"kdump {' '.join(map(str, args))}: exit {result.exit_code}\n{result.output[-2000:]}")
    return result.exit_code, result.stdout


def _class(code: int, text: str) -> str:
    if "not-a-kafka-log" in text or "not a Kafka log segment" in text:
        return "foreign"
    return "damaged" if code else "clean"


def _log_offsets(path: str) -> list[int]:
    """The data record offsets of a segment kdump wrote (convert's or salvage's output), read by the read layer."""
    from kdump.read.segment import SegmentReader
    out: list[int] = []
    with SegmentReader(path) as reader:
        for batch in reader.batches():
            if getattr(batch, "is_control", False):
                continue
            out.extend(record.offset for record in batch.records(1 << 26))
    return out


def _spark_offsets(path: str) -> list[int]:
    from kdump.spark.arrow import ReadOptions, SegmentSlice, read_slices
    rows: list[int] = []
    options = ReadOptions(columns=("offset",))
    for rb in read_slices([SegmentSlice(path, "t", 0)], options, on_damage=lambda sl, error: None):
        rows.extend(rb.column("offset").to_pylist())
    return rows


def judge(data: bytes, workdir: str) -> dict:
    """Every command's view of ``data`` as a segment (raises :class:`Disagreement` where two differ)."""
    part = os.path.join(workdir, "t-0")
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(part)
    log = os.path.join(part, SEGMENT)
    with open(log, "wb") as f:
        f.write(data)
    classes: dict[str, str] = {}
    offsets: dict[str, list[int]] = {}

    code, out = _cli("dump", "--print-data-log", "--format", "json", log)
    classes["dump"] = _class_of_dump = _class(code, out)
    dumped = []
    for line in out.splitlines():
        obj = json.loads(line)
        if obj.get("type") == "batch" and obj.get("crcValid") and not obj.get("isControl"):
            dumped.extend(r["offset"] for r in obj.get("records") or ())
    offsets["dump"] = dumped

    code, out = _cli("verify", "--deep", "--format", "json", log)
    classes["verify"] = _class(code, out)
    size = len(data)
    findings = [f for r in json.loads(out)["files"] for f in r["findings"]]
    errors = {f["code"] for f in findings if f["severity"] == "error"}
    ranges = sorted((f["position"], f["position"] + f["bytes"]) for f in findings if f.get("bytes"))
    for a, b in pairwise(ranges):
        if a[1] > b[0]:
            raise Disagreement(f"verify: findings overlap: {a} and {b}")
    if sum(b - a for a, b in ranges) > size:
        raise Disagreement(f"verify: findings' bytes add up to more than the file's {size}")

    code, out = _cli("stats", "--format", "json", log)
    classes["stats"] = _class(code, out)
    code, out = _cli("txn", "--format", "json", part)
    classes["txn"] = _class(code, out)

    salvaged = os.path.join(workdir, "salvaged", SEGMENT)
    code, out = _cli("salvage", "--format", "json", log, "-o", salvaged)
    classes["salvage"] = _class(code, out)
    if os.path.exists(salvaged):
        offsets["salvage"] = _log_offsets(salvaged)
    for magic in (0, 1, 2):
        target = os.path.join(workdir, f"magic{magic}", SEGMENT)
        # (zstd came with magic 2: written down with gzip, as a user must ask for it)
        recompress = ("--recompress", "zstd=gzip") if magic < 2 else ()
        code, out = _cli("convert", "--to-magic", magic, *recompress, "--skip-damaged", "--format", "json", log, "-o",
                         os.path.dirname(target) + "/")
        classes[f"convert-{magic}"] = _class(code, out)
        if os.path.exists(target):
            offsets[f"convert-{magic}"] = _log_offsets(target)
    offsets["spark"] = _spark_offsets(log)

    intact_bytes_fail = bool(errors) and not any(f.get("bytes") for f in findings if f["severity"] == "error")
    classes_agree(classes, offsets, intact_bytes_fail, readers=("dump", "stats", "txn"))
    return {"class": _class_of_dump, "records": len(offsets["dump"])}


def classes_agree(classes: dict[str, str], offsets: dict[str, list[int]], intact_bytes_fail: bool, *,
                  readers: tuple[str, ...]) -> None:
    """Every consumer's outcome class is dump's and its offsets are dump's (:func:`offsets_agree`), or
    :class:`Disagreement`; ``readers``: the consumers that show what Kafka's reader shows.

    ``intact_bytes_fail`` (verify --deep fails, but no byte of the file is damaged: framing and CRCs sound, a
    crash-cut tail a warning) is the intended split: what the bytes say goes back (a v2 base offset and a magic
    0/1 offset lie outside the CRC), the readers (dump, stats, txn, Spark) show it as Kafka's reader does, the
    checkers (verify, salvage, convert, which verifies what it writes) fail it. A conversion that rewrites such a
    batch re-derives the fields outside the CRC from the records (a wrapper's offset from its inner messages):
    what it writes is sound and holds every record dump shows (checked by :func:`offsets_agree`), so it may pass;
    one that copies the batch as it is fails its own check of what it wrote (bench/RESULTS.md, issue 29
    campaign: convert's outcome then depends on the target magic)."""
    if intact_bytes_fail:
        readers_say = {classes[k] for k in readers if k in classes}
        checkers_say = {v for k, v in classes.items() if k not in readers and not k.startswith("convert-")}
        converts_say = {v for k, v in classes.items() if k.startswith("convert-")}
        if len(readers_say) == 1 and len(checkers_say) == 1 and converts_say <= readers_say | checkers_say:
            classes = {}
    if len(set(classes.values())) > 1:
        raise Disagreement(f"outcome classes differ: {classes}")
    offsets_agree(offsets, classes)


def offsets_agree(offsets: dict[str, list[int]], classes: dict[str, str]) -> None:
    """Every consumer's record offsets are dump's (:class:`Disagreement` otherwise), but salvage's, which may be a
    part of them: salvage keeps what ``verify --deep`` accepts; dump shows every CRC-valid batch, as Kafka's tool
    does, also one whose offsets go back (a v2 base offset and a magic 0/1 offset are outside the CRC)."""
    for name, got in offsets.items():
        if name == "salvage" and _subsequence(got, offsets["dump"]):
            continue
        if got != offsets["dump"]:
            raise Disagreement(f"record offsets differ: dump {_short(offsets['dump'])}, {name} {_short(got)} "
                               f"(classes {classes})")


def _subsequence(part: list[int], whole: list[int]) -> bool:
    it = iter(whole)
    return all(any(x == y for y in it) for x in part)


def _short(xs: list[int]) -> str:
    return f"{len(xs)} records {xs[:5]}...{xs[-3:]}" if len(xs) > 10 else str(xs)


_work: str | None = None


def fuzz_agree(data: bytes) -> dict:
    """The ``agree`` target: ``data`` is a ``.log`` file (at most 256 KiB: larger inputs are cut), judged on the
    compiled and the pure-Python backend, which must agree too."""
    from kdump import _backend
    global _work
    if _work is None:
        base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
        _work = tempfile.mkdtemp(prefix="kdump-agree-", dir=base)
    results = {}
    previous = _backend.BACKEND
    try:
        for name in ("compiled", "python") if _backend.COMPILED_AVAILABLE else ("python",):
            _backend.use(name)
            results[name] = judge(data[:MAX_BATCH], os.path.join(_work, "w"))
    finally:
        _backend.use(previous)
    if len({json.dumps(r, sort_keys=True) for r in results.values()}) > 1:
        raise Disagreement(f"the backends disagree: {results}")
    return next(iter(results.values()))


# --- the mutations that matter here -------------------------------------------------------------------------
def _entries(data: bytes) -> list[tuple[int, int]]:
    """(position, size) of the entries of Kafka's framing from the start (as far as it holds)."""
    out, pos = [], 0
    while pos + 12 <= len(data):
        size = struct.unpack_from(">i", data, pos + 8)[0]
        if size < 14 or pos + 12 + size > len(data):
            break
        out.append((pos, 12 + size))
        pos += 12 + size
    return out


MUTATIONS = ("size-field", "zeros", "flip", "torn", "truncate")


def mutate(data: bytes, rng: random.Random) -> tuple[str, bytes]:
    """One of :data:`MUTATIONS` applied to ``data`` at a random place; returns (what was done, the bytes)."""
    kind = rng.choice(MUTATIONS)
    entries = _entries(data) or [(0, len(data))]
    buf = bytearray(data)
    n = len(buf)
    if not n:
        return "empty", data
    if kind == "size-field":
        pos, _ = rng.choice(entries)
        if pos + 12 <= n:
            value = rng.choice([0, 1, 13, 14, 2**31 - 1, -1, rng.randrange(0, 1 << 20),
                                struct.unpack_from(">i", buf, pos + 8)[0] + rng.randint(-64, 64)])
            struct.pack_into(">i", buf, pos + 8, max(-2**31, min(2**31 - 1, value)))
        return f"{kind}@{pos}", bytes(buf)
    if kind == "zeros":
        start = rng.randrange(n)
        length = rng.choice([1, 4, 17, 18, 61, 512, 4096, rng.randrange(1, n + 1)])
        buf[start:start + length] = bytes(min(length, n - start))
        return f"{kind}@{start}+{length}", bytes(buf)
    if kind == "flip":
        k = rng.randint(1, 4)
        for _ in range(k):
            i = rng.randrange(n)
            buf[i] ^= 1 << rng.randrange(8)
        return f"{kind}x{k}", bytes(buf)
    if kind == "torn":
        pos, size = rng.choice(entries)
        cut = rng.randrange(1, max(2, size))
        return f"{kind}@{pos}+{cut}", bytes(buf[:pos + cut] + buf[pos:])
    cut = rng.randrange(n)
    return f"{kind}@{cut}", bytes(buf[:cut])
