"""REST /v1 in process (Starlette's TestClient runs the lifespan): every list pages, every error is
{status, message}, jobs (dead ones and retry), bundles over HTTP, the OpenAPI document."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from aletheia import db, facts, store
from aletheia.web import rest
from aletheia.web.app import create_app

TOKEN = "t" * 32
BASE = "http://127.0.0.1:8377"


@pytest.fixture
def client(aletheia_home: Path) -> Iterator[TestClient]:
    app = create_app(token=TOKEN, mcp=False)
    with TestClient(app, base_url=BASE, headers={"Authorization": f"Bearer {TOKEN}"},
                    raise_server_exceptions=False) as c:
        yield c


def _memories(conn: sqlite3.Connection, n: int, *, project: str = "p") -> list[str]:
    return [store.write_memory(conn, store.MemoryIn(
        project=project, kind="note", title=f"note {i}", narrative=f"body {i}",
        session_id=f"s{i % 3}", created_at=1_700_000_000_000 + i)).id for i in range(n)]


def test_lists_page_through_everything(client: TestClient, conn: sqlite3.Connection) -> None:
    made = _memories(conn, 12)
    seen: list[str] = []
    cursor = None
    while True:
        params = {"limit": 5, **({"cursor": cursor} if cursor else {})}
        page = client.get("/v1/memories", params=params).json()
        seen += [m["id"] for m in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert seen == sorted(made, reverse=True)
    sessions = client.get("/v1/sessions", params={"limit": 2}).json()
    assert len(sessions["items"]) == 2 and sessions["next_cursor"]
    more = client.get("/v1/sessions", params={"cursor": sessions["next_cursor"]}).json()
    assert len(more["items"]) == 1 and more["next_cursor"] is None
    detail = client.get(f"/v1/sessions/{more['items'][0]['id']}").json()
    assert detail["memories"] == 4
    facts.add_facts(conn, [facts.FactIn(project="p", text=f"fact number {i} holds") for i in range(3)])
    got = client.get("/v1/facts", params={"project": "p", "limit": 2}).json()
    assert len(got["items"]) == 2 and got["next_cursor"]
    assert client.get("/v1/memories", params={"cursor": "nope"}).status_code == 400


def test_errors_are_json_with_status_and_message(client: TestClient) -> None:
    cases = [
        (client.get("/v1/nothing-here"), 404),
        (client.delete("/v1/search"), 405),
        (client.get("/v1/search"), 400),  # q is required
        (client.get("/v1/search", params={"q": "x", "limit": 0}), 400),
        (client.get("/v1/search", params={"q": "x", "colour": "red"}), 400),
        (client.post("/v1/memories", json={"title": "t", "narrative": "n", "project": "p",
                                           "mood": "happy"}), 400),
        (client.post("/v1/memories", json={"title": "t", "narrative": "n", "project": "p",
                                           "pinned": 1}), 400),  # strict: 1 is not true
        (client.post("/v1/memories", content=b"[1, 2", headers={"content-type": "application/json"}), 400),
        (client.post("/v1/memories", content=b"title=x", headers={"content-type": "text/plain"}), 400),
        (client.patch("/v1/memories/NOPE", json={"title": "x"}), 404),
        (client.patch("/v1/memories/NOPE", json={}), 400),
        (client.patch("/v1/memories/NOPE", json={"title": None}), 400),
        (client.post("/v1/erase", json={}), 400),
        (client.post("/v1/erase", json={"ids": ["a"], "project": "p"}), 400),
        (client.post("/v1/jobs/abc/retry"), 400),
        (client.post("/v1/jobs/99/retry"), 404),
        (client.put("/v1/settings/context.recent", json={"value": "five"}), 400),
        (client.put("/v1/settings/no.such", json={"value": 1}), 404),
        (client.post("/v1/rules", json={"text": "x", "tools": ["notepad"]}), 400),
        (client.post("/v1/events", content=b"{" + b" " * (5 << 20) + b"}",
                     headers={"content-type": "application/json"}), 413),
    ]
    for response, status in cases:
        assert response.status_code == status, (response.request.url, response.text)
        body = response.json()
        assert set(body) == {"status", "message"} and body["status"] == status
        assert "Traceback" not in body["message"]


def test_a_crash_is_a_500_with_a_message_and_no_trace(client: TestClient,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(conn: object) -> object:
        raise RuntimeError("secret internals")

    monkeypatch.setattr("aletheia.memories.stats", boom)
    r = client.get("/v1/stats")
    assert r.status_code == 500
    assert r.json() == {"status": 500, "message": "internal error (see the server log)"}


def test_dead_jobs_listed_and_retried(client: TestClient, conn: sqlite3.Connection) -> None:
    conn.execute(
        "INSERT INTO job (session_id, project, state, attempts, max_attempts, next_run_at, "
        "last_error, created_at, updated_at, finished_at) VALUES "
        "('s-dead', 'p', 'dead', 5, 5, 1, 'provider timed out', 1, 2, 2), "
        "('s-ok', 'p', 'done', 1, 5, 1, NULL, 1, 2, 2)"
    )
    dead = client.get("/v1/jobs", params={"state": "dead"}).json()["items"]
    assert [(j["session_id"], j["last_error"]) for j in dead] == [("s-dead", "provider timed out")]
    revived = client.post(f"/v1/jobs/{dead[0]['id']}/retry")
    assert revived.status_code == 200, revived.text
    assert revived.json()["state"] == "pending" and revived.json()["attempts"] == 0
    again = client.post(f"/v1/jobs/{dead[0]['id']}/retry")
    assert again.status_code == 409
    done = client.get("/v1/jobs", params={"state": "done"}).json()["items"][0]
    assert client.post(f"/v1/jobs/{done['id']}/retry").status_code == 409


def test_events_use_the_hook_adapters(client: TestClient, conn: sqlite3.Connection,
                                      tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "src"
    sub.mkdir()
    ev = client.post("/v1/events", json={"host": "claude-code", "event": "PostToolUse", "payload": {
        "session_id": "s1", "cwd": str(sub), "tool_name": "Bash", "tool_use_id": "t1",
        "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "3 passed"}}}).json()
    assert ev["accepted"] and ev["inserted"] and ev["project"] == str(repo.resolve())
    row = conn.execute("SELECT kind, title, tool, source FROM memory").fetchone()
    assert tuple(row) == ("tool_event", "Bash: $ pytest -q", "claude-code", "rest")
    again = client.post("/v1/events", json={"host": "claude-code", "event": "PostToolUse", "payload": {
        "session_id": "s1", "cwd": str(sub), "tool_name": "Bash", "tool_use_id": "t1",
        "tool_input": {"command": "pytest -q"}, "tool_response": {"stdout": "3 passed"}}}).json()
    assert again["inserted"] is False  # the same event twice is one memory
    stop = client.post("/v1/events", json={"host": "codex", "event": "Stop", "project": "p",
                                           "payload": {"session_id": "s9"}}).json()
    assert stop["stop_queued"] is True
    assert conn.execute("SELECT session_id FROM stop_queue").fetchone()[0] == "s9"
    client.post("/v1/events", json={"host": "claude-code", "event": "UserPromptSubmit",
                                    "payload": {"session_id": "s1", "cwd": str(sub),
                                                "prompt": "make the suite pass"}})
    start = client.post("/v1/events", json={"host": "claude-code", "event": "SessionStart",
                                            "payload": {"session_id": "s2", "cwd": str(sub)}}).json()
    # Not compressed yet: the block lists the session by its request.
    assert start["accepted"] and "asked: make the suite pass" in start["context"]
    ignored = client.post("/v1/events", json={"host": "notepad", "event": "Save", "project": "p",
                                              "payload": {}}).json()
    assert ignored["accepted"] is False
    no_project = client.post("/v1/events", json={"host": "codex", "event": "UserPromptSubmit",
                                                 "payload": {"prompt": "hi"}})
    assert no_project.status_code == 400


def test_bundles_over_http_round_trip(client: TestClient, conn: sqlite3.Connection,
                                      tmp_path: Path) -> None:
    _memories(conn, 4, project="a")
    _memories(conn, 2, project="b")
    exported = client.get("/v1/bundles/export", params={"project": "a"})
    assert exported.status_code == 200
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = exported.text.splitlines()
    assert json.loads(lines[0])["type"] == "header" and len(lines) == 1 + 4 + 3  # 3 sessions
    other = create_app(token=TOKEN, mcp=False, db_path=tmp_path / "other" / "hub.db")
    with TestClient(other, base_url=BASE, headers={"Authorization": f"Bearer {TOKEN}"}) as c2:
        report = c2.post("/v1/bundles/import", content=exported.content,
                         headers={"content-type": "application/x-ndjson"}).json()
        assert report["added"]["memory"] == 4
        again = c2.post("/v1/bundles/import", content=exported.content,
                        headers={"content-type": "application/x-ndjson"}).json()
        assert again["skipped"]["memory"] == 4 and again["added"]["memory"] == 0
    bad = client.post("/v1/bundles/import", content=b'{"type": "memory"}\n',
                      headers={"content-type": "application/x-ndjson"})
    assert bad.status_code == 400 and "header" in bad.json()["message"]


def test_openapi_document_covers_every_route(client: TestClient) -> None:
    doc = client.get("/v1/openapi.json", headers={"Authorization": ""}).json()
    assert doc["openapi"].startswith("3.1")
    documented = {(m.upper(), p) for p, ops in doc["paths"].items() for m in ops}
    assert documented == {(op.method, op.path) for op in rest.OPS}
    for key in ("excluded_projects", "context.recent", "provider"):
        assert ("PUT", f"/v1/settings/{key}") in documented
    recent = doc["components"]["schemas"]["Set_ContextRecent"]["properties"]["value"]
    assert (recent["type"], recent["minimum"], recent["maximum"]) == ("integer", 0, 20)
    create = doc["components"]["schemas"]["MemoryCreate"]
    assert {"title", "narrative", "project", "kind"} <= set(create["properties"])
    for ops in doc["paths"].values():
        for op in ops.values():
            for status, response in op["responses"].items():
                if int(status) >= 400:
                    assert response["content"]["application/json"]["schema"] == {
                        "$ref": "#/components/schemas/Error"}


def test_settings_change_what_the_code_reads(client: TestClient, conn: sqlite3.Connection) -> None:
    listed = {s["key"]: s for s in client.get("/v1/settings").json()["items"]}
    assert listed["context.recent"]["value"] == 5 and listed["context.recent"]["maximum"] == 20
    assert client.put("/v1/settings/excluded_projects", json={"value": ["secret-*"]}).json()[
        "value"] == ["secret-*"]
    from aletheia import settings

    assert settings.get(conn, "excluded_projects") == ["secret-*"]
    refused = client.post("/v1/events", json={"host": "codex", "event": "UserPromptSubmit",
                                              "project": "secret-x", "payload": {"prompt": "hi"}})
    assert refused.json()["accepted"] is False
    assert client.put("/v1/settings/context.recent", json={"value": 3.0}).json()["value"] == 3


def test_connections_are_per_thread_and_closed(aletheia_home: Path) -> None:
    app = create_app(token=None, mcp=False, dashboard=False)
    with TestClient(app, base_url=BASE) as c:
        for _ in range(5):
            assert c.get("/v1/health").status_code == 200
        conns = app.state.connections
        assert conns._all
    assert not conns._all
    check = db.connect()
    try:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        check.close()


def test_context_economics_counts_the_agents_fetches_not_the_dashboards(
        client: TestClient, conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    import itertools
    import time
    import types

    from aletheia import blocks

    # A clock of its own, a second a reading: the sessions start at distinct times.
    ticks = itertools.count(int(time.time()))
    monkeypatch.setattr(blocks, "time", types.SimpleNamespace(time=lambda: float(next(ticks))))
    _memories(conn, 3, project="/w/shop")
    blocks.record_injection("s-old", kind="block", project="/w/shop", host="codex",
                            text="b" * 2000, ids=["A"])
    blocks.record_injection("s-new", kind="block", project="/w/shop", host="claude-code",
                            text="b" * 4000, ids=["A"])
    for text in ("p" * 400, "q" * 800):
        blocks.record_injection("s-new", kind="prompt", project="/w/shop", host="claude-code",
                                text=text, ids=["B"])
    blocks.record_injection("s-new", kind="file", project="/w/shop", host="claude-code",
                            text="f" * 100, ids=["C"], path="src/app.py")
    # The agent searches (bearer token): a fetch.  A person in the dashboard (its cookie): none.
    assert client.get("/v1/search", params={"q": "body", "project": "/w/shop"}).status_code == 200
    with TestClient(create_app(token=TOKEN, mcp=False), base_url=BASE) as browser:
        assert browser.post("/login", data={"token": TOKEN}, headers={"Origin": BASE},
                            follow_redirects=False).status_code == 303
        for _ in range(3):
            assert browser.get("/v1/search", params={"q": "body", "project": "/w/shop"}).status_code == 200
        seen = browser.get("/v1/stats/context", params={"project": "/w/shop", "recent": 1}).json()
    assert [s["session"] for s in seen["sessions"]] == ["s-new"]  # the newest only
    new = seen["sessions"][0]
    assert new["tokens"] == {"block": 1000, "prompt": 300, "file": 25, "total": 1325}
    assert new["injections"] == {"block": 1, "prompt": 2, "file": 1}
    assert new["fetches"] == 1 and new["host"] == "claude-code"
    row = seen["projects"]["/w/shop"]
    assert row["sessions"] == 2 and row["followed_by_fetch"] == 1 and row["fetches"] == 1
    assert row["tokens_per_session"]["total"] == (1325 + 500) / 2
    assert client.get("/v1/stats").json()["context"]["/w/shop"] == row
    assert client.get("/v1/stats/context", params={"project": "/nowhere"}).json()["projects"] == {}
    assert client.get("/v1/stats/context", params={"days": 0}).status_code == 400


def test_doctor_leaves_the_integrity_check_out_when_asked(client: TestClient) -> None:
    """The dashboard's health banner asks on every page: it does not read all of hub.db."""
    names = [c["name"] for c in client.get("/v1/doctor").json()["checks"]]
    light = [c["name"] for c in client.get("/v1/doctor", params={"integrity": "false"}).json()["checks"]]
    assert "integrity" in names and "integrity" not in light
    assert set(light) == set(names) - {"integrity"}
    bad = client.get("/v1/doctor", params={"integrity": "maybe"})
    assert bad.status_code == 400 and "integrity" in bad.json()["message"]
