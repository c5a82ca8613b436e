"""CRC-32C (Castagnoli) from the ``crc32c`` package's C extension, without its package ``__init__``.

That ``__init__`` asks ``importlib.metadata`` for the package version, which costs 20-30 ms at every start
of ``kdump`` (a third of a shallow dump of a 250 MB segment). kdump only needs the C function, so it loads
the extension module from the package directory directly, and falls back to the ordinary import if the
package layout is not the expected one.
"""
import importlib.machinery
import importlib.util
import os


def _load():
    try:
        spec = importlib.util.find_spec("crc32c")  # finds the package without executing it
        if spec is None:
            raise ModuleNotFoundError("crc32c")  # the documented import below says so
        for directory in spec.submodule_search_locations or ():
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(directory, "_crc32c" + suffix)
                if os.path.exists(path):
                    loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
                    ext_spec = importlib.util.spec_from_file_location("crc32c._crc32c", path, loader=loader)
                    assert ext_spec is not None  # a file location with a loader always gives a spec
                    module = importlib.util.module_from_spec(ext_spec)
                    loader.exec_module(module)
                    return module.crc32c
    except Exception:  # pragma: no cover - any surprise: use the documented import
        pass
    import crc32c
    return crc32c.crc32c


crc32c = _load()
