"""Running ``extract_session`` jobs: claim → extract (reads, outside the write lock) → write
the results in short transactions, each of which first checks the lease → mark the job done.

A hook waits at most 50 ms for hub.db's write lock, so no transaction here may hold it for
long, whatever the session's size: facts go in batches of ``FACT_BATCH``, the watermark in
batches of ``MARK_BATCH``, and summaries are built and redacted before their transaction.

``JobRunner.run`` is what a Huey message executes; ``drain`` is ``aletheia compress``: every
due job once, in-process, safe beside running workers (the lease decides who runs what).
"""

from __future__ import annotations

import logging
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from aletheia import blocks, config, db, ids, segments, spool
from aletheia.db import tx
from aletheia.extract import (
    Draft,
    Item,
    RuleExtractor,
    SummaryDraft,
    project_summary,
    session_summary,
    windows,
)
from aletheia.extract.updates import file_edit_drafts, number_drafts, removal_drafts
from aletheia.facts import RULE_CONFIDENCE, AddResult, FactIn, add_facts
from aletheia.store import MemoryIn, insert_rows, prepare
from aletheia.tasks import jobs
from aletheia.tasks.jobs import Job, LeaseLost
from aletheia.tasks.queue import MessageQueue
from aletheia.vocab import ran_command

log = logging.getLogger("aletheia.worker")

# Fault injection for tests: "fail", "sleep:SECONDS" (before extracting) or
# "write-sleep:SECONDS" (between the write transactions: a kill lands mid-write).
FAULT_ENV = "ALETHEIA_JOB_FAULT"
MAX_NEW_ITEMS = 5000  # per job; the rest is left for the next job of the session
CONTEXT_ITEMS = 400  # earlier (already extracted) items replayed so fixes can find their error
SUMMARY_ITEMS = 2000
# Background work is not latency-bound: wait longer for the write lock than interactive use.
WORKER_BUSY_MS = 10_000
# Per write transaction.  Each fact is checked against the fact index for a near-duplicate
# (a full-text query and a similarity per candidate), so a batch stays small; marking a
# memory extracted rewrites its whole row (a tool event's narrative spills onto overflow
# pages), so 250 of them held the lock for up to ~150 ms on a loaded machine.
# bench/lock_hold.py measures the hold these give.
FACT_BATCH = 10
MARK_BATCH = 50
_LOCK_RETRIES = 5

_MEMORY_COLUMNS = "id, kind, title, subtitle, narrative, files, concepts, created_at, tool"
_NEW_ITEMS = f"""
SELECT {_MEMORY_COLUMNS} FROM memory
WHERE session_id = ? AND extracted_at IS NULL AND source != 'worker'
ORDER BY created_at, rowid LIMIT ?
"""
_OLD_ITEMS = f"""
SELECT {_MEMORY_COLUMNS} FROM memory
WHERE session_id = ? AND extracted_at IS NOT NULL AND source != 'worker'
ORDER BY created_at DESC, rowid DESC LIMIT ?
"""
_MARK_EXTRACTED = "UPDATE memory SET extracted_at = ? WHERE id = ? AND extracted_at IS NULL"
_SUPERSEDE = """
UPDATE memory SET dismissed_at = ?
WHERE source = 'worker' AND project = ? AND kind = ? AND session_id IS ? AND id != ?
    AND dismissed_at IS NULL
"""
_KEEP_LIVE = "UPDATE memory SET dismissed_at = NULL, extracted_at = coalesce(extracted_at, ?) WHERE id = ?"
_SESSION_STATE = "SELECT last_event_at, event_count FROM session WHERE id = ?"
_RESTORE_SESSION = "UPDATE session SET last_event_at = ?, event_count = ? WHERE id = ?"
_SESSION_SUMMARY_ID = "UPDATE session SET summary_memory_id = ? WHERE id = ?"
_HAS_NEW = (
    "SELECT 1 FROM memory WHERE session_id = ? AND extracted_at IS NULL AND source != 'worker' LIMIT 1"
)
_REQUEUE = """
INSERT INTO stop_queue (session_id, project, tool, queued_at) VALUES (?, ?, NULL, ?)
ON CONFLICT(session_id) DO NOTHING
"""


