"""Windsurf (not runnable here: written against the Cascade Hooks documentation,
docs.windsurf.com/windsurf/cascade/hooks, and the Cascade MCP documentation).

Hooks go in ``~/.codeium/windsurf/hooks.json`` (``--project``: ``<dir>/.windsurf/hooks.json``)
as flat ``{"command": …, "show_output": false}`` items under snake_case action names; the MCP
server in ``~/.codeium/windsurf/mcp_config.json`` (Windsurf has no project-level MCP file).
Cascade has no session-start hook, so Windsurf gets no context block at start (use
``aletheia rules sync`` or the MCP tools instead).
"""

from __future__ import annotations

from pathlib import Path

from aletheia.install import base

NAME = "windsurf"
WRITTEN_AGAINST = "Windsurf Cascade Hooks docs (2026); Windsurf not run here"

EVENTS: list[tuple[str, str]] = [
    ("pre_user_prompt", "pre_user_prompt"),
    ("post_run_command", "post_run_command"),
    ("post_write_code", "post_write_code"),
    ("post_mcp_tool_use", "post_mcp_tool_use"),
    ("post_cascade_response", "post_cascade_response"),
]


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    user_root = home / ".codeium" / "windsurf"
    hooks_file = (project / ".windsurf" if project is not None else user_root) / "hooks.json"
    mcp_file = user_root / "mcp_config.json"
    p = base.Plan(NAME, action)
    if action == "install":
        p.edits.append(base.json_edit(
            hooks_file, lambda d: base.add_flat_hooks(d, NAME, EVENTS, extra={"show_output": False}),
            what="hooks"))
        if mcp and project is None:
            p.edits.append(base.json_edit(
                mcp_file, lambda d: base.set_mcp(d, base.mcp_server()), what="MCP server"))
        elif mcp:
            p.notes.append("Windsurf has no project-level MCP config: run `aletheia install "
                           "windsurf` (user level) to register the MCP server.")
        p.notes.append(f"Written against {WRITTEN_AGAINST}. Cascade has no session-start hook: "
                       "no context block is injected (the MCP tools and rules sync still work).")
    else:
        p.edits.append(base.json_edit(
            hooks_file, lambda d: base.remove_flat_hooks(d, NAME), what="hooks",
            delete_if_empty=True))
        if project is None:
            p.edits.append(base.json_edit(mcp_file, base.remove_mcp, what="MCP server"))
    return p
