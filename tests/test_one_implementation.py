"""One implementation of each concept (issue 30 item 4), checked on the source so that a copy cannot come back:
each test finds the concept's home and no second spelling of it elsewhere in ``kdump/``. What the one
implementation does is tested where it lives (the files named in each test's docstring); these tests hold that
there is only one.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kdump"
SOURCES = {str(p.relative_to(ROOT)): p for p in sorted(PACKAGE.rglob("*.py"))}


def _strings(path: Path) -> list[tuple[int, str]]:
    """The string literals of ``path`` that reach a user or a caller (docstrings left out), an f-string's
    formatted parts as ``{}``."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    in_fstrings = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            found.append((node.lineno, "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and id(node) not in in_fstrings):
            found.append((node.lineno, node.value))
    return found


def _spelled(text: str, *, outside: tuple[str, ...]) -> dict[str, list[str]]:
    """Where a string literal holding ``text`` is written, in the modules not under ``outside``."""
    return {name: hits for name, path in SOURCES.items() if not name.startswith(outside)
            for hits in [[f"{line}: {s}" for line, s in _strings(path) if text in s]] if hits}


# --- "not a Kafka log segment": the read layer's judgement ---------------------------------------------------
def test_not_a_kafka_log_is_judged_by_the_read_layer_only():
    """A file whose first bytes cannot start a Kafka log (text renamed .log) is judged by
    ``kdump.read.damage.foreign_start`` (code ``not-a-kafka-log`` and its message); every command (dump, verify,
    index check and rebuild, stats, txn, convert, salvage, replay) asks it instead of saying it again. Its
    behaviour: tests/test_one_judgement.py, tests/test_salvage.py, tests/test_convert*.py."""
    home = "kdump/read/damage.py"
    assert _spelled("not a Kafka log segment", outside=()).keys() == {home, *_command_help("not a Kafka log")}
    assert _spelled("not-a-kafka-log", outside=("kdump/commands/", "kdump/report/")).keys() == {home}


def _command_help(text: str) -> set[str]:
    """The commands whose help (exit-code epilogs) mentions ``text``: they describe the judgement, not make it."""
    return {name for name in _spelled(text, outside=()) if name.startswith("kdump/commands/")}


# --- finding severities: the registry's -------------------------------------------------------------------
SEVERITY_NAMES = {"ERROR", "WARNING", "INFO"}


def _restated_severities(path: Path) -> list[str]:
    """Calls in ``path`` that hand a finding code a severity beside it (positionally, or as ``severity=``) where
    the registry (kdump/report/codes.py) already holds it: a severity given is only a code's second one, and
    only where a fact chooses it."""
    from kdump.report.codes import CODES
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not (isinstance(node, ast.Call) and node.args):
            continue
        given = [a for a in node.args[1:2] if isinstance(a, ast.Name) and a.id in SEVERITY_NAMES]
        given += [k.value for k in node.keywords if k.arg == "severity"]
        code = node.args[0]
        for severity in given:
            if isinstance(severity, ast.Name) and isinstance(code, ast.Constant) and code.value in CODES:
                if severity.id.lower() != CODES[code.value].also:
                    found.append(f"{node.lineno}: {code.value} {severity.id}")
            elif severity in node.args:  # a severity ahead of the message, whatever the code: the old protocol
                found.append(f"{node.lineno}: {ast.unparse(node.func)}({ast.unparse(code)}, {severity.id}, ...)")
    return found


def test_finding_severities_come_from_the_registry():
    """A finding's severity is its code's in kdump/report/codes.py: call sites pass the code and the facts
    (index check's ``also=``: a rolled segment's zero tail is a warning, the active one's a note) and the
    collector (kdump.report.findings.Findings) takes the severity from the registry. Behaviour:
    tests/test_findings.py, tests/test_index_check*.py."""
    restated = {name: found for name, path in SOURCES.items() if not name.startswith(("kdump/report/",))
                for found in [_restated_severities(path)] if found}
    assert restated == {}


