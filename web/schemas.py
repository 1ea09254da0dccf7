"""The REST API's data shapes (pydantic): request bodies and query strings are validated with
them, responses are checked against them, and the OpenAPI document is generated from them, so
the document says exactly what the routes accept and return.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from aletheia import vocab
from aletheia.bounds import MAX_TIME_MS
from aletheia.pages import NUMBER_CURSOR, TIME_ID_CURSOR

# "Has a visible character", the same in pydantic's (Rust), Python's and JSON Schema's regex
# engines: they disagree on whether \x1c-\x1f and \x85 are spaces, so both are excluded.
NonBlank = r"[^\s\x00-\x20\x7f-\xa0]"
# A memory's kind, as the store keeps it (store.name_field: lower-cased on the way in)
KindName = r"^[A-Za-z][A-Za-z0-9_-]{0,49}$"
Id = Field(min_length=1, max_length=200)
Project = Field(min_length=1, max_length=1000, pattern=NonBlank,
                description="Project key (as the CLI prints it).")
# The one meaning of project= on every reader (aletheia/filters.py).
PROJECT_MEANING = ("This project's rows plus the ones promoted to global scope (add "
                   "scope=project for its own only); absent: every project.")
ProjectFilter = Field(default=None, min_length=1, max_length=1000, description=PROJECT_MEANING)
Limit = Field(ge=1, le=500, description="Page size.")
Cursor = Field(default=None, max_length=400, pattern=TIME_ID_CURSOR,
               description="`next_cursor` from the previous page.")
JobCursor = Field(default=None, max_length=20, pattern=NUMBER_CURSOR,
                  description="`next_cursor` from the previous page.")
# The enums come from aletheia.vocab (a tuple given to Literal is its list of values).
Host = Literal[vocab.HOSTS]  # type: ignore[valid-type]
Scope = Literal[vocab.SCOPES]  # type: ignore[valid-type]
FactStatus = Literal[vocab.FACT_STATUSES]  # type: ignore[valid-type]
FactStatusOrAny = Literal[(*vocab.FACT_STATUSES, "any")]  # type: ignore[valid-type]
JobState = Literal[vocab.JOB_STATES]  # type: ignore[valid-type]
# Optional in a patch, but never null: the schema says "string", and null is refused.
Opt = SkipJsonSchema[None]


class In(BaseModel):
    """Query strings: unknown parameters are an error, not a silent no-op; values arrive as
    text, so numbers and booleans are parsed from it."""

    model_config = ConfigDict(extra="forbid")


class Body(BaseModel):
    """JSON bodies: unknown fields refused and types strict (``0`` is not ``false``)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Patch(Body):
    """A partial update: at least one field, and a field given is never null."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra={"minProperties": 1})

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        if isinstance(data, dict):
            if not data:
                raise ValueError("nothing to change")
            nulls = sorted(k for k, v in data.items() if v is None)
            if nulls:
                raise ValueError(f"{', '.join(nulls)} cannot be null (leave it out instead)")
        return data


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


class DoctorCheck(Out):
    name: str
    status: Literal["ok", "warn", "problem"]
    summary: str
    hint: str | None
    data: dict[str, Any]


class DoctorReport(Out):
    home: str
    ok: bool = Field(description="False when a check needs the user (the CLI exits 1).")
    problems: int
    warnings: int
    checks: list[DoctorCheck]
    at: str


class JobStateName(Out):
    name: JobState
    label: str


class Vocabulary(Out):
    """aletheia's fixed lists (``aletheia/vocab.py``), for clients such as the dashboard."""

    hosts: list[Host]
    memory_kinds: list[str]
    fact_kinds: list[str]
    fact_statuses: list[FactStatus]
    scopes: list[Scope]
    job_states: list[JobStateName] = Field(description="In the order lists show them.")
    sources: list[str]


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
    context: dict[str, Any] = Field(
        default_factory=dict,
        description="Per project, the last 30 days: tokens of context injected per session "
                    "(block, per-prompt, per-file; characters / 4) and how often a session was "
                    "followed by a detail fetch (search, timeline, get_observations).")


