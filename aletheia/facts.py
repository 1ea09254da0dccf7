"""The fact write API and reader: every fact enters hub.db through ``add_facts``.

It redacts the text, dedupes by a hash of the normalised text and merges near-duplicates
(character-trigram cosine similarity ≥ 0.92 with the same anchors, see ``similarity``) into
the fact already stored, so a re-run or a rephrasing never adds a second row.  Stdlib only.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import sqlite3
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aletheia import ids, tombstones
from aletheia.db import tx
from aletheia.errors import InvalidInput
from aletheia.redact import redact

if TYPE_CHECKING:
    from aletheia.pages import Page

KINDS = ("fact", "decision", "convention", "command", "error_fix", "file_role")
STATUSES = ("active", "superseded", "dismissed")
RULE_CONFIDENCE = 0.45
NEAR_DUPLICATE = 0.92
TEXT_CAP = 1000
SOURCE_IDS_CAP = 200
# How many full-text candidates a new fact is compared with (near-duplicates share almost
# every word, so they rank at the top of a BM25 OR-query over the fact's longest words).
_CANDIDATES = 12
_CANDIDATE_TERMS = 8
MAX_LIMIT = 1000


@dataclass
class FactIn:
    """A fact as an extractor hands it over (before redaction)."""

    project: str
    text: str
    kind: str = "fact"
    session_id: str | None = None
    source_ids: list[str] = field(default_factory=list)
    confidence: float = RULE_CONFIDENCE
    extractor: str = "rules"
    scope: str = "project"


@dataclass
class AddResult:
    added: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # existing facts that gained sources
    unchanged: int = 0  # already known (or dismissed): nothing to do

    def to_dict(self) -> dict[str, Any]:
        return {"added": len(self.added), "merged": len(self.merged), "unchanged": self.unchanged}


# --- text identity -----------------------------------------------------------------------

_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.;:,!]+$")
# Anchors: the parts of a coding fact where one character changes the meaning.
_CODE_SPAN = re.compile(r"`([^`]+)`")
_NUMBER = re.compile(r"\d+(?:\.\d+)*")
_PATHISH = re.compile(r"[\w.-]*[/\\][\w./\\-]+|\b[\w-]+\.[a-z]{1,5}\b")


def normalize(text: str) -> str:
    """Case-folded, NFKC, whitespace collapsed, trailing punctuation dropped."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return _TRAILING.sub("", _SPACE.sub(" ", text).strip())


def fact_hash(text: str) -> str:
    return hashlib.sha256(normalize(text).encode("utf-8", "surrogatepass")).hexdigest()


def _trigrams(text: str) -> Counter[str]:
    padded = f"  {normalize(text)} "
    return Counter(padded[i : i + 3] for i in range(len(padded) - 2))


def anchors(text: str) -> frozenset[str]:
    """Code spans, numbers and paths: two facts that differ in one of them are different facts
    (``port 8000`` vs ``port 8001``, ``test_a.py`` vs ``test_b.py``) however similar the prose."""
    norm = unicodedata.normalize("NFKC", text)
    found = {f"`{m.strip()}`" for m in _CODE_SPAN.findall(norm)}
    bare = _CODE_SPAN.sub(" ", norm)
    found.update(_NUMBER.findall(bare))
    found.update(p.strip("./\\").casefold() for p in _PATHISH.findall(bare))
    return frozenset(found)


def similarity(a: str, b: str) -> float:
    """Cosine similarity of the two texts' character-trigram count vectors (after
    ``normalize``), or 0.0 when their anchors differ.  Trigrams tolerate rephrasing at the
    edges ("passes" / "passed", an added article) while the anchor check keeps commands,
    numbers and paths exact."""
    if anchors(a) != anchors(b):
        return 0.0
    ta, tb = _trigrams(a), _trigrams(b)
    if not ta or not tb:
        return 0.0
    dot = sum(count * tb[gram] for gram, count in ta.items() if gram in tb)
    norm_a = math.sqrt(sum(c * c for c in ta.values()))
    norm_b = math.sqrt(sum(c * c for c in tb.values()))
    return dot / (norm_a * norm_b)


