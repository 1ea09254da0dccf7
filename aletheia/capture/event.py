"""The internal event: one host event in our terms, whatever host or transcript it came from."""

from __future__ import annotations

TYPE_CHECKING = False  # the hook path: importing typing costs ~2 ms
if TYPE_CHECKING:
    from typing import Any

# Event types.
SESSION_START = "session_start"
PROMPT = "prompt"
TOOL_USE = "tool_use"
TOOL_START = "tool_start"  # a tool is about to run (PreToolUse): nothing is stored, recall may answer
RESPONSE_STOP = "stop"  # end of a turn: may carry the assistant's last message
SESSION_END = "session_end"
IGNORE = "ignore"


class Event:
    """A plain class: ``dataclasses`` costs the hook ~6 ms."""

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
        at: int | None = None,
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
        self.reason = reason  # why a session started or ended, as the host said
        self.event_key = event_key
        self.at = at  # epoch ms when a transcript says when it happened; None: now

    def __repr__(self) -> str:
        return f"Event({self.__dict__})"
