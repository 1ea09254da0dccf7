"""Importers: claude-mem databases, Claude Code transcripts, Codex rollouts, bundles."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aletheia import store
from aletheia.capture.adapters import adapt
from aletheia.capture.ingest import Summary
from aletheia.capture.memory import to_memory
from aletheia.cli import cli
from aletheia.importers import claude_mem, transcripts
from tests.fakes import github_token, openai_key

# claude-mem's tables as its schema.sql (migration 35) declares them; only what the importer
# reads, plus the columns it must tolerate.
CLAUDE_MEM_SCHEMA = """
CREATE TABLE sdk_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT UNIQUE NOT NULL,
  memory_session_id TEXT UNIQUE, project TEXT NOT NULL,
  platform_source TEXT NOT NULL DEFAULT 'claude', user_prompt TEXT, started_at TEXT NOT NULL,
  started_at_epoch INTEGER NOT NULL, completed_at TEXT, completed_at_epoch INTEGER,
  status TEXT NOT NULL DEFAULT 'active', worker_port INTEGER, prompt_counter INTEGER DEFAULT 0,
  custom_title TEXT);
CREATE TABLE observations (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL,
  text TEXT, type TEXT NOT NULL, title TEXT, subtitle TEXT, facts TEXT, narrative TEXT,
  concepts TEXT, files_read TEXT, files_modified TEXT, prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0, content_hash TEXT, agent_type TEXT, agent_id TEXT,
  merged_into_project TEXT, generated_by_model TEXT, metadata TEXT, created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL, UNIQUE(memory_session_id, content_hash));
CREATE TABLE session_summaries (
  id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT NOT NULL, project TEXT NOT NULL,
  request TEXT, investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT,
  files_read TEXT, files_edited TEXT, notes TEXT, prompt_number INTEGER,
  discovery_tokens INTEGER DEFAULT 0, merged_into_project TEXT, created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL);
CREATE TABLE user_prompts (
  id INTEGER PRIMARY KEY AUTOINCREMENT, content_session_id TEXT NOT NULL,
  prompt_number INTEGER NOT NULL, prompt_text TEXT NOT NULL, created_at TEXT NOT NULL,
  created_at_epoch INTEGER NOT NULL);
