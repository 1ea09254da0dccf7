"""What the store is doing, for the dashboard: projects with readable names, what changed since
a cursor (the live feed), and memories per day (the stats chart).

Read-only queries over hub.db; the web layer only shapes them into JSON and server-sent events.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any

from aletheia import ids

DAY_MS = 86_400_000
# What a feed line shows (the full text is one click away): no narratives on the wire.
_FEED_COLUMNS = ("m.id, m.project, m.session_id, m.tool, m.kind, m.title, m.created_at, "
                 "m.pinned, m.dismissed_at")


def project_name(key: str) -> str:
    """A readable name for a project key: the repository's folder name for a path key (the
    git top level), the key itself for a named project (``.aletheia-project``)."""
    if key.startswith("/") or (len(key) > 2 and key[1] == ":"):
        name = os.path.basename(key.rstrip("/\\"))
        return name or key
    return key


def list_projects(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every project with memories or sessions, most recently active first: its key, readable
    name (made unique: two repositories called ``api`` get their parent folder added),
    counts and last activity."""
    rows = conn.execute(
        "SELECT project, count(*) AS memories, max(created_at) AS last_at FROM memory "
        "GROUP BY project"
    ).fetchall()
    out: dict[str, dict[str, Any]] = {
        r["project"]: {"key": r["project"], "memories": r["memories"], "sessions": 0,
                       "last_at": r["last_at"]} for r in rows
    }
    for r in conn.execute("SELECT project, count(*) AS n, max(last_event_at) AS last_at "
                          "FROM session GROUP BY project"):
        item = out.setdefault(r["project"], {"key": r["project"], "memories": 0, "sessions": 0,
                                             "last_at": r["last_at"]})
        item["sessions"] = r["n"]
        item["last_at"] = max(item["last_at"] or 0, r["last_at"] or 0)
    names: dict[str, list[str]] = {}
    for key in out:
        names.setdefault(project_name(key), []).append(key)
    for name, keys in names.items():
        for key in keys:
            parent = os.path.basename(os.path.dirname(key.rstrip("/"))) if len(keys) > 1 else ""
            out[key]["name"] = f"{name} ({parent})" if parent else name
    items = sorted(out.values(), key=lambda p: (-(p["last_at"] or 0), p["key"]))
    for p in items:
        p["last"] = ids.iso(p["last_at"]) if p["last_at"] else None
    return items


def latest_cursor(conn: sqlite3.Connection) -> dict[str, int]:
    """Where the feed starts: the newest memory rowid and session activity now."""
    mem = conn.execute("SELECT coalesce(max(rowid), 0) FROM memory").fetchone()[0]
    ses = conn.execute("SELECT coalesce(max(last_event_at), 0) FROM session").fetchone()[0]
    return {"memory": int(mem), "session": int(ses)}


def changes_since(conn: sqlite3.Connection, cursor: dict[str, int], project: str | None = None,
                  limit: int = 50) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                            dict[str, int]]:
    """New memories (by rowid) and sessions with new activity since ``cursor``, oldest first,
    and the cursor to ask with next time."""
    where = "m.rowid > ?"
    params: list[Any] = [cursor.get("memory", 0)]
    if project:
        where += " AND m.project = ?"
        params.append(project)
    rows = conn.execute(
        f"SELECT m.rowid AS rid, {_FEED_COLUMNS} FROM memory m WHERE {where} "
        "ORDER BY m.rowid LIMIT ?", (*params, limit),
    ).fetchall()
    memories = []
    next_cursor = dict(cursor)
    for r in rows:
        item = dict(r)
        del item["rid"]
        item["created"] = ids.iso(item["created_at"])
        item["pinned"] = bool(item["pinned"])
        memories.append(item)
        next_cursor["memory"] = max(next_cursor.get("memory", 0), r["rid"])
    from aletheia.sessions import list_sessions

    sessions = [s for s in list_sessions(conn, project=project, limit=20).items
                if s["last_event_at"] > cursor.get("session", 0)]
    if sessions:
        next_cursor["session"] = max(s["last_event_at"] for s in sessions)
    return memories, list(reversed(sessions)), next_cursor


def memories_per_day(conn: sqlite3.Connection, *, project: str | None = None, days: int = 30,
                     now: int | None = None, tz_offset_min: int = 0) -> list[dict[str, Any]]:
    """Memories captured per day (the user's local days, by ``tz_offset_min``) over the last
    ``days`` days, oldest first, zero-filled."""
    stamp = ids.now_ms() if now is None else now
    shift = tz_offset_min * 60_000
    today = (stamp + shift) // DAY_MS
    first = today - days + 1
    where = "created_at >= ?"
    params: list[Any] = [first * DAY_MS - shift]
    if project:
        where += " AND project = ?"
        params.append(project)
    counts = dict(conn.execute(
        f"SELECT (created_at + ?) / {DAY_MS} AS day, count(*) FROM memory WHERE {where} "
        "GROUP BY day", (shift, *params)).fetchall())
    out = []
    for day in range(first, today + 1):
        out.append({"day": ids.iso(day * DAY_MS)[:10], "memories": int(counts.get(day, 0))})
    return out
