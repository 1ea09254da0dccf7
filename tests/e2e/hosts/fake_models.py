"""Fake model servers on 127.0.0.1 (port 0) for the real host CLIs: Anthropic Messages, OpenAI
Responses, OpenAI Chat Completions (OpenCode, Command Code) and Gemini streamGenerateContent,
each scripted to ask for one shell tool call and then answer with text.  Every request is logged (path + raw body) so a test can look for the
context block inside what the host sent to its model.
"""

from __future__ import annotations

import json
import os
import shutil
import socketserver
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    body: bytes

    def json(self) -> Any:
        try:
            return json.loads(self.body or b"null")
        except ValueError:
            return None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")


@dataclass
class Script:
    """What the fake model does: run ``command`` with the shell tool, then say ``answer``."""

    command: str
    answer: str = "All done."
    requests: list[Request] = field(default_factory=list)
    # Anthropic only: another tool than the shell (e.g. ``Read`` with ``{"file_path": …}``).
    tool: str = "Bash"
    tool_input: dict[str, Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def log(self, req: Request) -> None:
        with self.lock:
            self.requests.append(req)

    def bodies(self) -> str:
        with self.lock:
            return "\n".join(r.text for r in self.requests)

    def chat(self) -> list[Request]:
        """The Chat Completions requests (OpenCode, Command Code)."""
        with self.lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def tool_result_sent(self) -> bool:
        """The shell tool ran and its result went back to the model."""
        return any(m.get("role") == "tool" for r in self.chat()
                   for m in (r.json() or {}).get("messages", []))


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> bytes:
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


# -- Anthropic Messages (Claude Code) -----------------------------------------------------------


def _last_user_content(body: dict[str, Any]) -> list[Any]:
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user":
            content = msg.get("content")
            return content if isinstance(content, list) else [content]
    return []


def anthropic_reply(script: Script, body: dict[str, Any]) -> tuple[str, bytes]:
    has_result = any(isinstance(c, dict) and c.get("type") == "tool_result"
                     for c in _last_user_content(body))
    wants_tool = bool(body.get("tools")) and not has_result
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    start = {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "m"),
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}
    if wants_tool:
        block = {"type": "tool_use", "id": f"toolu_fake{len(script.requests)}", "name": script.tool,
                 "input": {}}
        delta = {"type": "input_json_delta",
                 "partial_json": json.dumps(script.tool_input if script.tool_input is not None else
                                            {"command": script.command,
                                             "description": "print a value"})}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": script.answer}
        stop = "end_turn"
    if not body.get("stream"):
        content = ({**block, "input": json.loads(delta["partial_json"])} if wants_tool
                   else {"type": "text", "text": script.answer})
        msg = {**start["message"], "content": [content], "stop_reason": stop}
        return "application/json", json.dumps(msg).encode()
    return "text/event-stream", _sse([
        ("message_start", start),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ])


# -- OpenAI Responses (Codex) -------------------------------------------------------------------


def responses_reply(script: Script, body: dict[str, Any]) -> tuple[str, bytes]:
    items = body.get("input") or []
    has_result = any(isinstance(i, dict) and i.get("type") == "function_call_output"
                     for i in items)
    n = len(script.requests)
    if not has_result:
        item: dict[str, Any] = {
            "type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
            "name": "exec_command", "arguments": json.dumps({"cmd": script.command}),
            "status": "completed"}
    else:
        item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": script.answer, "annotations": []}]}
    added = {**item, "arguments": ""} if item["type"] == "function_call" else {
        **item, "content": [], "status": "in_progress"}
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 15}
    resp = {"id": f"resp_{n}", "object": "response", "created_at": 0, "status": "in_progress",
            "model": body.get("model", "m"), "output": []}
    return "text/event-stream", _sse([
        ("response.created", {"type": "response.created", "response": resp}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                        "item": added}),
        ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                       "item": item}),
        ("response.completed", {"type": "response.completed", "response": {
            **resp, "status": "completed", "output": [item], "usage": usage}}),
    ])


# -- OpenAI Chat Completions (OpenCode, Command Code) ----------------------------------------------

# The shell tool as each host names it: OpenCode "bash", Command Code "shell_command".
SHELL_TOOLS = ("bash", "shell_command", "shell")


