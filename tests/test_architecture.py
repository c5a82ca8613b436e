"""The shape of the package (docs/architecture.md), checked on the source: no import cycle, imports only in the
direction data flows, byte layouts only in ``kdump/format/`` (and the codecs' own framings in ``kdump/codec/``).

Imports are read with ``ast`` wherever they are (module level or inside functions), from the ``.pyx`` sources
too, and ``importlib.import_module("kdump....")`` with a literal (or f-string prefix) counts as an import.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "kdump"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for pattern in ("*.py", "*.pyx") for p in sorted(PACKAGE.rglob(pattern))}


def _tree(path: Path) -> ast.AST:
    text = path.read_text()
    if path.suffix == ".pyx":  # Cython: only its Python import lines parse as Python (cimports of .pxd
        # files are compile-time inlining, not imports)
        text = "\n".join(line.strip() for line in text.splitlines()
                         if line.strip().startswith(("from kdump", "import kdump")) and " cimport " not in line)
    return ast.parse(text, str(path))


def _known(name: str) -> str | None:
    """The module of ours ``name`` refers to (a name imported from a module resolves to that module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _facade_exports() -> dict[str, str]:
    """``kdump/__init__.py``'s ``_EXPORTS`` (name -> module): the names it imports on first use (PEP 562)."""
    for node in ast.walk(_tree(PACKAGE / "__init__.py")):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("kdump/__init__.py has no _EXPORTS")


FACADE_EXPORTS = _facade_exports()


def _imported_names(module: str, path: Path):
    if module == "kdump":  # the package's lazy exports are imports of the modules that hold them
        yield from FACADE_EXPORTS.values()
    package = module if path.stem == "__init__" else module.rpartition(".")[0]
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for a in node.names:
                if f"{base}.{a.name}" in MODULES:
                    yield f"{base}.{a.name}"
                else:  # ``from kdump import SegmentReader``: the module the package's lazy export reads
                    yield FACADE_EXPORTS.get(a.name, base) if base == "kdump" else base
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args):
            arg = node.args[0]
            if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
                arg = arg.values[0]
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                yield arg.value.rstrip(".")


def _graph() -> dict[str, set[str]]:
    edges = {}
    for module, path in MODULES.items():
        targets = {_known(n) for n in _imported_names(module, path) if n.startswith("kdump")}
        edges[module] = {t for t in targets if t is not None and t != module}
    return edges


GRAPH = _graph()


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in edges:
        if v not in index:
            visit(v)
    return found


def test_the_checker_sees_imports_of_every_kind():
    """The graph is not vacuous: module-level, function-level, relative, .pyx and importlib imports all count."""
    assert "kdump.read.segment" in GRAPH["kdump.verify.walk"]
    assert "kdump._backend" in GRAPH["kdump.format.v2"]  # inside a function
    assert "kdump.codec.errors" in GRAPH["kdump.codec.gzip"]  # relative
    assert "kdump.format.columns" in GRAPH["kdump.format._records"]  # .pyx
    assert "kdump.format.schemas" in GRAPH["kdump.decode.internal.tables"]  # importlib.import_module(f"...")
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle():
    assert _cycles(GRAPH) == []


