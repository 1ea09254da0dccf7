"""The ticker: every 2 s, stop queue → jobs, resend messages that were lost, bury jobs whose
last attempt's worker died, and replay the hook spool; when the worker has nothing to do, merge
the full-text indexes' segments (``aletheia.segments``) the hooks' writes added since.

Any number of tickers may run (one per worker): each step is one transaction that decides
what it takes, so two tickers never both create a job or both resend a message.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from aletheia import db, embed, ids, segments, spool, spool_reserve
from aletheia.tasks import heartbeat, jobs
from aletheia.tasks.queue import MessageQueue

log = logging.getLogger("aletheia.ticker")

TICK_SECONDS = 2.0
WORKER_BUSY_MS = 10_000  # background work waits longer for the write lock than a hook
# Merging when idle (no message queued or sent, no job running): at most this long a tick.  The
# hooks write one transaction per event, each a new segment, and the worker merges only after a
# session it compresses: during a long session (or in a store whose sessions never reach the
# worker) the segments pile up, and each query word is looked up in every one.  A tick with
# nothing to merge costs ~0.04 ms (50,000 memories); one step holds the write lock ~3 ms.
IDLE_MERGE_SECONDS = 0.1


@dataclass
class TickResult:
    created: list[int] = field(default_factory=list)
    resent: list[int] = field(default_factory=list)
    buried: list[int] = field(default_factory=list)
    spooled: int = 0
    embedded: int = 0
    merged: int = 0  # merge steps run while idle


def tick(conn: sqlite3.Connection, queue: MessageQueue, *, now: int) -> TickResult:
    """One pass over the job table (and the spool)."""
    result = TickResult()
    try:
        result.spooled = spool.replay(conn).inserted
    except Exception as exc:  # a locked store: the next tick tries again (lines are never at fault)
        log.warning("spool replay failed: %s", exc)
    if not spool_reserve.reserve_ready():
        spool_reserve.ensure()
    result.created = jobs.jobs_from_stop_queue(conn, now=now, enqueued=True)
    result.buried = [j.id for j in jobs.bury_expired(conn, now=now)]
    result.embedded = embed.background_step(conn)  # semantic extra: a batch, when switched on
    try:
        queue_empty = queue.pending_count() == 0
    except Exception as exc:
        log.warning("queue unreachable: %s", exc)
        return result
    result.resent = jobs.take_lost(conn, now=now, queue_empty=queue_empty)
    for job_id in result.created + result.resent:
        try:
            queue.enqueue(job_id)
        except Exception as exc:  # enqueued_at is set: take_lost resends after the grace
            log.warning("could not enqueue job %s: %s", job_id, exc)
    # (a running job's worker merges when it is done)
    if queue_empty and not (result.created or result.resent) and not jobs.any_running(conn):
        result.merged = segments.merge(conn, budget=IDLE_MERGE_SECONDS)
    if result.created or result.resent or result.buried:
        log.info("tick: %d new jobs, %d messages resent, %d dead", len(result.created),
                 len(result.resent), len(result.buried))
    return result


class Ticker(threading.Thread):
    """The worker's ticker thread (own connection; stops when ``stop()`` is called)."""

    def __init__(
        self, queue: MessageQueue, *, interval: float = TICK_SECONDS,
        clock: Callable[[], int] = ids.now_ms, name: str | None = None,
    ) -> None:
        super().__init__(name="aletheia-ticker", daemon=True)
        self.queue = queue
        self.interval = interval
        self.clock = clock
        self._stop_event = threading.Event()
        self.ticks = 0
        self.name = name or heartbeat.worker_name()

    def stop(self) -> None:
        self._stop_event.set()

    def run(self) -> None:
        conn = db.connect(busy_ms=WORKER_BUSY_MS)
        try:
            while not self._stop_event.is_set():
                try:
                    heartbeat.beat(conn, self.name, now=self.clock())
                except Exception as exc:
                    log.warning("heartbeat not written: %s", exc)
                try:
                    tick(conn, self.queue, now=self.clock())
                except Exception:
                    log.exception("tick failed")
                self.ticks += 1
                self._stop_event.wait(self.interval)
            try:
                heartbeat.stopped(conn, self.name, now=self.clock())
            except Exception as exc:
                log.warning("could not mark the worker stopped: %s", exc)
        finally:
            conn.close()
