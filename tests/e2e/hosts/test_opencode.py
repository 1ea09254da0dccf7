"""OpenCode 1.18.33 for real: `aletheia install opencode` into the user's own commented config,
then `opencode run` sessions against a fake Chat Completions server — one in the repository,
one in a linked worktree of it that reads and edits a file session 1 left something known
about — and a project-level install used from a subdirectory."""

from __future__ import annotations

import json
import random
import re
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
    only_added,
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

# The user's own config: JSONC with comments and no "$schema" (OpenCode inserts one on start).
USER_CONFIG = """{
  // my provider: an OpenAI-compatible server
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "Fake loopback",
      "options": { "baseURL": "http://127.0.0.1:9/v1", "apiKey": "sk-fake-000" },
      "models": { "fake-model": { "name": "Fake Model", "tool_call": true } },
    },
  },
  "model": "fake/fake-model",
  "small_model": "fake/fake-model", /* title generation */
  "autoupdate": false,
  "share": "disabled",
  "permission": { "bash": "allow", "edit": "allow" },
}
"""
SCHEMA_LINE = '{\n  "$schema": "https://opencode.ai/config.json",'


def _config_dir(sandbox: Sandbox) -> Path:
    return sandbox.home / ".config" / "opencode"


def _user_setup(sandbox: Sandbox) -> Path:
    """The user's config, and what a first online start left in ~/.config/opencode: OpenCode
    installs @opencode-ai/plugin there, and offline it would retry that for about 70 s."""
    folder = _config_dir(sandbox)
    (folder / "node_modules").mkdir(parents=True)
    deps = {"@opencode-ai/plugin": "1.18.33"}
    (folder / "package.json").write_text(json.dumps({"dependencies": deps}))
    (folder / "package-lock.json").write_text(
        json.dumps({"lockfileVersion": 3, "packages": {"": {"dependencies": deps}}}))
    config = folder / "opencode.json"
    config.write_text(USER_CONFIG)
    return config


def _opencode(sandbox: Sandbox, opencode: Path, prompt: str, cwd: Path,
              url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    config = _config_dir(sandbox) / "opencode.json"
    config.write_text(re.sub(r"http://127\.0\.0\.1:\d+/v1", f"{url}/v1", config.read_text()))
    env = sandbox.env(OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_AUTOUPDATE="1")
    return sandbox.run([str(opencode), "run", prompt], cwd=cwd, env=env, model=url)



def _no_npm_in(folder: Path) -> None:
    for name in (".opencode", "node_modules", "package.json", "package-lock.json"):
        assert not (folder / name).exists(), f"{folder / name} appeared"


def test_opencode_session_is_captured_and_recalled(sandbox: Sandbox) -> None:
    opencode = host_binary("opencode")
    version = host_version(opencode)
    secret = github_token(random.Random(9))
    config = _user_setup(sandbox)
    repo_before = tree(sandbox.repo)

    installed = sandbox.aletheia("install", "opencode", "--json")
    assert written_files(installed) == [config]
    text = config.read_text()
    assert only_added(USER_CONFIG, text)  # our two entries, every byte of the user's kept
    assert "nothing to change" in sandbox.aletheia("install", "opencode").stdout

    check_passes(sandbox, "opencode", opencode, version)

    first = Script(command=f"echo token={secret}", answer=ANSWER)
    with serve("chat", first) as url:
        proc, took = _opencode(sandbox, opencode, "first opencode session: the okapi marker",
                               sandbox.repo, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("opencode", version, "session 1 (1 tool call)", took)
    assert first.tool_result_sent()
    # Stored as typed (`opencode run` itself sends it wrapped in quotes).
    session, mems = captured(sandbox, "opencode", prompt="first opencode session: the okapi marker",
                             secret=secret)
    assert [m["title"] for m in mems if m["kind"] == "response"] == [ANSWER]
    assert config.read_text().startswith(SCHEMA_LINE)  # OpenCode added "$schema"

    compressed(sandbox)
    repo_before = tree(sandbox.repo)
    path = ledger(sandbox)
    second = Script(command="echo again", then=read_then_edit(path))
    prompt = f"second opencode session: {ASK}"
    with serve("chat", second) as url:
        proc, took = _opencode(sandbox, opencode, prompt, sandbox.worktree, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("opencode", version, "session 2 (shell, read, edit)", took)
    calls = second.chat()
    session_calls = [r for r in calls if (r.json() or {}).get("tools")]
    side_calls = [r for r in calls if not (r.json() or {}).get("tools")]  # title generation
    assert side_calls
    recalled(session_calls)
    for r in session_calls:
        # The block never lists the session's own prompt (it sits in the user message once).
        block = r.text[r.text.index("<aletheia-memory>"):r.text.index("</aletheia-memory>")]
        assert "second opencode session" not in block
    for r in side_calls:
        assert "aletheia-memory" not in r.text
    assert "round(0.1 + 0.2, 2)" in path.read_text()  # the edit ran
    later = later_sessions(sandbox, "opencode", session)
    in_project(later, sandbox)
    assert [m["title"] for m in later if m["kind"] == "prompt"] == [prompt]
    # Nothing was installed into the repository (OpenCode runs npm in a .opencode/ folder).
    _no_npm_in(sandbox.repo)
    _no_npm_in(sandbox.worktree)
    assert tree(sandbox.repo) == repo_before

    # The provider URL as the user had it (the test pointed it at each fake server).
    config.write_text(re.sub(r"http://127\.0\.0\.1:\d+/v1", "http://127.0.0.1:9/v1",
                             config.read_text()))
    undone = sandbox.aletheia("uninstall", "opencode")
    assert undone.returncode == 0, undone.stderr
    # The user's bytes, plus the "$schema" line OpenCode itself inserted on its first start.
    assert config.read_text() == USER_CONFIG.replace("{", SCHEMA_LINE, 1)


def test_opencode_project_install_works_from_a_subdirectory_and_leaves_nothing(
        sandbox: Sandbox) -> None:
    opencode = host_binary("opencode")
    version = host_version(opencode)
    config = _user_setup(sandbox)
    before = tree(sandbox.repo)
    installed = sandbox.aletheia("install", "opencode", "--project", str(sandbox.repo), "--json")
    assert written_files(installed) == [sandbox.repo / "opencode.json"]
    sub = sandbox.repo / "src"
    sub.mkdir()
    script = Script(command="echo from-a-subdirectory")
    with serve("chat", script) as url:
        proc, took = _opencode(sandbox, opencode, "project-level opencode session", sub, url)
    assert proc.returncode == 0, proc.stderr
    record_timing("opencode", version, "project-level session (1 tool call)", took)
    rows = later_sessions(sandbox, "opencode", "")
    assert {"prompt", "tool_event"} <= {m["kind"] for m in rows}
    in_project(rows, sandbox)
    _no_npm_in(sandbox.repo)
    _no_npm_in(sub)
    sub.rmdir()
    undone = sandbox.aletheia("uninstall", "opencode", "--project", str(sandbox.repo))
    assert undone.returncode == 0, undone.stderr
    assert tree(sandbox.repo) == before
    assert "aletheia" not in config.read_text()
