"""Commands that curate and administer: pin, unpin, dismiss, promote, edit, erase, rules,
settings, receipts, sessions and export (``import bundle`` lives with the other importers).

Each one parses, calls the same service function as REST, MCP and the dashboard, and prints.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import click

from aletheia import ids
from aletheia.cli.base import cli, count, current_project, emit_json, json_option, store
from aletheia.errors import InvalidInput


def _line(item: Mapping[str, Any]) -> str:
    if item.get("type") == "fact":
        return f"{item['id']}  [fact:{item['status']}:{item['scope']}]  {item['text'][:100]}"
    flags = [item["scope"]]
    if item.get("pinned"):
        flags.append("pinned")
    if item.get("dismissed_at"):
        flags.append("dismissed")
    return f"{item['id']}  [{item['kind']}:{','.join(flags)}]  {item['title'][:100]}"


def _each(memory_ids: tuple[str, ...], as_json: bool, fn: Any) -> None:
    out = []
    with store() as conn:
        for memory_id in memory_ids:
            out.append(fn(conn, memory_id))
    if as_json:
        emit_json(out)
    else:
        for item in out:
            click.echo(_line(item))


# -- curation ----------------------------------------------------------------------------------

@cli.command()
@click.argument("memory_ids", nargs=-1, required=True)
@json_option
def pin(memory_ids: tuple[str, ...], as_json: bool) -> None:
    """Pin memories: they lead every context block of their project."""
    from aletheia import curate

    _each(memory_ids, as_json, curate.pin)


@cli.command()
@click.argument("memory_ids", nargs=-1, required=True)
@json_option
def unpin(memory_ids: tuple[str, ...], as_json: bool) -> None:
    """Unpin memories."""
    from aletheia import curate

    _each(memory_ids, as_json, curate.unpin)


@cli.command()
@click.argument("item_ids", nargs=-1, required=True)
@click.option("--undo", is_flag=True, help="Bring them back.")
@json_option
def dismiss(item_ids: tuple[str, ...], undo: bool, as_json: bool) -> None:
    """Hide memories or facts from search, timelines and context (kept; --undo restores)."""
    from aletheia import curate

    _each(item_ids, as_json, lambda conn, i: curate.dismiss(conn, i, undo=undo))


@cli.command()
@click.argument("item_ids", nargs=-1, required=True)
@click.option("--undo", is_flag=True, help="Back to project scope.")
@json_option
def promote(item_ids: tuple[str, ...], undo: bool, as_json: bool) -> None:
    """Give memories or facts global scope: every project's search and context sees them."""
    from aletheia import curate

    scope = "project" if undo else "global"
    _each(item_ids, as_json, lambda conn, i: curate.promote(conn, i, scope=scope))


@cli.command()
@click.argument("memory_id")
@click.option("--title", default=None)
@click.option("--subtitle", default=None)
@click.option("--narrative", default=None, help="New body; '-' reads it from stdin.")
@click.option("--kind", default=None)
@json_option
def edit(memory_id: str, title: str | None, subtitle: str | None, narrative: str | None,
         kind: str | None, as_json: bool) -> None:
    """Edit a memory (the new text is redacted like a new memory)."""
    from aletheia import curate

    if narrative == "-":
        narrative = sys.stdin.read()
    changes = {k: v for k, v in (("title", title), ("subtitle", subtitle),
                                 ("narrative", narrative), ("kind", kind)) if v is not None}
    with store() as conn:
        out = curate.edit(conn, memory_id, changes)
    if as_json:
        emit_json(out)
    else:
        click.echo(f"edited {_line(out)}")


