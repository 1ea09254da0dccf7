"""A server that stays up: a real ``aletheia serve`` under a real flood of half-sent requests,
a low file limit, garbage on the wire and slow clients — counted, never timed."""

from __future__ import annotations

import asyncio
import json
import resource
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from aletheia.web import serving
from tests.webproc import Server, running_server, server_env

FLOOD = 2000


def _limit(soft: int, hard: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return apply


@contextmanager
def server_with_file_limit(home: Path, soft: int, hard: int) -> Iterator[Server]:
    """``aletheia serve`` started with this RLIMIT_NOFILE (as a login shell might give it)."""
    env = server_env(home)
    with running_server(home, "--no-access-log", env=env, preexec_fn=_limit(soft, hard)) as srv:
        yield srv


def _room_for_the_flood() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = FLOOD + 200
    if hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip(f"this process may open {hard} files; the flood needs {need}")
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536, hard))


def _half_open(port: int, n: int) -> list[socket.socket]:
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=60)
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the head never ends
        socks.append(s)
    return socks


def _closed_by_server(socks: list[socket.socket]) -> tuple[int, int]:
    """(closed with no answer: shed to make room, closed with a JSON 408: too slow)."""
    shed = timed_out = 0
    for s in socks:
        s.setblocking(False)
        try:
            data = s.recv(4096)
        except BlockingIOError:
            continue
        except OSError:
            shed += 1
            continue
        if not data:
            shed += 1
        elif b" 408 " in data.split(b"\r\n", 1)[0]:
            timed_out += 1
    return shed, timed_out


@pytest.mark.slow
def test_2000_half_open_connections_then_a_request_is_answered(aletheia_home: Path) -> None:
    _room_for_the_flood()
    # 1024 open files, no way up: the flood is twice what the process may hold.
    with server_with_file_limit(aletheia_home, 1024, 1024) as srv:
        socks = _half_open(srv.port, FLOOD)
        try:
            with srv.client() as c:
                health = c.get("/v1/health")
                stats = c.get("/v1/stats")
            shed, timed_out = _closed_by_server(socks)
        finally:
            for s in socks:
                s.close()
        alive = srv.proc.poll() is None
    cap = 1024 - serving.RESERVED_FDS
    print(f"flood: {FLOOD} half-open connections at a 1024-file limit (cap {cap}): "
          f"{shed} shed, {timed_out} timed out (408), then GET /v1/health → {health.status_code}, "
          f"GET /v1/stats → {stats.status_code}; server alive: {alive}")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert stats.status_code == 200 and "memories" in stats.json()
    assert alive
    # Every connection beyond the cap was closed by the server, none by running out of files.
    assert shed + timed_out >= FLOOD - cap
    assert "Too many open files" not in "".join(srv.log)


@pytest.mark.slow
def test_the_soft_file_limit_is_raised_to_the_hard_one(aletheia_home: Path) -> None:
    _room_for_the_flood()
    with server_with_file_limit(aletheia_home, 1024, 4096) as srv:
        limits = Path(f"/proc/{srv.proc.pid}/limits").read_text()
        line = next(x for x in limits.splitlines() if x.startswith("Max open files"))
        assert line.split()[3:5] == ["4096", "4096"], line
        assert "open files 1024 → 4096" in "".join(srv.log)
        socks = _half_open(srv.port, FLOOD)  # now within the limit: nobody needs to be shed
        try:
            with srv.client() as c:
                assert c.get("/v1/stats").status_code == 200
            shed, _ = _closed_by_server(socks)
        finally:
            for s in socks:
                s.close()
    assert shed == 0


@pytest.fixture(scope="module")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("serve-home")
    with running_server(home, "--no-access-log") as srv:
        yield srv


