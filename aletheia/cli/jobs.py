"""Compression commands: worker, compress, jobs (and jobs retry), facts.

Thin: each one parses, calls tasks/ or aletheia.facts and prints.  Huey and the job code are
imported inside the commands so ``aletheia --help`` stays fast.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from aletheia import bounds, ids, pages
from aletheia.cli.base import (
    FiniteFloat,
    cli,
    count,
    current_project,
    emit_json,
    json_option,
    project_option,
    store,
)
from aletheia.vocab import FACT_KINDS, FACT_STATUSES, JOB_STATE_ORDER, SCOPES


@cli.command()
@click.option("--lease-seconds", type=FiniteFloat(0.05, 86_400), default=None,
              help="Job lease (default: ALETHEIA_LEASE_SECONDS or 60).")
@click.option("--tick-seconds", type=FiniteFloat(0.05, 3600), default=2.0, show_default=True,
              help="How often the ticker runs (stop queue → jobs, lost messages, spool).")
@click.option("--threads", type=click.IntRange(1, 16), default=1, show_default=True,
              help="Consumer threads in this process.")
def worker(lease_seconds: float | None, tick_seconds: float, threads: int) -> None:
    """Run the compression worker: a ticker thread and the Huey consumer (SIGTERM stops it
    gracefully).  Several at once are safe."""
    from aletheia.tasks.worker import run_worker

    run_worker(lease_seconds=lease_seconds, tick_seconds=tick_seconds, threads=threads)


@cli.command()
@click.option("--lease-seconds", type=FiniteFloat(0.05, 86_400), default=None,
              help="Job lease (default: ALETHEIA_LEASE_SECONDS or 60).")
@json_option
def compress(lease_seconds: float | None, as_json: bool) -> None:
    """Run every due compression job once, here and now (safe while a worker runs)."""
    from aletheia import db
    from aletheia.tasks.compress import WORKER_BUSY_MS, JobRunner, Outcome, drain

    queue = _queue_or_none()
    runner = JobRunner(lease_seconds=lease_seconds, queue=queue)
    bar: Any = None

    def on_start(total: int) -> None:
        nonlocal bar
        if not sys.stderr.isatty():
            return  # a bar on a pipe or a log is one stray "compressing" line
        bar = click.progressbar(length=max(total, 1), label="compressing", file=sys.stderr,
                                show_pos=True, item_show_func=lambda s: s)
        bar.__enter__()

    def on_job(outcome: Outcome) -> None:
        if bar is not None:
            if bar.pos >= bar.length:
                bar.length += 1  # jobs created meanwhile (by a worker's ticker) count too
            bar.update(1, f"job {outcome.job_id} {outcome.state}")

    conn = db.connect(busy_ms=WORKER_BUSY_MS)
    try:
        summary = drain(conn, runner, on_start=on_start, on_job=on_job)
    finally:
        conn.close()
        if bar is not None:
            bar.__exit__(None, None, None)
    if as_json:
        emit_json(summary.to_dict())
        return
    click.echo(
        f"{summary.jobs} jobs: {summary.done} done, {summary.failed} failed (will retry), "
        f"{summary.dead} dead; {summary.facts_added} facts added, {summary.facts_merged} merged; "
        f"{summary.memories} memories in {summary.seconds:.2f} s"
    )
    for line in summary.errors:
        click.echo(f"  {line}")


def _queue_or_none() -> Any:
    # Retries go to the queue so a running worker picks them up; without a reachable queue
    # the job table still holds them and the next compress (or a worker's ticker) runs them.
    try:
        from aletheia.tasks.queue import get_queue

        return get_queue()
    except Exception as exc:
        click.echo(f"note: queue unavailable ({exc}); retries wait for the next run", err=True)
        return None


@cli.group(invoke_without_command=True)
@click.option("--state", type=click.Choice(JOB_STATE_ORDER), default=None, help="Only this state.")
@click.option("--session", "session_id", default=None)
@click.option("--limit", "-n", type=click.IntRange(1, pages.MAX_LIMIT), default=50,
              show_default=True, help="Jobs per page (newest first).")
@click.option("--cursor", default=None, help="The next page: the cursor the last page printed.")
@json_option
@click.pass_context
def jobs(ctx: click.Context, state: str | None, session_id: str | None, limit: int,
         cursor: str | None, as_json: bool) -> None:
    """List compression jobs (newest first, grouped by state), with attempts and last error."""
    if ctx.invoked_subcommand is not None:
        return
    from aletheia.tasks import jobs as job_table

    with store() as conn:
        page = job_table.list_jobs(conn, state=state, session_id=session_id, limit=limit,
                                   cursor=cursor)
        totals = job_table.counts(conn)
    if as_json:
        emit_json({"counts": totals, "jobs": page.to_dict()["items"],
                   "next_cursor": page.next_cursor})
        return
    click.echo("  ".join(f"{s}: {totals[s]}" for s in JOB_STATE_ORDER))
    current = None
    for j in sorted(page.jobs, key=lambda j: JOB_STATE_ORDER.index(j.state)):
        if j.state != current:
            current = j.state
            click.echo(f"{current}:")
        when = ids.iso(j.finished_at or j.next_run_at)
        line = f"  #{j.id} session {j.session_id} attempts {j.attempts}/{j.max_attempts} {when}"
        if j.state == "retry_wait":
            line += f" (next try {ids.iso(j.next_run_at)})"
        if j.state == "done" and j.result:
            line += f" ({j.result.get('memories', 0)} memories, {j.result.get('facts', {}).get('added', 0)} facts)"
        click.echo(line)
        if j.last_error and j.state != "done":
            click.echo(f"      last error: {j.last_error.splitlines()[-1][:200]}")
    if page.next_cursor:
        click.echo(f"more: aletheia jobs --cursor {page.next_cursor}")


@jobs.command("retry")
@click.argument("job_id", type=count(1, bounds.MAX_INT))
@json_option
def jobs_retry(job_id: int, as_json: bool) -> None:
    """Revive a dead job (fresh attempts; it runs at the next worker tick or compress)."""
    from aletheia.tasks import jobs as job_table

    with store() as conn:
        job = job_table.retry(conn, job_id, now=ids.now_ms())
    try:
        from aletheia.tasks.queue import get_queue

        get_queue().enqueue(job.id)
    except Exception:
        pass  # the ticker resends a message for a pending job with none on its way
    if as_json:
        emit_json(job.to_dict())
        return
    click.echo(f"job {job.id} is pending again")


@cli.command()
@click.argument("fact_id", required=False)
@project_option
@click.option("--all-projects", is_flag=True, help="Facts of every project.")
@click.option("--scope", type=click.Choice(SCOPES), default=None,
              help="project: the project's own facts only (default: with the global ones).")
@click.option("--kind", type=click.Choice(FACT_KINDS), default=None)
@click.option("--status", type=click.Choice((*FACT_STATUSES, "all")),
              default="active", show_default=True)
@click.option("--session", "session_id", default=None)
@click.option("--history", is_flag=True,
              help="Knowledge updates: each current fact with the older ones it superseded "
                   "(with FACT_ID: that fact's chain).")
@click.option("--limit", "-n", type=click.IntRange(1, 1000), default=50, show_default=True)
@json_option
def facts(fact_id: str | None, project: str | None, all_projects: bool, scope: str | None,
          kind: str | None, status: str, session_id: str | None, history: bool, limit: int,
          as_json: bool) -> None:
    """List extracted facts (newest first); only the current one of each knowledge update
    unless --status or --history asks for more."""
    from aletheia import facts as fact_store

    with store() as conn:
        if history or fact_id:
            if fact_id:
                found_chains = [fact_store.history(conn, fact_id)]
            else:
                found_chains = fact_store.chains(
                    conn, None if all_projects else current_project(project), limit=limit)
            if as_json:
                emit_json(found_chains if not fact_id else found_chains[0])
                return
            if not found_chains:
                click.echo("no knowledge updates")
            for chain in found_chains:
                for i, link in enumerate(chain):
                    mark = "" if i == 0 else "  ↳ replaced "
                    state = "" if link["status"] == "active" else f" [{link['status']}]"
                    when = ids.iso(link["observed_at"] or link["created_at"])[:10]
                    click.echo(f"{mark}{link['id']}  {when}{state}  [{link['kind']}] "
                               f"{link['text']}  ({fact_store.evidence_label(link)})")
            return
        found = fact_store.list_facts(
            conn, project=None if all_projects else current_project(project), scope=scope,
            status=None if status == "all" else status, kind=kind, session_id=session_id,
            limit=limit,
        )
    if as_json:
        emit_json(found)
        return
    if not found:
        click.echo("no facts")
    for f in found:
        click.echo(f"{f['id']}  [{f['kind']}] {f['text']}  ({fact_store.evidence_label(f)}; "
                   f"{f['extractor']}, {f['confidence']:.2f})")