def _in(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


# --- the layers of docs/architecture.md --------------------------------------------------------------------
# Bottom first: each top-level module or package of kdump has a rank, and imports only from its own rank or
# below. Packages of one rank may use each other, but never round a cycle (test_no_cycle_between_packages).
# The folders are the layers: kdump/'s root holds only the entry points, the errors and the twin chooser
# (test_the_root_holds_only_entry_points).
LAYERS = [
    ("base", ("kdump.errors", "kdump._backend", "kdump.text")),
    ("codec", ("kdump.codec",)),
    ("format", ("kdump.format",)),  # byte layouts, framing, batch readers and builders, the CRC-32C loader
    ("read", ("kdump.read",)),  # the segment walker, the damage model, directory layout, companion files
    ("decode", ("kdump.decode",)),  # records, key/value printers, internal topics (decode/internal), filters
    ("report", ("kdump.report",)),  # finding codes, the findings model, the exit-code policy
    ("jobs", ("kdump.jobs",)),  # the parallel map every --jobs uses
    ("write", ("kdump.write",)),  # atomic files and groups, their leftovers, the segment writer, digests
    ("library API", ("kdump",)),  # the package itself: __version__ and the lazy exports (the writer among them)
    ("companion files", ("kdump.index",)),  # index dump, check and rebuild (write's atomic groups, leftovers)
    ("checks and reports", ("kdump.verify", "kdump.dump", "kdump.stats", "kdump.txn", "kdump.replay",
                            "kdump.explain", "kdump.replicas")),  # (explain: a batch field by field, over format and read)
    ("rewrites", ("kdump.convert",)),  # convert and salvage: verify's checks decide what is kept
    ("spark", ("kdump.spark",)),  # over stats, verify, index and write
    ("render", ("kdump.render",)),
    ("commands", ("kdump.commands", "kdump.cli", "kdump.__main__")),
]
_FORMAT_RANK = [name for name, _ in LAYERS].index("format")
ABOVE_FORMAT = tuple(unit for rank, (_, units) in enumerate(LAYERS) if rank > _FORMAT_RANK for unit in units
                     if unit != "kdump")  # the package itself: its modules are listed by their own units
LAYER_RULES = [
    # (importing packages, packages they must not import, why)
    (("kdump.format", "kdump.codec"), ABOVE_FORMAT, "byte-level code knows nothing of what reads it"),
    (("kdump.codec",), ("kdump.format",), "codecs sit below the formats that use them"),
    (("kdump.render",), ("kdump.commands", "kdump.cli"), "renderers are called by commands, not the reverse"),
]


@pytest.mark.parametrize("importers, forbidden, why", LAYER_RULES)
def test_imports_follow_the_direction_of_flow(importers, forbidden, why):
    wrong = sorted(f"{m} imports {t}" for m, targets in GRAPH.items() if _in(m, *importers)
                   for t in targets if _in(t, *forbidden))
    assert wrong == [], why


RANK = {unit: rank for rank, (_, units) in enumerate(LAYERS) for unit in units}
UNIT_OF: dict[str, str] = {}  # a module that counts as part of another unit (none today)


def _unit(module: str) -> str:
    """The top-level module or package ``module`` belongs to (``kdump.verify.walk`` -> ``kdump.verify``)."""
    return UNIT_OF.get(module, ".".join(module.split(".")[:2]))


def _compiled(module: str) -> bool:
    return MODULES[module].suffix == ".pyx"


def _unit_graph(edges: dict[str, set[str]]) -> dict[str, dict[str, list[str]]]:
    """unit -> unit it imports -> the module imports that make the edge. ``kdump._backend`` imports each layer's
    compiled twins only to hand them to the pure module of that layer that asked (``pick``): those imports are
    the picking module's, not the chooser's, so they are left out (else every layer with a twin would sit
    both below and above the chooser)."""
    units: dict[str, dict[str, list[str]]] = {}
    for module, targets in edges.items():
        out = units.setdefault(_unit(module), {})
        for t in targets:
            if module == "kdump._backend" and t in MODULES and _compiled(t):
                continue
            if _unit(t) != _unit(module):
                out.setdefault(_unit(t), []).append(f"{module} imports {t}")
    return units


UNITS = _unit_graph(GRAPH)


def test_every_package_has_a_layer():
    """A new top-level module or package is placed in LAYERS (and in docs/architecture.md's diagram)."""
    assert sorted(u for u in UNITS if u not in RANK) == []
    assert sorted(u for u in RANK if u not in UNITS) == []  # and none is listed that no longer exists


ROOT_MODULES = {"kdump", "kdump.__main__", "kdump.cli", "kdump.errors", "kdump._backend"}


def test_the_root_holds_only_entry_points():
    """kdump/ itself holds the entry points (the library API, ``python -m kdump``, the CLI), the errors every layer
    raises and the twin chooser; every other module lives in the folder of its layer."""
    assert sorted(m for m in MODULES if m.count(".") < 2 and m not in ROOT_MODULES
                  and not (PACKAGE / m.split(".")[-1]).is_dir()) == []
    assert sorted(m for m in ROOT_MODULES if m not in MODULES) == []


def _upward(units: dict[str, dict[str, list[str]]], rank: dict[str, int]) -> list[str]:
    return sorted(why for unit, targets in units.items() for target, whys in targets.items()
                  if rank[target] > rank[unit] for why in whys)


def test_imports_point_down_the_layers():
    """No module imports from a layer above its own (a checker from a renderer, a reader from a consumer...)."""
    assert _upward(UNITS, RANK) == []


def test_no_cycle_between_packages():
    """Packages (not only modules) form no cycle: within one layer too, one package is below the other."""
    assert _cycles({u: set(targets) for u, targets in UNITS.items()}) == []


def test_the_layer_checks_find_what_they_look_for():
    units = _unit_graph({"kdump.verify.walk": {"kdump.render.kafka_text", "kdump.read.segment"},
                         "kdump.render.kafka_text": {"kdump.verify.walk"}, "kdump.read.segment": set(),
                         "kdump._backend": {"kdump.format._records"}, "kdump.format._records": set()})
    assert units["kdump._backend"] == {}  # the chooser's imports of compiled twins are their picker's
    rank = {"kdump._backend": 0, "kdump.format": 1, "kdump.read": 2, "kdump.verify": 3, "kdump.render": 4}
    assert _upward(units, rank) == ["kdump.verify.walk imports kdump.render.kafka_text"]
    assert _cycles({u: set(targets) for u, targets in units.items()}) == [["kdump.render", "kdump.verify"]]
    assert "kdump.read.segment" in GRAPH["kdump.spark._source"]  # ``from kdump import SegmentReader``
    assert "kdump.write.segment" in GRAPH["kdump"]  # the package's lazy exports


# --- byte layouts ---------------------------------------------------------------------------------------
LAYOUT_HOMES = ("kdump.format", "kdump.codec")
STRUCT_CALLS = {"Struct", "pack", "pack_into", "unpack", "unpack_from", "iter_unpack", "calcsize"}
# names that hold raw bytes of an entry, a header or a file, where a literal position is a layout spelled inline
BYTE_NAMES = {"head", "header", "hdr", "body", "buf", "data", "raw", "entry", "prefix", "chunk", "blob", "key",
              "value", "payload"}


def _int_constant(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int


def _layout_spellings(path: Path) -> list[str]:
    found = []
    if path.suffix != ".py":  # the compiled twins live in format/ and render/ and read through C pointers
        return found
    for node in ast.walk(_tree(path)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom) and node.module == "struct":
            found.append(f"{line}: from struct import ...")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STRUCT_CALLS
              and isinstance(node.func.value, ast.Name) and node.func.value.id == "struct"):
            found.append(f"{line}: struct.{node.func.attr}(...)")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "from_bytes"
              and node.args and isinstance(node.args[0], ast.Subscript)
              and isinstance(node.args[0].slice, ast.Slice)
              and any(_int_constant(b) for b in (node.args[0].slice.lower, node.args[0].slice.upper))):
            found.append(f"{line}: int.from_bytes of a fixed slice")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id in BYTE_NAMES:
            s = node.slice
            bounds = (s.lower, s.upper) if isinstance(s, ast.Slice) else (s,)
            if any(_int_constant(b) and b.value not in (0, 1) for b in bounds):
                found.append(f"{line}: {ast.unparse(node)}")
    return found


