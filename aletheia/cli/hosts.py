"""Commands that connect aletheia to host tools: install, uninstall, import, watch, rules sync."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

import click

from aletheia.cli.base import cli, emit_json, json_option
from aletheia.vocab import HOSTS


def _project_option(f: click.decorators.FC) -> click.decorators.FC:
    return click.option(
        "--project", "project", is_flag=False, flag_value=".", default=None, metavar="[DIR]",
        type=click.Path(file_okay=False, path_type=Path),
        help="Write the project-level config of DIR (default: the current directory) "
             "instead of the user-level one.",
    )(f)


def _outcome_dict(outcome: Any) -> dict[str, Any]:
    return {"host": outcome.host, "action": outcome.action, "dry_run": outcome.dry_run,
            "changed": outcome.changed, "files": outcome.lines, "diff": outcome.diff,
            "notes": outcome.notes}


def _report(outcome: object, as_json: bool) -> None:
    from aletheia.install import Outcome

    assert isinstance(outcome, Outcome)
    if as_json:
        emit_json(_outcome_dict(outcome))
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
@click.argument("host", type=click.Choice(HOSTS), required=False)
@_project_option
@click.option("--dry-run", is_flag=True, help="Show the diff and write nothing.")
@click.option("--no-mcp", is_flag=True, help="Install the hooks only, not the MCP server.")
@click.option("--refresh", is_flag=True,
              help="Re-install every host installed before (user level), e.g. after an upgrade.")
@click.option("--check", is_flag=True,
              help="Write nothing: say whether the HOST found on PATH (its version) fires what "
                   "aletheia relies on and whether its config holds aletheia's entries; "
                   "exit 1 if not.")
@json_option
def install(host: str | None, project: Path | None, dry_run: bool, no_mcp: bool, refresh: bool,
            check: bool, as_json: bool) -> None:
    """Install aletheia's hooks (and MCP server) into HOST's config; idempotent, backed up.
    Running it again after an upgrade points every entry it wrote at this install."""
    if check:
        if host is None:
            raise click.UsageError(f"--check needs a HOST: one of {', '.join(HOSTS)}")
        _check(host, project, as_json)
        return
    from aletheia.install import run

    if refresh:
        if host is not None or project is not None:
            raise click.UsageError("--refresh takes no HOST and no --project")
        from aletheia.install.health import installed_hosts

        found = installed_hosts()
        outcomes = [run(h, "install", dry_run=dry_run, mcp=mcp) for h, mcp in found.items()]
        if as_json:
            emit_json([_outcome_dict(o) for o in outcomes])
            return
        for o in outcomes:
            _report(o, False)
        if not found:
            click.echo("no host installed yet (aletheia install HOST)")
        return
    if host is None:
        raise click.UsageError(f"which host? one of: {', '.join(HOSTS)}")
    _report(run(host, "install", project=project, dry_run=dry_run, mcp=not no_mcp), as_json)


def _check(host: str, project: Path | None, as_json: bool) -> None:
    from aletheia.install.check import check

    report = check(host, project=project.resolve() if project is not None else None)
    if as_json:
        emit_json(report.to_dict())
    else:
        click.echo(f"{host}: {report.binary or 'not found'}"
                   + (f" (version {report.version})" if report.version else ""))
        for level, text in report.lines:
            click.echo(f"  {level:4} {text}")
    if not report.ok:
        raise SystemExit(1)


@cli.command()
@click.argument("host", type=click.Choice(HOSTS))
@_project_option
@click.option("--dry-run", is_flag=True, help="Show the diff and write nothing.")
@json_option
def uninstall(host: str, project: Path | None, dry_run: bool, as_json: bool) -> None:
    """Undo `aletheia install HOST`: restore the original bytes, or remove only our entries."""
    from aletheia.install import run

    _report(run(host, "uninstall", project=project, dry_run=dry_run), as_json)


# -- import -----------------------------------------------------------------------------------


def _summary(summary: object, as_json: bool) -> None:
    from aletheia.capture.ingest import Summary

    assert isinstance(summary, Summary)
    if as_json:
        emit_json(summary.to_dict())
    else:
        click.echo(summary.line())


@cli.group("import")
def import_group() -> None:
    """Bring memories in: claude-mem, Claude Code transcripts, Codex rollouts, bundles."""


@import_group.command("claude-mem")
@click.argument("path", required=False, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--project", "-p", default=None,
              help="Put everything in this project (default: claude-mem's own project names).")
@json_option
def import_claude_mem(path: Path | None, project: str | None, as_json: bool) -> None:
    """Import a claude-mem database (default ~/.claude-mem/claude-mem.db)."""
    from aletheia.cli.base import store
    from aletheia.importers import claude_mem

    source = path or claude_mem.default_path()
    total = claude_mem.count_rows(source)
    with store() as conn, click.progressbar(length=total, label="claude-mem", file=sys.stderr,
                                            show_pos=True) as bar:
        summary = claude_mem.import_db(conn, source, project=project, progress=bar.update)
    _summary(summary, as_json)


def _import_transcripts(host: str, roots: tuple[Path, ...], as_json: bool) -> None:
    from aletheia.cli.base import store
    from aletheia.importers import transcripts

    if host == "claude-code":
        found = [f for r in (roots or (transcripts.default_claude_root(),))
                 for f in (transcripts.claude_files(r) if r.is_dir() else [r])]
    else:
        found = [f for r in (roots or (transcripts.default_codex_root(),))
                 for f in (transcripts.codex_files(r) if r.is_dir() else [r])]
    with store() as conn, click.progressbar(length=len(found), label=host, file=sys.stderr,
                                            show_pos=True) as bar:
        summary = transcripts.import_files(conn, found, host, progress=bar.update)
    _summary(summary, as_json)


@import_group.command("transcripts")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@json_option
def import_transcripts(paths: tuple[Path, ...], as_json: bool) -> None:
    """Import Claude Code transcripts (default ~/.claude/projects/*/*.jsonl)."""
    _import_transcripts("claude-code", paths, as_json)


@import_group.command("codex")
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@json_option
def import_codex(paths: tuple[Path, ...], as_json: bool) -> None:
    """Import Codex rollouts (default ~/.codex/sessions/**/*.jsonl)."""
    _import_transcripts("codex", paths, as_json)


@import_group.command("bundle")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--enable-rules", is_flag=True,
              help="Enable the bundle's rules (by default they arrive disabled).")
@json_option
def import_bundle(path: Path, enable_rules: bool, as_json: bool) -> None:
    """Import an aletheia bundle (JSON Lines from `aletheia export`); idempotent by id.

    Rules in the bundle are standing instructions to later sessions: they are added disabled
    and listed, unless --enable-rules."""
    from aletheia import bundles
    from aletheia.cli.base import store

    with store() as conn:
        report = bundles.import_file(conn, path, enable_rules=enable_rules)
    if as_json:
        emit_json(report.to_dict())
        return
    added = ", ".join(f"{n} {k}" for k, n in report.added.items())
    skipped = sum(report.skipped.values())
    click.echo(f"bundle: added {added}; {skipped} already present")
    for rule in report.rules:
        state = "enabled" if rule["enabled"] else "disabled (aletheia rules enable ID)"
        click.echo(f"  rule {rule['id']} {state}: {rule['text'][:100]}")


# -- watch ------------------------------------------------------------------------------------


@cli.command()
@click.option("--once", is_flag=True, help="One pass, then exit.")
@click.option("--interval", default=2.0, show_default=True, help="Seconds between passes.")
@click.option("--settle", default=30.0, show_default=True,
              help="Seconds a file must be quiet before its last answer is taken as final.")
@click.option("--claude-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@click.option("--codex-dir", type=click.Path(file_okay=False, path_type=Path), default=None)
@json_option
def watch(once: bool, interval: float, settle: float, claude_dir: Path | None,
          codex_dir: Path | None, as_json: bool) -> None:
    """Follow Claude Code and Codex transcript folders; capture what the hooks missed."""
    from aletheia.cli.base import store
    from aletheia.importers.transcripts import default_claude_root, default_codex_root
    from aletheia.watch import Watcher

    watcher = Watcher([("claude-code", claude_dir or default_claude_root()),
                       ("codex", codex_dir or default_codex_root())], settle_s=settle)
    with store() as conn:
        if once:
            _summary(watcher.poll(conn), as_json)
            return
        click.echo("watching " + ", ".join(str(r) for _, r in watcher.roots) + " (Ctrl-C stops)",
                   err=True)

        def report(s: object) -> None:
            from aletheia.capture.ingest import Summary

            if isinstance(s, Summary) and (s.inserted or s.sessions_queued):
                _summary(s, as_json)

        with contextlib.suppress(KeyboardInterrupt):
            watcher.run(conn, interval_s=interval, on_pass=report)


# -- rules sync -------------------------------------------------------------------------------


@click.command("sync")
@click.argument("hosts", nargs=-1, type=click.Choice(HOSTS))
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              default=Path("."), show_default=True, help="The project directory.")
@click.option("--dry-run", is_flag=True, help="Show the diff and write nothing.")
@json_option
def rules_sync(hosts: tuple[str, ...], directory: Path, dry_run: bool, as_json: bool) -> None:
    """Write the enabled rules into each host's instruction file (CLAUDE.md, AGENTS.md,
    GEMINI.md, Cursor rules) inside a block aletheia owns; default: claude-code codex gemini."""
    from aletheia import rules_sync as sync_mod
    from aletheia.cli.base import store
    from aletheia.project import resolve_project

    project = resolve_project(str(directory.resolve()))
    results = []
    with store() as conn:
        for host in hosts or ("claude-code", "codex", "gemini"):
            results.append(sync_mod.sync(conn, host, directory.resolve(), project,
                                         dry_run=dry_run))
    if as_json:
        emit_json([{"host": r.host, "path": str(r.path), "rules": r.rules, "changed": r.changed,
                    "diff": r.diff} for r in results])
        return
    for r in results:
        if dry_run and r.diff:
            click.echo(r.diff, nl=False)
        state = "unchanged" if not r.changed else ("would change" if dry_run else "written")
        click.echo(f"{r.host}: {r.path} {state} ({r.rules} rule(s))")


def attach_rules_sync() -> None:
    """Hang ``sync`` under the ``rules`` group when one exists, else offer ``rules-sync``."""
    import importlib

    importlib.import_module("aletheia.cli.manage")  # defines the `rules` group
    group = cli.commands.get("rules")
    if isinstance(group, click.Group):
        group.add_command(rules_sync, "sync")
    else:
        cli.add_command(rules_sync, "rules-sync")
