"""One adapter per host: map the host's hook payload to one internal ``HookEvent``.

Field names follow /work/shared/notes/hosts.md (Claude Code 2.1.197, Codex CLI 0.171.0,
Gemini CLI 0.61.0).  Unknown events and fields are ignored, never an error.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from typing import Any

# Internal event types.
SESSION_START = "session_start"
PROMPT = "prompt"
TOOL_USE = "tool_use"
RESPONSE_STOP = "stop"  # end of a turn: may carry the assistant's last message
SESSION_END = "session_end"
IGNORE = "ignore"


class HookEvent:
    """One host event in our terms (a plain class: ``dataclasses`` costs the hook ~6 ms)."""

    def __init__(
        self,
        type: str,
        host: str,
        session_id: str | None = None,
        cwd: str | None = None,
        prompt: str = "",
        tool_name: str = "",
        tool_input: Any = None,
        tool_response: Any = None,
        failed: bool = False,
        response: str = "",
        reason: str = "",
        event_key: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        self.type = type
        self.host = host
        self.session_id = session_id
        self.cwd = cwd
        self.prompt = prompt
        self.tool_name = tool_name
        self.tool_input = tool_input
        self.tool_response = tool_response
        self.failed = failed
        self.response = response
        self.reason = reason
        self.event_key = event_key
        self.extra: dict[str, Any] = {} if extra is None else extra

    def __repr__(self) -> str:
        return f"HookEvent({self.__dict__})"


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _common(host: str, kind: str, p: Mapping[str, Any], env: Mapping[str, str]) -> HookEvent:
    session = _s(p.get("session_id")) or env.get("GEMINI_SESSION_ID", "") or None
    cwd = (
        _s(p.get("cwd"))
        or env.get("CLAUDE_PROJECT_DIR", "")
        or env.get("GEMINI_PROJECT_DIR", "")
        or None
    )
    return HookEvent(type=kind, host=host, session_id=session, cwd=cwd)


def _claude_like(host: str, event: str, p: Mapping[str, Any], env: Mapping[str, str]) -> HookEvent:
    """Claude Code's payloads; Codex and Command Code send the same shape."""
    name = event.lower()
    if name == "sessionstart":
        ev = _common(host, SESSION_START, p, env)
        ev.reason = _s(p.get("source"))
        return ev
    if name == "userpromptsubmit":
        ev = _common(host, PROMPT, p, env)
        ev.prompt = _s(p.get("prompt"))
        ev.event_key = _s(p.get("turn_id")) or None
        return ev
    if name in ("posttooluse", "posttoolusefailure"):
        ev = _common(host, TOOL_USE, p, env)
        ev.tool_name = _s(p.get("tool_name")) or "tool"
        ev.tool_input = p.get("tool_input")
        ev.tool_response = p.get("tool_response", p.get("error"))
        ev.failed = name == "posttoolusefailure"
        ev.event_key = _s(p.get("tool_use_id")) or _s(p.get("call_id")) or None
        return ev
    if name in ("stop", "stopfailure"):
        ev = _common(host, RESPONSE_STOP, p, env)
        ev.response = _s(p.get("last_assistant_message"))
        ev.reason = _s(p.get("error")) if name == "stopfailure" else ""
        ev.event_key = _s(p.get("turn_id")) or None
        return ev
    if name == "sessionend":
        ev = _common(host, SESSION_END, p, env)
        ev.reason = _s(p.get("reason"))
        return ev
    return HookEvent(type=IGNORE, host=host)


# Gemini CLI 0.61.0 puts SessionStart's additionalContext in front of the user's text inside
# BeforeAgent's ``prompt`` (seen with the real CLI): keep only what the user typed, or every
# prompt would store a copy of the context block.
_GEMINI_HOOK_CONTEXT = re.compile(r"\A\s*(?:<hook_context>.*?</hook_context>\s*)+", re.S)


def _gemini(host: str, event: str, p: Mapping[str, Any], env: Mapping[str, str]) -> HookEvent:
    name = event.lower()
    stamp = _s(p.get("timestamp")) or None
    if name == "sessionstart":
        ev = _common(host, SESSION_START, p, env)
        ev.reason = _s(p.get("source"))
        return ev
    if name == "beforeagent":
        ev = _common(host, PROMPT, p, env)
        ev.prompt = _GEMINI_HOOK_CONTEXT.sub("", _s(p.get("prompt")))
        ev.event_key = stamp
        return ev
    if name == "aftertool":
        ev = _common(host, TOOL_USE, p, env)
        ev.tool_name = _s(p.get("tool_name")) or "tool"
        ev.tool_input = p.get("tool_input")
        response = p.get("tool_response")
        if isinstance(response, dict) and "llmContent" in response:
            ev.failed = bool(response.get("error"))
            response = response.get("llmContent") if not response.get("error") else response
        ev.tool_response = response
        ev.event_key = stamp
        return ev
    if name == "afteragent":
        ev = _common(host, RESPONSE_STOP, p, env)
        ev.response = _s(p.get("prompt_response"))
        ev.event_key = stamp
        return ev
    if name == "sessionend":
        ev = _common(host, SESSION_END, p, env)
        ev.reason = _s(p.get("reason"))
        return ev
    return HookEvent(type=IGNORE, host=host)


