"""Serving the app so that it stays up: uvicorn with a guarded HTTP protocol.

Any local process can open connections and never finish a request.  Uvicorn has no deadline
for a request's head, so 1,100 half-sent requests used to exhaust the file limit and take the
server down.  Here:

- the soft file limit is raised to the hard one at start (``raise_file_limit``);
- a request's head must arrive within ``HEAD_TIMEOUT_S`` of its first byte (or of the
  connection), and a body must keep coming (``BODY_IDLE_S`` between pieces): otherwise the
  client gets a JSON 408 and the connection is closed;
- open connections are capped below the file limit; past the cap the oldest connections with
  no request in progress (half-sent heads, idle keep-alives) are closed first, so a new client
  is always served;
- requests in progress are capped too (``InFlightLimit``: a JSON 503 with Retry-After beyond it);
- a request h11 cannot parse gets a JSON 400, like every other error.
"""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import resource
import time
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from aletheia.web.security import ASGIApp, Receive, Scope, Send, send_error

log = logging.getLogger("aletheia.web")

HEAD_TIMEOUT_S = 10.0
BODY_IDLE_S = 30.0
KEEP_ALIVE_S = 5
# asyncio accepts up to ``backlog`` connections per wake-up, and a few wake-ups' worth can be
# open before ``connection_made`` (where the cap sheds) and the closes it asks for have run.
# Kept small (uvicorn's default is 2048), and room for four bursts is kept below the file
# limit, so a flood of connections can never run the process out of descriptors.
BACKLOG = 64
# File descriptors kept for everything that is not a client: SQLite (three per thread's
# connection: db, -wal, -shm), the thread pool, logs, the listening socket, queue.db, and the
# bursts above.
RESERVED_FDS = 192 + 4 * BACKLOG
MIN_CONNECTIONS = 64
MAX_IN_FLIGHT = 64
# RLIM_INFINITY as a hard limit: raise the soft one to this much, not to "unlimited".
_FILE_LIMIT_CEILING = 1 << 20


def raise_file_limit() -> tuple[int, int]:
    """Raise the soft RLIMIT_NOFILE to the hard limit; return (before, after)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, _FILE_LIMIT_CEILING)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError) as exc:
            log.warning("could not raise the open-file limit from %s: %s", soft, exc)
            return soft, soft
        return soft, target
    return soft, soft


def connection_cap() -> int:
    """How many client connections the file limit leaves room for."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = _FILE_LIMIT_CEILING
    return max(MIN_CONNECTIONS, soft - RESERVED_FDS)


class GuardedH11Protocol(H11Protocol):
    """Uvicorn's h11 protocol with deadlines for slow heads and bodies, a connection cap that
    sheds idle connections first, and JSON for the errors it answers itself."""

    cap: int = 0  # set by ``serve`` (0: computed from the file limit on first use)
    shed = 0  # connections closed to make room (a figure for tests and logs)
    timed_out = 0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._opened = time.monotonic()
        self._deadline: asyncio.TimerHandle | None = None

    # -- connections ---------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm(HEAD_TIMEOUT_S)
        self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _idle(self) -> bool:
        """No request in progress: a head not yet complete, or a keep-alive between requests."""
        return self.conn.their_state is h11.IDLE and (
            self.cycle is None or self.cycle.response_complete)

    def _make_room(self) -> None:
        cap = type(self).cap or connection_cap()
        excess = len(self.connections) - cap
        if excess <= 0:
            return
        others = [c for c in self.connections if c is not self and isinstance(c, GuardedH11Protocol)]
        idle = sorted((c for c in others if c._idle()), key=lambda c: c._opened)
        for victim in idle[:excess]:
            victim._close_quietly()
            type(self).shed += 1
        if excess > len(idle):
            # Every other connection is busy with a request: this one waits its turn elsewhere.
            self._reply(503, "the server is at its connection limit; retry shortly",
                        [(b"retry-after", b"1")])
            type(self).shed += 1

    def _close_quietly(self) -> None:
        self._disarm()
        if not self.transport.is_closing():
            self.transport.close()

    # -- deadlines ----------------------------------------------------------------------------

    def _arm(self, seconds: float) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(seconds, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        type(self).timed_out += 1
        if self.conn.our_state in (h11.IDLE, h11.SEND_RESPONSE) and (
                self.cycle is None or not self.cycle.response_started):
            self._reply(408, "the request did not arrive in time")
        else:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            if self._deadline is None and self.conn.trailing_data[0]:
                self._arm(HEAD_TIMEOUT_S)  # the first bytes of the next head
        elif state is h11.SEND_BODY:
            self._arm(BODY_IDLE_S)
        else:
            self._disarm()  # the request is in: the app has it (and keep-alive takes over)

    def on_response_complete(self) -> None:
        self._disarm()
        super().on_response_complete()

    # -- answers --------------------------------------------------------------------------------

    def send_400_response(self, msg: str) -> None:
        self._reply(400, f"invalid HTTP request ({msg.rstrip('.').lower()})")

    def _reply(self, status: int, message: str,
               headers: list[tuple[bytes, bytes]] | None = None) -> None:
        """A JSON error, then close (for answers given before or instead of the app)."""
        self._disarm()
        body = json.dumps({"status": status, "message": message}).encode()
        head = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"), *(headers or [])]
        try:
            if self.conn.our_state is h11.ERROR or self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
                raise h11.LocalProtocolError("cannot answer now")
            out = self.conn.send(h11.Response(status_code=status, headers=head,
                                              reason=_PHRASES.get(status, b"")))
            out += self.conn.send(h11.Data(data=body)) or b""
            out += self.conn.send(h11.EndOfMessage()) or b""
            self.transport.write(out)
        except h11.LocalProtocolError:
            # h11 will not answer in this state (e.g. it failed to parse): write it raw.
            lines = [f"HTTP/1.1 {status} {_PHRASES.get(status, b'').decode()}".encode()]
            lines += [name + b": " + value for name, value in head]
            self.transport.write(b"\r\n".join(lines) + b"\r\n\r\n" + body)
        self.transport.close()


_PHRASES = {400: b"Bad Request", 408: b"Request Timeout", 503: b"Service Unavailable"}


class InFlightLimit:
    """At most ``limit`` requests in progress; beyond it a JSON 503 with Retry-After (so a
    flood of real requests slows callers down instead of queueing without bound)."""

    def __init__(self, app: ASGIApp, *, limit: int = MAX_IN_FLIGHT) -> None:
        self.app = app
        self.limit = limit
        self.active = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.active >= self.limit:
            await send_error(send, 503, "the server is busy; retry shortly",
                             [(b"retry-after", b"1")])
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1


def quiet_resource_errors(loop: asyncio.AbstractEventLoop) -> None:
    """Log running out of descriptors or memory in one line, without a traceback: formatting
    one (a rich handler imports modules to do it) needs the very files that ran out, and a
    failure inside the loop's exception handler would stop the server."""
    default = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if isinstance(exc, OSError) and exc.errno in _RESOURCE_ERRNOS:
            try:
                log.warning("%s: %s (the server goes on)", context.get("message", "error"), exc)
            except Exception:
                pass
            return
        if default is not None:
            default(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)


_RESOURCE_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
