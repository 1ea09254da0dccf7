"""The capture path with real hook processes: each host, bad input, faults, secrets, imports."""

from __future__ import annotations

import json
import random
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aletheia import db, paths
from tests import fakes
from tests.hookproc import DIRECT, REPO, claude_tool, run_hook
from tests.settle import replay_spool


def _store(*, replay: bool = True) -> sqlite3.Connection:
    """The store as a reader sees it after the hooks ran: a hook that outlived its watchdog (a
    busy machine) legitimately spooled its item, so replay the spool first."""
    c = db.connect()
    if replay:
        replay_spool(c)
    return c


def _count(sql: str = "SELECT count(*) FROM memory", *args: Any, replay: bool = True) -> int:
    c = _store(replay=replay)
    try:
        return int(c.execute(sql).fetchone()[0])
    finally:
        c.close()


@pytest.fixture
def project_dir(tmp_path: Path) -> Path:
    d = tmp_path / "work" / "app"
    d.mkdir(parents=True)
    return d


def test_claude_code_session(hook_env: dict[str, str], project_dir: Path) -> None:
    cwd = str(project_dir)
    base = {"session_id": "c1", "cwd": cwd, "transcript_path": "/dev/null"}
    assert run_hook("claude-code", "SessionStart", {**base, "source": "startup"}, hook_env).stdout == ""
    r = run_hook("claude-code", "UserPromptSubmit", {**base, "prompt": "fix the failing test"}, hook_env)
    assert (r.code, r.stdout) == (0, "")
    r = run_hook("claude-code", "PostToolUse",
                 claude_tool("c1", cwd, "pytest -q", "1 failed, 3 passed", "toolu_1"), hook_env)
    assert (r.code, r.stdout) == (0, "")
    r = run_hook("claude-code", "Stop", {**base, "last_assistant_message": "Fixed it.", "stop_hook_active": False}, hook_env)
    assert (r.code, r.stdout) == (0, "")
    c = _store()
    rows = c.execute("SELECT kind, title, project, tool, session_id FROM memory ORDER BY created_at, rowid").fetchall()
    assert [tuple(r) for r in rows] == [
        ("prompt", "fix the failing test", cwd, "claude-code", "c1"),
        ("tool_event", "Bash: $ pytest -q", cwd, "claude-code", "c1"),
        ("response", "Fixed it.", cwd, "claude-code", "c1"),
    ]
    assert [tuple(r) for r in c.execute("SELECT session_id, project FROM stop_queue")] == [("c1", cwd)]
    c.close()
    # The next session start prints the index in Claude's JSON form.
    out = run_hook("claude-code", "SessionStart", {**base, "session_id": "c2", "source": "startup"}, hook_env).stdout
    block = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "<aletheia-memory>" in block and "fix the failing test" in block


def test_codex_session(hook_env: dict[str, str], project_dir: Path) -> None:
    cwd = str(project_dir)
    base = {"session_id": "x1", "cwd": cwd, "turn_id": "t1", "model": "gpt", "permission_mode": "default"}
    run_hook("codex", "UserPromptSubmit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": "list files"}, hook_env)
    run_hook("codex", "PostToolUse", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                                      "tool_input": {"command": "ls"}, "tool_response": "a.py\nb.py",
                                      "tool_use_id": "call_1"}, hook_env)
    run_hook("codex", "Stop", {**base, "hook_event_name": "Stop"}, hook_env)
    c = _store()
    rows = c.execute("SELECT kind, title, narrative FROM memory ORDER BY created_at, rowid").fetchall()
    assert [r[0] for r in rows] == ["prompt", "tool_event"]
    assert "a.py\nb.py" in rows[1][2]
    assert c.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 1
    c.close()
    out = run_hook("codex", "SessionStart", {**base, "session_id": "x2", "source": "startup"}, hook_env).stdout
    assert out.startswith("<aletheia-memory>")  # Codex reads plain stdout


