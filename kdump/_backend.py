"""Chooses the compiled record decoder when it is built and allowed, else the pure-Python one.

Set ``KDUMP_PURE_PYTHON=1`` to force the pure-Python path (the test suite runs both).
"""
import os

BACKEND = "python"
if os.environ.get("KDUMP_PURE_PYTHON", "") not in ("1", "true", "yes"):
    try:
        from kdump._speedups import parse_records  # noqa: F401
        BACKEND = "compiled"
    except ImportError:
        pass

if BACKEND == "python":
    from kdump.format.v2 import parse_records_py as parse_records  # noqa: F401
