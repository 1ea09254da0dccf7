"""Turn an internal ``HookEvent`` into the memory the store will keep."""

from __future__ import annotations

import json

from aletheia.hooks.adapters import PROMPT, RESPONSE_STOP, TOOL_USE, HookEvent, render
from aletheia.store import MemoryIn

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from typing import Any

_FILE_KEYS = ("file_path", "path", "notebook_path", "filePath", "absolute_path", "dir_path")
_COMMAND_KEYS = ("command", "cmd")
_SHELL_TOOLS = {"bash", "shell", "exec_command", "run_shell_command", "local_shell"}


def _files(tool_input: Any) -> list[str]:
    if not isinstance(tool_input, dict):
        return []
    found = [tool_input[k] for k in _FILE_KEYS if isinstance(tool_input.get(k), str)]
    paths = tool_input.get("paths")
    if isinstance(paths, list):
        found.extend(p for p in paths if isinstance(p, str))
    return found


def _command(tool_input: Any) -> str:
    if isinstance(tool_input, dict):
        for key in _COMMAND_KEYS:
            value = tool_input.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                return " ".join(value)
    if isinstance(tool_input, str):
        # Codex can send its exec_command arguments as a JSON string.
        try:
            return _command(json.loads(tool_input))
        except ValueError:
            return tool_input
    return ""


def tool_title(ev: HookEvent) -> str:
    name = ev.tool_name
    command = _command(ev.tool_input)
    if command and (name.lower() in _SHELL_TOOLS or not _files(ev.tool_input)):
        first = command.strip().splitlines()[0] if command.strip() else ""
        title = f"{name}: $ {first}"
    elif _files(ev.tool_input):
        title = f"{name} {_files(ev.tool_input)[0]}"
    elif isinstance(ev.tool_input, dict):
        brief = ", ".join(
            f"{k}={v}" for k, v in ev.tool_input.items() if isinstance(v, (str, int, float))
        )
        title = f"{name} {brief}".strip()
    else:
        title = name
    if ev.failed:
        title = f"{title} (failed)"
    return title


def to_memory(ev: HookEvent, project: str) -> MemoryIn | None:
    """The memory for an event, or None when the event carries nothing worth keeping."""
    base: dict[str, Any] = {
        "project": project,
        "session_id": ev.session_id,
        "tool": ev.host,
        "source": "hook",
        "event_key": ev.event_key,
    }
    if ev.type == PROMPT:
        if not ev.prompt.strip():
            return None
        return MemoryIn(kind="prompt", title=ev.prompt, narrative=ev.prompt, **base)
    if ev.type == TOOL_USE:
        tool_input = render(ev.tool_input)
        output = render(ev.tool_response)
        narrative = f"input: {tool_input}\n\noutput:\n{output}" if output else f"input: {tool_input}"
        return MemoryIn(
            kind="tool_event",
            title=tool_title(ev),
            subtitle=ev.tool_name,
            narrative=narrative,
            files=_files(ev.tool_input),
            concepts=[ev.tool_name] + (["error"] if ev.failed else []),
            **base,
        )
    if ev.type == RESPONSE_STOP and ev.response.strip():
        return MemoryIn(kind="response", title=ev.response, narrative=ev.response, **base)
    return None
