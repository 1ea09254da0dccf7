"""The store's one write API: every memory enters hub.db through ``write_memories``.

It redacts every text field, caps sizes, stamps project/scope/session/tool/kind/source and
deduplicates by a content hash, so a retried or replayed hook never creates a second row.
Stdlib only: the hook path calls it directly.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence

from aletheia import bounds, ids, tombstones
from aletheia.db import tx
from aletheia.errors import InvalidInput, NotFound
from aletheia.idents import index_text
from aletheia.redact import redact
from aletheia.vocab import SCOPES

TYPE_CHECKING = False  # the hook imports this module: importing typing costs it ~2 ms
if TYPE_CHECKING:
    from hashlib import sha256
    from typing import Any
else:
    # CPython's built-in SHA-256: hashlib would load OpenSSL first, ~2.5 ms of every hook run.
    try:
        from _sha256 import sha256  # 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # 3.12+
        except ImportError:
            from hashlib import sha256


# Caps.  Tool output is kept head-heavy (what was run) with a tail (how it ended: errors).
TITLE_CAP = 200
SUBTITLE_CAP = 500
NARRATIVE_HEAD = 24_000
NARRATIVE_TAIL = 8_000
LIST_ITEMS_CAP = 50
LIST_ITEM_CAP = 1_000
FILES_CAP = 200
# Text beyond the cap is cut *before* redaction to bound its cost, but with this margin kept on
# each side of every cut so a secret that straddles the final cut is still seen whole (a PGP
# secret key with its subkeys runs to ~8 KB; an unterminated block is hidden to the end of
# its piece, and a key body whose header was cut off ends in an END line, which redact reads).
_REDACT_MARGIN = 16_384

# Metadata shapes: what a host's id, a host name, a kind or a source may look like. A session id
# of another shape (or one that looks like a secret) is stored as a stable stand-in, so its
# events still group; a kind, source or memory id of another shape is refused.
_SESSION_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")
_HOST_SHAPE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}\Z")
_NAME_SHAPE = re.compile(r"[a-z][a-z0-9_-]{0,49}\Z")
_SOURCE_SHAPE = re.compile(r"[a-z][a-z0-9_.:-]{0,63}\Z")
ID_SHAPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,199}\Z")
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


class MemoryIn:
    """A memory as an interface hands it to the store (before redaction).

    A plain class rather than a dataclass: ``dataclasses`` imports ``inspect`` (~6 ms), and
    this module is on the hook's hot path.
    """

    FIELDS = (
        "project", "kind", "title", "subtitle", "narrative", "facts", "concepts", "files",
        "session_id", "tool", "source", "scope", "created_at", "pinned", "importance", "id",
        "event_key",
    )

    def __init__(
        self,
        project: str,
        kind: str,
        title: str = "",
        subtitle: str = "",
        narrative: str = "",
        facts: list[str] | None = None,
        concepts: list[str] | None = None,
        files: list[str] | None = None,
        session_id: str | None = None,
        tool: str | None = None,
        source: str = "cli",
        scope: str = "project",
        created_at: int | None = None,
        pinned: bool = False,
        importance: float = 0.0,
        id: str | None = None,
        # Distinguishes two otherwise identical events (a host's tool_use_id, a timestamp).
        event_key: str | None = None,
    ) -> None:
        self.project = project
        self.kind = kind
        self.title = title
        self.subtitle = subtitle
        self.narrative = narrative
        self.facts: list[str] = [] if facts is None else facts
        self.concepts: list[str] = [] if concepts is None else concepts
        self.files: list[str] = [] if files is None else files
        self.session_id = session_id
        self.tool = tool
        self.source = source
        self.scope = scope
        self.created_at = created_at
        self.pinned = pinned
        self.importance = importance
        self.id = id
        self.event_key = event_key

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.FIELDS}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MemoryIn) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"MemoryIn({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryIn:
        known = set(cls.FIELDS)
        unknown = sorted(set(data) - known - {"content_hash"})
        if unknown:
            raise InvalidInput(f"unknown memory field(s): {', '.join(unknown)}")
        return cls(**{k: v for k, v in data.items() if k in known})


class WriteResult(tuple[str, bool]):
    """(id, inserted).  A tuple subclass, not a NamedTuple: the hook imports this module."""

    __slots__ = ()

    def __new__(cls, id: str, inserted: bool) -> WriteResult:
        return tuple.__new__(cls, (id, inserted))

    @property
    def id(self) -> str:
        return self[0]

    @property
    def inserted(self) -> bool:
        return self[1]

    def __repr__(self) -> str:
        return f"WriteResult(id={self[0]!r}, inserted={self[1]!r})"


_CUT_MARKER = re.compile(r"\n\[… \d+ characters cut …\]\n")


def cap_text(text: str, head: int, tail: int = 0) -> str:
    """Keep ``head`` chars and ``tail`` chars with a marker saying how much was cut."""
    if len(text) <= head + tail:
        return text
    if not tail:
        return text[: head - 1] + "…"  # short fields: an ellipsis, and the result fits the cap
    marker_at = _CUT_MARKER.match(text, head)
    if marker_at is not None and len(text) - marker_at.end() == tail:
        return text  # already capped (a replayed, imported or edited row): keep its marker
    cut = len(text) - head - tail
    marker = f"\n[… {cut} characters cut …]\n"
    return text[:head] + marker + (text[-tail:] if tail else "")


def precut(text: str, head: int, tail: int) -> str:
    """What of ``text`` can survive a cut to ``head`` + ``tail`` characters, with a margin on
    each side of every cut: redacting this (not the whole) bounds the cost, and a secret that
    straddles the final cut is still seen whole."""
    if len(text) > head + tail + 2 * _REDACT_MARGIN:
        text = text[: head + _REDACT_MARGIN] + "\n" + (
            text[-(tail + _REDACT_MARGIN):] if tail else ""
        )
    return text


def _redact_window(text: str, head: int, tail: int) -> str:
    """Redacted first; the caller reshapes and cuts."""
    return redact(precut(text, head, tail))


def _bounded_redact(text: str, head: int, tail: int) -> str:
    return cap_text(_redact_window(text, head, tail), head, tail)


def title_text(value: str) -> str:
    """A title: redacted first, then folded to one line and cut (a key pasted into a prompt is
    recognised by its line breaks, so they must still be there when redaction looks)."""
    folded = " ".join(_redact_window(value, TITLE_CAP, 0).split())
    return cap_text(redact(folded), TITLE_CAP)


def session_key(value: Any) -> str:
    """A session id as stored: the host's own when it has an id's shape (at most
    ``bounds.SESSION_ID_CAP`` characters) and hides nothing; else a stable stand-in (the same
    id gives the same key, so its events still group). A long id costs what its head does."""
    if value is None or value == "":
        return ""
    text = str(value)
    if len(text) <= bounds.SESSION_ID_CAP and _SESSION_SHAPE.match(text) and redact(text) == text:
        return text
    head = text[:65536].encode("utf-8", "surrogatepass") + b"|%d" % len(text)
    return "s-" + sha256(head).hexdigest()[:32]


def host_name(value: Any) -> str | None:
    """A host (tool) name: lower case, an identifier's characters; anything else is "other"."""
    if value is None or value == "":
        return None
    text = bounds.cut(str(value), bounds.NAME_CAP).strip().lower().replace(" ", "-")
    if _HOST_SHAPE.match(text) and redact(text) == text:
        return text
    return "other"


