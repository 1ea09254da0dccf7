"""Sessions: one host session's events, newest first, with what each one asked and how far it got."""

from __future__ import annotations

import sqlite3
from typing import Any

from aletheia import filters, pages, shapes
from aletheia.errors import NotFound


def list_sessions(
    conn: sqlite3.Connection, *, project: str | None = None, tool: str | None = None,
    limit: int = pages.DEFAULT_LIMIT, cursor: str | None = None,
) -> pages.Page:
    """Sessions by last activity, newest first (a session has no scope: ``project`` is its
    project's sessions)."""
    pages.check_limit(limit)
    where = filters.Where("s").equal("tool", tool).project(project, scoped=False)
    return where.page(conn, f"SELECT {shapes.SESSION_COLUMNS} FROM session s", limit, cursor,
                      shapes.session, time_column="last_event_at")


def get_session(conn: sqlite3.Connection, session_id: str) -> dict[str, Any]:
    r = conn.execute(
        f"SELECT {shapes.SESSION_COLUMNS} FROM session s WHERE s.id = ?", (session_id,)
    ).fetchone()
    if r is None:
        raise NotFound(f"no session with id {session_id}")
    out: dict[str, Any] = dict(shapes.session(r))
    out["memories"] = conn.execute(
        "SELECT count(*) FROM memory WHERE session_id = ?", (session_id,)
    ).fetchone()[0]
    return out