@cli.command()
@click.argument("item_ids", nargs=-1)
@click.option("--session", "session_id", default=None, help="Erase a whole session.")
@click.option("--project", "-p", default=None, help="Erase a whole project.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@json_option
def erase(item_ids: tuple[str, ...], session_id: str | None, project: str | None, yes: bool,
          as_json: bool) -> None:
    """Delete memories or facts for good (with their index entries and derived facts) and
    print a signed receipt.  Unlike dismiss, this cannot be undone."""
    from aletheia import erase as erase_mod

    what = (f"{len(item_ids)} item(s)" if item_ids else
            f"session {session_id}" if session_id else f"every memory of project {project}")
    if item_ids or session_id:
        # Say what is wrong with the selection before asking to confirm it.
        with store() as conn:
            erase_mod.check_selection(conn, ids_=list(item_ids), session_id=session_id)
    if not yes:
        if not sys.stdin.isatty():
            raise InvalidInput("erase cannot be undone: pass --yes to confirm")
        click.confirm(f"Erase {what} for good?", abort=True)
    with store() as conn:
        receipt = erase_mod.erase(conn, ids_=list(item_ids) or None, session_id=session_id,
                                  project=project)
    if as_json:
        emit_json(receipt)
        return
    counts = receipt["body"]["counts"]
    click.echo(f"erased {counts['memories']} memories, {counts['facts']} facts, "
               f"{counts['sessions']} sessions; receipt {receipt['id']} "
               f"(check it with: aletheia receipts verify {receipt['id']})")


# -- rules -------------------------------------------------------------------------------------

@cli.group()
def rules() -> None:
    """Standing instructions for the agent (global or per project, limited to hosts)."""


def _rule_line(r: dict[str, Any]) -> str:
    where = r["project"] or "global"
    hosts = ",".join(r["tools"]) or "all hosts"
    state = "on " if r["enabled"] else "off"
    return f"{r['id']}  {state}  [{where}; {hosts}]  {r['text']}"


@rules.command("add")
@click.argument("text", nargs=-1, required=True)
@click.option("--project", "-p", default=None, help="Project key (default: the current one).")
@click.option("--global", "is_global", is_flag=True, help="A rule for every project.")
@click.option("--host", "hosts", multiple=True, help="Only for this host (repeatable).")
@click.option("--disabled", is_flag=True)
@json_option
def rules_add(text: tuple[str, ...], project: str | None, is_global: bool, hosts: tuple[str, ...],
              disabled: bool, as_json: bool) -> None:
    """Add a rule."""
    from aletheia import rules as rules_mod

    with store() as conn:
        out = rules_mod.add_rule(conn, " ".join(text), tools=list(hosts), enabled=not disabled,
                                 project=None if is_global else current_project(project))
    if as_json:
        emit_json(out)
    else:
        click.echo(f"added {_rule_line(out)}")


@rules.command("list")
@click.option("--project", "-p", default=None, help="Project key (default: the current one).")
@click.option("--all", "every", is_flag=True, help="Every project's rules.")
@json_option
def rules_list(project: str | None, every: bool, as_json: bool) -> None:
    """List rules (this project's and the global ones)."""
    from aletheia import rules as rules_mod

    with store() as conn:
        out = rules_mod.list_rules(conn, project=None if every else current_project(project))
    if as_json:
        emit_json(out)
        return
    for r in out:
        click.echo(_rule_line(r))
    if not out:
        click.echo("no rules")


def _rule_update(rule_id: str, as_json: bool, **changes: Any) -> None:
    from aletheia import rules as rules_mod

    with store() as conn:
        out = rules_mod.update_rule(conn, rule_id, **changes)
    if as_json:
        emit_json(out)
    else:
        click.echo(_rule_line(out))


@rules.command("enable")
@click.argument("rule_id")
@json_option
def rules_enable(rule_id: str, as_json: bool) -> None:
    """Enable a rule."""
    _rule_update(rule_id, as_json, enabled=True)


@rules.command("disable")
@click.argument("rule_id")
@json_option
def rules_disable(rule_id: str, as_json: bool) -> None:
    """Disable a rule (kept)."""
    _rule_update(rule_id, as_json, enabled=False)


@rules.command("hosts")
@click.argument("rule_id")
@click.argument("hosts", nargs=-1)
@json_option
def rules_hosts(rule_id: str, hosts: tuple[str, ...], as_json: bool) -> None:
    """Limit a rule to HOSTS (none: every host)."""
    _rule_update(rule_id, as_json, tools=list(hosts))


@rules.command("remove")
@click.argument("rule_id")
@json_option
def rules_remove(rule_id: str, as_json: bool) -> None:
    """Delete a rule."""
    from aletheia import rules as rules_mod

    with store() as conn:
        rules_mod.delete_rule(conn, rule_id)
    if as_json:
        emit_json({"removed": rule_id})
    else:
        click.echo(f"removed {rule_id}")


# -- settings ----------------------------------------------------------------------------------

@cli.group("settings")
def settings_group() -> None:
    """Stored settings (each one read by the code it names)."""


@settings_group.command("list")
@json_option
def settings_list(as_json: bool) -> None:
    """Every setting, its value and what it does."""
    from aletheia import settings

    with store() as conn:
        values = settings.all_settings(conn)
    if as_json:
        emit_json(values)
        return
    for key, spec in settings.SETTINGS.items():
        mark = "" if values[key] == spec.default else "  (changed)"
        click.echo(f"{key} = {json.dumps(values[key])}{mark}\n    {spec.help}")


@settings_group.command("get")
@click.argument("key")
def settings_get(key: str) -> None:
    """Print one setting's value (JSON)."""
    from aletheia import settings

    with store() as conn:
        click.echo(json.dumps(settings.get(conn, key)))


def parse_value(key: str, raw: str) -> Any:
    """VALUE as JSON (``10``, ``true``, ``["a"]``); a list setting also takes ``a,b``."""
    from aletheia import settings

    spec = settings.SETTINGS.get(key)
    if spec is None:
        raise InvalidInput(f"unknown setting: {key}")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    if spec.kind is list and isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if spec.kind is str and not isinstance(value, str):
        value = raw
    return value


@settings_group.command("set", context_settings={"ignore_unknown_options": True})
@click.argument("key")
@click.argument("value")
@json_option
def settings_set(key: str, value: str, as_json: bool) -> None:
    """Change a setting (VALUE as JSON, e.g. 10, true, ["a"]; a list also takes a,b)."""
    from aletheia import settings
    from aletheia.db import tx

    parsed = parse_value(key, value)
    with store() as conn, tx(conn):
        stored = settings.put(conn, key, parsed)
    if as_json:
        emit_json({"key": key, "value": stored})
    else:
        click.echo(f"{key} = {json.dumps(stored)}")


# -- receipts ----------------------------------------------------------------------------------

@cli.group("receipts")
def receipts_group() -> None:
    """Signed receipts of erasures."""


@receipts_group.command("list")
@click.option("--limit", "-n", default=50, show_default=True, type=count(1, 500))
@json_option
def receipts_list(limit: int, as_json: bool) -> None:
    """Receipts, newest first."""
    from aletheia import receipts

    with store() as conn:
        page = receipts.list_receipts(conn, limit=limit)
    if as_json:
        emit_json(page.items)
        return
    for r in page.items:
        counts = ", ".join(f"{n} {k}" for k, n in r["counts"].items() if n)
        click.echo(f"{r['id']}  {r['created']}  {json.dumps(r['selector'])[:80]}  {counts}")
    if not page.items:
        click.echo("no receipts")


@receipts_group.command("show")
@click.argument("receipt_id")
def receipts_show(receipt_id: str) -> None:
    """Print a receipt as JSON (keep it: `receipts verify FILE` checks it)."""
    from aletheia import receipts

    with store() as conn:
        emit_json(receipts.get_receipt(conn, receipt_id))


@receipts_group.command("verify")
@click.argument("what")
@json_option
def receipts_verify(what: str, as_json: bool) -> None:
    """Check a receipt (an id, a JSON file, or - for stdin): its signature, and that what it
    erased is still gone.  Exits 1 when it does not verify."""
    from aletheia import receipts

    with store() as conn:
        if what == "-":
            receipt = _load_receipt(sys.stdin.read(), "stdin")
        elif Path(what).is_file():
            receipt = _load_receipt(Path(what).read_text(encoding="utf-8"), what)
        else:
            receipt = receipts.get_receipt(conn, what)
        verdict = receipts.verify(receipt, conn=conn)
    if as_json:
        emit_json(verdict)
    elif verdict["valid"]:
        click.echo(f"receipt {receipt.get('id')}: valid (signature ok, erased items still gone)")
    else:
        click.echo(f"receipt {receipt.get('id')}: NOT valid\n  " + "\n  ".join(verdict["problems"]))
    if not verdict["valid"]:
        raise SystemExit(1)


def _load_receipt(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        raise InvalidInput(f"{where}: not JSON") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"{where}: a receipt is a JSON object")
    return value


# -- sessions and export -----------------------------------------------------------------------

@cli.command("sessions")
@click.option("--project", "-p", default=None, help="Project key (default: every project).")
@click.option("--limit", "-n", default=20, show_default=True, type=count(1, 500))
@json_option
def sessions_command(project: str | None, limit: int, as_json: bool) -> None:
    """Recent sessions: host, when, what was asked first, whether it was compressed."""
    from aletheia import sessions

    with store() as conn:
        page = sessions.list_sessions(conn, project=project, limit=limit)
    if as_json:
        emit_json(page.items)
        return
    for s in page.items:
        first = " ".join((s["first_request"] or "").split())[:70]
        click.echo(f"{s['id'][:36]:36}  {s['started']}  {s['tool'] or '-':12}  "
                   f"{s['event_count']:4} ev  {s['job_state'] or '-':10}  {first}")
    if not page.items:
        click.echo("no sessions")


@cli.command("export")
@click.option("--project", "-p", default=None, help="Project key (default: the current one).")
@click.option("--all", "every", is_flag=True, help="Every project (and the global rules).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (0600); default: stdout.")
def export_command(project: str | None, every: bool, output: Path | None) -> None:
    """Export a bundle (JSON Lines) that `aletheia import bundle` reads on another machine."""
    from aletheia import bundles

    chosen = None if every else current_project(project)
    with store() as conn:
        if output is None:
            for line in bundles.export_lines(conn, chosen):
                sys.stdout.write(line)
            return
        counts = bundles.export_to_file(conn, output, chosen)
    click.echo(f"exported {', '.join(f'{n} {k}' for k, n in counts.items())} to {output} "
               f"at {ids.iso(ids.now_ms())}", err=True)