"""


def _claude_mem_db(path: Path, secret: str) -> dict[str, int]:
    db = sqlite3.connect(path)
    db.executescript(CLAUDE_MEM_SCHEMA)
    t = 1_790_000_000_000
    db.execute("INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, "
               "started_at, started_at_epoch) VALUES ('cs-1', 'ms-1', 'webapp', 'x', ?)", (t,))
    db.execute("INSERT INTO sdk_sessions (content_session_id, memory_session_id, project, "
               "platform_source, started_at, started_at_epoch) "
               "VALUES ('cs-2', 'ms-2', 'api', 'codex', 'x', ?)", (t,))
    obs = [
        ("ms-1", "webapp", "discovery", "Auth uses JWT", "in middleware",
         '["tokens expire after 1h"]', "The auth middleware checks a JWT.", '["auth"]',
         '["src/auth.ts"]', "[]"),
        ("ms-1", "webapp", "bugfix", "Fixed the login redirect", None, "[]",
         f"Rotated the leaked key {secret} and fixed the redirect.", "[]", "[]",
         '["src/login.ts"]'),
        # Two identical observations stay two memories (a stable per-row event key).
        ("ms-2", "api", "change", "Bumped the API version", None, "[]", "v2", "[]", "[]", "[]"),
        ("ms-2", "api", "change", "Bumped the API version", None, "[]", "v2", "[]", "[]", "[]"),
    ]
    for i, o in enumerate(obs):
        db.execute("INSERT INTO observations (memory_session_id, project, type, title, subtitle, "
                   "facts, narrative, concepts, files_read, files_modified, content_hash, "
                   "created_at, created_at_epoch) VALUES (?,?,?,?,?,?,?,?,?,?,?,'x',?)",
                   (*o, f"h{i}", t + i))
    db.execute("INSERT INTO session_summaries (memory_session_id, project, request, learned, "
               "completed, files_edited, created_at, created_at_epoch) VALUES "
               "('ms-1', 'webapp', 'Fix login', 'JWT lives 1h', 'redirect fixed', "
               "'[\"src/login.ts\"]', 'x', ?)", (t + 10,))
    db.execute("INSERT INTO user_prompts (content_session_id, prompt_number, prompt_text, "
               "created_at, created_at_epoch) VALUES ('cs-1', 1, 'why does login loop?', 'x', ?)",
               (t - 1,))
    db.execute("INSERT INTO user_prompts (content_session_id, prompt_number, prompt_text, "
               "created_at, created_at_epoch) VALUES ('cs-1', 2, ?, 'x', ?)",
               (f"use OPENAI_API_KEY={secret} please", t + 5))
    db.commit()
    db.close()
    return {"observations": 4, "summaries": 1, "prompts": 2}


def _db_bytes(home: Path) -> bytes:
    return b"".join(p.read_bytes() for p in home.glob("hub.db*"))


def test_claude_mem_counts_idempotence_and_redaction(conn: Any, tmp_path: Path,
                                                    aletheia_home: Path) -> None:
    secret = github_token(random.Random(1))
    source = tmp_path / "claude-mem.db"
    counts = _claude_mem_db(source, secret)
    total = sum(counts.values())
    assert claude_mem.count_rows(source) == total

    seen: list[int] = []
    first = claude_mem.import_db(conn, source, progress=seen.append)
    assert first.read == total and first.inserted == total and first.stored == total
    assert sum(seen) == total
    assert first.by_kind == {"note": 4, "summary": 1, "prompt": 2}
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == total

    second = claude_mem.import_db(conn, source)
    assert second.inserted == 0 and second.already == total
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == total

    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert secret.encode() not in _db_bytes(aletheia_home)
    rows = {r["title"]: dict(r) for r in conn.execute("SELECT * FROM memory")}
    jwt = rows["Auth uses JWT"]
    assert jwt["project"] == "webapp" and jwt["session_id"] == "cs-1"
    assert jwt["tool"] == "claude-code" and jwt["source"] == "import:claude-mem"
    assert json.loads(jwt["facts"]) == ["tokens expire after 1h"]
    assert json.loads(jwt["files"]) == ["src/auth.ts"]
    assert "discovery" in json.loads(jwt["concepts"])
    assert rows["Bumped the API version"]["tool"] == "codex"
    summary = rows["Fix login"]
    assert summary["kind"] == "summary" and "Learned: JWT lives 1h" in summary["narrative"]
    assert rows["why does login loop?"]["created_at"] == 1_790_000_000_000 - 1


def test_claude_mem_cli_with_progress_and_summary(tmp_path: Path, aletheia_home: Path) -> None:
    source = tmp_path / "claude-mem.db"
    _claude_mem_db(source, openai_key(random.Random(2)))
    runner = CliRunner()
    out = runner.invoke(cli, ["import", "claude-mem", str(source), "--json"],
                        catch_exceptions=False)
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout[out.stdout.index("{"):])
    assert summary["inserted"] == 7 and summary["stored"] == 7
    again = runner.invoke(cli, ["import", "claude-mem", str(source)], catch_exceptions=False)
    assert "inserted 0, already stored 7" in again.output
    missing = runner.invoke(cli, ["import", "claude-mem", str(tmp_path / "nope.db")])
    assert missing.exit_code == 1 and "no claude-mem database" in missing.output


def test_claude_mem_refuses_a_file_that_is_not_sqlite(conn: Any, tmp_path: Path) -> None:
    bad = tmp_path / "claude-mem.db"
    bad.write_text("not a database at all, just text " * 20)
    from aletheia.errors import InvalidInput

    with pytest.raises(InvalidInput):
        claude_mem.import_db(conn, bad)


# -- Claude Code transcripts: the same events as the hook, so the same hashes ------------------

SESSION = "8a6800d4-b4f2-4285-a50a-3b37308087a1"


def _claude_transcript(path: Path, cwd: Path, secret: str) -> None:
    """Lines shaped as Claude Code 2.1.197 writes them (seen in tests/e2e/hosts)."""
    base = {"sessionId": SESSION, "cwd": str(cwd), "version": "2.1.197", "isSidechain": False}
    lines = [
        {"type": "queue-operation", "sessionId": SESSION},
        {**base, "type": "user", "timestamp": "2026-12-01T20:34:02.832Z",
         "message": {"role": "user", "content": "run the thing"}},
        {**base, "type": "attachment", "timestamp": "2026-12-01T20:34:02.831Z"},
        {**base, "type": "assistant", "timestamp": "2026-12-01T20:34:02.906Z",
         "message": {"role": "assistant", "content": [
             {"type": "text", "text": "Let me run it."},
             {"type": "tool_use", "id": "toolu_1", "name": "Bash",
              "input": {"command": f"echo {secret}", "description": "print"}}]}},
        {**base, "type": "user", "timestamp": "2026-12-01T20:34:03.001Z",
         "message": {"role": "user", "content": [
             {"tool_use_id": "toolu_1", "type": "tool_result", "content": secret,
              "is_error": False}]},
         "toolUseResult": {"stdout": secret, "stderr": "", "interrupted": False,
                           "isImage": False, "noOutputExpected": False}},
        {**base, "type": "assistant", "timestamp": "2026-12-01T20:34:03.017Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "All done."}]}},
        {**base, "type": "user", "isMeta": True, "timestamp": "2026-12-01T20:34:04.000Z",
         "message": {"role": "user", "content": "<local-command-caveat>meta</local-command-caveat>"}},
        {"type": "last-prompt", "sessionId": SESSION},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _hook_hashes(host: str, events: list[tuple[str, dict[str, Any]]], project: str) -> set[str]:
    out = set()
    for name, payload in events:
        m = to_memory(adapt(host, name, payload, env={}), project)
        if m is not None:
            out.add(store.prepare(m)["content_hash"])
    return out


def _stored_hashes(conn: Any) -> set[str]:
    return {r[0] for r in conn.execute("SELECT content_hash FROM memory")}


def test_claude_transcript_events_hash_like_the_hook(conn: Any, tmp_path: Path) -> None:
    secret = github_token(random.Random(3))
    work = tmp_path / "work"
    work.mkdir()
    path = tmp_path / "t.jsonl"
    _claude_transcript(path, work, secret)
    project = str(work.resolve())
    common = {"session_id": SESSION, "cwd": str(work), "transcript_path": str(path)}
    hook = _hook_hashes("claude-code", [
        ("UserPromptSubmit", {**common, "prompt_id": "p1", "prompt": "run the thing"}),
        ("PostToolUse", {**common, "tool_name": "Bash",
                         "tool_input": {"command": f"echo {secret}", "description": "print"},
                         "tool_response": {"stdout": secret, "stderr": "", "interrupted": False,
                                           "isImage": False, "noOutputExpected": False},
                         "tool_use_id": "toolu_1", "duration_ms": 40}),
        ("Stop", {**common, "stop_hook_active": False, "last_assistant_message": "All done."}),
    ], project)
    events = transcripts.parse_file(path, transcripts.ClaudeParser())
    done = transcripts.ingest_events(conn, events, "import:claude-code", Summary("t"))
    assert done.by_kind == {"prompt": 1, "tool_event": 1, "response": 1}
    assert _stored_hashes(conn) == hook
    queued = [tuple(r) for r in conn.execute("SELECT session_id, project, tool FROM stop_queue")]
    assert queued == [(SESSION, project, "claude-code")]


def test_transcript_import_skips_what_the_hook_stored(conn: Any, tmp_path: Path,
                                                     aletheia_home: Path) -> None:
    secret = github_token(random.Random(4))
    work = tmp_path / "work"
    work.mkdir()
    root = tmp_path / "projects"
    (root / "-work").mkdir(parents=True)
    path = root / "-work" / f"{SESSION}.jsonl"
    _claude_transcript(path, work, secret)
    # The hook caught the prompt live; the tool event and the answer were missed.
    prompt = to_memory(adapt("claude-code", "UserPromptSubmit", {
        "session_id": SESSION, "cwd": str(work), "prompt": "run the thing"}, env={}),
        str(work.resolve()))
    assert prompt is not None
    store.write_memory(conn, prompt)

    first = transcripts.import_files(conn, transcripts.claude_files(root), "claude-code")
    assert (first.read, first.inserted, first.already) == (3, 2, 1)
    assert first.sessions_queued == 1
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 3
    again = transcripts.import_files(conn, transcripts.claude_files(root), "claude-code")
    assert (again.inserted, again.already) == (0, 3)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert secret.encode() not in _db_bytes(aletheia_home)
    assert conn.execute("SELECT session_id FROM stop_queue").fetchall()[0][0] == SESSION


# -- Codex rollouts ------------------------------------------------------------------------------

CODEX_SESSION = "01a23354-52a0-7f21-abcf-8aab5197eb6b"
TURN = "01a23354-52b8-7f80-97c9-ff4ced85113a"


def _codex_rollout(path: Path, cwd: Path) -> None:
    """Lines shaped as Codex 0.171.0 writes them (seen in tests/e2e/hosts)."""
    ts = "2026-12-01T20:38:15.000Z"
    lines = [
        {"timestamp": ts, "type": "session_meta", "payload": {"id": CODEX_SESSION, "cwd": str(cwd),
                                                              "cli_version": "0.171.0"}},
        {"timestamp": ts, "type": "turn_context", "payload": {"turn_id": TURN, "cwd": str(cwd)}},
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "<environment_context>…"}]}},
        {"timestamp": ts, "type": "event_msg", "payload": {
            "type": "item_completed", "turn_id": TURN,
            "item": {"type": "UserMessage", "id": "u1",
                     "content": [{"type": "text", "text": "run the codex thing"}]}}},
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "call_1",
            "arguments": json.dumps({"cmd": "echo hello-from-codex"})}},
        {"timestamp": ts, "type": "event_msg", "payload": {
            "type": "item_completed", "turn_id": TURN,
            "item": {"type": "CommandExecution", "id": "call_1",
                     "command": ["/bin/bash", "-lc", "echo hello-from-codex"],
                     "aggregated_output": "hello-from-codex\n", "exit_code": 0}}},
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_1",
            "output": "Chunk ID: 1\nOutput:\nhello-from-codex\n"}},
        # An edit: apply_patch in the shell tool; Codex records a FileChange item and an output
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call", "name": "exec_command", "call_id": "call_2",
            "arguments": json.dumps({"cmd": PATCH})}},
        {"timestamp": ts, "type": "event_msg", "payload": {
            "type": "item_completed", "turn_id": TURN,
            "item": {"type": "FileChange", "id": "call_2", "status": "completed",
                     "changes": {"src/billing/ledger.py": {
                         "type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n"}},
                     "stdout": "Success. Updated the following files:\nM src/billing/ledger.py\n"}}},
        {"timestamp": ts, "type": "response_item", "payload": {
            "type": "function_call_output", "call_id": "call_2",
            "output": "Exit code: 0\nOutput:\nSuccess. Updated the following files:\n"}},
        {"timestamp": ts, "type": "event_msg", "payload": {
            "type": "task_complete", "turn_id": TURN, "last_agent_message": "All done."}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


PATCH = ("apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/billing/ledger.py\n@@\n"
         "-TOTAL = 0.1 + 0.2\n+TOTAL = round(0.1 + 0.2, 2)\n*** Add File: src/billing/notes.md\n"
         "+rounded\n*** End Patch\nEOF\n")


def test_codex_rollout_events_hash_like_the_hook(conn: Any, tmp_path: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    path = tmp_path / "rollout.jsonl"
    _codex_rollout(path, work)
    common = {"session_id": CODEX_SESSION, "cwd": str(work), "turn_id": TURN}
    hook = _hook_hashes("codex", [
        ("UserPromptSubmit", {**common, "prompt": "run the codex thing"}),
        ("PostToolUse", {**common, "tool_name": "Bash",
                         "tool_input": {"command": "echo hello-from-codex"},
                         "tool_response": "hello-from-codex\n", "tool_use_id": "call_1"}),
        # Codex 0.171.0 runs no PostToolUse for apply_patch: the edit is stored from this one
        ("PreToolUse", {**common, "tool_name": "Bash", "tool_input": {"command": PATCH},
                        "tool_use_id": "call_2"}),
        ("Stop", {**common, "last_assistant_message": "All done."}),
    ], str(work.resolve()))
    events = transcripts.parse_file(path, transcripts.CodexParser())
    done = transcripts.ingest_events(conn, events, "import:codex", Summary("t"))
    assert done.by_kind == {"prompt": 1, "tool_event": 2, "response": 1}
    assert _stored_hashes(conn) == hook
    edit = conn.execute("SELECT title, files, narrative FROM memory WHERE title LIKE '%apply_patch%'"
                        ).fetchone()
    assert edit["title"] == ("Bash: apply_patch update src/billing/ledger.py, "
                             "add src/billing/notes.md")
    assert json.loads(edit["files"]) == ["src/billing/ledger.py", "src/billing/notes.md"]
    assert "+TOTAL = round(0.1 + 0.2, 2)" in edit["narrative"]


def test_codex_cli_import(tmp_path: Path, aletheia_home: Path) -> None:
    work = tmp_path / "w"
    work.mkdir()
    day = tmp_path / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    _codex_rollout(day / f"rollout-{CODEX_SESSION}.jsonl", work)
    out = CliRunner().invoke(cli, ["import", "codex", str(tmp_path / "sessions")],
                             catch_exceptions=False)
    assert out.exit_code == 0, out.output
    assert "read 4" in out.output and "inserted 4" in out.output


def test_bundle_import_through_the_cli(tmp_path: Path, conn: Any) -> None:
    from aletheia import bundles

    store.write_memory(conn, store.MemoryIn(project="p", kind="note", title="bundled note"))
    bundle = tmp_path / "b.jsonl"
    bundles.export_to_file(conn, bundle)
    conn.execute("DELETE FROM memory")
    runner = CliRunner()
    first = runner.invoke(cli, ["import", "bundle", str(bundle)], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert "1 memory" in first.output
    assert [r[0] for r in conn.execute("SELECT title FROM memory")] == ["bundled note"]
    second = runner.invoke(cli, ["import", "bundle", str(bundle)], catch_exceptions=False)
    assert "0 memory" in second.output
