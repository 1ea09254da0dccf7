"""Worker heartbeats: each worker's ticker stamps its row in hub.db's ``worker`` table, so
``doctor`` can tell a running worker from none (and sessions waiting with nobody to compress
them).  A worker that stops cleanly marks its row stopped; a killed one just stops beating.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from typing import Any

from aletheia.db import tx

# A worker beats every tick (2 s); one silent this long is taken for gone.  Generous: a busy
# machine can stall a ticker for a while, and "no worker" must not be said of a live one.
STALE_MS = 60_000
KEEP_STOPPED_MS = 7 * 24 * 3600 * 1000

_BEAT = """
INSERT INTO worker (name, hostname, pid, started_at, beat_at, stopped_at)
VALUES (:name, :hostname, :pid, :now, :now, NULL)
ON CONFLICT(name) DO UPDATE SET beat_at = excluded.beat_at, stopped_at = NULL
"""
_STOP = "UPDATE worker SET stopped_at = :now, beat_at = :now WHERE name = :name"
_PRUNE = "DELETE FROM worker WHERE beat_at < :old"
_LIVE = """
SELECT name, hostname, pid, started_at, beat_at FROM worker
WHERE stopped_at IS NULL AND beat_at >= :since ORDER BY beat_at DESC
"""
_LAST = "SELECT name, hostname, pid, started_at, beat_at, stopped_at FROM worker ORDER BY beat_at DESC LIMIT 1"


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def beat(conn: sqlite3.Connection, name: str, *, now: int) -> None:
    with tx(conn):
        conn.execute(_BEAT, {"name": name, "hostname": socket.gethostname(),
                             "pid": os.getpid(), "now": now})
        conn.execute(_PRUNE, {"old": now - KEEP_STOPPED_MS})


def stopped(conn: sqlite3.Connection, name: str, *, now: int) -> None:
    with tx(conn):
        conn.execute(_STOP, {"name": name, "now": now})


def live(conn: sqlite3.Connection, *, now: int, stale_ms: int = STALE_MS) -> list[dict[str, Any]]:
    """Workers that beat within ``stale_ms`` and did not stop."""
    return [dict(r) for r in conn.execute(_LIVE, {"since": now - stale_ms})]


def last_seen(conn: sqlite3.Connection) -> dict[str, Any] | None:
    row = conn.execute(_LAST).fetchone()
    return dict(row) if row is not None else None
