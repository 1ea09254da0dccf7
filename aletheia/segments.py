"""Keeping the full-text indexes in few segments (FTS5's b-trees), so a query word is one look-up.

FTS5 writes each transaction's postings as a new segment and merges segments only when four
gather on one level (its ``automerge``): a store the hooks filled one event at a time holds
a dozen or more, and every query word is looked up in each of them.  After the worker read a
session (bench/scale.py --state read, 50,000 memories: 17 segments in ``memory_fts``, 12 in
``fact_fts``), a project-scoped query spent ~1 ms of its ~4 in those look-ups; a concept's
thirty added names (``search.EXPAND_WEIGHT``) alone cost ~0.9 ms, ~0.2 ms once merged.

So the worker, after each session it compresses, merges levels that hold two segments or more
(FTS5's ``usermerge`` 2 and ``merge`` command: a log-structured merge, each posting rewritten
about log2(n) times over its life, not the whole index each time), in short steps (a few ms
of write lock each, like the worker's other transactions) until nothing is left to merge or the
step budget is spent; what is left waits for the next session, or for the worker's ticker
(``aletheia.tasks.ticker``), which merges the same way, 0.1 s a tick, whenever no message waits
and no job runs: the segments the hooks add during a long session are merged before it ends.
Hooks still write as before
(``automerge`` untouched): nothing is added to the capture path.  The postings, the documents
and FTS5's statistics stay the same, so every ranking does too."""

from __future__ import annotations

import logging
import sqlite3
import time

log = logging.getLogger("aletheia.worker")

INDEXES = ("memory_fts", "fact_fts")
USERMERGE = 2  # a level with this many segments is merged (FTS5's default: 4)
STEP_PAGES = 32  # leaf pages written per step (~5 ms at 50,000 memories, at most ~40)
BUDGET_SECONDS = 0.25  # merging after one session stops after this long
BUSY_MS = 100  # a step waits this long for the write lock, else merging waits for next time


def merge(conn: sqlite3.Connection, budget: float = BUDGET_SECONDS) -> int:
    """Merge steps on every index until each is done or ``budget`` seconds have gone; returns
    the steps that changed something.  Each step is its own transaction; a busy or read-only
    store just leaves the merging to the next call."""
    if conn.in_transaction:
        return 0  # (inside someone's transaction: each step must commit on its own)
    done = 0
    deadline = time.monotonic() + budget
    busy = int(conn.execute("PRAGMA busy_timeout").fetchone()[0])
    conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
    try:
        for index in INDEXES:
            _set_usermerge(conn, index)
            while time.monotonic() < deadline:
                before = conn.total_changes
                conn.execute(f"INSERT INTO {index}({index}, rank) VALUES ('merge', ?)",
                             (STEP_PAGES,))
                if conn.total_changes - before < 2:  # (FTS5: nothing was left to merge)
                    break
                done += 1
    except sqlite3.Error as exc:
        log.info("merging the indexes' segments waits for the next session: %s", exc)
    finally:
        conn.execute(f"PRAGMA busy_timeout = {busy}")
    return done


def _set_usermerge(conn: sqlite3.Connection, index: str) -> None:
    """FTS5 keeps the setting in the index's config table; written once (an index rebuilt by a
    migration starts without it)."""
    row = conn.execute(f"SELECT v FROM {index}_config WHERE k = 'usermerge'").fetchone()
    if row is None or int(row[0]) != USERMERGE:
        conn.execute(f"INSERT INTO {index}({index}, rank) VALUES ('usermerge', ?)", (USERMERGE,))


def count(conn: sqlite3.Connection, index: str) -> int:
    """Segments the index holds now (those with at least one term)."""
    return int(conn.execute(f"SELECT count(DISTINCT segid) FROM {index}_idx").fetchone()[0])