def test_gemini_session(hook_env: dict[str, str], project_dir: Path) -> None:
    cwd = str(project_dir)
    base = {"session_id": "g1", "cwd": cwd, "timestamp": "2026-12-01T10:00:00Z"}
    run_hook("gemini", "BeforeAgent", {**base, "hook_event_name": "BeforeAgent", "prompt": "run tests"}, hook_env)
    run_hook("gemini", "AfterTool", {**base, "timestamp": "2026-12-01T10:00:01Z", "hook_event_name": "AfterTool",
                                     "tool_name": "run_shell_command", "tool_input": {"command": "make test"},
                                     "tool_response": {"llmContent": "all green"}}, hook_env)
    run_hook("gemini", "SessionEnd", {**base, "hook_event_name": "SessionEnd", "reason": "exit"}, hook_env)
    c = _store()
    rows = c.execute("SELECT kind, title FROM memory ORDER BY created_at, rowid").fetchall()
    assert [tuple(r) for r in rows] == [("prompt", "run tests"), ("tool_event", "run_shell_command: $ make test")]
    assert c.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 1
    c.close()
    out = run_hook("gemini", "SessionStart", {**base, "session_id": "g2"}, hook_env).stdout
    assert "run tests" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_a_session_id_holding_a_secret_is_written_nowhere(hook_env: dict[str, str],
                                                           project_dir: Path,
                                                           aletheia_home: Path) -> None:
    """The id is replaced as the store would replace it before anything is written: the
    memory rows, the stop queue, and the session's injection log (a file named by the id)."""
    token = fakes.github_token(random.Random(77))
    base = {"session_id": token, "cwd": str(project_dir)}
    for prompt in ("set up the release checklist", "run the release checklist now"):
        assert run_hook("claude-code", "UserPromptSubmit", {**base, "prompt": prompt}, hook_env).code == 0
    assert run_hook("claude-code", "Stop", {**base, "last_assistant_message": "Done."}, hook_env).code == 0
    subprocess.run([sys.executable, "-m", "aletheia", "compress"], env=hook_env, check=True,
                   capture_output=True)
    assert run_hook("claude-code", "SessionStart", {**base, "source": "startup"}, hook_env).code == 0
    assert run_hook("claude-code", "UserPromptSubmit",
                    {**base, "prompt": "what is on the release checklist"}, hook_env).code == 0
    c = _store()
    assert {r[0] for r in c.execute("SELECT session_id FROM memory")} != {base["session_id"]}
    c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c.close()
    written = [p for p in aletheia_home.rglob("*") if p.is_file()]
    assert any("sessions" in p.parts for p in written)  # the injection log was written
    for p in written:
        assert token not in p.name and token.encode() not in p.read_bytes(), p


def test_a_codex_apply_patch_is_stored_from_its_pre_tool_use(hook_env: dict[str, str],
                                                             project_dir: Path) -> None:
    """Codex (0.171.0, tests/e2e/hosts) edits with apply_patch through its shell tool and runs
    only PreToolUse for it: that hook stores the edit; other PreToolUse events store nothing."""
    base = {"session_id": "x1", "cwd": str(project_dir), "turn_id": "t1", "tool_name": "Bash"}
    patch = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/fx.py\n@@\n-RATE = 1\n"
             "+RATE = 2\n*** End Patch\nEOF\n")
    runs = [
        run_hook("codex", "PreToolUse", {**base, "tool_input": {"command": patch},
                                         "tool_use_id": "call_9"}, hook_env, direct=True),
        run_hook("codex", "PreToolUse", {**base, "tool_input": {"command": "cat src/fx.py"},
                                         "tool_use_id": "call_8"}, hook_env, direct=True),
        run_hook("claude-code", "PreToolUse", {
            "session_id": "c9", "cwd": str(project_dir), "tool_name": "Edit",
            "tool_input": {"file_path": "src/fx.py", "old_string": "1", "new_string": "2"}},
            hook_env, direct=True),
    ]
    assert [r.code for r in runs] == [0, 0, 0]
    c = _store()
    rows = c.execute("SELECT kind, title, files, narrative, tool FROM memory").fetchall()
    assert [(r["kind"], r["title"], r["files"], r["tool"]) for r in rows] == [
        ("tool_event", "Bash: apply_patch update src/fx.py", '["src/fx.py"]', "codex")]
    assert "+RATE = 2" in rows[0]["narrative"]


def test_direct_interpreter_form_works(hook_env: dict[str, str], project_dir: Path) -> None:
    env = {k: v for k, v in hook_env.items() if k != "PYTHONPATH"}
    r = run_hook("claude-code", "PostToolUse",
                 claude_tool("d1", str(project_dir), "echo hi", "hi", "toolu_d"), env, direct=True)
    assert (r.code, r.stdout, r.stderr) == (0, "", "")
    assert _count() == 1


