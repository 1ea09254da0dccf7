"""What keeps the server safe on a shared machine: the local API token, the Host allow-list
(DNS rebinding), the Origin check on state-changing requests, and body size limits.

``Guard`` is plain ASGI and runs before any route, for REST, MCP and the dashboard alike.
Token helpers are stdlib-only (the CLI prints and rotates the token without starlette).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from pathlib import Path
from typing import Any

from aletheia import config, paths

TOKEN_FILE = "api-token"
TOKEN_ENV = "ALETHEIA_API_KEY"
ALLOWED_HOSTS_ENV = "ALETHEIA_ALLOWED_HOSTS"
COOKIE = "aletheia_session"
MIN_TOKEN_CHARS = 16
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# Where a token is needed; everything else is the dashboard's shell (no data) or public docs.
PROTECTED = ("/v1/", "/mcp")
# The health check answers a monitor (or honcho) without a token: it holds no data.
PUBLIC = frozenset({"/v1/openapi.json", "/v1/health"})
DEFAULT_BODY_LIMIT = 1 << 20
BODY_LIMITS = (("/v1/bundles/import", 64 << 20), ("/v1/events", 4 << 20), ("/mcp", 4 << 20))

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class StartupRefused(Exception):
    """The server must not start with this configuration (said in one line)."""


# -- the token ---------------------------------------------------------------------------------

def token_path(env: Mapping[str, str] | None = None) -> Path:
    return paths.keys_dir(env) / TOKEN_FILE


def stored_token(env: Mapping[str, str] | None = None) -> str | None:
    """``ALETHEIA_API_KEY`` if set, else the token file's content, else None."""
    override = config.env(TOKEN_ENV, env)
    if override:
        return str(override)
    try:
        value = token_path(env).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    return value or None


def ensure_token(env: Mapping[str, str] | None = None) -> str:
    """The token in force, creating the file (0600, O_EXCL) on first start."""
    found = stored_token(env)
    if found:
        return found
    return rotate_token(env, exclusive=True)


def rotate_token(env: Mapping[str, str] | None = None, *, exclusive: bool = False) -> str:
    """Write a new random token (256 bits); with ``exclusive`` an existing file wins."""
    path = token_path(env)
    paths.ensure_dir(path.parent)
    token = secrets.token_urlsafe(32)
    tmp = path.with_name(f".{TOKEN_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)
    if exclusive:
        try:
            os.link(tmp, path)  # atomic "create if absent" that never exposes a partial file
        except FileExistsError:
            os.unlink(tmp)
            return token_path(env).read_text(encoding="utf-8").strip()
        os.unlink(tmp)
    else:
        os.replace(tmp, path)
    return token


def session_value(token: str) -> str:
    """The dashboard's cookie: derived from the token, so rotating the token signs everyone out,
    and the cookie never carries the token itself."""
    return hmac.new(token.encode(), b"aletheia dashboard session v1", hashlib.sha256).hexdigest()


def is_loopback(host: str) -> bool:
    if host in ("localhost",):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def startup_check(bind_host: str, token: str | None) -> None:
    """Off loopback a configured token is required (and a strong one)."""
    if is_loopback(bind_host):
        return
    if not token:
        raise StartupRefused(
            f"refusing to listen on {bind_host}: a non-loopback address needs a token "
            f"(set {TOKEN_ENV}, or create one with `aletheia token --rotate`)"
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise StartupRefused(
            f"refusing to listen on {bind_host}: the token is shorter than {MIN_TOKEN_CHARS} "
            "characters"
        )


def allowed_hosts(bind_host: str, extra: Iterable[str] = (),
                  env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Host names the server answers to: loopback names, the bind address (if it is a specific
    one) and ``ALETHEIA_ALLOWED_HOSTS`` (comma-separated)."""
    names = set(LOOPBACK_NAMES)
    if bind_host not in ("0.0.0.0", "::", ""):
        names.add(bind_host.strip("[]").lower())
    names.update(h.strip().lower() for h in extra if h.strip())
    names.update(h.lower() for h in config.env(ALLOWED_HOSTS_ENV, env))
    return frozenset(names)


def host_name(host_header: str) -> str:
    """``[::1]:8377`` → ``::1``; ``Localhost:80`` → ``localhost``."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


# -- the guard ---------------------------------------------------------------------------------

class BodyTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"request body is larger than {limit} bytes")
        self.limit = limit


async def send_error(send: Send, status: int, message: str,
                     headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps({"status": status, "message": message}).encode()
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()), *headers],
    })
    await send({"type": "http.response.body", "body": body})


