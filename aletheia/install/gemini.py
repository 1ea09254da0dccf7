"""Gemini CLI (written against and run with ``@google/gemini-cli`` 0.61.0).

Hooks and the MCP server both go in ``~/.gemini/settings.json`` (``--project``:
``<dir>/.gemini/settings.json``; Gemini fingerprints project hooks and asks before it trusts
them).  Gemini's own event names: BeforeAgent carries the prompt, AfterAgent the answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aletheia.install import base

NAME = "gemini"
WRITTEN_AGAINST = "Gemini CLI 0.61.0 (driven end to end in tests/e2e/hosts)"

EVENTS: list[tuple[str, str | None, str]] = [
    ("SessionStart", None, "SessionStart"),
    ("BeforeAgent", None, "BeforeAgent"),
    ("AfterTool", ".*", "AfterTool"),
    ("AfterAgent", None, "AfterAgent"),
    ("SessionEnd", None, "SessionEnd"),
]


def _name(event: str) -> dict[str, Any]:
    return {"name": f"aletheia-{event}"}


def settings_file(home: Path, project: Path | None) -> Path:
    return (project if project is not None else home) / ".gemini" / "settings.json"


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    path = settings_file(home, project)
    p = base.Plan(NAME, action)
    if action == "install":
        def mutate(d: dict[str, Any]) -> None:
            base.add_group_hooks(d, NAME, EVENTS, extra=_name)
            if mcp:
                base.set_mcp(d, base.mcp_server())

        p.edits.append(base.json_edit(path, mutate, what="hooks" + (", MCP server" if mcp else "")))
        if project is not None:
            p.notes.append("Gemini CLI asks you to trust a project's hooks the first time it sees "
                           "them (and again when they change).")
    else:
        def undo(d: dict[str, Any]) -> None:
            base.remove_group_hooks(d, NAME)
            base.remove_mcp(d)

        p.edits.append(base.json_edit(path, undo, what="hooks, MCP server"))
    return p
