"""Commands that read: search, get, timeline, context, stats, doctor."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import click

from aletheia import blocks, bounds, ids, memories
from aletheia.cli.base import (
    cli,
    count,
    current_project,
    emit_json,
    json_option,
    project_option,
    store,
)
from aletheia.errors import InvalidInput
from aletheia.vocab import SCOPES


def parse_time(value: str | None, name: str) -> int | None:
    """ISO-8601 (date or date-time, UTC unless it says), epoch ms, or relative (30m, 12h, 7d, 2w)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    rel = re.fullmatch(r"(\d{1,15})\s*([mhdw])", text)
    if rel:
        unit = {"m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}[rel.group(2)]
        return bounds.time_filter_ms(max(0, ids.now_ms() - int(rel.group(1)) * unit), name)
    if text.isdigit():
        return bounds.time_filter_ms(int(text[:30]), name)
    from datetime import UTC, datetime

    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{name}: {value!r} is not a time (ISO-8601, epoch ms, or 30m/12h/7d/2w)"
        ) from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return bounds.time_filter_ms(max(0, int(dt.timestamp() * 1000)), name)


@cli.command()
@click.argument("query", nargs=-1, required=True)
@project_option
@click.option("--all-projects", is_flag=True, help="Search every project.")
@click.option("--scope", type=click.Choice(SCOPES), default=None,
              help="project: the project's own rows only (default: with the global ones).")
@click.option("--kind", default=None, help="prompt, tool_event, note, summary, …")
@click.option("--tool", default=None, help="Host tool (claude-code, codex, gemini, …).")
@click.option("--session", "session_id", default=None)
@click.option("--since", default=None, help="ISO-8601, epoch ms, or relative (7d, 12h).")
@click.option("--until", default=None, help="ISO-8601, epoch ms, or relative (7d, 12h).")
@click.option("--pinned/--unpinned", "pinned", default=None, help="Only pinned (or unpinned).")
@click.option("--include-dismissed", is_flag=True, help="Also dismissed memories and facts.")
@click.option("--no-facts", is_flag=True, help="Memories only.")
@click.option("--semantic/--keyword", "semantic", default=None,
              help="Fuse (or leave out) semantic neighbours; default: ALETHEIA_SEMANTIC.")
@click.option("--limit", "-n", default=10, show_default=True, type=count(1, 200))
@json_option
def search(query: tuple[str, ...], project: str | None, all_projects: bool, scope: str | None,
           kind: str | None, tool: str | None, session_id: str | None, since: str | None,
           until: str | None, pinned: bool | None, include_dismissed: bool, no_facts: bool,
           semantic: bool | None, limit: int, as_json: bool) -> None:
    """Search memories and facts (one ranking for every interface)."""
    from aletheia.search import NEIGHBOUR_NOTE, SearchQuery
    from aletheia.search import search as run_search

    q = SearchQuery(
        q=" ".join(query), project=None if all_projects else current_project(project),
        scope=scope, kind=kind, tool=tool, session_id=session_id,
        since=parse_time(since, "--since"), until=parse_time(until, "--until"), pinned=pinned,
        include_dismissed=include_dismissed, include_facts=not no_facts, semantic=semantic,
        limit=limit,
    )
    with store() as conn:
        if kind is not None:
            known = memories.known_kinds(conn)
            if kind not in known:
                raise InvalidInput(f"--kind {kind!r}: nothing stored has that kind "
                                   f"(known: {', '.join(known)})")
        hits = run_search(conn, q)
    blocks.record_fetch("search", q.project, "cli")
    if as_json:
        emit_json([h.to_dict() for h in hits])
        return
    if not hits:
        if q.project is not None:
            click.echo(f"no matches in project {q.project} (--all-projects searches every "
                       "project)")
        else:
            click.echo("no matches")
    for h in hits:
        words = h.matched()
        mark = (f"  ({NEIGHBOUR_NOTE})" if h.via == ["neighbour"]
                else f"  (matched {', '.join(words[:6])})" if words else "")
        click.echo(f"{h.id}  {ids.iso(h.created_at)}  [{h.type}:{h.kind}]  {h.title[:100]}{mark}")


@cli.command()
@click.argument("memory_ids", nargs=-1, required=True)
@json_option
def get(memory_ids: tuple[str, ...], as_json: bool) -> None:
    """Full memories by id (get_observations)."""
    with store() as conn:
        rows = memories.get_observations(conn, list(memory_ids))
    blocks.record_fetch_of("get_observations", rows, "cli")
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        _print_full(r)


def _print_full(r: Mapping[str, Any]) -> None:
    click.echo(f"# {r['id']}  {r['created']}  [{r['kind']}]  {r['project']}")
    click.echo(f"title: {r['title']}")
    if r["subtitle"]:
        click.echo(f"subtitle: {r['subtitle']}")
    if r["files"]:
        click.echo(f"files: {', '.join(r['files'])}")
    click.echo(r["narrative"])
    click.echo()


