"""Bundles: move memories between machines or homes as JSON Lines.

Line 1 is a header (``{"type": "header", "format": "aletheia-bundle", "version": 1, …}``), then
one record per line: ``memory``, ``fact``, ``rule``, ``session``.  Import is idempotent by id,
validates every line before it writes anything, and writes memories through the store's one
write API (so a bundle made elsewhere is redacted here); facts, rules and sessions are
redacted with the same function.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from aletheia import __version__, bounds, ids, paths, store
from aletheia.db import tx
from aletheia.errors import InvalidInput
from aletheia.redact import redact

FORMAT = "aletheia-bundle"
VERSION = 1
RECORD_TYPES = ("memory", "fact", "rule", "session")
_BATCH = 1000

_MEMORY_COLUMNS = (
    "id, project, scope, session_id, tool, kind, title, subtitle, narrative, facts, concepts, "
    "files, created_at, updated_at, pinned, importance, dismissed_at, source, extracted_at"
)
_FACT_COLUMNS = (
    "id, project, scope, session_id, kind, text, confidence, source_ids, status, extractor, "
    "content_hash, created_at, updated_at, subject, value, session_ids, confirmed, stated, "
    "observed_at, superseded_by"
)
_RULE_COLUMNS = "id, project, text, enabled, tools, created_at, updated_at"
_SESSION_COLUMNS = (
    "id, project, tool, started_at, last_event_at, ended_at, first_request, summary_memory_id, "
    "event_count"
)
_MEMORY_STATE = (
    "UPDATE memory SET dismissed_at = ?, updated_at = ?, extracted_at = ? WHERE id = ?"
)
_INSERT_RULE = f"""
INSERT OR IGNORE INTO rule ({_RULE_COLUMNS})
VALUES (:id, :project, :text, :enabled, :tools, :created_at, :updated_at)
"""
_MERGE_SESSION = f"""
INSERT INTO session ({_SESSION_COLUMNS}) VALUES (
    :id, :project, :tool, :started_at, :last_event_at, :ended_at, :first_request,
    :summary_memory_id, :event_count)
ON CONFLICT(id) DO UPDATE SET
    started_at = min(session.started_at, excluded.started_at),
    last_event_at = max(session.last_event_at, excluded.last_event_at),
    ended_at = coalesce(session.ended_at, excluded.ended_at),
    first_request = coalesce(session.first_request, excluded.first_request),
    summary_memory_id = coalesce(session.summary_memory_id, excluded.summary_memory_id),
    event_count = max(session.event_count, excluded.event_count)
"""


_FIRST_REQUEST = """
UPDATE session SET first_request = (SELECT title FROM memory WHERE session_id = ?1
    AND kind = 'prompt' ORDER BY created_at, id LIMIT 1) WHERE id = ?1 AND first_request IS NULL
