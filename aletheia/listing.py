"""Paginated lists for browsing (REST, CLI, dashboard): memories with filters, pinned ones, facts.
(Sessions are ``aletheia.sessions``; jobs, whose table the queue owns, ``tasks.jobs``.)

Ranking by relevance is ``aletheia.search``; these lists are newest first and never skip a row.
"""

from __future__ import annotations

import sqlite3

from aletheia import filters, pages, shapes


def list_memories(
    conn: sqlite3.Connection, *, project: str | None = None, kind: str | None = None,
    tool: str | None = None, session_id: str | None = None, scope: str | None = None,
    pinned: bool | None = None, dismissed: bool | None = False,
    limit: int = pages.DEFAULT_LIMIT, cursor: str | None = None,
) -> pages.Page:
    """Memories newest first.  ``project`` also shows global memories (the one meaning of
    ``project=``, aletheia.filters).  ``dismissed``: False hides dismissed ones, True lists only
    them, None lists both."""
    pages.check_limit(limit)
    where = filters.memories(filters.Filter(
        project=project, kind=kind, tool=tool, session_id=session_id, scope=scope, pinned=pinned,
        dismissed=dismissed))
    return where.page(conn, f"SELECT {shapes.MEMORY_COLUMNS} FROM memory", limit, cursor,
                      shapes.memory)


def list_facts(
    conn: sqlite3.Connection, *, project: str | None = None, scope: str | None = None,
    status: str | None = "active", limit: int = pages.DEFAULT_LIMIT, cursor: str | None = None,
) -> pages.Page:
    """Facts newest first (the fact module's one query, with this module's page limits)."""
    from aletheia.facts import page_facts

    pages.check_limit(limit)
    return page_facts(conn, project=project, scope=scope, status=status, limit=limit,
                      cursor=cursor, max_limit=pages.MAX_LIMIT)
