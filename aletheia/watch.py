"""``aletheia watch``: follow transcript folders and capture what the hooks missed.

Claude Code writes ``~/.claude/projects/*/*.jsonl`` and Codex ``~/.codex/sessions/**.jsonl`` as
a session runs.  Each file is read from the offset reached last time (kept in
``$ALETHEIA_HOME/watch-state.json``; a half-written last line waits for the next pass), turned
into the events the hook would have sent, and written through the store.  Those events hash
exactly like the hook's, so whatever a hook captured is "already stored", and only what it
missed (hooks not installed, untrusted in Codex, a host killed before its hook ran) is added.
A turn's final answer is held until the turn ends or the file has been quiet for ``settle_s``.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aletheia import paths
from aletheia.capture.event import Event
from aletheia.capture.ingest import Summary
from aletheia.importers.transcripts import (
    ClaudeParser,
    CodexParser,
    Parser,
    claude_files,
    codex_files,
    ingest_events,
    read_lines,
)

STATE_FILE = "watch-state.json"
SOURCE = "watch"


@dataclass
class Followed:
    host: str
    offset: int = 0
    size: int = 0
    changed_at: float = 0.0
    parser: Parser | None = None
    pending: list[Event] = field(default_factory=list)


@dataclass
class Watcher:
    roots: list[tuple[str, Path]]  # (host, folder)
    settle_s: float = 30.0
    files: dict[str, Followed] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for key, value in _load_state().items():
            if isinstance(value, dict) and isinstance(value.get("offset"), int):
                self.files[key] = Followed(str(value.get("host") or ""), value["offset"],
                                           int(value.get("size") or 0))

    def _listing(self) -> list[tuple[str, Path]]:
        out: list[tuple[str, Path]] = []
        for host, root in self.roots:
            if not root.is_dir():
                continue
            found = claude_files(root) if host == "claude-code" else codex_files(root)
            out.extend((host, p) for p in found)
        return out

    def poll(self, conn: sqlite3.Connection, *, now: float | None = None) -> Summary:
        """One pass over every followed file; returns what it wrote."""
        stamp = time.time() if now is None else now
        summary = Summary("watch")
        events: list[Event] = []
        for host, path in self._listing():
            key = str(path)
            f = self.files.get(key)
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if f is None or f.host != host:
                f = self.files[key] = Followed(host)
            if f.parser is None:
                f.parser = ClaudeParser() if host == "claude-code" else CodexParser()
                if f.offset and f.offset <= size:
                    # Rebuild the parser's memory (pending tool calls, session id) without
                    # re-emitting what an earlier run already handled.
                    for line in _prefix(path, f.offset):
                        f.parser.feed(line)
                    f.parser.flush()
            if size < f.offset:  # truncated or replaced: start again
                f.offset, f.parser = 0, (ClaudeParser() if host == "claude-code" else CodexParser())
            if size > f.offset:
                lines, f.offset = read_lines(path, f.offset)
                for line in lines:
                    events.extend(f.parser.feed(line))
                f.size, f.changed_at = size, stamp
                summary.files += 1
            elif f.changed_at and stamp - f.changed_at >= self.settle_s:
                events.extend(f.parser.flush())
                f.changed_at = 0.0
        if events:
            ingest_events(conn, events, SOURCE, summary)
        _save_state({k: {"host": f.host, "offset": f.offset, "size": f.size}
                     for k, f in self.files.items()})
        return summary

    def run(self, conn: sqlite3.Connection, *, interval_s: float = 2.0,
            on_pass: Callable[[Summary], None] | None = None,
            stop: Callable[[], bool] | None = None) -> None:
        while stop is None or not stop():
            result = self.poll(conn)
            if on_pass is not None:
                on_pass(result)
            time.sleep(interval_s)


def _prefix(path: Path, offset: int) -> list[dict[str, Any]]:
    """The decoded lines that lie before byte ``offset``."""
    out: list[dict[str, Any]] = []
    with open(path, "rb") as fh:
        data = fh.read(offset)
    count = data.count(b"\n")
    for raw in data.splitlines()[:count]:
        with contextlib.suppress(ValueError):
            line = json.loads(raw)
            if isinstance(line, dict):
                out.append(line)
    return out


def _state_path() -> Path:
    return paths.home() / STATE_FILE


def _load_state() -> dict[str, Any]:
    try:
        data = json.loads(_state_path().read_text("utf-8"))
    except (FileNotFoundError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save_state(state: dict[str, Any]) -> None:
    paths.ensure_home()
    tmp = _state_path().with_suffix(".tmp")
    paths.touch_private(tmp)
    tmp.write_text(json.dumps(state, indent=1, sort_keys=True), "utf-8")
    tmp.replace(_state_path())
