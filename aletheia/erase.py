"""Erase: delete memories for good (rows, FTS entries, derived facts, emptied sessions) and
return a signed receipt.

Unlike dismiss, nothing is kept.  FTS5 keeps a deleted row's terms in its index segments until
they are merged, so every erase ends with an FTS ``optimize`` (a full merge) and a WAL
checkpoint; with ``secure_delete`` on, the freed pages are zeroed, so the erased text is no
longer in the bytes of hub.db or its WAL.  SQLite 3.40 (Debian 12) has no FTS5 'secure-delete'
option, which is why the merge is needed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from aletheia import ids, receipts, spool
from aletheia.db import tx
from aletheia.errors import InvalidInput, NotFound

_CHUNK = 500
# Per-row vector indexes (semantic search) keyed by the memory or fact rowid; erased when present.
VECTOR_TABLES = {"memory": ("memory_vec",), "fact": ("fact_vec",)}


def _chunks(values: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start:start + _CHUNK]


def _rows_by_ids(conn: sqlite3.Connection, sql: str, values: Sequence[Any]) -> list[sqlite3.Row]:
    out: list[sqlite3.Row] = []
    for chunk in _chunks(values):
        out.extend(conn.execute(sql.format(marks=",".join("?" * len(chunk))), list(chunk)))
    return out


def _existing_tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def erase(
    conn: sqlite3.Connection, *, ids_: Sequence[str] | None = None, project: str | None = None,
    session_id: str | None = None, now: int | None = None, key: bytes | None = None,
    compact: bool = True,
) -> dict[str, Any]:
    """Erase by memory/fact ids, a whole session, or a whole project (exactly one of them).

    Returns the signed receipt (``{"id", "alg", "body", "signature"}``) plus ``checkpointed``.
    Unknown ids are an error and nothing is erased.
    """
    chosen = [s for s in (ids_, project, session_id) if s]
    if len(chosen) != 1:
        raise InvalidInput("give exactly one of: ids, a session or a project")
    stamp = ids.now_ms() if now is None else now
    receipt_key = receipts.load_key() if key is None else key
    # What a hook spooled (the store was locked) would come back with the next replay, after
    # the erase: replay it first, so the erase covers it too.
    if spool.pending_size() > 0:
        spool.replay(conn)
    with tx(conn):
        body = _erase_locked(conn, ids_=list(dict.fromkeys(ids_ or [])), project=project,
                             session_id=session_id, stamp=stamp)
        receipt = receipts.issue(conn, body, key=receipt_key)
    receipt["checkpointed"] = compact_store(conn) if compact else False
    return receipt


def _erase_locked(conn: sqlite3.Connection, *, ids_: list[str], project: str | None,
                  session_id: str | None, stamp: int) -> dict[str, Any]:
    mem_cols = "SELECT rowid, id, session_id, project, kind FROM memory"
    fact_cols = "SELECT rowid, id, project, source_ids FROM fact"
    if ids_:
        memories = _rows_by_ids(conn, mem_cols + " WHERE id IN ({marks})", ids_)
        facts = _rows_by_ids(conn, fact_cols + " WHERE id IN ({marks})", ids_)
        known = {r["id"] for r in memories} | {r["id"] for r in facts}
        missing = [i for i in ids_ if i not in known]
        if missing:
            raise NotFound(f"no memory or fact with id {', '.join(missing[:5])}")
        selector: dict[str, Any] = {"ids": ids_}
    elif session_id:
        memories = conn.execute(mem_cols + " WHERE session_id = ?", (session_id,)).fetchall()
        facts = conn.execute(fact_cols + " WHERE session_id = ?", (session_id,)).fetchall()
        if not memories and not facts and not conn.execute(
            "SELECT 1 FROM session WHERE id = ?", (session_id,)
        ).fetchone():
            raise NotFound(f"no session with id {session_id}")
        selector = {"session_id": session_id}
    else:
        memories = conn.execute(mem_cols + " WHERE project = ?", (project,)).fetchall()
        facts = conn.execute(fact_cols + " WHERE project = ?", (project,)).fetchall()
        selector = {"project": project}

    erased: dict[str, sqlite3.Row] = {r["id"]: r for r in memories}
    sessions = {r["session_id"] for r in memories if r["session_id"]}
    if session_id:
        sessions.add(session_id)
    # A session whose captured memories are all gone takes its summaries with it: they were
    # derived only from what is being erased.
    emptied: set[str] = set()
    for sid in sorted(sessions):
        rest = conn.execute(
            "SELECT rowid, id, session_id, project, kind FROM memory WHERE session_id = ?", (sid,)
        ).fetchall()
        remaining = [r for r in rest if r["id"] not in erased]
        if all(r["kind"] == "summary" for r in remaining):
            emptied.add(sid)
            for r in remaining:
                erased[r["id"]] = r

    # Facts: those whose every source is erased go; the others forget the erased sources.
    fact_drop: dict[str, sqlite3.Row] = {r["id"]: r for r in facts}
    fact_keep: list[tuple[str, list[str]]] = []
    if erased:
        projects = sorted({r["project"] for r in erased.values()})
        candidates = _rows_by_ids(
            conn, fact_cols + " WHERE project IN ({marks}) OR scope = 'global'", projects
        )
        for f in candidates:
            if f["id"] in fact_drop:
                continue
            try:
                sources = [s for s in json.loads(f["source_ids"] or "[]") if isinstance(s, str)]
            except ValueError:
                continue
            hit = [s for s in sources if s in erased]
            if not hit:
                continue
            left = [s for s in sources if s not in erased]
            if left:
                fact_keep.append((f["id"], left))
            else:
                fact_drop[f["id"]] = f

    tables = _existing_tables(conn)
    memory_ids = sorted(erased)
    fact_ids = sorted(fact_drop)
    for table in VECTOR_TABLES["memory"]:
        if table in tables:
            for chunk in _chunks([erased[i]["rowid"] for i in memory_ids]):
                conn.execute(f"DELETE FROM {table} WHERE rowid IN ({','.join('?' * len(chunk))})",
                             list(chunk))
    for table in VECTOR_TABLES["fact"]:
        if table in tables:
            for chunk in _chunks([fact_drop[i]["rowid"] for i in fact_ids]):
                conn.execute(f"DELETE FROM {table} WHERE rowid IN ({','.join('?' * len(chunk))})",
                             list(chunk))
    # The delete triggers remove each row's FTS entries (memory_fts, fact_fts).
    for chunk in _chunks(memory_ids):
        conn.execute(f"DELETE FROM memory WHERE id IN ({','.join('?' * len(chunk))})", list(chunk))
    for chunk in _chunks(fact_ids):
        conn.execute(f"DELETE FROM fact WHERE id IN ({','.join('?' * len(chunk))})", list(chunk))
    for fact_id, left in fact_keep:
        conn.execute("UPDATE fact SET source_ids = ?, updated_at = ? WHERE id = ?",
                     (json.dumps(left), stamp, fact_id))

    # Sessions hold a copy of their first prompt: an emptied session goes, a partly erased one
    # recomputes what it shows from what is left.
    if project:
        emptied |= {r[0] for r in conn.execute(
            "SELECT id FROM session s WHERE project = ? AND NOT EXISTS "
            "(SELECT 1 FROM memory m WHERE m.session_id = s.id)", (project,))}
    for sid in sorted(emptied):
        conn.execute("DELETE FROM session WHERE id = ?", (sid,))
        conn.execute("DELETE FROM stop_queue WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM job WHERE session_id = ?", (sid,))
    for sid in sorted(sessions - emptied):
        conn.execute(
            "UPDATE session SET first_request = (SELECT title FROM memory WHERE session_id = ?1 "
            "AND kind = 'prompt' ORDER BY created_at, id LIMIT 1), summary_memory_id = CASE WHEN "
            "summary_memory_id IN (SELECT id FROM memory) THEN summary_memory_id END WHERE id = ?1",
            (sid,),
        )
    rules = 0
    if project:
        rules = conn.execute("DELETE FROM rule WHERE project = ?", (project,)).rowcount

    receipt_id = ids.new_id(stamp)
    return {
        "id": receipt_id,
        "type": "erase",
        "created_at": stamp,
        "created": ids.iso(stamp),
        "selector": selector,
        "counts": {
            "memories": len(memory_ids),
            "facts": len(fact_ids),
            "facts_updated": len(fact_keep),
            "sessions": len(emptied),
            "rules": rules,
            "fts_entries": len(memory_ids) + len(fact_ids),
        },
        "memory_ids": memory_ids,
        "fact_ids": fact_ids,
    }


def compact_store(conn: sqlite3.Connection) -> bool:
    """Merge the FTS indexes (dropping deleted rows' terms) and checkpoint the WAL into hub.db,
    truncating it.  Returns False when a reader kept the checkpoint from completing (the WAL
    keeps its frames until the next complete checkpoint)."""
    for table in ("memory_fts", "fact_fts"):
        with tx(conn):
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return not busy
