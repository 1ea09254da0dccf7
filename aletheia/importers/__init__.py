"""Importers: bring old memories in through the store's one write API (redacted, idempotent).

Each source module turns its format into ``MemoryIn`` items; ``write_items`` writes them in
batches, drops excluded projects, and counts what was read, inserted and already there.
Transcript sources build the *same* ``HookEvent`` the live hook would have built, so an event
the hook already captured has the same content hash and is never stored twice.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from aletheia import settings, store
from aletheia.errors import InvalidInput
from aletheia.project import excluded_patterns, is_excluded

BATCH = 500
Progress = Callable[[int], None]


@dataclass
class Summary:
    source: str
    files: int = 0
    read: int = 0  # items found in the source
    inserted: int = 0  # new rows
    already: int = 0  # identical content already stored (a hook, or an earlier import)
    excluded: int = 0  # in an excluded project
    invalid: int = 0  # empty or malformed
    sessions_queued: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    @property
    def stored(self) -> int:
        return self.inserted + self.already

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "stored": self.stored}

    def line(self) -> str:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(self.by_kind.items())) or "nothing"
        return (f"{self.source}: read {self.read} ({kinds}) from {self.files} file(s); "
                f"inserted {self.inserted}, already stored {self.already}, excluded "
                f"{self.excluded}, invalid {self.invalid}; sessions queued {self.sessions_queued}")


def write_items(conn: sqlite3.Connection, items: Iterable[store.MemoryIn], summary: Summary,
                *, progress: Progress | None = None) -> set[str]:
    """Write ``items``; return the session ids that got at least one new row."""
    patterns = excluded_patterns(extra=settings.get(conn, "excluded_projects"))
    touched: set[str] = set()
    batch: list[dict[str, Any]] = []

    def flush() -> None:
        for row, result in zip(batch, store.insert_rows(conn, batch), strict=True):
            if result.inserted:
                summary.inserted += 1
                if row["session_id"]:
                    touched.add(row["session_id"])
            else:
                summary.already += 1
        if progress is not None:
            progress(len(batch))
        batch.clear()

    for item in items:
        summary.read += 1
        summary.by_kind[item.kind] = summary.by_kind.get(item.kind, 0) + 1
        if is_excluded(item.project, patterns):
            summary.excluded += 1
            continue
        try:
            batch.append(store.prepare(item))
        except InvalidInput:
            summary.invalid += 1
            continue
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    return touched


def queue_sessions(conn: sqlite3.Connection, sessions: dict[str, tuple[str, str | None]],
                   summary: Summary) -> None:
    """Queue imported sessions for compression (the worker extracts facts and summaries)."""
    for session_id, (project, tool) in sessions.items():
        store.queue_stop(conn, session_id, project, tool)
        summary.sessions_queued += 1


def parse_time(value: Any) -> int | None:
    """ISO-8601 (``…Z``) or epoch seconds/ms to epoch ms; None when unreadable."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return int(value * 1000) if value < 1e11 else int(value)
    if isinstance(value, str) and value:
        try:
            dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=UTC)
        return int(dt.timestamp() * 1000)
    return None
