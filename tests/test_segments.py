"""The worker merges the full-text indexes' segments (``aletheia.segments``): fewer segments,
the same rankings, short steps, and nothing when it cannot write."""

from __future__ import annotations

import sqlite3

from aletheia import segments, store
from aletheia.search import SearchQuery, search
from aletheia.store import MemoryIn
from tests.test_search import DAY, T0, P, _jwt_sessions

WORDS = ("invoice", "ledger", "deploy", "pytest", "tokens", "cache", "queue", "schema")


def _one_per_transaction(conn: sqlite3.Connection, n: int) -> None:
    """As the hooks write: each memory its own transaction (FTS5: a segment each, merged by
    fours)."""
    for i in range(n):
        store.write_memory(conn, MemoryIn(
            project=P if i % 3 else "/work/other", kind="prompt",
            title=f"{WORDS[i % 8]} {WORDS[(i * 3) % 8]} step {i}",
            narrative=f"We looked at the {WORDS[(i * 5) % 8]} and the {WORDS[i % 8]} again ({i}).",
            created_at=T0 + i * 1000, session_id=f"s{i // 10}"))


def _rankings(conn: sqlite3.Connection) -> list[list[tuple[str, float]]]:
    out = []
    for q in ("invoice ledger", "deploy the cache", "pytest", "tokens queue schema", "step"):
        for project in (P, None):
            out.append([(h.id, h.score) for h in search(conn, SearchQuery(q=q, project=project))])
    return out


def test_merging_leaves_fewer_segments_and_the_same_rankings(conn: sqlite3.Connection) -> None:
    _one_per_transaction(conn, 150)
    before = segments.count(conn, "memory_fts")
    ranked = _rankings(conn)
    assert before > 4
    assert segments.merge(conn, budget=30.0) > 0
    after = segments.count(conn, "memory_fts")
    assert after < before
    assert after <= 3
    assert _rankings(conn) == ranked
    # Done: a second call finds nothing to merge.
    assert segments.merge(conn, budget=30.0) == 0
    row = conn.execute("SELECT v FROM memory_fts_config WHERE k = 'usermerge'").fetchone()
    assert int(row[0]) == segments.USERMERGE


def _found(conn: sqlite3.Connection, q: str) -> list[str]:
    return [h.id for h in search(conn, SearchQuery(q=q, project=P)) if h.via != ["neighbour"]]


def test_an_edit_and_an_erase_after_merging_read_right(conn: sqlite3.Connection) -> None:
    _one_per_transaction(conn, 60)
    segments.merge(conn, budget=30.0)
    target = [h for h in search(conn, SearchQuery(q="step 7", project=P)) if "step 7" in h.title]
    assert target
    conn.execute("UPDATE memory SET narrative = 'renamed to zephyrine', title = 'zephyrine' "
                 "WHERE id = ?", (target[0].id,))
    assert _found(conn, "zephyrine") == [target[0].id]
    segments.merge(conn, budget=30.0)
    assert _found(conn, "zephyrine") == [target[0].id]
    conn.execute("DELETE FROM memory WHERE id = ?", (target[0].id,))
    segments.merge(conn, budget=30.0)
    assert _found(conn, "zephyrine") == []


def test_the_worker_merges_after_a_session(conn: sqlite3.Connection) -> None:
    _one_per_transaction(conn, 120)
    before = segments.count(conn, "memory_fts")
    _jwt_sessions(conn)  # two sessions compressed by the real worker
    assert segments.count(conn, "memory_fts") < before
    assert segments.count(conn, "memory_fts") <= 3


def test_inside_a_transaction_or_under_a_lock_it_leaves_the_merging(
    conn: sqlite3.Connection, aletheia_home: object,
) -> None:
    _one_per_transaction(conn, 60)
    before = segments.count(conn, "memory_fts")
    conn.execute("BEGIN")
    assert segments.merge(conn) == 0
    conn.execute("ROLLBACK")
    from aletheia import db

    other = db.connect()
    other.execute("BEGIN IMMEDIATE")  # another writer holds the lock
    try:
        assert segments.merge(conn) == 0
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert segments.count(conn, "memory_fts") == before
    assert int(conn.execute("PRAGMA busy_timeout").fetchone()[0]) != segments.BUSY_MS
    assert segments.merge(conn, budget=30.0) > 0


