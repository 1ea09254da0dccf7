"""The job/lease table, the runner, the ticker and the Huey wiring, with time passed in."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aletheia import store
from aletheia.errors import Conflict, NotFound
from aletheia.store import MemoryIn
from aletheia.tasks import jobs, ticker
from aletheia.tasks import queue as queue_mod
from aletheia.tasks.compress import Extraction, JobRunner, MessageHandler, drain, extract_job
from aletheia.tasks.jobs import Job
from tests import sessions

ROOT = "/home/dev/textkit"
T0 = sessions.T0


class Clock:
    def __init__(self, now: int = T0 + 10_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


class FakeQueue:
    def __init__(self) -> None:
        self.enqueued: list[int] = []
        self.scheduled: list[tuple[int, int]] = []

    def enqueue(self, job_id: int) -> None:
        self.enqueued.append(job_id)

    def schedule(self, job_id: int, at_ms: int) -> None:
        self.scheduled.append((job_id, at_ms))

    def pending_count(self) -> int:
        return 0


def note(conn: sqlite3.Connection, session: str, text: str, at: int) -> str:
    return store.write_memory(conn, MemoryIn(
        project=ROOT, kind="prompt", title=text, narrative=text, session_id=session,
        source="hook", created_at=at,
    )).id


def stop(conn: sqlite3.Connection, session: str, at: int) -> None:
    store.queue_stop(conn, session, ROOT, "claude-code", now=at)


def snapshot(conn: sqlite3.Connection) -> dict[str, Any]:
    return {
        "memory": [tuple(r) for r in conn.execute(
            "SELECT id, kind, title, narrative, extracted_at, dismissed_at FROM memory ORDER BY id")],
        "fact": [tuple(r) for r in conn.execute(
            "SELECT id, text, source_ids, confidence, status, updated_at FROM fact ORDER BY id")],
        "session": [tuple(r) for r in conn.execute("SELECT * FROM session ORDER BY id")],
    }


@pytest.fixture
def clock() -> Clock:
    return Clock()


# --- lease ------------------------------------------------------------------------------


def test_lease_length_from_parameter_env_and_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert jobs.lease_ms() == 60_000
    monkeypatch.setenv("ALETHEIA_LEASE_SECONDS", "2.5")
    assert jobs.lease_ms() == 2_500
    assert jobs.lease_ms(7) == 7_000


def test_backoff_is_1_2_4_8_seconds_then_dead(conn: sqlite3.Connection, clock: Clock) -> None:
    note(conn, "s1", "this one keeps failing", T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    waits = []
    for _ in range(jobs.MAX_ATTEMPTS):
        job = jobs.claim(conn, "w", now=clock(), lease=60_000)
        assert job is not None and job.id == job_id
        failed = jobs.fail(conn, job_id, "w", "boom", now=clock())
        assert failed is not None
        if failed.state == "dead":
            break
        waits.append((failed.next_run_at - clock()) // 1000)
        clock.advance(failed.next_run_at - clock())
    assert (waits, failed.state) == ([1, 2, 4, 8], "dead")


def test_claim_is_exclusive_until_the_lease_expires(conn: sqlite3.Connection, clock: Clock) -> None:
    note(conn, "s1", "fix the tests", T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    a = jobs.claim(conn, "worker-a", now=clock(), lease=60_000)
    assert a is not None and a.id == job_id and a.attempts == 1 and a.state == "running"
    assert a.lease_expires_at == clock() + 60_000
    assert jobs.claim(conn, "worker-b", now=clock(), lease=60_000) is None
    assert jobs.claim(conn, "worker-b", now=clock(), lease=60_000, job_id=job_id) is None
    assert jobs.extend(conn, a, "worker-a", now=clock() + 30_000, lease=60_000)
    clock.advance(89_999)
    assert jobs.claim(conn, "worker-b", now=clock(), lease=60_000) is None  # extended
    clock.advance(1)
    b = jobs.claim(conn, "worker-b", now=clock(), lease=60_000)
    assert b is not None and b.attempts == 2 and b.lease_owner == "worker-b"
    # The first worker lost its lease: it can neither extend, nor complete, nor fail the job.
    assert not jobs.extend(conn, a, "worker-a", now=clock(), lease=60_000)
    assert not jobs.complete(conn, job_id, "worker-a", now=clock(), result={})
    assert jobs.fail(conn, job_id, "worker-a", "boom", now=clock()) is None
    assert jobs.get_job(conn, job_id).last_error is None
    assert jobs.complete(conn, job_id, "worker-b", now=clock(), result={"ok": 1})
    done = jobs.get_job(conn, job_id)
    assert done.state == "done" and done.result == {"ok": 1} and done.attempts == 2


def test_an_expired_lease_is_not_ours_even_if_nobody_took_it(conn: sqlite3.Connection,
                                                              clock: Clock) -> None:
    note(conn, "s1", "x" * 20, T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    a = jobs.claim(conn, "a", now=clock(), lease=1_000)
    assert a is not None
    clock.advance(1_000)
    assert not jobs.holds_lease(conn, job_id, "a", now=clock())
    assert not jobs.complete(conn, job_id, "a", now=clock(), result={})


# --- stop queue → jobs ------------------------------------------------------------------


def test_duplicate_stop_events_give_one_job(conn: sqlite3.Connection, clock: Clock) -> None:
    note(conn, "s1", "make the build green", T0)
    for i in range(3):
        stop(conn, "s1", T0 + i)
    created = jobs.jobs_from_stop_queue(conn, now=clock())
    assert len(created) == 1
    stop(conn, "s1", T0 + 10)  # another duplicate while the job is pending: absorbed
    assert jobs.jobs_from_stop_queue(conn, now=clock()) == []
    assert conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 0
    runner = JobRunner(clock=clock, use_provider=False)
    assert runner.run(conn) is not None
    stop(conn, "s1", T0 + 20)  # a duplicate after extraction: nothing new, no job
    assert jobs.jobs_from_stop_queue(conn, now=clock()) == []
    assert conn.execute("SELECT count(*) FROM job").fetchone()[0] == 1


def test_new_events_after_extraction_get_a_new_job_for_the_new_part(conn: sqlite3.Connection,
                                                                   clock: Clock) -> None:
    first = note(conn, "s1", "add a --json flag to the export command", T0)
    stop(conn, "s1", T0 + 1)
    jobs.jobs_from_stop_queue(conn, now=clock())
    runner = JobRunner(clock=clock, use_provider=False)
    one = runner.run(conn)
    assert one is not None and one.state == "done" and one.memories == 1
    second = note(conn, "s1", "now also document the flag in the README", T0 + 60_000)
    stop(conn, "s1", T0 + 60_001)
    created = jobs.jobs_from_stop_queue(conn, now=clock())
    assert len(created) == 1
    two = runner.run(conn)
    assert two is not None and two.job_id == created[0] and two.memories == 1
    stamps = dict(conn.execute("SELECT id, extracted_at FROM memory WHERE id IN (?, ?)",
                               (first, second)).fetchall())
    assert all(stamps.values())
    # The session summary covers both parts; the first one is superseded (dismissed, kept).
    summaries = conn.execute(
        "SELECT narrative, dismissed_at FROM memory WHERE kind = 'summary' ORDER BY created_at, rowid"
    ).fetchall()
    assert len(summaries) == 2 and summaries[0]["dismissed_at"] is not None
    assert summaries[1]["dismissed_at"] is None and "document the flag" in summaries[1]["narrative"]
    assert conn.execute("SELECT summary_memory_id FROM session WHERE id = 's1'").fetchone()[0]


def test_a_stop_during_a_running_job_waits_for_it(conn: sqlite3.Connection, clock: Clock) -> None:
    note(conn, "s1", "first request of the session", T0)
    stop(conn, "s1", T0 + 1)
    jobs.jobs_from_stop_queue(conn, now=clock())

    def slow(c: sqlite3.Connection, job: Job, beat: Any) -> Extraction:
        out = extract_job(c, job, beat)
        # Meanwhile the session goes on and stops again.
        note(c, "s1", "second request arrives mid-job", T0 + 5)
        stop(c, "s1", T0 + 6)
        assert jobs.jobs_from_stop_queue(c, now=clock()) == []  # the job is running
        return out

    JobRunner(clock=clock, extractor=slow).run(conn)
    assert conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 1
    created = jobs.jobs_from_stop_queue(conn, now=clock())
    assert len(created) == 1
    outcome = JobRunner(clock=clock, use_provider=False).run(conn)
    assert outcome is not None and outcome.memories == 1


# --- failures, backoff, dead --------------------------------------------------------------


def test_an_always_failing_extractor_gets_5_attempts_with_backoff_then_dead(
    conn: sqlite3.Connection, clock: Clock
) -> None:
    note(conn, "s1", "this session will not compress", T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    calls: list[int] = []

    def broken(c: sqlite3.Connection, job: Job, beat: Any) -> Extraction:
        calls.append(job.attempts)
        raise RuntimeError(f"extractor exploded on attempt {job.attempts}")

    q = FakeQueue()
    runner = JobRunner(clock=clock, queue=q, extractor=broken)
    waits: list[int] = []
    for attempt in range(1, 6):
        assert runner.run(conn, job_id) is not None
        job = jobs.get_job(conn, job_id)
        assert job.attempts == attempt
        if attempt < 5:
            assert job.state == "retry_wait"
            waits.append((job.next_run_at - clock()) // 1000)
            assert q.scheduled[-1] == (job_id, job.next_run_at)  # the retry goes through Huey
            clock.advance(job.next_run_at - clock() - 1)
            assert runner.run(conn, job_id) is None  # not due yet: no attempt
            clock.advance(1)
    assert waits == [1, 2, 4, 8]
    assert calls == [1, 2, 3, 4, 5]
    dead = jobs.get_job(conn, job_id)
    assert dead.state == "dead" and dead.attempts == 5
    assert dead.last_error == "RuntimeError: extractor exploded on attempt 5"
    # One retry message per failure, and each early one (the probes above) put back for the
    # due time rather than dropped.
    assert len(q.scheduled) == 8 and len(set(q.scheduled)) == 4
    clock.advance(3_600_000)
    assert runner.run(conn) is None and runner.run(conn, job_id) is None  # dead stays dead
    assert conn.execute("SELECT count(*) FROM memory WHERE extracted_at IS NOT NULL").fetchone()[0] == 0


def test_retry_revives_a_dead_job(conn: sqlite3.Connection, clock: Clock) -> None:
    note(conn, "s1", "x" * 30, T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    with pytest.raises(Conflict):
        jobs.retry(conn, job_id, now=clock())
    with pytest.raises(NotFound):
        jobs.retry(conn, 999, now=clock())
    conn.execute("UPDATE job SET state = 'dead', attempts = 5, last_error = 'old' WHERE id = ?", (job_id,))
    revived = jobs.retry(conn, job_id, now=clock())
    assert revived.state == "pending" and revived.attempts == 0 and revived.last_error == "old"
    outcome = JobRunner(clock=clock, use_provider=False).run(conn, job_id)
    assert outcome is not None and outcome.state == "done"


def test_retry_refuses_when_the_session_has_another_open_job(conn: sqlite3.Connection,
                                                              clock: Clock) -> None:
    note(conn, "s1", "y" * 30, T0)
    dead_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    conn.execute("UPDATE job SET state = 'dead' WHERE id = ?", (dead_id,))
    jobs.create_job(conn, "s1", ROOT, now=clock())
    with pytest.raises(Conflict, match="already has an open job"):
        jobs.retry(conn, dead_id, now=clock())


def test_a_worker_lost_during_the_last_attempt_is_buried(conn: sqlite3.Connection,
                                                         clock: Clock) -> None:
    note(conn, "s1", "z" * 30, T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    conn.execute("UPDATE job SET attempts = 4 WHERE id = ?", (job_id,))
    assert jobs.claim(conn, "gone", now=clock(), lease=1_000) is not None
    clock.advance(1_000)
    result = ticker.tick(conn, FakeQueue(), now=clock())
    assert result.buried == [job_id]
    job = jobs.get_job(conn, job_id)
    assert job.state == "dead" and "worker lost" in (job.last_error or "")


def test_a_worker_that_lost_its_lease_writes_nothing(conn: sqlite3.Connection, clock: Clock) -> None:
    sessions.write(conn, ROOT, "s1")
    jobs.jobs_from_stop_queue(conn, now=clock())
    other = JobRunner(clock=clock, use_provider=False, name="other")
    outcomes: list[Any] = []

    def stalls(c: sqlite3.Connection, job: Job, beat: Any) -> Extraction:
        out = extract_job(c, job, lambda: None)
        clock.advance(61_000)  # stuck past the lease; meanwhile another worker takes over
        outcomes.append(other.run(c))
        return out

    first = JobRunner(clock=clock, extractor=stalls, name="first").run(conn)
    assert first is not None and first.state == "lost"
    assert outcomes[0] is not None and outcomes[0].state == "done"
    assert conn.execute("SELECT count(*) FROM memory WHERE kind = 'summary'").fetchone()[0] == 1
    job = jobs.list_jobs(conn).jobs[0]
    assert job.state == "done" and job.attempts == 2 and job.result is not None
    assert job.result["worker"] == "other"
    assert job.last_error is None


def test_the_heartbeat_extends_the_lease_and_notices_a_lost_one(conn: sqlite3.Connection,
                                                                 clock: Clock) -> None:
    note(conn, "s1", "a long job", T0)
    jobs.create_job(conn, "s1", ROOT, now=clock())
    seen: list[int] = []

    def long_job(c: sqlite3.Connection, job: Job, beat: Any) -> Extraction:
        for _ in range(5):
            clock.advance(25_000)  # each step well inside the lease; 125 s in total
            beat()
            seen.append(jobs.get_job(c, job.id).lease_expires_at or 0)
        return extract_job(c, job, beat)

    outcome = JobRunner(clock=clock, extractor=long_job, lease_seconds=60).run(conn)
    assert outcome is not None and outcome.state == "done"
    assert seen == sorted(seen) and seen[-1] > T0

    note(conn, "s2", "another long job", T0)
    jobs.create_job(conn, "s2", ROOT, now=clock())

    def stolen(c: sqlite3.Connection, job: Job, beat: Any) -> Extraction:
        clock.advance(61_000)
        assert jobs.claim(c, "thief", now=clock(), lease=60_000, job_id=job.id) is not None
        beat()
        raise AssertionError("the heartbeat should have raised")

    lost = JobRunner(clock=clock, extractor=stolen).run(conn)
    assert lost is not None and lost.state == "lost"


# --- idempotency ------------------------------------------------------------------------------


def test_running_a_job_twice_changes_nothing(conn: sqlite3.Connection, clock: Clock) -> None:
    sessions.write(conn, ROOT, "s1")
    summary = drain(conn, JobRunner(clock=clock, use_provider=False))
    assert summary.done == 1 and summary.facts_added >= 10
    before = snapshot(conn)
    clock.advance(5_000)
    again = jobs.create_job(conn, "s1", ROOT, now=clock())  # the same session, asked again
    outcome = JobRunner(clock=clock, use_provider=False).run(conn, again)
    assert outcome is not None and outcome.state == "done" and outcome.memories == 0
    assert snapshot(conn) == before
    # Even with the watermark wiped, a re-run adds no fact and no summary row.
    conn.execute("UPDATE memory SET extracted_at = NULL WHERE source != 'worker'")
    third = jobs.create_job(conn, "s1", ROOT, now=clock())
    JobRunner(clock=clock, use_provider=False).run(conn, third)
    after = snapshot(conn)
    assert [f[:2] for f in after["fact"]] == [f[:2] for f in before["fact"]]
    assert len(after["memory"]) == len(before["memory"])


def test_compress_drains_each_due_job_once(conn: sqlite3.Connection, clock: Clock) -> None:
    for n in range(4):
        note(conn, f"s{n}", f"request number {n} in its own session", T0 + n)
        stop(conn, f"s{n}", T0 + n)

    def flaky(c: sqlite3.Connection, job: Job, beat: Any) -> Extraction:
        if job.session_id == "s2":
            clock.advance(5_000)  # long enough for s2's 1 s backoff to pass during the drain
            raise ValueError("bad session")
        return extract_job(c, job, beat)

    summary = drain(conn, JobRunner(clock=clock, extractor=flaky))
    assert (summary.jobs, summary.done, summary.failed, summary.dead) == (4, 3, 1, 0)
    assert jobs.counts(conn)["retry_wait"] == 1
    assert summary.errors == [f"job {jobs.list_jobs(conn, state='retry_wait').jobs[0].id}: ValueError: bad session"]


# --- the ticker and lost messages ---------------------------------------------------------------


@pytest.fixture
def sqlite_queue(aletheia_home: Path) -> Iterator[queue_mod.Queue]:
    q = queue_mod.make_queue("")
    yield q
    queue_mod.set_handler(None)
    q.huey.storage.close()


def test_huey_lives_in_queue_db_not_hub_db(conn: sqlite3.Connection,
                                           sqlite_queue: queue_mod.Queue, aletheia_home: Path) -> None:
    sqlite_queue.enqueue(1)
    hub_tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert not {"kv", "schedule", "task", "counter"} & hub_tables
    assert (aletheia_home / "queue.db").stat().st_mode & 0o777 == 0o600
    assert sqlite_queue.pending_count() == 1


def test_the_ticker_turns_stops_into_messages_and_huey_runs_them(
    conn: sqlite3.Connection, sqlite_queue: queue_mod.Queue, clock: Clock
) -> None:
    sessions.write(conn, ROOT, "s1")
    result = ticker.tick(conn, sqlite_queue, now=clock())
    assert len(result.created) == 1 and result.resent == []
    assert sqlite_queue.pending_count() == 1
    queue_mod.set_handler(MessageHandler(JobRunner(clock=clock, queue=sqlite_queue, use_provider=False)))
    task = sqlite_queue.huey.dequeue()  # step the queue by hand
    sqlite_queue.huey.execute(task)
    job = jobs.get_job(conn, result.created[0])
    assert job.state == "done" and job.attempts == 1
    assert conn.execute("SELECT count(*) FROM fact").fetchone()[0] >= 10


def test_a_lost_message_is_resent_by_the_ticker(conn: sqlite3.Connection,
                                                sqlite_queue: queue_mod.Queue, clock: Clock) -> None:
    note(conn, "s1", "this message gets lost", T0)
    stop(conn, "s1", T0)
    created = ticker.tick(conn, sqlite_queue, now=clock()).created
    assert sqlite_queue.pending_count() == 1
    sqlite_queue.huey.flush()  # lose the message on purpose (as a killed consumer would)
    assert sqlite_queue.pending_count() == 0
    clock.advance(2_000)
    assert ticker.tick(conn, sqlite_queue, now=clock()).resent == []  # could still be in flight
    clock.advance(jobs.LOST_AFTER_EMPTY_MS)
    assert ticker.tick(conn, sqlite_queue, now=clock()).resent == created
    assert sqlite_queue.pending_count() == 1
    assert ticker.tick(conn, sqlite_queue, now=clock()).resent == []  # not twice
    task = sqlite_queue.huey.dequeue()
    assert task.args == (created[0],)


def test_a_lease_expired_job_gets_a_new_message_once(conn: sqlite3.Connection, clock: Clock) -> None:
    note(conn, "s1", "the worker dies holding this job", T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    conn.execute("UPDATE job SET enqueued_at = ? WHERE id = ?", (clock(), job_id))
    assert jobs.claim(conn, "doomed", now=clock(), lease=60_000) is not None
    q = FakeQueue()
    clock.advance(59_999)
    assert ticker.tick(conn, q, now=clock()).resent == []
    clock.advance(1)
    assert ticker.tick(conn, q, now=clock()).resent == [job_id]
    assert ticker.tick(conn, q, now=clock()).resent == []
    outcome = JobRunner(clock=clock, use_provider=False).run(conn, job_id)
    assert outcome is not None and outcome.state == "done" and outcome.attempts == 2


def test_two_tickers_never_both_resend(conn: sqlite3.Connection, clock: Clock) -> None:
    note(conn, "s1", "one message only", T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    assert jobs.take_lost(conn, now=clock(), queue_empty=True) == [job_id]
    assert jobs.take_lost(conn, now=clock(), queue_empty=True) == []


def test_the_ticker_replays_the_spool(conn: sqlite3.Connection, clock: Clock) -> None:
    from aletheia import spool

    row = store.prepare(MemoryIn(project=ROOT, kind="prompt", title="spooled while locked",
                                 session_id="s9", source="hook", created_at=T0))
    spool.append({"type": "memory", "row": row})
    spool.append({"type": "stop", "session_id": "s9", "project": ROOT, "tool": "claude-code", "at": T0})
    result = ticker.tick(conn, FakeQueue(), now=clock())
    assert result.spooled == 1 and len(result.created) == 1


# --- the CLI ----------------------------------------------------------------------------------


def test_cli_compress_jobs_and_retry(conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    from aletheia.cli import cli

    monkeypatch.setenv("ALETHEIA_PROJECT", ROOT)
    sessions.write(conn, ROOT, "s1")
    note(conn, "s2", "this one is made to fail", T0)
    stop(conn, "s2", T0)
    runner = CliRunner()
    out = runner.invoke(cli, ["compress", "--json"], catch_exceptions=False)
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert summary["done"] == 2 and summary["facts_added"] >= 10
    conn.execute("UPDATE job SET state = 'dead', attempts = 5, last_error = 'Boom: gave up' "
                 "WHERE session_id = 's2'")
    listing = runner.invoke(cli, ["jobs", "--json"], catch_exceptions=False)
    data = json.loads(listing.stdout)
    assert data["counts"]["dead"] == 1 and data["counts"]["done"] == 1
    assert [j["id"] for j in data["jobs"]] == sorted((j["id"] for j in data["jobs"]), reverse=True)
    dead = [j for j in data["jobs"] if j["state"] == "dead"]
    assert len(dead) == 1 and dead[0]["last_error"] == "Boom: gave up"
    assert data["next_cursor"] is None
    text = runner.invoke(cli, ["jobs"], catch_exceptions=False).output
    assert text.index("dead:") < text.index("done:")  # grouped, what needs a person first
    assert "last error: Boom: gave up" in text
    dead_id = dead[0]["id"]
    revived = runner.invoke(cli, ["jobs", "retry", str(dead_id)], catch_exceptions=False)
    assert revived.exit_code == 0 and "pending again" in revived.output
    again = runner.invoke(cli, ["jobs", "retry", str(dead_id)])
    assert again.exit_code == 1 and "not dead" in again.output
    missing = runner.invoke(cli, ["jobs", "retry", "4242"])
    assert missing.exit_code == 1 and "no job with id 4242" in missing.output
    facts = json.loads(runner.invoke(cli, ["facts", "--json"], catch_exceptions=False).stdout)
    assert any(f["text"] == "Run the tests with `pytest -q`." for f in facts)
    assert all(f["confidence"] == 0.45 and f["extractor"] == "rules" for f in facts)
    hits = json.loads(runner.invoke(cli, ["search", "--json", "types-PyYAML stubs"],
                                    catch_exceptions=False).stdout)
    assert any(h["type"] == "fact" for h in hits[:5])  # one ranking with the memories
    summaries = json.loads(runner.invoke(cli, ["search", "--json", "--kind", "summary", "slugify"],
                                         catch_exceptions=False).stdout)
    assert summaries and summaries[0]["kind"] == "summary"
    plain = runner.invoke(cli, ["compress"], catch_exceptions=False)
    assert plain.exit_code == 0 and "1 jobs: 1 done" in plain.output


def test_the_stop_queue_is_read_in_short_batches_and_running_sessions_wait(
    conn: sqlite3.Connection, clock: Clock
) -> None:
    for n in range(7):
        note(conn, f"busy{n}", f"a session whose job is running {n}", T0)
    for n in range(7):
        jobs.create_job(conn, f"busy{n}", ROOT, now=clock())
        assert jobs.claim(conn, "w", now=clock(), lease=60_000) is not None
    for n in range(25):
        note(conn, f"s{n}", f"request {n}", T0 + n)
        stop(conn, f"s{n}", T0 + (n % 3))
    for n in range(7):
        stop(conn, f"busy{n}", T0 + 1)
    created = jobs.jobs_from_stop_queue(conn, now=clock(), batch=4)
    assert len(created) == 25
    assert conn.execute("SELECT count(*) FROM stop_queue").fetchone()[0] == 7


def test_a_failed_attempt_is_retried_through_hueys_schedule(
    conn: sqlite3.Connection, sqlite_queue: queue_mod.Queue, clock: Clock
) -> None:
    import datetime

    note(conn, "s1", "fails once, then works", T0)
    job_id = jobs.create_job(conn, "s1", ROOT, now=clock())
    failures: list[int] = []

    def once(c: sqlite3.Connection, job: Job, beat: Any) -> Extraction:
        if not failures:
            failures.append(job.attempts)
            raise OSError("disk hiccup")
        return extract_job(c, job, beat)

    runner = JobRunner(clock=clock, queue=sqlite_queue, extractor=once)
    queue_mod.set_handler(MessageHandler(runner))
    first = runner.run(conn, job_id)
    assert first is not None and first.state == "retry_wait"
    due = jobs.get_job(conn, job_id).next_run_at
    assert due == clock() + 1_000
    eta = datetime.datetime.fromtimestamp(due / 1000, datetime.UTC).replace(tzinfo=None)
    huey = sqlite_queue.huey
    message = huey.dequeue()
    assert message.args == (job_id,) and message.eta == eta
    huey.execute(message, eta - datetime.timedelta(milliseconds=500))  # early: parked
    assert huey.read_schedule(eta - datetime.timedelta(milliseconds=1)) == []
    ready = huey.read_schedule(eta)
    assert [t.args for t in ready] == [(job_id,)]
    clock.now = due
    huey.execute(ready[0], eta)
    job = jobs.get_job(conn, job_id)
    assert (job.state, job.attempts, job.last_error) == ("done", 2, "OSError: disk hiccup")


def test_a_message_outside_a_worker_leaves_the_job_to_a_worker(
    conn: sqlite3.Connection, sqlite_queue: queue_mod.Queue, clock: Clock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    sessions.write(conn, ROOT, "s1")
    created = ticker.tick(conn, sqlite_queue, now=clock()).created
    queue_mod.set_handler(None)
    sqlite_queue.huey.execute(sqlite_queue.huey.dequeue())  # Huey logs what a task raises
    assert "only `aletheia worker` runs queued jobs" in caplog.text
    job = jobs.get_job(conn, created[0])
    assert (job.state, job.attempts) == ("pending", 0)


def test_a_job_whose_stored_result_is_damaged_is_still_listed(conn: sqlite3.Connection) -> None:
    job_id = jobs.create_job(conn, "s-damaged", ROOT, now=T0)
    conn.execute("UPDATE job SET result = '{not json' WHERE id = ?", (job_id,))
    listed = jobs.list_jobs(conn).jobs
    assert [(j.id, j.result) for j in listed] == [(job_id, None)]
    assert jobs.get_job(conn, job_id).to_dict()["result"] is None
