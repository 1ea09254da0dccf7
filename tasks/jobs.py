"""The job table in hub.db: the source of truth for compression work, whatever the queue.

Huey deletes a message when it dequeues it, so a worker killed mid-job loses the message but
never the job: a claim takes a lease (one ``BEGIN IMMEDIATE … UPDATE … RETURNING``), an
expired lease makes the job claimable again, and only the lease holder may record a result
or an error.  Every function takes ``now`` (epoch ms), so tests step time by hand.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from aletheia import config, filters, pages, shapes
from aletheia.db import tx
from aletheia.errors import Conflict, InvalidInput, NotFound
from aletheia.redact import redact
from aletheia.vocab import JOB_STATES, OPEN_JOB_STATES

JOB_TYPE = "extract_session"
MAX_ATTEMPTS = 5
LEASE_ENV = "ALETHEIA_LEASE_SECONDS"
BACKOFF_CAP_S = 60
ERROR_CAP = 2000
# A claimable job whose last message is older than this gets a new one (the message was lost).
# Short when Huey's queue is empty (nothing can be waiting in it), long as a backstop when a
# backlog could legitimately hold the message.
LOST_AFTER_EMPTY_MS = 5_000
LOST_AFTER_BUSY_MS = 300_000


class LeaseLost(Exception):
    """This worker no longer holds the job's lease: it must not write results."""


def lease_ms(seconds: float | None = None, env: Mapping[str, str] | None = None) -> int:
    """The lease length: the parameter, else ``ALETHEIA_LEASE_SECONDS``, else 60 s."""
    if seconds is None:
        seconds = float(config.env(LEASE_ENV, env))
    if not 0.05 <= seconds <= 86_400:
        raise InvalidInput("the lease must be between 0.05 and 86400 seconds")
    return int(seconds * 1000)


@dataclass(frozen=True)
class Job:
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
    result: dict[str, Any] | None
    created_at: int
    updated_at: int
    finished_at: int | None
    enqueued_at: int | None
    started_at: int | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Job:
        data: dict[str, Any] = dict(row)
        data["result"] = shapes.job_result(data["result"])
        # data[k], not .get: a column missing from the query is a bug to see, not a None
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})

    def to_dict(self) -> shapes.Job:
        return shapes.job(asdict(self))



# --- stop queue → jobs ----------------------------------------------------------------------

# Keyset-paged, so entries left in the queue (their session's job is running) are not re-read.
_STOPS = """
SELECT session_id, project, queued_at FROM stop_queue
WHERE (queued_at, session_id) > (?, ?) ORDER BY queued_at, session_id LIMIT ?
"""
_OPEN_JOB = (f"SELECT id, state FROM job WHERE type = '{JOB_TYPE}' AND session_id = ? "
             f"AND state IN {OPEN_JOB_STATES!r}")
_HAS_NEW = (
    "SELECT 1 FROM memory WHERE session_id = ? AND extracted_at IS NULL AND source != 'worker' LIMIT 1"
)
# OR IGNORE: the partial unique index job_one_open_per_session is the last word on duplicates.
_INSERT_JOB = f"""
INSERT OR IGNORE INTO job (type, session_id, project, state, attempts, max_attempts, next_run_at,
                           created_at, updated_at, enqueued_at)
VALUES ('{JOB_TYPE}', ?, ?, 'pending', 0, ?, ?, ?, ?, ?)
RETURNING id
"""
_DELETE_STOP = "DELETE FROM stop_queue WHERE session_id = ? AND queued_at = ?"


