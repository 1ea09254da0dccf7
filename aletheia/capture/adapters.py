"""One adapter per host: map the host's hook payload to one internal ``Event``.

Field names follow the hosts' hook payloads as the real CLIs send them (Claude Code 2.1.197,
Codex CLI 0.171.0, Gemini CLI 0.61.0; run in tests/e2e/hosts).  Unknown events and fields are
ignored, never an error.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping

from aletheia import bounds
from aletheia.capture.event import (
    IGNORE,
    PROMPT,
    RESPONSE_STOP,
    SESSION_END,
    SESSION_START,
    TOOL_START,
    TOOL_USE,
    Event,
)

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from typing import Any


def _s(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _common(host: str, kind: str, p: Mapping[str, Any], env: Mapping[str, str]) -> Event:
    session = _s(p.get("session_id")) or env.get("GEMINI_SESSION_ID", "") or None
    cwd = (
        _s(p.get("cwd"))
        or env.get("CLAUDE_PROJECT_DIR", "")
        or env.get("GEMINI_PROJECT_DIR", "")
        or None
    )
    return Event(type=kind, host=host, session_id=session, cwd=cwd)


def _claude_like(host: str, event: str, p: Mapping[str, Any], env: Mapping[str, str]) -> Event:
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
    if name == "pretooluse":
        ev = _common(host, TOOL_START, p, env)
        ev.tool_name = _s(p.get("tool_name")) or "tool"
        ev.tool_input = p.get("tool_input")
        ev.event_key = _s(p.get("tool_use_id")) or None  # (kept for a Codex apply_patch)
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
    return Event(type=IGNORE, host=host)


# Gemini CLI 0.61.0 puts SessionStart's additionalContext in front of the user's text inside
# BeforeAgent's ``prompt`` (seen with the real CLI): keep only what the user typed, or every
# prompt would store a copy of the context block.
_GEMINI_HOOK_CONTEXT = re.compile(r"\A\s*(?:<hook_context>.*?</hook_context>\s*)+", re.S)


def _gemini(host: str, event: str, p: Mapping[str, Any], env: Mapping[str, str]) -> Event:
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
    return Event(type=IGNORE, host=host)


def _json_or_text(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _cursor(host: str, event: str, p: Mapping[str, Any], env: Mapping[str, str]) -> Event:
    """Cursor's hooks.json events (written against cursor.com/docs/hooks; not run here)."""
    name = event.lower()
    roots = p.get("workspace_roots")
    cwd = _s(p.get("cwd")) or (roots[0] if isinstance(roots, list) and roots
                               and isinstance(roots[0], str) else "") or None
    session = _s(p.get("conversation_id")) or _s(p.get("session_id")) or None
    ev = Event(type=IGNORE, host=host, session_id=session, cwd=cwd)
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


def _windsurf(host: str, event: str, p: Mapping[str, Any], env: Mapping[str, str]) -> Event:
    """Windsurf Cascade hooks (written against docs.windsurf.com/windsurf/cascade/hooks)."""
    name = (_s(p.get("agent_action_name")) or event).lower()
    info = p.get("tool_info") if isinstance(p.get("tool_info"), dict) else {}
    assert isinstance(info, dict)
    ev = Event(type=IGNORE, host=host, session_id=_s(p.get("trajectory_id")) or None,
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
    Adapter = Callable[[str, str, Mapping[str, Any], Mapping[str, str]], Event]

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
) -> Event:
    adapter = ADAPTERS.get(host)
    if adapter is None:
        return Event(type=IGNORE, host=host)
    return _bounded(adapter(host, event, payload, os.environ if env is None else env))


def _bounded(ev: Event) -> Event:
    """Cut identity fields before anything reads them: a 2 MB session id must cost nothing
    (it is redacted, hashed and resolved on every path after this)."""
    if ev.session_id:
        # The id as the store keeps it, made now: a long one becomes a stand-in (it hashes the
        # head and the length, so two long ids stay two sessions) and one holding a secret
        # shape is replaced, before a stop, a spool line or the session's injection log
        # (context/sessions/, named by it) is written.
        from aletheia.store import session_key

        ev.session_id = session_key(ev.session_id)
    if ev.event_key and len(ev.event_key) > bounds.EVENT_KEY_CAP:
        ev.event_key = bounds.cut(ev.event_key, bounds.EVENT_KEY_CAP)
    if len(ev.tool_name) > bounds.NAME_CAP:
        ev.tool_name = bounds.cut(ev.tool_name, bounds.NAME_CAP)
    if ev.cwd and len(ev.cwd) > bounds.PATH_CAP:
        ev.cwd = None  # longer than any path can be: not a directory
    return ev
