"""Claude Code transcripts (``~/.claude/projects/*/*.jsonl``) and Codex rollouts
(``~/.codex/sessions/**/*.jsonl``) as the hook events a live session would have sent.

Each parser is incremental (``feed`` one decoded line at a time, ``flush`` at the end of a
file or when a followed file settles), so ``aletheia watch`` and ``aletheia import`` share it.
The events are built exactly as ``capture.adapters`` builds them from the hook payloads (same
fields, same ``event_key``), checked against Claude Code 2.1.197 and Codex 0.171.0, and go
through the same ``capture.ingest``: a memory the hook already stored gets the same content
hash and is not stored again.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aletheia.capture.event import PROMPT, RESPONSE_STOP, TOOL_START, TOOL_USE, Event
from aletheia.capture.ingest import Summary, ingest
from aletheia.importers import parse_time
from aletheia.patches import is_patch


def _text_parts(content: Any, kinds: tuple[str, ...] = ("text",)) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(c["text"] for c in content
                     if isinstance(c, dict) and c.get("type") in kinds
                     and isinstance(c.get("text"), str))


# -- Claude Code ---------------------------------------------------------------------------------

# Lines Claude writes into the user role that the user did not type (slash-command echoes…).
_NOT_TYPED = ("<command-name>", "<command-message>", "<local-command-stdout>",
              "<local-command-caveat>", "Caveat: ", "[Request interrupted")


@dataclass
class ClaudeParser:
    host: str = "claude-code"
    tools: dict[str, tuple[str, Any]] = field(default_factory=dict)
    reply: Event | None = None  # the turn's last assistant text, emitted when the turn ends

    def feed(self, line: dict[str, Any]) -> list[Event]:
        kind = line.get("type")
        if kind not in ("user", "assistant") or line.get("isSidechain") or line.get("isMeta"):
            return []
        msg = line.get("message")
        if not isinstance(msg, dict):
            return []
        session = line.get("sessionId") if isinstance(line.get("sessionId"), str) else None
        cwd = line.get("cwd") if isinstance(line.get("cwd"), str) else None
        at = parse_time(line.get("timestamp"))
        content = msg.get("content")
        out: list[Event] = []
        if kind == "assistant":
            blocks = content if isinstance(content, list) else []
            for b in blocks:
                if isinstance(b, dict) and b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                    self.tools[b["id"]] = (str(b.get("name") or "tool"), b.get("input"))
            text = _text_parts(content)
            if text.strip():
                self.reply = Event(RESPONSE_STOP, self.host, session_id=session, cwd=cwd,
                                   response=text, at=at)
            return out
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(content, list) else []
        if results:
            for b in results:
                name, tool_input = self.tools.pop(str(b.get("tool_use_id")), ("tool", None))
                response = line.get("toolUseResult", b.get("content"))
                out.append(Event(TOOL_USE, self.host, session_id=session, cwd=cwd,
                                 tool_name=name, tool_input=tool_input, tool_response=response,
                                 failed=bool(b.get("is_error")),
                                 event_key=str(b.get("tool_use_id")), at=at))
            return out
        prompt = _text_parts(content)
        if not prompt.strip() or prompt.lstrip().startswith(_NOT_TYPED):
            return out
        out.extend(self.flush())
        out.append(Event(PROMPT, self.host, session_id=session, cwd=cwd, prompt=prompt, at=at))
        return out

    def flush(self) -> list[Event]:
        reply, self.reply = self.reply, None
        return [reply] if reply is not None else []


# -- Codex rollouts ------------------------------------------------------------------------------


@dataclass
class CodexParser:
    host: str = "codex"
    session: str | None = None
    cwd: str | None = None
    commands: dict[str, str] = field(default_factory=dict)  # call_id -> the command the model ran
    done: set[str] = field(default_factory=set)

    def _ev(self, kind: str, **fields: Any) -> Event:
        return Event(kind, self.host, session_id=self.session, cwd=self.cwd, **fields)

    def _patch(self, call: str, at: int | None) -> Event:
        """An apply_patch as the hook stores it from Codex's PreToolUse (the only hook it
        gets): the same memory, so what the hook stored is not stored again."""
        return self._ev(TOOL_START, tool_name="Bash", tool_input={"command": self.commands[call]},
                        event_key=call, at=at)

    def feed(self, line: dict[str, Any]) -> list[Event]:
        kind, p = line.get("type"), line.get("payload")
        if not isinstance(p, dict):
            return []
        at = parse_time(line.get("timestamp"))
        if kind == "session_meta":
            self.session = p.get("id") if isinstance(p.get("id"), str) else self.session
            self.cwd = p.get("cwd") if isinstance(p.get("cwd"), str) else self.cwd
            return []
        if kind == "turn_context":
            self.cwd = p.get("cwd") if isinstance(p.get("cwd"), str) else self.cwd
            return []
        if kind == "response_item":
            if p.get("type") == "function_call" and isinstance(p.get("call_id"), str):
                try:
                    args = json.loads(p.get("arguments") or "{}")
                except ValueError:
                    args = {}
                cmd = args.get("cmd") if isinstance(args, dict) else None
                if isinstance(cmd, str):
                    self.commands[p["call_id"]] = cmd
            elif p.get("type") == "function_call_output" and isinstance(p.get("call_id"), str):
                call = p["call_id"]
                if call not in self.done and is_patch(self.commands.get(call, "")):
                    self.done.add(call)
                    return [self._patch(call, at)]
                if call not in self.done and call in self.commands:
                    # No CommandExecution item (an older Codex): the raw output is all we have.
                    self.done.add(call)
                    return [self._ev(TOOL_USE, tool_name="Bash",
                                       tool_input={"command": self.commands[call]},
                                       tool_response=p.get("output"), event_key=call, at=at)]
            return []
        if kind != "event_msg":
            return []
        turn = p.get("turn_id") if isinstance(p.get("turn_id"), str) else None
        if p.get("type") == "item_completed" and isinstance(p.get("item"), dict):
            item = p["item"]
            if item.get("type") == "UserMessage":
                text = _text_parts(item.get("content"))
                if text.strip():
                    return [self._ev(PROMPT, prompt=text, event_key=turn, at=at)]
            if item.get("type") == "FileChange" and isinstance(item.get("id"), str) \
                    and item["id"] not in self.done and is_patch(self.commands.get(item["id"], "")):
                self.done.add(item["id"])
                return [self._patch(item["id"], at)]
            if item.get("type") == "CommandExecution" and isinstance(item.get("id"), str):
                call = item["id"]
                self.done.add(call)
                command = self.commands.get(call)
                if command is None and isinstance(item.get("command"), list) and item["command"]:
                    command = str(item["command"][-1])
                return [self._ev(TOOL_USE, tool_name="Bash",
                                   tool_input={"command": command or ""},
                                   tool_response=item.get("aggregated_output"),
                                   event_key=call, at=at)]
            return []
        if p.get("type") == "user_message" and isinstance(p.get("message"), str):
            return [self._ev(PROMPT, prompt=p["message"], event_key=turn, at=at)]
        if p.get("type") == "task_complete" and isinstance(p.get("last_agent_message"), str):
            return [self._ev(RESPONSE_STOP,
                               response=p["last_agent_message"], event_key=turn, at=at)]
        return []

    def flush(self) -> list[Event]:
        return []


Parser = ClaudeParser | CodexParser


def read_lines(path: Path, start: int = 0) -> tuple[list[dict[str, Any]], int]:
    """Complete JSON lines from byte ``start``; returns them and the offset after the last one
    (a half-written last line is left for the next read)."""
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read()
    end = data.rfind(b"\n") + 1
    out: list[dict[str, Any]] = []
    for raw in data[:end].splitlines():
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict):
            out.append(line)
    return out, start + end


def parse_file(path: Path, parser: Parser) -> list[Event]:
    lines, _ = read_lines(path)
    events: list[Event] = []
    for line in lines:
        events.extend(parser.feed(line))
    events.extend(parser.flush())
    return events


def claude_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*.jsonl") if p.is_file())


def codex_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.jsonl") if p.is_file())


def default_claude_root() -> Path:
    config = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return (Path(config) if config else Path.home() / ".claude") / "projects"


def default_codex_root() -> Path:
    codex_home = os.environ.get("CODEX_HOME", "").strip()
    return (Path(codex_home) if codex_home else Path.home() / ".codex") / "sessions"


def events_of(files: list[Path], host: str,
              progress: Callable[[int], None] | None = None) -> Iterator[Event]:
    for path in files:
        parser: Parser = ClaudeParser() if host == "claude-code" else CodexParser()
        yield from parse_file(path, parser)
        if progress is not None:
            progress(1)


def ingest_events(conn: sqlite3.Connection, events: Iterable[Event], source: str,
                  summary: Summary, *, queue: bool = True) -> Summary:
    """Transcript events through the capture pipeline, as imports run it: each keeps the time
    the transcript gives, and every session that got a new row is queued for compression."""
    return ingest(conn, events, source=source, cwd=os.getcwd(), stops=False,
                  queue_touched=queue, summary=summary)


def import_files(conn: sqlite3.Connection, files: list[Path], host: str, *,
                 progress: Callable[[int], None] | None = None, queue: bool = True) -> Summary:
    summary = Summary("claude-code transcripts" if host == "claude-code" else "codex rollouts",
                      files=len(files))
    return ingest_events(conn, events_of(files, host, progress), f"import:{host}", summary,
                         queue=queue)
