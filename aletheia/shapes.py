"""The one shape of each result the interfaces hand out: a memory, a fact, a session, a job.

Each is a ``TypedDict`` built from its table's row by one function here, with the columns it
reads beside it; the services return these, the CLI prints them, MCP returns them and the REST
response models are tested against them (``tests/test_shapes.py``), so a field added in one
place reaches every interface or fails a test.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import Any, Literal, TypedDict

from aletheia import ids

Row = sqlite3.Row | Mapping[str, Any]


def _iso(value: int | None) -> str | None:
    return ids.iso(value) if value else None


def _json_list(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    try:
        out = json.loads(value or "[]")
    except ValueError:
        return []
    return out if isinstance(out, list) else []


# -- memory ------------------------------------------------------------------------------------

MEMORY_COLUMNS = (
    "id, project, scope, session_id, tool, kind, title, subtitle, narrative, facts, concepts, "
    "files, created_at, updated_at, pinned, importance, dismissed_at, source, extracted_at"
)


class Memory(TypedDict):
    id: str
    project: str
    scope: str
    session_id: str | None
    tool: str | None
    kind: str
    title: str
    subtitle: str
    narrative: str
    facts: list[str]
    concepts: list[str]
    files: list[str]
    created_at: int
    created: str  # created_at as ISO-8601 UTC
    updated_at: int | None
    pinned: bool
    importance: float
    dismissed_at: int | None
    source: str
    extracted_at: int | None


def memory(row: Row) -> Memory:
    """A memory from a row selected with ``MEMORY_COLUMNS``."""
    return Memory(
        id=row["id"], project=row["project"], scope=row["scope"], session_id=row["session_id"],
        tool=row["tool"], kind=row["kind"], title=row["title"], subtitle=row["subtitle"],
        narrative=row["narrative"], facts=_json_list(row["facts"]),
        concepts=_json_list(row["concepts"]), files=_json_list(row["files"]),
        created_at=row["created_at"], created=ids.iso(row["created_at"]),
        updated_at=row["updated_at"], pinned=bool(row["pinned"]),
        importance=float(row["importance"]), dismissed_at=row["dismissed_at"],
        source=row["source"], extracted_at=row["extracted_at"],
    )


# -- fact --------------------------------------------------------------------------------------

FACT_COLUMNS = (
    "id, project, scope, session_id, kind, text, confidence, source_ids, status, extractor, "
    "created_at, updated_at, subject, value, session_ids, confirmed, stated, observed_at, "
    "superseded_by"
)


class Fact(TypedDict):
    id: str
    project: str
    scope: str
    session_id: str | None
    kind: str
    text: str
    confidence: float
    source_ids: list[str]  # the memories it was drawn from
    status: str
    extractor: str
    created_at: int
    created: str
    updated_at: int
    subject: str | None  # the slot a knowledge update fills (command:test, dep:NAME …)
    value: str | None
    session_ids: list[str]  # the sessions that support it
    confirmed: int  # times a passing command, the project's files or an answer confirmed it
    stated: bool  # the user said it
    observed_at: int | None
    superseded_by: str | None
    evidence: dict[str, Any]  # facts.evidence: sessions, confirmed, stated, strong


def fact(row: Row) -> Fact:
    """A fact from a row selected with ``FACT_COLUMNS``."""
    from aletheia.facts import evidence

    out = Fact(
        id=row["id"], project=row["project"], scope=row["scope"], session_id=row["session_id"],
        kind=row["kind"], text=row["text"], confidence=float(row["confidence"]),
        source_ids=_json_list(row["source_ids"]), status=row["status"],
        extractor=row["extractor"], created_at=row["created_at"],
        created=ids.iso(row["created_at"]), updated_at=row["updated_at"],
        subject=row["subject"], value=row["value"], session_ids=_json_list(row["session_ids"]),
        confirmed=int(row["confirmed"] or 0), stated=bool(row["stated"]),
        observed_at=row["observed_at"], superseded_by=row["superseded_by"], evidence={},
    )
    out["evidence"] = evidence(out)
    return out


# Dismiss and promote take either kind of id: their answer says which it was.
class TypedMemory(Memory):
    type: Literal["memory"]


class TypedFact(Fact):
    type: Literal["fact"]


def typed_memory(m: Memory) -> TypedMemory:
    return TypedMemory(**m, type="memory")


def typed_fact(f: Fact) -> TypedFact:
    return TypedFact(**f, type="fact")


# -- session -----------------------------------------------------------------------------------

# On ``session s``; the latest job says whether it was compressed (done), waits, or died.
SESSION_COLUMNS = (
    "s.id, s.project, s.tool, s.started_at, s.last_event_at, s.ended_at, s.first_request, "
    "s.summary_memory_id, s.event_count, "
    "(SELECT j.state FROM job j WHERE j.session_id = s.id ORDER BY j.created_at DESC, j.id DESC "
    "LIMIT 1) AS job_state"
)


class Session(TypedDict):
    id: str
    project: str
    tool: str | None
    started_at: int
    started: str
    last_event_at: int
    ended_at: int | None
    ended: str | None
    first_request: str | None
    summary_memory_id: str | None
    event_count: int
    job_state: str | None


def session(row: Row) -> Session:
    """A session from a row selected with ``SESSION_COLUMNS``."""
    return Session(
        id=row["id"], project=row["project"], tool=row["tool"], started_at=row["started_at"],
        started=ids.iso(row["started_at"]), last_event_at=row["last_event_at"],
        ended_at=row["ended_at"], ended=_iso(row["ended_at"]), first_request=row["first_request"],
        summary_memory_id=row["summary_memory_id"], event_count=row["event_count"],
        job_state=row["job_state"],
    )


# -- job ---------------------------------------------------------------------------------------

JOB_COLUMNS = (
    "id, type, session_id, project, state, attempts, max_attempts, lease_owner, lease_expires_at, "
    "next_run_at, last_error, result, created_at, updated_at, finished_at, enqueued_at, started_at"
)
_JOB_TIMES = ("next_run_at", "created_at", "updated_at", "finished_at", "lease_expires_at",
              "started_at", "enqueued_at")


class Job(TypedDict):
    id: int
    type: str
    session_id: str
    project: str
    state: str
    attempts: int
    max_attempts: int
    lease_owner: str | None
    lease_expires_at: int | None
    next_run_at: int
    last_error: str | None
    result: dict[str, Any] | None  # what a done job produced (counts)
    created_at: int
    updated_at: int
    finished_at: int | None
    enqueued_at: int | None
    started_at: int | None
    # The times as ISO-8601 (None when unset).
    next_run: str | None
    created: str | None
    updated: str | None
    finished: str | None
    lease_expires: str | None
    started: str | None
    enqueued: str | None


def job_result(raw: str | None) -> dict[str, Any] | None:
    """A job's stored ``result`` (JSON text); None when empty or unreadable (a damaged row
    is still listed)."""
    try:
        value = json.loads(raw) if raw else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def job(fields: Row) -> Job:
    """A job from a row selected with ``JOB_COLUMNS`` (``result`` still JSON text) or from
    ``tasks.jobs.Job``'s fields (``result`` already decoded)."""
    result = fields["result"]
    if isinstance(result, str):
        result = job_result(result)
    return Job(
        id=fields["id"], type=fields["type"], session_id=fields["session_id"],
        project=fields["project"], state=fields["state"], attempts=fields["attempts"],
        max_attempts=fields["max_attempts"], lease_owner=fields["lease_owner"],
        lease_expires_at=fields["lease_expires_at"], next_run_at=fields["next_run_at"],
        last_error=fields["last_error"], result=result,
        created_at=fields["created_at"], updated_at=fields["updated_at"],
        finished_at=fields["finished_at"], enqueued_at=fields["enqueued_at"],
        started_at=fields["started_at"],
        next_run=_iso(fields["next_run_at"]), created=_iso(fields["created_at"]),
        updated=_iso(fields["updated_at"]), finished=_iso(fields["finished_at"]),
        lease_expires=_iso(fields["lease_expires_at"]), started=_iso(fields["started_at"]),
        enqueued=_iso(fields["enqueued_at"]),
    )