def test_replayed_or_retried_hook_makes_one_row(hook_env: dict[str, str], project_dir: Path) -> None:
    payload = claude_tool("r1", str(project_dir), "make", "ok", "toolu_r")
    for _ in range(3):
        run_hook("claude-code", "PostToolUse", payload, hook_env)
    assert _count() == 1


BAD_INPUTS: dict[str, bytes] = {
    "empty": b"",
    "invalid-json": b"{not json",
    "json-array": b"[1, 2, 3]",
    "json-string": b'"hello"',
    "binary": bytes(random.Random(5).getrandbits(8) for _ in range(4096)),
    "missing-fields": b"{}",
    "wrong-types": json.dumps({"session_id": 5, "cwd": ["x"], "tool_name": {}, "prompt": 7}).encode(),
    "nul-bytes": b'{"session_id": "a\\u0000b", "prompt": "\\u0000"}',
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
@pytest.mark.parametrize("event", ["PostToolUse", "UserPromptSubmit", "SessionStart", "Stop"])
def test_bad_input_exits_zero_and_loses_nothing(name: str, event: str, hook_env: dict[str, str], project_dir: Path) -> None:
    run_hook("claude-code", "PostToolUse", claude_tool("b1", str(project_dir), "ls", "x", "toolu_b"), hook_env)
    before = _count()
    r = run_hook("claude-code", event, None, hook_env, raw=BAD_INPUTS[name])
    assert r.code == 0
    if event != "SessionStart":
        assert r.stdout == ""
    assert _count() >= before


@pytest.mark.parametrize("host,event", [("nope", "PostToolUse"), ("claude-code", "NoSuchEvent"),
                                        ("gemini", "PostToolUse"), ("", "")])
def test_unknown_host_or_event(host: str, event: str, hook_env: dict[str, str], project_dir: Path) -> None:
    r = run_hook(host, event, claude_tool("u1", str(project_dir), "ls", "x", "toolu_u"), hook_env)
    assert (r.code, r.stdout) == (0, "")
    assert _count() == 0


def test_no_arguments(hook_env: dict[str, str]) -> None:
    proc = subprocess.run([sys.executable, "-m", "aletheia", "hook"], input=b"{}", env=hook_env,
                          capture_output=True, timeout=20)
    assert (proc.returncode, proc.stdout) == (0, b"")


def test_huge_stdin_is_truncated_not_refused(hook_env: dict[str, str], project_dir: Path) -> None:
    payload = claude_tool("h1", str(project_dir), "cat big.log", "", "toolu_h")
    head = json.dumps(payload)[:-1]  # drop the closing brace
    raw = (head + ', "extra": "' + "x" * (20 * 1024 * 1024) + '"}').encode()
    r = run_hook("claude-code", "PostToolUse", None, hook_env, raw=raw)
    assert (r.code, r.stdout) == (0, "")
    c = _store()
    row = c.execute("SELECT title, length(narrative) FROM memory").fetchone()
    c.close()
    assert row is not None and row[0].startswith("Bash")
    assert row[1] < 40_000


def test_hung_write_is_spooled_by_the_watchdog(hook_env: dict[str, str], project_dir: Path) -> None:
    env = {**hook_env, "ALETHEIA_HOOK_FAULT": "hang-write"}
    _count()  # create the schema first so the hang is in the write, not the migration
    r = run_hook("claude-code", "PostToolUse",
                 claude_tool("w1", str(project_dir), "sleep", "zzz", "toolu_w"), env)
    assert r.code == 0
    assert _count(replay=False) == 0
    # The fault sleeps 5 s per SQLite step: only the watchdog ends the process, and says so.
    spooled = [json.loads(line) for line in paths.spool_file().read_text().splitlines()]
    assert [(i["row"]["title"], i["why"]) for i in spooled] == [("Bash: $ sleep", "watchdog-db")]
    # The next hook replays the spool first.
    run_hook("claude-code", "PostToolUse", claude_tool("w1", str(project_dir), "ls", "a", "toolu_w2"), hook_env)
    c = _store()
    titles = sorted(r[0] for r in c.execute("SELECT title FROM memory"))
    c.close()
    assert titles == ["Bash: $ ls", "Bash: $ sleep"]


def test_a_store_due_an_upgrade_is_left_to_the_worker_and_nothing_is_lost(
    hook_env: dict[str, str], project_dir: Path
) -> None:
    # A store made by an older version: the hook must not start an upgrade (it can rebuild an
    # index for seconds, past the watchdog); it spools, and the next full connect upgrades.
    from aletheia.schema import MIGRATIONS
    from tests.oldstore import make_store_at

    paths.ensure_home()
    make_store_at(paths.hub_db(), max(MIGRATIONS) - 1).close()
    r = run_hook("claude-code", "PostToolUse",
                 claude_tool("u1", str(project_dir), "make", "ok", "toolu_u1"), hook_env)
    assert r.code == 0 and r.stdout == ""
    assert '"Bash: $ make"' in paths.spool_file().read_text()
    raw = sqlite3.connect(paths.hub_db())
    assert raw.execute("PRAGMA user_version").fetchone()[0] == max(MIGRATIONS) - 1
    assert raw.execute("SELECT count(*) FROM memory").fetchone()[0] == 0
    raw.close()
    # The worker, server or CLI connects with upgrades allowed; the spool replays after.
    c = _store()
    assert db.schema_version(c) == max(MIGRATIONS)
    c.close()
    run_hook("claude-code", "PostToolUse",
             claude_tool("u1", str(project_dir), "ls", "a", "toolu_u2"), hook_env)
    assert _count() == 2


def test_excluded_project_captures_nothing(hook_env: dict[str, str], project_dir: Path) -> None:
    env = {**hook_env, "ALETHEIA_EXCLUDED_PROJECTS": str(project_dir)}
    run_hook("claude-code", "PostToolUse", claude_tool("e1", str(project_dir), "ls", "x", "toolu_e"), env)
    run_hook("claude-code", "Stop", {"session_id": "e1", "cwd": str(project_dir)}, env)
    assert _count() == 0
    assert _count("SELECT count(*) FROM stop_queue") == 0
    assert not paths.spool_file().exists()


def test_excluded_by_stored_setting(hook_env: dict[str, str], project_dir: Path) -> None:
    from aletheia import settings

    c = _store()
    settings.put(c, "excluded_projects", [project_dir.name])
    c.close()
    run_hook("claude-code", "PostToolUse", claude_tool("e2", str(project_dir), "ls", "x", "toolu_e2"), hook_env)
    assert _count() == 0


def _all_bytes() -> bytes:
    blob = b""
    for p in paths.home().rglob("*"):
        if p.is_file():
            blob += p.read_bytes()
    return blob


def test_secret_through_every_hook_and_cli_path(hook_env: dict[str, str], project_dir: Path) -> None:
    rng = random.Random(11)
    secrets = {name: fakes.github_token(rng) for name in ("claude", "codex", "gemini", "save", "capture", "jsonl", "spool")}
    cwd = str(project_dir)
    run_hook("claude-code", "PostToolUse",
             claude_tool("s1", cwd, "cat .env", f"GITHUB_TOKEN={secrets['claude']}", "toolu_s"), hook_env)
    run_hook("codex", "UserPromptSubmit", {"session_id": "s2", "cwd": cwd, "prompt": f"use {secrets['codex']}"}, hook_env)
    run_hook("gemini", "AfterTool", {"session_id": "s3", "cwd": cwd, "tool_name": "read_file",
                                     "tool_input": {"file_path": ".env"},
                                     "tool_response": {"llmContent": f"token: {secrets['gemini']}"}}, hook_env)
    # A hung write puts the item in the spool: the spool must be redacted too.
    run_hook("claude-code", "PostToolUse", claude_tool("s4", cwd, "env", f"T={secrets['spool']}", "toolu_sp"),
             {**hook_env, "ALETHEIA_HOOK_FAULT": "hang-write"})
    spool_bytes = b"".join(p.read_bytes() for p in paths.spool_dir().glob("*"))
    assert secrets["spool"].encode() not in spool_bytes and b"Bash" in spool_bytes
    cli = [sys.executable, "-m", "aletheia"]
    env = {**hook_env, "HOOK_CWD": cwd}
    subprocess.run([*cli, "save", f"deploy key {secrets['save']}"], env=env, cwd=cwd, check=True, capture_output=True)
    subprocess.run([*cli, "capture"], input=f"log: {secrets['capture']}".encode(), env=env, cwd=cwd,
                   check=True, capture_output=True)
    line = json.dumps({"title": "x", "narrative": f"key={secrets['jsonl']}", "session_id": "j"})
    subprocess.run([*cli, "capture", "--jsonl"], input=line.encode(), env=env, cwd=cwd, check=True, capture_output=True)
    c = _store()
    assert c.execute("SELECT count(*) FROM memory").fetchone()[0] == 7
    c.execute("PRAGMA wal_checkpoint(PASSIVE)")
    c.close()
    blob = _all_bytes()
    for name, secret in secrets.items():
        assert secret.encode() not in blob, name


def test_hook_path_imports_no_heavy_module(hook_env: dict[str, str], project_dir: Path) -> None:
    payload = json.dumps(claude_tool("i1", str(project_dir), "ls", "x", "toolu_i")).encode()
    read = json.dumps({"session_id": "i1", "cwd": str(project_dir), "tool_name": "Read",
                       "tool_input": {"file_path": str(project_dir / "a.py")}}).encode()
    for cmd, data in (
        ([sys.executable, "-X", "importtime", "-m", "aletheia", "hook", "claude-code", "PostToolUse"], payload),
        ([sys.executable, "-X", "importtime", *DIRECT[1:], "claude-code", "SessionStart"], payload),
        # Per-file recall: a read-only answer on the tool path, as light as the capture.
        ([sys.executable, "-X", "importtime", *DIRECT[1:], "claude-code", "PreToolUse"], read),
    ):
        proc = subprocess.run(cmd, input=data, env=hook_env, capture_output=True, timeout=20)
        assert proc.returncode == 0
        imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.decode().splitlines()
                    if line.startswith("import time:")}
        assert "aletheia" in imported
        assert not {"hooks", "tasks", "web"} & imported  # only ever imported as aletheia.*
        for heavy in ("click", "huey", "starlette", "mcp", "uvicorn", "httpx", "anyio", "pydantic"):
            assert heavy not in imported, (cmd, heavy)
        # Start-up cost on every host event: each of these took 2-6 ms (bench/hook_latency.py).
        # (pathlib is checked in the direct form only: the editable install's finder, run by
        # site before any of our code, imports it in the other.)
        slow = ["typing", "_hashlib", "dataclasses", "inspect"] + (["pathlib"] if "-S" in cmd else [])
        for name in slow:
            assert name not in imported, (cmd, name)


