"""Paginated lists for browsing (REST, CLI, dashboard): memories with filters, pinned ones, facts.

Ranking by relevance is ``aletheia.search``; these lists are newest first and never skip a row.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from aletheia import ids, pages
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


FACT_COLUMNS = (
    "id, project, scope, session_id, kind, text, confidence, source_ids, status, extractor, "
    "created_at, updated_at"
)


def fact_to_dict(r: sqlite3.Row) -> dict[str, Any]:
    out = dict(r)
    try:
        out["source_ids"] = json.loads(out.get("source_ids") or "[]")
    except ValueError:
        out["source_ids"] = []
    out["created"] = ids.iso(out["created_at"])
    return out


def list_facts(
    conn: sqlite3.Connection, *, project: str | None = None, status: str | None = "active",
    limit: int = pages.DEFAULT_LIMIT, cursor: str | None = None,
) -> pages.Page:
    """Facts newest first; ``project`` includes global ones; ``status`` None lists every status."""
    pages.check_limit(limit)
    where: list[str] = []
    params: list[Any] = []
    if project is not None:
        where.append("(project = ? OR scope = 'global')")
        params.append(project)
    if status is not None:
        where.append("status = ?")
        params.append(status)
    after = pages.decode(cursor, (int, str))
    if after is not None:
        where.append("(created_at < ? OR (created_at = ? AND id < ?))")
        params.extend([after[0], after[0], after[1]])
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT {FACT_COLUMNS} FROM fact {clause} ORDER BY created_at DESC, id DESC LIMIT ?",
        (*params, limit + 1),
    ).fetchall()
    return pages.page([fact_to_dict(r) for r in rows], limit, "created_at", "id")


JOB_STATES = ("pending", "running", "retry_wait", "done", "dead")
_JOB_COLUMNS = (
    "id, type, session_id, project, state, attempts, max_attempts, lease_owner, "
    "lease_expires_at, next_run_at, last_error, created_at, updated_at, finished_at"
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
    return pages.page([dict(r) for r in rows], limit, "id")

