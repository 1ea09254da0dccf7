"""Every test runs against a fresh ALETHEIA_HOME in a temp dir: no test touches a real home."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def aletheia_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("aletheia-home")
    monkeypatch.setenv("ALETHEIA_HOME", str(home))
    for var in ("ALETHEIA_PROJECT", "ALETHEIA_EXCLUDED_PROJECTS", "ALETHEIA_PROVIDER",
                "ALETHEIA_QUEUE_URL", "ALETHEIA_API_KEY", "ALETHEIA_HOOK_FAULT"):
        monkeypatch.delenv(var, raising=False)
    yield home


@pytest.fixture
def conn(aletheia_home: Path) -> Iterator[object]:
    from aletheia import db

    c = db.connect()
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def hook_env(aletheia_home: Path) -> dict[str, str]:
    """Environment for a real hook subprocess (same ALETHEIA_HOME as the test)."""
    env = dict(os.environ)
    env["ALETHEIA_HOME"] = str(aletheia_home)
    env["PYTHONPATH"] = str(REPO)
    return env


PYTHON = sys.executable