def test_byte_layouts_only_in_format_and_codec():
    """No module outside kdump/format/ (and kdump/codec/, whose compression framings are its own) builds a
    struct, calls struct.pack/unpack*, or reads a field of raw bytes at a literal position (``head[16]``):
    every layout is named in kdump/format/layout.py or kdump/format/index_layout.py."""
    spelled = {m: found for m, p in MODULES.items() if not _in(m, *LAYOUT_HOMES)
               for found in [_layout_spellings(p)] if found}
    assert spelled == {}


def test_the_layout_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("import struct\nH = struct.Struct('>q')\nstruct.unpack_from('>i', b, 2)\nm = head[16]\n"
                      "t = int.from_bytes(key[2:4], 'big')\nfrom struct import pack\nok = items[5]\n")
    assert sorted(_layout_spellings(sample)) == [
        "2: struct.Struct(...)", "3: struct.unpack_from(...)", "4: head[16]", "5: int.from_bytes of a fixed slice",
        "5: key[2:4]", "6: from struct import ..."]


# --- Kafka's directory layout: one module -----------------------------------------------------------------
# File-name rules of a log directory (segment names, index suffixes) are spelled only in
# kdump/read/logdir.py; everything else asks it (classify, named_kind, sibling, file_name, segment_base_offset...).
_NAME_RULES = re.compile(
    r""":020d|%020d|\.endswith\(\s*["'](?:\.log|\.index|\.timeindex|\.txnindex|\.snapshot|\.checkpoint)["']"""
    r"""|["']\.(?:timeindex|txnindex)["']""")


