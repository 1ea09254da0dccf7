"""Every error body is JSON: an ASGI wrapper that turns a plain-text error response from
anything inside (the MCP SDK's "Invalid Origin header", a framework default) into
``{"status", "message"}`` with the same status and headers.

HTML error pages (the dashboard's sign-in page answering 401) and JSON are left as they are.
"""

from __future__ import annotations

import json
from http import HTTPStatus

from aletheia.web.security import ASGIApp, Message, Receive, Scope, Send

_BODY_CAP = 2000  # a plain-text error longer than this is cut in the message


class JSONErrors:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        chunks: list[bytes] = []

        async def wrapped(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                if message["status"] >= 400 and _plain(message):
                    start = message  # held until the body is complete
                    return
                await send(message)
                return
            if start is not None and message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                await _send_json(send, start, b"".join(chunks))
                return
            await send(message)

        await self.app(scope, receive, wrapped)


def _plain(start: Message) -> bool:
    for name, value in start.get("headers", []):
        if name.lower() == b"content-type":
            kind = value.split(b";")[0].strip().lower()
            return kind not in (b"application/json", b"text/html", b"application/problem+json")
    return True


async def _send_json(send: Send, start: Message, body: bytes) -> None:
    status = int(start["status"])
    text = body.decode("utf-8", "replace").strip()[:_BODY_CAP]
    if not text:
        try:
            text = HTTPStatus(status).phrase
        except ValueError:
            text = "error"
    payload = json.dumps({"status": status, "message": text}).encode()
    headers = [(k, v) for k, v in start.get("headers", [])
               if k.lower() not in (b"content-type", b"content-length")]
    headers += [(b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