@dataclass
class Extraction:
    """What a job will write, computed before the write transaction."""

    consumed: list[str] = field(default_factory=list)
    facts: list[FactIn] = field(default_factory=list)
    summary: SummaryDraft | None = None
    windows: int = 0
    provider_windows: int = 0
    fallbacks: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    job_id: int
    state: str  # done / retry_wait / dead / lost
    attempts: int
    facts_added: int = 0
    facts_merged: int = 0
    memories: int = 0
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Heartbeat = Callable[[], None]
Extractor = Callable[[sqlite3.Connection, Job, Heartbeat], Extraction]


def _items(rows: Sequence[sqlite3.Row]) -> list[Item]:
    return [Item.from_row(r) for r in rows]


# A command no word of ours names (``command:ran:…``, ``extract.rules``) becomes a fact once it
# is a habit: run clean twice in this session, already a fact, or run before in an earlier
# session (its tool event's title holds the command line) — not a probe run once.
_RAN_KNOWN = "SELECT 1 FROM fact WHERE project = ? AND subject = ? AND value = ? AND status = 'active' LIMIT 1"
_RAN_BEFORE = """
SELECT 1 FROM memory WHERE project = ? AND created_at < ? AND kind = 'tool_event' AND session_id IS NOT ?
    AND instr(title, ?) > 0 AND title NOT LIKE '% (failed)' LIMIT 1
"""


def _habits(conn: sqlite3.Connection, job: Job, drafts: list[Draft]) -> list[Draft]:
    """``drafts`` without the commands run clean once (the earlier run, when there was one,
    counts as a confirmation of a fact made now)."""
    out = []
    for d in drafts:
        if ran_command(d.subject) and d.confirmed < 2 and d.value and \
                conn.execute(_RAN_KNOWN, (job.project, d.subject, d.value)).fetchone() is None:
            if conn.execute(_RAN_BEFORE, (job.project, d.at, job.session_id, d.value)).fetchone() is None:
                continue
            d.confirmed += 1
        out.append(d)
    return out


def _fact_in(job: Job, d: Draft) -> FactIn:
    return FactIn(project=job.project, text=d.text, kind=d.kind, session_id=job.session_id,
                  source_ids=d.source_ids, confidence=RULE_CONFIDENCE, extractor="rules",
                  subject=d.subject, value=d.value, stated=d.stated, confirmed=d.confirmed,
                  observed_at=d.at or None, replaces=d.replaces, ends=d.ends,
                  removes_file=d.removes_file, moved_to=d.moved_to)


def extract_job(
    conn: sqlite3.Connection, job: Job, heartbeat: Heartbeat, *, provider: Any = None
) -> Extraction:
    """Read the session's unextracted memories and turn them into facts and a summary.

    Rules see every window (their state spans windows); where the provider answers for a
    window, its facts replace the rule facts of that window.
    """
    new = _items(conn.execute(_NEW_ITEMS, (job.session_id, MAX_NEW_ITEMS)).fetchall())
    if not new:
        return Extraction()
    context = list(reversed(_items(
        conn.execute(_OLD_ITEMS, (job.session_id, CONTEXT_ITEMS)).fetchall()
    )))
    rules = RuleExtractor(job.project)
    rules.prime(context)
    out = Extraction(consumed=[i.id for i in new])
    provider_facts: list[FactIn] = []
    model_summaries: list[str] = []
    for window in windows(new):
        heartbeat()
        out.windows += 1
        answer = provider.extract(window, job) if provider is not None else None
        if answer is not None and answer.ok:
            out.provider_windows += 1
            rules.prime(window)
            provider_facts.extend(answer.facts)
            if answer.summary:
                model_summaries.append(answer.summary)
        else:
            if answer is not None:
                out.fallbacks.append(answer.reason)
            rules.feed(window)
    heartbeat()
    rule_drafts = (_habits(conn, job, rules.finish()) + file_edit_drafts(conn, job.project, rules.edits)
                   + number_drafts(conn, job.project, rules.numbers))
    # Removals last: what this session learnt about a file before it removed it goes with it.
    out.facts = ([_fact_in(job, d) for d in rule_drafts] + provider_facts
                 + [_fact_in(job, d) for d in removal_drafts(rules.removals)])
    everything = context + new
    seen: RuleExtractor | None = rules  # it has walked context + new: reuse its state
    if len(context) == CONTEXT_ITEMS:  # the context was cut: summarise from the full session
        seen = None
        everything = _items(conn.execute(
            f"SELECT {_MEMORY_COLUMNS} FROM memory WHERE session_id = ? AND source != 'worker' "
            "ORDER BY created_at, rowid LIMIT ?", (job.session_id, SUMMARY_ITEMS),
        ).fetchall())
    out.summary = session_summary(
        job.project, everything, facts=[f.text for f in out.facts
                                        if not f.removes_file and not ran_command(f.subject)],
        model_summary=" ".join(model_summaries), seen=seen,
    )
    return out