def jobs_from_stop_queue(
    conn: sqlite3.Connection, *, now: int, batch: int = 200, enqueued: bool = False
) -> list[int]:
    """Turn stop-queue entries into jobs; return the new job ids.

    One job per session: a stop for a session whose job has not started yet is absorbed by
    it (the job reads every unextracted memory when it runs); a stop for a session whose job
    is running stays queued, so the events that arrived meanwhile get a job of their own once
    that one ends; a stop with nothing new to extract (a duplicate) is dropped.
    ``enqueued=True`` records that the caller sends a Huey message for each new job.
    Each batch is its own short transaction: hooks wait at most 50 ms for the write lock.
    """
    created: list[int] = []
    after: tuple[int, str] = (-1, "")
    while True:
        with tx(conn):
            stops = conn.execute(_STOPS, (*after, batch)).fetchall()
            for stop in stops:
                session_id = stop["session_id"]
                after = (stop["queued_at"], session_id)
                open_job = conn.execute(_OPEN_JOB, (session_id,)).fetchone()
                if open_job is not None and open_job["state"] == "running":
                    continue
                if open_job is None and conn.execute(_HAS_NEW, (session_id,)).fetchone() is not None:
                    row = conn.execute(
                        _INSERT_JOB,
                        (session_id, stop["project"], MAX_ATTEMPTS, now, now, now,
                         now if enqueued else None),
                    ).fetchone()
                    if row is not None:
                        created.append(int(row[0]))
                conn.execute(_DELETE_STOP, (session_id, stop["queued_at"]))
        if len(stops) < batch:
            return created


def create_job(conn: sqlite3.Connection, session_id: str, project: str, *, now: int) -> int:
    """A job for one session (the REST/CLI path); the open job's id if there is one."""
    with tx(conn):
        open_job = conn.execute(_OPEN_JOB, (session_id,)).fetchone()
        if open_job is not None:
            return int(open_job["id"])
        row = conn.execute(
            _INSERT_JOB, (session_id, project, MAX_ATTEMPTS, now, now, now, None)
        ).fetchone()
        return int(row[0])


# --- the lease ------------------------------------------------------------------------------

_CLAIMABLE = """attempts < max_attempts AND (
        (state IN ('pending', 'retry_wait') AND next_run_at <= :now)
        OR (state = 'running' AND lease_expires_at <= :now))"""

_CLAIM_ONE = f"""
UPDATE job SET state = 'running', attempts = attempts + 1, lease_owner = :owner,
    lease_expires_at = :now + :lease, started_at = :now, updated_at = :now
WHERE id = :id AND {_CLAIMABLE}
RETURNING {shapes.JOB_COLUMNS}
"""

_CLAIM_ANY = f"""
UPDATE job SET state = 'running', attempts = attempts + 1, lease_owner = :owner,
    lease_expires_at = :now + :lease, started_at = :now, updated_at = :now
WHERE id = (SELECT id FROM job WHERE {_CLAIMABLE}
            AND (:since IS NULL OR started_at IS NULL OR started_at < :since)
            ORDER BY next_run_at, id LIMIT 1)
RETURNING {shapes.JOB_COLUMNS}
"""

_OURS = "id = :id AND lease_owner = :owner AND state = 'running' AND lease_expires_at > :now"

_EXTEND = f"UPDATE job SET lease_expires_at = :now + :lease, updated_at = :now WHERE {_OURS}"

_HOLDS = f"SELECT 1 FROM job WHERE {_OURS}"

_COMPLETE = f"""
UPDATE job SET state = 'done', result = :result, lease_expires_at = NULL, finished_at = :now,
    updated_at = :now
WHERE {_OURS}
"""

# The state is decided from the attempts already counted by the claim: the fifth failure buries.
_FAIL = f"""
UPDATE job SET
    state = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'retry_wait' END,
    next_run_at = CASE WHEN attempts >= max_attempts THEN next_run_at
                       ELSE :now + 1000 * min({BACKOFF_CAP_S}, 1 << (attempts - 1)) END,
    finished_at = CASE WHEN attempts >= max_attempts THEN :now ELSE NULL END,
    last_error = :error, lease_expires_at = NULL, updated_at = :now,
    enqueued_at = CASE WHEN attempts >= max_attempts THEN enqueued_at
                       ELSE :now + 1000 * min({BACKOFF_CAP_S}, 1 << (attempts - 1)) END
WHERE {_OURS}
RETURNING {shapes.JOB_COLUMNS}
"""