# --- writing ------------------------------------------------------------------------------

_BY_HASH = "SELECT rowid, id, status, source_ids, confidence FROM fact WHERE project = ? AND content_hash = ?"

_CANDIDATES_SQL = """
SELECT f.rowid, f.id, f.text, f.status, f.source_ids, f.confidence
FROM fact_fts JOIN fact f ON f.rowid = fact_fts.rowid
WHERE fact_fts MATCH ? AND f.project = ?
ORDER BY bm25(fact_fts) LIMIT ?
"""

_INSERT_FACT = """
INSERT INTO fact (id, project, scope, session_id, kind, text, confidence, source_ids, status,
                  extractor, content_hash, created_at, updated_at)
VALUES (:id, :project, :scope, :session_id, :kind, :text, :confidence, :source_ids, 'active',
        :extractor, :content_hash, :now, :now)
"""

_MERGE_INTO = "UPDATE fact SET source_ids = ?, confidence = ?, updated_at = ? WHERE rowid = ?"

_WORD = re.compile(r"[^\W_]{3,}", re.UNICODE)


def _clean_text(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidInput("a fact's text must be a string")
    text = " ".join(value.split())
    if len(text) > 4 * TEXT_CAP:
        text = text[: 4 * TEXT_CAP]  # bound redaction's cost; the final cut happens after it
    text = redact(text)
    if len(text) > TEXT_CAP:
        text = text[: TEXT_CAP - 1].rstrip() + "…"
    return text


def _validate(f: FactIn) -> None:
    if f.kind not in KINDS:
        raise InvalidInput(f"fact kind must be one of {', '.join(KINDS)}")
    if f.scope not in ("project", "global"):
        raise InvalidInput("scope must be project or global")
    if not isinstance(f.project, str) or not f.project.strip():
        raise InvalidInput("project must not be empty")
    if isinstance(f.confidence, bool) or not 0.0 <= float(f.confidence) <= 1.0:
        raise InvalidInput("confidence must be between 0 and 1")
    if not f.extractor:
        raise InvalidInput("extractor must not be empty")


def _union(existing: Sequence[str], new: Iterable[str]) -> list[str]:
    out = list(existing)
    seen = set(out)
    for item in new:
        if item not in seen and len(out) < SOURCE_IDS_CAP:
            seen.add(item)
            out.append(item)
    return out


def _fts_query(text: str) -> str | None:
    words = sorted({w.lower() for w in _WORD.findall(text)}, key=lambda w: (-len(w), w))
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words[:_CANDIDATE_TERMS])


def _near_duplicate(conn: sqlite3.Connection, project: str, text: str) -> sqlite3.Row | None:
    query = _fts_query(text)
    if query is None:
        return None
    best: tuple[float, sqlite3.Row] | None = None
    for row in conn.execute(_CANDIDATES_SQL, (query, project, _CANDIDATES)):
        score = similarity(text, row["text"])
        if score >= NEAR_DUPLICATE and (best is None or score > best[0]):
            best = (score, row)
    return best[1] if best else None


def _merge(
    conn: sqlite3.Connection, row: sqlite3.Row, f: FactIn, sources: list[str], now: int
) -> bool:
    """Fold ``f``'s sources into an active stored fact; False when nothing changes."""
    if row["status"] != "active":
        return False  # a dismissed (or superseded) fact stays down: no resurrection by re-run
    merged = _union(json.loads(row["source_ids"] or "[]"), sources)
    confidence = max(float(row["confidence"]), float(f.confidence))
    if merged == json.loads(row["source_ids"] or "[]") and confidence == float(row["confidence"]):
        return False
    conn.execute(_MERGE_INTO, (json.dumps(merged), confidence, now, row["rowid"]))
    return True


