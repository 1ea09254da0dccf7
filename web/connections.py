"""One hub.db connection per thread, opened lazily and closed together.

Starlette runs sync handlers on a thread pool and the MCP SDK runs sync tools on worker
threads; a SQLite connection belongs to the thread that opened it.  Stdlib only, so stdio
``aletheia mcp`` uses it without importing the web app.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from pathlib import Path

from aletheia import db


class Connections:
    """One hub.db connection per thread."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._migrated = False

    def get(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            # check_same_thread=False only so close_all can close from the lifespan's thread;
            # each connection is still used by the one thread that opened it.
            conn = db.connect(self.path, migrate=not self._migrated, check_same_thread=False)
            self._migrated = True
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def open(self) -> sqlite3.Connection:
        """A connection of the caller's own (not pooled), usable from any one thread at a
        time; the caller closes it."""
        return db.connect(self.path, migrate=False, check_same_thread=False)

    def close_all(self) -> None:
        with self._lock:
            conns, self._all = self._all, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()