def _summary_row(draft: SummaryDraft, *, project: str, kind: str, session_id: str | None,
                 now: int) -> dict[str, Any]:
    """A summary memory, validated and redacted (outside any transaction: redaction of a long
    narrative is the slow part)."""
    return prepare(MemoryIn(
        project=project, kind=kind, title=draft.title, narrative=draft.narrative,
        files=draft.files, concepts=draft.concepts, facts=draft.facts, session_id=session_id,
        source="worker", created_at=now,
    ), now=now)


def _write_summary(conn: sqlite3.Connection, row: dict[str, Any], *, now: int) -> str:
    """Store a prepared summary and make it the live one of its kind (earlier ones are
    dismissed: kept, but hidden).  Inside the caller's transaction."""
    session_id = row["session_id"]
    before = conn.execute(_SESSION_STATE, (session_id,)).fetchone() if session_id else None
    written = insert_rows(conn, [row])[0]
    if before is not None and written.inserted:
        # The store counts every memory of a session as an event of it; a summary is not one.
        conn.execute(_RESTORE_SESSION, (before["last_event_at"], before["event_count"], session_id))
    conn.execute(_KEEP_LIVE, (now, written.id))
    conn.execute(_SUPERSEDE, (now, row["project"], row["kind"], session_id, written.id))
    return written.id


def _no_op() -> None:
    return None


def apply_extraction(
    conn: sqlite3.Connection, job: Job, extraction: Extraction, *, now: int,
    fence: Callable[[], None] = _no_op, heartbeat: Heartbeat = _no_op,
    finish: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Write facts, the session summary, the project summary and the watermark, in short
    transactions that each begin with ``fence()`` (the lease check: it raises ``LeaseLost``).

    The order makes stopping anywhere safe: facts first (deduped, so writing them again is a
    no-op), then the summaries, then the watermark last, so a job stopped midway leaves its
    memories unmarked and the next attempt redoes them without a second row.  ``finish``
    runs in the last transaction, with the result (it marks the job done).
    """
    added = AddResult()
    summary_id = project_summary_id = None
    if extraction.consumed:
        for start in range(0, len(extraction.facts), FACT_BATCH):
            heartbeat()
            with tx(conn):
                fence()
                part = add_facts(conn, extraction.facts[start:start + FACT_BATCH], now=now)
            added.added += part.added
            added.merged += part.merged
            added.unchanged += part.unchanged
            added.superseded += part.superseded
        if extraction.summary is not None:
            row = _summary_row(extraction.summary, project=job.project, kind="summary",
                               session_id=job.session_id, now=now)
            with tx(conn):
                fence()
                summary_id = _write_summary(conn, row, now=now)
                conn.execute(_SESSION_SUMMARY_ID, (summary_id, job.session_id))
        heartbeat()
        # Read (with the facts just written) and redacted outside the lock.
        row = _summary_row(project_summary(conn, job.project), project=job.project,
                           kind="project_summary", session_id=None, now=now)
        with tx(conn):
            fence()
            project_summary_id = _write_summary(conn, row, now=now)
        for start in range(0, len(extraction.consumed), MARK_BATCH):
            heartbeat()
            with tx(conn):
                fence()
                conn.executemany(_MARK_EXTRACTED, [
                    (now, memory_id) for memory_id in extraction.consumed[start:start + MARK_BATCH]])
    result = {
        "memories": len(extraction.consumed), "windows": extraction.windows,
        "provider_windows": extraction.provider_windows, "fallbacks": extraction.fallbacks[:5],
        "facts": added.to_dict(), "summary_id": summary_id,
        "project_summary_id": project_summary_id,
    }
    with tx(conn):
        fence()
        if conn.execute(_HAS_NEW, (job.session_id,)).fetchone() is not None:
            # Events that arrived while this job ran: the session gets another job for them.
            conn.execute(_REQUEUE, (job.session_id, job.project, now))
        if finish is not None:
            finish(result)
    return result


def _refresh_blocks(conn: sqlite3.Connection, job: Job) -> None:
    """The job changed what the project's block shows: rebuild its precomputed copies (so the
    next SessionStart reads one file), for the hosts that have one and this session's host."""
    try:
        row = conn.execute("SELECT tool FROM session WHERE id = ?", (job.session_id,)).fetchone()
        blocks.refresh(conn, job.project, [row["tool"]] if row is not None and row["tool"] else [])
    except Exception as exc:  # a stale copy is rebuilt by its next reader
        log.warning("could not refresh the context block of %s: %s", job.project, exc)


