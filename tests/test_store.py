"""The store: schema, pragmas, file modes, the one write API (redaction, caps, dedupe)."""

from __future__ import annotations

import os
import random
import sqlite3
import stat
from pathlib import Path

import pytest

from aletheia import db, paths, settings, spool, spool_quarantine, store
from aletheia.errors import InvalidInput
from aletheia.schema import MIGRATIONS
from aletheia.store import MemoryIn
from tests import fakes


def test_home_and_files_are_private(aletheia_home: Path, conn: sqlite3.Connection) -> None:
    assert stat.S_IMODE(os.stat(aletheia_home).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(paths.hub_db()).st_mode) == 0o600
    store.write_memory(conn, MemoryIn(project="/p", kind="note", title="x"))
    for side in ("-wal", "-shm"):
        p = Path(str(paths.hub_db()) + side)
        if p.exists():
            reopened = db.connect()
            reopened.close()
            assert stat.S_IMODE(os.stat(p).st_mode) == 0o600


def test_pragmas_and_schema_version(conn: sqlite3.Connection) -> None:
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    assert conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 3000
    assert db.schema_version(conn) == max(MIGRATIONS)
    applied = [r[0] for r in conn.execute("SELECT version FROM schema_migration ORDER BY version")]
    assert applied == sorted(MIGRATIONS)


def test_migrations_run_once(aletheia_home: Path) -> None:
    a = db.connect()
    b = db.connect()
    assert db.ensure_schema(b) == max(MIGRATIONS)
    assert b.execute("SELECT count(*) FROM schema_migration").fetchone()[0] == len(MIGRATIONS)
    a.close()
    b.close()


def test_write_stamps_and_dedupes(conn: sqlite3.Connection) -> None:
    item = MemoryIn(project="/repo", kind="tool_event", title="Bash: $ ls", narrative="a b",
                    session_id="s1", tool="claude-code", source="hook", event_key="tu_1")
    first = store.write_memory(conn, item)
    second = store.write_memory(conn, item)
    assert first.inserted and not second.inserted and first.id == second.id
    row = conn.execute("SELECT * FROM memory").fetchone()
    assert (row["project"], row["scope"], row["session_id"], row["tool"], row["kind"], row["source"]) == (
        "/repo", "project", "s1", "claude-code", "tool_event", "hook")
    # A second event that differs only by its event key is a second memory.
    other = store.write_memory(conn, MemoryIn(**{**item.__dict__, "event_key": "tu_2"}))
    assert other.inserted
    session = conn.execute("SELECT * FROM session WHERE id = 's1'").fetchone()
    assert session["event_count"] == 2


def test_write_redacts_every_field(conn: sqlite3.Connection) -> None:
    rng = random.Random(7)
    secret = fakes.github_token(rng)
    store.write_memory(conn, MemoryIn(
        project="/repo", kind="note", title=f"token {secret}", subtitle=secret,
        narrative=f"export GITHUB_TOKEN={secret}", facts=[secret], concepts=[secret],
        files=[f"/tmp/{secret}"],
    ))
    dumped = "\n".join(str(tuple(r)) for r in conn.execute("SELECT * FROM memory"))
    assert secret not in dumped
    assert "[redacted" in dumped


def test_caps(conn: sqlite3.Connection) -> None:
    big = "line of tool output\n" * 10_000
    result = store.write_memory(conn, MemoryIn(project="/p", kind="tool_event", title="t" * 500,
                                               narrative=big + "FINAL ERROR"))
    row = conn.execute("SELECT title, narrative FROM memory WHERE id = ?", (result.id,)).fetchone()
    assert len(row["title"]) == store.TITLE_CAP
    assert len(row["narrative"]) < store.NARRATIVE_HEAD + store.NARRATIVE_TAIL + 100
    assert row["narrative"].endswith("FINAL ERROR")
    assert "characters cut" in row["narrative"]


def test_secret_straddling_the_cut_is_still_redacted(conn: sqlite3.Connection) -> None:
    secret = fakes.github_token(random.Random(3))
    text = "x" * (store.NARRATIVE_HEAD - 10) + secret + "y" * 100_000
    store.write_memory(conn, MemoryIn(project="/p", kind="note", title="t", narrative=text))
    narrative = conn.execute("SELECT narrative FROM memory").fetchone()[0]
    assert secret[:14] not in narrative


