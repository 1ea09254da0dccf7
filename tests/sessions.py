"""The sample session (tests/data/session_slugify.json): a Claude Code session fixing a failing
test in a small Python project, as hook payloads; helpers to feed it to the store."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path
from typing import Any

from aletheia import store
from aletheia.capture.adapters import adapt
from aletheia.capture.memory import to_memory
from aletheia.store import MemoryIn
from tests import fakes

SAMPLE = Path(__file__).resolve().parent / "data" / "session_slugify.json"
T0 = 1_700_000_000_000
STOP_EVENTS = ("Stop", "SessionEnd")


def events(root: str, session: str, token: str) -> list[tuple[str, dict[str, Any]]]:
    data = json.loads(SAMPLE.read_text(encoding="utf-8"))
    out = []
    for ev in data["events"]:
        raw = json.dumps(ev["payload"], ensure_ascii=False)
        raw = raw.replace("{ROOT}", root).replace("{SESSION}", session).replace("{GITHUB_TOKEN}", token)
        out.append((ev["event"], json.loads(raw)))
    return out


def fake_token(seed: int = 7) -> str:
    return fakes.github_token(random.Random(seed))


def memories(root: str, session: str = "sess-slugify", token: str | None = None,
             t0: int = T0) -> list[tuple[str, MemoryIn | None]]:
    """(event name, memory or None) for every event, timestamps 30 s apart."""
    out: list[tuple[str, MemoryIn | None]] = []
    for i, (name, payload) in enumerate(events(root, session, token or fake_token())):
        m = to_memory(adapt("claude-code", name, payload, env={}), root)
        if m is not None:
            m.created_at = t0 + i * 30_000
        out.append((name, m))
    return out


def write(conn: sqlite3.Connection, root: str, session: str = "sess-slugify", *,
          token: str | None = None, t0: int = T0, upto: int | None = None, start: int = 0,
          stops: bool = True) -> int:
    """Write events [start, upto) through the store (and their stops); return how many
    memories were written."""
    written = 0
    for i, (name, m) in enumerate(memories(root, session, token, t0)):
        if i < start or (upto is not None and i >= upto):
            continue
        if m is not None:
            store.write_memory(conn, m)
            written += 1
        if stops and name in STOP_EVENTS:
            store.queue_stop(conn, session, root, "claude-code", now=t0 + i * 30_000)
    return written