def _chat_chunk(n: int, model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {"id": f"chatcmpl-fake{n}", "object": "chat.completion.chunk", "created": 0,
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def chat_reply(script: Script, body: dict[str, Any]) -> tuple[str, bytes]:
    messages = body.get("messages") or []
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    has_result = any(m.get("role") == "tool" for m in messages[last_user + 1:])
    offered = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    shell = next((name for name in SHELL_TOOLS if name in offered), None)
    n = len(script.requests)
    model = body.get("model", "fake-model")
    if shell and not has_result:
        args = json.dumps({"command": script.command, "description": "print a value"})
        call = {"index": 0, "id": f"call_fake{n}", "type": "function",
                "function": {"name": shell, "arguments": args}}
        message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        deltas = [{"role": "assistant", "content": ""}, {"tool_calls": [call]}]
        finish = "tool_calls"
    else:
        message = {"role": "assistant", "content": script.answer}
        deltas = [{"role": "assistant", "content": ""}, {"content": script.answer}]
        finish = "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not body.get("stream"):
        return "application/json", json.dumps({
            "id": f"chatcmpl-fake{n}", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": usage}).encode()
    chunks = [_chat_chunk(n, model, d, None) for d in deltas]
    chunks.append(_chat_chunk(n, model, {}, finish))
    chunks.append({"id": f"chatcmpl-fake{n}", "object": "chat.completion.chunk", "created": 0,
                   "model": model, "choices": [], "usage": usage})
    return "text/event-stream", _sse([(None, c) for c in chunks]) + b"data: [DONE]\n\n"


# -- Gemini streamGenerateContent ---------------------------------------------------------------


def gemini_reply(script: Script, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
    contents = body.get("contents") or []
    last = contents[-1] if contents else {}
    has_result = any("functionResponse" in p for p in (last.get("parts") or [])
                     if isinstance(p, dict))
    tools = body.get("tools") or []
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    if tools and not has_result:
        part: dict[str, Any] = {"functionCall": {"name": "run_shell_command",
                                                 "args": {"command": script.command}}}
    elif "generationConfig" in body and (body["generationConfig"] or {}).get("responseMimeType") \
            == "application/json":
        # Gemini CLI's own side queries (next speaker, routing…) want JSON back.
        part = {"text": json.dumps({"next_speaker": "user", "reasoning": "done",
                                    "complexity_reasoning": "simple",
                                    "complexity_score": 1})}
    else:
        part = {"text": script.answer}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]},
                             "finishReason": "STOP", "index": 0}],
             "usageMetadata": usage, "modelVersion": "fake"}
    if ":streamGenerateContent" in path:
        return "text/event-stream", _sse([(None, chunk)])
    if ":countTokens" in path:
        return "application/json", json.dumps({"totalTokens": 10}).encode()
    return "application/json", json.dumps(chunk).encode()


# -- the server ---------------------------------------------------------------------------------


def _handler(kind: str, script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _read(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                return self.rfile.read(length)
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = b""
                while True:
                    size = int(self.rfile.readline().strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()
            return b""

        def _send(self, status: int, ctype: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_HEAD(self) -> None:
            script.log(Request("HEAD", self.path, b""))
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            script.log(Request("GET", self.path, b""))
            if "/models" in self.path:
                self._send(200, "application/json", json.dumps({"data": [], "models": []}).encode())
                return
            self._send(404, "application/json", b'{"error": "not found"}')

        def do_POST(self) -> None:
            raw = self._read()
            req = Request("POST", self.path, raw)
            body = req.json()
            script.log(req)
            if not isinstance(body, dict):
                self._send(400, "application/json", b'{"error": "bad json"}')
                return
            if kind == "anthropic" and self.path.startswith("/v1/messages"):
                if "count_tokens" in self.path:
                    self._send(200, "application/json", b'{"input_tokens": 10}')
                    return
                ctype, data = anthropic_reply(script, body)
            elif kind == "responses" and self.path.rstrip("/").endswith("/responses"):
                ctype, data = responses_reply(script, body)
            elif kind == "chat" and self.path.rstrip("/").endswith("/chat/completions"):
                ctype, data = chat_reply(script, body)
            elif kind == "gemini" and "/models/" in self.path:
                ctype, data = gemini_reply(script, self.path, body)
            else:
                self._send(404, "application/json", b'{"error": "not found"}')
                return
            self._send(200, ctype, data)

    return Handler


# port -> the Unix socket the same server also listens on: tests/e2e/hosts/offline.py relays
# 127.0.0.1:PORT inside a loopback-only network namespace to it.
SOCKETS: dict[int, str] = {}


class _Quiet:
    """A host stopped mid-request (the TUI test kills it) is no error of the server's."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[misc]


class _TCPHTTPServer(_Quiet, ThreadingHTTPServer):
    daemon_threads = True


class _UnixHTTPServer(_Quiet, socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


@contextmanager
def serve(kind: str, script: Script) -> Iterator[str]:
    """Run a fake model server; yields its base URL (http://127.0.0.1:PORT)."""
    handler = _handler(kind, script)
    server = _TCPHTTPServer(("127.0.0.1", 0), handler)
    port = server.server_address[1]
    folder = tempfile.mkdtemp(prefix="fake-model-")
    unix = _UnixHTTPServer(os.path.join(folder, "s"), handler)
    SOCKETS[port] = os.path.join(folder, "s")
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (server, unix)]
    for t in threads:
        t.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        SOCKETS.pop(port, None)
        for s in (server, unix):
            s.shutdown()
            s.server_close()
        shutil.rmtree(folder, ignore_errors=True)