@pytest.mark.parametrize(
    "bad",
    [
        {"project": "", "kind": "note", "title": "x"},
        {"project": "/p", "kind": "", "title": "x"},
        {"project": "/p", "kind": "note"},
        {"project": "/p", "kind": "note", "title": 3},
        {"project": "/p", "kind": "note", "title": "x", "scope": "world"},
        {"project": "/p", "kind": "note", "title": "x", "facts": [1, 2]},
    ],
)
def test_bad_memory_is_refused(conn: sqlite3.Connection, bad: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        store.write_memory(conn, MemoryIn(**bad))  # type: ignore[arg-type]
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 0


def test_queue_stop_is_idempotent(conn: sqlite3.Connection) -> None:
    store.queue_stop(conn, "s1", "/p", "codex", now=1)
    store.queue_stop(conn, "s1", "/p", "codex", now=2)
    assert conn.execute("SELECT count(*), max(queued_at) FROM stop_queue").fetchone()[:] == (1, 2)


def test_spool_replay_is_idempotent(conn: sqlite3.Connection) -> None:
    row = store.prepare(MemoryIn(project="/p", kind="note", title="from the spool"))
    spool.append({"type": "memory", "row": row})
    spool.append({"type": "memory", "row": row})
    spool.append({"type": "stop", "session_id": "s9", "project": "/p", "tool": "gemini", "at": 5})
    with (paths.spool_dir() / "hook-spool.jsonl").open("a") as fh:
        fh.write("not json\n")
    result = spool.replay(conn)
    # Every line is accounted for: one new row, one duplicate, one stop, one quarantined.
    assert (result.items, result.inserted, result.duplicates, result.stops,
            result.quarantined) == (4, 1, 1, 1, 1)
    assert spool.pending_size() == 0
    assert [e.line for e in spool_quarantine.entries()] == [b"not json"]
    assert conn.execute("SELECT count(*) FROM memory").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 1
    assert stat.S_IMODE(os.stat(paths.spool_dir()).st_mode) == 0o700


def test_spool_file_is_private(aletheia_home: Path) -> None:
    path = spool.append({"type": "stop", "session_id": "s", "project": "/p"})
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_replay_skips_excluded_projects(conn: sqlite3.Connection) -> None:
    settings.put(conn, "excluded_projects", ["/secret*"])
    spool.append({"type": "memory", "row": store.prepare(MemoryIn(project="/secret-repo", kind="note", title="x"))})
    spool.append({"type": "memory", "row": store.prepare(MemoryIn(project="/open", kind="note", title="y"))})
    spool.replay(conn)
    assert [r[0] for r in conn.execute("SELECT project FROM memory")] == ["/open"]


def test_replay_survives_a_locked_database(aletheia_home: Path) -> None:
    writer = db.connect()
    spool.append({"type": "memory", "row": store.prepare(MemoryIn(project="/p", kind="note", title="kept"))})
    locker = db.connect()
    locker.execute("BEGIN EXCLUSIVE")
    blocked = db.connect(busy_ms=10)
    with pytest.raises(sqlite3.OperationalError):
        spool.replay(blocked)
    locker.execute("ROLLBACK")
    assert spool.pending_size() > 0  # handed back, not lost
    spool.replay(writer)
    assert writer.execute("SELECT title FROM memory").fetchone()[0] == "kept"
    for c in (writer, locker, blocked):
        c.close()


def test_settings_are_redacted_before_they_are_stored(conn: sqlite3.Connection) -> None:
    secret = fakes.github_token(random.Random(21))
    stored = settings.put(conn, "provider", f"https://bot:{secret}@llm.internal/v1")
    assert secret not in stored and "llm.internal" in stored
    assert secret not in conn.execute("SELECT value FROM setting").fetchone()[0]
    assert settings.put(conn, "excluded_projects", ["/work/secret-client"]) == ["/work/secret-client"]


def test_an_upgrade_waits_for_another_process_running_it(tmp_path: Path) -> None:
    # The server and the worker start together on a store due an upgrade: the second must wait
    # for the first (which holds the write lock for as long as the rebuild takes), not fail.
    import threading
    import time

    from tests.oldstore import make_store_at

    path = tmp_path / "hub.db"
    make_store_at(path, max(MIGRATIONS) - 1).close()
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    release = threading.Timer(0.6, lambda: holder.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    conn = db.connect(path, busy_ms=50)
    waited = time.monotonic() - started
    release.join()
    holder.close()
    assert db.schema_version(conn) == max(MIGRATIONS) and waited >= 0.5
    assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 50  # back to the caller's own
    conn.close()
