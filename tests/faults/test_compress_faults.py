"""Compression and faults: it writes in short transactions, it waits out a held lock without
losing a hook's item, and a worker killed (-9) in the middle of writing leaves a job the next
worker finishes with exactly what a clean run writes — counted, never timed."""

from __future__ import annotations

import contextlib
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aletheia import db, ids, spool, store
from aletheia.store import MemoryIn
from aletheia.tasks import compress, jobs
from aletheia.tasks.compress import JobRunner
from tests import sessions
from tests.e2e.test_worker import Proc, query, wait_for, worker
from tests.hookproc import claude_tool, run_hook
from tests.settle import settled_store

ROOT = "/home/dev/textkit"


def _big_session(conn: sqlite3.Connection, n: int, session: str = "s-big") -> None:
    rows = []
    for i in range(n):
        kind = "prompt" if i % 50 == 0 else "tool_event"
        rows.append(store.prepare(MemoryIn(
            project=ROOT, kind=kind, session_id=session, tool="claude-code", source="hook",
            title=(f"Fix step {i} of the parser" if kind == "prompt" else
                   f"Bash: $ pytest -q tests/test_step{i % 40}.py"),
            narrative=(f"input: {{\"command\": \"pytest -q tests/test_step{i % 40}.py\"}}\n\n"
                       f"output:\n{i % 7 + 1} passed in 0.{i % 9}s"),
            created_at=sessions.T0 + i * 1000, event_key=f"{session}-{i}",
        )))
    for start in range(0, len(rows), 500):
        store.insert_rows(conn, rows[start:start + 500])
    store.queue_stop(conn, session, ROOT, "claude-code", now=sessions.T0 + n * 1000)


