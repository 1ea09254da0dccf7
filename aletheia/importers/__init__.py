"""Importers: bring old memories in through the capture pipeline (redacted, idempotent).

Transcript sources (``transcripts``) build the *same* events the live hook would have built
and run ``capture.ingest`` on them, so an event the hook already captured has the same content
hash and is never stored twice; claude-mem rows, already shaped as memories, go through its
second half (``ingest_memories``).  Both count what was read, inserted and already there.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any


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
