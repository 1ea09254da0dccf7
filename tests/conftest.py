"""Every test runs against a fresh ALETHEIA_HOME in a temp dir: no test touches a real home."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_report_header(config: pytest.Config) -> list[str]:
    """How long to expect (measured on the project's 2-core machine; no test asserts a time)."""
    return [
        "aletheia: expect ~1-3 min for -m 'not slow and not hosts and not browser', ~8 min for "
        "-m 'not hosts' on a lightly used 2-core machine (22 min measured with 2 x nproc "
        "CPU-bound loops running), and several minutes more per host CLI with -m hosts.",
    ]


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
