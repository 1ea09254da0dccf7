"""Cursor (not runnable here: written against Cursor's hooks documentation, cursor.com/docs/hooks,
hooks.json ``"version": 1`` as shipped in Cursor 2.x, and its MCP docs).

Hooks go in ``~/.cursor/hooks.json`` (``--project``: ``<dir>/.cursor/hooks.json``), the MCP
server in ``~/.cursor/mcp.json`` (``--project``: ``<dir>/.cursor/mcp.json``).  Cursor's hook
entries are flat ``{"command": …}`` items under camelCase event names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aletheia.install import base

NAME = "cursor"
WRITTEN_AGAINST = "Cursor hooks docs (hooks.json version 1, Cursor 2.x); CLI not run here"

# (hooks.json key, the event name our adapter receives)
EVENTS: list[tuple[str, str]] = [
    ("sessionStart", "sessionStart"),
    ("beforeSubmitPrompt", "beforeSubmitPrompt"),
    ("postToolUse", "postToolUse"),
    ("postToolUseFailure", "postToolUseFailure"),
    ("afterAgentResponse", "afterAgentResponse"),
    ("stop", "stop"),
    ("sessionEnd", "sessionEnd"),
]


def _root(home: Path, project: Path | None) -> Path:
    return (project if project is not None else home) / ".cursor"


def _add(d: dict[str, Any]) -> None:
    d.setdefault("version", 1)
    base.add_flat_hooks(d, NAME, EVENTS)


def _remove(d: dict[str, Any]) -> None:
    base.remove_flat_hooks(d, NAME)
    if list(d) == ["version"]:
        d.clear()  # only the version key we may have added is left


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    root = _root(home, project)
    p = base.Plan(NAME, action)
    if action == "install":
        p.edits.append(base.json_edit(root / "hooks.json", _add, what="hooks"))
        if mcp:
            p.edits.append(base.json_edit(
                root / "mcp.json", lambda d: base.set_mcp(d, base.mcp_server()), what="MCP server"))
        p.notes.append(f"Written against {WRITTEN_AGAINST}.")
    else:
        p.edits.append(base.json_edit(root / "hooks.json", _remove, what="hooks",
                                      delete_if_empty=True))
        p.edits.append(base.json_edit(root / "mcp.json", base.remove_mcp, what="MCP server"))
    return p
