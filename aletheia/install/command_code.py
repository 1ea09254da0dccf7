"""Command Code (not runnable here: needs Node 22 and an account; written against
``command-code`` 1.64.0 as described in notes/hosts.md: Claude Code's hook format in
``~/.commandcode/settings.json`` or the auto-trusted ``<dir>/.commandcode/settings.json``).

Its shell hooks cover only SessionStart, PreToolUse, PostToolUse and Stop, so prompts are not
captured by hooks (``aletheia watch`` can't read its sessions either); and in print mode its
SessionStart hook does not fire.
"""

from __future__ import annotations

from pathlib import Path

from aletheia.install import base

NAME = "command-code"
WRITTEN_AGAINST = "command-code 1.64.0 (from its documentation; not run here)"

EVENTS: list[tuple[str, str | None, str]] = [
    ("SessionStart", None, "SessionStart"),
    ("PostToolUse", "*", "PostToolUse"),
    ("Stop", None, "Stop"),
]


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    path = (project if project is not None else home) / ".commandcode" / "settings.json"
    p = base.Plan(NAME, action)
    if action == "install":
        p.edits.append(base.json_edit(
            path, lambda d: base.add_group_hooks(d, NAME, EVENTS), what="hooks"))
        if mcp:
            p.notes.append("Command Code: no documented MCP config file to write; add the server "
                           f"by hand if you want it: {base.python()} -m aletheia mcp")
        p.notes.append(f"Written against {WRITTEN_AGAINST}. Its hooks have no prompt event, and "
                       "SessionStart does not fire in print mode.")
    else:
        p.edits.append(base.json_edit(
            path, lambda d: base.remove_group_hooks(d, NAME), what="hooks"))
    return p
