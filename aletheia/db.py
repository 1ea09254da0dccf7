"""SQLite connections to hub.db: pragmas, the one transaction helper, and migrations.

Stdlib only (the hook opens hub.db too).  Every read-then-write goes through ``tx`` which
starts ``BEGIN IMMEDIATE`` so two writers never both read and then fight for the lock.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from collections.abc import Iterator

from aletheia import paths
from aletheia.schema import MIGRATIONS

DEFAULT_BUSY_MS = 3000
UPGRADE_WAIT_MS = 600_000  # see ensure_schema


class SchemaBehind(Exception):
    """hub.db needs an upgrade that this caller must not run (see ``connect``)."""


_savepoints = itertools.count(1)


def connect(
    path: str | os.PathLike[str] | None = None,
    *,
    busy_ms: int = DEFAULT_BUSY_MS,
    migrate: bool = True,
    upgrade: bool = True,
    check_same_thread: bool = True,
) -> sqlite3.Connection:
    """Open hub.db (creating the data directory 0700 and the file 0600) with our pragmas.

    ``upgrade=False`` (the hook) creates a new store's schema but refuses to upgrade an
    existing one: an upgrade can rebuild an index for seconds, which a hook under a 150 ms
    watchdog would start, be killed in and roll back, every time.  It raises
    ``SchemaBehind`` instead; the hook spools, and the worker, server or CLI upgrades.

    ``isolation_level=None`` puts the connection in autocommit mode: transactions are explicit
    (``tx``), never opened implicitly by the sqlite3 module behind our back.
    """
    if path is None:
        paths.ensure_home()
        file = paths.hub_db_file()
    else:
        file = os.fspath(path)
        paths.ensure_dir(os.path.dirname(os.path.abspath(file)))
    if not os.path.exists(file):
        paths.touch_private(file)
    conn = sqlite3.connect(
        file,
        timeout=busy_ms / 1000,
        isolation_level=None,
        check_same_thread=check_same_thread,
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_ms)}")
    mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    if mode != "wal":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA secure_delete = ON")
    if migrate:
        if not upgrade:
            current = schema_version(conn)
            if 0 < current < max(MIGRATIONS):
                conn.close()
                raise SchemaBehind(f"hub.db is at schema {current}; an upgrade is due")
        ensure_schema(conn)
    _private_sidecars(file)
    return conn


def _private_sidecars(file: str) -> None:
    # SQLite creates -wal and -shm with the process umask; they hold the same content as the db.
    for suffix in ("-wal", "-shm"):
        try:
            if (os.stat(file + suffix).st_mode & 0o777) != paths.FILE_MODE:
                os.chmod(file + suffix, paths.FILE_MODE)
        except OSError:
            pass


@contextlib.contextmanager
def tx(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … commit, or roll back on any exception.

    Inside an open transaction it nests as a SAVEPOINT, so a caller can make several write-API
    calls commit as one unit (a job writes its results and marks itself done atomically).
    """
    if conn.in_transaction:
        name = f"tx_{next(_savepoints)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        conn.execute(f"RELEASE {name}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def schema_version(conn: sqlite3.Connection) -> int:
    row = conn.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def ensure_schema(conn: sqlite3.Connection) -> int:
    """Apply the migrations newer than the database's ``user_version``; return the version.

    The fast path (already current) is one pragma read, which matters for the hook.
    """
    latest = max(MIGRATIONS)
    current = schema_version(conn)
    if current >= latest:
        return current
    # Another process may hold the lock running this same upgrade, which can take seconds on a
    # big store (the server and the worker start together): wait for it, not just the usual
    # busy timeout, or one of them would fail at start-up.
    busy = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute(f"PRAGMA busy_timeout = {max(busy, UPGRADE_WAIT_MS)}")
    try:
        return _upgrade(conn, latest)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {busy}")


def _idents(title: str, subtitle: str, narrative: str, facts: str, concepts: str) -> str:
    """``aletheia_idents(…)`` for the upgrade that adds identifier words (schema 7); lists
    arrive as their stored JSON text, whose brackets and quotes the parser skips."""
    from aletheia.idents import index_text

    return index_text(title or "", subtitle or "", narrative or "", facts or "", concepts or "")


def _upgrade(conn: sqlite3.Connection, latest: int) -> int:
    conn.create_function("aletheia_idents", 5, _idents, deterministic=True)
    with tx(conn):
        # Re-read inside the write lock: another process may have migrated meanwhile.
        current = schema_version(conn)
        for number in sorted(MIGRATIONS):
            if number <= current:
                continue
            for statement in _split(MIGRATIONS[number]):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migration(version, applied_at) "
                "VALUES (?, CAST(strftime('%s','now') AS INTEGER) * 1000)",
                (number,),
            )
            conn.execute(f"PRAGMA user_version = {number}")
    return latest


def _split(script: str) -> list[str]:
    """Split a migration script into statements (triggers contain ';' inside BEGIN…END)."""
    statements: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        buf += line
        if sqlite3.complete_statement(buf):
            if buf.strip():
                statements.append(buf.strip())
            buf = ""
    if buf.strip():
        statements.append(buf.strip())
    return statements
