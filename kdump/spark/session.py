"""Starting Spark for kdump: a quiet local session by default, a cluster with ``master``.

Spark needs Java (17 or later for Spark 4) and pyspark; :func:`check_runtime` says clearly which is
missing instead of the traceback pyspark's launcher would show. Spark's log4j output and console
progress bar are turned off unless ``verbose``; the Python workers run this interpreter.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile

from kdump.errors import UsageError

MIN_JAVA = 17

QUIET_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


class RuntimeMissing(UsageError):
    """pyspark or Java is missing or too old (exit code 2)."""


def java_executable() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("java")


def java_major(java: str) -> int | None:
    """The major version ``java -version`` reports (``"17.0.15"`` -> 17, ``"1.8.0_392"`` -> 8)."""
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def check_runtime() -> None:
    """Raise :class:`RuntimeMissing` with a message saying what to install when Spark cannot start."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise RuntimeMissing("pyspark is not installed: pip install 'kdump[spark]'") from None
    java = java_executable()
    if java is None:
        raise RuntimeMissing(f"Spark needs Java {MIN_JAVA} or later, and no java was found (JAVA_HOME is not set "
                             "and java is not on PATH). Install a JDK 17, "
                             "e.g. apt-get install openjdk-17-jre-headless, "
                             "and check with: java -version")
    major = java_major(java)
    if major is None:
        raise RuntimeMissing(f"{java} -version did not run or said no version; Spark needs Java {MIN_JAVA} or later")
    if major < MIN_JAVA:
        raise RuntimeMissing(f"{java} is Java {major}; Spark 4 needs Java {MIN_JAVA} or later "
                             "(set JAVA_HOME to a JDK 17)")


def _log4j_file() -> str:
    path = os.path.join(tempfile.gettempdir(), f"kdump-log4j2-quiet-{os.getuid()}.properties")
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.write(QUIET_LOG4J)
        os.replace(path + ".tmp", path)
    return path


def log_file() -> str:
    """Where a quiet session's JVM (and its Python workers) write their stderr."""
    return os.path.join(tempfile.gettempdir(), f"kdump-spark-{os.getuid()}-{os.getpid()}.log")


def stop_session(spark, *, keep_log: bool = False) -> str | None:
    """Stop a session kdump started quietly, and remove the file its JVM wrote its stderr to unless
    ``keep_log`` (a run that failed: the file is where Spark said why). The path kept, or None."""
    spark.stop()
    path = log_file()
    if not os.path.exists(path):
        return None
    if keep_log and os.path.getsize(path):
        return path
    try:
        os.unlink(path)
    except OSError:
        return path
    return None


def _with_stderr_to(path: str, start):
    """Run ``start`` (which launches the JVM) with file descriptor 2 pointing at ``path``: the JVM keeps
    that stderr for its life, and so do the Python workers it starts, so Spark's start-up lines, log4j
    output and worker warnings land in the file instead of the terminal."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        os.dup2(fd, 2)
        return start()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def build_session(master: str | None = None, *, verbose: bool = False, app_name: str = "kdump", conf=None):
    """A SparkSession with kdump's data source registered (``master`` None: ``local[*]``, or whatever
    ``spark-submit`` set)."""
    check_runtime()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    builder = SparkSession.builder.appName(app_name)
    if master:
        builder = builder.master(master)
    elif "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", "") and not os.environ.get("SPARK_ENV_LOADED"):
        builder = builder.master("local[*]")
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "8",
        "spark.pyspark.python": sys.executable,
    }
    if not verbose:
        opt = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
        settings["spark.driver.extraJavaOptions"] = opt
        settings["spark.executor.extraJavaOptions"] = opt
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate() if verbose else _with_stderr_to(log_file(), builder.getOrCreate)
    if not verbose:
        spark.sparkContext.setLogLevel("ERROR")
    from kdump.spark import register
    register(spark)
    return spark
