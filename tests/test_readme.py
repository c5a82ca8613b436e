"""The README's examples run as written: every command of its ```bash blocks (the first screen, the incident
walk-through on fixtures/incident/orders-0) runs in one shell, in order, from the repository root, and exits
with the code its ``# exit N`` comment states. ``pip install`` lines are the set-up the test environment has
already done; ``kdump`` is this checkout's (``python -m kdump``)."""
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
_EXIT = re.compile(r"#\s*exit (\d+)")


def readme_commands() -> list[tuple[str, int]]:
    """(command, the exit code its comment states) of every ```bash block's lines, in order."""
    out = []
    for block in re.findall(r"```bash\n(.*?)```", README, re.S):
        for line in block.splitlines():
            if not line.strip() or line.startswith("pip install"):
                continue
            m = _EXIT.search(line)
            assert m, f"a README command without its exit code: {line}"
            out.append((line, int(m.group(1))))
    return out


def test_readme_is_a_short_guide():
    lines = README.splitlines()
    assert len(lines) <= 250
    first_screen = "\n".join(lines[:40])
    assert "pip install ." in first_screen and "kdump spark" not in first_screen and "[spark]" not in first_screen
    for command in ("kdump dump", "kdump verify", "kdump salvage"):
        assert command in first_screen
    assert not re.search(r"\bissue \d+", README)
    for link in re.findall(r"\]\(((?:docs|bench)/[^)#]+)", README):
        assert (ROOT / link).exists(), link


@pytest.mark.slow
def test_readme_commands_run_as_written(tmp_path):
    commands = readme_commands()
    assert any("incident" in c for c, _ in commands) and len(commands) >= 10
    shim = tmp_path / "bin" / "kdump"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kdump "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IEXEC)
    script = []
    for i, (command, code) in enumerate(commands):
        script.append(f"{command}\nrc=$?\nif [ $rc -ne {code} ]; then echo 'README command {i} exited '$rc >&2; "
                      "exit 99; fi")
    env = dict(os.environ, PATH=f"{shim.parent}{os.pathsep}{os.environ['PATH']}", PYTHONPATH=str(ROOT),
               TMPDIR=str(tmp_path))
    proc = subprocess.run(["bash", "-c", "\n".join(script)], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # the walk-through's story: the damage found, the salvaged partition clean and in place
    assert "offsets 20-24" in proc.stdout and "damaged-range" in proc.stdout
    assert "payload" in proc.stdout and '"status":"failed"' in proc.stdout
