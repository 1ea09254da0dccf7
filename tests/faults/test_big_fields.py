"""A 2 MB field on every way in: cut before it costs anything, the event kept (counted)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from click.testing import CliRunner
from starlette.testclient import TestClient

from aletheia import bounds, db
from aletheia.cli import cli
from aletheia.web.app import create_app
from tests.hookproc import run_hook
from tests.settle import settled_store

BIG = 2 * 1024 * 1024 - 4096  # the whole payload stays under the hook's 2 MiB stdin cap


def test_a_2mb_session_id_through_a_real_hook_is_cut_and_the_event_kept(
        hook_env: dict[str, str], tmp_path: Path) -> None:
    db.connect().close()
    sid = "s" * BIG
    payload = {"session_id": sid, "cwd": str(tmp_path), "hook_event_name": "UserPromptSubmit",
               "prompt": "the prompt that must not be lost"}
    assert run_hook("claude-code", "UserPromptSubmit", payload, hook_env).code == 0
    assert run_hook("claude-code", "Stop", {**payload, "hook_event_name": "Stop"}, hook_env).code == 0
    conn = settled_store()
    try:
        rows = conn.execute("SELECT title, session_id FROM memory").fetchall()
        stops = conn.execute("SELECT session_id FROM stop_queue").fetchall()
    finally:
        conn.close()
    assert [r["title"] for r in rows] == ["the prompt that must not be lost"]
    assert len(rows[0]["session_id"]) <= bounds.SESSION_ID_CAP  # the store's stand-in
    # The stop names the same (cut) session as the memory: the job will find its events.
    assert [s["session_id"] for s in stops] == [rows[0]["session_id"]]


def test_a_2mb_cwd_and_tool_name_are_refused_as_paths_and_cut_as_names(
        hook_env: dict[str, str], tmp_path: Path) -> None:
    db.connect().close()
    payload = {"session_id": "s-big-cwd", "cwd": "/" + "d" * BIG, "hook_event_name": "PostToolUse",
               "tool_name": "T" * 100_000, "tool_input": {"command": "ls"},
               "tool_response": "a.py", "tool_use_id": "u" * 100_000}
    env = {**hook_env, "HOOK_CWD": str(tmp_path)}
    assert run_hook("claude-code", "PostToolUse", payload, env).code == 0
    conn = settled_store()
    try:
        row = conn.execute("SELECT project, tool, subtitle FROM memory").fetchone()
    finally:
        conn.close()
    assert row is not None
    assert len(row["project"]) <= bounds.PROJECT_CAP  # the hook's own directory, not the 2 MB one
    assert len(row["subtitle"]) <= 500


def test_a_2mb_field_over_rest_is_a_400_or_cut_never_a_500(conn: sqlite3.Connection) -> None:
    token = "b" * 32
    auth = {"Authorization": f"Bearer {token}"}
    with TestClient(create_app(token=token), base_url="http://127.0.0.1") as client:
        big = "x" * BIG
        # Bounded fields: refused with a message (413 past the 1 MiB body limit).
        for body in ({"title": "t", "narrative": "n", "project": "p", "session_id": big},
                     {"title": big, "narrative": "n", "project": "p"},
                     {"title": "t", "narrative": "n", "project": big}):
            r = client.post("/v1/memories", json=body, headers=auth)
            assert r.status_code in (400, 413) and r.json()["status"] == r.status_code
        # An event payload is the host's JSON: its session id is cut, the event kept.
        r = client.post("/v1/events", headers=auth, json={
            "host": "claude-code", "event": "UserPromptSubmit", "project": "p",
            "payload": {"session_id": big, "prompt": "kept over REST"}})
        assert r.status_code == 200 and r.json()["accepted"], r.text
    row = conn.execute("SELECT title, session_id FROM memory").fetchone()
    assert row["title"] == "kept over REST" and len(row["session_id"]) <= bounds.SESSION_ID_CAP


def test_a_2mb_note_from_the_cli_is_kept_capped(conn: sqlite3.Connection) -> None:
    result = CliRunner().invoke(cli, ["save", "--project", "/p", "--json", "word " * (BIG // 5)])
    assert result.exit_code == 0, result.output
    memory_id = json.loads(result.output)["id"]
    row = conn.execute("SELECT length(narrative), length(title) FROM memory WHERE id = ?",
                       (memory_id,)).fetchone()
    assert row[0] < 40_000 and row[1] <= 200