def claim(
    conn: sqlite3.Connection, owner: str, *, now: int, lease: int, job_id: int | None = None,
    fresh_since: int | None = None,
) -> Job | None:
    """Take the lease on ``job_id`` (or on the next due job) and count one attempt.

    Matches only due jobs with attempts left that are pending, waiting to retry, or running
    under an expired lease.  One statement inside ``BEGIN IMMEDIATE``: two claimers cannot
    both win.  ``fresh_since`` skips jobs attempted since then (a drain runs each job once).
    """
    params = {"owner": owner, "now": now, "lease": lease, "id": job_id, "since": fresh_since}
    with tx(conn):
        row = conn.execute(_CLAIM_ANY if job_id is None else _CLAIM_ONE, params).fetchone()
    return Job.from_row(row) if row is not None else None


def extend(conn: sqlite3.Connection, job: Job, owner: str, *, now: int, lease: int) -> bool:
    """Push the lease out; False when it is no longer ours (expired or taken over)."""
    with tx(conn):
        cur = conn.execute(_EXTEND, {"id": job.id, "owner": owner, "now": now, "lease": lease})
    return cur.rowcount == 1


def holds_lease(conn: sqlite3.Connection, job_id: int, owner: str, *, now: int) -> bool:
    """Call inside the transaction that writes results: the write lock makes it a fence."""
    return conn.execute(_HOLDS, {"id": job_id, "owner": owner, "now": now}).fetchone() is not None


def complete(
    conn: sqlite3.Connection, job_id: int, owner: str, *, now: int, result: dict[str, Any]
) -> bool:
    """Mark the job done (inside the caller's transaction, after its results are written)."""
    with tx(conn):
        cur = conn.execute(
            _COMPLETE, {"id": job_id, "owner": owner, "now": now, "result": json.dumps(result)}
        )
    return cur.rowcount == 1


def fail(conn: sqlite3.Connection, job_id: int, owner: str, error: str, *, now: int) -> Job | None:
    """Record a failure while the lease is ours: ``retry_wait`` with backoff, or ``dead``
    after the last attempt (the error is kept).  None when the lease was lost."""
    text = redact(error.strip() or "failed")
    if len(text) > ERROR_CAP:
        text = text[: ERROR_CAP - 1] + "…"
    with tx(conn):
        row = conn.execute(_FAIL, {"id": job_id, "owner": owner, "now": now, "error": text}).fetchone()
    return Job.from_row(row) if row is not None else None


# --- housekeeping (the ticker) --------------------------------------------------------------

_BURY = f"""
UPDATE job SET state = 'dead', finished_at = :now, updated_at = :now, lease_expires_at = NULL,
    last_error = coalesce(last_error || char(10), '') || 'lease expired during the last attempt (worker lost)'
WHERE state = 'running' AND lease_expires_at <= :now AND attempts >= max_attempts
RETURNING {shapes.JOB_COLUMNS}
"""

_TAKE_LOST = """
UPDATE job SET enqueued_at = :now
WHERE id IN (
    SELECT id FROM job WHERE attempts < max_attempts AND (
        (state IN ('pending', 'retry_wait') AND next_run_at <= :now
            AND (enqueued_at IS NULL OR enqueued_at <= :stale))
        OR (state = 'running' AND lease_expires_at <= :now
            AND (enqueued_at IS NULL OR enqueued_at < started_at OR enqueued_at <= :stale)))
    ORDER BY next_run_at, id LIMIT :limit)
RETURNING id
"""


def bury_expired(conn: sqlite3.Connection, *, now: int) -> list[Job]:
    """A worker killed during the last attempt leaves a running job nobody may claim: dead."""
    with tx(conn):
        rows = conn.execute(_BURY, {"now": now}).fetchall()
    return [Job.from_row(r) for r in rows]


