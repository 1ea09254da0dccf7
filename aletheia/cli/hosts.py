"""Commands that connect aletheia to host tools: install, uninstall, import, watch, rules sync."""

from __future__ import annotations

from pathlib import Path

import click

from aletheia.cli.base import cli, emit_json, json_option

HOST_NAMES = ("claude-code", "codex", "gemini", "cursor", "opencode", "windsurf", "command-code")


def _project_option(f: click.decorators.FC) -> click.decorators.FC:
    return click.option(
        "--project", "project", is_flag=False, flag_value=".", default=None, metavar="[DIR]",
        type=click.Path(file_okay=False, path_type=Path),
        help="Write the project-level config of DIR (default: the current directory) "
             "instead of the user-level one.",
    )(f)


def _report(outcome: object, as_json: bool) -> None:
    from aletheia.install import Outcome

    assert isinstance(outcome, Outcome)
    if as_json:
        emit_json({"host": outcome.host, "action": outcome.action, "dry_run": outcome.dry_run,
                   "changed": outcome.changed, "files": outcome.lines, "diff": outcome.diff,
                   "notes": outcome.notes})
        return
    if outcome.dry_run:
        if outcome.diff:
            click.echo(outcome.diff, nl=False)
        click.echo(f"dry run: {'these changes would be made' if outcome.changed else 'nothing to change'}"
                   " (nothing was written)")
    elif not outcome.changed:
        click.echo(f"{outcome.host}: already {outcome.action}ed, nothing to change")
    else:
        for line in outcome.lines:
            click.echo(line)
    if outcome.action == "install":
        for note in outcome.notes:
            click.echo(f"note: {note}")


@cli.command()
@click.argument("host", type=click.Choice(HOST_NAMES))
@_project_option
@click.option("--dry-run", is_flag=True, help="Show the diff and write nothing.")
@click.option("--no-mcp", is_flag=True, help="Install the hooks only, not the MCP server.")
@json_option
def install(host: str, project: Path | None, dry_run: bool, no_mcp: bool, as_json: bool) -> None:
    """Install aletheia's hooks (and MCP server) into HOST's config; idempotent, backed up."""
    from aletheia.install import run

    _report(run(host, "install", project=project, dry_run=dry_run, mcp=not no_mcp), as_json)


@cli.command()
@click.argument("host", type=click.Choice(HOST_NAMES))
@_project_option
@click.option("--dry-run", is_flag=True, help="Show the diff and write nothing.")
@json_option
def uninstall(host: str, project: Path | None, dry_run: bool, as_json: bool) -> None:
    """Undo `aletheia install HOST`: restore the original bytes, or remove only our entries."""
    from aletheia.install import run

    _report(run(host, "uninstall", project=project, dry_run=dry_run), as_json)
