"""Real host CLIs (installed by scripts/npm-hosts) under a temporary HOME, against fake models.

Run these alone with ``pytest -m hosts``.  Outside CI a missing host binary skips its test
(run ``scripts/npm-hosts``); in CI (``CI=true``) it fails, so a broken install can't hide.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
TIMINGS = REPO / "test-artifacts" / "host-timings.jsonl"


def host_binary(name: str) -> Path:
    out = subprocess.run([str(REPO / "scripts" / "npm-hosts"), "--bin", name],
                         capture_output=True, text=True, check=True)
    path = Path(out.stdout.strip())
    if not os.access(path, os.X_OK):
        message = f"{name} is not installed: run scripts/npm-hosts"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    return path


def host_version(binary: Path) -> str:
    spec = binary.resolve()
    for parent in spec.parents:
        pkg = parent / "package.json"
        if pkg.is_file():
            data = json.loads(pkg.read_text())
            if data.get("bin"):
                return f"{data['name']}@{data['version']}"
    return "unknown"


def record_timing(host: str, version: str, what: str, seconds: float) -> None:
    TIMINGS.parent.mkdir(exist_ok=True)
    with TIMINGS.open("a") as fh:
        fh.write(json.dumps({"host": host, "version": version, "what": what,
                             "seconds": round(seconds, 2)}) + "\n")
    print(f"[timing] {version} {what}: {seconds:.1f} s")


@dataclass
class Sandbox:
    """A temporary HOME with a git repository and a linked worktree of it."""

    root: Path
    home: Path
    repo: Path
    worktree: Path
    aletheia_home: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "ALETHEIA_HOME": str(self.aletheia_home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
        }
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        env.update(extra)
        return env

    def aletheia(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The real CLI, as a user would run it (``python -m aletheia``)."""
        return subprocess.run([sys.executable, "-m", "aletheia", *args], env=self.env(),
                              capture_output=True, text=True, timeout=120, cwd=str(self.repo))

    def run(self, argv: list[str], cwd: Path, env: dict[str, str],
            timeout: float = 240) -> tuple[subprocess.CompletedProcess[str], float]:
        start = time.monotonic()
        proc = subprocess.run(argv, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=timeout)
        return proc, time.monotonic() - start

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        import sqlite3

        conn = sqlite3.connect(str(self.aletheia_home / "hub.db"))
        conn.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in conn.execute(sql, params)]
        finally:
            conn.close()

    def db_bytes(self) -> bytes:
        data = b""
        for suffix in ("", "-wal", "-shm"):
            p = self.aletheia_home / f"hub.db{suffix}"
            if p.exists():
                data += p.read_bytes()
        for p in (self.aletheia_home / "spool").glob("*") if (self.aletheia_home / "spool").exists() else []:
            data += p.read_bytes()
        return data


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=str(cwd), check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_AUTHOR_NAME": "t",
                        "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.invalid"})


@pytest.fixture
def sandbox(tmp_path: Path, aletheia_home: Path) -> Iterator[Sandbox]:
    home = tmp_path / "home"
    repo = tmp_path / "proj"
    home.mkdir()
    repo.mkdir()
    _git("init", "-q", "-b", "main", cwd=repo)
    (repo / "README.md").write_text("demo\n")
    _git("add", "README.md", cwd=repo)
    _git("commit", "-q", "-m", "init", cwd=repo)
    worktree = tmp_path / "proj-feature"
    _git("worktree", "add", "-q", "-b", "feature", str(worktree), cwd=repo)
    yield Sandbox(tmp_path, home, repo.resolve(), worktree.resolve(), aletheia_home)
