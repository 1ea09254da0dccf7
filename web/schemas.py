"""The REST API's data shapes (pydantic): request bodies and query strings are validated with
them, responses are checked against them, and the OpenAPI document is generated from them, so
the document says exactly what the routes accept and return.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Id = Field(min_length=1, max_length=200)
Project = Field(min_length=1, max_length=1000, description="Project key (as the CLI prints it).")
Limit = Field(ge=1, le=500, description="Page size.")
Cursor = Field(default=None, max_length=1000, description="`next_cursor` from the previous page.")


class In(BaseModel):
    """Inputs refuse unknown fields: a typo is an error, not a silent no-op."""

    model_config = ConfigDict(extra="forbid")


class Out(BaseModel):
    model_config = ConfigDict(extra="ignore")


# -- errors and meta ---------------------------------------------------------------------------

class Error(Out):
    status: int = Field(description="The HTTP status, repeated.")
    message: str = Field(description="What went wrong, in one line.")


class Health(Out):
    status: Literal["ok"]
    version: str
    schema_version: int


class Stats(Out):
    memories: int
    by_kind: dict[str, int]
    projects: int
    by_project: dict[str, int]
    sessions: int
    facts: int
    stop_queue: int
    jobs: dict[str, int]
    pinned: int
    dismissed: int


# -- memories ----------------------------------------------------------------------------------

class Memory(Out):
    id: str
    project: str
    scope: Literal["project", "global"]
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
    created: str
    updated_at: int | None
    pinned: bool
    importance: float
    dismissed_at: int | None
    source: str
    extracted_at: int | None


class MemoryPage(Out):
    items: list[Memory]
    next_cursor: str | None


class MemoryList(Out):
    items: list[Memory]


StrList: Any = Field(default_factory=list, max_length=200)


class MemoryCreate(In):
    title: str = Field(max_length=10_000, description="A short title (cut at 200 characters).")
    narrative: str = Field(max_length=500_000, description="The body (redacted, capped).")
    project: str = Project
    kind: str = Field(default="note", min_length=1, max_length=50)
    subtitle: str = Field(default="", max_length=10_000)
    facts: list[str] = StrList
    concepts: list[str] = StrList
    files: list[str] = StrList
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    tool: str | None = Field(default=None, min_length=1, max_length=50)
    scope: Literal["project", "global"] = "project"
    pinned: bool = False
    importance: float = Field(default=0.0, ge=0, le=1)


class MemoryEdit(In):
    title: str | None = Field(default=None, max_length=10_000)
    subtitle: str | None = Field(default=None, max_length=10_000)
    narrative: str | None = Field(default=None, max_length=500_000)
    facts: list[str] | None = Field(default=None, max_length=200)
    concepts: list[str] | None = Field(default=None, max_length=200)
    files: list[str] | None = Field(default=None, max_length=200)
    kind: str | None = Field(default=None, min_length=1, max_length=50)
    importance: float | None = Field(default=None, ge=0, le=1)


class WriteResult(Out):
    id: str
    inserted: bool = Field(description="False when the same memory was already stored.")


class MemoryQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000)
    kind: str | None = Field(default=None, max_length=50)
    tool: str | None = Field(default=None, max_length=50)
    session_id: str | None = Field(default=None, max_length=200)
    scope: Literal["project", "global"] | None = None
    pinned: bool | None = None
    dismissed: Literal["exclude", "include", "only"] = "exclude"
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


class PinQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000)
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


# -- events ------------------------------------------------------------------------------------

class EventIn(In):
    host: str = Field(min_length=1, max_length=50,
                      description="Host tool: claude-code, codex, gemini, command-code, …")
    event: str = Field(min_length=1, max_length=100,
                       description="The host's hook event name (UserPromptSubmit, PostToolUse, …).")
    payload: dict[str, Any] = Field(description="The host's hook JSON, as the hook reads it.")
    project: str | None = Field(default=None, min_length=1, max_length=1000,
                                description="Project key; default: resolved from payload.cwd.")


class EventOut(Out):
    accepted: bool = Field(description="False when the event carries nothing to keep.")
    reason: str | None = None
    project: str | None = None
    memory_id: str | None = None
    inserted: bool = False
    stop_queued: bool = False


# -- search, timeline, observations, context ---------------------------------------------------

class SearchParams(In):
    q: str = Field(min_length=1, max_length=2000, description="The query, in plain words.")
    project: str | None = Field(default=None, min_length=1, max_length=1000,
                                description="Project key (global memories are included); "
                                            "absent: every project.")
    scope: Literal["project", "global"] | None = None
    kind: str | None = Field(default=None, max_length=50)
    tool: str | None = Field(default=None, max_length=50)
    session_id: str | None = Field(default=None, max_length=200)
    since: str | None = Field(default=None, max_length=40,
                              description="Epoch milliseconds or an ISO-8601 time (inclusive).")
    until: str | None = Field(default=None, max_length=40,
                              description="Epoch milliseconds or an ISO-8601 time (exclusive).")
    pinned: bool | None = None
    include_dismissed: bool = False
    include_facts: bool = True
    limit: int = Field(default=10, ge=1, le=200)


class Hit(Out):
    id: str
    type: Literal["memory", "fact"]
    score: float
    title: str
    kind: str
    project: str
    created_at: int
    created: str
    snippet: str
    session_id: str | None
    source_ids: list[str]


class SearchResult(Out):
    items: list[Hit]


class TimelineParams(In):
    anchor: str | None = Field(default=None, min_length=1, max_length=200,
                               description="A memory id (its session gives the context).")
    at: str | None = Field(default=None, max_length=40,
                           description="Instead of an anchor: a time (epoch ms or ISO-8601); "
                                       "needs project.")
    project: str | None = Field(default=None, min_length=1, max_length=1000)
    before: int = Field(default=5, ge=0, le=100)
    after: int = Field(default=5, ge=0, le=100)


class ObservationParams(In):
    ids: list[str] = Field(min_length=1, max_length=500,
                           description="Memory ids (repeat the parameter, or separate by commas).")


class ContextParams(In):
    project: str = Project
    host: str | None = Field(default=None, max_length=50,
                             description="Host tool (rules limited to other hosts are left out).")


class ContextOut(Out):
    project: str
    block: str
    chars: int


# -- curation and erase ------------------------------------------------------------------------

class Fact(Out):
    id: str
    project: str
    scope: Literal["project", "global"]
    session_id: str | None
    kind: str
    text: str
    confidence: float
    source_ids: list[str]
    status: Literal["active", "superseded", "dismissed"]
    extractor: str
    created_at: int
    created: str
    updated_at: int


class FactPage(Out):
    items: list[Fact]
    next_cursor: str | None


class FactQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000)
    status: Literal["active", "superseded", "dismissed", "any"] = "active"
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


class PinIn(In):
    id: str = Id


class DismissIn(In):
    id: str = Field(min_length=1, max_length=200, description="A memory or fact id.")
    undo: bool = Field(default=False, description="True brings it back.")


class PromoteIn(In):
    id: str = Field(min_length=1, max_length=200, description="A memory or fact id.")
    scope: Literal["global", "project"] = Field(
        default="global", description="global: visible to every project; project: back home.")


class CuratedMemory(Memory):
    type: Literal["memory"]


class CuratedFact(Fact):
    type: Literal["fact"]


Curated = Annotated[CuratedMemory | CuratedFact, Field(discriminator="type")]


class EraseIn(In):
    ids: list[str] | None = Field(default=None, min_length=1, max_length=10_000,
                                  description="Memory and/or fact ids.")
    session_id: str | None = Field(default=None, min_length=1, max_length=200)
    project: str | None = Field(default=None, min_length=1, max_length=1000)


class ReceiptBody(Out):
    model_config = ConfigDict(extra="allow")
    id: str
    type: str
    created_at: int
    created: str
    selector: dict[str, Any]
    counts: dict[str, int]
    memory_ids: list[str]
    fact_ids: list[str]


class Receipt(Out):
    id: str
    alg: str
    body: ReceiptBody
    signature: str


class EraseOut(Receipt):
    checkpointed: bool = Field(description="The WAL was checkpointed and truncated.")


class ReceiptSummary(Out):
    id: str
    created_at: int
    created: str
    selector: dict[str, Any]
    counts: dict[str, int]


class ReceiptPage(Out):
    items: list[ReceiptSummary]
    next_cursor: str | None


class PageQuery(In):
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


class VerifyIn(In):
    id: str | None = Field(default=None, max_length=200)
    alg: str | None = Field(default=None, max_length=50)
    body: dict[str, Any]
    signature: str = Field(max_length=200)
    checkpointed: bool | None = None


class VerifyOut(Out):
    valid: bool
    signature: bool
    still_erased: bool | None
    problems: list[str]


# -- rules, sessions, jobs, settings, bundles ---------------------------------------------------

class Rule(Out):
    id: str
    project: str | None
    text: str
    enabled: bool
    tools: list[str]
    created_at: int
    updated_at: int


class RuleList(Out):
    items: list[Rule]


class RuleQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000,
                                description="This project's rules and the global ones.")


class RuleCreate(In):
    text: str = Field(min_length=1, max_length=1000)
    project: str | None = Field(default=None, min_length=1, max_length=1000,
                                description="Absent: a global rule.")
    tools: list[str] = Field(default_factory=list, max_length=20,
                             description="Limit to these hosts (empty: every host).")
    enabled: bool = True


class RuleEdit(In):
    text: str | None = Field(default=None, min_length=1, max_length=1000)
    tools: list[str] | None = Field(default=None, max_length=20)
    enabled: bool | None = None


class Deleted(Out):
    deleted: str


class Session(Out):
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


class SessionDetail(Session):
    memories: int


class SessionPage(Out):
    items: list[Session]
    next_cursor: str | None


class SessionQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000)
    tool: str | None = Field(default=None, max_length=50)
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


class Job(Out):
    id: int
    type: str
    session_id: str
    project: str
    state: Literal["pending", "running", "retry_wait", "done", "dead"]
    attempts: int
    max_attempts: int
    next_run_at: int
    last_error: str | None
    created_at: int
    updated_at: int
    finished_at: int | None


class JobPage(Out):
    items: list[Job]
    next_cursor: str | None


class JobQuery(In):
    state: Literal["pending", "running", "retry_wait", "done", "dead"] | None = None
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


class Setting(Out):
    key: str
    value: Any
    default: Any
    type: Literal["bool", "int", "str", "list"]
    help: str
    minimum: int | None
    maximum: int | None


class SettingList(Out):
    items: list[Setting]


class SettingIn(In):
    value: Any = Field(description="The new value (JSON of the setting's type).")


class ExportQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000,
                                description="Absent: every project.")


class ImportReport(Out):
    added: dict[str, int]
    skipped: dict[str, int]
