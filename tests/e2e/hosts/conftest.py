"""Real host CLIs (installed by scripts/npm-hosts) under a temporary HOME, against fake models.

Run these alone with ``pytest -m hosts``.  Outside CI a missing host binary skips its test
(run ``scripts/npm-hosts``); in CI (``CI=true``) it fails, so a broken install can't hide.
Each host runs in a network namespace with nothing but loopback (``offline.py``), so a host
that needed the network would fail here; CI requires that (root can make the namespace).
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

from tests.e2e.hosts import fake_models, offline

REPO = Path(__file__).resolve().parents[3]
TIMINGS = REPO / "test-artifacts" / "host-timings.jsonl"
OFFLINE = offline.available()


def _npm_hosts(*args: str) -> str:
    out = subprocess.run([str(REPO / "scripts" / "npm-hosts"), *args],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def host_path(name: str) -> str:
    """Directories a host needs first on PATH (Command Code: the registry's Node 22)."""
    return _npm_hosts("--path", name)


def host_binary(name: str) -> Path:
    path = Path(_npm_hosts("--bin", name))
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
        tmp = self.root / "tmp"  # hosts drop files in $TMPDIR (OpenCode a .so on every run)
        tmp.mkdir(exist_ok=True)
        env = {
            "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(self.home),
            "ALETHEIA_HOME": str(self.aletheia_home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "TMPDIR": str(tmp),
        }
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        env.update(extra)
        return env

    def aletheia(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The real CLI, as a user would run it (``python -m aletheia``)."""
        return subprocess.run([sys.executable, "-m", "aletheia", *args], env=self.env(),
                              capture_output=True, text=True, timeout=120, cwd=str(self.repo))

    def run(self, argv: list[str], cwd: Path, env: dict[str, str], *, model: str,
            timeout: float = 240) -> tuple[subprocess.CompletedProcess[str], float]:
        """Run a host CLI in ``cwd`` with no network but its fake model server at ``model``."""
        start = time.monotonic()
        proc = subprocess.run(self.offline(argv, model), cwd=str(cwd), env=self.at(env, cwd),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
        return proc, time.monotonic() - start

    @staticmethod
    def offline(argv: list[str], model: str) -> list[str]:
        """``argv`` inside a loopback-only network namespace that reaches ``model``."""
        port = int(model.rsplit(":", 1)[1].split("/", 1)[0])
        if OFFLINE:
            return offline.wrap(argv, port, fake_models.SOCKETS[port])
        if os.environ.get("CI") == "true":
            pytest.fail("CI runs the hosts in a loopback-only network namespace: "
                        "`unshare --net` is not available here")
        return argv

    @staticmethod
    def at(env: dict[str, str], cwd: Path) -> dict[str, str]:
        return {**env, "PWD": str(cwd)}  # OpenCode takes its directory from $PWD, as a shell does

    def replay(self) -> None:
        """A hook past its 150 ms watchdog (a busy machine) spools its item: replay it."""
        out = self.aletheia("stats")
        assert out.returncode == 0, out.stderr

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        import sqlite3

        from tests.settle import replay_spool

        # A hook past its watchdog on a busy machine spools its item, legitimately.
        if (self.aletheia_home / "hub.db").exists():
            replay_spool(home=self.aletheia_home)
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
    _stop_leftovers(home)


def _stop_leftovers(home: Path) -> None:
    """Stop what a host left running under this sandbox's HOME (by pid: only our own)."""
    import signal

    marker = f"HOME={home}".encode() + b"\0"
    for pid_dir in Path("/proc").glob("[0-9]*"):
        try:
            if marker in (pid_dir / "environ").read_bytes() and int(pid_dir.name) != os.getpid():
                os.kill(int(pid_dir.name), signal.SIGKILL)
        except (OSError, ValueError):
            continue
