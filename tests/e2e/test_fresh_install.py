"""The README's quick start on a fresh clone and a fresh HOME, then the clone moved away: the
hooks `aletheia install claude-code` wrote still capture.

Real processes all the way: ``git clone``, the README's first command as written (a venv under
the new HOME's data directory, built from the clone through pip and the package registry),
``aletheia up`` serving until it is stopped, the hook command exactly as the host would run it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _quick_start_commands() -> list[str]:
    """The code blocks of the README's "Quick start" section, one command each."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)\n```", section, flags=re.S)
    return [b.split("  #", 1)[0].strip() for b in blocks]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _env(home: Path, port: int) -> dict[str, str]:
    """A fresh user's environment: a new HOME (so no config, venv or data of ours), the usual
    system PATH with the new ~/.local/bin first (what the install's hint asks the user to do).
    pip's own settings pass through so the registry is reached the way this machine reaches it."""
    env = {k: v for k, v in os.environ.items()
           if k.startswith("PIP_") or k in ("LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE")}
    env.update(HOME=str(home), PATH=f"{home}/.local/bin:/usr/local/bin:/usr/bin:/bin",
               ALETHEIA_PORT=str(port))
    return env


def test_readme_quick_start_then_the_clone_moves_and_hooks_still_capture(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed (scripts/ci-system-deps installs it)")
    first, second, third = _quick_start_commands()
    assert first == "./scripts/install"
    assert second == "./scripts/check"  # CI runs it (.ci/run); not again in here
    assert third == "aletheia install claude-code"
    home = tmp_path / "home"
    home.mkdir()
    clone = tmp_path / "aletheia"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    port = _free_port()
    env = _env(home, port)

    log = tmp_path / "install.log"
    with log.open("w") as out:
        proc = subprocess.Popen(["bash", "-c", first], cwd=clone, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                # Up once it answers (with or without a token: either way it is serving).
                if httpx.get(f"http://127.0.0.1:{port}/v1/health", timeout=2).status_code in (200, 401):
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(1)
        # The worker runs beside the server (its banner line comes from honcho).
        deadline = time.monotonic() + 60
        while "worker" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.5)
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    output = log.read_text()
    assert "aletheia install claude-code" in output
    assert f"http://127.0.0.1:{port}/" in output and "aletheia token" in output
    assert re.search(r"worker.*\|", output), output

    found = shutil.which("aletheia", path=env["PATH"])
    assert found == str(home / ".local" / "bin" / "aletheia")
    venv = home / ".local" / "share" / "aletheia" / "venv"
    assert Path(found).resolve().is_relative_to(venv.resolve())

    inst = subprocess.run(third, shell=True, env=env, cwd=home,
                          capture_output=True, text=True, check=True)
    assert "created" in inst.stdout and "checkout" not in inst.stdout, inst.stdout
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PostToolUse"][0]["hooks"][0]["command"]
    mcp = json.loads((home / ".claude.json").read_text())["mcpServers"]["aletheia"]
    for path in (command.split()[0], command.split()[3], mcp["command"]):
        # As written (a venv's python is a link to the system one: not resolved).
        assert Path(path).is_relative_to(venv) and not Path(path).is_relative_to(clone), path

    shutil.move(str(clone), str(tmp_path / "moved-away"))
    project = tmp_path / "proj"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    secret_word = "zanzibar-" + str(port)
    payload = {"session_id": "fresh-1", "hook_event_name": "PostToolUse", "cwd": str(project),
               "tool_name": "Bash", "tool_input": {"command": f"echo {secret_word}"},
               "tool_response": {"stdout": secret_word, "stderr": "", "interrupted": False}}
    hook = subprocess.run(command, shell=True, input=json.dumps(payload), env=env, cwd=project,
                          capture_output=True, text=True, timeout=60)
    assert hook.returncode == 0 and hook.stderr == ""

    # Any CLI command replays the spool first (a hook past its watchdog spools, legitimately).
    found_json = subprocess.run(["aletheia", "search", secret_word, "--all-projects", "--json"],
                                env=env, cwd=project, capture_output=True, text=True, check=True)
    hits = json.loads(found_json.stdout)
    assert [h["session_id"] for h in hits] == ["fresh-1"], found_json.stdout

    doctor = subprocess.run(["aletheia", "doctor", "--json"], env=env, cwd=project,
                            capture_output=True, text=True)
    checks = {c["name"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["host hooks"]["status"] == "ok" and checks["host hooks"]["data"]["broken"] == []

    # An upgrade: the install script again, from inside the (moved) clone.  The hooks it
    # refreshes still point at the venv, never at the clone it was started in.
    moved = tmp_path / "moved-away"
    again = subprocess.run(["bash", "-c", "./scripts/install --no-start"], cwd=moved, env=env,
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "checkout" not in again.stderr + again.stdout
    refreshed = json.loads((home / ".claude" / "settings.json").read_text())
    assert refreshed["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == command
