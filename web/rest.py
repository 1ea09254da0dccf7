"""REST /v1: one table of operations (method, path, inputs, output, handler) that serves the
routes and generates the OpenAPI document, so the two cannot drift apart.

Handlers are sync functions over a SQLite connection: they run on Starlette's thread pool with
that thread's connection, and call the same service functions as the CLI and MCP.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

import anyio.to_thread
from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    TypeAdapter,
    ValidationError,
    create_model,
)
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from aletheia import (
    __version__,
    activity,
    blocks,
    bundles,
    config,
    context,
    curate,
    db,
    erase,
    ids,
    listing,
    memories,
    receipts,
    rules,
    sessions,
    settings,
    store,
    vocab,
)
from aletheia.errors import InvalidInput
from aletheia.search import SearchQuery, search
from aletheia.web import schemas as s
from aletheia.web import security
from aletheia.web.connections import Connections

NDJSON = "application/x-ndjson"


@dataclass
class Call:
    """What a handler gets: the connection, path parameters, validated query and body; and a
    way to open a connection of its own (a streamed response outlives the pooled one's turn)."""

    conn: Any
    path: dict[str, str]
    query: Any = None
    body: Any = None
    raw: bytes = b""
    connect: Callable[[], Any] | None = None
    via: str = "rest"  # "dashboard" when a person's browser asked (its fetches are not the agent's)


@dataclass
class Op:
    method: str
    path: str
    name: str
    summary: str
    handler: Callable[[Call], Any]
    tag: str
    query: type[BaseModel] | None = None
    body: Any = None  # a pydantic model or a union of them
    response: Any = None
    status: int = 200
    also: tuple[int, ...] = ()  # further success statuses the handler may return
    errors: tuple[int, ...] = (400,)
    raw_body: str | None = None  # a non-JSON body's media type
    raw_response: str | None = None
    path_schema: dict[str, dict[str, Any]] = field(default_factory=dict)
    adapter: TypeAdapter[Any] | None = field(default=None, repr=False)
    body_adapter: TypeAdapter[Any] | None = field(default=None, repr=False)


class Created:
    """A handler's result with a status other than the operation's first one."""

    def __init__(self, value: Any, status: int) -> None:
        self.value = value
        self.status = status


# -- handlers ------------------------------------------------------------------------------------

def _projects(c: Call) -> Any:
    return {"items": activity.list_projects(c.conn)}


def _per_day(c: Call) -> Any:
    q: s.PerDayQuery = c.query
    return {"items": activity.memories_per_day(c.conn, project=q.project, days=q.days,
                                               tz_offset_min=q.tz_offset_min)}


def _health(c: Call) -> Any:
    return {"status": "ok", "version": __version__, "schema_version": db.schema_version(c.conn)}


def _doctor(c: Call) -> Any:
    from aletheia import doctor

    q: s.DoctorQuery = c.query
    return doctor.run(integrity=q.integrity)


def _vocabulary(c: Call) -> Any:
    return vocab.as_dict()


def _stats(c: Call) -> Any:
    return {**memories.stats(c.conn), "context": blocks.economics()["projects"]}


def _economics(c: Call) -> Any:
    q: s.EconomicsQuery = c.query
    return blocks.economics(q.project, days=q.days, recent=q.recent)


def _events(c: Call) -> Any:
    from aletheia.capture.adapters import adapt
    from aletheia.capture.ingest import ingest

    body: s.EventIn = c.body
    # The same pipeline as the hook; the server's environment must not leak into the event.
    ev = adapt(body.host, body.event, body.payload, env={})
    done = ingest(c.conn, [ev], source="rest", env={}, project=body.project or None,
                  context="block").last
    assert done is not None
    if done.status == "ignored":
        return {"accepted": False, "reason": f"{body.host} {body.event} is not an event we keep"}
    if done.status == "excluded":
        return {"accepted": False, "reason": "the project is excluded", "project": done.project}
    if done.status == "invalid":
        raise InvalidInput(done.error)
    out: dict[str, Any] = {"accepted": True, "project": done.project}
    if done.memory_id is not None:
        out.update(memory_id=done.memory_id, inserted=done.inserted)
    if done.stop_queued:
        out["stop_queued"] = True
    if done.context is not None:
        # What the SessionStart hook would print: a host posting events over HTTP gets it too.
        out["context"] = done.context
    elif done.status == "empty":
        out.update(accepted=False, reason="the event carries nothing to keep")
    return out


_DISMISSED = {"exclude": False, "include": None, "only": True}


def _list_memories(c: Call) -> Any:
    q: s.MemoryQuery = c.query
    return listing.list_memories(
        c.conn, project=q.project, kind=q.kind, tool=q.tool, session_id=q.session_id,
        scope=q.scope, pinned=q.pinned, dismissed=_DISMISSED[q.dismissed], limit=q.limit,
        cursor=q.cursor,
    ).to_dict()


def _create_memory(c: Call) -> Any:
    b: s.MemoryCreate = c.body
    item = store.MemoryIn(source="rest", **b.model_dump())
    result = store.write_memory(c.conn, item)
    out = {"id": result.id, "inserted": result.inserted}
    return out if result.inserted else Created(out, 200)


def _get_memory(c: Call) -> Any:
    return memories.get_memory(c.conn, c.path["id"])


def _edit_memory(c: Call) -> Any:
    changes = c.body.model_dump(exclude_none=True)
    return curate.edit(c.conn, c.path["id"], changes)


def _pins(c: Call) -> Any:
    q: s.PinQuery = c.query
    return listing.list_memories(c.conn, project=q.project, scope=q.scope, pinned=True,
                                 dismissed=None, limit=q.limit, cursor=q.cursor).to_dict()


def _pin(c: Call) -> Any:
    return curate.pin(c.conn, c.body.id)


def _unpin(c: Call) -> Any:
    return curate.unpin(c.conn, c.path["id"])


def _dismiss(c: Call) -> Any:
    return curate.dismiss(c.conn, c.body.id, undo=c.body.undo)


def _promote(c: Call) -> Any:
    return curate.promote(c.conn, c.body.id, scope=c.body.scope)


def _erase(c: Call) -> Any:
    b = c.body
    if isinstance(b, s.EraseIds):
        return erase.erase(c.conn, ids_=b.ids)
    if isinstance(b, s.EraseSession):
        return erase.erase(c.conn, session_id=b.session_id)
    return erase.erase(c.conn, project=b.project)


def _search(c: Call) -> Any:
    q: s.SearchParams = c.query
    query = SearchQuery(
        q=q.q, project=q.project, scope=q.scope, kind=q.kind, tool=q.tool,
        session_id=q.session_id, since=q.since, until=q.until,
        pinned=q.pinned, include_dismissed=q.include_dismissed, include_facts=q.include_facts,
        semantic=q.semantic, limit=q.limit,
    )
    hits = search(c.conn, query)
    blocks.record_fetch("search", q.project, c.via)
    return {"items": [h.to_dict() for h in hits]}


def _timeline(c: Call) -> Any:
    q: s.TimelineParams = c.query
    rows = memories.timeline(c.conn, q.anchor, before=q.before, after=q.after)
    blocks.record_fetch_of("timeline", rows, c.via)
    return {"items": rows}


def _observations(c: Call) -> Any:
    wanted = [i for value in c.query.ids for i in value.split(",") if i]
    rows = memories.get_observations(c.conn, wanted)
    blocks.record_fetch_of("get_observations", rows, c.via)
    return {"items": rows}


def _context(c: Call) -> Any:
    q: s.ContextParams = c.query
    block = context.build_block(c.conn, q.project, host=q.host)
    return {"project": q.project, "block": block, "chars": len(block)}


def _facts(c: Call) -> Any:
    q: s.FactQuery = c.query
    return listing.list_facts(c.conn, project=q.project, scope=q.scope,
                              status=None if q.status == "any" else q.status,
                              limit=q.limit, cursor=q.cursor).to_dict()


def _rules(c: Call) -> Any:
    return {"items": rules.list_rules(c.conn, project=c.query.project)}


def _add_rule(c: Call) -> Any:
    b: s.RuleCreate = c.body
    return rules.add_rule(c.conn, b.text, project=b.project, tools=b.tools, enabled=b.enabled)


def _edit_rule(c: Call) -> Any:
    b: s.RuleEdit = c.body
    return rules.update_rule(c.conn, c.path["id"], enabled=b.enabled, tools=b.tools, text=b.text)


def _delete_rule(c: Call) -> Any:
    rules.delete_rule(c.conn, c.path["id"])
    return {"deleted": c.path["id"]}


def _sessions(c: Call) -> Any:
    q: s.SessionQuery = c.query
    return sessions.list_sessions(c.conn, project=q.project, tool=q.tool, limit=q.limit,
                                  cursor=q.cursor).to_dict()


def _session(c: Call) -> Any:
    return sessions.get_session(c.conn, c.path["id"])


def _jobs(c: Call) -> Any:
    from aletheia.tasks import jobs

    q: s.JobQuery = c.query
    return jobs.list_jobs(c.conn, state=q.state, limit=q.limit, cursor=q.cursor).to_dict()


def _retry_job(c: Call) -> Any:
    from aletheia.tasks import jobs

    raw = c.path["id"]
    if not raw.isdigit() or len(raw) > 18:  # 18 digits always fit SQLite's 64-bit integer
        raise InvalidInput("a job id is a whole number (at most 18 digits)")
    job_id = int(raw)
    return jobs.retry(c.conn, job_id, now=ids.now_ms()).to_dict()


def _setting_note(key: str) -> str | None:
    """What else decides the setting's effect (environment overrides, companions)."""
    if key == "provider":
        from aletheia import provider

        return (f"a preset ({', '.join(provider.PRESETS)}) or an OpenAI-compatible base URL; "
                f"the model comes from {provider.MODEL_ENV} in the worker's environment (unset: "
                f"offline rules); {provider.PROVIDER_ENV} there overrides this setting")
    if key == "excluded_projects":
        return "ALETHEIA_EXCLUDED_PROJECTS in a host's environment adds more"
    return None


def _setting_view(conn: Any, key: str) -> dict[str, Any]:
    spec = settings.SETTINGS.get(key)
    if spec is None:
        from aletheia.errors import NotFound

        raise NotFound(f"unknown setting: {key}")
    return {
        "key": key, "value": settings.get(conn, key), "default": spec.default,
        "type": spec.kind.__name__, "help": spec.help, "minimum": spec.minimum,
        "maximum": spec.maximum, "note": _setting_note(key),
    }


def _settings(c: Call) -> Any:
    return {"items": [_setting_view(c.conn, key) for key in settings.SETTINGS]}


def _setting_getter(key: str) -> Callable[[Call], Any]:
    return lambda c: _setting_view(c.conn, key)


def _setting_putter(key: str) -> Callable[[Call], Any]:
    def put(c: Call) -> Any:
        with db.tx(c.conn):
            settings.put(c.conn, key, c.body.value)
        return _setting_view(c.conn, key)

    return put


def _integral(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _setting_body(key: str, spec: config.Setting) -> type[BaseModel]:
    """A body model whose ``value`` has this setting's own type and bounds."""
    kind: Any
    bounds: dict[str, Any] = {}
    if spec.kind is bool:
        kind = bool
    elif spec.kind is int:
        # JSON Schema counts 2.0 as an integer; strict pydantic would not.
        kind = Annotated[int, BeforeValidator(_integral)]
        bounds = {"ge": spec.minimum, "le": spec.maximum}
    elif spec.kind is list:
        kind = list[Annotated[str, Field(min_length=1, max_length=1000)]]
        bounds = {"max_length": 500}
    else:
        kind = str
        bounds = {"max_length": 2000}
    name = "Set_" + "".join(part.title() for part in key.replace(".", "_").split("_"))
    model: type[BaseModel] = create_model(
        name, __base__=s.Body, value=(kind, Field(description=spec.help, **bounds)))
    return model


def _receipts(c: Call) -> Any:
    return receipts.list_receipts(c.conn, limit=c.query.limit, cursor=c.query.cursor).to_dict()


def _receipt(c: Call) -> Any:
    return receipts.get_receipt(c.conn, c.path["id"])


def _verify(c: Call) -> Any:
    return receipts.verify(c.body.model_dump(), conn=c.conn)


def _export(c: Call) -> Any:
    # Streamed from a connection of its own: the export holds one read snapshot while the
    # client reads, and the pooled connection must stay free for the thread's next request.
    assert c.connect is not None
    return bundles.stream_lines(c.connect(), c.query.project)


def _import(c: Call) -> Any:
    lines = c.raw.decode("utf-8", "replace").splitlines()
    return bundles.import_records(c.conn, bundles.parse_lines(lines),
                                  enable_rules=c.query.enable_rules).to_dict()


# -- the table -----------------------------------------------------------------------------------

OPS: list[Op] = [
    Op("GET", "/v1/health", "health", "Liveness and versions (no token needed; no data)",
       _health, "meta", response=s.Health, errors=()),
    Op("GET", "/v1/doctor", "doctor", "What `aletheia doctor` reports: worker, queue, spool, "
       "quarantine, losses, disk, files (ok is false when something needs the user)", _doctor,
       "meta", query=s.DoctorQuery, response=s.DoctorReport),
    Op("GET", "/v1/vocabulary", "vocabulary",
       "Hosts, kinds, scopes, fact statuses, job states and sources (the dashboard's lists)",
       _vocabulary, "meta", response=s.Vocabulary, errors=()),
    Op("GET", "/v1/stats", "stats", "Counts by kind, project, sessions, facts, jobs", _stats,
       "meta", response=s.Stats, errors=()),
    Op("GET", "/v1/projects", "list_projects",
       "Projects with readable names (the repository's folder), counts and last activity",
       _projects, "meta", response=s.ProjectList, errors=()),
    Op("GET", "/v1/stats/daily", "memories_per_day",
       "Memories captured per day over the last days (local days by tz_offset_min)",
       _per_day, "meta", query=s.PerDayQuery, response=s.PerDayList),
    Op("GET", "/v1/stats/context", "context_economics",
       "Per project and per recent session: tokens of context injected (block, per-prompt, "
       "per-file) and the detail fetches that followed", _economics, "meta",
       query=s.EconomicsQuery, response=s.Economics),
    Op("POST", "/v1/events", "post_event",
       "Capture a host hook event (the same adapters, redaction and stop queue as the hooks)",
       _events, "capture", body=s.EventIn, response=s.EventOut),
    Op("GET", "/v1/memories", "list_memories", "Memories, newest first, filtered and paginated",
       _list_memories, "memories", query=s.MemoryQuery, response=s.MemoryPage),
    Op("POST", "/v1/memories", "create_memory",
       "Store a memory (redacted; 201 when new, 200 when already stored)", _create_memory,
       "memories", body=s.MemoryCreate, response=s.WriteResult, status=201, also=(200,)),
    Op("GET", "/v1/memories/{id}", "get_memory", "One memory in full", _get_memory, "memories",
       response=s.Memory, errors=(404,)),
    Op("PATCH", "/v1/memories/{id}", "edit_memory",
       "Edit a memory's content (redacted like a new one)", _edit_memory, "memories",
       body=s.MemoryEdit, response=s.Memory, errors=(400, 404)),
    Op("GET", "/v1/pins", "list_pins", "Pinned memories", _pins, "curation", query=s.PinQuery,
       response=s.MemoryPage),
    Op("POST", "/v1/pins", "pin", "Pin a memory (it leads every context block)", _pin,
       "curation", body=s.PinIn, response=s.Memory, errors=(400, 404)),
    Op("DELETE", "/v1/pins/{id}", "unpin", "Unpin a memory", _unpin, "curation",
       response=s.Memory, errors=(404,)),
    Op("POST", "/v1/dismiss", "dismiss",
       "Hide a memory or fact from search and context (kept; undo: true brings it back)",
       _dismiss, "curation", body=s.DismissIn, response=s.Curated, errors=(400, 404)),
    Op("POST", "/v1/promote", "promote", "Give a memory or fact global scope (or take it back)",
       _promote, "curation", body=s.PromoteIn, response=s.Curated, errors=(400, 404)),
    Op("POST", "/v1/erase", "erase",
       "Delete memories/facts for good (by ids, session or project); returns a signed receipt",
       _erase, "curation", body=s.EraseIn, response=s.EraseOut, errors=(400, 404)),
    Op("GET", "/v1/search", "search", "Ranked search over memories and facts (one ranking "
       "for every interface)", _search, "recall", query=s.SearchParams,
       response=s.SearchResult),
    Op("GET", "/v1/timeline", "timeline", "The memories around an anchor id (or a time)",
       _timeline, "recall", query=s.TimelineParams, response=s.MemoryList, errors=(400, 404)),
    Op("GET", "/v1/observations", "get_observations", "Full memories by id, in the order asked",
       _observations, "recall", query=s.ObservationParams, response=s.MemoryList,
       errors=(400, 404)),
    Op("GET", "/v1/context", "context", "The context block a session of the project gets",
       _context, "recall", query=s.ContextParams, response=s.ContextOut),
    Op("GET", "/v1/facts", "list_facts", "Facts, newest first", _facts, "recall",
       query=s.FactQuery, response=s.FactPage),
    Op("GET", "/v1/rules", "list_rules", "Rules (a project's and the global ones)", _rules,
       "rules", query=s.RuleQuery, response=s.RuleList),
    Op("POST", "/v1/rules", "add_rule", "Add a rule (global, or for a project; limit to hosts)",
       _add_rule, "rules", body=s.RuleCreate, response=s.Rule, status=201),
    Op("PATCH", "/v1/rules/{id}", "edit_rule", "Enable, disable, retext or limit a rule to hosts",
       _edit_rule, "rules", body=s.RuleEdit, response=s.Rule, errors=(400, 404)),
    Op("DELETE", "/v1/rules/{id}", "delete_rule", "Delete a rule", _delete_rule, "rules",
       response=s.Deleted, errors=(404,)),
    Op("GET", "/v1/sessions", "list_sessions", "Sessions by last activity", _sessions,
       "sessions", query=s.SessionQuery, response=s.SessionPage),
    Op("GET", "/v1/sessions/{id}", "get_session", "One session", _session, "sessions",
       response=s.SessionDetail, errors=(404,)),
    Op("GET", "/v1/jobs", "list_jobs", "Compression jobs (state=dead for the failed ones)",
       _jobs, "jobs", query=s.JobQuery, response=s.JobPage),
    Op("POST", "/v1/jobs/{id}/retry", "retry_job",
       "Revive a dead job: pending again with a fresh set of attempts",
       _retry_job, "jobs", response=s.Job, errors=(404, 409),
       path_schema={"id": {"type": "string", "pattern": "^[0-9]{1,18}$"}}),
    Op("GET", "/v1/settings", "list_settings", "Every setting with its value, default and help",
       _settings, "settings", response=s.SettingList, errors=()),
    *(op for key, spec in settings.SETTINGS.items() for op in (
        Op("GET", f"/v1/settings/{key}", f"get_setting_{key.replace('.', '_')}",
           f"The setting {key}: {spec.help}", _setting_getter(key), "settings",
           response=s.Setting, errors=()),
        Op("PUT", f"/v1/settings/{key}", f"put_setting_{key.replace('.', '_')}",
           f"Change {key}: {spec.help}", _setting_putter(key), "settings",
           body=_setting_body(key, spec), response=s.Setting),
    )),
    Op("GET", "/v1/receipts", "list_receipts", "Erase receipts, newest first", _receipts,
       "receipts", query=s.PageQuery, response=s.ReceiptPage),
    Op("GET", "/v1/receipts/{id}", "get_receipt", "One signed receipt", _receipt, "receipts",
       response=s.Receipt, errors=(404,)),
    Op("POST", "/v1/receipts/verify", "verify_receipt",
       "Check a receipt's signature and that what it erased is still gone", _verify,
       "receipts", body=s.VerifyIn, response=s.VerifyOut),
    Op("GET", "/v1/bundles/export", "export_bundle",
       "A bundle (JSON Lines: a header, then memories, facts, rules, sessions)", _export,
       "bundles", query=s.ExportQuery, raw_response=NDJSON),
    Op("POST", "/v1/bundles/import", "import_bundle",
       "Import a bundle: idempotent by id, redacted; reports added and skipped", _import,
       "bundles", query=s.ImportQuery, raw_body=NDJSON, response=s.ImportReport),
]
for _op in OPS:
    if _op.response is not None:
        _op.adapter = TypeAdapter(_op.response)
    if _op.body is not None:
        _op.body_adapter = TypeAdapter(_op.body)


# -- serving -------------------------------------------------------------------------------------

def _validation_message(exc: ValidationError, where: str) -> str:
    parts = []
    for err in exc.errors()[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or where
        parts.append(f"{where}.{loc}: {err['msg']}" if loc != where else f"{where}: {err['msg']}")
    return "; ".join(parts)


def _query_input(op: Op, request: Request) -> Any:
    assert op.query is not None
    data: dict[str, Any] = {}
    for key in request.query_params:
        values = request.query_params.getlist(key)
        info = op.query.model_fields.get(key)
        is_list = info is not None and getattr(info.annotation, "__origin__", None) is list
        data[key] = values if is_list else values[-1]
    try:
        return op.query.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(_validation_message(exc, "query")) from None


async def _body_input(op: Op, request: Request) -> tuple[Any, bytes]:
    raw = await request.body()
    if op.raw_body is not None:
        return None, raw
    if op.body is None:
        return None, b""
    ctype = request.headers.get("content-type", "")
    if raw and not ctype.lower().startswith("application/json"):
        raise InvalidInput("send the body as application/json")
    assert op.body_adapter is not None
    try:
        return op.body_adapter.validate_json(raw or b"null"), raw
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors()):
            raise InvalidInput("the body is not valid JSON") from None
        raise InvalidInput(_validation_message(exc, "body")) from None


def _endpoint(op: Op, conns: Connections) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        query = _query_input(op, request) if op.query is not None else None
        if op.query is None and request.query_params:
            raise InvalidInput(f"{op.path} takes no query parameters")
        body, raw = await _body_input(op, request)
        call_path = {k: str(v) for k, v in request.path_params.items()}
        via = "dashboard" if request.scope.get("state", {}).get("auth") == "cookie" else "rest"

        def run() -> Any:
            return op.handler(Call(conns.get(), call_path, query, body, raw, conns.open, via))

        if op.raw_response is not None:
            # Starlette pulls a sync iterator on its thread pool, chunk by chunk: the body is
            # never built whole in memory.
            chunks: Iterator[bytes] = await anyio.to_thread.run_sync(run)
            name = "aletheia-bundle.jsonl"
            return StreamingResponse(
                chunks, media_type=op.raw_response,
                headers={"content-disposition": f'attachment; filename="{name}"'},
            )
        result = await anyio.to_thread.run_sync(run)
        status = op.status
        if isinstance(result, Created):
            result, status = result.value, result.status
        if hasattr(result, "to_dict"):
            result = result.to_dict()
        assert op.adapter is not None
        payload = op.adapter.dump_json(op.adapter.validate_python(result))
        return Response(payload, status_code=status, media_type="application/json")

    endpoint.__name__ = op.name
    return endpoint


def routes(conns: Connections) -> list[BaseRoute]:
    by_path: dict[str, list[Op]] = {}
    for op in OPS:
        by_path.setdefault(op.path, []).append(op)
    out: list[BaseRoute] = [Route("/v1/openapi.json", endpoint=_openapi_endpoint, methods=["GET"])]
    # Fixed paths first: /v1/receipts/verify must not be taken for /v1/receipts/{id}.
    for path, ops in sorted(by_path.items(), key=lambda item: "{" in item[0]):
        table = {op.method: _endpoint(op, conns) for op in ops}

        async def dispatch(request: Request, table: dict[str, Any] = table) -> Response:
            handler = table[request.method if request.method != "HEAD" else "GET"]
            response: Response = await handler(request)
            return response

        out.append(Route(path, endpoint=dispatch, methods=sorted(table)))
    return out


# -- the OpenAPI document ------------------------------------------------------------------------

_STATUS_TEXT = {
    200: "OK", 201: "Created", 400: "Invalid input", 401: "Token missing or wrong",
    403: "Cross-origin request refused", 404: "Not found", 409: "Conflict",
    413: "Body too large", 421: "Host not allowed", 500: "Internal error",
    503: "Database busy",
}
_REF = "#/components/schemas/{model}"


def _schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    schema = TypeAdapter(tp).json_schema(ref_template=_REF, mode="serialization")
    defs.update(schema.pop("$defs", {}))
    if isinstance(tp, type) and issubclass(tp, BaseModel) and "properties" in schema:
        defs[tp.__name__] = schema
        return {"$ref": _REF.format(model=tp.__name__)}
    return schema


def _input_schema(tp: Any, defs: dict[str, Any]) -> dict[str, Any]:
    schema = TypeAdapter(tp).json_schema(ref_template=_REF, mode="validation")
    defs.update(schema.pop("$defs", {}))
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        defs[tp.__name__] = schema
        return {"$ref": _REF.format(model=tp.__name__)}
    return schema


def _parameters(op: Op, defs: dict[str, Any]) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = []
    for name in [seg[1:-1] for seg in op.path.split("/") if seg.startswith("{")]:
        schema = op.path_schema.get(name, {"type": "string", "minLength": 1, "pattern": "^[^/]+$"})
        params.append({"name": name, "in": "path", "required": True, "schema": schema})
    if op.query is not None:
        schema = op.query.model_json_schema(ref_template=_REF, mode="validation")
        defs.update(schema.pop("$defs", {}))
        required = set(schema.get("required", []))
        for name, prop in schema.get("properties", {}).items():
            prop = dict(prop)
            description = prop.pop("description", None)
            prop.pop("title", None)
            param: dict[str, Any] = {"name": name, "in": "query", "required": name in required,
                                     "schema": prop}
            if description:
                param["description"] = description
            if prop.get("type") == "array":
                param.update(style="form", explode=True)
            params.append(param)
    return params


def openapi() -> dict[str, Any]:
    defs: dict[str, Any] = {}
    error_ref = _schema(s.Error, defs)
    doc_paths: dict[str, Any] = {}
    for op in OPS:
        entry: dict[str, Any] = {
            "operationId": op.name, "summary": op.summary, "tags": [op.tag],
            "parameters": _parameters(op, defs), "responses": {},
        }
        if op.body is not None:
            entry["requestBody"] = {"required": True, "content": {
                "application/json": {"schema": _input_schema(op.body, defs)}}}
        elif op.raw_body is not None:
            entry["requestBody"] = {"required": True, "content": {
                op.raw_body: {"schema": {"type": "string"}}}}
        for status in (op.status, *op.also):
            if op.raw_response is not None:
                content = {op.raw_response: {"schema": {"type": "string"}}}
            else:
                content = {"application/json": {"schema": _schema(op.response, defs)}}
            entry["responses"][str(status)] = {"description": _STATUS_TEXT[status],
                                               "content": content}
        public = op.path in security.PUBLIC
        if public:
            entry["security"] = []  # answered without a token (it holds no data)
        statuses = set(op.errors) | {421, 500, 503} | (set() if public else {401})
        if op.method not in ("GET", "HEAD"):
            statuses |= {403, 413}
        statuses.add(400)  # a malformed request line, path, query or body
        for status in sorted(statuses):
            entry["responses"][str(status)] = {
                "description": _STATUS_TEXT[status],
                "content": {"application/json": {"schema": error_ref}},
            }
        if not entry["parameters"]:
            del entry["parameters"]
        doc_paths.setdefault(op.path, {})[op.method.lower()] = entry
    return {
        "openapi": "3.1.0",
        "info": {"title": "aletheia", "version": __version__,
                 "description": "Local memory store for AI coding agents. Every error is "
                                "{status, message}. Send the local token as a bearer token. "
                                "project= on every reader (search, memories, pins, facts, "
                                "timeline) means the project's own rows plus the rows promoted "
                                "to global scope; add scope=project for its own only."},
        "servers": [{"url": "/"}],
        "paths": doc_paths,
        "components": {
            "schemas": defs,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
    }


_OPENAPI_CACHE: list[bytes] = []


async def _openapi_endpoint(request: Request) -> Response:
    if not _OPENAPI_CACHE:
        _OPENAPI_CACHE.append(json.dumps(openapi(), indent=1).encode())
    return Response(_OPENAPI_CACHE[0], media_type="application/json")