def _write_pause() -> float:
    raw = str(config.env(FAULT_ENV))
    return float(raw.split(":", 1)[1]) if raw.startswith("write-sleep:") else 0.0


def _fault() -> Callable[[], None] | None:
    raw = str(config.env(FAULT_ENV))
    if raw == "fail":
        def _fail() -> None:
            raise RuntimeError(f"injected failure ({FAULT_ENV}=fail)")
        return _fail
    if raw.startswith("sleep:"):
        seconds = float(raw.split(":", 1)[1])
        return lambda: time.sleep(seconds)
    return None


class JobRunner:
    """Runs jobs under a lease.  ``clock`` returns epoch ms (tests pass a fake one);
    ``queue`` (optional) receives retry messages; ``extractor`` replaces the default."""

    def __init__(
        self,
        *,
        lease_seconds: float | None = None,
        name: str | None = None,
        clock: Callable[[], int] = ids.now_ms,
        queue: MessageQueue | None = None,
        extractor: Extractor | None = None,
        use_provider: bool = True,
    ) -> None:
        self.lease = jobs.lease_ms(lease_seconds)
        self.name = name or f"{socket.gethostname()}:{os.getpid()}"
        self.clock = clock
        self.queue = queue
        self.extractor = extractor
        self.use_provider = use_provider
        self.fault = _fault()

    def _owner(self) -> str:
        return f"{self.name}/{threading.get_ident() % 100000}/{uuid.uuid4().hex[:10]}"

    def _extract(self, conn: sqlite3.Connection, job: Job, heartbeat: Heartbeat) -> Extraction:
        if self.fault is not None:
            self.fault()
        if self.extractor is not None:
            return self.extractor(conn, job, heartbeat)
        provider = None
        if self.use_provider:
            from aletheia.provider import from_settings

            provider = from_settings(conn, lease_ms=self.lease, clock=self.clock)
        return extract_job(conn, job, heartbeat, provider=provider)

    def run(self, conn: sqlite3.Connection, job_id: int | None = None, *,
            fresh_since: int | None = None) -> Outcome | None:
        """Claim ``job_id`` (or the next due job) and run it; None when nothing was claimed."""
        owner = self._owner()
        job = jobs.claim(conn, owner, now=self.clock(), lease=self.lease, job_id=job_id,
                         fresh_since=fresh_since)
        if job is None:
            if job_id is not None:
                self._early_message(conn, job_id)
            return None
        last_extend = self.clock()

        def heartbeat() -> None:
            nonlocal last_extend
            now = self.clock()
            if now - last_extend >= self.lease // 3:
                if not jobs.extend(conn, job, owner, now=now, lease=self.lease):
                    raise LeaseLost(f"job {job.id}: lease lost")
                last_extend = now

        def fence() -> None:
            # Called inside each write transaction: the write lock makes the check a fence.
            if not jobs.holds_lease(conn, job.id, owner, now=self.clock()):
                raise LeaseLost(f"job {job.id}: lease lost before writing")

        def finish(result: dict[str, Any]) -> None:
            result["worker"] = self.name
            jobs.complete(conn, job.id, owner, now=self.clock(), result=result)

        write_beat = heartbeat
        pause = _write_pause()
        if pause:
            def write_beat() -> None:
                time.sleep(pause)
                heartbeat()

        try:
            extraction = self._extract(conn, job, heartbeat)
            heartbeat()
            result = apply_extraction(conn, job, extraction, now=self.clock(), fence=fence,
                                      heartbeat=write_beat, finish=finish)
        except LeaseLost as exc:
            log.warning("%s; another worker owns it now, results dropped", exc)
            return Outcome(job.id, "lost", job.attempts, error=str(exc))
        except Exception as exc:
            return self._failed(conn, job, owner, exc)
        facts = result["facts"]
        log.info("job %s done: %s memories, %s facts added, %s merged", job.id,
                 result["memories"], facts["added"], facts["merged"])
        _refresh_blocks(conn, job)
        segments.merge(conn)  # (the session's writes added segments to the indexes)
        return Outcome(job.id, "done", job.attempts, facts["added"], facts["merged"],
                       result["memories"])

    def _failed(self, conn: sqlite3.Connection, job: Job, owner: str, exc: Exception) -> Outcome:
        error = f"{type(exc).__name__}: {exc}"
        log.warning("job %s attempt %s failed: %s", job.id, job.attempts, error)
        updated = jobs.fail(conn, job.id, owner, error, now=self.clock())
        if updated is None:
            return Outcome(job.id, "lost", job.attempts, error=error)
        if updated.state == "retry_wait" and self.queue is not None:
            try:
                self.queue.schedule(job.id, updated.next_run_at)
            except Exception as qexc:  # the ticker resends once the retry is due
                log.warning("could not schedule the retry of job %s: %s", job.id, qexc)
        return Outcome(job.id, updated.state, updated.attempts, error=updated.last_error)

    def _early_message(self, conn: sqlite3.Connection, job_id: int) -> None:
        # A retry message that arrived before the job is due (clock skew between machines):
        # put it back for the due time instead of dropping it.
        row = conn.execute(
            "SELECT state, next_run_at FROM job WHERE id = ?", (job_id,)
        ).fetchone()
        if (row is not None and row["state"] in ("pending", "retry_wait")
                and row["next_run_at"] > self.clock() and self.queue is not None):
            try:
                self.queue.schedule(job_id, row["next_run_at"])
            except Exception as exc:
                log.warning("could not reschedule job %s: %s", job_id, exc)


