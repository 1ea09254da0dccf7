"""What every real-host test checks, the same way for each host.

- capture: the prompt as the user typed it, the tool event (its fake secret redacted, in the
  row and in every byte of the store), the stop, all under the main repository's project;
- queueing: the stop put the session on the compression queue;
- recall: after ``aletheia compress``, what session 1 left is inside what the host sent its model
  in session 2: the session-start block with the prompt, the per-prompt block (what the store
  holds about this prompt) with the prompt too, and the per-file block in the request after the
  tool that read the file; each once, even after the session edits that file again;
- uninstall: every file the install created is gone and every file it changed has its bytes
  back, at user level and with ``--project``.

``RECALL_BEYOND_START`` names, per host, where those two blocks go in.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from aletheia import context, recall
from tests.e2e.hosts.conftest import Sandbox
from tests.e2e.hosts.fake_models import Call, Request

# Where each host takes the per-prompt and the per-file block (its own event names; all five
# carry both to the model, checked by ``recalled``).
RECALL_BEYOND_START: dict[str, dict[str, str]] = {
    "claude-code": {"prompt": "UserPromptSubmit (JSON additionalContext)",
                    "file": "PreToolUse of Read/Edit/MultiEdit/Write/NotebookEdit (JSON)"},
    "codex": {"prompt": "UserPromptSubmit (plain stdout: a developer message)",
              "file": "PreToolUse of its shell: sed/cat/… and apply_patch (JSON only)"},
    "gemini": {"prompt": "BeforeAgent (JSON)", "file": "AfterTool (JSON, appended to the result)"},
    "opencode": {"prompt": "chat.message → a synthetic part of that user message (plugin)",
                 "file": "tool.execute.after → appended to the tool's output (plugin)"},
    "command-code": {"prompt": "onTurnStart → transformContext (mod)",
                     "file": "afterToolCall → additionalContext (mod)"},
}

# What session 1's model answers: a decision and the cause of a failure in a file.  The worker
# (`aletheia compress`, offline) keeps both as facts; said by the assistant in one session, they
# are too weak for the session-start block, which is what per-prompt and per-file recall are for.
ANSWER = ("All done. I went with a walrus retry budget of five attempts for the uploader. "
          "Root cause: the ledger totals in src/billing/ledger.py were failing because floats "
          "lost the last cent.")
LEDGER = "src/billing/ledger.py"
ASK = "how many attempts does the walrus retry budget allow?"  # session 2's prompt names it
_BLOCK = re.compile(re.escape(context.OPEN_TAG) + ".*?" + re.escape(context.CLOSE_TAG), re.S)
FILE_HEAD = recall.FILE_HEAD.format(path=LEDGER)


def compressed(sandbox: Sandbox) -> None:
    """The worker's offline pass over the queued session: session 1's two facts exist."""
    out = sandbox.aletheia("compress", "--json")
    assert out.returncode == 0, out.stderr
    facts = [r["text"] for r in sandbox.rows("SELECT text FROM fact WHERE status = 'active'")]
    assert any("walrus retry budget" in f for f in facts), facts
    assert any(LEDGER in f and "last cent" in f for f in facts), facts


def ledger(sandbox: Sandbox) -> Path:
    """The file session 2 reads and edits, in the worktree it runs in."""
    path = sandbox.worktree / LEDGER
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("TOTAL = 0.1 + 0.2\n")
    return path


def read_then_edit(path: Path | str) -> tuple[Call, Call]:
    """Session 2's file steps: read the ledger, then edit it (the same file twice)."""
    return (Call("read", str(path)),
            Call("edit", str(path), "TOTAL = 0.1 + 0.2", "TOTAL = round(0.1 + 0.2, 2)"))


def sent(request: Request) -> str:
    """Every string in a model request, as the model reads it (Gemini HTML-escapes its hooks'
    context, JSON escapes everything)."""
    out: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            out.append(html.unescape(value))
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(request.json())
    return "\n".join(out)


def recalled(calls: list[Request]) -> None:
    """Session 2's model requests (the session's own, in order: prompt → shell → read → edit →
    answer) carry what session 1 left: the session-start block and the per-prompt block from the
    first request on, the per-file block from the request after the read on, each exactly once in
    the last request (the edit of the same file adds nothing), and none repeating another."""
    assert len(calls) >= 4, f"{len(calls)} model requests: the tool steps did not all run"
    found = [_BLOCK.findall(sent(r)) for r in calls]

    def of(blocks: list[str], head: str) -> list[str]:
        return [b for b in blocks if head in b]

    start = of(found[0], context.NOTICE)
    assert len(start) == 1 and "walrus" in start[0], found[0]  # session 1's summary
    assert "last cent" not in start[0]  # a weak fact: per-file recall's, not the block's
    prompt = of(found[0], recall.PROMPT_HEAD)
    assert len(prompt) == 1 and "five attempts" in prompt[0], found[0]
    for before in found[:2]:  # the prompt's request and the shell's: no file read yet
        assert not of(before, FILE_HEAD)
    for after in found[2:]:  # from the request after the read on
        assert len(of(after, FILE_HEAD)) == 1 and "last cent" in of(after, FILE_HEAD)[0], after
    last = found[-1]
    assert len(of(last, context.NOTICE)) == 1 and len(of(last, recall.PROMPT_HEAD)) == 1
    ids = [set(context.listed_ids(b)) for b in last]
    assert all(not (a & b) for i, a in enumerate(ids) for b in ids[i + 1:]), last


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