def _name_rules(path: Path) -> list[str]:
    found = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        code = line.split("#", 1)[0]
        if _NAME_RULES.search(code) and not code.lstrip().startswith(('"', "'", "``")):
            found.append(f"{n}: {line.strip()}")
    return found


def test_directory_layout_only_in_logdir():
    spelled = {m: found for m, p in MODULES.items() if m != "kdump.read.logdir"
               for found in [_name_rules(p)] if found}
    assert spelled == {}


def test_the_name_rule_check_finds_what_it_looks_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('name = f"{base:020d}.log"\nok = p.endswith(".timeindex")\n')
    assert len(_name_rules(bad)) == 2


# --- value names: one table ---------------------------------------------------------------------------------
def _value_name_tables(path: Path, tables) -> list[str]:
    """Literal tuples, lists, sets and dicts (keys or values) in ``path`` holding two or more names of one of
    ``tables`` -- a copy of that table, wherever it is written (an assignment, an argument, a ``click.Choice``)."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Dict):
            items = [*node.keys, *node.values]
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = node.elts
        else:
            continue
        strings = {i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)}
        found += [f"{node.lineno}: {sorted(strings & names)}" for names in tables if len(strings & names) > 1]
    return found


def test_value_names_only_in_their_table():
    """Codec, timestamp-type and control-type names (kdump/format/names.py) are spelled there only: every
    other module reads them from it, so the CLI's choices, the text, the JSON and the Arrow columns agree."""
    from kdump.format import names
    tables = [set(names.CODEC_NAMES), set(names.TIMESTAMP_TYPE_TEXT.values()),
              set(names.TIMESTAMP_TYPE_JSON.values()), set(names.CONTROL_TYPE_NAMES.values()),
              set(names.KRAFT_CONTROL_LABELS.values())]
    sample = PACKAGE / "format" / "names.py"
    # the check sees the tables where they are (the codec names are kdump/codec's table of codecs, a row per
    # codec: tests/test_one_implementation.py holds that one)
    assert len(_value_name_tables(sample, tables[1:])) >= len(tables) - 1
    spelled = {m: found for m, p in MODULES.items() if m != "kdump.format.names"
               for found in [_value_name_tables(p, tables)] if found}
    assert spelled == {}


# --- flags: only the command line names them -----------------------------------------------------------------
# The library's errors, findings and notes carry a code and their facts; kdump/commands/hints.py turns a code into
# the hint that names a flag. Docstrings may say which flag reaches the code they document; strings that reach a
# user may not. Flags of other programs kdump runs or reads are theirs (protoc's, for a .proto schema; spark-submit's).
FLAG = re.compile(r"(?<![\w-])--(?:[a-z]|\{)")
OTHER_PROGRAMS_FLAGS = {("kdump.decode.schema_registry.protobuf", "--include_imports"),
                        ("kdump.decode.schema_registry.protobuf", "--descriptor_set_out="),
                        ("kdump.spark.session", "--master")}
COMMAND_LINE = ("kdump.commands", "kdump.cli", "kdump.__main__")


def _flag_strings(path: Path) -> list[str]:
    tree = _tree(path)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    in_fstrings = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # f"--{name}-decoder": the formatted parts as {}
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and id(node) not in in_fstrings):
            text = node.value
        else:
            continue
        if FLAG.search(text):
            found.append(f"{node.lineno}: {text}")
    return found


def test_only_the_command_line_names_flags():
    spelled = {m: found for m, p in MODULES.items() if not _in(m, *COMMAND_LINE)
               for found in [[f for f in _flag_strings(p)
                              if not any(other == m and flag in f for other, flag in OTHER_PROGRAMS_FLAGS)]] if found}
    assert spelled == {}