def take_lost(
    conn: sqlite3.Connection, *, now: int, queue_empty: bool, limit: int = 500
) -> list[int]:
    """Claimable jobs that have no message on its way: pending or retrying ones whose last
    message is stale, and lease-expired ones with no message since their claim.  Marks them
    as sent (``enqueued_at = now``) in the same statement, so two tickers never both resend."""
    stale = now - (LOST_AFTER_EMPTY_MS if queue_empty else LOST_AFTER_BUSY_MS)
    with tx(conn):
        rows = conn.execute(_TAKE_LOST, {"now": now, "stale": stale, "limit": limit}).fetchall()
    return sorted(int(r[0]) for r in rows)


# --- reading and reviving -------------------------------------------------------------------


def get_job(conn: sqlite3.Connection, job_id: int) -> Job:
    row = conn.execute(f"SELECT {shapes.JOB_COLUMNS} FROM job WHERE id = ?", (job_id,)).fetchone()
    if row is None:
        raise NotFound(f"no job with id {job_id}")
    return Job.from_row(row)


@dataclass
class JobPage:
    jobs: list[Job]
    next_cursor: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"items": [j.to_dict() for j in self.jobs], "next_cursor": self.next_cursor}


def list_jobs(
    conn: sqlite3.Connection, *, state: str | None = None, session_id: str | None = None,
    project: str | None = None, limit: int = pages.DEFAULT_LIMIT, cursor: str | None = None,
) -> JobPage:
    """The one job list (REST, the CLI, the dashboard): newest first, one keyset page on the id
    (a job that changes state while you page is neither skipped nor shown twice)."""
    if state is not None and state not in JOB_STATES:
        raise InvalidInput(f"state must be one of {', '.join(JOB_STATES)}")
    pages.check_limit(limit)
    where = filters.Where().equal("state", state).equal("session_id", session_id)
    where.project(project, scoped=False)
    after = pages.decode(cursor, (int,))
    if after is not None:
        where.add("id < ?", after[0])
    rows = conn.execute(
        f"SELECT {shapes.JOB_COLUMNS} FROM job{where.sql()} ORDER BY id DESC LIMIT ?",
        (*where.params, limit + 1),
    ).fetchall()
    found = [Job.from_row(r) for r in rows[:limit]]
    more = len(rows) > limit
    return JobPage(found, pages.encode(found[-1].id) if more else None)


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    out = dict.fromkeys(JOB_STATES, 0)
    for state, n in conn.execute("SELECT state, count(*) FROM job GROUP BY state"):
        out[state] = int(n)
    return out


def any_running(conn: sqlite3.Connection) -> bool:
    """Is a job being worked on (by any worker, its lease live or not)?"""
    return bool(conn.execute("SELECT EXISTS (SELECT 1 FROM job WHERE state = 'running')").fetchone()[0])


def due_count(conn: sqlite3.Connection, *, now: int) -> int:
    sql = f"SELECT count(*) FROM job WHERE {_CLAIMABLE}"
    return int(conn.execute(sql, {"now": now}).fetchone()[0])


def retry(conn: sqlite3.Connection, job_id: int, *, now: int) -> Job:
    """Revive a dead job: pending again with a fresh set of attempts (its last error stays
    visible until the next attempt replaces it)."""
    with tx(conn):
        job = get_job(conn, job_id)
        if job.state != "dead":
            raise Conflict(f"job {job_id} is {job.state}, not dead")
        other = conn.execute(_OPEN_JOB, (job.session_id,)).fetchone()
        if other is not None:
            raise Conflict(f"session {job.session_id} already has an open job ({other['id']})")
        conn.execute(
            "UPDATE job SET state = 'pending', attempts = 0, next_run_at = ?, lease_owner = NULL, "
            "lease_expires_at = NULL, finished_at = NULL, updated_at = ?, enqueued_at = NULL "
            "WHERE id = ?",
            (now, now, job_id),
        )
        return get_job(conn, job_id)