def test_the_severity_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('r.add("index-missing", WARNING, "m")\nr.add(e.code, ERROR, e.message)\n'
                      'f.add("truncated-tail", "m", severity=ERROR)\nf.add("index-missing", "m", severity=WARNING)\n')
    assert _restated_severities(sample) == ["1: index-missing WARNING", "2: r.add(e.code, ERROR, ...)",
                                            "4: index-missing WARNING"]


# --- index entry sizes and positions: format/index_layout.py's -----------------------------------------------
# 8 and 12 times, divided or modulo something, where they are not an index entry's size: bits of a byte, a read-size
# heuristic.
NOT_INDEX_ARITHMETIC = {("kdump/explain/__init__.py", "8 * f.min_size"), ("kdump/read/segment.py", "len(data) // 8")}


def _index_entry_arithmetic(path: Path) -> list[str]:
    """Products, quotients and remainders with a literal 8 (an ``.index`` entry's size) or 12 (a
    ``.timeindex`` entry's) in ``path``, and messages that state either size."""
    found = [f"{node.lineno}: {ast.unparse(node)}" for node in ast.walk(ast.parse(path.read_text(), str(path)))
             if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.FloorDiv, ast.Mod))
             and any(isinstance(side, ast.Constant) and side.value in (8, 12) for side in (node.left, node.right))]
    found += [f"{line}: {s}" for line, s in _strings(path)
              if any(size in s for size in ("8-byte entry", "12-byte entry", "multiple of 8", "multiple of 12"))]
    return found


def test_index_entry_sizes_only_in_format():
    """An ``.index`` entry's size (8) and a ``.timeindex`` entry's (12), and so where entry i lies, come from
    kdump/format/index_layout.py (``OFFSET_INDEX_ENTRY_SIZE``, ``TIME_INDEX_ENTRY_SIZE``, derived from the
    declarations); index check, index dump and index rebuild's report use them. Behaviour:
    tests/test_index_check.py, tests/test_index_dump.py, tests/test_index_rebuild.py."""
    spelled = {name: found for name, path in SOURCES.items()
               if not name.startswith(("kdump/format/", "kdump/codec/", "kdump/report/codes.py"))
               for found in [[f for f in _index_entry_arithmetic(path)
                              if (name, f.split(": ", 1)[1]) not in NOT_INDEX_ARITHMETIC]] if found}
    assert spelled == {}


def test_the_index_entry_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('a = i * 8\nb = len(t) // 12\nc = (n - 1) * 12\nd = i * size\ne = f"not a whole 8-byte entry"\n')
    assert _index_entry_arithmetic(sample) == ["1: i * 8", "2: len(t) // 12", "3: (n - 1) * 12",
                                               "5: not a whole 8-byte entry"]


# --- codec ids: kdump/codec's table ------------------------------------------------------------------------
CODEC_CONSTANTS = {"NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD"}


def _codec_id_spellings(path: Path) -> list[str]:
    """Codec ids spelled in ``path``: an int given a codec's name (``ZSTD = 4``, as a module constant or an enum
    member), a tuple or list of two or more codec names (a table of names by id), or a codec id, or a batch's
    codec bits, compared with a literal other than 0 (``codec_id > 3``, ``attributes & 7 > 4``)."""
    from kdump.format.names import CODEC_NAMES
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = (zip(target.elts, node.value.elts, strict=False) if isinstance(target, ast.Tuple)
                         and isinstance(node.value, ast.Tuple) else [(target, node.value)])
                if any(isinstance(t, ast.Name) and t.id in CODEC_CONSTANTS and isinstance(v, ast.Constant)
                       and type(v.value) is int for t, v in pairs):
                    found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, (ast.Tuple, ast.List)):
            names = {e.value for e in node.elts if isinstance(e, ast.Constant)} & set(CODEC_NAMES)
            if len(names) > 1:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            text = ast.unparse(node)
            if ("codec" in text or "& 7" in text) and any(
                    isinstance(s, ast.Constant) and type(s.value) is int and s.value != 0 for s in sides):
                found.append(f"{node.lineno}: {text}")
    return found


