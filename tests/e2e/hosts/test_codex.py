"""Codex CLI 0.171.0 for real: `aletheia install codex`, then two `codex exec` sessions against a
fake Responses API — one in the repository, one in a linked worktree of it."""

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

PROVIDER = """\
model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
env_key = "FAKE_CODEX_KEY"
wire_api = "responses"
"""


def _exec(sandbox: Sandbox, codex: str, prompt: str, cwd: Path,
          url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    (sandbox.home / ".codex" / "config.toml").write_text(
        PROVIDER.format(url=url) + _mcp_block(sandbox))
    # Hooks are trusted by content hash in the TUI (/hooks); a test has no TUI, so it passes
    # the documented automation flag instead.
    return sandbox.run(
        [codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
         "--dangerously-bypass-approvals-and-sandbox", prompt],
        cwd=cwd, env=sandbox.env(FAKE_CODEX_KEY="fake-key"))


def _mcp_block(sandbox: Sandbox) -> str:
    # Keep the MCP block `aletheia install` wrote when the provider URL changes between sessions.
    text = (sandbox.home / ".codex" / "config.toml").read_text()
    start = text.find("# >>> aletheia")
    return "\n" + text[start:] if start >= 0 else ""


def test_codex_session_is_captured_and_recalled(sandbox: Sandbox) -> None:
    codex = str(host_binary("codex"))
    version = host_version(host_binary("codex"))
    secret = github_token(random.Random(7))
    (sandbox.home / ".codex").mkdir()
    (sandbox.home / ".codex" / "config.toml").write_text(PROVIDER.format(url="http://127.0.0.1:9"))

    installed = sandbox.aletheia("install", "codex")
    assert installed.returncode == 0, installed.stderr
    assert "/hooks" in installed.stdout and "trust" in installed.stdout

    first = Script(command=f"echo token={secret}")
    with serve("responses", first) as url:
        proc, took = _exec(sandbox, codex, "first codex session: the walrus marker", sandbox.repo, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("codex", version, "session 1 (1 tool call)", took)
    assert any("function_call_output" in r.text for r in first.requests)

    mems = sandbox.rows("SELECT * FROM memory WHERE tool = 'codex' ORDER BY created_at")
    kinds = [m["kind"] for m in mems]
    assert "prompt" in kinds and "tool_event" in kinds, kinds
    assert {m["project"] for m in mems} == {str(sandbox.repo)}
    session = mems[0]["session_id"]
    assert next(m for m in mems if m["kind"] == "prompt")["title"] == \
        "first codex session: the walrus marker"
    tool = next(m for m in mems if m["kind"] == "tool_event")
    assert "echo token=" in tool["title"] and "[redacted" in tool["narrative"]
    assert secret.encode() not in sandbox.db_bytes()
    queued = sandbox.rows("SELECT session_id FROM stop_queue WHERE session_id = ?", session)
    jobs = sandbox.rows("SELECT session_id FROM job WHERE session_id = ?", session)
    assert queued or jobs, "the session was not queued for compression"

    # `aletheia watch` over the rollout Codex wrote: everything is already there.
    watched = sandbox.aletheia("watch", "--once", "--json")
    assert watched.returncode == 0, watched.stderr
    summary = json.loads(watched.stdout)
    assert summary["read"] >= 3 and summary["inserted"] == 0, summary

    second = Script(command="echo again")
    with serve("responses", second) as url:
        proc, took = _exec(sandbox, codex, "second codex session", sandbox.worktree, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("codex", version, "session 2 (1 tool call)", took)
    sent = second.bodies()
    assert "<aletheia-memory>" in sent and "the walrus marker" in sent
    later = sandbox.rows("SELECT project FROM memory WHERE tool = 'codex' AND session_id != ?",
                         session)
    assert later and {m["project"] for m in later} == {str(sandbox.repo)}