def project_name(value: Any) -> str:
    """``project_key`` of a value that must be a non-empty string."""
    text = project_key(_text(value, "project"))
    if not text:
        raise InvalidInput("project must not be empty")
    return text


def name_field(value: Any, field: str) -> str:
    """A kind or a source: a short lower-case name (a source may say where from, as in
    ``import:bundle``), or a clear error."""
    text = bounds.cut(_text(value, field), bounds.NAME_CAP).strip().lower()
    if not (_SOURCE_SHAPE if field == "source" else _NAME_SHAPE).match(text):
        raise InvalidInput(f"{field} must be a short lower-case name (letters, digits, _ and -)")
    return text


def _text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    return value


def _text_list(value: Any, name: str, items: int) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)):
        raise InvalidInput(f"{name} must be a list of strings")
    out = []
    for item in list(value)[:items]:
        if not isinstance(item, str):
            raise InvalidInput(f"{name} must be a list of strings")
        out.append(_bounded_redact(item, LIST_ITEM_CAP, 0))
    return out


def project_key(value: str) -> str:
    """A project key as stored: stripped, cut and redacted, one line (no control characters)."""
    return _CONTROL.sub(" ", _bounded_redact(value.strip(), bounds.PROJECT_CAP, 0)).strip()


def prepare(m: MemoryIn, *, now: int | None = None) -> dict[str, Any]:
    """Validate, redact and cap ``m``; return the row to insert (also the spool's format).

    Redaction is idempotent, so preparing an already-prepared row gives the same row and the
    same hash: that is what lets the spool be replayed any number of times.
    """
    # Identity fields are cut before anything else reads them (a 2 MB session id costs what a
    # 200-character one does), then held to their shapes; text fields are cut inside
    # _bounded_redact.
    project = project_name(m.project)
    if not _text(m.kind, "kind").strip():
        raise InvalidInput("kind must not be empty")
    kind = name_field(m.kind, "kind")
    source = name_field(m.source or "cli", "source")
    if m.id is not None and (not isinstance(m.id, str) or not ID_SHAPE.match(m.id)):
        raise InvalidInput("id must be letters, digits, _ and - (at most 200)")
    if m.scope not in SCOPES:
        raise InvalidInput(f"scope must be one of {', '.join(SCOPES)}")
    stamp = now if now is not None else ids.now_ms()
    created = stamp if m.created_at is None else bounds.time_in_window(m.created_at, "created_at")
    session_id = _text(m.session_id, "session_id")
    event_key = _text(m.event_key, "event_key")
    row: dict[str, Any] = {
        "id": m.id or ids.new_id(created),
        "project": project,
        "scope": m.scope,
        "session_id": session_key(session_id) or None,
        "tool": host_name(m.tool),
        "kind": kind,
        "title": title_text(_text(m.title, "title")),
        "subtitle": _bounded_redact(_text(m.subtitle, "subtitle"), SUBTITLE_CAP, 0),
        "narrative": _bounded_redact(_text(m.narrative, "narrative"), NARRATIVE_HEAD, NARRATIVE_TAIL),
        "facts": _text_list(m.facts, "facts", LIST_ITEMS_CAP),
        "concepts": _text_list(m.concepts, "concepts", LIST_ITEMS_CAP),
        "files": _text_list(m.files, "files", FILES_CAP),
        "created_at": created,
        "pinned": bool(m.pinned),
        "importance": bounds.finite(m.importance, "importance", 0.0, 1.0),
        "source": source,
        "event_key": _bounded_redact(event_key, bounds.EVENT_KEY_CAP, 0) or None,
    }
    if not (row["title"] or row["narrative"] or row["facts"]):
        raise InvalidInput("a memory needs a title, a narrative or facts")
    row["content_hash"] = content_hash(row)
    return row


