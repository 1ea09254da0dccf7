"""``aletheia worker``: one process that runs the ticker thread and the Huey consumer.

SIGTERM (what honcho sends) is a graceful stop: the consumer lets the running job finish,
then the ticker stops.  Any number of workers may run on this machine, on the SQLite queue or
on Redis: the job table's lease decides who runs what.
"""

from __future__ import annotations

import logging

from aletheia.tasks.compress import JobRunner, MessageHandler
from aletheia.tasks.queue import get_queue, set_handler
from aletheia.tasks.ticker import TICK_SECONDS, Ticker

log = logging.getLogger("aletheia.worker")

MAX_POLL_DELAY_S = 1.0


def run_worker(
    *,
    lease_seconds: float | None = None,
    tick_seconds: float = TICK_SECONDS,
    threads: int = 1,
    queue_url: str | None = None,
) -> None:
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO,
                            format="%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    queue = get_queue(queue_url)
    runner = JobRunner(lease_seconds=lease_seconds, queue=queue)
    set_handler(MessageHandler(runner))
    consumer = queue.huey.create_consumer(
        workers=threads, worker_type="thread", periodic=False, initial_delay=0.1, backoff=1.15,
        max_delay=MAX_POLL_DELAY_S, scheduler_interval=1, graceful_signal="TERM",
        check_worker_health=True, health_check_interval=5,
    )
    ticker = Ticker(queue, interval=tick_seconds, name=runner.name)
    log.info("worker %s: queue %s, lease %.1f s, %d thread(s)", runner.name,
             queue.url or "queue.db", runner.lease / 1000, threads)
    ticker.start()
    try:
        consumer.run()
    finally:
        ticker.stop()
        ticker.join(timeout=tick_seconds + 10)
        set_handler(None)
        log.info("worker %s stopped", runner.name)
