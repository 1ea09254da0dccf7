"""What an unread memory says it changed ("Switch the JWTs from HS256 to RS256" → HS256), kept
once computed.  Search reads it for its best unread candidates on every query
(``search.STATED_CHANGES``); working it out runs the change patterns of ``aletheia.changes``,
~0.25 ms a memory and most of a scoped query's tail at 50,000 memories (bench/scale.py).

Written by the first search that needs it, not by the hook: the patterns and the modules they
import would cost every Stop hook ~20 ms, and only what search actually meets is worth it.  A
row holds for the rules it was computed with (``rules()``: a digest of changes.py and the stop
words), so an upgrade that changes them recomputes instead of trusting it; triggers (schema 10)
drop a row when its memory is edited or erased.  Storing is best-effort: a busy or read-only
store just computes again next time, and the ranking is the same either way."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from pathlib import Path

# (CPython's built-in sha256, as the tombstones take it: hashlib loads OpenSSL first, a few ms
# of every prompt the hook answers)
from aletheia.tombstones import sha256

# The part of a memory read (prompts and answers say a change first): narrative head, title,
# subtitle, concepts.
HEAD = 600
_READ = (
    "SELECT m.id, m.rowid, m.content_hash, s.rules, s.olds, substr(m.narrative, 1, {head}), "
    "m.title, m.subtitle, m.concepts FROM memory m LEFT JOIN memory_stated s ON s.rowid = m.rowid "
    "WHERE m.id IN ({marks}) AND m.extracted_at IS NULL"
)
# Only for the memory as it was read (an edit in between deletes the row and changes the hash).
_STORE = (
    "INSERT OR REPLACE INTO memory_stated(rowid, rules, olds) SELECT ?, ?, ? "
    "WHERE EXISTS (SELECT 1 FROM memory WHERE rowid = ? AND content_hash = ?)"
)
_RULES: list[str] = []


def rules() -> str:
    """A digest of what decides the olds: changes.py's source, the stop words, the head read."""
    if not _RULES:
        from importlib.util import find_spec

        from aletheia.search import STOP_WORDS

        digest = sha256(f"{HEAD}\n{' '.join(sorted(STOP_WORDS))}\n".encode())
        spec = find_spec("aletheia.changes")  # (its source, without importing it)
        try:
            digest.update(Path(str(spec.origin if spec else "")).read_bytes())
        except OSError:
            digest.update(os.urandom(16))  # no source to read: this process's rows only
        _RULES.append(digest.hexdigest()[:16])
    return _RULES[0]


def head_text(narrative_head: str | None, title: str | None, subtitle: str | None,
              concepts: str | None) -> str:
    return "\n".join(str(x or "") for x in (narrative_head, title, subtitle, concepts))


def unread_olds(conn: sqlite3.Connection, ids: Sequence[str]) -> dict[str, list[str]]:
    """For each of ``ids`` the worker has not read yet: the values it says it replaced
    (``changes.stated_olds`` of its head), from the kept row or worked out and kept."""
    if not ids:
        return {}
    out: dict[str, list[str]] = {}
    new: list[tuple[int, str, str, int, str]] = []
    sql = _READ.format(head=HEAD, marks=",".join("?" * len(ids)))
    for r in conn.execute(sql, ids):
        key = rules()
        if r[3] == key:
            out[str(r[0])] = json.loads(r[4])
            continue
        # (imported only here: once the worker has read everything, search never needs it)
        from aletheia.changes import stated_olds

        olds = stated_olds(head_text(r[5], r[6], r[7], r[8]))
        out[str(r[0])] = olds
        new.append((int(r[1]), key, json.dumps(olds), int(r[1]), str(r[2])))
    if new:
        _keep(conn, new)
    return out


def _keep(conn: sqlite3.Connection, rows: Sequence[tuple[object, ...]], sql: str = _STORE) -> None:
    """Store without waiting: a search never queues behind a writer for a cache."""
    if conn.in_transaction:
        return  # (inside someone's transaction: not ours to commit)
    try:
        busy = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(sql, rows)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        finally:
            conn.execute(f"PRAGMA busy_timeout = {busy}")
    except sqlite3.Error:
        pass  # locked, read-only or older schema: computed again next time


# --- the tool of a purpose ----------------------------------------------------------------------
# What a prompt or an answer says of the tool of each purpose (``claims.tool_claims``: "switched
# the tests over to Vitest") and what a command installs (``claims.installed_tools``), for
# ``search._tool_changes``, which reads them for its best candidates on every query that names a
# purpose.  Kept like the olds (schema 13), under their own rules: a digest of claims.py,
# changes.py and concepts.py.  Whole, for every purpose: the one a query names is picked here.
_CLAIMS_READ = (
    "SELECT m.id, m.rowid, m.content_hash, m.kind, c.rules, c.named, c.claims, substr(m.narrative, 1, {head}), "
    "m.title, m.subtitle, m.concepts FROM memory m LEFT JOIN memory_claims c ON c.rowid = m.rowid "
    "WHERE m.id IN ({marks})"
)
_CLAIMS_STORE = (
    "INSERT OR REPLACE INTO memory_claims(rowid, rules, named, claims) SELECT ?, ?, ?, ? "
    "WHERE EXISTS (SELECT 1 FROM memory WHERE rowid = ? AND content_hash = ?)"
)
_CLAIMS_RULES: list[str] = []


def claims_rules() -> str:
    """A digest of what decides the claims: claims.py's, changes.py's and concepts.py's source and
    the head read."""
    if not _CLAIMS_RULES:
        from importlib.util import find_spec

        digest = sha256(f"{HEAD}\n".encode())
        for module in ("aletheia.claims", "aletheia.changes", "aletheia.concepts"):
            spec = find_spec(module)
            try:
                digest.update(Path(str(spec.origin if spec else "")).read_bytes())
            except OSError:
                digest.update(os.urandom(16))
        _CLAIMS_RULES.append(digest.hexdigest()[:16])
    return _CLAIMS_RULES[0]


def tool_claims(conn: sqlite3.Connection, ids: Sequence[str],
                purposes: tuple[str, ...]) -> dict[str, dict[str, tuple[str, bool]]]:
    """For each of ``ids``: what ``claims.tool_claims`` says of its head for ``purposes`` (a
    tool event: what ``claims.installed_tools`` reads in its command), from the kept row or
    worked out and kept."""
    if not ids:
        return {}
    out: dict[str, dict[str, tuple[str, bool]]] = {}
    new: list[tuple[int, str, str, str, int, str]] = []
    key = claims_rules()
    sql = _CLAIMS_READ.format(head=HEAD, marks=",".join("?" * len(ids)))
    for r in conn.execute(sql, list(ids)):
        if r[4] == key:
            named, whole = json.loads(r[5]), {p: (str(v[0]), bool(v[1])) for p, v in json.loads(r[6]).items()}
        else:
            from aletheia.claims import installed_tools, named_tools
            from aletheia.claims import tool_claims as claimed

            text = head_text(r[7], r[8], r[9], r[10])
            if str(r[3]) == "tool_event":
                named, whole = None, installed_tools(text.split("\n", 1)[0])
            else:
                # (every purpose's: the query's are picked below, as tool_claims picks them)
                named, whole = sorted(named_tools(text)), claimed(text)
            new.append((int(r[1]), key, json.dumps(named), json.dumps(whole), int(r[1]), str(r[2])))
        if named is not None and not set(named) & set(purposes):
            whole = {}  # (it names no tool of what is asked: tool_claims reads nothing)
        out[str(r[0])] = whole
    if new:
        _keep(conn, new, _CLAIMS_STORE)
    return out