"""


@dataclass
class ImportReport:
    added: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RECORD_TYPES, 0))
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(RECORD_TYPES, 0))
    # Rules added by this import, as {id, text, project, enabled}: a rule is an instruction to
    # every later session, so the user is shown each one (and they arrive disabled by default).
    rules: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"added": self.added, "skipped": self.skipped, "rules": self.rules}


# -- export -----------------------------------------------------------------------------------

def _decode(row: sqlite3.Row, lists: tuple[str, ...] = ()) -> dict[str, Any]:
    out = dict(row)
    for name in lists:
        try:
            out[name] = json.loads(out[name] or "[]")
        except ValueError:
            out[name] = []
    return out


def export_records(conn: sqlite3.Connection, project: str | None = None, *,
                   now: int | None = None) -> Iterator[dict[str, Any]]:
    """The bundle's records: a header, then memories, facts, rules and sessions (of ``project``,
    or of every project when None).  Read in one snapshot, so the bundle is consistent."""
    where, params = ("WHERE project = ?", (project,)) if project else ("", ())
    # Rules without a project are global: they travel only with a full export.
    rule_where, rule_params = ("WHERE project = ?", (project,)) if project else ("", ())
    conn.execute("BEGIN")  # a read transaction: one snapshot for the whole export
    try:
        yield {"type": "header", "format": FORMAT, "version": VERSION,
               "exported_at": ids.now_ms() if now is None else now, "project": project,
               "aletheia": __version__}
        for r in conn.execute(f"SELECT {_MEMORY_COLUMNS} FROM memory {where} "
                              "ORDER BY created_at, id", params):
            rec = _decode(r, ("facts", "concepts", "files"))
            rec["pinned"] = bool(rec["pinned"])
            yield {"type": "memory", **rec}
        for r in conn.execute(f"SELECT {_FACT_COLUMNS} FROM fact {where} ORDER BY created_at, id",
                              params):
            rec = _decode(r, ("source_ids", "session_ids"))
            rec["stated"] = bool(rec["stated"])
            yield {"type": "fact", **rec}
        for r in conn.execute(f"SELECT {_RULE_COLUMNS} FROM rule {rule_where} "
                              "ORDER BY created_at, id", rule_params):
            rec = _decode(r, ("tools",))
            rec["enabled"] = bool(rec["enabled"])
            yield {"type": "rule", **rec}
        for r in conn.execute(f"SELECT {_SESSION_COLUMNS} FROM session {where} "
                              "ORDER BY started_at, id", params):
            yield {"type": "session", **dict(r)}
    finally:
        conn.execute("COMMIT")


def export_lines(conn: sqlite3.Connection, project: str | None = None) -> Iterator[str]:
    for rec in export_records(conn, project):
        yield json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n"


STREAM_CHUNK = 64 * 1024


def stream_lines(conn: sqlite3.Connection, project: str | None = None) -> Iterator[bytes]:
    """The bundle as chunks of about ``STREAM_CHUNK`` bytes, read from ``conn`` (which it
    closes at the end, or when the reader stops early)."""
    try:
        chunk: list[bytes] = []
        size = 0
        for line in export_lines(conn, project):
            data = line.encode("utf-8", "surrogatepass")
            chunk.append(data)
            size += len(data)
            if size >= STREAM_CHUNK:
                yield b"".join(chunk)
                chunk, size = [], 0
        if chunk:
            yield b"".join(chunk)
    finally:
        conn.close()


def export_to_file(conn: sqlite3.Connection, path: Path, project: str | None = None) -> dict[str, int]:
    """Write a bundle to ``path`` (created 0600: it holds the user's memories); return counts."""
    counts = dict.fromkeys(RECORD_TYPES, 0)
    tmp = path.with_name(path.name + ".part")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        for rec in export_records(conn, project):
            if rec["type"] in counts:
                counts[rec["type"]] += 1
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")
    os.replace(tmp, path)
    return counts


# -- import -----------------------------------------------------------------------------------

def _need(rec: dict[str, Any], name: str, kind: type | tuple[type, ...], where: str,
          *, optional: bool = False) -> Any:
    value = rec.get(name)
    if value is None and optional:
        return None
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise InvalidInput(f"{where}: {name} must be a number")
    if not isinstance(value, kind):
        raise InvalidInput(f"{where}: {name} is missing or has the wrong type")
    # Numbers are checked at this edge like at every other: times in the 0 … 2^48 ms window
    # (and not in the future), counts and weights finite and in range.
    if name.endswith("_at"):
        return bounds.timestamp_ms(value, f"{where}: {name}")
    if name in ("event_count", "confirmed"):
        return bounds.integer(value, f"{where}: {name}", 0, bounds.MAX_INT)
    if kind == (int, float):
        return bounds.finite(value, f"{where}: {name}", 0.0, 1.0)
    return value


def _str_list(value: Any, name: str, where: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidInput(f"{where}: {name} must be a list of strings")
    return value


def _memory(rec: dict[str, Any], where: str) -> tuple[dict[str, Any], tuple[Any, ...]]:
    memory_id = _need(rec, "id", str, where)
    item = store.MemoryIn(
        id=memory_id,
        project=_need(rec, "project", str, where),
        kind=_need(rec, "kind", str, where),
        scope=_need(rec, "scope", str, where, optional=True) or "project",
        session_id=_need(rec, "session_id", str, where, optional=True),
        tool=_need(rec, "tool", str, where, optional=True),
        title=_need(rec, "title", str, where, optional=True) or "",
        subtitle=_need(rec, "subtitle", str, where, optional=True) or "",
        narrative=_need(rec, "narrative", str, where, optional=True) or "",
        facts=_str_list(rec.get("facts"), "facts", where),
        concepts=_str_list(rec.get("concepts"), "concepts", where),
        files=_str_list(rec.get("files"), "files", where),
        created_at=_need(rec, "created_at", int, where),
        pinned=bool(rec.get("pinned")),
        importance=float(_need(rec, "importance", (int, float), where, optional=True) or 0.0),
        source=_need(rec, "source", str, where, optional=True) or "import:bundle",
        # Keyed by id: two memories that differ only in an event key stay two memories here.
        event_key=f"bundle:{memory_id}",
    )
    try:
        row = store.prepare(item)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None
    state = (
        _need(rec, "dismissed_at", int, where, optional=True),
        _need(rec, "updated_at", int, where, optional=True),
        _need(rec, "extracted_at", int, where, optional=True),
        memory_id,
    )
    return row, state


def _shaped(check: Any, value: Any, name: str, where: str) -> Any:
    """A metadata field through the store's check (its shape, or redacted), with the line."""
    try:
        return check(value) if check is not store.name_field else check(value, name)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None


def _id(rec: dict[str, Any], name: str, where: str, *, optional: bool = False) -> Any:
    value = _need(rec, name, str, where, optional=optional)
    if value is not None and not store.ID_SHAPE.match(value):
        raise InvalidInput(f"{where}: {name} must be letters, digits, _ and - (at most 200)")
    return value


def _fact(rec: dict[str, Any], where: str) -> dict[str, Any]:
    """Through the fact module's import API: its kinds, statuses, scopes, text cleaning,
    redaction and hash (the bundle's own hash is never trusted: a hash of unredacted text would
    let anyone confirm a guessed secret, and a different hash would make the same fact twice)."""
    from aletheia import facts

    created = _need(rec, "created_at", int, where)
    item = facts.FactIn(
        project=_shaped(store.project_name, _need(rec, "project", str, where), "project", where),
        text=_need(rec, "text", str, where),
        kind=_need(rec, "kind", str, where, optional=True) or "fact",
        session_id=_shaped(store.session_key, _need(rec, "session_id", str, where, optional=True),
                           "session_id", where) or None,
        source_ids=_str_list(rec.get("source_ids"), "source_ids", where),
        confidence=float(_need(rec, "confidence", (int, float), where)),
        extractor=_need(rec, "extractor", str, where, optional=True) or "import",
        scope=_need(rec, "scope", str, where, optional=True) or "project",
        subject=_need(rec, "subject", str, where, optional=True),
        value=_need(rec, "value", str, where, optional=True),
        stated=bool(rec.get("stated")),
        confirmed=_need(rec, "confirmed", int, where, optional=True) or 0,
        observed_at=_need(rec, "observed_at", int, where, optional=True),
    )
    try:
        return facts.prepare_import(
            item, id=_id(rec, "id", where), status=rec.get("status") or "active",
            created_at=created, updated_at=_need(rec, "updated_at", int, where, optional=True),
            session_ids=_str_list(rec.get("session_ids"), "session_ids", where),
            superseded_by=_id(rec, "superseded_by", where, optional=True))
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None


def _rule(rec: dict[str, Any], where: str, *, enable: bool) -> dict[str, Any]:
    from aletheia import rules

    text = " ".join(redact(_need(rec, "text", str, where)).split())
    if not text or len(text) > rules.TEXT_CAP:
        raise InvalidInput(f"{where}: a rule needs 1 to {rules.TEXT_CAP} characters")
    tools = _str_list(rec.get("tools"), "tools", where)
    try:
        tools = rules._check_tools(tools)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: {exc.message}") from None
    created = _need(rec, "created_at", int, where)
    project = _need(rec, "project", str, where, optional=True)
    return {
        "id": _id(rec, "id", where),
        "project": _shaped(store.project_name, project, "project", where) if project else None,
        "text": text,
        # A bundle is someone else's file: its rules would speak to every later session, so
        # they come in disabled unless the user asked for them (``--enable-rules``).
        "enabled": int(enable and bool(rec.get("enabled", True))),
        "tools": json.dumps(tools),
        "created_at": created,
        "updated_at": _need(rec, "updated_at", int, where, optional=True) or created,
    }


def _session(rec: dict[str, Any], where: str) -> dict[str, Any]:
    first = _need(rec, "first_request", str, where, optional=True)
    started = _need(rec, "started_at", int, where)
    return {
        "id": store.session_key(_need(rec, "id", str, where)),
        "project": _shaped(store.project_name, _need(rec, "project", str, where), "project", where),
        "tool": store.host_name(_need(rec, "tool", str, where, optional=True)),
        "started_at": started,
        "last_event_at": _need(rec, "last_event_at", int, where, optional=True) or started,
        "ended_at": _need(rec, "ended_at", int, where, optional=True),
        "first_request": store.title_text(first) if first else None,
        "summary_memory_id": _id(rec, "summary_memory_id", where, optional=True),
        "event_count": _need(rec, "event_count", int, where, optional=True) or 0,
    }


def parse_lines(lines: Iterable[str | bytes]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if isinstance(line, bytes):
            line = line.decode("utf-8", "replace")
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            raise InvalidInput(f"line {number}: not valid JSON") from None
        if not isinstance(rec, dict):
            raise InvalidInput(f"line {number}: expected a JSON object")
        rec["_line"] = number
        yield rec


def import_records(conn: sqlite3.Connection, records: Iterable[dict[str, Any]], *,
                   enable_rules: bool = False) -> ImportReport:
    """Validate every record, then write: memories through the store, the rest INSERT OR IGNORE
    by id.  Records already present (same id) are counted as skipped.  Rules are added disabled
    unless ``enable_rules``; the report lists every rule added."""
    memories: list[tuple[dict[str, Any], tuple[Any, ...]]] = []
    facts: list[dict[str, Any]] = []
    rules_: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    header_seen = False
    for index, rec in enumerate(records):
        where = f"line {rec.pop('_line', index + 1)}"
        kind = rec.get("type")
        if index == 0 or not header_seen:
            if kind != "header" or rec.get("format") != FORMAT:
                raise InvalidInput(f"{where}: not an {FORMAT} (the first line must be its header)")
            if rec.get("version") != VERSION:
                raise InvalidInput(f"{where}: bundle version {rec.get('version')!r} is not "
                                   f"supported (this aletheia reads version {VERSION})")
            header_seen = True
            continue
        if kind == "memory":
            memories.append(_memory(rec, where))
        elif kind == "fact":
            facts.append(_fact(rec, where))
        elif kind == "rule":
            rules_.append(_rule(rec, where, enable=enable_rules))
        elif kind == "session":
            sessions.append(_session(rec, where))
        else:
            raise InvalidInput(f"{where}: unknown record type {kind!r}")
    if not header_seen:
        raise InvalidInput(f"the bundle is empty (no {FORMAT} header)")

    report = ImportReport()
    with tx(conn):
        wanted = {p["id"] for p in sessions}
        known_sessions = {r[0] for r in conn.execute("SELECT id FROM session") if r[0] in wanted}
        for start in range(0, len(memories), _BATCH):
            batch = memories[start:start + _BATCH]
            results = store.insert_rows(conn, [row for row, _ in batch])
            for (_row, state), result in zip(batch, results, strict=True):
                if result.inserted:
                    report.added["memory"] += 1
                    conn.execute(_MEMORY_STATE, state)
                else:
                    report.skipped["memory"] += 1
        from aletheia.facts import insert_import

        for params in facts:
            if insert_import(conn, params):
                report.added["fact"] += 1
            else:
                report.skipped["fact"] += 1  # already here, or erased for good (tombstones)
        for params in rules_:
            if conn.execute(_INSERT_RULE, params).rowcount == 1:
                report.added["rule"] += 1
                report.rules.append({k: params[k] for k in ("id", "text", "project")}
                                    | {"enabled": bool(params["enabled"])})
            else:
                report.skipped["rule"] += 1
        for params in sessions:
            from aletheia import tombstones

            if tombstones.blocked(conn, [tombstones.session_hash(params["id"])]):
                report.skipped["session"] += 1  # an erased session stays erased
                continue
            # The first request is a copy of the session's first prompt: take it from what
            # is stored (a prompt erased since the bundle was made must not come back here).
            params = {**params, "first_request": None}
            # insert_rows above created sessions for new memories; merge the bundle's details.
            conn.execute(_MERGE_SESSION, params)
            conn.execute(_FIRST_REQUEST, (params["id"],))
            if params["id"] in known_sessions:
                report.skipped["session"] += 1
            else:
                report.added["session"] += 1
    return report


def import_file(conn: sqlite3.Connection, path: Path, *, enable_rules: bool = False) -> ImportReport:
    with open(path, encoding="utf-8", errors="replace") as fh:
        return import_stream(conn, fh, enable_rules=enable_rules)


def import_stream(conn: sqlite3.Connection, stream: IO[str], *,
                  enable_rules: bool = False) -> ImportReport:
    return import_records(conn, parse_lines(stream), enable_rules=enable_rules)
