"""Keyset pagination shared by every list (REST, CLI, dashboard): an opaque cursor and a page.

A cursor encodes the sort key of the last row returned, so a page never skips or repeats a row
when new ones arrive meanwhile (offsets would).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from aletheia.errors import InvalidInput

DEFAULT_LIMIT = 50
MAX_LIMIT = 500


@dataclass
class Page:
    items: list[dict[str, Any]] = field(default_factory=list)
    next_cursor: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "next_cursor": self.next_cursor}


def check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIMIT}")
    return limit


def encode(*key: Any) -> str:
    raw = json.dumps(list(key), separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str | None, types: tuple[type, ...]) -> tuple[Any, ...] | None:
    """The sort key inside ``cursor`` (checked against ``types``); None for the first page."""
    if cursor is None or cursor == "":
        return None
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw)
    except (ValueError, binascii.Error):
        raise InvalidInput("not a valid cursor") from None
    if not isinstance(key, list) or len(key) != len(types):
        raise InvalidInput("not a valid cursor")
    for value, kind in zip(key, types, strict=True):
        if isinstance(value, bool) or not isinstance(value, kind):
            raise InvalidInput("not a valid cursor")
    return tuple(key)


def page(rows: list[dict[str, Any]], limit: int, *key_names: str) -> Page:
    """``rows`` were fetched with ``limit + 1``: the extra row only says that more exist."""
    if len(rows) <= limit:
        return Page(rows, None)
    items = rows[:limit]
    last = items[-1]
    return Page(items, encode(*(last[k] for k in key_names)))
