"""Reading memories: by id, the timeline around an anchor, recent lists and store stats."""

from __future__ import annotations

import sqlite3
from typing import Any

from aletheia import filters, shapes, vocab
from aletheia.errors import InvalidInput, NotFound


def get_observations(conn: sqlite3.Connection, memory_ids: list[str]) -> list[shapes.Memory]:
    """Full memories for ``memory_ids``, in the order asked; unknown ids are an error."""
    if not memory_ids:
        raise InvalidInput("give at least one id")
    if len(memory_ids) > 500:
        raise InvalidInput("at most 500 ids at once")
    marks = ",".join("?" * len(memory_ids))
    found = {
        r["id"]: shapes.memory(r)
        for r in conn.execute(f"SELECT {shapes.MEMORY_COLUMNS} FROM memory WHERE id IN ({marks})", memory_ids)
    }
    missing = [i for i in memory_ids if i not in found]
    if missing:
        raise NotFound(f"no memory with id {', '.join(missing[:5])}")
    return [found[i] for i in memory_ids]


def get_memory(conn: sqlite3.Connection, memory_id: str) -> shapes.Memory:
    return get_observations(conn, [memory_id])[0]


def timeline(
    conn: sqlite3.Connection,
    anchor: str | None = None,
    *,
    at: int | None = None,
    project: str | None = None,
    before: int = 5,
    after: int = 5,
) -> list[shapes.Memory]:
    """Memories around ``anchor`` (an id) or a time, within its session (or project)."""
    if before < 0 or after < 0 or before > 100 or after > 100:
        raise InvalidInput("before and after must be between 0 and 100")
    if anchor is not None:
        base = get_memory(conn, anchor)
        at = base["created_at"]
        project = base["project"]
        session = base["session_id"]
    elif at is not None:
        if project is None:
            raise InvalidInput("a timeline by time needs a project")
        session = None
    else:
        raise InvalidInput("give an anchor id or a time")
    # An anchor's session is its own (a global memory of another project is no neighbour); a
    # time in a project shows it with the global memories, as project= does everywhere.
    where = filters.memories(filters.Filter(project=None if session else project,
                                            session_id=session))
    if session:
        where.add("project = ?", project)
    earlier = conn.execute(
        f"SELECT {shapes.MEMORY_COLUMNS} FROM memory{where.sql()} AND (created_at < ? OR (created_at = ? AND id < ?)) "
        "ORDER BY created_at DESC, id DESC LIMIT ?",
        (*where.params, at, at, anchor or "", before),
    ).fetchall()
    later = conn.execute(
        f"SELECT {shapes.MEMORY_COLUMNS} FROM memory{where.sql()} AND (created_at > ? OR (created_at = ? AND id >= ?)) "
        "ORDER BY created_at, id LIMIT ?",
        (*where.params, at, at, anchor or "", after + (1 if anchor else 0)),
    ).fetchall()
    return [shapes.memory(r) for r in reversed(earlier)] + [shapes.memory(r) for r in later]


def known_kinds(conn: sqlite3.Connection) -> list[str]:
    """The kinds a filter may name: aletheia's memory and fact kinds, and any kind stored."""
    stored = {r[0] for r in conn.execute("SELECT DISTINCT kind FROM memory")}
    return sorted(set(vocab.MEMORY_KINDS) | set(vocab.FACT_KINDS) | stored)


def stats(conn: sqlite3.Connection) -> dict[str, Any]:
    by_kind = dict(conn.execute("SELECT kind, count(*) FROM memory GROUP BY kind").fetchall())
    by_project = dict(
        conn.execute("SELECT project, count(*) FROM memory GROUP BY project").fetchall()
    )
    return {
        "memories": sum(by_kind.values()),
        "by_kind": by_kind,
        "projects": len(by_project),
        "by_project": by_project,
        "sessions": conn.execute("SELECT count(*) FROM session").fetchone()[0],
        "facts": conn.execute("SELECT count(*) FROM fact WHERE status = 'active'").fetchone()[0],
        "stop_queue": conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0],
        "jobs": dict(conn.execute("SELECT state, count(*) FROM job GROUP BY state").fetchall()),
        "pinned": conn.execute("SELECT count(*) FROM memory WHERE pinned = 1").fetchone()[0],
        "dismissed": conn.execute(
            "SELECT count(*) FROM memory WHERE dismissed_at IS NOT NULL"
        ).fetchone()[0],
    }


def count_in_project(conn: sqlite3.Connection, project: str) -> int:
    return int(conn.execute("SELECT count(*) FROM memory WHERE project = ?", (project,)).fetchone()[0])
