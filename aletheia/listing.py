"""Paginated lists for browsing (REST, CLI, dashboard): memories with filters, pinned ones, facts.

Ranking by relevance is ``aletheia.search``; these lists are newest first and never skip a row.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from aletheia import pages
from aletheia.memories import COLUMNS, row_to_dict


def list_memories(
    conn: sqlite3.Connection, *, project: str | None = None, kind: str | None = None,
    tool: str | None = None, session_id: str | None = None, scope: str | None = None,
    pinned: bool | None = None, dismissed: bool | None = False,
    limit: int = pages.DEFAULT_LIMIT, cursor: str | None = None,
) -> pages.Page:
    """Memories newest first.  ``dismissed``: False hides dismissed ones, True lists only them,
    None lists both."""
    pages.check_limit(limit)
    where: list[str] = []
    params: list[Any] = []
    for column, value in (("project", project), ("kind", kind), ("tool", tool),
                          ("session_id", session_id), ("scope", scope)):
        if value is not None:
            where.append(f"{column} = ?")
            params.append(value)
    if pinned is not None:
        where.append("pinned = ?")
        params.append(int(pinned))
    if dismissed is not None:
        where.append("dismissed_at IS NOT NULL" if dismissed else "dismissed_at IS NULL")
    after = pages.decode(cursor, (int, str))
    if after is not None:
        where.append("(created_at < ? OR (created_at = ? AND id < ?))")
        params.extend([after[0], after[0], after[1]])
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT {COLUMNS} FROM memory {clause} ORDER BY created_at DESC, id DESC LIMIT ?",
        (*params, limit + 1),
    ).fetchall()
    return pages.page([row_to_dict(r) for r in rows], limit, "created_at", "id")


def list_facts(
    conn: sqlite3.Connection, *, project: str | None = None, status: str | None = "active",
    limit: int = pages.DEFAULT_LIMIT, cursor: str | None = None,
) -> pages.Page:
    """Facts newest first (the fact module's one query, with this module's page limits)."""
    from aletheia.facts import page_facts

    pages.check_limit(limit)
    return page_facts(conn, project=project, status=status, limit=limit, cursor=cursor,
                      max_limit=pages.MAX_LIMIT)


_JOB_COLUMNS = (
    "id, type, session_id, project, state, attempts, max_attempts, lease_owner, "
    "lease_expires_at, next_run_at, last_error, created_at, updated_at, finished_at, "
    "started_at, result"
)


def list_jobs(
    conn: sqlite3.Connection, *, state: str | None = None, limit: int = pages.DEFAULT_LIMIT,
    cursor: str | None = None,
) -> pages.Page:
    """The job table, newest first (``state="dead"`` for the ones that gave up)."""
    pages.check_limit(limit)
    where: list[str] = []
    params: list[Any] = []
    if state is not None:
        where.append("state = ?")
        params.append(state)
    after = pages.decode(cursor, (int,))
    if after is not None:
        where.append("id < ?")
        params.append(after[0])
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT {_JOB_COLUMNS} FROM job {clause} ORDER BY id DESC LIMIT ?", (*params, limit + 1)
    ).fetchall()
    items = [dict(r) for r in rows]
    for item in items:
        try:
            item["result"] = json.loads(item["result"]) if item["result"] else None
        except ValueError:
            item["result"] = None
    return pages.page(items, limit, "id")