def body_limit(path: str) -> int:
    for prefix, limit in BODY_LIMITS:
        if path.startswith(prefix):
            return limit
    return DEFAULT_BODY_LIMIT


class Guard:
    """Host allow-list on every request; for state-changing ones an Origin (if any) that is
    this server's own; the token (bearer header or dashboard cookie) under /v1 and /mcp; and
    request body limits."""

    def __init__(self, app: ASGIApp, *, token: str | None, hosts: frozenset[str]) -> None:
        self.app = app
        self.token = token
        self.session = session_value(token) if token else None
        self.hosts = hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        host = headers.get("host", "")
        if not host or host_name(host) not in self.hosts:
            await send_error(send, 421, "this server does not answer to that Host name")
            return
        method = scope["method"]
        state_changing = method not in SAFE_METHODS
        origin = headers.get("origin")
        if state_changing and origin is not None and not _same_origin(origin, scope, host):
            await send_error(send, 403, "cross-origin request refused")
            return
        if state_changing and headers.get("sec-fetch-site") in ("cross-site", "same-site"):
            await send_error(send, 403, "cross-site request refused")
            return
        path: str = scope["path"]
        if self.token is not None and path.startswith(PROTECTED) and path not in PUBLIC:
            how = self._authenticate(headers)
            if how is None:
                given = headers.get("authorization", "")
                message = ("that token is not the one in force (`aletheia token` prints it)"
                           if given.lower().startswith("bearer ") and given[7:].strip() else
                           "a token is required (Authorization: Bearer …; `aletheia token` "
                           "prints it)")
                await send_error(send, 401, message,
                                 [(b"www-authenticate", b'Bearer realm="aletheia"')])
                return
            # A cookie rides along automatically, so a write that uses one must prove it came
            # from our own page (browsers always send Origin on fetch and form posts).
            if how == "cookie" and state_changing and origin is None:
                await send_error(send, 403, "a cookie-authenticated write needs an Origin header")
                return
            # The dashboard signs in with the cookie, an agent or a script with the token.
            scope.setdefault("state", {})["auth"] = how
        scope.setdefault("state", {})
        limit = body_limit(path)
        length = headers.get("content-length")
        if length is not None:
            try:
                too_big = int(length) > limit
            except ValueError:
                await send_error(send, 400, "bad Content-Length")
                return
            if too_big:
                await send_error(send, 413, f"request body is larger than {limit} bytes")
                return
        await self.app(scope, _limited(receive, limit), send)

    def _authenticate(self, headers: dict[str, str]) -> str | None:
        assert self.token is not None and self.session is not None
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer " and hmac.compare_digest(
            auth[7:].strip().encode(), self.token.encode()
        ):
            return "bearer"
        cookie = _cookie(headers.get("cookie", ""), COOKIE)
        if cookie is not None and hmac.compare_digest(cookie.encode(), self.session.encode()):
            return "cookie"
        return None


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in scope.get("headers", []):
        name = key.decode("latin-1").lower()
        text = value.decode("latin-1")
        out[name] = f"{out[name]}; {text}" if name == "cookie" and name in out else text
    return out


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value.strip().strip('"')
    return None


def _same_origin(origin: str, scope: Scope, host: str) -> bool:
    scheme = scope.get("scheme", "http")
    return origin.strip().lower() == f"{scheme}://{host.strip().lower()}"


def _limited(receive: Receive, limit: int) -> Receive:
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise BodyTooLarge(limit)
        return message

    return wrapped
