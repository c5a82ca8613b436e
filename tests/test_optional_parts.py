"""An optional part that is not installed (the spark extra's pyspark, pyarrow and numpy, Java, the
schema-registry extra's fastavro and protobuf) is a usage error: exit 2 and the pip line that installs it, for
every command that needs it, never an internal error (exit 70) or a traceback. The missing module is simulated
in a fresh interpreter (``sys.modules[name] = None`` makes its import fail as an uninstalled one does)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SEGMENT = ROOT / "fixtures/generated/v2-none-createtime"


def kdump_without(modules, *args, env=None):
    """``kdump ARGS`` in a new interpreter where ``modules`` cannot be imported."""
    code = ("import sys\n"
            f"for name in {list(modules)!r}: sys.modules[name] = None\n"
            "from kdump.cli import main\n"
            f"main({[str(a) for a in args]!r})\n")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=env)


@pytest.mark.parametrize("missing", ["pyarrow", "pyspark", "numpy"])
@pytest.mark.parametrize("command", [["scan", "-o", "OUT"], ["verify"], ["stats"]])
def test_spark_commands_without_the_spark_extra(tmp_path, missing, command):
    args = [a.replace("OUT", str(tmp_path / "out")) for a in command]
    proc = kdump_without([missing], "spark", *args, SEGMENT)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'kdump[spark]'" in proc.stderr and missing in proc.stderr
    assert "Traceback" not in proc.stderr and "bug in kdump" not in proc.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["scan", "verify", "stats"])
def test_spark_commands_without_java(tmp_path, command):
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java anywhere
    out = ["-o", str(tmp_path / "out")] if command == "scan" else []
    proc = subprocess.run([sys.executable, "-m", "kdump", "spark", command, *out, str(SEGMENT)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Java 17" in proc.stderr and "Traceback" not in proc.stderr


def test_spark_scan_with_a_registry_decoder_without_the_extra(tmp_path):
    proc = kdump_without(["fastavro"], "spark", "scan", "--value-decoder", "schema-registry", "-o",
                         tmp_path / "out", SEGMENT)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'kdump[schema-registry]'" in proc.stderr and "fastavro" in proc.stderr


@pytest.fixture
def avro_schemas(tmp_path):
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "1.avsc").write_text(json.dumps("string"))
    return schemas


@pytest.mark.parametrize("command", [["dump"], ["dump", "--format", "json"], ["verify", "--deep"], ["stats"]])
def test_registry_decoder_without_the_extra(avro_schemas, command):
    decoder = ["--value-decoder", "schema-registry", "--schemas", avro_schemas]
    sound = kdump_without([], *command, *decoder, SEGMENT)
    assert sound.returncode == 0, sound.stderr  # the same command with the extra installed
    proc = kdump_without(["fastavro"], *command, *decoder, SEGMENT)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'kdump[schema-registry]'" in proc.stderr and "fastavro" in proc.stderr
    assert "Traceback" not in proc.stderr and "bug in kdump" not in proc.stderr


def test_protobuf_schemas_without_the_extra(tmp_path):
    schemas = tmp_path / "schemas"
    schemas.mkdir()
    (schemas / "2.proto").write_text('syntax = "proto3";\nmessage M { string s = 1; }\n')
    proc = kdump_without(["google.protobuf", "google"], "dump", "--value-decoder", "schema-registry",
                         "--schemas", schemas, SEGMENT)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'kdump[schema-registry]'" in proc.stderr


def test_commands_without_an_extra_need_none():
    proc = kdump_without(["pyarrow", "pyspark", "numpy", "fastavro", "google"], "dump", SEGMENT)
    assert proc.returncode == 0 and "baseOffset: 0" in proc.stdout, proc.stderr