@contextlib.contextmanager
def _transactions(changes: list[int]) -> Iterator[None]:
    """Every outermost transaction in this process, with how many rows it changed."""
    original = db.tx

    @contextlib.contextmanager
    def tx(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        if conn.in_transaction:
            with original(conn) as c:
                yield c
            return
        before = conn.total_changes
        with original(conn) as c:
            yield c
        changes.append(conn.total_changes - before)

    patched = [m for m in list(sys.modules.values())
               if m is not None and getattr(m, "tx", None) is original]
    for m in patched:
        m.tx = tx  # type: ignore[attr-defined]
    try:
        yield
    finally:
        for m in patched:
            m.tx = original  # type: ignore[attr-defined]


def test_a_5000_event_session_is_written_in_short_transactions(conn: sqlite3.Connection) -> None:
    _big_session(conn, 5000)
    jobs.jobs_from_stop_queue(conn, now=ids.now_ms())
    changes: list[int] = []
    with _transactions(changes):
        outcome = JobRunner(use_provider=False).run(conn)
    assert outcome is not None and outcome.state == "done" and outcome.memories == 5000
    # Marking 5,000 memories extracted alone takes 100 transactions of 50; none writes more
    # than a batch's worth of rows (with their index entries), whatever the session's size.
    assert len(changes) >= 5000 // compress.MARK_BATCH
    assert max(changes) <= 2 * compress.MARK_BATCH, sorted(changes)[-5:]
    left = conn.execute("SELECT count(*) FROM memory WHERE session_id = 's-big' "
                        "AND extracted_at IS NULL").fetchone()[0]
    assert left == 0


LOCKER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.readline()
conn.execute("ROLLBACK")
"""


@pytest.mark.slow
def test_compression_waits_out_a_held_lock_and_no_hook_item_is_lost(
        conn: sqlite3.Connection, hook_env: dict[str, str], tmp_path: Path) -> None:
    sessions.write(conn, ROOT, "s-locked")
    jobs.jobs_from_stop_queue(conn, now=ids.now_ms())
    from aletheia import paths

    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(paths.hub_db())],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert locker.stdout is not None and locker.stdin is not None
    assert locker.stdout.readline().strip() == "locked"
    outcome: list[Any] = []
    job_conn = db.connect(busy_ms=compress.WORKER_BUSY_MS, check_same_thread=False)
    runner = threading.Thread(target=lambda: outcome.append(JobRunner(use_provider=False).run(job_conn)))
    try:
        runner.start()
        runs = [run_hook("claude-code", "PostToolUse",
                         claude_tool("s-hooks", str(tmp_path), f"echo {i}", str(i), f"tu_{i}"), hook_env)
                for i in range(5)]
    finally:
        locker.stdin.write("go\n")
        locker.stdin.close()
        locker.wait(60)
        locker.stdout.close()
    runner.join(120)
    job_conn.close()
    assert [r.code for r in runs] == [0] * 5
    assert outcome and outcome[0] is not None and outcome[0].state == "done"
    c = settled_store()
    titles = {r[0] for r in c.execute("SELECT title FROM memory WHERE session_id = 's-hooks'")}
    c.close()
    assert titles == {f"Bash: $ echo {i}" for i in range(5)}
    assert spool.pending_size() == 0


def _snapshot(path: Path) -> dict[str, Any]:
    c = sqlite3.connect(path)
    try:
        return {
            "facts": sorted(r[0] for r in c.execute("SELECT text FROM fact WHERE status = 'active'")),
            "summaries": c.execute("SELECT count(*) FROM memory WHERE kind = 'summary' "
                                   "AND dismissed_at IS NULL").fetchone()[0],
            "project_summaries": c.execute("SELECT count(*) FROM memory WHERE kind = "
                                           "'project_summary' AND dismissed_at IS NULL").fetchone()[0],
            "unextracted": c.execute("SELECT count(*) FROM memory WHERE source != 'worker' "
                                     "AND extracted_at IS NULL").fetchone()[0],
            "memories": c.execute("SELECT count(*) FROM memory WHERE source != 'worker'").fetchone()[0],
        }
    finally:
        c.close()


@pytest.mark.slow
def test_kill_9_mid_write_then_the_next_worker_writes_what_a_clean_run_does(
        conn: sqlite3.Connection, aletheia_home: Path, tmp_path: Path) -> None:
    sessions.write(conn, ROOT, "s-kill")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    # The reference: the same store compressed cleanly, in this process.
    clean = tmp_path / "clean" / "hub.db"
    clean.parent.mkdir()
    shutil.copy(aletheia_home / "hub.db", clean)
    ref = db.connect(clean)
    jobs.jobs_from_stop_queue(ref, now=ids.now_ms())
    assert JobRunner(use_provider=False).run(ref) is not None
    ref.close()
    expected = _snapshot(clean)
    assert len(expected["facts"]) > compress.FACT_BATCH  # several write transactions

    procs: list[Proc] = []
    try:
        first = worker(aletheia_home, tmp_path / "first.log", "--tick-seconds", "0.3",
                       ALETHEIA_LEASE_SECONDS="2", ALETHEIA_JOB_FAULT="write-sleep:0.5")
        procs.append(first)
        # Killed once some facts are written and before the watermark: mid-write.
        wait_for(lambda: query("SELECT count(*) FROM fact")[0][0] > 0, 60, "the first facts")
        first.signal(signal.SIGKILL)
        first.popen.wait(10)
        partial = _snapshot(aletheia_home / "hub.db")
        assert len(partial["facts"]) > 0 and partial["unextracted"] > 0
        assert query("SELECT state FROM job")[0][0] == "running"
        second = worker(aletheia_home, tmp_path / "second.log", "--tick-seconds", "0.3",
                        ALETHEIA_LEASE_SECONDS="2")
        procs.append(second)
        wait_for(lambda: query("SELECT count(*) FROM job WHERE state = 'done'")[0][0] == 1, 120,
                 "the second worker to finish the job")
        assert second.stop() == 0
    finally:
        for p in procs:
            p.stop()
    after = _snapshot(aletheia_home / "hub.db")
    assert after == expected  # the same facts, one live summary of each kind, nothing left
    job = query("SELECT attempts, state FROM job")[0]
    assert (job["attempts"], job["state"]) == (2, "done")
