"""Command Code (written against and run with ``command-code`` 1.64.0 on Node 22, see
tests/e2e/hosts).

Three pieces, each where Command Code's bundled docs say it looks:

- shell hooks in ``~/.commandcode/settings.json`` (Claude Code's format): PostToolUse (tool
  events; its answer may carry ``hookSpecificOutput.additionalContext``) and Stop (queue the
  session).  Its shell hooks know only PreToolUse, PostToolUse, Stop and SessionStart, and
  SessionStart does not fire in print mode (``cmd -p``);
- a mod, ``~/.commandcode/mods/aletheia.ts`` (from ``assets/command-code-mod.ts``): stores each
  prompt and adds the context block to the system prompt (``appendSystemPrompt``) in every
  mode, and hands the session's last answer to the Stop hook;
- the MCP server in ``~/.commandcode/mcp.json`` (``mcpServers``, user scope).

``--project DIR`` writes ``DIR/.commandcode/settings.json``, ``DIR/.commandcode/mods/`` and
``DIR/.mcp.json`` (the project scope, shared with Claude Code's project install).  Command Code
1.64.0 reads all three from the directory it is started in, not from the repository root, and
loads a project's mods only once the workspace is trusted (in ``-p`` only with
``--dangerously-skip-permissions``): see ``PROJECT_NOTE``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aletheia.install import base

NAME = "command-code"
WRITTEN_AGAINST = "command-code 1.64.0 on Node 22 (driven end to end in tests/e2e/hosts)"
MOD_FILE = "command-code-mod.ts"

# Omitting the matcher matches every tool (Command Code's docs).
EVENTS: list[tuple[str, str | None, str]] = [
    ("PostToolUse", None, "PostToolUse"),
    ("Stop", None, "Stop"),
]

PROJECT_NOTE = (
    "Command Code 1.64.0 reads a project's .commandcode/settings.json, .commandcode/mods/ and "
    ".mcp.json from the directory `cmd` starts in (its working directory; it does not look in "
    "parent directories or the repository root), so sessions started in a subdirectory of {dir} "
    "use none of them; and it loads a project's mods (prompts, the context block) only once "
    "the workspace is trusted, in `cmd -p` only with --dangerously-skip-permissions. The "
    "user-level install (without --project) works in every directory."
)


def mod_source() -> str:
    template = (Path(__file__).resolve().parent / "assets" / MOD_FILE).read_text("utf-8")
    return (template.replace("__PYTHON__", json.dumps(base.python()))
            .replace("__HOOK__", json.dumps(str(base.hook_script()))))


def files(home: Path, project: Path | None) -> tuple[Path, Path, Path]:
    """(settings with the shell hooks, the mod, the MCP config)."""
    root = (project if project is not None else home) / ".commandcode"
    mcp = project / ".mcp.json" if project is not None else root / "mcp.json"
    return root / "settings.json", root / "mods" / "aletheia.ts", mcp


def _hooks(doc: dict[str, Any]) -> None:
    # An older install also wired SessionStart (its plain-text answer was dropped by Command
    # Code): take our entries off events we no longer use, then add the current ones.
    wanted = {event for event, _, _ in EVENTS}
    current = doc.get("hooks")
    stale = {k: v for k, v in current.items() if k not in wanted} \
        if isinstance(current, dict) else {}
    if stale:
        probe: dict[str, Any] = {"hooks": stale}
        base.remove_group_hooks(probe, NAME)
        hooks = doc["hooks"]
        for key in stale:
            if key in probe.get("hooks", {}):
                hooks[key] = probe["hooks"][key]
            else:
                del hooks[key]
    base.add_group_hooks(doc, NAME, EVENTS)


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    settings, mod, mcp_file = files(home, project)
    p = base.Plan(NAME, action)
    server = {"type": "stdio", **base.mcp_server()}
    if action == "install":
        p.edits.append(base.json_edit(settings, _hooks, what="hooks"))
        p.edits.append(base.whole_file(mod, mod_source(), what="mod (prompts, context block)"))
        if mcp:
            p.edits.append(base.json_edit(mcp_file, lambda d: base.set_mcp(d, server),
                                          what="MCP server"))
        p.notes.append(f"Written against {WRITTEN_AGAINST}.")
        if project is not None:
            p.notes.append(PROJECT_NOTE.format(dir=project))
    else:
        p.edits.append(base.json_edit(settings, lambda d: base.remove_group_hooks(d, NAME),
                                      what="hooks"))
        if mod.exists():
            p.edits.append(base.whole_file(mod, None, what="mod"))
        p.edits.append(base.json_edit(mcp_file, base.remove_mcp, what="MCP server"))
    return p
