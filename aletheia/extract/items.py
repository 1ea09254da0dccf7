"""What the extractor reads: one memory as an ``Item``, and the windows a session is cut into
(≤ 20 items, ≤ 12,000 characters)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

WINDOW_ITEMS = 20
WINDOW_CHARS = 12_000


@dataclass(frozen=True)
class Item:
    """One memory as the extractor sees it."""

    id: str
    kind: str
    title: str
    subtitle: str = ""
    narrative: str = ""
    files: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    created_at: int = 0
    tool: str | None = None

    @classmethod
    def from_row(cls, row: sqlite3.Row | dict[str, Any]) -> Item:
        data = dict(row)

        def _list(value: Any) -> tuple[str, ...]:
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    return ()
            return tuple(v for v in value or () if isinstance(v, str))

        return cls(
            id=str(data["id"]), kind=str(data["kind"]), title=str(data.get("title") or ""),
            subtitle=str(data.get("subtitle") or ""), narrative=str(data.get("narrative") or ""),
            files=_list(data.get("files")), concepts=_list(data.get("concepts")),
            created_at=int(data.get("created_at") or 0), tool=data.get("tool"),
        )

    @property
    def size(self) -> int:
        return len(self.title) + len(self.subtitle) + len(self.narrative)


def clip(item: Item, max_chars: int) -> Item:
    """Fit one item into ``max_chars`` by cutting the middle of its narrative: the head says
    what ran, the tail how it ended (the error, the test summary)."""
    if item.size <= max_chars:
        return item
    room = max(0, max_chars - len(item.title) - len(item.subtitle) - 40)
    head, tail = room * 3 // 5, room - room * 3 // 5
    cut = len(item.narrative) - head - tail
    narrative = item.narrative[:head] + f"\n[… {cut} characters cut …]\n" + (
        item.narrative[-tail:] if tail else ""
    )
    return replace(item, narrative=narrative)


def windows(
    items: Sequence[Item], max_items: int = WINDOW_ITEMS, max_chars: int = WINDOW_CHARS
) -> list[list[Item]]:
    """Consecutive windows of at most ``max_items`` items and ``max_chars`` characters."""
    out: list[list[Item]] = []
    current: list[Item] = []
    used = 0
    for raw in items:
        item = clip(raw, max_chars)
        if current and (len(current) >= max_items or used + item.size > max_chars):
            out.append(current)
            current, used = [], 0
        current.append(item)
        used += item.size
    if current:
        out.append(current)
    return out



def cap(text: str, limit: int) -> str:
    """One line of at most ``limit`` characters (an ellipsis says it was cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