# --- the Huey side ------------------------------------------------------------------------


class MessageHandler:
    """What an ``extract_session(job_id)`` message runs: one connection per worker thread."""

    def __init__(self, runner: JobRunner) -> None:
        self.runner = runner
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = db.connect(busy_ms=WORKER_BUSY_MS)
            self._local.conn = conn
        return conn

    def __call__(self, job_id: int) -> dict[str, Any] | None:
        outcome = self.runner.run(self._conn(), job_id)
        return outcome.to_dict() if outcome else None


# --- aletheia compress --------------------------------------------------------------------


@dataclass
class DrainSummary:
    jobs: int = 0
    done: int = 0
    failed: int = 0
    dead: int = 0
    lost: int = 0
    facts_added: int = 0
    facts_merged: int = 0
    memories: int = 0
    created: int = 0
    spooled: int = 0
    seconds: float = 0.0
    segments_merged: int = 0  # merge steps run once every job was done
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


DRAIN_MERGE_SECONDS = 5.0


def drain(
    conn: sqlite3.Connection,
    runner: JobRunner,
    *,
    on_start: Callable[[int], None] | None = None,
    on_job: Callable[[Outcome], None] | None = None,
) -> DrainSummary:
    """Replay the spool, turn the stop queue into jobs, then run every due job once."""
    started = time.monotonic()
    summary = DrainSummary()
    try:
        summary.spooled = spool.replay(conn).inserted
    except Exception as exc:  # a locked store; the lines stay spooled (none can be at fault)
        log.warning("spool replay failed: %s", exc)
    since = runner.clock()
    summary.created = len(jobs.jobs_from_stop_queue(conn, now=since))
    if on_start is not None:
        on_start(jobs.due_count(conn, now=since))
    locked = 0
    while True:
        try:
            outcome = runner.run(conn, fresh_since=since)
        except sqlite3.OperationalError as exc:
            # Claims and failure records need the write lock; a busy store is a reason to wait,
            # not to stop (the job itself is safe in the table either way).
            locked += 1
            if locked > _LOCK_RETRIES or "locked" not in str(exc):
                raise
            log.warning("store busy (%s); retrying", exc)
            time.sleep(0.2 * locked)
            continue
        if outcome is None:
            break
        summary.jobs += 1
        summary.memories += outcome.memories
        summary.facts_added += outcome.facts_added
        summary.facts_merged += outcome.facts_merged
        if outcome.state == "done":
            summary.done += 1
        elif outcome.state == "dead":
            summary.dead += 1
        elif outcome.state == "lost":
            summary.lost += 1
        else:
            summary.failed += 1
        if outcome.error and len(summary.errors) < 10:
            summary.errors.append(f"job {outcome.job_id}: {outcome.error}")
        if on_job is not None:
            on_job(outcome)
    # What is left to merge after the jobs' own merging (or all of it when no session was due:
    # a store that no worker keeps, compressed by hand or by cron, gets its segments merged only
    # here).  Bounded: a 50,000-memory store written by the hooks merges in ~0.3 s.
    summary.segments_merged = segments.merge(conn, budget=DRAIN_MERGE_SECONDS)
    summary.seconds = round(time.monotonic() - started, 3)
    return summary

