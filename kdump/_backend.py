"""Chooses between the compiled fast path (``kdump._speedups``, built from ``kdump/_speedups.pyx`` by
``pip install`` when a C compiler is available) and the pure-Python functions it mirrors.

Accelerated functions, each with a pure twin of the same contract:

* ``kdump.format.v2.parse_records`` (twin ``parse_records_py``): decode a batch's records column-wise;
* ``kdump.render.kafka_text.render_v2_lines`` (twin ``render_v2_lines_py``): DumpLogSegments record lines.

``KDUMP_PURE_PYTHON=1`` forces the pure path. :func:`use` switches at run time (the test suite runs its
reader and renderer tests on both).
"""
import os

try:
    from kdump import _speedups
except ImportError:
    _speedups = None

COMPILED_AVAILABLE = _speedups is not None and hasattr(_speedups, "render_v2_lines")
BACKEND = "compiled" if COMPILED_AVAILABLE and os.environ.get("KDUMP_PURE_PYTHON", "") not in (
    "1", "true", "yes") else "python"

ACCELERATED = {
    "parse_records": ("kdump.format.v2", "parse_records_py"),
    "render_v2_lines": ("kdump.render.kafka_text", "render_v2_lines_py"),
}


def pick(name: str, pure):
    """The implementation of ``name`` for the current backend (``pure`` is the Python twin)."""
    if BACKEND == "compiled":
        return getattr(_speedups, name)
    return pure


def use(backend: str) -> None:
    """Switch every accelerated function to ``"compiled"`` or ``"python"``."""
    global BACKEND
    import importlib
    if backend == "compiled" and not COMPILED_AVAILABLE:
        raise RuntimeError("the compiled extension kdump._speedups is not built")
    if backend not in ("compiled", "python"):
        raise ValueError(backend)
    BACKEND = backend
    for name, (module_name, pure_name) in ACCELERATED.items():
        module = importlib.import_module(module_name)
        setattr(module, name, pick(name, getattr(module, pure_name)))