@cli.command()
@click.argument("anchor", required=False)
@click.option("--at", "at_time", default=None, help="A time instead of an id (needs a project).")
@project_option
@click.option("--before", default=5, show_default=True, type=count(0, 100))
@click.option("--after", default=5, show_default=True, type=count(0, 100))
@json_option
def timeline(anchor: str | None, at_time: str | None, project: str | None, before: int,
             after: int, as_json: bool) -> None:
    """The memories around ANCHOR (an id) in its session, or around --at TIME in a project."""
    if anchor is None and at_time is None:
        raise InvalidInput("give an anchor id or --at TIME")
    at = parse_time(at_time, "--at")
    with store() as conn:
        rows = memories.timeline(
            conn, anchor, at=at, project=current_project(project) if anchor is None else project,
            before=before, after=after,
        )
    blocks.record_fetch_of("timeline", rows, "cli")
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        mark = ">" if r["id"] == anchor else " "
        click.echo(f"{mark} {r['id']}  {r['created']}  [{r['kind']}]  {r['title'][:100]}")


@cli.command()
@project_option
@click.option("--tool", default="claude-code", show_default=True,
              help="The host whose rules (and output form, with --as-host) to use.")
@click.option("--session", "session_id", default=None, help="The session asking (left out of requests).")
@click.option("--as-host", is_flag=True, help="Print exactly what the SessionStart hook prints.")
@json_option
def context(project: str | None, tool: str, session_id: str | None, as_host: bool,
            as_json: bool) -> None:
    """Print the context block a session of this project would get."""
    from aletheia.context import build_block, render_for_host

    key = current_project(project)
    with store() as conn:
        if as_host:
            click.echo(render_for_host(conn, tool, key, session_id=session_id), nl=False)
            return
        block = build_block(conn, key, host=tool, session_id=session_id)
    if as_json:
        emit_json({"project": key, "host": tool, "chars": len(block), "block": block})
        return
    click.echo(block or "(no memories for this project)")


@cli.command()
@click.option("--limit", default=None, type=count(1, 10_000_000), help="At most this many memories.")
@json_option
def embed(limit: int | None, as_json: bool) -> None:
    """Embed memories that have no vector yet (the semantic extra; runs in the background)."""
    from aletheia import embed as embedding

    if not embedding.available():
        raise InvalidInput("semantic search is not installed: pip install 'aletheia-mem[embed]'")
    with store() as conn:
        done = embedding.embed_pending(conn, limit=limit)
        left = embedding.pending(conn)
    if as_json:
        emit_json({"embedded": done, "pending": left, "model": embedding.model_name()})
    else:
        click.echo(f"embedded {done} memories ({left} pending) with {embedding.model_name()}")


@cli.command()
@click.option("--days", default=30, show_default=True, type=click.IntRange(1, 3650),
              help="Context economics over this many days.")
@json_option
def stats(days: int, as_json: bool) -> None:
    """Counts by kind, project, sessions, facts and jobs; and per project what context cost
    (tokens injected per session) and how often the agent then fetched detail."""
    with store() as conn:
        out = memories.stats(conn)
    out["context"] = blocks.economics(days=days)["projects"]
    if as_json:
        emit_json(out)
        return
    rows: list[tuple[str, str]] = [
        ("memories", f"{out['memories']} in {out['projects']} project(s), "
                     f"{out['sessions']} session(s)"),
        *((f"  {kind}", str(n)) for kind, n in sorted(out["by_kind"].items())),
        ("pinned", str(out.get("pinned", 0))),
        ("dismissed", str(out.get("dismissed", 0))),
        ("facts", f"{out['facts']} active"),
        ("stop queue", str(out["stop_queue"])),
        ("jobs", ", ".join(f"{n} {state}" for state, n in sorted(out["jobs"].items()))
         or "none"),
    ]
    if not out["context"]:
        rows.append(("context", f"nothing injected in the last {days} days"))
    for project, row in sorted(out["context"].items()):
        per = row["tokens_per_session"]
        rows.append((f"context {project}",
                     f"{row['sessions']} sessions; tokens per session ≈ {per['total']:g} (block "
                     f"{per['block']:g}, per-prompt {per['prompt']:g}, per-file {per['file']:g}); "
                     f"followed by a detail fetch: {row['followed_by_fetch']}/{row['sessions']} "
                     f"({row['fetch_rate']:.0%}), {row['fetches']} fetches"))
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        click.echo(f"{key + ':':{width + 1}}  {value}")


@cli.command()
@click.option("--full", is_flag=True, help="SQLite's full integrity check (slow on a big store).")
@json_option
def doctor(full: bool, as_json: bool) -> None:
    """Check the store, the worker, the spool, the disk: exits 1 when something needs you."""
    from aletheia import doctor as checks

    report = checks.run(full=full)
    if as_json:
        emit_json(report)
    else:
        click.echo(checks.render(report))
    if not report["ok"]:
        raise SystemExit(1)


