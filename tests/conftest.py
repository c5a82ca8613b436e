import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))  # tests/corpus.py helpers


@pytest.fixture
def in_dir(monkeypatch):
    """Run with a given working directory (Kafka's dumps were made from the file's directory)."""
    def _chdir(d):
        monkeypatch.chdir(d)
    return _chdir


@pytest.fixture(params=["compiled", "python"])
def backend(request):
    """Run a test on the compiled fast path and on the pure-Python path (kdump/_backend.py).

    Modules that read or render records use it (``pytestmark = pytest.mark.usefixtures("backend")``).
    Without the extension the compiled run is skipped, unless KDUMP_REQUIRE_COMPILED=1 or CI=true makes
    that a failure (CI must test both paths).
    """
    from kdump import _backend
    if request.param == "compiled" and not _backend.COMPILED_AVAILABLE:
        if os.environ.get("KDUMP_REQUIRE_COMPILED", "") in ("1", "true", "yes") or os.environ.get("CI") == "true":
            pytest.fail("KDUMP_REQUIRE_COMPILED=1 but the compiled extensions (kdump.format._records, kdump.render._lines) are not built")
        pytest.skip("the compiled extension is not built")
    previous = _backend.BACKEND
    _backend.use(request.param)
    yield request.param
    _backend.use(previous)


from spark_session import spark  # noqa: E402,F401  (the one Spark session of a test run; skips without Spark)
