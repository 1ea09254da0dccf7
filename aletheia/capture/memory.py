"""Map an internal ``Event`` to the memory the store will keep (or to nothing)."""

from __future__ import annotations

import json

from aletheia import patches, store
from aletheia.capture.event import PROMPT, RESPONSE_STOP, TOOL_START, TOOL_USE, Event
from aletheia.redact import redact, redact_obj
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
    if not found:
        command = command_of(tool_input)
        found = [path for _, path in patches.headers(command)] if patches.is_patch(command) else []
    return found


# Codex edits files with ``apply_patch`` (``aletheia.patches``, a here document in its shell
# tool).  Codex 0.171.0 runs a hook before it (PreToolUse) and none after, so the edit is
# stored from the PreToolUse; a rollout import stores the same memory (same content hash).
def codex_patch(ev: Event) -> bool:
    """A Codex PreToolUse that is an apply_patch: the only hook the edit gets."""
    return ev.type == TOOL_START and ev.host == "codex" and patches.is_patch(command_of(ev.tool_input))


def command_of(tool_input: Any) -> str:
    """The shell command a tool call runs ("" when it runs none)."""
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
            return command_of(json.loads(tool_input))
        except ValueError:
            return tool_input
    return ""


def render(value: Any) -> str:
    """Tool input/output as text: strings stay as they are, structures become compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        # Claude's Bash result: show stdout/stderr as text rather than an escaped JSON string.
        parts = []
        for key in ("stdout", "stderr", "output", "content", "llmContent", "error"):
            part = value.get(key)
            if isinstance(part, str) and part:
                parts.append(part if key in ("stdout", "output", "content", "llmContent") else f"[{key}] {part}")
        rest = {k: v for k, v in value.items() if k not in ("stdout", "stderr", "output", "content", "llmContent", "error")}
        if parts:
            if rest:  # redacted before it is cut: a secret cut in two is no longer recognised
                parts.append(redact(json.dumps(rest, ensure_ascii=False, default=str)[:65536])[:2000])
            return "\n".join(parts)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _window(value: Any) -> Any:
    if isinstance(value, str):
        return store.precut(value, store.NARRATIVE_HEAD, store.NARRATIVE_TAIL)
    if isinstance(value, dict):
        return {k: _window(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_window(v) for v in value]
    return value


def _redacted(value: Any) -> Any:
    """Tool input and output redacted as they came (real line breaks, unescaped quotes), not
    as the JSON they are rendered into: there a command's newlines are ``\\n`` and its quotes
    escaped, and a YAML block or a key body is no longer what it was. Long strings are first
    cut to what the narrative can keep (with margins), which bounds the cost."""
    return redact_obj(_window(value))


def tool_title(ev: Event) -> str:
    name = ev.tool_name
    command = command_of(ev.tool_input)
    touched = patches.headers(command) if patches.is_patch(command) else []
    if touched:
        return redact(f"{name}: apply_patch " + ", ".join(f"{what} {path}" for what, path in touched))[:400]
    if command and (name.lower() in _SHELL_TOOLS or not _files(ev.tool_input)):
        # The first line of the *redacted* command: a secret that spans lines (a key in a here
        # document, a token continued with \) is recognised only while the lines are there.
        shown = redact(command[:65536]).strip()
        first = shown.splitlines()[0] if shown else ""
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


def memory_kind(ev: Event) -> str | None:
    """The kind of memory ``ev`` becomes, or None when it carries nothing worth keeping."""
    if ev.type == PROMPT and ev.prompt.strip():
        return "prompt"
    if ev.type == TOOL_USE or codex_patch(ev):
        return "tool_event"
    if ev.type == RESPONSE_STOP and ev.response.strip():
        return "response"
    return None


def to_memory(ev: Event, project: str, source: str = "hook") -> MemoryIn | None:
    """The memory for an event, or None when the event carries nothing worth keeping.

    Whatever the source, the same event gives the same content hash (``source`` and the time
    are not part of it): a transcript import never stores again what the hook stored."""
    kind = memory_kind(ev)
    if kind is None:
        return None
    base: dict[str, Any] = {
        "project": project,
        "kind": kind,
        "session_id": ev.session_id,
        "tool": ev.host,
        "source": source,
        "event_key": ev.event_key,
        "created_at": ev.at,
    }
    if kind == "prompt":
        return MemoryIn(title=ev.prompt, narrative=ev.prompt, **base)
    if kind == "response":
        return MemoryIn(title=ev.response, narrative=ev.response, **base)
    tool_input = render(_redacted(ev.tool_input))
    output = render(_redacted(ev.tool_response))
    narrative = f"input: {tool_input}\n\noutput:\n{output}" if output else f"input: {tool_input}"
    return MemoryIn(
        title=tool_title(ev),
        subtitle=ev.tool_name,
        narrative=narrative,
        files=_files(ev.tool_input),
        concepts=[ev.tool_name] + (["error"] if ev.failed else []),
        **base,
    )
