"""Claude Code 2.1.197 for real: `aletheia install claude-code`, then two `claude -p` sessions
against a fake Anthropic server — one in the repository, one in a linked worktree of it that
reads and edits a file session 1 left something known about."""

from __future__ import annotations

import json
import random

import pytest

from tests.e2e.hosts.checks import (
    ANSWER,
    ASK,
    check_passes,
    compressed,
    ledger,
    read_then_edit,
    recalled,
    tree,
    uninstalled,
    written_files,
)
from tests.e2e.hosts.conftest import Sandbox, host_binary, host_version, record_timing
from tests.e2e.hosts.fake_models import Call, Script, serve
from tests.fakes import github_token

# Several real host sessions per test: more than the suite's 300 s on a busy machine.
pytestmark = [pytest.mark.hosts, pytest.mark.slow, pytest.mark.timeout(900)]


def _claude_env(sandbox: Sandbox, url: str) -> dict[str, str]:
    return sandbox.env(
        ANTHROPIC_API_KEY="sk-ant-fake-key-for-tests",
        ANTHROPIC_BASE_URL=url,
        CLAUDE_CODE_MAX_RETRIES="0",
        DISABLE_TELEMETRY="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
    )


def test_claude_code_session_is_captured_and_recalled(sandbox: Sandbox) -> None:
    claude = host_binary("claude")
    version = host_version(claude)
    secret = github_token(random.Random(6))

    installed = sandbox.aletheia("install", "claude-code", "--json")
    ours = written_files(installed)
    assert any(p.name == "settings.json" for p in ours)
    check_passes(sandbox, "claude-code", claude, version)
    again = sandbox.aletheia("install", "claude-code")
    assert "nothing to change" in again.stdout

    # Session 1, in the main checkout: one Bash call whose output holds a fake secret.
    first = Script(command=f"echo token={secret}", answer=ANSWER)
    with serve("anthropic", first) as url:
        proc, took = sandbox.run(
            [str(claude), "-p", "first session: remember the zebra marker",
             "--allowedTools", "Bash", "--output-format", "json"],
            cwd=sandbox.repo, env=_claude_env(sandbox, url), model=url)
    assert proc.returncode == 0, proc.stderr
    record_timing("claude-code", version, "session 1 (1 tool call)", took)
    sandbox.replay()
    result = json.loads(proc.stdout)
    session = result["session_id"]
    assert result["num_turns"] == 2  # the tool ran and its result went back to the model

    mems = sandbox.rows("SELECT * FROM memory WHERE session_id = ? ORDER BY created_at", session)
    kinds = [m["kind"] for m in mems]
    assert "prompt" in kinds and "tool_event" in kinds and "response" in kinds, kinds
    assert {m["project"] for m in mems} == {str(sandbox.repo)}
    assert {m["tool"] for m in mems} == {"claude-code"}
    prompt = next(m for m in mems if m["kind"] == "prompt")
    assert prompt["title"] == "first session: remember the zebra marker"
    tool = next(m for m in mems if m["kind"] == "tool_event")
    assert tool["title"].startswith("Bash: $ echo token=")
    assert "[redacted" in tool["narrative"]
    assert secret not in json.dumps(mems)
    assert secret.encode() not in sandbox.db_bytes()
    queued = sandbox.rows("SELECT session_id FROM stop_queue WHERE session_id = ?", session)
    jobs = sandbox.rows("SELECT session_id FROM job WHERE session_id = ?", session)
    assert queued or jobs, "the session was not queued for compression"

    # The transcript Claude wrote holds the same events: importing it adds nothing.
    imported = sandbox.aletheia("import", "transcripts", "--json")
    assert imported.returncode == 0, imported.stderr
    summary = json.loads(imported.stdout)
    assert summary["read"] == 3 and summary["inserted"] == 0 and summary["already"] == 3, summary

    # Session 2, inside the linked worktree, once the worker has been through session 1: the
    # same project, and the block, the per-prompt and the per-file recall reach the model.
    compressed(sandbox)
    path = ledger(sandbox)
    second = Script(command="echo second", then=read_then_edit(path))
    with serve("anthropic", second) as url:
        proc, took = sandbox.run(
            [str(claude), "-p", f"second session in the worktree: {ASK}",
             "--allowedTools", "Bash,Read,Edit", "--output-format", "json"],
            cwd=sandbox.worktree, env=_claude_env(sandbox, url), model=url)
    assert proc.returncode == 0, proc.stderr
    record_timing("claude-code", version, "session 2 (shell, read, edit)", took)
    sandbox.replay()
    session2 = json.loads(proc.stdout)["session_id"]
    recalled([r for r in second.requests
              if r.path.startswith("/v1/messages") and (r.json() or {}).get("tools")])
    assert "round(0.1 + 0.2, 2)" in path.read_text()  # the edit ran
    mems2 = sandbox.rows("SELECT project FROM memory WHERE session_id = ?", session2)
    assert mems2 and {m["project"] for m in mems2} == {str(sandbox.repo)}

    # Uninstall restores the settings exactly as before install (there were none).
    undone = sandbox.aletheia("uninstall", "claude-code")
    assert undone.returncode == 0, undone.stderr
    # ~/.claude.json is also Claude Code's own state file, which it rewrote during the sessions.
    uninstalled(dict.fromkeys(ours), host_state=(sandbox.home / ".claude.json",))