def _raw(port: int, data: bytes, *, wait_s: float = 60) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=wait_s) as s:
        s.sendall(data)
        chunks = []
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def _json_error(raw: bytes) -> tuple[int, dict[str, object], str]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    ctype = next((line.split(b":", 1)[1].strip().decode() for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-type:")), "")
    return status, json.loads(body), ctype


@pytest.mark.slow
@pytest.mark.parametrize("garbage", [
    b"NOT HTTP AT ALL\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header Line\r\n\r\n",
    b"GET /v1/health HTTP/1.1\r\n\r\n",  # HTTP/1.1 without a Host header
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(range(32)),  # a TLS hello
])
def test_what_the_http_parser_refuses_is_a_json_400(shared_server: Server, garbage: bytes) -> None:
    status, body, ctype = _json_error(_raw(shared_server.port, garbage))
    assert (status, ctype, body["status"]) == (400, "application/json", 400)
    assert "invalid HTTP request" in str(body["message"])


@pytest.mark.slow
def test_a_request_whose_head_never_ends_gets_a_json_408(shared_server: Server) -> None:
    raw = _raw(shared_server.port, b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    status, body, ctype = _json_error(raw)
    assert (status, ctype, body["status"]) == (408, "application/json", 408)


@pytest.mark.slow
def test_a_body_that_stops_coming_gets_a_json_408(shared_server: Server) -> None:
    raw = _raw(shared_server.port, (
        b"POST /v1/memories HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Authorization: Bearer " + shared_server.token.encode() + b"\r\n"
        b"Content-Length: 100\r\n\r\n{\"title\": "))
    status, body, _ = _json_error(raw)
    assert status == 408 and body["status"] == 408


@pytest.mark.slow
def test_mcp_with_a_foreign_origin_answers_json(shared_server: Server) -> None:
    with shared_server.client() as c:
        for method in ("GET", "POST", "DELETE"):
            r = c.request(method, "/mcp", headers={"Origin": "http://evil.example",
                                                   "Accept": "application/json, text/event-stream"})
            assert r.status_code in (403, 405), (method, r.status_code, r.text)
            assert r.headers["content-type"].startswith("application/json"), (method, r.text)
            assert r.json()["status"] == r.status_code


def test_requests_beyond_the_in_flight_limit_get_a_json_503() -> None:
    started = asyncio.Event()
    release = asyncio.Event()

    async def slow_app(scope: dict[str, object], receive: object, send: Callable[..., object]) -> None:
        started.set()
        await release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})  # type: ignore[operator]
        await send({"type": "http.response.body", "body": b"ok"})  # type: ignore[operator]

    guard = serving.InFlightLimit(slow_app, limit=1)  # type: ignore[arg-type]
    sent: list[list[dict[str, object]]] = [[], []]

    async def call(i: int) -> None:
        async def send(message: dict[str, object]) -> None:
            sent[i].append(message)

        async def receive() -> dict[str, object]:
            return {"type": "http.request", "body": b""}

        await guard({"type": "http", "path": "/v1/stats"}, receive, send)  # type: ignore[arg-type]

    async def main() -> None:
        first = asyncio.create_task(call(0))
        await started.wait()
        await call(1)  # refused at once, while the first is in progress
        release.set()
        await first

    asyncio.run(main())
    assert sent[0][0]["status"] == 200
    assert sent[1][0]["status"] == 503
    assert json.loads(sent[1][1]["body"])["status"] == 503  # type: ignore[arg-type]
    assert guard.active == 0


def test_error_bodies_from_inside_the_app_are_json() -> None:
    from starlette.testclient import TestClient

    from aletheia.web.app import create_app

    token = "t" * 32
    with TestClient(create_app(token=token), base_url="http://127.0.0.1") as client:
        auth = {"Authorization": f"Bearer {token}"}
        for method, path in (("GET", "/nope"), ("PUT", "/v1/stats"), ("GET", "/static/nope.js"),
                             ("POST", "/v1/jobs/99999999999999999999/retry"),
                             ("GET", "/v1/memories/x/y")):
            r = client.request(method, path, headers=auth)
            assert 400 <= r.status_code < 500, (method, path, r.status_code)
            assert r.headers["content-type"] == "application/json", (method, path, r.text)
            assert r.json()["status"] == r.status_code
