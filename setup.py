"""Build script for kdump's optional compiled fast path: one extension per layer (see ``EXTENSIONS``).

Project metadata lives in pyproject.toml; this file only declares the extension. The extension is
optional: if Cython is missing, or compiling fails (no C compiler, missing Python headers, ...), the
build prints a warning and carries on, and kdump uses its pure-Python twins
(``kdump._backend.BACKEND == "python"``).

    pip install .        # wheel with the compiled module (when it builds)
    pip install -e .     # editable: the modules are built in place, next to their .pyx files

Set ``KDUMP_REQUIRE_COMPILED=1`` to make a failed build an error instead of a warning.
"""
import os
import sys
import traceback

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
# module name -> source; each is optional, each imports only from its own layer or below.
EXTENSIONS = {
    "kdump.format._records": "kdump/format/_records.pyx",  # magic-2 record decoder (twin: format.v2.parse_records_py)
    "kdump.format._legacy": "kdump/format/_legacy.pyx",  # magic 0/1 inner message walk (twin: legacy.inner_columns_py)
    "kdump.format._encode": "kdump/format/_encode.pyx",  # per-record encoders of convert (twins in format/)
    "kdump.format._avro": "kdump/format/_avro.pyx",  # Avro binary to JSON text (twin: fastavro + json, decode/)
    "kdump.render._lines": "kdump/render/_lines.pyx",  # DumpLogSegments record lines (twin: render_v2_lines_py)
    "kdump.render._jsonl": "kdump/render/_jsonl.pyx",  # --format json records (twin: jsonl.records_json_py)
    "kdump.spark._arrow": "kdump/spark/_arrow.pyx",  # records into Arrow buffers (twin: spark.builder.PyColumnBuilder)
    "kdump.stats._keytable": "kdump/stats/_keytable.pyx",  # stats' key digests counted (twin: keytable.PyKeyTable)
}
# zlib's crc32 (the library Python's own zlib module links)
LIBRARIES: dict[str, list[str]] = {}  # libraries a module links, by name (none today)
REQUIRED = os.environ.get("KDUMP_REQUIRE_COMPILED", "") in ("1", "true", "yes")


def warn(message: str) -> None:
    bar = "*" * 78
    sys.stderr.write(f"\n{bar}\nWARNING: {message}\nkdump will use its pure-Python record decoder.\n{bar}\n\n")


def extensions():
    sources = {name: pyx for name, pyx in EXTENSIONS.items() if os.path.exists(os.path.join(HERE, pyx))}
    if not sources:
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        if REQUIRED:
            raise
        warn("Cython is not installed, so kdump's compiled modules are not built.")
        return []
    exts = [Extension(name, [pyx], libraries=LIBRARIES.get(name, [])) for name, pyx in sources.items()]
    try:
        return cythonize(exts, language_level=3, quiet=True)
    except Exception:
        if REQUIRED:
            raise
        traceback.print_exc()
        warn("Cython could not translate kdump's .pyx files, so the compiled modules are not built.")
        return []


class optional_build_ext(build_ext):
    """build_ext that turns a failed compile into a warning (the extension is an accelerator only)."""

    def run(self):
        try:
            super().run()
        except Exception as e:  # e.g. no compiler at all (PlatformError) before any extension is tried
            if REQUIRED:
                raise
            warn(f"building the C extension failed ({e}).")

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:  # CompileError, LinkError, ExecError, OSError, ...
            if REQUIRED:
                raise
            warn(f"building {ext.name} failed ({e}).")
            # Forget it, so that the in-place copy (editable installs) and the wheel's file list skip it.
            self.extensions = [x for x in self.extensions if x is not ext]


setup(ext_modules=extensions(), cmdclass={"build_ext": optional_build_ext})
