"""Gemini CLI 0.61.0 for real: `aletheia install gemini` merged into an existing settings.json,
then two `gemini -p` sessions against a fake Gemini API — one in the repository, one in a linked
worktree of it that reads and edits a file session 1 left something known about."""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from tests.e2e.hosts.checks import (
    ANSWER,
    ASK,
    captured,
    check_passes,
    compressed,
    in_project,
    later_sessions,
    ledger,
    read_then_edit,
    recalled,
    tree,
    written_files,
)
from tests.e2e.hosts.conftest import Sandbox, host_binary, host_version, record_timing
from tests.e2e.hosts.fake_models import Script, serve
from tests.fakes import github_token

# Several real host sessions per test: more than the suite's 300 s on a busy machine.
pytestmark = [pytest.mark.hosts, pytest.mark.slow, pytest.mark.timeout(900)]

# The user's own settings before install: API-key auth (gemini -p refuses to start without an
# auth type once a settings file exists).
USER_SETTINGS = {"security": {"auth": {"selectedType": "gemini-api-key"}}, "ui": {"theme": "Default"}}


def _gemini(sandbox: Sandbox, gemini: Path, prompt: str, cwd: Path,
            url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    env = sandbox.env(GEMINI_API_KEY="fake-gemini-key", GOOGLE_GEMINI_BASE_URL=url,
                      GEMINI_CLI_TRUST_WORKSPACE="true")
    return sandbox.run([str(gemini), "-p", prompt, "--approval-mode", "yolo"], cwd=cwd, env=env,
                       model=url)


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

    check_passes(sandbox, "gemini", gemini, version)

    first = Script(command=f"echo token={secret}", answer=ANSWER)
    with serve("gemini", first) as url:
        proc, took = _gemini(sandbox, gemini, "first gemini session: the okapi marker",
                             sandbox.repo, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("gemini", version, "session 1 (1 tool call)", took)
    assert any("functionResponse" in r.text for r in first.requests)

    session, _ = captured(sandbox, "gemini", prompt="first gemini session: the okapi marker",
                          secret=secret)

    compressed(sandbox)
    path = ledger(sandbox)
    second = Script(command="echo again", then=read_then_edit(path))
    with serve("gemini", second) as url:
        proc, took = _gemini(sandbox, gemini, f"second gemini session: {ASK}", sandbox.worktree,
                             url)
    assert proc.returncode == 0, proc.stderr
    record_timing("gemini", version, "session 2 (shell, read, edit)", took)
    recalled([r for r in second.requests if "streamGenerateContent" in r.path])
    assert "round(0.1 + 0.2, 2)" in path.read_text()  # the edit ran
    later = later_sessions(sandbox, "gemini", session)
    in_project(later, sandbox)
    # The prompt is what the user typed, not the context Gemini put in front of or after it.
    assert [m["title"] for m in later if m["kind"] == "prompt"] == [f"second gemini session: {ASK}"]

    undone = sandbox.aletheia("uninstall", "gemini")
    assert undone.returncode == 0, undone.stderr
    assert settings.read_text() == original


def test_gemini_project_install_captures_and_uninstalls_exactly(sandbox: Sandbox) -> None:
    gemini = host_binary("gemini")
    version = host_version(gemini)
    settings = sandbox.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    before = tree(sandbox.repo)
    installed = sandbox.aletheia("install", "gemini", "--project", str(sandbox.repo), "--json")
    assert all(p.is_relative_to(sandbox.repo) for p in written_files(installed))
    # Started in the project directory itself: Claude Code and Gemini CLI read a project's
    # settings from the directory they start in (a session started in a subdirectory of it
    # fired none of these hooks).
    script = Script(command="echo project-level")
    with serve("gemini", script) as url:
        proc, took = _gemini(sandbox, gemini, "project-level gemini session", sandbox.repo,
                                 url)
    assert proc.returncode == 0, proc.stderr
    record_timing("gemini", version, "project-level session (1 tool call)", took)
    rows = later_sessions(sandbox, "gemini", "")
    assert {"prompt", "tool_event"} <= {m["kind"] for m in rows}
    in_project(rows, sandbox)
    undone = sandbox.aletheia("uninstall", "gemini", "--project", str(sandbox.repo))
    assert undone.returncode == 0, undone.stderr
    assert tree(sandbox.repo) == before


def test_gemini_reads_per_prompt_recall(sandbox: Sandbox) -> None:
    """BeforeAgent's additionalContext (what the store knows about the prompt) reaches the
    model request of Gemini CLI 0.61.0."""
    from aletheia import db
    from aletheia.facts import FactIn, add_facts

    gemini = host_binary("gemini")
    version = host_version(gemini)
    settings = sandbox.home / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps(USER_SETTINGS, indent=2) + "\n")
    assert sandbox.aletheia("install", "gemini").returncode == 0
    conn = db.connect(sandbox.aletheia_home / "hub.db")
    try:
        add_facts(conn, [FactIn(project=str(sandbox.repo), kind="decision", session_id="earlier",
                                text="Decision: the okapi exporter writes CSV with a semicolon.")])
    finally:
        conn.close()
    script = Script(command="echo ok")
    with serve("gemini", script) as url:
        proc, took = _gemini(sandbox, gemini, "how does the okapi exporter write CSV?",
                             sandbox.repo, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("gemini", version, "per-prompt recall session", took)
    sent = script.bodies()
    assert "Recalled for this prompt" in sent and "semicolon" in sent
    # The prompt is stored as typed, without the recalled block.
    prompts = [r["title"] for r in sandbox.rows("SELECT title FROM memory WHERE kind = 'prompt'")]
    assert prompts == ["how does the okapi exporter write CSV?"]
