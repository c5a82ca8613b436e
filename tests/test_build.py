"""The build is reproducible: CI runs the README's test command word for word, and that command installs from
``constraints/ci.txt``, which pins every package ``pyproject.toml`` asks for at a version its ranges allow."""
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert block, "the README opens with its two set-up commands in a sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints/ci.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"not an exact pin: {line}"
            pins[canonicalize_name(name)] = version
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    names = list(project["build-system"]["requires"]) + list(project["project"]["dependencies"])
    for extra in ("test", "spark", "schema-registry"):
        names += project["project"]["optional-dependencies"][extra]
    return [Requirement(n) for n in names]


def test_ci_runs_exactly_the_readme_test_command():
    install, test = _readme_commands()
    assert "pytest" in test and "pytest" not in install
    lines = (ROOT / ".ci/run").read_text().splitlines()
    ci = [line for line in lines if line and not line.startswith(("#", "set ", "cd "))]
    assert ci[-1] == test
    # before it, only the browser the HTML page's tests need, installed where missing (apt: not a pip step)
    assert len(ci) == 2 and ci[0].startswith("command -v chromium >/dev/null 2>&1 || {") and "pip" not in ci[0]


def test_both_readme_commands_install_from_the_constraints():
    for command in _readme_commands():
        installs = [part for part in command.split("&&") if "pip install" in part]
        assert installs and all("-c constraints/ci.txt" in part for part in installs), command


def test_the_constraints_pin_every_requirement_within_its_range():
    pins = _pins()
    for req in _requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not pinned in constraints/ci.txt"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req.name}=={pins[name]} is outside {req}"


def test_the_test_command_builds_with_the_pinned_build_tools():
    """The build tools come from the pins (no build isolation, which would fetch the newest Cython)."""
    _, test = _readme_commands()
    build_tools = [Requirement(r).name for r in tomllib.loads((ROOT / "pyproject.toml").read_text())
                   ["build-system"]["requires"]]
    first, second = (part.strip() for part in test.split("&&")[:2])
    assert first.split()[-len(build_tools):] == build_tools
    assert "--no-build-isolation" in second


def test_spark_finds_the_kafka_log_source_by_itself(tmp_path):
    """Spark registers every top-level ``pyspark_*`` module holding a ``DefaultSource`` that pkgutil lists
    (pyspark/sql/worker/lookup_data_sources.py); the README's editable install must keep ours listed. Asked of a
    fresh interpreter outside the checkout (pytest itself puts the checkout on sys.path)."""
    import os
    import subprocess
    import sys
    probe = ("import pkgutil; print(' '.join(sorted(m.name for m in pkgutil.iter_modules() "
             "if m.name.startswith('pyspark_'))))")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    listed = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
                            check=True).stdout.split()
    assert "pyspark_kafka_log" in listed
