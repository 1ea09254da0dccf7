"""The one capture pipeline: resolve the project → check exclusions → build the memory →
redact it → write it → maybe queue the stop → maybe render the context.

The hook, REST ``POST /v1/events``, the transcript importers and ``aletheia watch`` all run
``ingest``; what differs between them is a handful of keyword arguments (where the project
comes from, what a bad item becomes, when a session is queued), never a copy of the steps.
``adapt`` (``capture.adapters``) turns a host payload into the events it takes.

Standard library only: the hook runs it on every host event.
"""

from __future__ import annotations

import os
import sqlite3
import time

from aletheia import settings, store
from aletheia.capture.event import (
    IGNORE,
    PROMPT,
    RESPONSE_STOP,
    SESSION_END,
    SESSION_START,
    TOOL_START,
    TOOL_USE,
)
from aletheia.capture.memory import memory_kind, to_memory
from aletheia.errors import InvalidInput
from aletheia.project import excluded_patterns, is_excluded, resolve_project
from aletheia.toolpaths import tool_path

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import Any, Protocol

    from aletheia.capture.event import Event

    Progress = Callable[[int], None]

    class Ledger(Protocol):
        """What a caller that may be killed mid-write (the hook's watchdog) keeps: the prepared,
        redacted items it still owes the store, in the spool's format."""

        def owe(self, items: list[dict[str, Any]]) -> None: ...

        def paid(self) -> None: ...


BATCH = 500  # memories per write transaction


class Summary:
    """What an ingest read and did (also what importers report).  ``last`` is the outcome of the
    last event, which is what a one-event caller (the hook, REST) reads."""

    COUNTS = ("files", "read", "inserted", "already", "excluded", "invalid", "sessions_queued")

    def __init__(self, source: str, files: int = 0) -> None:
        self.source = source
        self.files = files
        self.read = 0  # memories the events carried
        self.inserted = 0  # new rows
        self.already = 0  # identical content already stored (a hook, or an earlier import)
        self.excluded = 0  # in an excluded project
        self.invalid = 0  # empty or malformed
        self.sessions_queued = 0
        self.by_kind: dict[str, int] = {}
        self.last: Outcome | None = None

    @property
    def stored(self) -> int:
        return self.inserted + self.already

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"source": self.source}
        out.update((name, getattr(self, name)) for name in self.COUNTS)
        out.update(by_kind=dict(self.by_kind), stored=self.stored)
        return out

    def line(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.by_kind.items())) or "nothing"
        return (f"{self.source}: read {self.read} ({kinds}) from {self.files} file(s); "
                f"inserted {self.inserted}, already stored {self.already}, excluded "
                f"{self.excluded}, invalid {self.invalid}; sessions queued {self.sessions_queued}")


class Outcome:
    """What one event came to.  ``status``: ``ok``, ``ignored`` (not an event we keep),
    ``excluded``, ``invalid`` (``error`` says why) or ``empty`` (nothing to write: a session
    start, a stop without an answer)."""

    __slots__ = ("event", "project", "session_id", "host", "status", "error", "row", "stop",
                 "memory_id", "inserted", "stop_queued", "context")

    def __init__(self, event: Event | None, project: str, session_id: str | None = None,
                 host: str | None = None) -> None:
        self.event = event
        self.project = project
        self.session_id = event.session_id if event is not None else session_id
        self.host = event.host if event is not None else host
        self.status = "ok"
        self.error = ""
        self.row: dict[str, Any] | None = None  # the prepared (redacted) memory row
        self.stop: dict[str, Any] | None = None  # the stop-queue item, in the spool's format
        self.memory_id: str | None = None
        self.inserted = False
        self.stop_queued = False
        self.context: str | None = None

    def owed(self) -> list[dict[str, Any]]:
        """This outcome's writes in the spool's format."""
        out: list[dict[str, Any]] = []
        if self.row is not None:
            out.append({"type": "memory", "row": self.row})
        if self.stop is not None:
            out.append(self.stop)
        return out