class ProjectInfo(Out):
    key: str
    name: str
    memories: int
    sessions: int
    last_at: int | None
    last: str | None


class ProjectList(Out):
    items: list[ProjectInfo]


class DoctorQuery(In):
    integrity: bool = Field(default=True, description=(
        "Run SQLite's quick integrity check (it reads every page of hub.db: seconds on a big "
        "store). The dashboard's health banner leaves it out."))


class PerDayQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000)
    days: int = Field(default=30, ge=1, le=366)
    tz_offset_min: int = Field(default=0, ge=-900, le=900,
                               description="Minutes east of UTC (the browser's -getTimezoneOffset()).")


class Day(Out):
    day: str
    memories: int


class PerDayList(Out):
    items: list[Day]


class EconomicsQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000,
                                description="One project (absent: every project).")
    days: int = Field(default=30, ge=1, le=3650)
    recent: int = Field(default=30, ge=0, le=500, description="How many recent sessions to list.")


class ByInjection(Out):
    block: int | float
    prompt: int | float
    file: int | float


class SessionTokens(ByInjection):
    total: int | float


class ProjectEconomics(Out):
    sessions: int
    tokens: ByInjection
    injections: ByInjection
    tokens_per_session: SessionTokens
    followed_by_fetch: int = Field(description="Sessions followed by a detail fetch.")
    fetches: int
    fetch_rate: float = Field(description="followed_by_fetch / sessions.")


class SessionEconomics(Out):
    session: str
    project: str
    host: str | None
    first_at: int = Field(description="Its first injection (epoch ms).")
    last_at: int
    tokens: SessionTokens
    injections: ByInjection
    fetches: int = Field(description="Detail fetches given to this session.")


class Economics(Out):
    """What context cost and whether it was used (``aletheia stats``; characters / 4)."""

    days: int
    projects: dict[str, ProjectEconomics]
    sessions: list[SessionEconomics] = Field(description="The recent sessions, newest first.")


# -- memories ----------------------------------------------------------------------------------

class Memory(Out):
    id: str
    project: str
    scope: Scope
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


class MemoryCreate(Body):
    title: str = Field(min_length=1, max_length=10_000, pattern=NonBlank,
                       description="A short title (cut at 200 characters).")
    narrative: str = Field(max_length=500_000, description="The body (redacted, capped).")
    project: str = Project
    kind: str = Field(default="note", min_length=1, max_length=50, pattern=KindName)
    subtitle: str = Field(default="", max_length=10_000)
    facts: list[str] = StrList
    concepts: list[str] = StrList
    files: list[str] = StrList
    session_id: str | None = Field(default=None, min_length=1, max_length=200, pattern=NonBlank)
    tool: str | None = Field(default=None, min_length=1, max_length=50, pattern=NonBlank)
    scope: Scope = "project"
    pinned: bool = False
    importance: float = Field(default=0.0, ge=0, le=1)


class MemoryEdit(Patch):
    title: Annotated[str, Field(min_length=1, max_length=10_000, pattern=NonBlank)] | Opt = None
    subtitle: Annotated[str, Field(max_length=10_000)] | Opt = None
    narrative: Annotated[str, Field(max_length=500_000)] | Opt = None
    facts: Annotated[list[str], Field(max_length=200)] | Opt = None
    concepts: Annotated[list[str], Field(max_length=200)] | Opt = None
    files: Annotated[list[str], Field(max_length=200)] | Opt = None
    kind: Annotated[str, Field(min_length=1, max_length=50, pattern=KindName)] | Opt = None
    importance: Annotated[float, Field(ge=0, le=1)] | Opt = None


class WriteResult(Out):
    id: str
    inserted: bool = Field(description="False when the same memory was already stored.")


class MemoryQuery(In):
    project: str | None = ProjectFilter
    kind: str | None = Field(default=None, max_length=50)
    tool: str | None = Field(default=None, max_length=50)
    session_id: str | None = Field(default=None, max_length=200)
    scope: Scope | None = None
    pinned: bool | None = None
    dismissed: Literal["exclude", "include", "only"] = "exclude"
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