def content_hash(row: dict[str, Any]) -> str:
    keyed = [
        row["project"], row["scope"], row["session_id"], row["tool"], row["kind"],
        row["title"], row["subtitle"], row["narrative"], row["facts"], row["concepts"],
        row["files"], row.get("event_key"),
    ]
    blob = json.dumps(keyed, ensure_ascii=False, separators=(",", ":"))
    return sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


_INSERT_MEMORY = """
INSERT OR IGNORE INTO memory (
    id, project, scope, session_id, tool, kind, title, subtitle, narrative, facts, concepts,
    files, created_at, pinned, importance, source, content_hash, idents
) VALUES (
    :id, :project, :scope, :session_id, :tool, :kind, :title, :subtitle, :narrative, :facts,
    :concepts, :files, :created_at, :pinned, :importance, :source, :content_hash, :idents
)
"""

_EXISTING = "SELECT id FROM memory WHERE content_hash = ? OR id = ? LIMIT 1"

_UPSERT_SESSION = """
INSERT INTO session (id, project, tool, started_at, last_event_at, first_request, event_count)
VALUES (:session_id, :project, :tool, :created_at, :created_at, :first_request, 1)
ON CONFLICT(id) DO UPDATE SET
    started_at = min(started_at, excluded.started_at),
    last_event_at = max(last_event_at, excluded.last_event_at),
    tool = coalesce(session.tool, excluded.tool),
    first_request = coalesce(session.first_request, excluded.first_request),
    event_count = session.event_count + 1
"""


def insert_rows(conn: sqlite3.Connection, rows: Sequence[dict[str, Any]]) -> list[WriteResult]:
    """Insert prepared rows in one ``BEGIN IMMEDIATE`` transaction (dedupe by hash and id)."""
    results: list[WriteResult] = []
    with tx(conn):
        for row in rows:
            params = dict(row)
            for name in ("facts", "concepts", "files"):
                params[name] = json.dumps(row[name], ensure_ascii=False)
            params["pinned"] = 1 if row["pinned"] else 0
            params["idents"] = _idents(row)
            if tombstones.blocked(conn, tombstones.memory_keys(row)):
                # Erased for good: a re-import, a replayed spool item or an old bundle must
                # not bring it back (see tombstones.py).
                results.append(WriteResult(row["id"], False))
                continue
            cur = conn.execute(_INSERT_MEMORY, params)
            if cur.rowcount == 1:
                results.append(WriteResult(row["id"], True))
                if row["session_id"]:
                    params["first_request"] = row["title"] if row["kind"] == "prompt" else None
                    conn.execute(_UPSERT_SESSION, params)
            else:
                found = conn.execute(_EXISTING, (row["content_hash"], row["id"])).fetchone()
                results.append(WriteResult(found[0] if found else row["id"], False))
    return results