def test_the_flag_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""Docs may name --force."""\ndef f(name):\n    """Nor here: --jobs."""\n'
                      '    a = "exists (use --force to replace)"\n    b = f"add --{name}-decoder"\n'
                      '    c = "a - b -- c"\n    return a, b, c\n')
    assert _flag_strings(sample) == ["4: exists (use --force to replace)", "5: add --{}-decoder"]


# --- the docs of the layout, checked against the tree ------------------------------------------------------------
ARCHITECTURE_DOC = ROOT / "docs" / "architecture.md"
WHERE_DO_I_ADD = ("a codec", "a decoder", "a record type", "a verify check", "an output format", "a Spark option",
                  "a command")
_DOC_PATH = re.compile(r"`((?:kdump|tests|docs|tools|fixtures|bench)/[\w./-]*)`")
_DOC_MODULE = re.compile(r"`(kdump(?:\.\w+)+)")


def _where_do_i_add(text: str) -> dict[str, str]:
    """'## Where do I add ...': each ``- **thing** ...`` answer by its thing (``a record type (of ...)``: ``a record
    type``)."""
    section = text.split("## Where do I add ...", 1)[1].split("\n## ", 1)[0]
    answers = re.split(r"^- \*\*", section, flags=re.M)[1:]
    return {a.split("**", 1)[0].split(" (")[0]: a.split("**", 1)[1] for a in answers}


def _top_level_names(module: str) -> set[str]:
    """What ``module`` defines or imports at its top level, and its submodules."""
    names = {m.rsplit(".", 1)[1] for m in MODULES if m.rpartition(".")[0] == module}
    for node in ast.iter_child_nodes(_tree(MODULES[module])):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _missing_paths(text: str) -> list[str]:
    """The paths (``kdump/read/segment.py``) and dotted names (``kdump.read.damage.Damage``) ``text`` names that do
    not exist: a dotted name is a module, or a module and a name it defines."""
    paths = {p for p in _DOC_PATH.findall(text) if not (ROOT / p.rstrip(".")).exists()}
    modules = set()
    for name in _DOC_MODULE.findall(text):
        module = _known(name)
        rest = name[len(module) + 1:].split(".")[0] if module else ""
        known = _top_level_names(module) | (set(FACADE_EXPORTS) if module == "kdump" else set()) if module else set()
        if module is None or (rest and rest not in known):
            modules.add(name if module in (None, "kdump") else f"{module}.{rest}")
    return sorted(paths) + sorted(modules)


def test_where_do_i_add_answers_each_change_with_one_path():
    """docs/architecture.md answers "where do I add" for each of these, its first path being where it goes."""
    answers = _where_do_i_add(ARCHITECTURE_DOC.read_text())
    assert sorted(set(WHERE_DO_I_ADD) - set(answers)) == []
    firsts = {what: _DOC_PATH.search(answers[what]) for what in WHERE_DO_I_ADD}
    assert [what for what, first in firsts.items() if first is None] == []
    assert _missing_paths("\n".join(answers.values())) == []


def test_the_architecture_doc_names_what_exists():
    """Every path and module docs/architecture.md names exists, and its diagram names every layer's packages."""
    text = ARCHITECTURE_DOC.read_text()
    assert _missing_paths(text) == []
    diagram = text.split("```", 2)[1]
    unnamed = [u for u in RANK if u != "kdump" and not any(f"{u.split('.')[1]}{end}" in diagram for end in ("/", ".py"))]
    assert unnamed == []


def test_the_doc_checks_find_what_they_look_for():
    text = ("## Where do I add ...\n\n- **a codec**: `kdump/codec/`, `kdump/nowhere.py`, `kdump.read.nothing.X`\n"
            "- **a record type** (of a topic): `kdump/format/schemas/`, `kdump.read.damage.Damage`\n\n## Next\n")
    assert sorted(_where_do_i_add(text)) == ["a codec", "a record type"]
    assert _missing_paths(text) == ["kdump/nowhere.py", "kdump.read.nothing"]