def test_a_day_of_hooks_between_sessions_stays_few_segments(conn: sqlite3.Connection) -> None:
    for day in range(3):
        for i in range(40):
            store.write_memory(conn, MemoryIn(
                project=P, kind="prompt", title=f"day {day} event {i} {WORDS[i % 8]}",
                narrative=WORDS[(i + day) % 8], created_at=T0 + day * DAY + i,
                session_id=f"d{day}"))
        segments.merge(conn, budget=30.0)
        assert segments.count(conn, "memory_fts") <= 3


class _IdleQueue:
    """A queue with nothing on it (the ticker's view of an idle worker)."""

    def __init__(self) -> None:
        self.enqueued: list[int] = []

    def enqueue(self, job_id: int) -> None:
        self.enqueued.append(job_id)

    def schedule(self, job_id: int, at_ms: int) -> None:
        raise AssertionError("not used")

    def pending_count(self) -> int:
        return 0


def test_an_idle_worker_merges_what_the_hooks_wrote_since_its_last_session(
    conn: sqlite3.Connection,
) -> None:
    from aletheia.tasks import ticker

    _one_per_transaction(conn, 150)  # hooks writing, no session compressed yet
    before = segments.count(conn, "memory_fts")
    ranked = _rankings(conn)
    assert before > 4
    steps = []
    for i in range(100):  # (each tick merges for at most IDLE_MERGE_SECONDS)
        result = ticker.tick(conn, _IdleQueue(), now=T0 + 10**9 + i)  # type: ignore[arg-type]
        assert result.created == [] and result.resent == []
        steps.append(result.merged)
        if result.merged == 0:
            break
    assert steps[0] > 0 and steps[-1] == 0
    assert segments.count(conn, "memory_fts") < before
    assert segments.count(conn, "memory_fts") <= 3
    assert _rankings(conn) == ranked
    # Merged: the next idle tick finds nothing to do.
    assert ticker.tick(conn, _IdleQueue(), now=T0 + 2 * 10**9).merged == 0  # type: ignore[arg-type]


def test_the_ticker_leaves_the_merging_while_a_job_runs_or_messages_wait(
    conn: sqlite3.Connection,
) -> None:
    from aletheia.tasks import ticker

    _one_per_transaction(conn, 60)
    before = segments.count(conn, "memory_fts")
    assert before > 3
    conn.execute("INSERT INTO job(session_id, project, state, lease_owner, lease_expires_at, created_at, "
                 "updated_at, next_run_at) VALUES ('s-run', ?, 'running', 'w', ?, ?, ?, ?)",
                 (P, T0 + 10**10, T0, T0, T0))
    assert ticker.tick(conn, _IdleQueue(), now=T0 + 10**9).merged == 0  # type: ignore[arg-type]
    assert segments.count(conn, "memory_fts") == before

    class _Busy(_IdleQueue):
        def pending_count(self) -> int:
            return 3

    conn.execute("UPDATE job SET state = 'done'")
    assert ticker.tick(conn, _Busy(), now=T0 + 10**9).merged == 0  # type: ignore[arg-type]
    assert segments.count(conn, "memory_fts") == before
    assert ticker.tick(conn, _IdleQueue(), now=T0 + 10**9).merged > 0  # type: ignore[arg-type]


def test_aletheia_compress_merges_a_store_no_worker_keeps(conn: sqlite3.Connection) -> None:
    """A store the hooks fill and nobody compresses until a hand-run `aletheia compress`, with
    no session due: its segments are merged there, with the same rankings."""
    from aletheia.tasks.compress import JobRunner, drain

    _one_per_transaction(conn, 150)
    before = segments.count(conn, "memory_fts")
    ranked = _rankings(conn)
    assert before > 4
    summary = drain(conn, JobRunner())
    assert summary.jobs == 0 and summary.segments_merged > 0
    assert segments.count(conn, "memory_fts") <= 3
    assert _rankings(conn) == ranked
    assert drain(conn, JobRunner()).segments_merged == 0