def _json_or_text(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _cursor(host: str, event: str, p: Mapping[str, Any], env: Mapping[str, str]) -> HookEvent:
    """Cursor's hooks.json events (written against cursor.com/docs/hooks; not run here)."""
    name = event.lower()
    roots = p.get("workspace_roots")
    cwd = _s(p.get("cwd")) or (roots[0] if isinstance(roots, list) and roots
                               and isinstance(roots[0], str) else "") or None
    session = _s(p.get("conversation_id")) or _s(p.get("session_id")) or None
    ev = HookEvent(type=IGNORE, host=host, session_id=session, cwd=cwd)
    if name == "sessionstart":
        ev.type = SESSION_START
    elif name == "beforesubmitprompt":
        ev.type, ev.prompt = PROMPT, _s(p.get("prompt"))
        ev.event_key = _s(p.get("generation_id")) or None
    elif name in ("posttooluse", "posttoolusefailure"):
        ev.type, ev.tool_name = TOOL_USE, _s(p.get("tool_name")) or "tool"
        ev.tool_input = _json_or_text(p.get("tool_input"))
        ev.tool_response = _json_or_text(p.get("tool_output", p.get("error")))
        ev.failed = name == "posttoolusefailure"
        ev.event_key = _s(p.get("tool_use_id")) or None
    elif name == "afteragentresponse":
        ev.type, ev.response = RESPONSE_STOP, _s(p.get("text"))
        ev.event_key = _s(p.get("generation_id")) or None
    elif name == "stop":
        ev.type, ev.reason = RESPONSE_STOP, _s(p.get("status"))
    elif name == "sessionend":
        ev.type, ev.reason = SESSION_END, _s(p.get("reason"))
    return ev


def _windsurf(host: str, event: str, p: Mapping[str, Any], env: Mapping[str, str]) -> HookEvent:
    """Windsurf Cascade hooks (written against docs.windsurf.com/windsurf/cascade/hooks)."""
    name = (_s(p.get("agent_action_name")) or event).lower()
    info = p.get("tool_info") if isinstance(p.get("tool_info"), dict) else {}
    assert isinstance(info, dict)
    ev = HookEvent(type=IGNORE, host=host, session_id=_s(p.get("trajectory_id")) or None,
                   cwd=_s(info.get("cwd")) or None, event_key=_s(p.get("execution_id")) or None)
    if name == "pre_user_prompt":
        ev.type, ev.prompt = PROMPT, _s(info.get("user_prompt"))
    elif name == "post_run_command":
        ev.type, ev.tool_name = TOOL_USE, "run_command"
        ev.tool_input = {"command": _s(info.get("command_line"))}
        ev.tool_response = info.get("output")
    elif name == "post_write_code":
        ev.type, ev.tool_name = TOOL_USE, "write_code"
        ev.tool_input = {"file_path": _s(info.get("file_path")), "edits": info.get("edits")}
    elif name == "post_mcp_tool_use":
        ev.type = TOOL_USE
        ev.tool_name = f"mcp:{_s(info.get('mcp_server_name'))}/{_s(info.get('mcp_tool_name'))}"
        ev.tool_input = info.get("mcp_tool_arguments")
        ev.tool_response = info.get("mcp_result")
    elif name == "post_cascade_response":
        ev.type, ev.response = RESPONSE_STOP, _s(info.get("response"))
    return ev


if TYPE_CHECKING:  # the alias names Any, so it exists for the type checker only
    Adapter = Callable[[str, str, Mapping[str, Any], Mapping[str, str]], HookEvent]

ADAPTERS: dict[str, Adapter] = {
    "claude-code": _claude_like,
    "codex": _claude_like,
    "command-code": _claude_like,
    # Our OpenCode plugin (aletheia/install/opencode.py) sends Claude-shaped payloads.
    "opencode": _claude_like,
    "gemini": _gemini,
    "cursor": _cursor,
    "windsurf": _windsurf,
}


def adapt(
    host: str, event: str, payload: Mapping[str, Any], env: Mapping[str, str] | None = None
) -> HookEvent:
    adapter = ADAPTERS.get(host)
    if adapter is None:
        return HookEvent(type=IGNORE, host=host)
    return adapter(host, event, payload, os.environ if env is None else env)


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
            if rest:
                parts.append(json.dumps(rest, ensure_ascii=False, default=str)[:2000])
            return "\n".join(parts)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
