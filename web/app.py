"""The Starlette app factory: REST /v1, MCP at /mcp and the dashboard at /, behind one Guard.

SQLite connections are per thread (``web/connections.py``), closed when the app shuts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from aletheia.errors import AletheiaError
from aletheia.web import security
from aletheia.web.connections import Connections
from aletheia.web.json_errors import JSONErrors
from aletheia.web.serving import InFlightLimit, quiet_resource_errors

log = logging.getLogger("aletheia.web")


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse({"status": status, "message": message}, status_code=status,
                        headers=headers)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    message = exc.detail if isinstance(exc.detail, str) and exc.detail else "error"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no such endpoint: {request.url.path}"
    elif exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path}"
    return error_response(exc.status_code, message, dict(exc.headers or {}))


async def _aletheia_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AletheiaError)
    return error_response(exc.status, exc.message)


async def _too_large(request: Request, exc: Exception) -> Response:
    return error_response(413, str(exc))


async def _crash(request: Request, exc: Exception) -> Response:
    # Logged with its traceback for the operator; the client gets a status and a message only.
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return error_response(503, "the database is busy; retry shortly", {"retry-after": "1"})
    if isinstance(exc, (OverflowError, RecursionError)):
        # A backstop: numbers are range-checked at the edge; one that slipped through is
        # still bad input, not a server error.
        return error_response(400, f"a value is out of range: {exc}")
    return error_response(500, "internal error (see the server log)")


def create_app(
    *,
    token: str | None,
    bind_host: str = "127.0.0.1",
    extra_hosts: Iterable[str] = (),
    db_path: Path | None = None,
    mcp: bool = True,
    dashboard: bool = True,
) -> Starlette:
    """Build the app.  ``token=None`` switches authentication off (loopback only: the CLI
    refuses it elsewhere); Host and Origin checks stay on regardless."""
    from aletheia.web import rest

    conns = Connections(db_path)
    hosts = security.allowed_hosts(bind_host, extra_hosts)
    from aletheia.web import feed

    routes: list[BaseRoute] = [*rest.routes(conns), *feed.routes(conns)]
    mcp_server: Any = None
    if mcp:
        from aletheia.web.mcp_server import build_server, http_endpoint

        mcp_server = build_server(conns.get, default_project=None)
        routes.append(Route("/mcp", endpoint=http_endpoint(mcp_server, hosts),
                            methods=["GET", "POST", "DELETE"]))
    if dashboard:
        from aletheia.web import dashboard as dash

        routes.extend(dash.routes(token))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        quiet_resource_errors(asyncio.get_running_loop())
        try:
            if mcp_server is not None:
                # Starlette does not run a mounted app's lifespan: enter the MCP session
                # manager here or every /mcp request fails.
                async with mcp_server.session_manager.run():
                    yield
            else:
                yield
        finally:
            conns.close_all()

    handlers: dict[Any, Callable[[Request, Exception], Any]] = {
        HTTPException: _http_error,
        AletheiaError: _aletheia_error,
        security.BodyTooLarge: _too_large,
        Exception: _crash,
    }
    app = Starlette(
        routes=routes,
        # Outermost first: every error body JSON; a bound on requests in progress; then the
        # Host/Origin/token/size checks.
        middleware=[Middleware(JSONErrors), Middleware(InFlightLimit),
                    Middleware(security.Guard, token=token, hosts=hosts)],
        exception_handlers=handlers,
        lifespan=lifespan,
    )
    app.state.connections = conns
    app.state.token = token
    app.state.hosts = hosts
    return app
