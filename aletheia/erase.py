"""Erase: delete memories for good (rows, FTS entries, derived facts, emptied sessions) and
return a signed receipt.

Unlike dismiss, nothing is kept.  FTS5 keeps a deleted row's terms in its index segments until
they are merged, so every erase ends with an FTS ``optimize`` (a full merge) and a WAL
checkpoint; with ``secure_delete`` on, the freed pages are zeroed, so the erased text is no
longer in the bytes of hub.db or its WAL.  SQLite 3.40 (Debian 12) has no FTS5 'secure-delete'
option, which is why the merge is needed.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any

from aletheia import blocks, ids, receipts, spool, store, tombstones
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
    # Precomputed context blocks may quote what was erased: gone too (rebuilt on next read);
    # so does the injection log of a session that is gone.
    blocks.forget()
    for sid in body.get("session_ids", []):
        with contextlib.suppress(OSError):
            os.unlink(blocks.session_file(sid))
    # A spooled line a replay could not write is kept byte for byte (a retry writes it): one
    # of what was erased, or quoting it, goes too.
    with contextlib.suppress(OSError):
        _forget_quarantined(conn, body, session_id=session_id, project=project)
    receipt["checkpointed"] = compact_store(conn) if compact else False
    return receipt


def _forget_quarantined(conn: sqlite3.Connection, body: dict[str, Any], *, session_id: str | None,
                        project: str | None) -> int:
    """Drop the quarantined spool lines of an erased session, memory or project, and those that
    share an 8-word window with the erased text. Returns how many went."""
    from aletheia import spool_quarantine

    entries = spool_quarantine.entries()
    if not entries:
        return 0
    names = {*body.get("session_ids", []), *body.get("memory_ids", []), *body.get("fact_ids", [])}
    if session_id:
        names.add(session_id)
    stored = tombstones.receipt_shingles(conn, body["id"])
    drop = []
    for entry in entries:
        text = entry.line.decode("utf-8", "replace")
        try:
            item = json.loads(text)
        except ValueError:
            item = None
        row = item.get("row") if isinstance(item, dict) else None
        if isinstance(row, dict):
            said = "\n".join(str(row.get(k) or "") for k in ("title", "subtitle", "narrative", "facts", "concepts"))
            mine = row.get("session_id") in names or row.get("id") in names or (
                project is not None and row.get("project") == project)
        else:
            said = text
            mine = any(name in text for name in names) or (project is not None and json.dumps(project) in text)
        if mine or tombstones.copies(said, stored):
            drop.append(entry.id)
    if drop:
        spool_quarantine.take(drop)
    return len(drop)


_MEM_COLS = ("SELECT rowid, id, session_id, project, kind, source, title, subtitle, narrative, "
             "facts, concepts, content_hash FROM memory")
# What the worker wrote from captured memories (summaries): rebuilt from what stays, and buried
# only when it quotes what was erased.
_DERIVED = "(source = 'worker' OR kind IN ('summary', 'project_summary'))"
_FACT_COLS = "SELECT rowid, id, project, session_id, text, source_ids, content_hash FROM fact"


def _memory_text(r: sqlite3.Row) -> str:
    return "\n".join(str(r[k] or "") for k in ("title", "subtitle", "narrative", "facts", "concepts"))


def _sources(value: Any) -> list[str]:
    try:
        return [s for s in json.loads(value or "[]") if isinstance(s, str)]
    except ValueError:
        return []


def check_selection(conn: sqlite3.Connection, *, ids_: Sequence[str] = (),
                    session_id: str | None = None) -> None:
    """Raise NotFound for ids or a session that do not exist (what erase would refuse), so a
    caller can say so before it asks the user to confirm."""
    if ids_:
        _known_rows(conn, list(dict.fromkeys(ids_)))
    if session_id:
        _session_rows(conn, session_id)


def _known_rows(conn: sqlite3.Connection,
                ids_: list[str]) -> tuple[list[sqlite3.Row], list[sqlite3.Row]]:
    memories = _rows_by_ids(conn, _MEM_COLS + " WHERE id IN ({marks})", ids_)
    facts = _rows_by_ids(conn, _FACT_COLS + " WHERE id IN ({marks})", ids_)
    known = {r["id"] for r in memories} | {r["id"] for r in facts}
    missing = [i for i in ids_ if i not in known]
    if missing:
        raise NotFound(f"no memory or fact with id {', '.join(missing[:5])}")
    return memories, facts


def _session_rows(conn: sqlite3.Connection,
                  session_id: str) -> tuple[list[sqlite3.Row], list[sqlite3.Row]]:
    memories = conn.execute(_MEM_COLS + " WHERE session_id = ?", (session_id,)).fetchall()
    facts = conn.execute(_FACT_COLS + " WHERE session_id = ?", (session_id,)).fetchall()
    if not memories and not facts and not conn.execute(
        "SELECT 1 FROM session WHERE id = ?", (session_id,)
    ).fetchone():
        raise NotFound(f"no session with id {session_id}")
    return memories, facts


def _erase_locked(conn: sqlite3.Connection, *, ids_: list[str], project: str | None,
                  session_id: str | None, stamp: int) -> dict[str, Any]:
    """Delete the chosen rows and everything derived from them, bury their hashes, and return
    the receipt body.  Derived means: every version (live or superseded) of the summaries of
    the sessions touched and of their projects' summaries, every fact that drew on an erased
    memory, and any worker-written row or fact that quotes the erased text (shares an 8-word
    window with it).  What stays of a touched session is re-extracted by the worker, so its
    summary and facts are rebuilt without what was erased."""
    receipt_id = ids.new_id(stamp)
    if ids_:
        memories, facts = _known_rows(conn, ids_)
        selector: dict[str, Any] = {"ids": ids_}
    elif session_id:
        memories, facts = _session_rows(conn, session_id)
        selector = {"session_id": session_id}
    else:
        memories = conn.execute(_MEM_COLS + " WHERE project = ?", (project,)).fetchall()
        facts = conn.execute(_FACT_COLS + " WHERE project = ?", (project,)).fetchall()
        selector = {"project": project}

    chosen: dict[str, sqlite3.Row] = {r["id"]: r for r in memories}
    projects = sorted({r["project"] for r in memories} | {f["project"] for f in facts}
                      | ({project} if project else set()))
    # The same words captured twice in a project (a retried prompt, a note saved again) are
    # the same text: erasing one erases both.
    buried_text = {h for r in chosen.values()
                   if (h := tombstones.text_hash(r["project"], r["title"] or "", r["narrative"] or ""))}
    if buried_text:
        for r in _rows_by_ids(conn, _MEM_COLS + " WHERE project IN ({marks})", projects):
            if r["id"] not in chosen and tombstones.text_hash(
                    r["project"], r["title"] or "", r["narrative"] or "") in buried_text:
                chosen[r["id"]] = r
    sessions = {r["session_id"] for r in chosen.values() if r["session_id"]}
    if session_id:
        sessions.add(session_id)

    quoted: set[int] = set()
    for r in chosen.values():
        quoted |= tombstones.long_shingles(_memory_text(r))
    for f in facts:
        quoted |= tombstones.long_shingles(f["text"])
    # Words only the erased rows say (no other captured memory of these projects holds them):
    # a derived row or fact that carries one of them carries erased content, however short.
    # (Only to decide here what goes and what is buried: a receipt keeps the 8-word windows,
    # which single words common to templates cannot match by accident.)
    captured = {k: r for k, r in chosen.items() if not _is_derived(r)}
    only = _erased_only_words(conn, captured, [f["text"] for f in facts], projects)

    def quotes(text: str) -> bool:
        return bool(quoted and tombstones.long_shingles(text) & quoted) or bool(
            only and set(tombstones.words(text)) & only)

    # Derived memories: summaries of the touched sessions and of the touched projects, every
    # version; and any other worker-written memory of these projects that quotes erased text.
    derived: dict[str, sqlite3.Row] = {}
    quoting: list[sqlite3.Row] = []  # derived rows that hold erased words: buried too
    rebuild: set[str] = set()
    for r in _rows_by_ids(conn, _MEM_COLS + f" WHERE {_DERIVED} AND project IN ({{marks}})",
                          projects):
        if r["id"] in chosen:
            continue
        quoting_row = quotes(_memory_text(r))
        if quoting_row:
            quoting.append(r)
        if r["kind"] == "project_summary" or r["session_id"] in sessions or quoting_row:
            derived[r["id"]] = r
            if r["session_id"]:
                rebuild.add(r["session_id"])

    # Facts: the chosen ones; those that drew on an erased memory (the sessions of their other
    # sources are re-extracted, so what those still support comes back without the erased
    # part); and any that quote erased text.
    fact_drop: dict[str, sqlite3.Row] = {f["id"]: f for f in facts}
    quoting_facts: list[sqlite3.Row] = []
    gone = set(chosen) | set(derived)
    owners: dict[str, str | None] = {}
    for f in _rows_by_ids(conn, _FACT_COLS + " WHERE project IN ({marks}) OR scope = 'global'",
                          projects):
        if f["id"] in fact_drop:
            continue
        sources = _sources(f["source_ids"])
        if any(s in gone for s in sources):
            fact_drop[f["id"]] = f
            if quotes(f["text"]):
                quoting_facts.append(f)
            rest = [s for s in sources if s not in gone]
            for chunk in _chunks(rest):
                owners.update(conn.execute(
                    f"SELECT id, session_id FROM memory WHERE id IN ({','.join('?' * len(chunk))})",
                    list(chunk)).fetchall())
        elif quotes(f["text"]):
            fact_drop[f["id"]] = f
            quoting_facts.append(f)
    rebuild |= {sid for sid in owners.values() if sid}

    tables = _existing_tables(conn)
    everything = {**chosen, **derived}
    memory_ids = sorted(everything)
    fact_ids = sorted(fact_drop)
    for table in VECTOR_TABLES["memory"]:
        if table in tables:
            _delete_rowids(conn, table, [everything[i]["rowid"] for i in memory_ids])
    for table in VECTOR_TABLES["fact"]:
        if table in tables:
            _delete_rowids(conn, table, [fact_drop[i]["rowid"] for i in fact_ids])
    # The delete triggers remove each row's FTS entries (memory_fts, fact_fts).
    for chunk in _chunks(memory_ids):
        conn.execute(f"DELETE FROM memory WHERE id IN ({','.join('?' * len(chunk))})", list(chunk))
    for chunk in _chunks(fact_ids):
        conn.execute(f"DELETE FROM fact WHERE id IN ({','.join('?' * len(chunk))})", list(chunk))
        # A fact that an erased one had superseded is current again: what changed the choice
        # is gone (the re-extraction of what stays may supersede it again).
        conn.execute(
            "UPDATE fact SET status = 'active', superseded_by = NULL, updated_at = ? "
            f"WHERE status = 'superseded' AND superseded_by IN ({','.join('?' * len(chunk))})",
            [stamp, *chunk])

    # Sessions: one with nothing captured left goes (with its queue entries and jobs); the
    # others forget the erased first prompt and are queued to be extracted again from what
    # is left, which rebuilds their summary and facts.
    touched = sessions | rebuild
    if project:
        touched |= {r[0] for r in conn.execute("SELECT id FROM session WHERE project = ?", (project,))}
    emptied = {sid for sid in touched if not conn.execute(
        f"SELECT 1 FROM memory WHERE session_id = ? AND NOT {_DERIVED} LIMIT 1", (sid,)).fetchone()}
    for sid in sorted(emptied):
        conn.execute("DELETE FROM session WHERE id = ?", (sid,))
        conn.execute("DELETE FROM stop_queue WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM job WHERE session_id = ?", (sid,))
    requeued = 0
    for sid in sorted(touched - emptied):
        conn.execute(
            "UPDATE session SET first_request = (SELECT title FROM memory WHERE session_id = ?1 "
            "AND kind = 'prompt' ORDER BY created_at, id LIMIT 1), summary_memory_id = CASE WHEN "
            "summary_memory_id IN (SELECT id FROM memory) THEN summary_memory_id END WHERE id = ?1",
            (sid,),
        )
        conn.execute(f"UPDATE memory SET extracted_at = NULL WHERE session_id = ? AND NOT {_DERIVED}",
                     (sid,))
        row = conn.execute("SELECT project, tool FROM session WHERE id = ?", (sid,)).fetchone()
        if row is not None:
            store.requeue(conn, sid, row["project"], row["tool"], now=stamp)
            requeued += 1
    rules = 0
    if project:
        rules = conn.execute("DELETE FROM rule WHERE project = ?", (project,)).rowcount
    # A project that still has sessions gets its summary back at once, from what is left.
    for name in projects:
        if name != project and conn.execute("SELECT 1 FROM session WHERE project = ? LIMIT 1",
                                            (name,)).fetchone():
            _rewrite_project_summary(conn, name, stamp)

    # Tombstones: hashes of what the user chose (and its same-text copies), and of derived rows
    # that quote it (an old bundle must not bring those back); not of derived rows that merely
    # summarised a touched session (their rebuild may well be the same text).
    buried: list[tuple[str, str]] = []
    for r in [*chosen.values(), *quoting]:
        buried.append((r["content_hash"], "content"))
        text = tombstones.text_hash(r["project"], r["title"] or "", r["narrative"] or "")
        if text:
            buried.append((text, "text"))
    for f in [*facts, *quoting_facts]:
        buried.append((tombstones.fact_key(f["project"], f["content_hash"]), "fact"))
    for sid in sorted(({session_id} if session_id else set()) | (touched if project else set())):
        buried.append((tombstones.session_hash(sid), "session"))
    tombstones.bury(conn, buried, receipt_id, stamp)
    tombstones.keep_shingles(conn, receipt_id, quoted)

    marks = {t: conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {t}").fetchone()[0]
             for t in ("memory", "fact")}
    return {
        "id": receipt_id,
        "type": "erase",
        "created_at": stamp,
        "created": ids.iso(stamp),
        "selector": selector,
        "projects": projects,
        "counts": {
            "memories": len(chosen),
            "derived": len(derived),
            "facts": len(fact_ids),
            "sessions": len(emptied),
            "sessions_rebuilt": requeued,
            "rules": rules,
            "fts_entries": len(memory_ids) + len(fact_ids),
            "tombstones": len(buried),
        },
        "memory_ids": memory_ids,
        "fact_ids": fact_ids,
        "session_ids": sorted(emptied),
        # Rows added after the erase have larger rowids: verify checks those for copies.
        "watermark": marks,
    }


_ONLY_MIN = 4  # shorter words are too common to tell anything


def _is_derived(r: sqlite3.Row) -> bool:
    return bool(r["source"] == "worker" or r["kind"] in ("summary", "project_summary"))


def _erased_only_words(conn: sqlite3.Connection, chosen: dict[str, sqlite3.Row],
                       fact_texts: list[str], projects: list[str]) -> set[str]:
    """The words of the erased text that no remaining captured memory of ``projects`` holds
    (looked up in the full-text index, which stems: a near form elsewhere keeps a word)."""
    candidates: set[str] = set()
    for text in [*(_memory_text(r) for r in chosen.values()), *fact_texts]:
        candidates.update(w for w in tombstones.words(text) if len(w) >= _ONLY_MIN)
    if not candidates or not projects:
        return set()
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS erase_chosen(rowid INTEGER PRIMARY KEY)")
    conn.execute("DELETE FROM temp.erase_chosen")
    conn.executemany("INSERT OR IGNORE INTO temp.erase_chosen(rowid) VALUES (?)",
                     [(r["rowid"],) for r in chosen.values()])
    marks = ",".join("?" * len(projects))
    sql = (f"SELECT 1 FROM memory_fts JOIN memory m ON m.rowid = memory_fts.rowid "
           f"WHERE memory_fts MATCH ? AND m.project IN ({marks}) AND NOT {_DERIVED.replace('source', 'm.source').replace('kind', 'm.kind')} "
           "AND m.rowid NOT IN (SELECT rowid FROM temp.erase_chosen) LIMIT 1")
    only = set()
    for word in sorted(candidates):
        term = '"' + word.replace('"', '""') + '"'
        try:
            found = conn.execute(sql, (term, *projects)).fetchone()
        except sqlite3.OperationalError:
            continue  # a word FTS5 cannot take as a term: keep it out rather than guess
        if found is None:
            only.add(word)
    conn.execute("DELETE FROM temp.erase_chosen")
    return only


def _delete_rowids(conn: sqlite3.Connection, table: str, rowids: Sequence[int]) -> None:
    for chunk in _chunks(list(rowids)):
        conn.execute(f"DELETE FROM {table} WHERE rowid IN ({','.join('?' * len(chunk))})", list(chunk))


def _rewrite_project_summary(conn: sqlite3.Connection, project: str, stamp: int) -> None:
    from aletheia.extract.project import project_summary

    draft = project_summary(conn, project)
    store.write_memory(conn, store.MemoryIn(
        project=project, kind="project_summary", title=draft.title, narrative=draft.narrative,
        concepts=draft.concepts, facts=draft.facts, source="worker", created_at=stamp,
    ), now=stamp)


def compact_store(conn: sqlite3.Connection) -> bool:
    """Merge the FTS indexes (dropping deleted rows' terms) and checkpoint the WAL into hub.db,
    truncating it.  Returns False when a reader kept the checkpoint from completing (the WAL
    keeps its frames until the next complete checkpoint)."""
    fts = [r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%fts5%'")]
    for table in fts:
        with tx(conn):
            conn.execute(f"INSERT INTO {table}({table}) VALUES ('optimize')")
    busy, _log, _done = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return not busy
