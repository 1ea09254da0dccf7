"""The guard (Host allow-list, Origin check, token, cookie, body limits) and the token file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from aletheia.web import security
from aletheia.web.app import create_app

TOKEN = "s" * 40
BASE = "http://127.0.0.1:8377"
ORIGIN = BASE


@pytest.fixture
def client(aletheia_home: Path) -> Iterator[TestClient]:
    with TestClient(create_app(token=TOKEN, mcp=False), base_url=BASE) as c:
        yield c


def _auth(**extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}", **extra}


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8377", "127.0.0.1.evil.example",
                                  "localhost.evil", "[::2]:8377", ""])
def test_foreign_host_names_are_refused(client: TestClient, host: str) -> None:
    r = client.get("/v1/health", headers=_auth(Host=host))
    assert r.status_code == 421 and r.json()["status"] == 421
    assert client.get("/", headers={"Host": host}).status_code == 421


@pytest.mark.parametrize("host", ["127.0.0.1:8377", "localhost:8377", "LOCALHOST", "[::1]:8377"])
def test_loopback_names_are_served(client: TestClient, host: str) -> None:
    assert client.get("/v1/health", headers=_auth(Host=host)).status_code == 200


def test_state_changing_requests_need_our_own_origin(client: TestClient) -> None:
    body = {"title": "t", "narrative": "n", "project": "p"}
    for origin in ("http://evil.example", "http://127.0.0.1:9999", "null", "https://127.0.0.1:8377"):
        r = client.post("/v1/memories", json=body, headers=_auth(Origin=origin))
        assert r.status_code == 403, origin
    assert client.post("/v1/memories", json=body,
                       headers=_auth(**{"Sec-Fetch-Site": "cross-site"})).status_code == 403
    assert client.post("/v1/memories", json=body, headers=_auth(Origin=ORIGIN)).status_code == 201
    # No Origin at all: a non-browser client (curl, an agent); the token is what counts.
    assert client.post("/v1/memories", json=body | {"title": "u"}, headers=_auth()).status_code == 201
    # Reads may come from anywhere that holds the token (a cross-origin page cannot read them:
    # no CORS headers are ever sent).
    read = client.get("/v1/stats", headers=_auth(Origin="http://evil.example"))
    assert read.status_code == 200 and "access-control-allow-origin" not in read.headers


def test_token_is_required_and_compared_exactly(client: TestClient) -> None:
    assert client.get("/v1/stats").status_code == 401
    assert client.get("/v1/stats", headers={"Authorization": f"Bearer {TOKEN}x"}).status_code == 401
    assert client.get("/v1/stats", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401
    assert client.get("/v1/stats", headers={"Authorization": f"bearer {TOKEN}"}).status_code == 200
    assert client.get("/v1/doctor").status_code == 401
    assert client.post("/mcp", json={}).status_code == 401
    assert client.get("/v1/openapi.json").status_code == 200
    r = client.get("/v1/stats")
    assert r.headers["www-authenticate"].startswith("Bearer")
    # The health check holds no data: a monitor (or honcho) needs no token for it.
    health = client.get("/v1/health")
    assert health.status_code == 200 and set(health.json()) == {"status", "version", "schema_version"}


def test_dashboard_session_cookie(client: TestClient) -> None:
    page = client.get("/")
    assert 'name="token"' in page.text and TOKEN not in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'self'")
    bad = client.post("/login", data={"token": "wrong"}, headers={"Origin": ORIGIN})
    assert bad.status_code == 401
    cross = client.post("/login", data={"token": TOKEN}, headers={"Origin": "http://evil.example"})
    assert cross.status_code == 403
    ok = client.post("/login", data={"token": TOKEN}, headers={"Origin": ORIGIN},
                     follow_redirects=False)
    assert ok.status_code == 303
    cookie = ok.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert TOKEN not in cookie and security.session_value(TOKEN) in cookie
    assert "id=\"search-form\"" in client.get("/").text
    assert client.get("/v1/stats").status_code == 200
    # Writes with the cookie must carry our Origin.
    assert client.post("/v1/pins", json={"id": "x"}).status_code == 403
    assert client.post("/v1/pins", json={"id": "x"}, headers={"Origin": ORIGIN}).status_code == 404
    client.post("/logout", headers={"Origin": ORIGIN})
    assert client.get("/v1/stats").status_code == 401


def test_no_auth_mode_keeps_host_and_origin_checks(aletheia_home: Path) -> None:
    with TestClient(create_app(token=None, mcp=False), base_url=BASE) as c:
        assert c.get("/v1/health").status_code == 200
        assert c.get("/v1/health", headers={"Host": "evil.example"}).status_code == 421
        assert c.post("/v1/pins", json={"id": "x"},
                      headers={"Origin": "http://evil.example"}).status_code == 403


def test_token_file_created_private_once(aletheia_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = security.ensure_token()
    path = aletheia_home / "keys" / "api-token"
    assert path.stat().st_mode & 0o777 == 0o600
    assert (aletheia_home / "keys").stat().st_mode & 0o777 == 0o700
    assert len(first) >= 40 and security.ensure_token() == first
    rotated = security.rotate_token()
    assert rotated != first and security.stored_token() == rotated
    assert path.stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("ALETHEIA_API_KEY", "from-the-environment-1234")
    assert security.ensure_token() == "from-the-environment-1234"


def test_startup_check_and_host_names() -> None:
    security.startup_check("127.0.0.1", None)
    security.startup_check("::1", None)
    security.startup_check("localhost", None)
    with pytest.raises(security.StartupRefused, match="needs a token"):
        security.startup_check("0.0.0.0", None)
    with pytest.raises(security.StartupRefused, match="shorter"):
        security.startup_check("192.0.2.7", "short")
    security.startup_check("192.0.2.7", "x" * 32)
    hosts = security.allowed_hosts("192.0.2.7", ["box.lan"], env={"ALETHEIA_ALLOWED_HOSTS": "a.b, c.d"})
    assert {"127.0.0.1", "localhost", "::1", "192.0.2.7", "box.lan", "a.b", "c.d"} <= hosts
    assert "0.0.0.0" not in security.allowed_hosts("0.0.0.0", env={})
    assert security.host_name("[::1]:8377") == "::1"
    assert security.host_name("LocalHost:80") == "localhost"
    assert security.host_name("127.0.0.1") == "127.0.0.1"