class PinQuery(In):
    project: str | None = ProjectFilter
    scope: Scope | None = None
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


# -- events ------------------------------------------------------------------------------------

class EventIn(Body):
    host: str = Field(min_length=1, max_length=50,
                      description="Host tool: claude-code, codex, gemini, command-code, …")
    event: str = Field(min_length=1, max_length=100,
                       description="The host's hook event name (UserPromptSubmit, PostToolUse, …).")
    payload: dict[str, Any] = Field(description="The host's hook JSON, as the hook reads it.")
    project: str | None = Field(default=None, min_length=1, max_length=1000, pattern=NonBlank,
                                description="Project key; default: resolved from payload.cwd.")


class EventOut(Out):
    accepted: bool = Field(description="False when the event carries nothing to keep.")
    reason: str | None = None
    project: str | None = None
    memory_id: str | None = None
    inserted: bool = False
    stop_queued: bool = False
    context: str | None = Field(default=None, description="For a session start: the context "
                                "block the hook would print (empty when there is nothing).")


# -- search, timeline, observations, context ---------------------------------------------------

class SearchParams(In):
    q: str = Field(min_length=1, max_length=2000, description="The query, in plain words.")
    project: str | None = ProjectFilter
    scope: Scope | None = None
    kind: str | None = Field(default=None, max_length=50)
    tool: str | None = Field(default=None, max_length=50)
    session_id: str | None = Field(default=None, max_length=200)
    since: int | None = Field(default=None, ge=0, le=MAX_TIME_MS,
                              description="Epoch milliseconds (inclusive).")
    until: int | None = Field(default=None, ge=0, le=MAX_TIME_MS,
                              description="Epoch milliseconds (exclusive).")
    pinned: bool | None = None
    include_dismissed: bool = False
    include_facts: bool = True
    semantic: bool | None = Field(default=None, description=(
        "Fuse semantic neighbours (the embed extra): true or false; absent: the server's "
        "default (ALETHEIA_SEMANTIC). Without the extra, or if its model fails, the keyword "
        "ranking is returned."))
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
    via: list[str] = Field(default_factory=list,
                           description="Which lists found it: keyword, fact, semantic, neighbour.")
    marks: list[Annotated[list[int], Field(min_length=2, max_length=2)]] = Field(
        default_factory=list,
        description="Where the snippet holds a query word: [start, end) offsets in Unicode code "
                    "points, in order (the snippet itself is plain text).")


class SearchResult(Out):
    items: list[Hit]


class TimelineParams(In):
    anchor: str = Field(min_length=1, max_length=200,
                        description="A memory id (its session gives the context).")
    before: int = Field(default=5, ge=0, le=100)
    after: int = Field(default=5, ge=0, le=100)


class ObservationParams(In):
    # Bounded so the whole URL stays under the HTTP server's request-line limit.
    ids: list[Annotated[str, Field(pattern=r"^[^,]+(,[^,]+)*$", max_length=200)]] = Field(
        min_length=1, max_length=50,
        description="Memory ids (repeat the parameter, or separate them by commas).")


class ContextParams(In):
    project: str = Project
    host: Host | None = Field(default=None, description="The host the session runs in: its "
                              "rules are listed, rules limited to other hosts are not.")


class ContextOut(Out):
    project: str
    block: str
    chars: int


# -- curation and erase ------------------------------------------------------------------------

class FactEvidence(Out):
    sessions: int
    confirmed: int
    stated: bool
    strong: bool = Field(description="Enough evidence for the context block.")


class Fact(Out):
    id: str
    project: str
    scope: Scope
    session_id: str | None
    kind: str
    text: str
    confidence: float
    source_ids: list[str]
    status: FactStatus
    extractor: str
    created_at: int
    created: str
    updated_at: int
    subject: str | None = Field(description="The slot a knowledge update fills "
                                "(command:test, dep:NAME, …); a newer fact in it supersedes.")
    value: str | None
    session_ids: list[str] = Field(description="The sessions that support it.")
    confirmed: int = Field(description="Times a passing command, the project's own files "
                           "or an answer naming the command it ran confirmed it.")
    stated: bool = Field(description="The user said it.")
    observed_at: int | None
    superseded_by: str | None = Field(description="The newer fact that replaced it.")
    evidence: FactEvidence


