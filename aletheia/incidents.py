"""Incidents: things that went wrong where no command saw them fail, kept for ``doctor``.

The first user is the SessionStart hook (and per-prompt recall): a block that should have been
delivered and was not — the store locked past the budget, the block failed to build — is
recorded with ``record(conn, "context_undelivered", …)``.  A hook that cannot write hub.db at
that moment spools the incident like any other item, so it is reported once the store is back.
Stdlib only (the hook calls it).  The table keeps the latest ``KEEP`` incidents.
"""

from __future__ import annotations

import re
import sqlite3
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# What a hook reports.  ``context_undelivered``: a SessionStart (or prompt) block that should
# have been printed was not.  Other kinds are allowed if they match KIND_PATTERN.
CONTEXT_UNDELIVERED = "context_undelivered"
KIND_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,39}")
DETAIL_CAP = 500
KEEP = 1000

_INSERT = """
INSERT INTO incident (kind, at, host, project, session_id, detail)
VALUES (:kind, :at, :host, :project, :session_id, :detail)
"""
_PRUNE = "DELETE FROM incident WHERE id <= (SELECT max(id) FROM incident) - ?"


def validate(item: dict[str, Any], *, now: int | None = None) -> dict[str, Any]:
    """The row for an incident item (from a hook or the spool); ``InvalidInput`` if malformed."""
    from aletheia import bounds
    from aletheia.errors import InvalidInput
    from aletheia.redact import redact

    kind = item.get("kind")
    if not isinstance(kind, str) or not KIND_PATTERN.fullmatch(kind):
        raise InvalidInput("an incident needs a kind (lower-case letters, digits, _)")
    out: dict[str, Any] = {"kind": kind, "at": bounds.timestamp_ms(item.get("at"), "at", now=now)}
    for key, cap in (("host", bounds.NAME_CAP), ("project", bounds.PROJECT_CAP),
                     ("session_id", bounds.SESSION_ID_CAP)):
        value = item.get(key)
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"an incident's {key} must be a string")
        out[key] = redact(bounds.cut(value, cap)) if value else None
    detail = item.get("detail") or ""
    if not isinstance(detail, str):
        raise InvalidInput("an incident's detail must be a string")
    out["detail"] = redact(bounds.cut(detail, DETAIL_CAP))
    return out


def insert(conn: sqlite3.Connection, row: dict[str, Any]) -> None:
    """Store a validated incident (inside the caller's transaction) and prune old ones."""
    conn.execute(_INSERT, row)
    conn.execute(_PRUNE, (KEEP,))


def record(conn: sqlite3.Connection | None, kind: str, *, host: str | None = None,
           project: str | None = None, session_id: str | None = None, detail: str = "",
           at: int | None = None) -> str:
    """Record an incident: into hub.db when ``conn`` can write it now, else into the spool.
    Returns where it went (``"store"``, ``"spool"`` or ``"lost"``); never raises."""
    item = {"type": "incident", "kind": kind, "at": int(time.time() * 1000) if at is None else at,
            "host": host, "project": project, "session_id": session_id, "detail": detail}
    try:
        row = validate(item)
    except Exception:
        return "lost"
    if conn is not None:
        try:
            from aletheia.db import tx

            with tx(conn):
                insert(conn, row)
            return "store"
        except Exception:
            pass
    try:
        from aletheia import spool

        spool.append(item, lock_wait_s=0.02)
        return "spool"
    except Exception:
        return "lost"


def summary(conn: sqlite3.Connection, *, since: int) -> dict[str, dict[str, Any]]:
    """Per kind: how many since ``since`` and the latest one (time, host, project, detail)."""
    out: dict[str, dict[str, Any]] = {}
    rows = conn.execute(
        "SELECT kind, count(*) AS n, max(at) AS last FROM incident WHERE at >= ? GROUP BY kind",
        (since,),
    ).fetchall()
    for r in rows:
        latest = conn.execute(
            "SELECT at, host, project, session_id, detail FROM incident WHERE kind = ? "
            "ORDER BY at DESC, id DESC LIMIT 1", (r["kind"],),
        ).fetchone()
        out[r["kind"]] = {"count": int(r["n"]), "last": dict(latest) if latest else None}
    return out
