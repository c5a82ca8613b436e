"""The Spark session shared by every Spark test of a run (``local[1]``, UI off, quiet), or a clean skip
saying why when pyspark or Java is missing -- a failure instead when ``CI=true`` (CI has both)."""
import os

import pytest


def missing_runtime() -> str | None:
    try:
        from kdump.spark.session import check_runtime
        check_runtime()
    except ImportError as e:  # pyarrow/pyspark not importable at all
        return f"Spark tests need the spark extra: {e}"
    except Exception as e:
        return str(e)
    return None


def require_runtime() -> None:
    reason = missing_runtime()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but Spark cannot run: {reason}")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def spark():
    require_runtime()
    from kdump.spark.session import build_session
    session = build_session("local[1]", app_name="kdump-tests",
                            conf={"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "1"})
    yield session
    from kdump.spark.session import stop_session
    stop_session(session)