def add_facts(
    conn: sqlite3.Connection, facts: Iterable[FactIn], *, now: int | None = None
) -> AddResult:
    """Store ``facts`` in one transaction (or inside the caller's): redact, dedupe, merge."""
    stamp = ids.now_ms() if now is None else now
    items = list(facts)
    for f in items:
        _validate(f)
    result = AddResult()
    with tx(conn):
        for f in items:
            text = _clean_text(f.text)
            if len(text) < 3:
                continue
            project = redact(f.project.strip())
            sources = _union([], (s for s in f.source_ids if isinstance(s, str)))
            digest = fact_hash(text)
            if tombstones.blocked(conn, [tombstones.fact_key(project, digest)]):
                result.unchanged += 1  # erased for good: no import or re-run brings it back
                continue
            row = conn.execute(_BY_HASH, (project, digest)).fetchone()
            if row is None:
                row = _near_duplicate(conn, project, text)
            if row is not None:
                if _merge(conn, row, f, sources, stamp):
                    result.merged.append(row["id"])
                else:
                    result.unchanged += 1
                continue
            fact_id = ids.new_id(stamp)
            conn.execute(
                _INSERT_FACT,
                {
                    "id": fact_id, "project": project, "scope": f.scope,
                    "session_id": redact(f.session_id) if f.session_id else None,
                    "kind": f.kind, "text": text, "confidence": float(f.confidence),
                    "source_ids": json.dumps(sources), "extractor": f.extractor,
                    "content_hash": digest, "now": stamp,
                },
            )
            result.added.append(fact_id)
    return result


# --- reading ------------------------------------------------------------------------------

_COLUMNS = (
    "id, project, scope, session_id, kind, text, confidence, source_ids, status, extractor, "
    "created_at, updated_at"
)


def _row(row: sqlite3.Row) -> dict[str, Any]:
    out = dict(row)
    try:
        out["source_ids"] = json.loads(out.get("source_ids") or "[]")
    except ValueError:
        out["source_ids"] = []
    out["created"] = ids.iso(out["created_at"])
    return out


def page_facts(
    conn: sqlite3.Connection,
    *,
    project: str | None = None,
    status: str | None = "active",
    kind: str | None = None,
    session_id: str | None = None,
    limit: int = 100,
    cursor: str | None = None,
    max_limit: int = MAX_LIMIT,
) -> Page:
    """Facts newest first, one keyset page; ``project`` also shows global facts; ``status=None``
    shows all.  The one fact-list query: the CLI, REST, MCP and the dashboard all page through it."""
    from aletheia import pages

    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= max_limit:
        raise InvalidInput(f"limit must be between 1 and {max_limit}")
    if status is not None and status not in STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(STATUSES)}")
    if kind is not None and kind not in KINDS:
        raise InvalidInput(f"kind must be one of {', '.join(KINDS)}")
    clauses: list[str] = []
    params: list[Any] = []
    if project:
        clauses.append("(project = ? OR scope = 'global')")
        params.append(project)
    if status:
        clauses.append("status = ?")
        params.append(status)
    if kind:
        clauses.append("kind = ?")
        params.append(kind)
    if session_id:
        clauses.append("session_id = ?")
        params.append(session_id)
    after = pages.decode(cursor, (int, str))
    if after is not None:
        clauses.append("(created_at < ? OR (created_at = ? AND id < ?))")
        params.extend([after[0], after[0], after[1]])
    where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM fact{where} ORDER BY created_at DESC, id DESC LIMIT ?",
        (*params, limit + 1),
    ).fetchall()
    return pages.page([_row(r) for r in rows], limit, "created_at", "id")


def list_facts(
    conn: sqlite3.Connection,
    *,
    project: str | None = None,
    status: str | None = "active",
    kind: str | None = None,
    session_id: str | None = None,
    limit: int = 100,
) -> list[dict[str, Any]]:
    """The first page of ``page_facts`` as a list (what the CLI prints)."""
    return page_facts(conn, project=project, status=status, kind=kind, session_id=session_id,
                      limit=limit).items


def count_facts(conn: sqlite3.Connection, project: str | None = None) -> int:
    if project:
        return int(conn.execute(
            "SELECT count(*) FROM fact WHERE project = ? AND status = 'active'", (project,)
        ).fetchone()[0])
    return int(conn.execute("SELECT count(*) FROM fact WHERE status = 'active'").fetchone()[0])