def ingest(
    conn: sqlite3.Connection | Callable[[], sqlite3.Connection],
    events: Iterable[Event],
    *,
    source: str,
    env: Mapping[str, str] | None = None,
    project: str | None = None,
    cwd: str | None = None,
    stops: bool = True,
    queue_touched: bool = False,
    placeholder: bool = False,
    context: str | None = None,
    replay_spool: bool = False,
    ledger: Ledger | None = None,
    summary: Summary | None = None,
    progress: Progress | None = None,
) -> Summary:
    """Capture ``events`` into the store (``ignore`` events are skipped).

    - ``conn``: a connection, or a function that opens one once the events are prepared (the
      hook: nothing waits on the database before every item is redacted and owed).
    - ``env``: the host's environment (the project override; ``{}`` for a server, which must
      not lend its own); exclusions read this process's environment and the stored setting.
    - ``project``: the project, when the caller knows it; else the event's ``cwd`` resolves it,
      or ``cwd`` for an event without one (None: such an event, or a relative one, is refused).
    - ``stops``: a Stop/SessionEnd event queues its session (live capture); ``queue_touched``:
      every session that got a new row is queued at the end (imports).
    - ``placeholder``: content that cannot be processed leaves a placeholder memory (the hook:
      the event happened, its text is not kept) instead of counting as invalid.
    - ``context``: on SessionStart, ``"host"`` renders the block as the host reads it, and
      ``"block"`` returns it plain (REST); it lands in ``summary.last.context``.
    - ``replay_spool``: replay the spool on connecting (the hook is "the next writer").
    - ``ledger``: told what is owed before the database is touched, and when it is paid.
    """
    summary = Summary(source) if summary is None else summary
    target = _Target(conn, replay_spool, ledger)
    projects: dict[str, str] = {}
    prepared = (_prepare(ev, source=source, env=env, project=project, cwd=cwd, stops=stops,
                         placeholder=placeholder, patterns=target.patterns, projects=projects,
                         summary=summary) for ev in events)
    touched = _write(target, prepared, summary, progress)
    if queue_touched:
        for session_id in sorted(touched):
            where, host = touched[session_id]
            store.queue_stop(target.get([]), session_id, where, host)
            summary.sessions_queued += 1
    last = summary.last
    if context and last is not None and last.event is not None \
            and last.status in ("ok", "empty") and speaks(last.event):
        known = target.get([])
        if is_excluded(last.project, target.patterns):
            last.status = "excluded"
        else:
            last.context = _context(known, last, context)
    return summary


class _Target:
    """The connection, opened on first need; and the exclusion patterns known so far (before a
    connection exists only the environment's: the stored setting is read once it does)."""

    def __init__(self, conn: sqlite3.Connection | Callable[[], sqlite3.Connection],
                 replay_spool: bool, ledger: Ledger | None) -> None:
        self.conn = conn if isinstance(conn, sqlite3.Connection) else None
        self.connect = conn
        self.replay_spool = replay_spool
        self.ledger = ledger
        self.patterns = _patterns(self.conn)

    def get(self, owed: list[dict[str, Any]]) -> sqlite3.Connection:
        if self.ledger is not None:
            self.ledger.owe(owed)
        if self.conn is None:
            assert not isinstance(self.connect, sqlite3.Connection)
            self.conn = self.connect()
            self.patterns = _patterns(self.conn)
            if self.replay_spool:
                from aletheia import spool

                if spool.pending_size() > 0:
                    spool.replay(self.conn)
        return self.conn


def ingest_memories(
    conn: sqlite3.Connection, items: Iterable[store.MemoryIn], *, summary: Summary,
    progress: Progress | None = None,
) -> Summary:
    """Memories another store already shaped (claude-mem): the second half of ``ingest`` —
    exclusion, redaction, batched writes and the same counts."""
    target = _Target(conn, False, None)

    def prepared() -> Iterator[Outcome]:
        for item in items:
            out = Outcome(None, item.project, item.session_id, item.tool)
            summary.read += 1
            summary.by_kind[item.kind] = summary.by_kind.get(item.kind, 0) + 1
            if is_excluded(item.project, target.patterns):
                out.status = "excluded"
                summary.excluded += 1
            else:
                try:
                    out.row = store.prepare(item)
                except InvalidInput as exc:
                    out.status, out.error = "invalid", exc.message
                    summary.invalid += 1
            yield out

    _write(target, prepared(), summary, progress)
    return summary