def test_codec_ids_only_in_the_codec_table():
    """Kafka's compression type ids, their names and the module that implements each are one table,
    ``kdump.codec.CODECS``: adding a codec is its module and a row there. Names (kdump/format/names.py),
    ``CompressionType``, the header rules, the legacy wrapper's and verify's checks and convert's codec choices
    read it. Behaviour: tests/test_codec*.py, tests/test_names.py, tests/test_framing.py."""
    spelled = {name: found for name, path in SOURCES.items() if not name.startswith("kdump/codec/")
               for found in [_codec_id_spellings(path)] if found}
    assert spelled == {}


def test_the_codec_table_is_what_the_rest_reads():
    from kdump import codec
    from kdump.format import names
    from kdump.format.types import CompressionType
    assert [c.id for c in codec.CODECS] == list(range(len(codec.CODECS)))
    assert tuple(c.name for c in codec.CODECS) == names.CODEC_NAMES
    assert [(m.name, m.value) for m in CompressionType] == [(c.name.upper(), c.id) for c in codec.CODECS]
    assert [names.codec_name(i) for i in range(8)] == [*names.CODEC_NAMES, "unknown(5)", "unknown(6)", "unknown(7)"]


def test_the_codec_id_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('class C:\n    ZSTD = 4\nNONE, GZIP = 0, 1\nN = ("none", "gzip")\nif msg.codec_id > 3: pass\n'
                      'ok = h.attributes & 7 > 4\nfine = codec == 0\n')
    assert sorted(int(f.split(":")[0]) for f in _codec_id_spellings(sample)) == [2, 3, 4, 5, 6]


# --- work units and their sizes: kdump.jobs ------------------------------------------------------------------
SCHEDULER = {"ordered_map", "ordered_results", "largest_first"}


def _jobs_wiring(path: Path) -> list[str]:
    """In ``path``: a call of the ``--jobs`` scheduler without the units' sizes (``sizes=``: what each weighs,
    so that the largest start first), and a loop summing ``os.path.getsize`` (a unit's weight computed again
    beside :func:`kdump.jobs.bytes_of`)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("ordered_map", "ordered_results") and not any(k.arg == "sizes" for k in node.keywords):
                found.append(f"{node.lineno}: {name}(...) without sizes=")
        elif (isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add)
              and "getsize" in ast.unparse(node.value)):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def _scheduler_imports(path: Path) -> list[str]:
    return [f"{node.lineno}: {a.name}" for node in ast.walk(ast.parse(path.read_text(), str(path)))
            if isinstance(node, ast.ImportFrom) and node.module == "kdump.jobs"
            for a in node.names if a.name in SCHEDULER | {"bytes_of"}]


def test_every_jobs_command_schedules_its_units_in_the_library():
    """``--jobs`` is wired one way: the library function of each command (verify_paths, check_paths,
    rebuild_directories, stats_paths, transactions, dump_in_workers) hands its units and their sizes
    (kdump.jobs.bytes_of, WorkUnit.size, a Work's sizes) to kdump.jobs' scheduler; the command line
    passes the number of jobs only. Behaviour: tests/test_jobs.py, tests/test_jobs_commands.py."""
    home = "kdump/jobs/__init__.py"
    in_commands = {name: found for name, path in SOURCES.items() if name.startswith("kdump/commands/")
                   for found in [_scheduler_imports(path)] if found}
    assert in_commands == {}
    elsewhere = {name: found for name, path in SOURCES.items() if name != home
                 for found in [_jobs_wiring(path)] if found}
    assert elsewhere == {}


def test_the_jobs_checks_find_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from kdump.jobs import ordered_map, default_jobs\nordered_map(f, calls, jobs)\n"
                      "ordered_map(f, calls, jobs, sizes=s)\nfor p in ps:\n    total += os.path.getsize(p)\n")
    assert _scheduler_imports(sample) == ["1: ordered_map"]
    assert sorted(_jobs_wiring(sample)) == ["2: ordered_map(...) without sizes=", "5: total += os.path.getsize(p)"]


# --- a new segment with its indexes: one group ----------------------------------------------------------------
def _segment_writes(path: Path) -> list[str]:
    """Calls in ``path`` that write a new segment's indexes apart from the segment (``rebuild_indexes``,
    ``rebuild_segment``, ``write_recovery`` after the segment was placed) or add them to a group by hand
    (``add_indexes``) instead of :func:`kdump.convert.files.place_segment`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("rebuild_indexes", "rebuild_segment", "write_recovery", "add_indexes"):
                found.append(f"{node.lineno}: {name}(...)")
    return found


