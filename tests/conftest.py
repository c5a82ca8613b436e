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
