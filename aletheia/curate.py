"""Curating memories and facts: pin, dismiss, edit, promote.  Every interface calls these.

Dismiss hides and keeps (``undo=True`` brings it back); erasing is ``aletheia.erase``.  Edits go
through ``store.update_memory`` so an edited text is redacted like a new one.  Ids may name a
memory or a fact where both make sense (dismiss, promote).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from aletheia import ids, memories, shapes, store, vocab
from aletheia.db import tx
from aletheia.errors import InvalidInput, NotFound

_PIN = "UPDATE memory SET pinned = ?, updated_at = ? WHERE id = ?"
_DISMISS = "UPDATE memory SET dismissed_at = ?, updated_at = ? WHERE id = ?"
_MEMORY_SCOPE = "UPDATE memory SET scope = ?, updated_at = ? WHERE id = ?"
_FACT_STATUS = "UPDATE fact SET status = ?, updated_at = ? WHERE id = ? AND status != 'superseded'"
_FACT_SCOPE = "UPDATE fact SET scope = ?, updated_at = ? WHERE id = ?"
_FACT_EXISTS = "SELECT status FROM fact WHERE id = ?"


def _stamp(now: int | None) -> int:
    return ids.now_ms() if now is None else now


Curated = shapes.TypedMemory | shapes.TypedFact


def _fact(conn: sqlite3.Connection, fact_id: str) -> shapes.TypedFact:
    row = conn.execute(f"SELECT {shapes.FACT_COLUMNS} FROM fact WHERE id = ?",
                       (fact_id,)).fetchone()
    if row is None:
        raise NotFound(f"no memory or fact with id {fact_id}")
    return shapes.typed_fact(shapes.fact(row))


def _memory(conn: sqlite3.Connection, memory_id: str) -> shapes.TypedMemory:
    return shapes.typed_memory(memories.get_memory(conn, memory_id))


def _update_memory_column(conn: sqlite3.Connection, sql: str, value: Any, memory_id: str,
                          now: int | None) -> bool:
    with tx(conn):
        return conn.execute(sql, (value, _stamp(now), memory_id)).rowcount == 1


def pin(conn: sqlite3.Connection, memory_id: str, *, pinned: bool = True,
        now: int | None = None) -> shapes.TypedMemory:
    """Pin (or unpin) a memory: pinned memories lead every context block of their project."""
    if not _update_memory_column(conn, _PIN, int(pinned), memory_id, now):
        raise NotFound(f"no memory with id {memory_id}")
    return _memory(conn, memory_id)


def unpin(conn: sqlite3.Connection, memory_id: str, *, now: int | None = None) -> shapes.TypedMemory:
    return pin(conn, memory_id, pinned=False, now=now)


def dismiss(conn: sqlite3.Connection, item_id: str, *, undo: bool = False,
            now: int | None = None) -> Curated:
    """Hide a memory (or a fact) from search, timelines and context; the row is kept."""
    stamp = _stamp(now)
    if _update_memory_column(conn, _DISMISS, None if undo else stamp, item_id, stamp):
        return _memory(conn, item_id)
    with tx(conn):
        row = conn.execute(_FACT_EXISTS, (item_id,)).fetchone()
        if row is None:
            raise NotFound(f"no memory or fact with id {item_id}")
        if row[0] == "superseded":
            raise InvalidInput(f"fact {item_id} was superseded by a newer one")
        conn.execute(_FACT_STATUS, ("active" if undo else "dismissed", stamp, item_id))
    return _fact(conn, item_id)


def promote(conn: sqlite3.Connection, item_id: str, *, scope: str = "global",
            now: int | None = None) -> Curated:
    """Give a memory (or fact) global scope, so every project's search and context can see it;
    ``scope="project"`` takes it back to its own project."""
    if scope not in vocab.SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(vocab.SCOPES)}")
    if _update_memory_column(conn, _MEMORY_SCOPE, scope, item_id, now):
        return _memory(conn, item_id)
    with tx(conn):
        if conn.execute(_FACT_SCOPE, (scope, _stamp(now), item_id)).rowcount == 0:
            raise NotFound(f"no memory or fact with id {item_id}")
    return _fact(conn, item_id)


def edit(conn: sqlite3.Connection, memory_id: str, changes: Mapping[str, Any], *,
         now: int | None = None) -> shapes.TypedMemory:
    """Change a memory's title, narrative, … through the store (redacted, capped)."""
    if not changes:
        raise InvalidInput("nothing to change")
    store.update_memory(conn, memory_id, changes, now=now)
    return _memory(conn, memory_id)
