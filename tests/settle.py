"""Read the store the way a user would after hooks ran: with the spool replayed first.

A hook that exceeds its 150 ms watchdog on a busy machine legitimately spools its item instead
of writing it (delay is allowed, loss is not), so a test that reads hub.db right after a hook
process must replay the spool first, or it fails on a loaded machine by construction.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from aletheia import db, paths, spool


def replay_spool(conn: sqlite3.Connection | None = None, *, home: Path | None = None,
                 attempts: int = 20) -> spool.ReplayResult:
    """Replay whatever hooks spooled (retrying while another writer holds the lock).
    ``home``: a data directory other than the test's ALETHEIA_HOME."""
    own = conn is None
    c = (db.connect() if home is None else db.connect(home / "hub.db")) if conn is None else conn
    spool_file = None if home is None else home / "spool" / paths.SPOOL_NAME
    try:
        for attempt in range(attempts):
            try:
                return spool.replay(c, spool_file)
            except sqlite3.OperationalError:
                if attempt == attempts - 1:
                    raise
                time.sleep(0.1 * (attempt + 1))
        raise AssertionError("unreachable")
    finally:
        if own:
            c.close()


def settled_store() -> sqlite3.Connection:
    """A connection to hub.db after the spool has been replayed into it."""
    conn = db.connect()
    replay_spool(conn)
    return conn


def settled_count(sql: str = "SELECT count(*) FROM memory", *args: object) -> int:
    conn = settled_store()
    try:
        return int(conn.execute(sql, args).fetchone()[0])
    finally:
        conn.close()
