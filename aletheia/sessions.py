"""Sessions: one host session's events, newest first, with what each one asked and how far it got."""

from __future__ import annotations

import sqlite3
from typing import Any

from aletheia import filters, ids, pages
from aletheia.errors import NotFound

_COLUMNS = (
    "s.id, s.project, s.tool, s.started_at, s.last_event_at, s.ended_at, s.first_request, "
    "s.summary_memory_id, s.event_count"
)
# The latest job for the session says whether it was compressed (done), is waiting, or died.
_JOB_STATE = (
    "(SELECT j.state FROM job j WHERE j.session_id = s.id ORDER BY j.created_at DESC, j.id DESC "
    "LIMIT 1) AS job_state"
)


def _row(r: sqlite3.Row) -> dict[str, Any]:
    out = dict(r)
    out["started"] = ids.iso(out["started_at"])
    out["ended"] = ids.iso(out["ended_at"]) if out["ended_at"] else None
    return out


def list_sessions(
    conn: sqlite3.Connection, *, project: str | None = None, tool: str | None = None,
    limit: int = pages.DEFAULT_LIMIT, cursor: str | None = None,
) -> pages.Page:
    """Sessions by last activity, newest first (a session has no scope: ``project`` is its
    project's sessions)."""
    pages.check_limit(limit)
    where = filters.Where("s").equal("tool", tool).project(project, scoped=False)
    where.before(cursor, "last_event_at")
    rows = conn.execute(
        f"SELECT {_COLUMNS}, {_JOB_STATE} FROM session s{where.sql()} "
        "ORDER BY s.last_event_at DESC, s.id DESC LIMIT ?",
        (*where.params, limit + 1),
    ).fetchall()
    return pages.page([_row(r) for r in rows], limit, "last_event_at", "id")


def get_session(conn: sqlite3.Connection, session_id: str) -> dict[str, Any]:
    r = conn.execute(
        f"SELECT {_COLUMNS}, {_JOB_STATE} FROM session s WHERE s.id = ?", (session_id,)
    ).fetchone()
    if r is None:
        raise NotFound(f"no session with id {session_id}")
    out = _row(r)
    out["memories"] = conn.execute(
        "SELECT count(*) FROM memory WHERE session_id = ?", (session_id,)
    ).fetchone()[0]
    return out