def test_new_segments_are_placed_with_their_indexes_by_one_helper():
    """convert, salvage and the Spark writer place a new segment and its indexes as one AtomicGroup through
    kdump.convert.files.place_segment; only index rebuild (of a segment already there) writes indexes alone.
    Behaviour: tests/test_convert*.py, tests/test_salvage.py, tests/test_spark_write.py, tests/test_write_faults.py
    and the test below."""
    writers = ("kdump/convert/", "kdump/spark/")
    spelled = {name: found for name, path in SOURCES.items() if name.startswith(writers)
               for found in [_segment_writes(path)] if found}
    assert spelled == {"kdump/convert/files.py": [f for f in _segment_writes(SOURCES["kdump/convert/files.py"])
                                                  if f.endswith("add_indexes(...)")]}
    helper = [node for node in ast.walk(ast.parse(SOURCES["kdump/convert/files.py"].read_text()))
              if isinstance(node, ast.FunctionDef) and node.name == "place_segment"]
    assert [name for f in helper for name in _segment_writes_in(f)] == ["add_indexes"]


def _segment_writes_in(function: ast.FunctionDef) -> list[str]:
    return [n.func.id for n in ast.walk(function) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
            and n.func.id == "add_indexes"]


@pytest.mark.usefixtures("backend")
def test_the_spark_writer_places_no_segment_without_its_indexes(tmp_path, monkeypatch):
    """The Spark writer's segment and its indexes appear together or not at all: when Kafka's recovery of the
    new segment (from which its indexes are made) fails, the segment is not placed either."""
    pytest.importorskip("pyspark")
    from kdump.index import rebuild
    from kdump.spark.write import PartitionWriter, WriteOptions

    def fails(*args, **kwargs):
        raise OSError(5, "Input/output error (injected)")

    writer = PartitionWriter(str(tmp_path), "t", 0, WriteOptions())
    for offset in range(3):
        writer.append(None, 1_700_000_000_000 + offset, b"k", b"v%d" % offset)
    monkeypatch.setattr(rebuild, "recover_segment", fails)
    with pytest.raises(OSError, match="injected"):
        writer.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    monkeypatch.undo()
    writer = PartitionWriter(str(tmp_path), "t", 0, WriteOptions())
    writer.append(None, 1_700_000_000_000, b"k", b"v")
    (_, first, last), = writer.close().segments
    assert (first, last) == (0, 0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["00000000000000000000.index", "00000000000000000000.log",
                                                          "00000000000000000000.timeindex"]


# Ways of weighing work again beside kdump.jobs: file sizes summed, a scan's bytes, a glob of the logs.
_RESIZING = ("getsize", "st_size", "bytes_of", "total_bytes", "glob")


def _work_sizing(path: Path) -> list[str]:
    """In ``path``: file sizes summed (``sum(...)`` or ``+=`` over ``getsize``/``st_size``/``bytes_of``), a
    scan's ``total_bytes`` or a ``glob`` of files: a unit's weight or a bar's total counted apart from the
    :class:`kdump.jobs.Work` the scheduler is given."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "sum":
            text = ast.unparse(node)
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            text = ast.unparse(node.value)
        elif isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            text = name if name in ("total_bytes", "glob") else ""
        else:
            continue
        if any(word in text for word in _RESIZING):
            found.append(f"{node.lineno}: {text}")
    return found


def _sizes_work(name: str, path: Path) -> bool:
    """A module that weighs work: a command (its progress bar's total) or one that calls the scheduler."""
    return name.startswith("kdump/commands/") or bool(_scheduler_calls(path))


def _scheduler_calls(path: Path) -> list[int]:
    return [node.lineno for node in ast.walk(ast.parse(path.read_text(), str(path))) if isinstance(node, ast.Call)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", ""))
            in ("ordered_map", "ordered_results")]


def test_work_is_weighed_in_kdump_jobs_only():
    """What a unit of work weighs, and so a progress bar's total, is counted once, in kdump.jobs (``bytes_of``,
    ``work_units``, ``Work``): no command and no module handing units to the scheduler sums file sizes, a scan's
    bytes or a glob of .log files itself (progress.py's file_sizes and partition_log_sizes, verify's
    total_bytes and replicas' glob did). Behaviour: tests/test_parallel_progress.py (the bar's total is the
    scheduler's sizes, its advance reaches it under -j 2), tests/test_jobs.py."""
    found = {name: hits for name, path in SOURCES.items() if not name.startswith("kdump/jobs/")
             and _sizes_work(name, path) for hits in [_work_sizing(path)] if hits}
    assert found == {}


def test_the_work_sizing_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("total = sum(os.path.getsize(p) for p in ps)\nn = scan(ps).total_bytes()\n"
                      "w = sum(bytes_of(glob.glob(d)) for d in ds)\nfor p in ps:\n    t += os.stat(p).st_size\n"
                      "fine = sum(u.size for u in units)\nordered_map(f, c, 2, sizes=s)\n")
    assert sorted(int(hit.split(":")[0]) for hit in _work_sizing(sample)) == [1, 2, 3, 3, 5]
    assert _scheduler_calls(sample) == [7]


# --- the files of a commit: the write layer's group -------------------------------------------------------------
SEGMENT_WRITERS = ("kdump/convert/", "kdump/spark/write.py")
MOVES = {"rename", "renames", "replace", "link", "move", "write_atomic", "place", "move_aside"}


def _own_moves(path: Path) -> list[str]:
    """Calls in ``path`` that put a file in its place themselves (``os.rename``/``replace``/``link``,
    ``shutil.move``, ``write_atomic``, an AtomicFile's ``place``) instead of committing a group of the write layer,
    which journals its renames and takes them back or finishes them."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in MOVES:
                found.append(f"{node.lineno}: {ast.unparse(node.func)}(...)")
    return found


def _functions_calling(path: Path, callee: str) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    return {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
            for n in ast.walk(f) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == callee}


def test_the_spark_writer_commits_through_the_write_layers_group_only():
    """The Spark writer's commits (a batch append, an overwrite's assembly, a stream's micro-batch with its
    exactly-once record) move no file themselves and keep no journal or rollback of their own: each is one
    ``AtomicGroup`` of kdump/write/group.py (``_place``), taken back on failure, resolved after a kill by the next
    commit (``resolve_interrupted``); an overwrite's directory swap is the write layer's ``replace_directory``.
    convert and salvage hold the same rule. Behaviour: tests/test_write_faults.py (the Spark commit killed and
    failing between renames), tests/test_spark_write.py."""
    spelled = {name: found for name, path in SOURCES.items() if name.startswith(SEGMENT_WRITERS)
               for found in [_own_moves(path)] if found}
    assert spelled == {}
    write = SOURCES["kdump/spark/write.py"]
    # a task's segment with its indexes (place_segment, as convert and salvage), a commit's files (_place)
    assert _functions_calling(write, "AtomicGroup") == {"_roll", "_place"}
    assert _functions_calling(write, "_place") == {"commit", "_append", "_commit"}
    assert _functions_calling(write, "resolve_interrupted") == {"_append", "_commit"}
    names = {n.id for n in ast.walk(ast.parse(write.read_text())) if isinstance(n, ast.Name)}
    assert not names & {"_rename_all", "_finish", "_journals"}


def test_the_own_moves_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import os\nos.rename(a, b)\nfor s, d in moves:\n    os.replace(d, s)\nf.place()\n"
                      "write_atomic(p, data)\ngroup.commit()\n")
    assert sorted(_own_moves(sample)) == ["2: os.rename(...)", "4: os.replace(...)", "5: f.place(...)",
                                          "6: write_atomic(...)"]
