"""A real Spark standalone cluster (one master, one worker) and a Spark Connect server on 127.0.0.1, started with
pyspark's own ``spark-class`` for the tests that must see what only a cluster shows: executors with their own
working directory (``work/app-*/N``), Python workers started by a worker daemon, a driver in another process.

Each daemon is a child process of the test run, stopped (and its process group killed) when the context ends.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_class() -> str:
    import pyspark
    return os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-class")


def daemon_env(extra: dict | None = None) -> dict:
    env = dict(os.environ, SPARK_DAEMON_MEMORY="384m", PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1", SPARK_NO_DAEMONIZE="1")
    env.pop("PYTHONPATH", None)  # executors find kdump as installed, as they would on a real cluster
    env.update(extra or {})
    return env


@contextlib.contextmanager
def _daemon(args: list[str], log: Path, env: dict):
    with open(log, "wb") as out:
        proc = subprocess.Popen([spark_class(), *args], stdout=out, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait(what: str, ready, log: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.5)
    raise RuntimeError(f"{what} did not come up in {timeout:.0f} s; its log:\n{log.read_text()[-4000:]}")


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as r:
            return int(json.load(r).get("aliveworkers", 0))
    except (OSError, ValueError):
        return 0


@contextlib.contextmanager
def standalone_cluster(root: Path):
    """Yields the master URL of a one-worker standalone cluster whose worker keeps its executors' working
    directories under ``root/work``."""
    port, ui = free_port(), free_port()
    env = daemon_env()
    master_log, worker_log = root / "master.log", root / "worker.log"
    with _daemon(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                  "--webui-port", str(ui)], master_log, env):
        url = f"spark://127.0.0.1:{port}"
        _wait("the Spark master", lambda: _port_open(port), master_log)
        (root / "work").mkdir(exist_ok=True)
        with _daemon(["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1", "--cores", "2",
                      "--memory", "1g", "--work-dir", str(root / "work"), "--webui-port", str(free_port())],
                     worker_log, env):
            _wait("the Spark worker", lambda: _alive_workers(ui) >= 1, worker_log)
            yield url


@contextlib.contextmanager
def connect_server(root: Path):
    """Yields the ``sc://`` URL of a Spark Connect server (local[2] behind it) on 127.0.0.1."""
    import pyspark
    port = free_port()
    jars = os.path.join(os.path.dirname(pyspark.__file__), "jars")
    connect_jar = next(str(p) for p in Path(jars).glob("spark-connect_*.jar"))
    log = root / "connect.log"
    args = ["org.apache.spark.deploy.SparkSubmit", "--master", "local[2]",
            "--class", "org.apache.spark.sql.connect.service.SparkConnectServer",
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf", "spark.ui.enabled=false", "--conf", f"spark.pyspark.python={sys.executable}",
            "--driver-memory", "1g", connect_jar]
    env = daemon_env()
    env.pop("SPARK_DAEMON_MEMORY")  # the server is a driver: its heap is --driver-memory
    with _daemon(args, log, env):
        _wait("the Spark Connect server", lambda: _port_open(port), log, timeout=180)
        yield f"sc://127.0.0.1:{port}"


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def run_driver(script: str, cwd: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """A driver program in its own process (a Python file's text), as a user would start one."""
    path = cwd / "driver.py"
    path.write_text(script)
    return subprocess.run([sys.executable, str(path), *args], cwd=cwd, env=daemon_env(), capture_output=True,
                          text=True, timeout=timeout)
