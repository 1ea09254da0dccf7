"""The one search service: every interface (CLI, REST, MCP, dashboard) calls ``search``.

Query shaping → FTS5 BM25 over memories and, separately, over facts → reciprocal rank
fusion (facts 1.0, memories 0.9).  Filters apply inside the SQL, before ranking.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import asdict, dataclass, field
from typing import Any

from aletheia import ids
from aletheia.errors import InvalidInput

# BM25 column weights: title, subtitle, narrative, facts, concepts.
MEMORY_WEIGHTS = (4.0, 2.0, 1.0, 3.0, 2.0)
RRF_K = 60
FACT_WEIGHT = 1.0
MEMORY_WEIGHT = 0.9
MAX_TERMS = 12
COMMON_SHARE = 0.20
MAX_LIMIT = 200

STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren as at be because been before
    being below between both but by can cannot could did didn do does doesn doing don down during
    each few for from further had has have having he her here hers herself him himself his how i
    if in into is isn it its itself just let me more most my myself no nor not of off on once only
    or other ought our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was
    we were what when where which while who whom why will with would you your yours yourself
    yourselves s t ll ve re d m o y ain also us got get""".split()
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?", re.UNICODE)


@dataclass
class SearchQuery:
    q: str
    project: str | None = None
    scope: str | None = None
    kind: str | None = None
    tool: str | None = None
    session_id: str | None = None
    since: int | None = None
    until: int | None = None
    pinned: bool | None = None
    include_dismissed: bool = False
    include_facts: bool = True
    limit: int = 10


@dataclass
class Hit:
    id: str
    type: str  # "memory" or "fact"
    score: float
    title: str
    kind: str
    project: str
    created_at: int
    snippet: str = ""
    session_id: str | None = None
    source_ids: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["created"] = ids.iso(self.created_at)
        return out


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def content_words(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for w in words(text):
        w = w.replace("’", "'")
        if "'" in w:
            w = w.split("'", 1)[0]
        if w and w not in STOP_WORDS and w not in seen:
            seen[w] = None
    return list(seen)


def _fts_term(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def _doc_freq(conn: sqlite3.Connection, word: str) -> int:
    row = conn.execute(
        "SELECT count(*) FROM memory_fts WHERE memory_fts MATCH ?", (_fts_term(word),)
    ).fetchone()
    return int(row[0])


def shape_query(conn: sqlite3.Connection, text: str, scope_size: int) -> list[str]:
    """Content words, the too-common ones dropped while a rarer one remains, the rarest 12 kept."""
    terms = content_words(text)
    if not terms:
        return []
    freqs = {t: _doc_freq(conn, t) for t in terms}
    terms.sort(key=lambda t: freqs[t])
    if scope_size > 0:
        rare = [t for t in terms if freqs[t] <= COMMON_SHARE * scope_size]
        if rare:
            terms = rare
    return terms[:MAX_TERMS]


def _filters(query: SearchQuery, alias: str, *, facts: bool = False) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    if query.project:
        clauses.append(f"({alias}.project = ? OR {alias}.scope = 'global')")
        params.append(query.project)
    if query.scope:
        clauses.append(f"{alias}.scope = ?")
        params.append(query.scope)
    if query.since is not None:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(query.since)
    if query.until is not None:
        clauses.append(f"{alias}.created_at < ?")
        params.append(query.until)
    if query.session_id:
        clauses.append(f"{alias}.session_id = ?")
        params.append(query.session_id)
    if facts:
        if not query.include_dismissed:
            clauses.append(f"{alias}.status = 'active'")
    else:
        if query.kind:
            clauses.append(f"{alias}.kind = ?")
            params.append(query.kind)
        if query.tool:
            clauses.append(f"{alias}.tool = ?")
            params.append(query.tool)
        if query.pinned is not None:
            clauses.append(f"{alias}.pinned = ?")
            params.append(1 if query.pinned else 0)
        if not query.include_dismissed:
            clauses.append(f"{alias}.dismissed_at IS NULL")
    return (" AND " + " AND ".join(clauses)) if clauses else "", params


def _validate(query: SearchQuery) -> None:
    if not isinstance(query.q, str) or not query.q.strip():
        raise InvalidInput("the query must not be empty")
    if len(query.q) > 2000:
        raise InvalidInput("the query is longer than 2000 characters")
    if not 1 <= query.limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}")


def search(conn: sqlite3.Connection, query: SearchQuery) -> list[Hit]:
    _validate(query)
    scope_size = conn.execute("SELECT count(*) FROM memory").fetchone()[0]
    terms = shape_query(conn, query.q, scope_size)
    if not terms:
        return []
    match = " OR ".join(_fts_term(t) for t in terms)
    depth = max(50, query.limit * 3)
    weights = ", ".join(str(w) for w in MEMORY_WEIGHTS)
    where, params = _filters(query, "m")
    memory_rows = conn.execute(
        f"SELECT m.id, m.title, m.kind, m.project, m.created_at, m.session_id, "
        f"snippet(memory_fts, 2, '[', ']', '…', 12) AS snip, bm25(memory_fts, {weights}) AS rank "
        f"FROM memory_fts JOIN memory m ON m.rowid = memory_fts.rowid "
        f"WHERE memory_fts MATCH ?{where} ORDER BY rank LIMIT ?",
        (match, *params, depth),
    ).fetchall()
    fused: dict[str, tuple[float, Hit]] = {}
    for rank, r in enumerate(memory_rows):
        hit = Hit(r["id"], "memory", 0.0, r["title"], r["kind"], r["project"], r["created_at"],
                  r["snip"], r["session_id"])
        fused[hit.id] = (MEMORY_WEIGHT / (RRF_K + rank + 1), hit)
    if query.include_facts and not (query.kind or query.tool or query.pinned):
        import json

        fwhere, fparams = _filters(query, "f", facts=True)
        fact_rows = conn.execute(
            "SELECT f.id, f.text, f.kind, f.project, f.created_at, f.session_id, f.source_ids, "
            "bm25(fact_fts) AS rank FROM fact_fts JOIN fact f ON f.rowid = fact_fts.rowid "
            f"WHERE fact_fts MATCH ?{fwhere} ORDER BY rank LIMIT ?",
            (match, *fparams, depth),
        ).fetchall()
        for rank, r in enumerate(fact_rows):
            hit = Hit(r["id"], "fact", 0.0, r["text"], r["kind"], r["project"], r["created_at"],
                      r["text"], r["session_id"], json.loads(r["source_ids"] or "[]"))
            fused[hit.id] = (FACT_WEIGHT / (RRF_K + rank + 1), hit)
    ranked = sorted(fused.values(), key=lambda p: (-p[0], p[1].id))[: query.limit]
    out = []
    for score, hit in ranked:
        hit.score = round(score, 6)
        out.append(hit)
    return out
