"""Run a scenario in a private mount namespace with a small tmpfs: a real full disk, or a
real read-only file, made by the test and gone with its process (nothing mounted outside).

``unshare -rm`` (a user and a mount namespace) works for an ordinary user where user
namespaces are enabled, and for root; where neither works the test is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


@cache
def _unshare() -> list[str] | None:
    tool = shutil.which("unshare")
    if tool is None:
        return None
    for flags in (["-rm"], ["-m"]):
        probe = subprocess.run([tool, *flags, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                               capture_output=True, timeout=30, check=False)
        if probe.returncode == 0:
            return [tool, *flags]
    return None


def run_scenario(script: str, mount_dir: Path, *, size: str, env: dict[str, str],
                 timeout: float = 900) -> dict[str, Any]:
    """Mount a ``size`` tmpfs on ``mount_dir`` in a new mount namespace, run ``script``
    (Python, given the mount point as argv[1]) there, and return the JSON it prints last."""
    unshare = _unshare()
    if unshare is None:
        pytest.skip("cannot make a private mount namespace here (no unshare, or user and mount "
                    "namespaces are not allowed): a full disk cannot be made without one")
    mount_dir.mkdir(parents=True, exist_ok=True)
    code = mount_dir.parent / "scenario.py"
    code.write_text(script)
    shell = (f"mount -t tmpfs -o size={size},mode=0700 tmpfs {mount_dir} && "
             f"exec {sys.executable} {code} {mount_dir}")
    proc = subprocess.run([*unshare, "sh", "-c", shell], capture_output=True, text=True,
                          timeout=timeout, check=False,
                          env={**env, "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


SCENARIO_HEAD = r'''
import json, os, subprocess, sys
from pathlib import Path

MOUNT = Path(sys.argv[1])
HOME = MOUNT / "home"
ENV = {**os.environ, "ALETHEIA_HOME": str(HOME), "ALETHEIA_PROJECT": "/fault/project"}
for name in ("ALETHEIA_PROVIDER", "ALETHEIA_QUEUE_URL", "ALETHEIA_HOOK_FAULT"):
    ENV.pop(name, None)


def cli(*args, check=True):
    proc = subprocess.run([sys.executable, "-m", "aletheia", *args], env=ENV,
                          capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit(f"aletheia {' '.join(args)} failed: {proc.stdout}{proc.stderr}")
    return proc


def hook(i, size):
    payload = {"session_id": "fault-session", "cwd": "/tmp", "hook_event_name": "UserPromptSubmit",
               "prompt": f"prompt {i} " + ("x" * size)}
    return subprocess.run([sys.executable, "-m", "aletheia", "hook", "claude-code",
                           "UserPromptSubmit"], input=json.dumps(payload).encode(), env=ENV,
                          capture_output=True).returncode


def spool_lines():
    folder = HOME / "spool"
    n = 0
    for p in folder.glob("hook-spool*"):
        n += sum(1 for line in p.read_bytes().splitlines() if line.strip())
    return n


def memories():
    import sqlite3
    conn = sqlite3.connect(HOME / "hub.db")
    try:
        return conn.execute("SELECT count(*) FROM memory").fetchone()[0]
    finally:
        conn.close()
'''


def scenario_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
