"""Fake model servers on 127.0.0.1 (port 0) for the real host CLIs: Anthropic Messages, OpenAI
Responses, OpenAI Chat Completions (OpenCode, Command Code) and Gemini streamGenerateContent,
each scripted to ask for a shell tool call (then, optionally, file reads and edits, one per
request) and then answer with text.  Every request is logged (path + raw body) so a test can
look for the context block inside what the host sent to its model.

Which tool a step uses, and its argument names, come from the tool list the host offered in
that request (``Read``/``read``/``read_file``, ``file_path``/``filePath``/``absolute_path`` …):
the fake model asks for a tool the way a real one would, from the host's own schema.
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


@dataclass(frozen=True)
class Call:
    """One tool call the fake model asks for: ``shell`` runs ``arg``; ``read`` reads the file
    ``arg``; ``edit`` replaces ``old`` with ``new`` in it."""

    kind: str
    arg: str
    old: str = ""
    new: str = ""


@dataclass
class Script:
    """What the fake model does: run ``command`` with the shell tool (none when it is ""), then
    each of ``then`` (one tool call per request), then say ``answer``."""

    command: str
    answer: str = "All done."
    then: tuple[Call, ...] = ()
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def step(self, done: int) -> Call | None:
        """The call to ask for once ``done`` tool results are in the conversation."""
        calls = ((Call("shell", self.command),) if self.command else ()) + self.then
        return calls[done] if done < len(calls) else None

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


# -- choosing the tool a step uses, from what the host offered --------------------------------

# Each kind of step as hosts name its tool, best first.
TOOL_NAMES = {
    "shell": ("Bash", "bash", "shell_command", "shell", "run_shell_command", "exec_command"),
    "read": ("Read", "read", "read_file"),
    "edit": ("Edit", "edit", "edit_file", "replace"),
}
_ARG_NAMES = {
    "command": ("command", "cmd"),
    "path": ("file_path", "filePath", "absolute_path", "path"),
    "old": ("old_string", "oldString", "old_str", "old_text", "old"),
    "new": ("new_string", "newString", "new_str", "new_text", "new"),
}


def tool_call(call: Call, offered: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(tool name, arguments) for ``call`` among the tools offered (name → parameters schema)."""
    name = next((n for n in TOOL_NAMES[call.kind] if n in offered), None)
    if name is None:
        raise AssertionError(f"no {call.kind} tool among {sorted(offered)}")
    schema = offered[name] if isinstance(offered[name], dict) else {}
    props = schema.get("properties") or {}

    def arg(role: str) -> str:
        return next((k for k in _ARG_NAMES[role] if k in props), _ARG_NAMES[role][0])

    if call.kind == "shell":
        args: dict[str, Any] = {arg("command"): call.arg}
    elif call.kind == "read":
        args = {arg("path"): call.arg}
    else:
        args = {arg("path"): call.arg, arg("old"): call.old, arg("new"): call.new}
    for key in schema.get("required") or []:  # what else the host insists on, e.g. a reason
        if key not in args and (props.get(key) or {}).get("type", "string") == "string":
            args[key] = "as the user asked"
    if "description" in props and "description" not in args:
        args["description"] = "as the user asked"
    return name, args


# -- Anthropic Messages (Claude Code) -----------------------------------------------------------


def anthropic_reply(script: Script, body: dict[str, Any]) -> tuple[str, bytes]:
    done = sum(1 for m in body.get("messages") or [] if isinstance(m.get("content"), list)
               for c in m["content"] if isinstance(c, dict) and c.get("type") == "tool_result")
    offered = {t.get("name"): t.get("input_schema") for t in body.get("tools") or []}
    step = script.step(done) if offered else None
    usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    start = {"type": "message_start", "message": {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": body.get("model", "m"),
        "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}}
    if step is not None:
        name, args = tool_call(step, offered)
        block = {"type": "tool_use", "id": f"toolu_fake{len(script.requests)}", "name": name,
                 "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(args)}
        stop = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": script.answer}
        stop = "end_turn"
    if not body.get("stream"):
        content = ({**block, "input": json.loads(delta["partial_json"])} if step is not None
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
    done = sum(1 for i in items if isinstance(i, dict)
               and i.get("type") in ("function_call_output", "custom_tool_call_output"))
    step = script.step(done)
    n = len(script.requests)
    if step is not None:
        item: dict[str, Any] = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}",
                                "status": "completed", **codex_call(step)}
    else:
        item = {"type": "message", "id": f"msg_{n}", "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": script.answer, "annotations": []}]}
    if item["type"] == "message":
        added = {**item, "content": [], "status": "in_progress"}
    elif item["type"] == "custom_tool_call":
        added = {**item, "input": ""}
    else:
        added = {**item, "arguments": ""}
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


def codex_call(step: Call) -> dict[str, Any]:
    """A Codex step: its shell tool (``exec_command``) runs commands, reads files and patches
    them (``apply_patch`` in a here document), as Codex's own model does: 0.171.0 offers no
    read or edit tool to a custom provider's model."""
    if step.kind == "shell":
        return {"name": "exec_command", "arguments": json.dumps({"cmd": step.arg})}
    if step.kind == "read":
        return {"name": "exec_command", "arguments": json.dumps({"cmd": f"cat {step.arg}"})}
    patch = (f"*** Begin Patch\n*** Update File: {step.arg}\n@@\n-{step.old}\n+{step.new}\n"
             "*** End Patch")
    return {"name": "exec_command",
            "arguments": json.dumps({"cmd": f"apply_patch <<'EOF'\n{patch}\nEOF\n"})}


# -- OpenAI Chat Completions (OpenCode, Command Code) ----------------------------------------------


def _chat_chunk(n: int, model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {"id": f"chatcmpl-fake{n}", "object": "chat.completion.chunk", "created": 0,
            "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def chat_reply(script: Script, body: dict[str, Any]) -> tuple[str, bytes]:
    messages = body.get("messages") or []
    done = sum(1 for m in messages if m.get("role") == "tool")
    offered = {t.get("function", {}).get("name"): t.get("function", {}).get("parameters")
               for t in body.get("tools") or []}
    # A request that offers no shell is a side request (a session title): just answer.
    shell = any(n in offered for n in TOOL_NAMES["shell"])
    step = script.step(done) if shell else None
    n = len(script.requests)
    model = body.get("model", "fake-model")
    if step is not None:
        name, args = tool_call(step, offered)
        call = {"index": 0, "id": f"call_fake{n}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}
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
    done = sum(1 for c in contents for p in (c.get("parts") or [])
               if isinstance(p, dict) and "functionResponse" in p)
    offered = {d.get("name"): d.get("parametersJsonSchema") or d.get("parameters")
               for t in body.get("tools") or [] for d in t.get("functionDeclarations") or []}
    step = script.step(done) if offered else None
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    if step is not None:
        name, args = tool_call(step, offered)
        part: dict[str, Any] = {"functionCall": {"name": name, "args": args}}
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