def _write(target: _Target, outcomes: Iterable[Outcome], summary: Summary,
           progress: Progress | None) -> dict[str, tuple[str, str | None]]:
    """Write what is ``ok`` in batches; return the sessions that got a new row."""
    touched: dict[str, tuple[str, str | None]] = {}
    batch: list[Outcome] = []
    for out in outcomes:
        summary.last = out
        if out.status == "ok":
            batch.append(out)
        if len(batch) >= BATCH:
            _commit(target, batch, summary, touched, progress)
            batch = []
    if batch:
        _commit(target, batch, summary, touched, progress)
    return touched


def _patterns(conn: sqlite3.Connection | None) -> list[str]:
    extra = settings.get(conn, "excluded_projects") if conn is not None else ()
    return excluded_patterns(extra=extra)


def _prepare(
    ev: Event, *, source: str, env: Mapping[str, str] | None, project: str | None,
    cwd: str | None, stops: bool, placeholder: bool, patterns: list[str],
    projects: dict[str, str], summary: Summary,
) -> Outcome:
    """Everything short of the database: project, exclusion, memory, redaction, stop."""
    if ev.type == IGNORE:
        out = Outcome(ev, project or "")
        out.status = "ignored"
        return out
    if project is None:
        where = ev.cwd or cwd
        if not where or (cwd is None and not os.path.isabs(where)):
            raise InvalidInput("give a project, or a payload with an absolute cwd")
        project = projects.get(where)
        if project is None:
            project = projects[where] = resolve_project(where, env)
    out = Outcome(ev, project)
    kind = memory_kind(ev)
    if kind is not None:
        summary.read += 1
        summary.by_kind[kind] = summary.by_kind.get(kind, 0) + 1
    if is_excluded(project, patterns):
        out.status = "excluded"
        summary.excluded += kind is not None
        return out
    memory = to_memory(ev, project, source) if kind is not None else None
    if memory is not None:
        try:
            out.row = store.prepare(memory)
        except Exception as exc:
            if not placeholder:
                if not isinstance(exc, InvalidInput):
                    raise
                out.status, out.error = "invalid", exc.message
                summary.invalid += 1
                return out
            # Never store what could not be redacted, but keep the fact that the event happened.
            out.row = store.prepare(store.MemoryIn(
                project=project, kind=memory.kind, session_id=memory.session_id, tool=ev.host,
                source=source, event_key=memory.event_key, created_at=memory.created_at,
                title=f"{memory.kind} event (content not kept: it could not be processed)",
            ))
    if stops and ev.type in (RESPONSE_STOP, SESSION_END) and ev.session_id:
        # In the shapes the store keeps (this item may go to the spool as it is)
        out.stop = {"type": "stop", "session_id": store.session_key(ev.session_id),
                    "project": store.project_name(project), "tool": store.host_name(ev.host),
                    "at": int(time.time() * 1000)}
    if out.row is None and out.stop is None:
        out.status = "empty"
    return out


def _commit(target: _Target, batch: list[Outcome], summary: Summary,
            touched: dict[str, tuple[str, str | None]], progress: Progress | None) -> None:
    """Write one batch: its memories in one transaction, then its stops."""
    late = target.conn is None
    conn = target.get([item for out in batch for item in out.owed()])
    if late:  # the stored setting is known only now
        for out in batch:
            if is_excluded(out.project, target.patterns):
                out.status = "excluded"
                summary.excluded += out.row is not None
        batch = [out for out in batch if out.status == "ok"]
    writes = [out for out in batch if out.row is not None]
    rows = [out.row for out in writes if out.row is not None]
    results = store.insert_rows(conn, rows) if rows else []
    for out, result in zip(writes, results, strict=True):
        out.memory_id, out.inserted = result.id, result.inserted
        if result.inserted:
            summary.inserted += 1
            if out.session_id and out.session_id not in touched:
                touched[out.session_id] = (out.project, out.host)
        else:
            summary.already += 1
    for out in batch:
        if out.stop is not None:
            stop = out.stop
            store.queue_stop(conn, stop["session_id"], stop["project"], stop["tool"],
                             now=stop["at"])
            out.stop_queued = True
    if target.ledger is not None:
        target.ledger.paid()
    if progress is not None:
        progress(len(writes))


