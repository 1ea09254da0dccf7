"""End to end against a real ``aletheia serve`` (uvicorn on 127.0.0.1, ephemeral port):
REST round trips, MCP over HTTP and over stdio through the SDK's Client, one ranking in every
interface, security refusals, and a fake secret through every write path absent from the bytes.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.webproc import REPO, Server, running_server, server_env

pytestmark = pytest.mark.slow


def fake_github_token(rng: random.Random) -> str:
    return "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))


@pytest.fixture
def server(aletheia_home: Path) -> Iterator[Server]:
    with running_server(aletheia_home) as srv:
        yield srv


def _seed(client: httpx.Client, project: str) -> list[str]:
    notes = [
        ("Use WAL journal mode", "SQLite WAL mode lets readers run while the hook writes."),
        ("Busy timeout for hooks", "The hook lowers the SQLite busy timeout to 50 ms."),
        ("Redaction runs first", "Every write path redacts before SQLite sees the text."),
        ("Pytest fixtures", "The conftest points ALETHEIA_HOME at a temp dir."),
        ("WAL checkpoint after erase", "A checkpoint moves WAL pages into hub.db."),
    ]
    out = []
    for title, narrative in notes:
        r = client.post("/v1/memories", json={"title": title, "narrative": narrative,
                                              "project": project, "kind": "note"})
        assert r.status_code == 201, r.text
        out.append(r.json()["id"])
    return out


def _mcp_http(server: Server, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> list[Any]:
        results = []
        headers = {"Authorization": f"Bearer {server.token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as c,
        ):
            tools = await c.list_tools()
            results.append(sorted(t.name for t in tools.tools))
            for name, args in calls:
                results.append(await c.call_tool(name, args))
        return results

    return anyio.run(main)


def _mcp_stdio(home: Path, cwd: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=["-m", "aletheia", "mcp"],
                                   env=server_env(home), cwd=str(cwd))

    async def main() -> list[Any]:
        results = []
        async with Client(params) as c:
            tools = await c.list_tools()
            results.append(sorted(t.name for t in tools.tools))
            for name, args in calls:
                results.append(await c.call_tool(name, args))
        return results

    return anyio.run(main)


def test_rest_round_trips(server: Server) -> None:
    with server.client() as c:
        assert c.get("/v1/health").json()["status"] == "ok"
        created = c.post("/v1/memories", json={"title": "Deploy steps", "narrative": "make deploy",
                                               "project": "demo", "kind": "note"})
        assert created.status_code == 201
        mid = created.json()["id"]
        again = c.post("/v1/memories", json={"title": "Deploy steps", "narrative": "make deploy",
                                             "project": "demo", "kind": "note"})
        assert again.status_code == 200 and again.json() == {"id": mid, "inserted": False}
        got = c.get(f"/v1/memories/{mid}").json()
        assert got["title"] == "Deploy steps" and got["source"] == "rest"
        edited = c.patch(f"/v1/memories/{mid}", json={"narrative": "make deploy ENV=prod"})
        assert edited.json()["narrative"] == "make deploy ENV=prod"
        assert c.post("/v1/pins", json={"id": mid}).json()["pinned"] is True
        assert [m["id"] for m in c.get("/v1/pins").json()["items"]] == [mid]
        assert c.delete(f"/v1/pins/{mid}").json()["pinned"] is False
        assert c.post("/v1/promote", json={"id": mid}).json()["scope"] == "global"
        assert c.get("/v1/search", params={"q": "deploy", "project": "other"}).json()["items"]
        hidden = c.post("/v1/dismiss", json={"id": mid}).json()
        assert hidden["dismissed_at"] is not None
        assert c.get("/v1/search", params={"q": "deploy"}).json()["items"] == []
        c.post("/v1/dismiss", json={"id": mid, "undo": True})
        assert c.get("/v1/timeline", params={"anchor": mid}).json()["items"][0]["id"] == mid
        assert c.get("/v1/observations", params={"ids": mid}).json()["items"][0]["id"] == mid
        assert mid in c.get("/v1/context", params={"project": "demo"}).json()["block"]
        rule = c.post("/v1/rules", json={"text": "Run make check before commits",
                                         "project": "demo", "tools": ["codex"]})
        assert rule.status_code == 201
        rid = rule.json()["id"]
        assert c.patch(f"/v1/rules/{rid}", json={"enabled": False}).json()["enabled"] is False
        assert c.get("/v1/rules", params={"project": "demo"}).json()["items"][0]["id"] == rid
        put = c.put("/v1/settings/context.recent", json={"value": 7})
        assert put.json()["value"] == 7
        assert c.put("/v1/settings/context.recent", json={"value": 700}).status_code == 400
        stats = c.get("/v1/stats").json()
        assert stats["memories"] == 1
        # Errors are JSON with a status and a message, never a stack trace.
        missing = c.get("/v1/memories/NOPE")
        assert missing.status_code == 404
        assert missing.json() == {"status": 404, "message": "no memory with id NOPE"}
        bad = c.post("/v1/memories", content=b"{not json", headers={"content-type": "application/json"})
        assert bad.status_code == 400 and bad.json()["status"] == 400
        huge = c.post("/v1/memories", content=b"x" * (2 << 20),
                      headers={"content-type": "application/json"})
        assert huge.status_code == 413
        receipt = c.post("/v1/erase", json={"ids": [mid]}).json()
        assert receipt["body"]["counts"]["memories"] == 1
        verdict = c.post("/v1/receipts/verify", json=receipt).json()
        assert verdict["valid"] is True
        assert c.get(f"/v1/memories/{mid}").status_code == 404


def test_same_ranking_in_cli_rest_and_mcp(server: Server, aletheia_home: Path) -> None:
    with server.client() as c:
        _seed(c, "rank-demo")
        rest = [h["id"] for h in c.get("/v1/search", params={
            "q": "checkpoint busy timeout fixtures", "project": "rank-demo", "limit": 10}).json()["items"]]
    assert len(rest) >= 2
    cli = subprocess.run(
        [sys.executable, "-m", "aletheia", "search", "checkpoint", "busy", "timeout", "fixtures", "--project",
         "rank-demo", "--limit", "10", "--json"],
        env=server_env(aletheia_home), capture_output=True, text=True, check=True, cwd=str(REPO),
    )
    assert [h["id"] for h in json.loads(cli.stdout)] == rest
    query = {"query": "checkpoint busy timeout fixtures", "project": "rank-demo", "limit": 10}
    tools, over_http = _mcp_http(server, [("search", query)])
    assert {"search", "timeline", "get_observations", "save_memory", "context"} <= set(tools)
    assert [h["id"] for h in over_http.structured_content["result"]] == rest
    _tools, over_stdio = _mcp_stdio(aletheia_home, aletheia_home, [("search", query)])
    assert [h["id"] for h in over_stdio.structured_content["result"]] == rest


def test_mcp_tools_over_http_and_stdio(server: Server, aletheia_home: Path) -> None:
    with server.client() as c:
        ids = _seed(c, "mcp-demo")
    results = _mcp_http(server, [
        ("save_memory", {"text": "Decided: ship on Fridays never", "project": "mcp-demo"}),
        ("timeline", {"anchor": ids[2], "before": 1, "after": 1}),
        ("get_observations", {"ids": [ids[0]]}),
        ("context", {"project": "mcp-demo"}),
        ("get_observations", {"ids": ["NO-SUCH-ID"]}),
        ("save_memory", {"text": "no project given"}),
    ])
    saved, timeline, observed, block, missing, no_project = results[1:]
    assert saved.is_error is False and saved.structured_content["id"]
    assert [r["id"] for r in timeline.structured_content["result"]] == ids[1:4]
    assert observed.structured_content["result"][0]["title"] == "Use WAL journal mode"
    assert "<aletheia-memory>" in block.content[0].text
    # Tool errors are MCP errors with a message.
    assert missing.is_error is True and "NO-SUCH-ID" in missing.content[0].text
    assert no_project.is_error is True and "project" in no_project.content[0].text
    # Over stdio the project defaults to the directory the host started us in.
    project_dir = aletheia_home / "work"
    project_dir.mkdir()
    (project_dir / ".aletheia-project").write_text("stdio-demo\n")
    from aletheia import trust

    trust.grant(str((project_dir / ".aletheia-project").resolve()), "stdio-demo")
    results = _mcp_stdio(aletheia_home, project_dir, [
        ("save_memory", {"text": "stdio saves go to the cwd project"}),
        ("search", {"query": "stdio saves"}),
    ])
    assert results[1].structured_content["project"] == "stdio-demo"
    assert [h["project"] for h in results[2].structured_content["result"]] == ["stdio-demo"]


def test_security_refusals(server: Server) -> None:
    with server.client(auth=False) as anon:
        assert anon.get("/v1/stats").status_code == 401
        assert anon.get("/v1/health").status_code == 200  # no data: a monitor needs no token
        assert anon.post("/mcp", json={}).status_code == 401
        wrong = anon.get("/v1/stats", headers={"Authorization": "Bearer not-the-token"})
        assert wrong.status_code == 401 and wrong.json()["status"] == 401
        assert anon.get("/v1/openapi.json").status_code == 200  # the document holds no data
    with server.client() as c:
        evil_host = c.get("/v1/health", headers={"Host": "evil.example"})
        assert evil_host.status_code == 421
        assert c.post("/mcp", json={}, headers={"Host": "evil.example:8377"}).status_code == 421
        cross = c.post("/v1/memories", json={"title": "x", "narrative": "y", "project": "p"},
                       headers={"Origin": "http://evil.example"})
        assert cross.status_code == 403 and cross.json()["status"] == 403
        other_port = c.post("/v1/pins", json={"id": "x"},
                            headers={"Origin": f"http://127.0.0.1:{server.port + 1}"})
        assert other_port.status_code == 403
        mcp_cross = c.post("/mcp", json={}, headers={"Origin": "http://evil.example"})
        assert mcp_cross.status_code == 403
        same = c.post("/v1/pins", json={"id": "nope"}, headers={"Origin": server.url})
        assert same.status_code == 404  # past the guard
    # The dashboard's cookie works only after signing in with the token, and is locked down.
    with httpx.Client(base_url=server.url, follow_redirects=False) as browser:
        page = browser.get("/")
        assert page.status_code == 200 and 'name="token"' in page.text
        assert browser.post("/login", data={"token": "guess"},
                            headers={"Origin": server.url}).status_code == 401
        ok = browser.post("/login", data={"token": server.token}, headers={"Origin": server.url})
        assert ok.status_code == 303
        cookie = ok.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert server.token.lower() not in cookie
        assert browser.get("/v1/stats").status_code == 200
        # A cookie write must come from our own page.
        assert browser.post("/v1/pins", json={"id": "x"}).status_code == 403
        assert browser.post("/v1/pins", json={"id": "x"},
                            headers={"Origin": server.url}).status_code == 404


def test_non_loopback_bind_without_token_refuses(aletheia_home: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "aletheia", "serve", "--host", "0.0.0.0",
                           "--port", "0"], env=server_env(aletheia_home), capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode != 0
    assert "needs a token" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "aletheia", "serve", "--host", "0.0.0.0",
                           "--no-auth", "--port", "0"], env=server_env(aletheia_home),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "refused off loopback" in proc.stderr


def test_api_key_env_overrides(aletheia_home: Path) -> None:
    key = "k" * 32
    with running_server(aletheia_home, env=server_env(aletheia_home, ALETHEIA_API_KEY=key)) as srv:
        assert srv.token == key
        with srv.client() as c:
            assert c.get("/v1/health").status_code == 200
    assert not (aletheia_home / "keys" / "api-token").exists()


def test_token_file_is_private(server: Server, aletheia_home: Path) -> None:
    path = aletheia_home / "keys" / "api-token"
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.read_text().strip() == server.token and len(server.token) >= 32


def test_fake_secret_absent_from_database_bytes_on_every_write_path(
    server: Server, aletheia_home: Path
) -> None:
    rng = random.Random(5)
    secrets = {path: fake_github_token(rng) for path in (
        "event", "memory", "edit", "dashboard", "bundle", "mcp", "rule")}
    with server.client() as c:
        ev = c.post("/v1/events", json={
            "host": "claude-code", "event": "UserPromptSubmit", "project": "leak-demo",
            "payload": {"session_id": "s-leak", "prompt": f"deploy with GITHUB_TOKEN={secrets['event']}"},
        })
        assert ev.json()["inserted"] is True, ev.text
        mid = c.post("/v1/memories", json={"title": "t", "narrative": f"key {secrets['memory']}",
                                           "project": "leak-demo"}).json()["id"]
        c.patch(f"/v1/memories/{mid}", json={"narrative": f"now {secrets['edit']}"})
        c.post("/v1/rules", json={"text": f"use token {secrets['rule']}"})
        bundle = "\n".join(json.dumps(r) for r in [
            {"type": "header", "format": "aletheia-bundle", "version": 1},
            {"type": "memory", "id": "01BUNDLEDMEMORY0000000000A", "project": "leak-demo",
             "kind": "note", "title": "from elsewhere", "narrative": f"pw {secrets['bundle']}",
             "created_at": 1_700_000_000_000},
        ])
        report = c.post("/v1/bundles/import", content=bundle.encode(),
                        headers={"content-type": "application/x-ndjson"}).json()
        assert report["added"]["memory"] == 1
    with httpx.Client(base_url=server.url) as browser:
        browser.post("/login", data={"token": server.token}, headers={"Origin": server.url})
        # The dashboard's note box posts exactly this, with its cookie.
        note = browser.post("/v1/memories", headers={"Origin": server.url}, json={
            "title": "note", "narrative": f"dashboard {secrets['dashboard']}",
            "project": "leak-demo", "kind": "note"})
        assert note.status_code == 201
    saved = _mcp_http(server, [("save_memory", {"text": f"mcp {secrets['mcp']}",
                                                "project": "leak-demo"})])
    assert saved[1].is_error is False
    with server.client() as c:
        texts = json.dumps(c.get("/v1/memories", params={"limit": 50}).json())
    assert texts.count("[redacted") >= 5
    blob = b"".join(p.read_bytes() for p in aletheia_home.glob("hub.db*"))
    for path, secret in secrets.items():
        assert secret.encode() not in blob, f"{path}: secret reached the database"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("runner", ["honcho", "aletheia-up"])
def test_honcho_start_web_and_worker(aletheia_home: Path, tmp_path: Path, runner: str) -> None:
    """`honcho start` with the Procfile (a checkout) and `aletheia up` (an install, what
    scripts/install runs): events posted to the server, the worker compresses the session,
    and the facts it extracted are found through REST."""
    import os
    import signal
    import time

    from tests import sessions

    port = _free_port()
    bin_dir = Path(sys.executable).parent
    env = server_env(aletheia_home, ALETHEIA_PORT=str(port), PYTHONUNBUFFERED="1",
                     PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    log = tmp_path / "honcho.log"
    with open(log, "wb") as out:
        command = ([str(bin_dir / "honcho"), "-f", str(REPO / "Procfile"), "-d", str(REPO),
                    "start"] if runner == "honcho" else [sys.executable, "-m", "aletheia", "up"])
        honcho = subprocess.Popen(command, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 60
            token = None
            while time.monotonic() < deadline:
                path = aletheia_home / "keys" / "api-token"
                if path.exists():
                    token = path.read_text().strip()
                    try:
                        if httpx.get(f"{url}/v1/health", timeout=2,
                                     headers={"Authorization": f"Bearer {token}"}).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                time.sleep(0.2)
            else:
                raise AssertionError("server did not come up:\n" + log.read_text())
            root = str(tmp_path / "textkit")
            secret = sessions.fake_token(3)
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"},
                              timeout=30) as c:
                for name, payload in sessions.events(root, "sess-honcho", secret):
                    r = c.post("/v1/events", json={"host": "claude-code", "event": name,
                                                   "payload": payload, "project": "textkit"})
                    assert r.status_code == 200, r.text
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    done = c.get("/v1/jobs", params={"state": "done"}).json()["items"]
                    if any(j["session_id"] == "sess-honcho" for j in done):
                        break
                    time.sleep(0.3)
                else:
                    raise AssertionError("the worker did not compress the session:\n"
                                         + log.read_text())
                hits = c.get("/v1/search", params={"q": "types-PyYAML stubs",
                                                   "project": "textkit"}).json()["items"]
                # (facts and memories are one ranking: the fact is on the first page)
                assert any(h["type"] == "fact" and "types-PyYAML" in h["title"]
                           for h in hits[:5]), hits
                facts = c.get("/v1/facts", params={"project": "textkit"}).json()["items"]
                assert facts and all(secret not in f["text"] for f in facts)
                session = c.get("/v1/sessions/sess-honcho").json()
                assert session["job_state"] == "done"
        finally:
            if honcho.poll() is None:
                os.killpg(honcho.pid, signal.SIGTERM)
                try:
                    honcho.wait(30)
                except subprocess.TimeoutExpired:
                    os.killpg(honcho.pid, signal.SIGKILL)
                    honcho.wait(10)
    text = log.read_text()
    assert "web" in text and "worker" in text


def test_access_log_carries_no_query_strings(server: Server) -> None:
    # A user searches for a pasted secret: the request is logged, the query is not.
    rng = random.Random(17)
    secret = "sk-proj-" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))
    with server.client() as c:
        assert c.get("/v1/search", params={"q": secret}).status_code == 200
        assert c.get("/v1/memories", params={"project": secret}).status_code == 200
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and sum("/v1/memories" in line for line in server.log) < 1:
        time.sleep(0.05)
    log = "".join(server.log)
    assert "GET /v1/search HTTP/1.1" in log and "GET /v1/memories HTTP/1.1" in log
    assert secret not in log and secret[:12] not in log and "?q=" not in log
