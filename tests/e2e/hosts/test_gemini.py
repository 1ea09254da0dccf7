"""Gemini CLI 0.61.0 for real: `aletheia install gemini` merged into an existing settings.json,
then two `gemini -p` sessions against a fake Gemini API — one in the repository, one in a linked
worktree of it."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from tests.e2e.hosts.conftest import Sandbox, host_binary, host_version, record_timing
from tests.e2e.hosts.fake_models import Script, serve
from tests.fakes import github_token

pytestmark = [pytest.mark.hosts, pytest.mark.slow]

# The user's own settings before install: API-key auth (gemini -p refuses to start without an
# auth type once a settings file exists).
USER_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "ui": {"theme": "Default"}}


def _gemini(sandbox: Sandbox, gemini: Path, prompt: str, cwd: Path,
            url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = sandbox.env(GEMINI_API_KEY="fake-gemini-key", GOOGLE_GEMINI_BASE_URL=url,
                      GEMINI_CLI_TRUST_WORKSPACE="true")
    return sandbox.run([str(gemini), "-p", prompt, "--approval-mode", "yolo"], cwd=cwd, env=env)


def test_gemini_session_is_captured_and_recalled(sandbox: Sandbox) -> None:
    gemini = host_binary("gemini")
    version = host_version(gemini)
    secret = github_token(random.Random(8))
    settings = sandbox.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    original = json.dumps(USER_SETTINGS, indent=2) + "\n"
    settings.write_text(original)

    installed = sandbox.aletheia("install", "gemini")
    assert installed.returncode == 0, installed.stderr
    merged = json.loads(settings.read_text())
    assert merged["ui"] == {"theme": "Default"} and "SessionStart" in merged["hooks"]

    first = Script(command=f"echo token={secret}")
    with serve("gemini", first) as url:
        proc, took = _gemini(sandbox, gemini, "first gemini session: the okapi marker",
                             sandbox.repo, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("gemini", version, "session 1 (1 tool call)", took)
    assert any("functionResponse" in r.text for r in first.requests)

    mems = sandbox.rows("SELECT * FROM memory WHERE tool = 'gemini' ORDER BY created_at")
    kinds = [m["kind"] for m in mems]
    assert "prompt" in kinds and "tool_event" in kinds, kinds
    assert {m["project"] for m in mems} == {str(sandbox.repo)}
    session = mems[0]["session_id"]
    assert next(m for m in mems if m["kind"] == "prompt")["title"] == \
        "first gemini session: the okapi marker"
    tool = next(m for m in mems if m["kind"] == "tool_event")
    assert "echo token=" in tool["title"] and "[redacted" in tool["narrative"]
    assert secret.encode() not in sandbox.db_bytes()
    queued = sandbox.rows("SELECT session_id FROM stop_queue WHERE session_id = ?", session)
    jobs = sandbox.rows("SELECT session_id FROM job WHERE session_id = ?", session)
    assert queued or jobs, "the session was not queued for compression"

    second = Script(command="echo again")
    with serve("gemini", second) as url:
        proc, took = _gemini(sandbox, gemini, "second gemini session", sandbox.worktree, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("gemini", version, "session 2 (1 tool call)", took)
    sent = "\n".join(r.text for r in second.requests if "streamGenerateContent" in r.path)
    # Gemini wraps additionalContext in <hook_context> and HTML-escapes it.
    assert "&lt;aletheia-memory&gt;" in sent or "<aletheia-memory>" in sent
    assert "the okapi marker" in sent
    later = sandbox.rows("SELECT * FROM memory WHERE tool = 'gemini' AND session_id != ?",
                         session)
    assert later and {m["project"] for m in later} == {str(sandbox.repo)}
    # The prompt is what the user typed, not the context block Gemini put in front of it.
    assert [m["title"] for m in later if m["kind"] == "prompt"] == ["second gemini session"]

    undone = sandbox.aletheia("uninstall", "gemini")
    assert undone.returncode == 0, undone.stderr
    assert settings.read_text() == original
