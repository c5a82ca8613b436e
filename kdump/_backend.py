"""Chooses between the compiled fast path and the pure-Python functions it mirrors.

The compiled modules are built by ``pip install`` when a C compiler is available, one per layer, each
importing only from its own layer or below (never the pure module that uses it):

* ``kdump.format._records`` (``kdump/format/_records.pyx``): ``parse_records``, twin of
  ``kdump.format.v2.parse_records_py`` (decode a batch's records column-wise), and ``summarize_records``,
  twin of ``summarize_records_py`` (the same walk and checks, summarized without the records);
* ``kdump.render._lines`` (``kdump/render/_lines.pyx``): ``render_v2_lines``, twin of
  ``kdump.render.kafka_text.render_v2_lines_py`` (DumpLogSegments record lines), and
  ``render_legacy_lines``, twin of ``render_legacy_lines_py`` (the same for magic 0/1 messages), and
  ``render_legacy_run``, twin of ``render_legacy_run_py`` (a run of plain magic 0/1 messages, batch lines too);
* ``kdump.format._legacy`` (``kdump/format/_legacy.pyx``): ``inner_columns``, twin of
  ``kdump.format.legacy.inner_columns_py`` (walk a magic 0/1 wrapper's inner messages column-wise), and
  ``run_keys``, twin of ``run_keys_py`` (a run of plain messages as ``kdump stats``' key digests);
* ``kdump.format._encode`` (``kdump/format/_encode.pyx``): ``canonical_records``, twin of
  ``kdump.format.canonical.canonical_records_py``, and ``encode_messages``, twin of
  ``kdump.format.legacy_builder.encode_messages_py``, and ``encode_run_records``, twin of
  ``kdump.format.v2_builder.encode_run_records_py`` (convert's per-record encoders);
* ``kdump.render._jsonl`` (``kdump/render/_jsonl.pyx``): ``records_json``, twin of
  ``kdump.render.jsonl.records_json_py`` (``--format json`` records), ``records_lines``, twin of
  ``kdump.render.records.records_lines_py`` (``--format records``: the same records, each a whole object on a
  line), and ``render_legacy_run_json``, twin of ``render_legacy_run_json_py`` (a run of plain magic 0/1 messages,
  each with its batch object);
* ``kdump.format._avro`` (``kdump/format/_avro.pyx``): ``avro_program``, twin of
  ``kdump.decode.schema_registry.avro.avro_program_py`` (a schema compiled to write its Avro values as JSON
  text; the pure twin makes none: fastavro reads), and ``framed_texts``, twin of
  ``kdump.decode.schema_registry.decoder.framed_texts_py`` (a column of Schema Registry payloads as text);
* ``kdump.spark._arrow`` (``kdump/spark/_arrow.pyx``): ``ColumnBuilder``, twin of
  ``kdump.spark.builder.PyColumnBuilder`` (records into the Arrow buffers of the Spark data source);
* ``kdump.stats._keytable`` (``kdump/stats/_keytable.pyx``): ``KeyTable``, twin of
  ``kdump.stats.keytable.PyKeyTable`` (``kdump stats``' key digests counted); ``kdump.format._records`` also has
  ``record_keys``, twin of ``kdump.format.v2.record_keys_py`` (a batch's records as those digests).

A pure module picks its implementation with :func:`pick` when it is imported, which also hands the pure
twin to the compiled module (for the inputs its fast path leaves to the pure function).
``KDUMP_PURE_PYTHON=1`` forces the pure path. :func:`use` switches at run time (the test suite runs its
reader and renderer tests on both).
"""
import os
import sys

try:
    import kdump.format._avro as _avro
    import kdump.format._encode as _encode
    import kdump.format._legacy as _legacy
    import kdump.format._records as _records
    import kdump.render._jsonl as _jsonl
    import kdump.render._lines as _lines
    import kdump.spark._arrow as _arrow
    import kdump.stats._keytable as _keytable
except ImportError:
    _legacy = _records = _lines = _jsonl = _encode = _arrow = _avro = _keytable = None

COMPILED_AVAILABLE = _records is not None and _lines is not None and _legacy is not None and _jsonl is not None \
    and _encode is not None and _arrow is not None and _avro is not None and _keytable is not None
BACKEND = "compiled" if COMPILED_AVAILABLE and os.environ.get("KDUMP_PURE_PYTHON", "") not in (
    "1", "true", "yes") else "python"

COMPILED = {"parse_records": _records, "summarize_records": _records, "record_keys": _records,
            "render_v2_lines": _lines,
            "inner_columns": _legacy, "inner_summary": _legacy, "crc32": _legacy, "render_legacy_lines": _lines,
            "run_keys": _legacy,
            "render_legacy_run": _lines, "records_json": _jsonl, "records_lines": _jsonl,
            "render_legacy_run_json": _jsonl,
            "canonical_records": _encode, "encode_messages": _encode,
            "encode_run_records": _encode, "ColumnBuilder": _arrow,
            "avro_program": _avro, "framed_texts": _avro,
            "KeyTable": _keytable}  # accelerated name -> its compiled module
_PURE: dict = {}  # accelerated name -> the pure twin, as the pure modules picked


def pick(name: str, pure):
    """The implementation of ``name`` for the current backend (``pure`` is the Python twin)."""
    _PURE[name] = pure
    if not COMPILED_AVAILABLE:
        return pure
    compiled = COMPILED[name]
    setattr(compiled, pure.__name__, pure)
    return getattr(compiled, name) if BACKEND == "compiled" else pure


def compiled_modules() -> list[str]:
    """The names of the compiled modules in use by the current backend (none on the pure path)."""
    return sorted({m.__name__ for m in COMPILED.values()}) if BACKEND == "compiled" else []


def compiled(name: str):
    """The compiled implementation of ``name`` whatever the current backend (for a caller that asks for it, as
    the Spark source's ``backend`` option does); ImportError when the compiled modules are not built."""
    if not COMPILED_AVAILABLE:
        raise ImportError(f"kdump's compiled modules are not built (no compiled {name})")
    return getattr(COMPILED[name], name)


def use(backend: str) -> None:
    """Switch every accelerated function to ``"compiled"`` or ``"python"`` (modules imported later pick
    the new one by themselves)."""
    global BACKEND
    if backend == "compiled" and not COMPILED_AVAILABLE:
        raise RuntimeError("kdump's compiled modules (setup.py EXTENSIONS) are not built")
    if backend not in ("compiled", "python"):
        raise ValueError(backend)
    BACKEND = backend
    for name, pure in _PURE.items():
        setattr(sys.modules[pure.__module__], name, pick(name, pure))