def test_the_tests_map_names_every_test_file():
    """tests/README.md maps each test file to the part of the package it covers."""
    text = (ROOT / "tests" / "README.md").read_text()
    named = set(re.findall(r"`(test_\w+\.py)`", text))
    files = {p.name for p in (ROOT / "tests").glob("test_*.py")}
    assert (sorted(files - named), sorted(named - files)) == ([], [])
    assert sorted(p for p in re.findall(r"`(support/\w+\.py)`", text) if not (ROOT / "tests" / p).exists()) == []


# --- privates: no module reaches into another's ------------------------------------------------------------------
# ``obj._name`` is a private member of the class or module that defines ``_name``. A module uses the privates it
# defines itself (``self._x`` and ``cls._x`` always; another instance of a class of its own too), never another
# module's: what a consumer needs of another module's class is that class's declared public interface (the record
# checks of kdump/verify/deep.py take the verifier as its ``RecordChecks``; each file kind's check in
# kdump/index/check/ takes the partition as ``context.Context``).
OTHER_LIBRARIES_PRIVATES = {
    # the standard library's own documented names, spelled with an underscore
    ("kdump.format.names", "sys._getframe"): "the caller's module for a generated function, as namedtuple does",
    ("kdump.jobs", "os._exit"): "a forked worker ends without the parent's exit handlers (os module docs)",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _foreign_privates(path: Path) -> list[str]:
    """``obj._name`` in ``path`` where ``_name`` is defined nowhere in ``path`` (as a function, class, method,
    attribute or name): a private of another module's object."""
    if path.suffix != ".py":  # (the compiled twins' Python lines are imports only)
        return []
    tree = _tree(path)
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
              and node.value.id in ("self", "cls")):  # (``other._x = ...`` is a use of another object's private)
            defined.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.alias):
            defined.add(node.asname or node.name.split(".")[0])
    return sorted(f"{node.lineno}: {ast.unparse(node)}" for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in defined
                  and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")))


def test_no_module_uses_another_modules_privates():
    found = {m: [f for f in _foreign_privates(p) if (m, f.split(": ", 1)[1]) not in OTHER_LIBRARIES_PRIVATES]
             for m, p in MODULES.items()}
    assert {m: f for m, f in found.items() if f} == {}
    # the allowances are still needed (a fixed one leaves the list)
    used = {(m, f.split(": ", 1)[1]) for m, p in MODULES.items() for f in _foreign_privates(p)}
    assert sorted(set(OTHER_LIBRARIES_PRIVATES) - used) == []


def test_the_privates_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("class A:\n    def _own(self):\n        return self._x, cls._y, other._own()\n"
                      "def f(v):\n    v._add('code')\n    v._next = 1\n"
                      "    return v.add, v.__class__, mod._helper(v._gap)\n")
    assert _foreign_privates(sample) == ["5: v._add", "6: v._next", "7: mod._helper", "7: v._gap"]


def _private_imports_across_packages(path: Path, package: str) -> list[str]:
    """``from kdump.x import _name`` in ``path`` (of ``package``) where ``kdump.x`` is not in ``package``: a
    private of another package taken by name (the twin chooser ``kdump._backend``, a module every layer
    imports, excepted)."""
    return [f"{node.lineno}: {node.module}.{alias.name}" for node in ast.walk(_tree(path))
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("kdump")
            and not (node.module == package or (node.module or "").startswith(package + "."))
            for alias in node.names if _private(alias.name) and f"{node.module}.{alias.name}" != "kdump._backend"]


def _package_of(path: Path) -> str:
    """The top-level package (a layer) ``path`` belongs to: ``kdump.render`` for kdump/render/jsonl.py."""
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:2]) if len(parts) > 2 else "kdump"


def test_no_package_imports_another_packages_privates():
    found = {m: hits for m, p in MODULES.items() if p.suffix == ".py"
             and (hits := _private_imports_across_packages(p, _package_of(p)))}
    assert found == {}


def test_the_private_imports_check_finds_what_it_looks_for(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from kdump import _backend\nfrom kdump.render.jsonl import _json\n"
                      "from kdump.verify.walk import _helper, public\nfrom kdump.verify import _mine\n")
    assert _private_imports_across_packages(sample, "kdump.verify") == ["2: kdump.render.jsonl._json"]