def test_claude_code_project_install_captures_and_uninstalls_exactly(sandbox: Sandbox) -> None:
    claude = host_binary("claude")
    version = host_version(claude)
    before = tree(sandbox.repo)
    installed = sandbox.aletheia("install", "claude-code", "--project", str(sandbox.repo), "--json")
    assert all(p.is_relative_to(sandbox.repo) for p in written_files(installed))
    # Started in the project directory itself: Claude Code and Gemini CLI read a project's
    # settings from the directory they start in (a session started in a subdirectory of it
    # fired none of these hooks).
    script = Script(command="echo project-level")
    with serve("anthropic", script) as url:
        proc, took = sandbox.run(
            [str(claude), "-p", "project-level session", "--allowedTools", "Bash",
             "--output-format", "json"], cwd=sandbox.repo, env=_claude_env(sandbox, url), model=url)
    assert proc.returncode == 0, proc.stderr
    record_timing("claude-code", version, "project-level session (1 tool call)", took)
    sandbox.replay()
    session = json.loads(proc.stdout)["session_id"]
    kinds = {m["kind"] for m in sandbox.rows("SELECT kind FROM memory WHERE session_id = ?", session)}
    assert {"prompt", "tool_event"} <= kinds, kinds
    undone = sandbox.aletheia("uninstall", "claude-code", "--project", str(sandbox.repo))
    assert undone.returncode == 0, undone.stderr
    assert tree(sandbox.repo) == before


def test_claude_code_reads_per_prompt_and_per_file_recall(sandbox: Sandbox) -> None:
    """What the store knows about the prompt (UserPromptSubmit) and about a file before Claude
    reads it (PreToolUse) reaches the model's requests, in the form Claude Code 2.1.197 reads."""
    from aletheia import db
    from aletheia.facts import FactIn, add_facts

    claude = host_binary("claude")
    version = host_version(claude)
    assert sandbox.aletheia("install", "claude-code").returncode == 0
    target = sandbox.repo / "ledger.py"
    target.write_text("TOTAL = 0\n")
    conn = db.connect(sandbox.aletheia_home / "hub.db")
    try:
        add_facts(conn, [
            # One remark in one session: searchable, not in the block (so the prompt's own).
            FactIn(project=str(sandbox.repo), kind="decision", session_id="earlier",
                   text="Decision: deploys go through the staging cluster first, never straight to prod."),
            FactIn(project=str(sandbox.repo), kind="file_role", session_id="earlier",
                   text="`ledger.py` — running totals of the ledger, in integer cents."),
        ])
    finally:
        conn.close()
    script = Script(command="", then=(Call("read", str(target)),))
    with serve("anthropic", script) as url:
        proc, took = sandbox.run(
            [str(claude), "-p", "before the deploy to staging, have a look at the code",
             "--allowedTools", "Read", "--output-format", "json"],
            cwd=sandbox.repo, env=_claude_env(sandbox, url), model=url)
    assert proc.returncode == 0, proc.stderr
    record_timing("claude-code", version, "recall session (1 Read)", took)
    calls = [r for r in script.requests if r.path.startswith("/v1/messages")]
    sent = "\n".join(r.text for r in calls)
    assert "Recalled for this prompt" in sent and "staging cluster first" in sent
    assert "Known about ledger.py" in sent and "running totals of the ledger" in sent
    assert sandbox.aletheia("uninstall", "claude-code").returncode == 0
