"""``aletheia spool``: what waits in the hook spool, what is quarantined, and what to do with it."""

from __future__ import annotations

import click

from aletheia import ids, spool, spool_quarantine, spool_reserve
from aletheia.cli.base import cli, emit_json, json_option, store
from aletheia.errors import InvalidInput


@cli.group("spool", invoke_without_command=True)
@click.pass_context
def spool_group(ctx: click.Context) -> None:
    """The hook spool: items hooks could not write yet, and the lines a replay quarantined."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(list_command)


@spool_group.command("list")
@click.option("--lines", "show_lines", is_flag=True, help="Print each quarantined line too.")
@json_option
def list_command(show_lines: bool, as_json: bool) -> None:
    """What waits, what is quarantined (with why), and what was lost."""
    entries = spool_quarantine.entries()
    waiting = {"lines": spool.pending_lines(), "bytes": spool.pending_size()}
    lost = spool_reserve.losses()
    report: dict[str, object] = {
        "waiting": waiting,
        "quarantined": [e.to_dict(with_line=show_lines) for e in entries],
        "lost": lost,
        "reserve_ready": spool_reserve.reserve_ready(),
    }
    if as_json:
        emit_json(report)
        return
    click.echo(f"waiting: {waiting['lines']} line(s), {waiting['bytes']} bytes "
               "(the next writer replays them)")
    click.echo(f"quarantined: {len(entries)}")
    for e in entries:
        click.echo(f"  {e.id}  {ids.iso(e.at)}  {len(e.line)} bytes  tries {e.tries}  {e.reason}")
        if show_lines:
            click.echo(f"    {e.line.decode('utf-8', 'replace')[:2000]}")
    if lost["items"]:
        click.echo(f"lost: {lost['items']} item(s), {lost['bytes']} bytes, {lost['last_reason']} "
                   f"({ids.iso(lost['first_at'])} … {ids.iso(lost['last_at'])})")
    else:
        click.echo("lost: nothing")


def _chosen(line_ids: tuple[str, ...], everything: bool) -> list[str] | None:
    if everything and line_ids:
        raise InvalidInput("give ids or --all, not both")
    if not everything and not line_ids:
        raise InvalidInput("give the ids of quarantined lines (`aletheia spool list`) or --all")
    return None if everything else list(line_ids)


@spool_group.command("retry")
@click.argument("line_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every quarantined line.")
@json_option
def retry_command(line_ids: tuple[str, ...], everything: bool, as_json: bool) -> None:
    """Replay quarantined lines: what goes through leaves the quarantine."""
    chosen = _chosen(line_ids, everything)
    with store() as conn:
        result = spool.retry(conn, chosen)
    out = result.to_dict()
    if as_json:
        emit_json(out)
        return
    written = result.inserted + result.duplicates + result.stops
    click.echo(f"retried {result.items}: {written} written ({result.duplicates} already stored), "
               f"{result.excluded} excluded, {result.quarantined} quarantined again")


@spool_group.command("drop")
@click.argument("line_ids", nargs=-1)
@click.option("--all", "everything", is_flag=True, help="Every quarantined line.")
@click.option("--lost", "lost", is_flag=True,
              help="Clear the record of items lost on a full disk (once you have seen it).")
@json_option
def drop_command(line_ids: tuple[str, ...], everything: bool, lost: bool, as_json: bool) -> None:
    """Delete quarantined lines for good (or, with --lost, the notice of lost items)."""
    out: dict[str, object] = {}
    if lost:
        out["lost_cleared"] = spool_reserve.clear_losses()["items"]
    if line_ids or everything or not lost:
        taken = spool_quarantine.take(_chosen(line_ids, everything))
        out["dropped"] = [e.id for e in taken]
    if as_json:
        emit_json(out)
        return
    if "dropped" in out:
        click.echo(f"dropped {len(out['dropped'])} quarantined line(s)")  # type: ignore[arg-type]
    if lost:
        click.echo(f"cleared the notice of {out['lost_cleared']} lost item(s)")