def _idents(row: dict[str, Any]) -> str:
    """The search index's identifier words for a prepared row (see ``aletheia.idents``)."""
    return index_text(row["title"], row["subtitle"], row["narrative"], " ".join(row["facts"]),
                      " ".join(row["concepts"]))


def write_memories(
    conn: sqlite3.Connection, items: Iterable[MemoryIn], *, now: int | None = None
) -> list[WriteResult]:
    rows = [prepare(m, now=now) for m in items]
    return insert_rows(conn, rows) if rows else []


def write_memory(conn: sqlite3.Connection, item: MemoryIn, *, now: int | None = None) -> WriteResult:
    return write_memories(conn, [item], now=now)[0]


EDITABLE = ("title", "subtitle", "narrative", "facts", "concepts", "files", "kind", "importance")

_UPDATE_MEMORY = """
UPDATE memory SET kind = :kind, title = :title, subtitle = :subtitle, narrative = :narrative,
    facts = :facts, concepts = :concepts, files = :files, importance = :importance,
    content_hash = :content_hash, updated_at = :updated_at, idents = :idents
WHERE id = :id
"""


def update_memory(
    conn: sqlite3.Connection, memory_id: str, changes: Mapping[str, Any], *, now: int | None = None
) -> dict[str, Any]:
    """Edit a stored memory's content.  The edited fields pass through ``prepare`` (the same
    validation, caps and redaction as a new memory), so an edit cannot store a secret either.
    Returns the prepared row."""
    unknown = sorted(set(changes) - set(EDITABLE))
    if unknown:
        raise InvalidInput(f"these fields cannot be edited: {', '.join(unknown)}")
    stamp = ids.now_ms() if now is None else now
    with tx(conn):
        current = conn.execute("SELECT * FROM memory WHERE id = ?", (memory_id,)).fetchone()
        if current is None:
            raise NotFound(f"no memory with id {memory_id}")
        data = dict(current)
        for name in ("facts", "concepts", "files"):
            data[name] = json.loads(data[name] or "[]")
        data.update(changes)
        data["pinned"] = bool(data["pinned"])
        # The id keys the hash, so an edit that matches another memory's text is no conflict.
        data["event_key"] = f"edit:{memory_id}"
        row = prepare(memory_in_from_row(data))
        params = dict(row)
        for name in ("facts", "concepts", "files"):
            params[name] = json.dumps(row[name], ensure_ascii=False)
        params["updated_at"] = stamp
        params["idents"] = _idents(row)
        conn.execute(_UPDATE_MEMORY, params)
    return row


def memory_in_from_row(row: dict[str, Any]) -> MemoryIn:
    """Rebuild a ``MemoryIn`` from a prepared row (spool replay, bundle import)."""
    data: dict[str, Any] = {k: row.get(k) for k in MemoryIn.FIELDS if k in row}
    return MemoryIn(**data)


_QUEUE_STOP = """
INSERT INTO stop_queue (session_id, project, tool, queued_at) VALUES (?, ?, ?, ?)
ON CONFLICT(session_id) DO UPDATE SET queued_at = excluded.queued_at
"""

_END_SESSION = """
INSERT INTO session (id, project, tool, started_at, last_event_at, ended_at)
VALUES (:id, :project, :tool, :now, :now, :now)
ON CONFLICT(id) DO UPDATE SET ended_at = excluded.ended_at
"""


def queue_stop(
    conn: sqlite3.Connection, session_id: str, project: str, tool: str | None, *, now: int | None = None
) -> None:
    """Put a session in the stop queue (idempotent per session); extraction happens elsewhere."""
    stamp = ids.now_ms() if now is None else now
    if not isinstance(session_id, str) or not session_id.strip():
        raise InvalidInput("session_id must be a non-empty string")
    if not isinstance(project, str) or not project.strip():
        raise InvalidInput("project must not be empty")
    stamp = bounds.time_in_window(stamp, "queued_at")
    session_id = session_key(session_id)
    project = project_name(project)
    tool = host_name(tool)
    with tx(conn):
        conn.execute(_QUEUE_STOP, (session_id, project, tool, stamp))
        conn.execute(
            _END_SESSION, {"id": session_id, "project": project, "tool": tool, "now": stamp}
        )


def requeue(conn: sqlite3.Connection, session_id: str, project: str, tool: str | None, *,
            now: int) -> None:
    """Queue a session for extraction again (erase rebuilds what it derived), leaving its
    times alone: it did not end now."""
    conn.execute(_QUEUE_STOP, (session_id, project, tool, now))
