"""Codex CLI 0.171.0 for real: `aletheia install codex`, then two `codex exec` sessions against a
fake Responses API — one in the repository, one in a linked worktree of it that reads and
patches (through its shell, as Codex does) a file session 1 left something known about."""

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
    snapshot,
    tree,
    uninstalled,
    written_files,
)
from tests.e2e.hosts.conftest import Sandbox, host_binary, host_version, record_timing
from tests.e2e.hosts.fake_models import Script, serve
from tests.fakes import github_token

# Several real host sessions per test: more than the suite's 300 s on a busy machine.
pytestmark = [pytest.mark.hosts, pytest.mark.slow, pytest.mark.timeout(900)]

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
          url: str, extra: str = "") -> tuple[subprocess.CompletedProcess[str], float]:
    (sandbox.home / ".codex" / "config.toml").write_text(
        PROVIDER.format(url=url) + extra + _mcp_block(sandbox))
    # Hooks are trusted by content hash in the TUI (/hooks); a test has no TUI, so it passes
    # the documented automation flag instead.
    return sandbox.run(
        [codex, "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust",
         "--dangerously-bypass-approvals-and-sandbox", prompt],
        cwd=cwd, env=sandbox.env(FAKE_CODEX_KEY="fake-key"), model=url)


def _mcp_block(sandbox: Sandbox) -> str:
    # Keep the MCP block `aletheia install` wrote when the provider URL changes between sessions.
    config = sandbox.home / ".codex" / "config.toml"
    text = config.read_text() if config.exists() else ""
    start = text.find("# >>> aletheia")
    return "\n" + text[start:] if start >= 0 else ""


def test_codex_session_is_captured_and_recalled(sandbox: Sandbox) -> None:
    codex = str(host_binary("codex"))
    version = host_version(host_binary("codex"))
    secret = github_token(random.Random(7))
    (sandbox.home / ".codex").mkdir()
    (sandbox.home / ".codex" / "config.toml").write_text(PROVIDER.format(url="http://127.0.0.1:9"))

    before = snapshot([sandbox.home / ".codex" / "hooks.json",
                       sandbox.home / ".codex" / "config.toml"])
    installed = sandbox.aletheia("install", "codex", "--json")
    assert set(written_files(installed)) == set(before)
    assert any("/hooks" in n and "trust" in n for n in json.loads(installed.stdout)["notes"])

    check_passes(sandbox, "codex", host_binary("codex"), version)

    first = Script(command=f"echo token={secret}", answer=ANSWER)
    with serve("responses", first) as url:
        proc, took = _exec(sandbox, codex, "first codex session: the walrus marker", sandbox.repo, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("codex", version, "session 1 (1 tool call)", took)
    assert any("function_call_output" in r.text for r in first.requests)

    session, _ = captured(sandbox, "codex", prompt="first codex session: the walrus marker",
                          secret=secret)

    # `aletheia watch` over the rollout Codex wrote: everything is already there.
    watched = sandbox.aletheia("watch", "--once", "--json")
    assert watched.returncode == 0, watched.stderr
    summary = json.loads(watched.stdout)
    assert summary["read"] >= 3 and summary["inserted"] == 0, summary

    compressed(sandbox)
    path = ledger(sandbox)
    second = Script(command="echo again", then=read_then_edit(path))
    with serve("responses", second) as url:
        proc, took = _exec(sandbox, codex, f"second codex session: {ASK}", sandbox.worktree, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("codex", version, "session 2 (shell, read, edit)", took)
    recalled(second.requests)
    assert "round(0.1 + 0.2, 2)" in path.read_text()  # the patch ran
    later = later_sessions(sandbox, "codex", session)
    in_project(later, sandbox)
    assert [m["title"] for m in later if m["kind"] == "prompt"] == [f"second codex session: {ASK}"]
    # The edit: Codex runs PreToolUse for apply_patch and no PostToolUse; it is stored from that.
    edits = [m for m in later if m["kind"] == "tool_event" and "apply_patch" in m["title"]]
    assert len(edits) == 1, [m["title"] for m in later]
    assert json.loads(edits[0]["files"]) == [str(path)]
    assert "+TOTAL = round(0.1 + 0.2, 2)" in edits[0]["narrative"]
    # Importing the rollout afterwards stores the edit (and everything else) no second time.
    imported = sandbox.aletheia("import", "codex", "--json")
    assert imported.returncode == 0, imported.stderr
    counts = json.loads(imported.stdout)
    assert counts["read"] >= 8 and counts["inserted"] == 0, counts
    assert len(later_sessions(sandbox, "codex", session)) == len(later)

    # The user's config.toml as it was at install time (the test pointed it at each server).
    (sandbox.home / ".codex" / "config.toml").write_text(
        PROVIDER.format(url="http://127.0.0.1:9") + _mcp_block(sandbox))
    undone = sandbox.aletheia("uninstall", "codex")
    assert undone.returncode == 0, undone.stderr
    uninstalled(before)


def test_codex_project_install_captures_and_uninstalls_exactly(sandbox: Sandbox) -> None:
    codex = str(host_binary("codex"))
    version = host_version(host_binary("codex"))
    (sandbox.home / ".codex").mkdir()
    before = tree(sandbox.repo)
    installed = sandbox.aletheia("install", "codex", "--project", str(sandbox.repo), "--json")
    assert all(p.is_relative_to(sandbox.repo) for p in written_files(installed))
    # Codex loads a project's .codex/ only in a project the user trusts (the install says so).
    trusted = f'\n[projects."{sandbox.repo}"]\ntrust_level = "trusted"\n'
    sub = sandbox.repo / "src"
    sub.mkdir()
    script = Script(command="echo from-a-subdirectory")
    with serve("responses", script) as url:
        proc, took = _exec(sandbox, codex, "project-level codex session", sub, url, trusted)
    assert proc.returncode == 0, proc.stderr
    record_timing("codex", version, "project-level session (1 tool call)", took)
    rows = later_sessions(sandbox, "codex", "")
    assert {"prompt", "tool_event"} <= {m["kind"] for m in rows}
    in_project(rows, sandbox)
    sub.rmdir()
    undone = sandbox.aletheia("uninstall", "codex", "--project", str(sandbox.repo))
    assert undone.returncode == 0, undone.stderr
    assert tree(sandbox.repo) == before
