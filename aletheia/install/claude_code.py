"""Claude Code (written against and run with ``@anthropic-ai/claude-code`` 2.1.197).

Hooks go in ``~/.claude/settings.json`` (``--project``: ``<dir>/.claude/settings.local.json``,
the per-user project layer Claude keeps out of git, because the hook command holds this
machine's interpreter path); the MCP server in ``~/.claude.json`` (``--project``: ``.mcp.json``).
"""

from __future__ import annotations

from pathlib import Path

from aletheia.install import base

NAME = "claude-code"
WRITTEN_AGAINST = "Claude Code 2.1.197 (driven end to end in tests/e2e/hosts)"

# (settings key, matcher, event our adapter reads).  Tool events take a matcher.
EVENTS: list[tuple[str, str | None, str]] = [
    ("SessionStart", None, "SessionStart"),
    ("UserPromptSubmit", None, "UserPromptSubmit"),
    # Per-file recall: what is known about a file before the agent reads or edits it.
    ("PreToolUse", "Read|Edit|MultiEdit|Write|NotebookEdit", "PreToolUse"),
    ("PostToolUse", "*", "PostToolUse"),
    ("PostToolUseFailure", "*", "PostToolUseFailure"),
    ("Stop", None, "Stop"),
    ("StopFailure", None, "StopFailure"),
    ("SessionEnd", None, "SessionEnd"),
]


def files(home: Path, project: Path | None) -> tuple[Path, Path]:
    if project is not None:
        return project / ".claude" / "settings.local.json", project / ".mcp.json"
    return home / ".claude" / "settings.json", home / ".claude.json"


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    settings, mcp_file = files(home, project)
    p = base.Plan(NAME, action)
    if action == "install":
        p.edits.append(base.json_edit(
            settings, lambda d: base.add_group_hooks(d, NAME, EVENTS), what="hooks"))
        if mcp:
            p.edits.append(base.json_edit(
                mcp_file, lambda d: base.set_mcp(d, {"type": "stdio", **base.mcp_server()}),
                what="MCP server"))
        if project is not None:
            p.notes.append("Claude Code asks once before it starts a project's .mcp.json servers.")
    else:
        p.edits.append(base.json_edit(
            settings, lambda d: base.remove_group_hooks(d, NAME), what="hooks"))
        p.edits.append(base.json_edit(mcp_file, base.remove_mcp, what="MCP server"))
    return p
