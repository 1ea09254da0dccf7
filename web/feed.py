"""GET /v1/feed: new memories and session activity as server-sent events (the dashboard's live
feed).  The store is polled once a second on a worker thread (hooks write from other
processes, so there is nothing in this one to subscribe to); ``Last-Event-ID`` resumes where a
dropped connection stopped.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from aletheia import activity
from aletheia.errors import InvalidInput
from aletheia.web.connections import Connections

POLL_S = 1.0
PING_S = 15.0


def _cursor(value: str | None) -> dict[str, int] | None:
    """``Last-Event-ID`` is ``<memory rowid>-<session activity ms>``."""
    if not value:
        return None
    try:
        mem, ses = (int(p) for p in value.split("-", 1))
    except ValueError:
        return None
    return {"memory": max(0, mem), "session": max(0, ses)}


def _event(kind: str, data: Any, cursor: dict[str, int]) -> str:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {kind}\nid: {cursor['memory']}-{cursor['session']}\ndata: {text}\n\n"


def routes(conns: Connections) -> list[BaseRoute]:
    async def feed(request: Request) -> Response:
        project = request.query_params.get("project") or None
        if project is not None and len(project) > 1000:
            raise InvalidInput("project: at most 1000 characters")
        start = _cursor(request.headers.get("last-event-id"))
        if start is None:
            start = await anyio.to_thread.run_sync(lambda: activity.latest_cursor(conns.get()))
        cursor: dict[str, int] = start

        def poll(after: dict[str, int]) -> tuple[list[Any], list[Any], dict[str, int]]:
            # On the worker thread, with that thread's connection.
            return activity.changes_since(conns.get(), after, project)

        async def stream() -> AsyncIterator[str]:
            nonlocal cursor
            yield "retry: 2000\n\n"
            yield _event("ready", {"project": project}, cursor)
            idle = 0.0
            while not await request.is_disconnected():
                mems, sessions, cursor = await anyio.to_thread.run_sync(poll, cursor)
                for m in mems:
                    yield _event("memory", m, cursor)
                for s in sessions:
                    yield _event("session", s, cursor)
                idle = 0.0 if (mems or sessions) else idle + POLL_S
                if idle >= PING_S:
                    idle = 0.0
                    yield ": ping\n\n"
                await anyio.sleep(POLL_S)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"cache-control": "no-store", "x-accel-buffering": "no"})

    return [Route("/v1/feed", endpoint=feed, methods=["GET"])]