def test_console_script_dispatches_hook_before_click(hook_env: dict[str, str]) -> None:
    script = Path(sys.executable).parent / "aletheia"
    if not script.exists():
        pytest.skip("console script not installed in this interpreter's environment")
    proc = subprocess.run([sys.executable, "-X", "importtime", str(script), "hook", "codex", "Stop"],
                          input=b"{}", env=hook_env, capture_output=True, timeout=20)
    assert proc.returncode == 0
    assert b" click" not in proc.stderr
    assert REPO.exists()


def test_an_item_that_cannot_be_processed_leaves_a_placeholder(
    project_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from aletheia import store
    from aletheia.hooks import run as hook_run

    real_prepare = store.prepare
    calls = {"n": 0}

    def failing_once(m: store.MemoryIn, **kw: Any) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("a redaction bug")
        return real_prepare(m, **kw)

    monkeypatch.setattr(store, "prepare", failing_once)
    payload = json.dumps(claude_tool("p1", str(project_dir), "cat secrets.txt", "SECRET CONTENT", "toolu_p"))
    out = io.StringIO()
    hook_run.run("claude-code", "PostToolUse", io.BytesIO(payload.encode()), out, hook_run._Pending())
    c = _store()
    rows = [tuple(r) for r in c.execute("SELECT kind, title, narrative FROM memory")]
    c.close()
    assert rows == [("tool_event", "tool_event event (content not kept: it could not be processed)", "")]


def test_a_tool_event_that_answers_nothing_loads_no_recall_code(hook_env: dict[str, str],
                                                                project_dir: Path) -> None:
    """PostToolUse is the most frequent event and Claude Code reads nothing back from it: the
    context, recall and precomputed-block modules stay unloaded."""
    payload = json.dumps(claude_tool("i2", str(project_dir), "ls", "x", "toolu_i2")).encode()
    proc = subprocess.run([sys.executable, "-X", "importtime", *DIRECT[1:], "claude-code", "PostToolUse"],
                          input=payload, env=hook_env, capture_output=True, timeout=20)
    loaded = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()
              if line.startswith("import time:")}
    assert "aletheia.capture.ingest" in loaded
    assert not {"aletheia.context", "aletheia.recall", "aletheia.blocks", "aletheia.search"} & loaded
