"""Import a claude-mem database (``~/.claude-mem/claude-mem.db``): observations, session
summaries and user prompts.

Written against claude-mem's schema.sql (migration 35: ``sdk_sessions``, ``observations``,
``session_summaries``, ``user_prompts``); older databases that lack a column are read with
what they have.  The database is opened read-only.  claude-mem keys projects by a short name
(the basename of the working directory), which is kept as the project key unless ``project``
is given.  Every row carries a stable ``event_key`` (``claude-mem:<table>:<id>``), so two
identical observations stay two memories and a second import adds nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from aletheia import store
from aletheia.capture.ingest import Summary, ingest_memories
from aletheia.errors import InvalidInput, NotFound

SOURCE = "import:claude-mem"
TOOLS = {"claude": "claude-code", "codex": "codex", "gemini": "gemini", "cursor": "cursor"}


def default_path() -> Path:
    data = os.environ.get("CLAUDE_MEM_DATA_DIR", "").strip()
    return (Path(data) if data else Path.home() / ".claude-mem") / "claude-mem.db"


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in db.execute(f"PRAGMA table_info({table})")}


def _list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return [value]
        value = parsed
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v) for v in value if v not in (None, "")]
    return [str(value)]


def _col(cols: set[str], name: str, default: str = "NULL") -> str:
    return name if name in cols else f"{default} AS {name}"


def _sessions(db: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """memory_session_id (and content_session_id) -> the session's content id, project, tool."""
    cols = _columns(db, "sdk_sessions")
    if not cols:
        return {}
    out: dict[str, dict[str, Any]] = {}
    sql = (f"SELECT content_session_id, {_col(cols, 'memory_session_id')}, project, "
           f"{_col(cols, 'platform_source', repr('claude'))} FROM sdk_sessions")
    for content_id, memory_id, project, platform in db.execute(sql):
        info = {"session_id": content_id, "project": project,
                "tool": TOOLS.get(platform or "claude", platform)}
        out[content_id] = info
        if memory_id:
            out[memory_id] = info
    return out


def _observations(db: sqlite3.Connection, sessions: dict[str, dict[str, Any]],
                  project: str | None) -> Iterator[store.MemoryIn]:
    cols = _columns(db, "observations")
    if not cols:
        return
    sid = "memory_session_id" if "memory_session_id" in cols else "sdk_session_id"
    wanted = ["id", sid, "project", "text", "type", "title", "subtitle", "facts", "narrative",
              "concepts", "files_read", "files_modified", "created_at_epoch"]
    sql = "SELECT " + ", ".join(_col(cols, c) for c in wanted) + " FROM observations ORDER BY id"
    for r in db.execute(sql):
        info = sessions.get(r[sid] or "", {})
        kind_tag = r["type"] or "observation"
        yield store.MemoryIn(
            project=project or r["project"] or info.get("project") or "claude-mem",
            kind="note", title=r["title"] or "", subtitle=r["subtitle"] or "",
            narrative=r["narrative"] or r["text"] or "", facts=_list(r["facts"]),
            concepts=[kind_tag, *_list(r["concepts"])],
            files=_list(r["files_read"]) + _list(r["files_modified"]),
            session_id=info.get("session_id") or r[sid], tool=info.get("tool") or "claude-code",
            source=SOURCE, created_at=r["created_at_epoch"],
            event_key=f"claude-mem:observation:{r['id']}",
        )


_SUMMARY_PARTS = (("request", "Request"), ("investigated", "Investigated"),
                  ("learned", "Learned"), ("completed", "Completed"),
                  ("next_steps", "Next steps"), ("notes", "Notes"))


def _summaries(db: sqlite3.Connection, sessions: dict[str, dict[str, Any]],
               project: str | None) -> Iterator[store.MemoryIn]:
    cols = _columns(db, "session_summaries")
    if not cols:
        return
    sid = "memory_session_id" if "memory_session_id" in cols else "sdk_session_id"
    wanted = ["id", sid, "project", *(p for p, _ in _SUMMARY_PARTS), "files_read",
              "files_edited", "created_at_epoch"]
    sql = ("SELECT " + ", ".join(_col(cols, c) for c in wanted)
           + " FROM session_summaries ORDER BY id")
    for r in db.execute(sql):
        info = sessions.get(r[sid] or "", {})
        narrative = "\n\n".join(f"{label}: {r[name]}" for name, label in _SUMMARY_PARTS if r[name])
        yield store.MemoryIn(
            project=project or r["project"] or info.get("project") or "claude-mem",
            kind="summary", title=r["request"] or "Session summary", narrative=narrative,
            files=_list(r["files_read"]) + _list(r["files_edited"]),
            session_id=info.get("session_id") or r[sid], tool=info.get("tool") or "claude-code",
            source=SOURCE, created_at=r["created_at_epoch"],
            event_key=f"claude-mem:summary:{r['id']}",
        )


def _prompts(db: sqlite3.Connection, sessions: dict[str, dict[str, Any]],
             project: str | None) -> Iterator[store.MemoryIn]:
    cols = _columns(db, "user_prompts")
    if not cols:
        return
    sid = "content_session_id" if "content_session_id" in cols else "claude_session_id"
    sql = (f"SELECT id, {sid}, prompt_text, {_col(cols, 'created_at_epoch')} "
           "FROM user_prompts ORDER BY id")
    for r in db.execute(sql):
        info = sessions.get(r[sid] or "", {})
        yield store.MemoryIn(
            project=project or info.get("project") or "claude-mem", kind="prompt",
            title=r["prompt_text"] or "", narrative=r["prompt_text"] or "",
            session_id=r[sid], tool=info.get("tool") or "claude-code", source=SOURCE,
            created_at=r["created_at_epoch"], event_key=f"claude-mem:prompt:{r['id']}",
        )


def count_rows(path: Path) -> int:
    db = _open(path)
    try:
        total = 0
        for table in ("observations", "session_summaries", "user_prompts"):
            if _columns(db, table):
                total += int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        return total
    finally:
        db.close()


def _open(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise NotFound(f"no claude-mem database at {path}")
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        db.row_factory = sqlite3.Row
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise InvalidInput(f"{path} is not a readable SQLite database: {exc}") from None
    return db


def import_db(conn: sqlite3.Connection, path: Path, *, project: str | None = None,
              progress: Callable[[int], None] | None = None) -> Summary:
    summary = Summary("claude-mem", files=1)
    db = _open(path)
    try:
        sessions = _sessions(db)
        for rows in (_observations(db, sessions, project), _summaries(db, sessions, project),
                     _prompts(db, sessions, project)):
            ingest_memories(conn, rows, summary=summary, progress=progress)
    finally:
        db.close()
    return summary
