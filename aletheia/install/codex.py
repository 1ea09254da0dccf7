"""Codex CLI (written against and run with ``@openai/codex`` 0.171.0).

Hooks go in ``$CODEX_HOME/hooks.json`` (default ``~/.codex``; ``--project``:
``<dir>/.codex/hooks.json``), the MCP server in a marked ``[mcp_servers.aletheia]`` block of
``config.toml`` beside it.  Codex runs a hook only once the user has trusted it, and skips an
untrusted one without a word, so the install output says how to trust them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from aletheia.errors import InvalidInput
from aletheia.install import base

NAME = "codex"
WRITTEN_AGAINST = "Codex CLI 0.171.0 (driven end to end in tests/e2e/hosts)"

EVENTS: list[tuple[str, str | None, str]] = [
    ("SessionStart", None, "SessionStart"),
    ("UserPromptSubmit", None, "UserPromptSubmit"),
    # Per-file recall: Codex reads and patches files through its shell (exec_command: `sed -n`,
    # `cat`, apply_patch); the hook answers only for a command that names a file.
    ("PreToolUse", None, "PreToolUse"),
    ("PostToolUse", None, "PostToolUse"),
    ("Stop", None, "Stop"),
    ("SessionEnd", None, "SessionEnd"),
]
BEGIN, END = base.block_markers("#", "MCP server")

TRUST_NOTE = (
    "Codex runs a hook only after you trust it (and silently skips it until then): start "
    "`codex`, type /hooks, review the aletheia hooks and trust them. Trust is keyed to each "
    "hook's exact command, so trust them again after a reinstall from another Python. "
    "For automation that already vets its hooks: `codex exec --dangerously-bypass-hook-trust`."
)
PROJECT_NOTE = (
    "Codex loads a project's .codex/ hooks only in a trusted project: trust the folder when "
    "Codex asks, or add [projects.\"{dir}\"] trust_level = \"trusted\" to {config}."
)


def codex_home(home: Path, env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    override = env.get("CODEX_HOME", "").strip()
    return Path(os.path.expanduser(override)) if override else home / ".codex"


def _toml_str(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def mcp_block() -> str:
    server = base.mcp_server()
    args = ", ".join(_toml_str(a) for a in server["args"])
    return f"[mcp_servers.{base.MCP_NAME}]\ncommand = {_toml_str(server['command'])}\nargs = [{args}]"


def _put_mcp(text: str) -> str:
    if base.find_block(text, BEGIN, END) is None and f"[mcp_servers.{base.MCP_NAME}]" in text:
        raise InvalidInput(
            f"config.toml already defines [mcp_servers.{base.MCP_NAME}] outside aletheia's "
            "block; remove it or run with --no-mcp (nothing was changed)"
        )
    return base.put_block(text, BEGIN, END, mcp_block())


def plan(action: str, *, home: Path, project: Path | None, mcp: bool) -> base.Plan:
    root = project / ".codex" if project is not None else codex_home(home)
    hooks_file, config = root / "hooks.json", root / "config.toml"
    p = base.Plan(NAME, action)
    if action == "install":
        p.edits.append(base.json_edit(
            hooks_file, lambda d: base.add_group_hooks(d, NAME, EVENTS), what="hooks"))
        if mcp:
            p.edits.append(base.text_edit(config, _put_mcp, what="MCP server"))
        p.notes.append(TRUST_NOTE)
        if project is not None:
            p.notes.append(PROJECT_NOTE.format(dir=project, config=codex_home(home) / "config.toml"))
    else:
        p.edits.append(base.json_edit(
            hooks_file, lambda d: base.remove_group_hooks(d, NAME), what="hooks",
            delete_if_empty=True))
        p.edits.append(base.text_edit(
            config, lambda t: base.drop_block(t, BEGIN, END), what="MCP server",
            delete_if_empty=True))
    return p
