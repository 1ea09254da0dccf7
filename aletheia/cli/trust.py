"""``aletheia trust``: let a ``.aletheia-project`` file name this directory's project.

The file is inert until trusted (see ``aletheia/trust.py``); trusting one whose name already
holds memories would make two directories share a project, so that needs ``--yes``.
"""

from __future__ import annotations

import os

import click

from aletheia.cli.base import cli, emit_json, json_option, store


@cli.command("trust")
@click.argument("directory", required=False, type=click.Path(file_okay=False, exists=True))
@click.option("--yes", is_flag=True, help="Trust even when the name already holds memories.")
@click.option("--revoke", is_flag=True, help="Withdraw trust from the file.")
@click.option("--list", "list_", is_flag=True, help="List the trusted files.")
@json_option
def trust_cmd(directory: str | None, yes: bool, revoke: bool, list_: bool, as_json: bool) -> None:
    """Trust the nearest .aletheia-project file (at or above DIRECTORY, default: here).

    Until trusted, the file is ignored and the directory keeps its own project (its git
    repository or itself). Editing the file withdraws trust."""
    from aletheia import memories, trust
    from aletheia.project import find_project_file

    if list_:
        entries = trust.load()
        if as_json:
            emit_json([{"file": f, "project": n, "current": _current(f) == n}
                       for f, n in entries.items()])
            return
        if not entries:
            click.echo("no trusted .aletheia-project files")
        for f, n in entries.items():
            mark = "" if _current(f) == n else "  (changed since: not in effect)"
            click.echo(f"{n}\t{f}{mark}")
        return
    found = find_project_file(directory or os.getcwd())
    if found is None:
        raise click.ClickException(f"no .aletheia-project file at or above {directory or '.'}")
    path, name = found
    if revoke:
        done = trust.revoke(path)
        click.echo(f"{'revoked' if done else 'was not trusted'}: {path}")
        return
    with store() as conn:
        held = memories.count_in_project(conn, name)
    if held and not yes and trust.load().get(path) != name:
        raise click.ClickException(
            f"{path} names project {name!r}, which already holds {held} memories from elsewhere; "
            "trusting it makes this directory share them. Re-run with --yes to do that")
    trust.grant(path, name)
    if as_json:
        emit_json({"file": path, "project": name, "memories": held})
    else:
        click.echo(f"trusted: {path} -> project {name!r}")


def _current(path: str) -> str | None:
    from aletheia.project import find_project_file

    found = find_project_file(os.path.dirname(path))
    return found[1] if found and found[0] == path else None
