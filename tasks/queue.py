"""The Huey instance that carries ``extract_session(job_id)`` messages.

SqliteHuey on ``queue.db`` by default (never inside hub.db: Huey's tables have generic names);
with ``ALETHEIA_QUEUE_URL=redis://…`` the same task runs on RedisHuey: several worker processes
on this machine share one queue (not several machines: every job reads and writes this
machine's hub.db).  A message only says "look at job N": the job table decides.
"""

from __future__ import annotations

import datetime
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from aletheia import config, paths

QUEUE_NAME = "aletheia"
QUEUE_URL_ENV = "ALETHEIA_QUEUE_URL"
TASK_NAME = "extract_session"
_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")

log = logging.getLogger("aletheia.queue")

# What a message runs: set by the worker (its lease length, its name).  Kept outside the Huey
# instance so tests can swap it.
Handler = Callable[[int], Any]
_handler: Handler | None = None
_lock = threading.Lock()
_queues: dict[str, Queue] = {}


def set_handler(handler: Handler | None) -> None:
    global _handler
    _handler = handler


class NoHandler(RuntimeError):
    """A message reached a process that is not an ``aletheia worker`` (no handler set).  The
    job table keeps the job, and a worker's ticker sends it again."""


def _handle(job_id: int) -> Any:
    handler = _handler
    if handler is None:
        raise NoHandler(f"job {job_id}: only `aletheia worker` runs queued jobs")
    return handler(int(job_id))


def queue_url(env: Mapping[str, str] | None = None) -> str:
    return str(config.env(QUEUE_URL_ENV, env))


def make_queue(url: str | None = None) -> Queue:
    """A fresh Huey for ``url`` ('' → SqliteHuey on queue.db) with the task registered."""
    url = queue_url() if url is None else url
    if url.startswith(_REDIS_SCHEMES):
        from huey import RedisHuey  # type: ignore[import-untyped]

        huey = RedisHuey(QUEUE_NAME, url=url, results=False)
    elif url:
        from aletheia.errors import InvalidInput

        raise InvalidInput(f"{QUEUE_URL_ENV} must be a redis:// URL (or empty for queue.db)")
    else:
        from huey import SqliteHuey

        paths.ensure_home()
        db = paths.queue_db()
        if not db.exists():
            paths.touch_private(db)
        huey = SqliteHuey(QUEUE_NAME, filename=str(db), results=False)
        _private_sidecars(db)
    return Queue(huey, huey.task(name=TASK_NAME)(_handle), url)


def _private_sidecars(db: Any) -> None:
    for suffix in ("-wal", "-shm"):
        side = type(db)(str(db) + suffix)
        try:
            if side.exists():
                side.chmod(paths.FILE_MODE)
        except OSError:
            pass


class MessageQueue(Protocol):
    """What the ticker and the job runner need from a queue (tests pass small fakes)."""

    def enqueue(self, job_id: int) -> None: ...

    def schedule(self, job_id: int, at_ms: int) -> None: ...

    def pending_count(self) -> int: ...


@dataclass
class Queue:
    """The Huey instance and the one task, with the three calls the rest of tasks/ needs."""

    huey: Any
    task: Any  # the TaskWrapper for extract_session
    url: str

    def enqueue(self, job_id: int) -> None:
        self.task(int(job_id))

    def schedule(self, job_id: int, at_ms: int) -> None:
        """A message that becomes visible at ``at_ms`` (the job's ``next_run_at``)."""
        eta = datetime.datetime.fromtimestamp(at_ms / 1000, datetime.UTC)
        self.task.schedule(args=(int(job_id),), eta=eta)

    def pending_count(self) -> int:
        return int(self.huey.pending_count())


def get_queue(url: str | None = None) -> Queue:
    """The process's Queue for ``url`` (default: from the environment), built once."""
    url = queue_url() if url is None else url
    key = url or f"sqlite:{paths.queue_db()}"
    with _lock:
        queue = _queues.get(key)
        if queue is None:
            queue = make_queue(url)
            _queues[key] = queue
        return queue
