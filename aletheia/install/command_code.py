"""Command Code (written against and run with ``command-code`` 1.64.0 on Node 22, see
tests/e2e/hosts).

Command Code's shell hooks (``settings.json``) know only PreToolUse, PostToolUse, Stop and
SessionStart: no prompt event, SessionStart does not fire in print mode (``cmd -p``), and a
project's ``settings.json`` is read only in the directory ``cmd`` starts in.  Its mods see every
turn and tool in every mode, and a project's mods load from the repository root; so we install:

- a mod, ``~/.commandcode/mods/aletheia.ts`` (from ``assets/command-code-mod.ts``): prompts,
  tool calls, the last answer and the stop go to the stdlib hook, and the context block goes
  into the system prompt (``appendSystemPrompt``), in the TUI and in ``-p`` alike;
- the MCP server in ``~/.commandcode/mcp.json`` (``mcpServers``, user scope).

``--project DIR`` writes ``DIR/.commandcode/mods/aletheia.ts`` and ``DIR/.mcp.json`` (the project
scope, shared with Claude Code's project install): see ``PROJECT_NOTE`` for what Command Code
1.64.0 asks before it loads them.  An older install's shell hooks are taken out of
``settings.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

from aletheia.install import base

NAME = "command-code"
WRITTEN_AGAINST = "command-code 1.64.0 on Node 22 (driven end to end in tests/e2e/hosts)"
MOD_FILE = "command-code-mod.ts"

PROJECT_NOTE = (
    "Command Code 1.64.0 loads a project's mods (here: everything aletheia captures and the "
    "context block) from the repository root, but only in a directory whose workspace you "
    "trusted (the TUI asks once per directory), and in `cmd -p` only with "
    "--dangerously-skip-permissions; it reads the project's .mcp.json only when `cmd` starts in "
    "{dir} itself (it does not look in parent directories). The user-level install (without "
    "--project) needs neither."
)


def mod_source() -> str:
    template = (Path(__file__).resolve().parent / "assets" / MOD_FILE).read_text("utf-8")
    return (template.replace("__PYTHON__", json.dumps(base.python()))
            .replace("__HOOK__", json.dumps(str(base.hook_script()))))


def files(home: Path, project: Path | None) -> tuple[Path, Path, Path]:
    """(settings, where older installs put shell hooks; the mod; the MCP config)."""
    root = (project if project is not None else home) / ".commandcode"
    mcp = project / ".mcp.json" if project is not None else root / "mcp.json"
    return root / "settings.json", root / "mods" / "aletheia.ts", mcp


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    settings, mod, mcp_file = files(home, project)
    p = base.Plan(NAME, action)
    server = {"type": "stdio", **base.mcp_server()}
    # An older install wired shell hooks (SessionStart, PostToolUse, Stop): the mod does it all.
    p.edits.append(base.json_edit(settings, lambda d: base.remove_group_hooks(d, NAME),
                                  what="old shell hooks"))
    if action == "install":
        p.edits.append(base.whole_file(mod, mod_source(), what="mod (capture, context block)"))
        if mcp:
            p.edits.append(base.json_edit(mcp_file, lambda d: base.set_mcp(d, server),
                                          what="MCP server"))
        p.notes.append(f"Written against {WRITTEN_AGAINST}.")
        if project is not None:
            p.notes.append(PROJECT_NOTE.format(dir=project))
    else:
        if mod.exists():
            p.edits.append(base.whole_file(mod, None, what="mod"))
        p.edits.append(base.json_edit(mcp_file, base.remove_mcp, what="MCP server"))
    return p