# Hosts whose after-tool hook output reaches the model, where per-file recall is given: Gemini
# CLI's AfterTool appends additionalContext to the tool result (it has no before-tool context);
# our OpenCode plugin appends it to the tool's output and our Command Code mod returns it from
# afterToolCall (neither host lets a plugin speak to the model between the call and its result).
AFTER_TOOL_CONTEXT = ("gemini", "opencode", "command-code")


def speaks(ev: Event) -> str:
    """What the host reads back from this event: "block" at session start, "prompt"
    (per-prompt recall), "file" (per-file recall: a tool that reads or edits a file, before it
    runs or after, where the host reads that), or "" (nothing).  A tool event that names no
    file opens no store and imports no context module."""
    if ev.type == SESSION_START:
        return "block"
    if ev.type == PROMPT:
        return "prompt"
    if ev.type == TOOL_START or (ev.type == TOOL_USE and ev.host in AFTER_TOOL_CONTEXT):
        return "file" if tool_path(ev.tool_name, ev.tool_input) else ""
    return ""
# The event name each host's JSON output must carry back.
_HOST_EVENT = {
    ("gemini", PROMPT): "BeforeAgent", ("gemini", TOOL_USE): "AfterTool",
    ("claude-code", PROMPT): "UserPromptSubmit", ("codex", PROMPT): "UserPromptSubmit",
    ("opencode", PROMPT): "UserPromptSubmit", ("command-code", PROMPT): "UserPromptSubmit",
    ("claude-code", TOOL_START): "PreToolUse", ("codex", TOOL_START): "PreToolUse",
    ("opencode", TOOL_USE): "PostToolUse", ("command-code", TOOL_USE): "PostToolUse",
}


# What a prompt's recall imports, inside the compiled-pattern cache's "prompt" purpose: search and
# what it imports on its first query, the knowledge-update readings (every prompt's recall runs
# them). bench/cold_search.py imports the same through import_for_prompt, so it measures what
# this hook loads.
PROMPT_MODULES = ("blocks", "claims", "concepts", "context", "followed", "measures", "recall", "search",
                  "toolkinds")


def import_for_prompt() -> None:
    import importlib

    from aletheia.regex_cache import importing

    with importing("prompt"):
        for name in PROMPT_MODULES:
            importlib.import_module(f"aletheia.{name}")


def _context(conn: sqlite3.Connection, out: Outcome, form: str) -> str:
    """What the host reads back: the block (SessionStart), per-prompt or per-file recall; what
    was given is noted for the session (``blocks.record_injection``)."""
    from aletheia.regex_cache import importing

    ev = out.event
    assert ev is not None
    kind, path = "block", None
    # (the modules' own patterns from the compiled-pattern cache: compiling them is a fifth of
    # the process; SessionStart reads the precomputed block and needs no search)
    if ev.type == SESSION_START:
        with importing("block"):
            from aletheia import blocks, context
        if form == "host" and context.opted_out():
            return ""
        text = blocks.current(conn, out.project, ev.host, ev.session_id)
    elif ev.type == PROMPT:
        import_for_prompt()
        from aletheia import blocks, context, recall  # (bound here: used after the branches)
        kind = "prompt"
        text, listed = recall.prompt_block(conn, out.project, ev.prompt, session_id=ev.session_id)
    else:
        target = tool_path(ev.tool_name, ev.tool_input)
        if target is None:
            return ""
        with importing("file"):  # (per-file recall reads no search: as light as a capture)
            from aletheia import blocks, context, recall
        kind = "file"
        text, listed, path = recall.file_block(conn, out.project, target,
                                              session_id=ev.session_id, cwd=ev.cwd)
    if not text:
        return ""
    if kind == "block":
        listed = context.listed_ids(text)
    try:
        blocks.record_injection(ev.session_id, kind=kind, project=out.project, host=ev.host,
                                text=text, ids=listed, path=path)
    except OSError:
        pass  # a full or read-only disk: the context is still given
    if form != "host":
        return text
    event = "SessionStart" if ev.type == SESSION_START else _HOST_EVENT.get((ev.host, ev.type), "")
    if not event:
        return ""  # a host we do not know to read context at this event
    return context.host_form(ev.host, event, text)
