"""Commands that put things in: hook (listed here; dispatched early), redact, save, capture."""

from __future__ import annotations

import json
import math
import sys
from datetime import UTC
from typing import Any

import click

from aletheia import bounds
from aletheia.cli.base import cli, current_project, emit_json, json_option, project_option, store
from aletheia.errors import InvalidInput
from aletheia.store import MemoryIn, write_memory


@cli.command(context_settings={"ignore_unknown_options": True})
@click.argument("tool")
@click.argument("event")
def hook(tool: str, event: str) -> None:
    """Capture a host event from stdin (what host configs run; always exits 0).

    TOOL is the host (claude-code, codex, gemini, command-code, opencode, cursor, windsurf);
    EVENT its event name (SessionStart, UserPromptSubmit, PostToolUse, Stop, SessionEnd …).
    The host's JSON payload comes on stdin.  The hook never fails its host: a bad payload is
    ignored, a locked store spools, and SessionStart prints the context block.  Installers
    write the faster direct form: PYTHON -I -S …/hooks/run.py TOOL EVENT.
    """
    from aletheia.hooks.run import main as hook_main

    hook_main([tool, event])


@cli.command()
@click.option("--jsonl", is_flag=True, help='Batch: {"id","text"} lines in, redacted lines out.')
def redact(jsonl: bool) -> None:
    """Redact secrets from stdin to stdout."""
    from aletheia.redact import redact as redact_text

    if not jsonl:
        sys.stdout.write(redact_text(sys.stdin.read()))
        return
    for number, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError:
            raise InvalidInput(f"line {number}: not valid JSON") from None
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise InvalidInput(f'line {number}: expected an object with a "text" string')
        item["text"] = redact_text(item["text"])
        sys.stdout.write(json.dumps(item, ensure_ascii=False) + "\n")


@cli.command()
@click.argument("text", nargs=-1, required=True)
@project_option
@click.option("--title", default=None, help="Title (default: the first line of TEXT).")
@click.option("--kind", default="note", show_default=True)
@click.option("--pin", is_flag=True, help="Pin it so it is always in the context block.")
@json_option
def save(text: tuple[str, ...], project: str | None, title: str | None, kind: str, pin: bool,
         as_json: bool) -> None:
    """Save a note in the current directory's project."""
    body = " ".join(text).strip()
    if not body:
        raise InvalidInput("nothing to save: TEXT is empty")
    item = MemoryIn(
        project=current_project(project), kind=kind, title=title or body.splitlines()[0],
        narrative=body, source="cli", pinned=pin,
    )
    with store() as conn:
        result = write_memory(conn, item)
    if as_json:
        emit_json({"id": result.id, "inserted": result.inserted})
    else:
        click.echo(f"{'saved' if result.inserted else 'already stored'} {result.id}")


def _parse_time(value: Any, number: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidInput(f"line {number}: created_at must be epoch ms or an ISO-8601 time")
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidInput(f"line {number}: created_at must be a finite number")
        # Accept seconds too: anything before 1e11 cannot be milliseconds of this era.
        ms = value * 1000 if value < 1e11 else value
        return bounds.timestamp_ms(int(ms), f"line {number}: created_at")
    if isinstance(value, str):
        from datetime import datetime

        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise InvalidInput(f"line {number}: created_at {value!r} is not an ISO-8601 time") from None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return bounds.timestamp_ms(int(dt.timestamp() * 1000), f"line {number}: created_at")
    raise InvalidInput(f"line {number}: created_at must be epoch ms or an ISO-8601 time")


BATCH = 2000


@cli.command()
@project_option
@click.option("--jsonl", is_flag=True, help="One memory per line (project, session_id, kind, title, narrative, created_at, …).")
@click.option("--kind", default="note", show_default=True, help="Kind for plain-text input.")
@click.option("--title", default=None)
@json_option
def capture(project: str | None, jsonl: bool, kind: str, title: str | None, as_json: bool) -> None:
    """Capture text from stdin as a memory (or many, with --jsonl)."""
    default_project = current_project(project)
    inserted = skipped = 0
    with store() as conn:
        if not jsonl:
            text = sys.stdin.read()
            if not text.strip():
                raise InvalidInput("nothing to capture: stdin is empty")
            result = write_memory(conn, MemoryIn(
                project=default_project, kind=kind, title=title or text.strip().splitlines()[0],
                narrative=text, source="cli",
            ))
            inserted, skipped = int(result.inserted), int(not result.inserted)
        else:
            # Validate everything first: a bad line stops the load before anything is written.
            items: list[MemoryIn] = []
            for number, line in enumerate(sys.stdin, 1):
                if not line.strip():
                    continue
                try:
                    data = json.loads(line)
                except (ValueError, RecursionError):
                    raise InvalidInput(f"line {number}: not valid JSON") from None
                if not isinstance(data, dict):
                    raise InvalidInput(f"line {number}: expected a JSON object")
                data.setdefault("project", default_project)
                data.setdefault("kind", kind)
                data.setdefault("source", "cli")
                data["created_at"] = _parse_time(data.get("created_at"), number)
                try:
                    items.append(MemoryIn.from_dict(data))
                except (TypeError, InvalidInput) as exc:
                    raise InvalidInput(f"line {number}: {exc}") from None
            if not items:
                raise InvalidInput("nothing to capture: no lines on stdin")
            from aletheia.store import insert_rows, prepare

            rows = []
            for number, item in enumerate(items, 1):
                try:
                    rows.append(prepare(item))
                except InvalidInput as exc:
                    raise InvalidInput(f"memory {number}: {exc.message}") from None
            for start in range(0, len(rows), BATCH):
                for r in insert_rows(conn, rows[start:start + BATCH]):
                    inserted += r.inserted
                    skipped += not r.inserted
    if as_json:
        emit_json({"inserted": inserted, "skipped": skipped})
    else:
        click.echo(f"captured {inserted} memories ({skipped} already stored)")


