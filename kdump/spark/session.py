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
    path = os.path.join(scratch_directory(), "log4j2-quiet.properties")
    if not os.path.exists(path):
        with open(path + ".tmp", "w") as f:
            f.write(QUIET_LOG4J)
        os.replace(path + ".tmp", path)
    return path


_SCRATCH = re.compile(r"kdump-spark-(\d+)-(\d+)\.run")  # uid, pid


def scratch_directory() -> str:
    """This run's directory for Spark's scratch (``spark.local.dir``: the ``blockmgr-*`` and ``spark-*``
    directories; the JVM's ``java.io.tmpdir``; the quiet log4j configuration): ``$TMPDIR/kdump-spark-<uid>-<pid>.run``,
    made on first use and removed whole by :func:`stop_session` (so also after Ctrl-C: the command stops its
    session in a ``finally``). A killed run's is recognised by its name and its dead pid and removed by the next
    run (:func:`remove_stale_scratch`)."""
    path = os.path.join(tempfile.gettempdir(), f"kdump-spark-{os.getuid()}-{os.getpid()}.run")
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: alive
        return True
    return True


def remove_stale_scratch() -> list[str]:
    """Remove the scratch directories (and the logs beside them) of this user's kdump Spark runs whose process is
    gone (killed: an orderly end removes its own); returns what was removed. A log kept on purpose (a run that
    failed, whose message named it) has no scratch directory beside it and stays."""
    removed: list[str] = []
    tmp = tempfile.gettempdir()
    try:
        names = os.listdir(tmp)
    except OSError:
        return removed
    for name in names:
        m = _SCRATCH.fullmatch(name)
        if m is None or int(m.group(1)) != os.getuid() or int(m.group(2)) == os.getpid() or _alive(int(m.group(2))):
            continue
        path = os.path.join(tmp, name)
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
        log = os.path.join(tmp, f"kdump-spark-{m.group(1)}-{m.group(2)}.log")
        if os.path.exists(log):
            os.unlink(log)
            removed.append(log)
    return removed


def log_file() -> str:
    """Where a quiet session's JVM (and its Python workers) write their stderr."""
    return os.path.join(tempfile.gettempdir(), f"kdump-spark-{os.getuid()}-{os.getpid()}.log")


def stop_session(spark, *, keep_log: bool = False) -> str | None:
    """Stop a session kdump started, remove its scratch directory (:func:`scratch_directory`), and remove the file
    its JVM wrote its stderr to unless ``keep_log`` (a run that failed: the file is where Spark said why). The path
    kept, or None."""
    try:
        spark.stop()
    finally:
        scratch = os.path.join(tempfile.gettempdir(), f"kdump-spark-{os.getuid()}-{os.getpid()}.run")
        shutil.rmtree(scratch, ignore_errors=True)
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


def _local(master: str | None) -> bool:
    """Whether the session runs in this process's machine: ``local[...]``, or no master named (kdump's default,
    unless spark-submit names one)."""
    if master is not None:
        return master.startswith("local")
    submitted = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    return "--master" not in submitted and "spark.master" not in submitted and not os.environ.get("SPARK_ENV_LOADED")


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
    java_options = []
    if SparkSession.getActiveSession() is None:  # a new JVM: its scratch goes to this run's own directory
        remove_stale_scratch()
        scratch = scratch_directory()
        java_tmp = os.path.join(scratch, "tmp")
        os.makedirs(java_tmp, exist_ok=True)
        java_options.append(f"-Djava.io.tmpdir={java_tmp}")
        if _local(master):  # a cluster's executors keep their own local directories
            settings["spark.local.dir"] = os.path.join(scratch, "local")
    if not verbose:
        quiet = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
        java_options.append(quiet)
        settings["spark.executor.extraJavaOptions"] = quiet
    if java_options:
        settings["spark.driver.extraJavaOptions"] = " ".join(java_options)
    settings.update(conf or {})
    for k, v in settings.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate() if verbose else _with_stderr_to(log_file(), builder.getOrCreate)
    if not verbose:
        spark.sparkContext.setLogLevel("ERROR")
    from kdump.spark import register
    register(spark)
    return spark
