"""What every real-host test checks, the same way for each host.

- capture: the prompt as the user typed it, the tool event (its fake secret redacted, in the
  row and in every byte of the store), the stop, all under the main repository's project;
- queueing: the stop put the session on the compression queue;
- recall: the context block of session 1 is inside what the host sent its model in session 2;
- uninstall: every file the install created is gone and every file it changed has its bytes
  back, at user level and with ``--project``.

Per-prompt and per-file recall (issue 12) join here once the hooks print them: see
``RECALL_BEYOND_START`` for what each host can carry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.e2e.hosts.conftest import Sandbox

# Where each host could take a per-prompt and a per-file block (its own event names), for the
# checks issue 12 adds once its hooks print them.  None: the host has no such event.
RECALL_BEYOND_START: dict[str, dict[str, str | None]] = {
    "claude-code": {"prompt": "UserPromptSubmit", "file": "PostToolUse"},
    "codex": {"prompt": "UserPromptSubmit", "file": "PostToolUse"},
    "gemini": {"prompt": "BeforeAgent", "file": "AfterTool"},
    "opencode": {"prompt": "chat.message (plugin)", "file": None},
    "command-code": {"prompt": "onTurnStart (mod, transformContext)", "file": "PostToolUse"},
}


def check_passes(sandbox: Sandbox, host: str, binary: Path, version: str,
                 extra_path: str = "") -> None:
    """``aletheia install --check HOST`` finds the real binary, its tested version, our entries."""
    env = sandbox.env()
    env["PATH"] = ":".join(p for p in (extra_path, str(binary.parent), env["PATH"]) if p)
    out = subprocess.run([sys.executable, "-m", "aletheia", "install", host, "--check", "--json"],
                         env=env, capture_output=True, text=True, timeout=180,
                         cwd=str(sandbox.repo))
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["ok"] and version.endswith("@" + report["version"]), report
    assert [c["level"] for c in report["checks"]] == ["ok", "ok"], report


def written_files(install: subprocess.CompletedProcess[str]) -> list[Path]:
    """The files an ``aletheia install --json`` run created or changed."""
    assert install.returncode == 0, install.stderr
    report = json.loads(install.stdout)
    out = []
    for line in report["files"]:
        verb, rest = line.split(" ", 1)
        assert verb in ("created", "updated", "removed"), line
        out.append(Path(rest.split(": ", 1)[0]))
    return out


def only_added(before: str, after: str) -> bool:
    """``after`` is ``before`` with text inserted and nothing else changed."""
    import difflib

    ops = difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes()
    return all(op in ("equal", "insert") for op, *_ in ops)


def snapshot(paths: list[Path]) -> dict[Path, bytes | None]:
    return {p: p.read_bytes() if p.is_file() else None for p in paths}


def no_trace(data: bytes | None) -> bool:
    """Nothing of aletheia's in a file (our MCP server, our hook script, our plugin, our mod)."""
    text = (data or b"").decode("utf-8", "replace")
    return not any(mark in text for mark in ('"aletheia"', "hooks/run.py", "opencode-plugin.js",
                                             "aletheia mcp"))


def uninstalled(before: dict[Path, bytes | None], *, host_state: tuple[Path, ...] = ()) -> None:
    """Every file the install touched has its bytes from before install back (a file it created
    is gone); ``host_state`` files are the host's own state, which it rewrote since (Claude
    Code's ~/.claude.json): those must only hold nothing of ours."""
    after = snapshot(list(before))
    for path, data in before.items():
        if path in host_state:
            assert no_trace(after[path]), f"{path} still holds aletheia's entries"
        else:
            assert after[path] == data, f"{path} is not as it was before install"


def tree(root: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``root`` but ``.git`` (folders as None)."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        rel = Path(dirpath).relative_to(root)
        for d in dirnames:
            out[str(rel / d)] = None
        for f in filenames:
            out[str(rel / f)] = (Path(dirpath) / f).read_bytes()
    return out


def captured(sandbox: Sandbox, host: str, *, prompt: str, secret: str,
             session: str | None = None) -> tuple[str, list[dict[str, Any]]]:
    """Session 1's rows: prompt as typed, a redacted tool event, the stop queued, all in the
    main repository's project.  Returns (session id, rows)."""
    sandbox.replay()
    if session is None:
        first = sandbox.rows("SELECT session_id FROM memory WHERE tool = ? AND kind = 'prompt' "
                             "ORDER BY created_at LIMIT 1", host)
        assert first, f"{host}: no prompt was captured"
        session = str(first[0]["session_id"])
    mems = sandbox.rows("SELECT * FROM memory WHERE session_id = ? ORDER BY created_at", session)
    kinds = [m["kind"] for m in mems]
    assert "prompt" in kinds and "tool_event" in kinds, kinds
    assert {m["project"] for m in mems} == {str(sandbox.repo)}
    assert {m["tool"] for m in mems} == {host}
    assert [m["title"] for m in mems if m["kind"] == "prompt"] == [prompt]
    tool = next(m for m in mems if m["kind"] == "tool_event")
    assert "echo token=" in tool["title"] and "[redacted" in tool["narrative"], tool
    assert secret not in json.dumps(mems)
    assert secret.encode() not in sandbox.db_bytes()
    queued = sandbox.rows("SELECT session_id FROM stop_queue WHERE session_id = ?", session)
    jobs = sandbox.rows("SELECT session_id FROM job WHERE session_id = ?", session)
    assert queued or jobs, f"{host}: the session was not queued for compression"
    return session, mems


def later_sessions(sandbox: Sandbox, host: str, first: str) -> list[dict[str, Any]]:
    sandbox.replay()
    return sandbox.rows("SELECT * FROM memory WHERE tool = ? AND session_id != ? "
                        "ORDER BY created_at", host, first)


def in_project(rows: list[dict[str, Any]], sandbox: Sandbox) -> None:
    assert rows, "nothing was captured"
    assert {m["project"] for m in rows} == {str(sandbox.repo)}, {m["project"] for m in rows}