class FactPage(Out):
    items: list[Fact]
    next_cursor: str | None


class FactQuery(In):
    project: str | None = ProjectFilter
    scope: Scope | None = None
    status: FactStatusOrAny = "active"
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


class PinIn(Body):
    id: str = Id


class DismissIn(Body):
    id: str = Field(min_length=1, max_length=200, description="A memory or fact id.")
    undo: bool = Field(default=False, description="True brings it back.")


class PromoteIn(Body):
    id: str = Field(min_length=1, max_length=200, description="A memory or fact id.")
    scope: Scope = Field(
        default="global", description="global: visible to every project; project: back home.")


class CuratedMemory(Memory):
    type: Literal["memory"]


class CuratedFact(Fact):
    type: Literal["fact"]


Curated = Annotated[CuratedMemory | CuratedFact, Field(discriminator="type")]


class EraseIds(Body):
    ids: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        min_length=1, max_length=10_000, description="Memory and/or fact ids.")


class EraseSession(Body):
    session_id: str = Field(min_length=1, max_length=200, description="Every memory of a session.")


class EraseProject(Body):
    project: str = Field(min_length=1, max_length=1000, description="Every memory of a project.")


EraseIn = EraseIds | EraseSession | EraseProject


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


class VerifyIn(Body):
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


class RuleCreate(Body):
    text: str = Field(min_length=1, max_length=1000, pattern=NonBlank)
    project: str | None = Field(default=None, min_length=1, max_length=1000, pattern=NonBlank,
                                description="Absent or null: a global rule.")
    tools: list[Host] = Field(default_factory=list, max_length=20,
                              description="Limit to these hosts (empty: every host).")
    enabled: bool = True


class RuleEdit(Patch):
    text: Annotated[str, Field(min_length=1, max_length=1000, pattern=NonBlank)] | Opt = None
    tools: Annotated[list[Host], Field(max_length=20)] | Opt = None
    enabled: bool | Opt = None


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
    project: str | None = Field(default=None, min_length=1, max_length=1000,
                                description="This project's sessions (a session has no scope).")
    tool: str | None = Field(default=None, max_length=50)
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = Cursor


class Job(Out):
    id: int
    type: str
    session_id: str
    project: str
    state: JobState
    attempts: int
    max_attempts: int
    lease_owner: str | None = Field(description="The worker holding it while it runs.")
    lease_expires_at: int | None
    next_run_at: int
    last_error: str | None
    result: dict[str, Any] | None = Field(description="What a done job produced (counts).")
    created_at: int
    updated_at: int
    finished_at: int | None
    enqueued_at: int | None = Field(description="When its latest message was sent.")
    started_at: int | None = Field(description="When its latest attempt started.")
    next_run: str | None
    created: str | None
    updated: str | None
    finished: str | None
    lease_expires: str | None
    started: str | None
    enqueued: str | None


class JobPage(Out):
    items: list[Job]
    next_cursor: str | None


class JobQuery(In):
    state: JobState | None = None
    limit: int = Field(default=50, ge=1, le=500)
    cursor: str | None = JobCursor


class Setting(Out):
    key: str
    value: Any
    default: Any
    type: Literal["bool", "int", "str", "list"]
    help: str
    minimum: int | None
    maximum: int | None
    note: str | None = Field(description="What else decides its effect (environment, …).")


class SettingList(Out):
    items: list[Setting]



class ExportQuery(In):
    project: str | None = Field(default=None, min_length=1, max_length=1000,
                                description="The rows this project owns (not other projects' "
                                            "global ones); absent: every project.")


class ImportQuery(In):
    enable_rules: bool = Field(default=False, description="Enable the bundle's rules "
                               "(by default they arrive disabled and are listed in the report).")


class ImportedRule(Out):
    id: str
    text: str
    project: str | None
    enabled: bool


class ImportReport(Out):
    added: dict[str, int]
    skipped: dict[str, int]
    rules: list[ImportedRule]
