"""Plain FTS5 BM25, the baseline every recall figure is printed beside (in the same run, on
the same data): the same tokenizer as the store's index, the search
service's stop words out, an OR of the remaining words, default BM25 over the same memories'
title, subtitle, narrative, facts and concepts, project filter in the SQL.  No re-ranking,
no facts index, no fusion.

It reads a copy of the store's memories into an in-memory FTS5 table, so it never depends on
how the store's own index is laid out (which the search work changes).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

TOKENIZE = "porter unicode61 remove_diacritics 2"
_COLUMNS = ("title", "subtitle", "narrative", "facts", "concepts")


def _text(value: str) -> str:
    """facts/concepts are stored as JSON lists: index their words, not their brackets."""
    if value.startswith("["):
        try:
            items = json.loads(value)
        except ValueError:
            return value
        if isinstance(items, list):
            return "\n".join(str(i) for i in items)
    return value


class PlainBM25:
    def __init__(self, rows: Iterable[tuple[str, str, str, str, str, str, str]]) -> None:
        """``rows``: (id, project, title, subtitle, narrative, facts, concepts)."""
        self.db = sqlite3.connect(":memory:")
        self.db.execute(
            f"CREATE VIRTUAL TABLE plain USING fts5({', '.join(_COLUMNS)}, id UNINDEXED, "
            f"project UNINDEXED, tokenize='{TOKENIZE}')")
        self.db.executemany(
            "INSERT INTO plain(id, project, title, subtitle, narrative, facts, concepts) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            ((r[0], r[1], r[2], r[3], r[4], _text(r[5]), _text(r[6])) for r in rows))
        self.size = int(self.db.execute("SELECT count(*) FROM plain").fetchone()[0])

    @classmethod
    def from_store(cls, conn: sqlite3.Connection, project: str | None = None) -> PlainBM25:
        """Every live (not dismissed) memory of the store, or of ``project`` alone (then its
        statistics are the project's own, as a project-scoped search's are)."""
        where, params = ("AND project = ?", (project,)) if project is not None else ("", ())
        return cls(conn.execute(
            f"SELECT id, project, {', '.join(_COLUMNS)} FROM memory WHERE dismissed_at IS NULL "
            f"{where}", params))

    def search(self, query: str, project: str | None = None, limit: int = 10) -> list[str]:
        from aletheia.search import content_words

        words = content_words(query)
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        if project is None:
            rows = self.db.execute(
                "SELECT id FROM plain WHERE plain MATCH ? ORDER BY bm25(plain) LIMIT ?",
                (match, limit))
        else:
            rows = self.db.execute(
                "SELECT id FROM plain WHERE plain MATCH ? AND project = ? ORDER BY bm25(plain) "
                "LIMIT ?", (match, project, limit))
        return [r[0] for r in rows]

    def close(self) -> None:
        self.db.close()
